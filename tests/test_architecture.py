"""The package's shape, read statically (ast: nothing is imported): one-way imports, modules of a readable size.

The import graph
----------------
Nodes are modules by dotted name: ``preflight/**.py`` and ``checks/**.py`` (as ``preflight.checks.*``, which
is how it is installed; the ``preflight/checks`` symlink is not walked twice). A package's ``__init__.py`` is
a node of its own, named after the package (``preflight.checks``, ``preflight``).

Edges come from every import statement anywhere in a module: at the top, inside functions, and under ``if
TYPE_CHECKING:`` (an import deferred to dodge a cycle is still a cycle in the design). Relative imports are
resolved against the importing module. Edges to modules outside the package (standard library, third
parties) are left out. The rules:

1. ``import a.b.c`` and ``from a.b.c import x`` give an edge to ``a.b.c``.
2. ``from a.b import c`` gives an edge to the module ``a.b.c`` when there is one (and to ``a.b``, see 3);
   ``from preflight import __version__`` is an edge to ``preflight`` (its ``__init__``) alone.
3. Importing ``a.b.c`` runs the ``__init__`` of ``a`` and ``a.b`` first, so it is also an edge to those
   packages, except to the packages the importing module is itself inside: they are already loading when the
   module runs. So an ``__init__`` that re-exports from its own modules is not a cycle by that alone
   (``preflight/x/__init__.py`` importing ``preflight.x.y``, and ``preflight/x/y.py`` importing
   ``preflight.x.z``); it is one only when a module imports its way back for real, e.g.
   ``preflight.firewall.model`` importing ``preflight.checks.ports``, which loads the check registry
   ``preflight.checks``, which loads ``preflight.checks.firewall``, which imports ``preflight.firewall.model``.
4. A package ``__init__`` that finds its modules by discovery (it calls ``pkgutil.iter_modules``, as the check
   registry and ``preflight.commands`` do) imports every module directly in its package.

A cycle is a strongly connected part of that graph; the failure names one way round each.
"""

from __future__ import annotations

import ast
import functools
import os
from collections import deque
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "preflight"

# Imports that close a known cycle, left out of the graph (none today); an entry whose import is gone fails.
KNOWN_CYCLE_EDGES: frozenset[tuple[str, str]] = frozenset()

MAX_LINES = 500
# Modules over MAX_LINES today, owned by other changes.
LONG_MODULES_ALLOWED = frozenset({
    "checks/net.py",  # being split
})


@functools.cache
def source_files() -> dict[str, Path]:
    """Dotted module name -> file, for preflight/ (not through the checks symlink) and checks/."""
    modules: dict[str, Path] = {}
    for top, dotted in ((ROOT / PACKAGE, PACKAGE), (ROOT / "checks", f"{PACKAGE}.checks")):
        for folder, dirs, files in os.walk(top):  # followlinks=False; symlinked folders dropped below
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not (Path(folder) / d).is_symlink())
            parts = Path(folder).relative_to(top).parts
            for file in sorted(f for f in files if f.endswith(".py")):
                stem = file[:-3]
                name = ".".join((dotted, *parts) if stem == "__init__" else (dotted, *parts, stem))
                modules[name] = Path(folder) / file
    return modules


def _targets(tree: ast.AST, module: str, is_package: bool, known: Set[str]) -> Iterator[str]:
    """The dotted names this module's import statements name (rules 1, 2 and 4; rule 3 is the caller's)."""
    here = module.split(".") if is_package else module.split(".")[:-1]  # the package a relative import starts at
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target
            yield from (f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known)
        elif (is_package and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "iter_modules"):
            yield from (name for name in known if name.rpartition(".")[0] == module)


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the package's modules it imports (see the module docstring for the rules)."""
    files = source_files()
    graph: dict[str, frozenset[str]] = {}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        own = module.split(".") if is_package else module.split(".")[:-1]
        inside = {".".join(own[:i]) for i in range(1, len(own) + 1)}  # the packages this module is in
        edges: set[str] = set()
        for target in _targets(tree, module, is_package, files.keys()):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                name = ".".join(parts[:i])
                if name in files and name != module and (name == target or name not in inside):
                    edges.add(name)
        graph[module] = frozenset(edges)
    return graph


def find_cycles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """One way round (``a -> b -> a``) each strongly connected part of more than one module."""
    return sorted(_way_round(graph, part) for part in tangles(graph))


def tangles(graph: Mapping[str, Set[str]]) -> list[set[str]]:
    """The strongly connected parts of more than one module (Tarjan): each holds one cycle or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[set[str]] = []

    def visit(node: str) -> None:  # recursive: the graph is a hundred modules
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part: set[str] = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.add(top)
                if top == node:
                    break
            if len(part) > 1:
                parts.append(part)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return parts


def _way_round(graph: Mapping[str, Set[str]], part: set[str]) -> list[str]:
    """A shortest path from the part's first module back to itself, inside the part (breadth first)."""
    start = min(part)
    paths = {start: [start]}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(set(graph[node]) & part):
            if nxt == start:
                return [*paths[node], start]
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    raise AssertionError(f"no way round {sorted(part)}")  # a strongly connected part always has one


def test_cycle_finder_reports_a_path() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_graph_follows_the_rules() -> None:
    graph = import_graph()
    assert {"preflight", "preflight.checks", "preflight.checks.net", "preflight.diagnose.check"} <= graph.keys()
    assert "preflight.hostlists" in graph["preflight.inventory"]  # a top-level import
    assert "preflight" in graph["preflight.cli"]  # from preflight import __version__, exit_codes, recorder
    assert "preflight.exit_codes" in graph["preflight.cli"]  # ... exit_codes, a module
    assert "preflight.render.json_report" in graph["preflight.render.outputs"]  # inside a function
    assert "preflight.inventory" in graph["preflight.commands.node"]  # under TYPE_CHECKING only
    # A module outside preflight.checks importing one of its modules loads the registry too:
    assert "preflight.checks" in graph["preflight.diagnose.check"]
    # ... but a check importing checks.base does not count the registry it is part of.
    assert "preflight.checks" not in graph["preflight.checks.net"]
    # The registry's discovery imports every check.
    assert "preflight.checks.net" in graph["preflight.checks"]


def test_no_import_cycles() -> None:
    graph = import_graph()
    stale = sorted(edge for edge in KNOWN_CYCLE_EDGES if edge[1] not in graph.get(edge[0], ()))
    assert not stale, f"these imports are gone: drop them from KNOWN_CYCLE_EDGES: {stale}"
    pruned = {module: edges - {b for a, b in KNOWN_CYCLE_EDGES if a == module} for module, edges in graph.items()}
    found = sorted((_way_round(pruned, part), part) for part in tangles(pruned))
    assert not found, "import cycles (one way round each tangle of modules that import each other):\n" + "\n".join(
        " -> ".join(way) + (f"  (and {len(part) - len(way) + 1} more modules in this tangle: "
                            f"{', '.join(sorted(part - set(way)))})" if len(part) > len(way) - 1 else "")
        for way, part in found)


def test_host_lists_are_below_the_inventory() -> None:
    """Host-list expansion is the lower layer: inventory loading calls it and is never called back."""
    assert "preflight.inventory" not in import_graph()["preflight.hostlists"]


@pytest.mark.parametrize("module", sorted(m for m in source_files() if m.startswith(f"{PACKAGE}.commands.")))
def test_commands_do_not_import_the_cli(module: str) -> None:
    assert "preflight.cli" not in import_graph()[module]


def test_modules_are_short() -> None:
    long: dict[str, int] = {}
    for path in source_files().values():
        relative = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and relative not in LONG_MODULES_ALLOWED:
            long[relative] = lines
    assert not long, f"modules over {MAX_LINES} lines, split them by job: {dict(sorted(long.items()))}"
