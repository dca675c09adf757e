"""A training venv as the real H200 node had one (/opt/torch/.venv: torch 2.11.0+cu130, nvidia-nccl-cu13
2.28.9; tests/fixtures/versions/parse/recorded_h200_vm_ubuntu_venv.json): a real ``python -m venv`` holding the
files the versions probe reads (dist-info names, torch/version.py); nothing imports them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable


def venv_with_cuda_torch(path: Path) -> Path:
    """Make the venv at ``path`` (from the system's python3) and return its interpreter."""
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(path)], check=True, capture_output=True,
                   timeout=60)
    python = path / "bin" / "python3"
    version = subprocess.run([str(python), "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    site = path / "lib" / f"python{version}" / "site-packages"
    for dist in ("torch-2.11.0+cu130.dist-info", "nvidia_nccl_cu13-2.28.9.dist-info"):
        (site / dist).mkdir(parents=True, exist_ok=True)
    (site / "torch").mkdir(exist_ok=True)
    (site / "torch" / "version.py").write_text("__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n")
    return python
