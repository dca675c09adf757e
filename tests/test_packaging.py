"""The wheel installs checks/ as preflight.checks, never as a top-level `checks` package."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_maps_checks_into_the_package(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True, cwd=tmp_path)
    wheel = next(tmp_path.glob("cluster_preflight-*.whl"))  # the distribution name; the package is preflight
    names = zipfile.ZipFile(wheel).namelist()
    assert "preflight/checks/sysctl.py" in names and "preflight/checks/versions.py" in names
    assert not [n for n in names if n.startswith("checks/")]
    top_level = next(n for n in names if n.endswith("top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["preflight"]
