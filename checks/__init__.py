"""The check registry: every ``Check`` subclass defined in a module of this package.

A new check is a new module here; it is found by discovery, ordered by its ``order`` then family.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from preflight.checks.base import Check


def _discover() -> tuple[type[Check], ...]:
    found: dict[str, type[Check]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Check) and not inspect.isabstract(cls) and cls.__module__ == module.__name__:
                ident = cls.name or cls.family
                if ident in found:
                    raise RuntimeError(f"two checks claim {ident!r}")
                found[ident] = cls
    return tuple(sorted(found.values(), key=lambda c: (c.order, c.name or c.family)))


ALL_CHECKS: tuple[type[Check], ...] = _discover()


def all_checks() -> list[Check]:
    return [cls() for cls in ALL_CHECKS]


def known_params() -> dict[str, dict[str, object]]:
    """family -> {parameter: default}, for validating the `checks:` section of hosts.yaml.

    Checks of one family share its section (``checks: net: {...}``).
    """
    params: dict[str, dict[str, object]] = {}
    for cls in ALL_CHECKS:
        params.setdefault(cls.family, {}).update(cls.params)
    return params
