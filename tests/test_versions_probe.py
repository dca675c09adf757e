"""The versions probe finds packages the way the interpreter would, in real venvs, without importing them."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from preflight.checks.versions import PYTHON_PROBE


def probe(python: Path | str, *extra: str) -> dict[str, Any]:
    run = subprocess.run([str(python), "-S", "-c", PYTHON_PROBE, *extra], capture_output=True, text=True,
                         timeout=60, check=True)
    result: dict[str, Any] = json.loads(run.stdout)
    return result


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("venvs")
    made = {}
    for name, flags in (("system", ["--system-site-packages"]), ("isolated", [])):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", *flags, str(root / name)], check=True)
        made[name] = root / name / "bin" / "python"
    return made


def test_this_interpreter_matches_importlib_metadata() -> None:
    names = ["paramiko", "PyYAML", "pytest", "no-such-package-xyz"]
    found = probe(sys.executable, *names)["extra"]
    for name in names:
        try:
            expected: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        assert found[name] == expected, name


SEEN = ("import importlib.metadata as m, json; "
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))")


def seen_by_site(python: Path) -> dict[str, str]:
    """What the interpreter itself, with site's normal start-up, finds installed: name -> version."""
    run = subprocess.run([str(python), "-c", SEEN], capture_output=True, text=True, timeout=60, check=True,
                         cwd=Path(python).parent)  # not the checkout: its *.egg-info would count as installed
    seen: dict[str, str] = json.loads(run.stdout)
    return seen


def test_venv_with_system_site_packages_sees_the_base_packages(venvs: dict[str, Path]) -> None:
    """Both venvs were made by this interpreter; --system-site-packages adds the *base* interpreter's
    site-packages (not a parent venv's, when the tests run from one): the probe sees what site sees."""
    base = seen_by_site(venvs["system"])
    assert base, "the base interpreter has no package at all: nothing to compare"
    names = sorted({*base, *(d.metadata["Name"] for d in metadata.distributions())})
    assert probe(venvs["system"], *names)["extra"] == {name: base.get(name) for name in names}
    assert seen_by_site(venvs["isolated"]) == {}
    assert set(probe(venvs["isolated"], *names)["extra"].values()) == {None}


def test_installed_torch_build_and_cuda_are_read_without_importing_it(venvs: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    """A real pip install of a package named torch (its import would fail loudly) into the venv."""
    src = tmp_path / "src"
    (src / "torch").mkdir(parents=True)
    (src / "torch" / "__init__.py").write_text("raise RuntimeError('the probe must not import torch')\n")
    (src / "torch" / "version.py").write_text("__version__ = '2.4.0'\ncuda: Optional[str] = '12.1'\n")
    (src / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=68"]\n'
                                        'build-backend = "setuptools.build_meta"\n'
                                        '[project]\nname = "torch"\nversion = "2.4.0+cu121"\n'
                                        '[tool.setuptools]\npackages = ["torch"]\n')
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venvs["isolated"]), "install", "-q",
                    "--no-deps", str(src)], check=True, capture_output=True, timeout=300)
    found = probe(venvs["isolated"])
    assert (found["torch"], found["cuda"]) == ("2.4.0+cu121", "12.1")
    assert found["python"] == ".".join(map(str, sys.version_info[:3]))


# Debian's and Ubuntu's own python3: their site.py lists a venv's lib/pythonX.Y/site-packages only once
# sys.prefix is the venv, which `python -S` never makes it (found on a real Ubuntu 24.04 GPU node, where
# the probe missed torch in /opt/torch/.venv and versions.cuda failed). CI's Debian has one at /usr/bin.
INTERPRETERS = [sys.executable] + [p for p in ("/usr/bin/python3",) if Path(p).exists()
                                   and Path(p).resolve() != Path(sys.executable).resolve()]


@pytest.mark.parametrize("base", INTERPRETERS)
def test_a_venv_of_any_interpreter_shows_its_packages(base: str, tmp_path: Path) -> None:
    """A venv as `python -m venv` makes it (PEP 405: pyvenv.cfg, bin/python3), torch and NCCL installed in it."""
    version = subprocess.run([base, "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python3").symlink_to(Path(base).resolve())
    (venv / "pyvenv.cfg").write_text(f"home = {Path(base).resolve().parent}\ninclude-system-site-packages = false\n"
                                     f"version = {version}\n")
    site_packages = venv / "lib" / f"python{version}" / "site-packages"
    for dist in ("torch-2.11.0+cu130.dist-info", "nvidia_nccl_cu13-2.28.9.dist-info"):
        (site_packages / dist).mkdir(parents=True)
    (site_packages / "torch").mkdir()
    (site_packages / "torch" / "version.py").write_text("__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n")
    found = probe(venv / "bin" / "python3")
    assert (found["torch"], found["nccl"], found["cuda"]) == ("2.11.0+cu130", "2.28.9", "13.0")
    assert found["executable"] == str(venv / "bin" / "python3")
