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


def _leftmost_text(node: ast.expr) -> str:
    """The source of the left-most string of a message (``f"..." + x`` -> ``f"..."``)."""
    while isinstance(node, ast.BinOp):
        node = node.left
    return ast.unparse(node)


def hand_written_prefixes(tree: ast.AST) -> list[int]:
    """Lines of ``finding(id, host, status, message)`` calls whose message starts with the id again:
    ``finding()`` writes the ``"<id>: "`` prefix itself."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "finding" \
                and len(node.args) >= 4:
            ident, text = node.args[0], _leftmost_text(node.args[3])
            literal = ident.value if isinstance(ident, ast.Constant) and isinstance(ident.value, str) else None
            starts = ([f"{literal}: "] if literal else []) + [f"{{{ast.unparse(ident)}}}: "]
            if any(text.lstrip("rbfRBF").lstrip("'\"").startswith(start) for start in starts):
                lines.append(node.lineno)
    return lines


SOURCES = sorted({*CHECKS_DIR.glob("*.py"), *(p for p in (CHECKS_DIR.parent / "preflight").rglob("*.py")
                                              if "checks" not in p.relative_to(CHECKS_DIR.parent).parts)})


def test_finding_owns_the_id_prefix() -> None:
    found = {f"{p.relative_to(CHECKS_DIR.parent)}:{line}" for p in SOURCES
             for line in hand_written_prefixes(ast.parse(p.read_text(encoding="utf-8")))}
    assert not found, f"finding() prefixes the id itself: drop the hand-written one at {sorted(found)}"


def test_checks_build_findings_with_finding() -> None:
    """A check never builds a ``Finding`` itself: ``finding()`` writes its id prefix."""
    for path in MODULES:
        calls = [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Finding"]
        assert not calls, f"{path.name}:{calls[0].lineno} builds a Finding: call finding()"


def test_the_prefix_rule_sees_a_prefix() -> None:
    tree = ast.parse('finding(check, h, s, f"{check}: x")\nfinding("os.shm", h, s, "os.shm: x " + y)\n'
                     'finding(check, h, s, f"{check} x")\nfinding("os.shm", h, s, f"{n}: x")\n')
    assert hand_written_prefixes(tree) == [1, 2]
