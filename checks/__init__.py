"""The check registry: every check module, in the order reports list them."""

from __future__ import annotations

from preflight.checks.base import Check
from preflight.checks.sysctl import SysctlCheck
from preflight.checks.versions import VersionsCheck

ALL_CHECKS: tuple[type[Check], ...] = (VersionsCheck, SysctlCheck)


def all_checks() -> list[Check]:
    return [cls() for cls in ALL_CHECKS]


def known_params() -> dict[str, dict[str, object]]:
    """family -> {parameter: default}, for validating the `checks:` section of hosts.yaml."""
    return {cls.family: dict(cls.params) for cls in ALL_CHECKS}
