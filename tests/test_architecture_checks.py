"""Checks are small and independent: no check module imports another one, and probes() reads no clock.

Shared pieces live under preflight/ (ports, interfaces, net_view, connect, tools/, ascend/...); a check
module may import only preflight.checks.base (and the preflight.checks package registry) of the checks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CHECKS_DIR = Path(__file__).resolve().parent.parent / "checks"
MODULES = sorted(p for p in CHECKS_DIR.glob("*.py") if p.name != "__init__.py")
ALLOWED = {"preflight.checks", "preflight.checks.base", "checks", "checks.base"}


def imported(tree: ast.AST) -> list[str]:
    """Every module an ``import`` or ``from ... import`` names (``from preflight.checks import x`` names x too)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.append(base)
            if base in ("preflight.checks", "checks") or node.level:
                names += [f"{base}.{alias.name}".replace("..", ".") for alias in node.names]
    return names


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_no_check_module_imports_another(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [name for name in imported(tree)
           if name.startswith((".", "preflight.checks.", "checks.")) and name not in ALLOWED]
    assert not bad, f"{path.name} imports {bad}: move the shared piece to a module under preflight/"


def test_the_rule_sees_imports() -> None:
    tree = ast.parse("from preflight.checks.ports import x\nfrom preflight.checks import net\nfrom . import gpu\n"
                     "import preflight.checks.sysctl\nfrom preflight.checks.base import Check\n")
    assert [n for n in imported(tree) if n not in ALLOWED] == [
        "preflight.checks.ports", "preflight.checks.net", ".", ".gpu", "preflight.checks.sysctl"]


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_probes_read_no_clock(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "probes":
            calls = [ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)]
            clocks = [c for c in calls if c.split(".")[-1] in ("time", "now", "utcnow", "monotonic", "time_ns")]
            assert not clocks, f"{path.name}: probes() reads the clock ({clocks}); the engine stamps times"


def test_module_names_and_sizes() -> None:
    for path in MODULES:
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 520, f"{path.name} is over ~500 lines"
