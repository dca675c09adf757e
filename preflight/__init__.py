"""preflight: cluster preflight checks and diagnostics for distributed deep-learning training.

The checks live in the repository's top folder ``checks/`` and are the package ``preflight.checks``: the wheel
maps them so (pyproject.toml's ``package-dir``: they land in ``preflight/checks/``), and a checkout, run with
``PYTHONPATH=<repo>`` or installed editable, gets the same mapping from ``_CheckoutChecks`` below: the checks
beside the ``preflight`` that was imported, never those of another checkout an editable install points at. In
a wheel ``preflight/checks/`` is a real folder and nothing is added (docs/layout.md).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

__version__ = "0.1.0"

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)


class _CheckoutChecks:
    """Finds ``preflight.checks`` (that name only) in ``<root>/checks/``; its modules are then found on the
    package's ``__path__`` as usual."""

    preflight_checkout_checks = True

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        return PathFinder.find_spec(fullname, [_ROOT]) if fullname == "preflight.checks" else None


def _map_checks_in_a_checkout() -> None:
    """Put the finder first when ``preflight/checks`` is no folder and ``<root>/checks/__init__.py`` is there
    (a checkout); once, also when this module is imported again."""
    if os.path.isdir(os.path.join(_HERE, "checks")) or not os.path.isfile(os.path.join(_ROOT, "checks",
                                                                                       "__init__.py")):
        return
    if not any(getattr(finder, "preflight_checkout_checks", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, _CheckoutChecks())


_map_checks_in_a_checkout()
