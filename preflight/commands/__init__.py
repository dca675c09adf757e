"""Subcommands beyond ``run``: every module here defines ``register(app)`` and is found automatically.

A module keeps its imports light at module level (the CLI starts on every scheduler prolog) and
imports what a command needs inside the command function.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer


def register_all(app: typer.Typer) -> None:
    """Call ``register(app)`` of every module in this package, in name order."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(app)
