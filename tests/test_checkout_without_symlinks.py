"""A checkout without symlinks (Windows, ``git -c core.symlinks=false clone``) works like any other.

The tree as it stands (the files git tracks or would add, so uncommitted work is what is tested) is committed
in a scratch repository and cloned from there with ``core.symlinks=false``; in that clone ``preflight.checks``
must be the top folder ``checks/`` for a run with ``PYTHONPATH=<clone>`` and no install, for an editable install
in a fresh virtualenv, for ruff and mypy (``tests/typecheck.py``) and for the architecture test. The wheel is
built from such a copy by tests/test_packaging.py and .ci/package-smoke.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args],
                          cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def _run(*args: str | Path, cwd: Path, env: Mapping[str, str] | None = None) -> str:
    """Run a command; its stdout, or a failure with all it printed."""
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("nosymlinks")
    src = work / "src"
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).split("\0")
    for name in filter(None, listed):
        path = ROOT / name
        if os.path.lexists(path) and not path.is_dir():  # tracked files deleted in the working tree are gone
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name, follow_symlinks=False)
    _git("init", "-q", cwd=src)
    _git("add", "-A", cwd=src)
    _git("commit", "-q", "-m", "the working tree", cwd=src)
    _git("-c", "core.symlinks=false", "clone", "-q", str(src), "clone", cwd=work)
    return work / "clone"


def test_no_symlink_is_tracked() -> None:
    """A link would be a text file holding its target in such a checkout."""
    links = [line.split("\t")[-1] for line in _git("ls-files", "-s", cwd=ROOT).splitlines()
             if line.startswith("120000 ")]
    assert links == []


def test_a_plain_checkout_runs(clone: Path, tmp_path: Path) -> None:
    """PYTHONPATH=<clone>, nothing installed, run from elsewhere: as the tests and the Slurm prolog run it."""
    env = {"PYTHONPATH": str(clone)}
    where = _run(sys.executable, "-c", "import preflight, preflight.checks.sysctl as m; print(preflight.__file__);"
                 "print(m.__file__)", cwd=tmp_path, env=env).split()
    assert where == [str(clone / "preflight" / "__init__.py"), str(clone / "checks" / "sysctl.py")]
    listed = _run(sys.executable, "-m", "preflight", "list-checks", cwd=tmp_path, env=env)
    assert any(line.startswith("sysctl ") for line in listed.splitlines()), listed


def test_an_editable_install(clone: Path, tmp_path: Path) -> None:
    """``pip install -e`` in a fresh virtualenv: setuptools' editable finder maps preflight.checks to checks/.

    The virtualenv reads this interpreter's packages (the dependencies, pip, setuptools) through a .pth line,
    so nothing is downloaded; ``--ignore-installed`` leaves an install of this interpreter alone.
    """
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path).strip())
    (site / "host-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--ignore-installed",
         "-e", clone, cwd=tmp_path)
    [finder] = site.glob("__editable___*finder.py")
    assert f"'preflight.checks': '{clone / 'checks'}'" in finder.read_text()
    where = _run(python, "-c", "import preflight, preflight.checks.sysctl as m; print(preflight.__file__);"
                 "print(m.__file__)", cwd=tmp_path).split()
    assert where == [str(clone / "preflight" / "__init__.py"), str(clone / "checks" / "sysctl.py")]
    listed = _run(venv / "bin" / "preflight", "list-checks", cwd=tmp_path)
    assert any(line.startswith("sysctl ") for line in listed.splitlines()), listed


def test_ruff_mypy_and_the_architecture_test(clone: Path, tmp_path: Path) -> None:
    """ruff over the folders; mypy over checks/ as preflight.checks and what it imports; the architecture test
    (which walks checks/ as preflight.checks) and the checks' doctests."""
    _run(sys.executable, "-m", "ruff", "check", "--no-cache", "preflight", "checks", "tests", "bench", cwd=clone)
    typed = _run(sys.executable, "tests/typecheck.py", "preflight/__init__.py", cwd=clone)
    assert typed.startswith("Success"), typed
    _run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", tmp_path / "pytest",
         "tests/test_architecture.py", "tests/test_check_doctests.py", cwd=clone)
