"""The doctests of ``checks/``, run on the modules as ``preflight.checks.*``.

pytest's ``--doctest-modules`` reads ``preflight/`` and ``tests/``; ``checks/`` is mapped into the package
(pyproject.toml's ``package-dir``), and pytest, importing a file by its path, would load it a second time as a
top-level ``checks`` package. So its doctests run here, with pytest's option flags (``ELLIPSIS``).
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

CHECKS = Path(__file__).resolve().parent.parent / "checks"
MODULES = sorted(p.stem for p in CHECKS.glob("*.py"))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module("preflight.checks" if name == "__init__" else f"preflight.checks.{name}")
    assert Path(module.__file__ or "").resolve().parent == CHECKS
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in doctest.DocTestFinder().find(module, module.__name__) if t.examples]
    for test in tests:
        runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()


def test_the_doctests_are_found() -> None:
    """The sysctl module's doctests are seen (a finder that saw nothing would pass every module)."""
    module = importlib.import_module("preflight.checks.sysctl")
    assert sum(len(t.examples) for t in doctest.DocTestFinder().find(module)) >= 3
