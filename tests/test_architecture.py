"""The package's shape, read statically (ast: nothing is imported): one-way imports, modules of a readable size.

The import graph
----------------
Nodes are modules by dotted name: ``preflight/**.py`` and ``checks/**.py`` (as ``preflight.checks.*``, which
is how it is installed: pyproject.toml's ``package-dir``). A package's ``__init__.py`` is a node of its own,
named after the package (``preflight.checks``, ``preflight``).

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
    """Dotted module name -> file, for preflight/ and checks/ (as preflight.checks)."""
    modules: dict[str, Path] = {}
    for top, dotted in ((ROOT / PACKAGE, PACKAGE), (ROOT / "checks", f"{PACKAGE}.checks")):
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
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
    assert "preflight.facts_file" in graph["preflight.facts_current"]  # under TYPE_CHECKING only
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


def layout_blocks(text: str) -> list[set[str]]:
    """The names in backticks of each table row of a document, and of each section whose heading names a folder
    (``## The engine (`preflight/engine/`)``: the heading and all below it to the next heading)."""
    blocks: list[set[str]] = []
    section: set[str] | None = None
    for line in text.splitlines():
        names = set(line.split("`")[1::2])
        if line.startswith("#"):
            section = names if any(name.endswith("/") for name in names) else None
            blocks += [section] if section is not None else []
        elif section is not None:
            section |= names
        if line.startswith("|"):
            blocks.append(names)
    return blocks


def unnamed_modules(text: str, files: list[Path]) -> list[str]:
    """The files (paths from the repository root) a document does not name (test_layout_names_every_module)."""
    named = set(text.split("`")[1::2])
    blocks = layout_blocks(text)
    missing = []
    for path in files:
        relative = path.relative_to(ROOT).as_posix()
        folder = relative.rpartition("/")[0] + "/"
        if not (relative in named or f"{folder}*.py" in named
                or (path.name == "__init__.py" and folder in named)
                or any(folder in block and path.name in block for block in blocks)):
            missing.append(relative)
    return sorted(missing)


def test_layout_names_every_module() -> None:
    """docs/layout.md names every module of preflight/ and checks/, in backticks, in one of three ways:

    1. its path from the repository root: ``preflight/render/html.py``, ``checks/base.py``;
    2. its file name (``html.py``) in a table row, or in a section whose heading names the folder, that also
       names the folder with a trailing slash (``preflight/render/``); a package's ``__init__.py`` is named by
       its folder alone;
    3. its folder's glob, ``preflight/explain/*.py``, which says in so many words that every module of that
       folder (not below) is covered: for folders of many modules of one kind (one check each; explain's
       signatures and code tables) whose own documents describe them by another key (check ids, codes).

    And every module or folder it names by path (``preflight/...py``, ``checks/``) is there: a row left behind
    by a move fails.
    """
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    missing = unnamed_modules(text, list(source_files().values()))
    assert not missing, f"docs/layout.md does not name these modules (see this test's docstring): {missing}"
    gone = sorted(name for name in set(text.split("`")[1::2]) if name.startswith(("preflight/", "checks/"))
                  and name.endswith((".py", "/")) and "*" not in name and not (ROOT / name).exists())
    assert not gone, f"docs/layout.md names what is not there: {gone}"


def test_the_module_list_rule() -> None:
    doc = ("| `preflight/render/` | renderers: `html.py` |\n| `checks/*.py` | checks |\n"
           "## The engine (`preflight/engine/`)\n\n| `options.py` | options |\n## Other\n`steps.py`\n")
    files = [ROOT / f for f in ("preflight/render/html.py", "preflight/render/junit.py", "checks/sysctl.py",
                                "preflight/render/__init__.py", "preflight/engine/options.py",
                                "preflight/engine/steps.py")]
    assert unnamed_modules(doc, files) == ["preflight/engine/steps.py", "preflight/render/junit.py"]


# The layers
# ----------
# Highest first. A module imports modules of its own layer and of the layers below it, never of a layer above.
# A module belongs to the layer of the longest prefix naming it (a package's prefix names its modules; the bare
# package name "preflight" names its __init__ alone); a new module goes in one before the test passes.
# docs/layout.md ("Layers") shows the same list: test_layout_doc_mirrors_the_layers keeps the two alike.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # parse arguments, call the application, render; nothing else
    ("entry", ("preflight.__main__", "preflight.cli", "preflight.cli_options", "preflight.commands")),
    # what a command asks for, run end to end: select checks, load the cluster, run, judge, save; diagnose and
    # explain (their logic), the docs the registry writes about itself, the crash log
    ("application", ("preflight.app", "preflight.recorder", "preflight.facts_current",
                     "preflight.catalog", "preflight.crash", "preflight.diagnose", "preflight.explain")),
    # read the report model only (test_renderers_read_the_report_model_only): never the engine or the application
    ("renderers", ("preflight.render",)),
    # run checks over transports: plan, gather, steps, evaluation; the facts files and fixtures it reads and writes
    ("engine", ("preflight.engine", "preflight.facts_file", "preflight.fixture_format")),
    # the registry, the check contract (checks/base.py) and one module per check
    ("checks", ("preflight.checks",)),
    # what checks (and diagnose, explain) share; never imports a check
    ("domain", ("preflight.context", "preflight.findings", "preflight.ports", "preflight.interfaces",
                "preflight.net_view", "preflight.connect", "preflight.job_env", "preflight.container",
                "preflight.nvlink", "preflight.nvsmi_query", "preflight.ib_hca", "preflight.time_sync",
                "preflight.interpreter", "preflight.ranks", "preflight.accelerator", "preflight.firewall",
                "preflight.ascend", "preflight.allreduce", "preflight.xid_log", "preflight.fix")),
    # where each vendor's tools are on a node: common, nvidia and ascend side by side (test_vendors_stand_apart)
    ("tools", ("preflight.tools",)),
    # how a command reaches a host: the framed script, the programs shipped to nodes, transports, hosts.yaml
    ("probes", ("preflight.batch", "preflight.node", "preflight.transport", "preflight.inventory",
                "preflight.hostlists", "preflight.ssh_config")),
    # data tables checks and explain both read (Xid catalog, torch_npu's version table): a module of their own
    # here, importing nothing above the model, never inside a check or inside explain (explain's table_*.py import
    # them: table_xid reads xid_catalog)
    ("tables", ("preflight.xid_catalog", "preflight.torch_npu_table")),
    # the report model and what is derived from it alone: exit codes, redaction, comparison, the drain limit,
    # writing its files
    ("model", ("preflight.model", "preflight.exit_codes", "preflight.redact", "preflight.compare",
               "preflight.drain", "preflight.delivery", "preflight.history")),
    ("base", ("preflight", "preflight.process_exit")),
)
RENDERERS_READ = ("renderers", "model", "base")  # the layers a renderer may import
NVIDIA = ("preflight.checks.gpu_", "preflight.tools.nvidia", "preflight.nvlink", "preflight.nvsmi_query",
          "preflight.xid_log")
ASCEND = ("preflight.ascend", "preflight.tools.ascend", "preflight.checks.npu", "preflight.checks.hccn",
          "preflight.checks.hccl_", "preflight.torch_npu_table")
def layer_of(module: str) -> int:
    """The index in LAYERS of ``module``'s layer; KeyError when no prefix names it."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != PACKAGE and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    if best is None:
        raise KeyError(module)
    return best[1]


def upward_imports(graph: Mapping[str, Set[str]]) -> list[str]:
    """Every import of a module of a higher layer."""
    return sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, targets in graph.items() for b in targets if layer_of(b) < layer_of(a))


def renderer_imports(graph: Mapping[str, Set[str]]) -> list[str]:
    """Every import of a renderer outside the report model (and the renderers)."""
    return sorted(f"{a} imports {b}" for a, targets in graph.items() if LAYERS[layer_of(a)][0] == "renderers"
                  for b in targets if LAYERS[layer_of(b)][0] not in RENDERERS_READ)


def vendor_imports(graph: Mapping[str, Set[str]]) -> list[str]:
    """Every import of an Ascend module by an NVIDIA one, and the other way round."""
    return sorted(f"{a} imports {b}" for a, targets in graph.items() for b in targets
                  if (a.startswith(NVIDIA) and b.startswith(ASCEND)) or (a.startswith(ASCEND) and b.startswith(NVIDIA)))


def engine_imports(graph: Mapping[str, Set[str]], module: str) -> list[str]:
    return sorted(b for b in graph[module] if b == f"{PACKAGE}.engine" or b.startswith(f"{PACKAGE}.engine."))


def check_imports(graph: Mapping[str, Set[str]], module: str) -> list[str]:
    """The check modules ``module`` imports (the registry ``preflight.checks`` and the contract ``base`` are not)."""
    return sorted(b for b in graph[module] if b.startswith(f"{PACKAGE}.checks.") and b != f"{PACKAGE}.checks.base")


def test_every_module_has_a_layer() -> None:
    unplaced = []
    for module in import_graph():
        try:
            layer_of(module)
        except KeyError:
            unplaced.append(module)
    assert not unplaced, f"place these modules in LAYERS (and docs/layout.md): {sorted(unplaced)}"


def test_layers_point_down() -> None:
    found = upward_imports(import_graph())
    assert not found, "imports of a higher layer (LAYERS):\n" + "\n".join(found)


def test_renderers_read_the_report_model_only() -> None:
    found = renderer_imports(import_graph())
    assert not found, "renderers import only the report model (pass them what they need through it):\n" + "\n".join(
        found)


def test_vendors_stand_apart() -> None:
    """NVIDIA code does not depend on the Ascend package, nor the other way round: what both need is neutral
    (preflight/tools/common.py, preflight/findings.py)."""
    found = vendor_imports(import_graph())
    assert not found, "\n".join(found)


@pytest.mark.parametrize("module", sorted(m for m in source_files() if LAYERS[layer_of(m)][0] == "entry"))
def test_entry_does_not_import_the_engine(module: str) -> None:
    """Commands parse arguments and render: the run is the application's (preflight.app)."""
    assert engine_imports(import_graph(), module) == []


@pytest.mark.parametrize("module", sorted(m for m in source_files() if m.startswith(f"{PACKAGE}.diagnose")))
def test_diagnose_imports_no_check_module(module: str) -> None:
    """diagnose asks the registry and the engine for findings; it never instantiates a check class."""
    assert check_imports(import_graph(), module) == []


@pytest.mark.parametrize(("importer", "imported", "rule"), [
    ("preflight.render.console", "preflight.engine", renderer_imports),
    ("preflight.render.terminal", "preflight.app", renderer_imports),
    ("preflight.engine.evaluation", "preflight.render.json_report", upward_imports),
    ("preflight.accelerator", "preflight.checks.npu", upward_imports),
    ("preflight.ports", "preflight.checks", upward_imports),
    ("preflight.tools.nvidia", "preflight.checks.gpu_devices", upward_imports),
    ("preflight.checks.gpu_devices", "preflight.ascend.hccn_tool", vendor_imports),
    ("preflight.tools.ascend", "preflight.tools.nvidia", vendor_imports),
])
def test_the_rules_see_a_reintroduced_import(importer: str, imported: str, rule: object) -> None:
    graph = {module: set(targets) for module, targets in import_graph().items()}
    assert callable(rule) and rule(graph) == []
    graph[importer].add(imported)
    assert rule(graph) != []


def test_the_app_path_rules_see_a_reintroduced_import() -> None:
    graph = {"preflight.commands.report": {"preflight.engine.options"}, "preflight.diagnose.plan": {
        "preflight.checks", "preflight.checks.base", "preflight.checks.firewall"}}
    assert engine_imports(graph, "preflight.commands.report") == ["preflight.engine.options"]
    assert check_imports(graph, "preflight.diagnose.plan") == ["preflight.checks.firewall"]


def test_layout_doc_mirrors_the_layers() -> None:
    """docs/layout.md's "Layers" table: the same layers, in the same order, with the same modules."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| ") and "`" in line]
    documented = [(name.strip(), tuple(part.strip().strip("`") for part in modules.split(",")))
                  for name, modules in rows]
    assert documented == [(name, prefixes) for name, prefixes in LAYERS]
