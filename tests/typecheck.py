"""mypy over the package as it installs: ``checks/`` is checked as ``preflight.checks``.

pyproject.toml maps the top folder ``checks/`` to the package ``preflight.checks`` (``package-dir``) and no
symlink does it in a checkout; mypy finds modules by their folders and reads no import hooks, so a plain ``mypy
preflight`` would find no ``preflight.checks`` (and, with ``ignore_missing_imports``, take it for ``Any``). This
runs mypy (its options and pyproject's ``[tool.mypy]`` as usual) with every file of ``checks/`` added under its
installed name, always: a module that imports one of them can only find it so::

    python3 tests/typecheck.py                         # mypy preflight tests bench, and checks/
    python3 tests/typecheck.py tests/test_sysctl.py    # that file, and checks/
    python3 tests/typecheck.py --no-incremental

Targets inside ``checks/`` are covered already and dropped. Exit status as mypy's: 0 clean, 1 errors, 2 blocking
errors.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource
from mypy.util import count_stats

ROOT = Path(__file__).resolve().parent.parent
MAPPED = (ROOT / "checks", "preflight.checks")  # pyproject.toml's package-dir: folder, package
DEFAULT_TARGETS = ["preflight", "tests", "bench"]


def mapped_sources() -> list[BuildSource]:
    """The files of ``checks/``, named as installed (``checks/a.py`` -> ``preflight.checks.a``)."""
    folder, package = MAPPED
    sources = []
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" not in path.parts:
            parts = path.relative_to(folder).with_suffix("").parts
            module = ".".join((package, *parts[:-1]) if parts[-1] == "__init__" else (package, *parts))
            sources.append(BuildSource(str(path), module, None, str(ROOT)))
    return sources


def mypy_arguments(args: list[str]) -> list[str]:
    """The arguments for mypy itself: all but the targets inside ``checks/``."""
    folder = MAPPED[0]
    return [a for a in args if a.startswith("-") or not (Path(a).resolve() == folder
                                                         or folder in Path(a).resolve().parents)]


def main(argv: list[str]) -> int:
    t0 = time.time()
    args = argv or DEFAULT_TARGETS
    if not argv and Path.cwd().resolve() != ROOT:
        args = [str(ROOT / target) for target in DEFAULT_TARGETS]
    sources, options = process_options(mypy_arguments(args), require_targets=False)
    known = {source.module for source in sources}  # with a preflight/checks folder (an older tree), found twice
    sources += [source for source in mapped_sources() if source.module not in known]
    try:
        result = build.build(sources, options, stdout=sys.stdout, stderr=sys.stderr)
        messages, blocking = result.errors, False
    except CompileError as error:
        messages, blocking = error.messages, True
    for line in messages:
        print(line)
    errors, _, files = count_stats(messages)
    if errors:
        print(f"Found {errors} error{'s' * (errors != 1)} in {files} file{'s' * (files != 1)} "
              f"(checked {len(sources)} source files, {time.time() - t0:.1f} s)")
        return 2 if blocking else 1
    print(f"Success: no issues found in {len(sources)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
