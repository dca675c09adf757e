"""versions finds CANN where it is installed (issue 18): a non-root install under $HOME/Ascend, or a toolkit
that ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME points to (hosts.yaml env or the login environment).

The probe's install-info command runs here in ``sh`` on a real install-info file placed in a temp tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.batch import ProbeOutput
from preflight.checks.versions import VersionsCheck
from preflight.inventory import ClusterSpec, Host

INFO = Path(__file__).parent / "fixtures/versions/install_info/ascend_toolkit_install_info_8.5.0_aarch64.txt"


def install(root: Path) -> Path:
    """A toolkit tree at ``root`` (what ``.../ascend-toolkit/latest`` holds) with the real install-info file."""
    (root / "aarch64-linux").mkdir(parents=True)
    shutil.copy(INFO, root / "aarch64-linux" / "ascend_toolkit_install.info")
    return root


def cann_seen(host_env: dict[str, str], login_env: dict[str, str], home: Path) -> tuple[str | None, str]:
    """The CANN version versions parses from its install-info probe run with this env, and the file it read."""
    probe = next(p for p in VersionsCheck().probes(Host("n1", "n1", env=host_env), ClusterSpec(accelerator="npu"))
                 if p.key == "install_files")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **login_env}
    out = subprocess.run(["sh", "-c", probe.command], capture_output=True, text=True, env=env, check=False)
    facts = VersionsCheck().parse({"python": ProbeOutput("", "not run", 1),
                                   "install_files": ProbeOutput(out.stdout, out.stderr, out.returncode)})
    header = next((line for line in out.stdout.splitlines() if line.startswith("== toolkit ")), "")
    return facts["cann"], header


def test_non_root_install_under_home(tmp_path: Path) -> None:
    install(tmp_path / "home" / "Ascend" / "ascend-toolkit" / "latest")
    cann, header = cann_seen({}, {}, tmp_path / "home")
    assert cann == "8.5.0"
    assert header == f"== toolkit {tmp_path}/home/Ascend/ascend-toolkit/latest/aarch64-linux/" \
        "ascend_toolkit_install.info"


def test_ascend_home_path_from_hosts_yaml(tmp_path: Path) -> None:
    root = install(tmp_path / "opt dir" / "cann")  # a space: the path is quoted into the command
    cann, header = cann_seen({"ASCEND_HOME_PATH": str(root)}, {}, tmp_path)
    assert (cann, header) == ("8.5.0", f"== toolkit {root}/aarch64-linux/ascend_toolkit_install.info")


def test_toolkit_home_from_the_login_environment(tmp_path: Path) -> None:
    root = install(tmp_path / "cann")
    assert cann_seen({}, {"ASCEND_TOOLKIT_HOME": str(root)}, tmp_path)[0] == "8.5.0"
    assert cann_seen({}, {"ASCEND_HOME_PATH": str(root)}, tmp_path)[0] == "8.5.0"


def test_hosts_yaml_env_comes_first(tmp_path: Path) -> None:
    configured = install(tmp_path / "configured")
    install(tmp_path / "home" / "Ascend" / "ascend-toolkit" / "latest")
    (tmp_path / "home" / "Ascend" / "ascend-toolkit" / "latest" / "aarch64-linux" /
     "ascend_toolkit_install.info").write_text("version=8.0.0\n")
    assert cann_seen({"ASCEND_TOOLKIT_HOME": str(configured)}, {}, tmp_path / "home")[0] == "8.5.0"
    assert cann_seen({}, {}, tmp_path / "home")[0] == "8.0.0"


def test_nothing_installed_is_none(tmp_path: Path) -> None:
    if Path("/usr/local/Ascend/ascend-toolkit").exists():
        pytest.skip("this machine has a root CANN install")
    assert cann_seen({"ASCEND_HOME_PATH": str(tmp_path / "absent")}, {}, tmp_path) == (None, "")
