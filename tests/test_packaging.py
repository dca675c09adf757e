"""The wheel holds every module and data file of the source tree, and installs checks/ as preflight.checks,
never as a top-level `checks` package (pyproject.toml's package-dir; the packages are listed there, as a package
search cannot see a mapped folder: a folder left out of the list fails here)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def source_files() -> set[str]:
    """The package's files as the wheel names them: preflight/** and checks/** (as preflight/checks/**), no
    caches."""
    found = set()
    for top, named in ((ROOT / "preflight", "preflight"), (ROOT / "checks", "preflight/checks")):
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            found |= {(Path(named) / Path(folder).relative_to(top) / f).as_posix()
                      for f in files if f.endswith((".py", ".json"))}
    assert "preflight/checks/sysctl.py" in found
    return found


def test_pyproject_lists_every_package() -> None:
    """Every folder of preflight/ with an __init__.py, and preflight.checks mapped to checks/."""
    text = (ROOT / "pyproject.toml").read_text()  # no tomllib before Python 3.11: the two keys read as text
    assert '\npackage-dir = {"preflight.checks" = "checks"}\n' in text
    packages = re.search(r"\npackages = \[(.*?)\]", text, re.S)
    assert packages, "pyproject.toml: no [tool.setuptools] packages list"
    listed = set(re.findall(r'"([\w.]+)"', packages.group(1)))
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "preflight").rglob("__init__.py")}
    missing = sorted((folders | {"preflight.checks"}) - listed)
    assert not missing, f"add to pyproject.toml's [tool.setuptools] packages: {missing}"
    assert sorted(listed - folders - {"preflight.checks"}) == [], "listed in pyproject.toml, no such folder"


def test_wheel_maps_checks_into_the_package(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a clean copy: a build/ left in the checkout by an older build may hold removed modules
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "reports"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "-w", str(tmp_path), str(src)], check=True, capture_output=True, cwd=tmp_path)
    wheel = next(tmp_path.glob("cluster_preflight-*.whl"))  # the distribution name; the package is preflight
    names = zipfile.ZipFile(wheel).namelist()
    assert "preflight/checks/sysctl.py" in names and "preflight/checks/versions.py" in names
    assert not [n for n in names if n.startswith("checks/")]
    assert "preflight/schemas/report.schema.json" in names and "preflight/schemas/hosts.schema.json" in names
    assert sorted(source_files() - set(names)) == []
    top_level = next(n for n in names if n.endswith("top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["preflight"]
