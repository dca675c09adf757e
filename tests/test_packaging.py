"""The wheel (packages found by setuptools, not listed by hand) holds every module and data file of the source
tree, and installs checks/ as preflight.checks, never as a top-level `checks` package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def source_files() -> set[str]:
    """The package's files as the wheel names them: preflight/** (the checks symlink followed), no caches."""
    found = set()
    for folder, dirs, files in os.walk(ROOT / "preflight", followlinks=True):  # the checks symlink followed
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found |= {(Path(folder) / f).relative_to(ROOT).as_posix() for f in files if f.endswith((".py", ".json"))}
    assert "preflight/checks/sysctl.py" in found
    return found


def test_wheel_maps_checks_into_the_package(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a clean copy: a build/ left in the checkout by an older build may hold removed modules
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
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
