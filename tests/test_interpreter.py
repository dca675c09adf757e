"""The job's interpreter (issue 35.1, preflight.interpreter): `node` and a local `run` judge the job's Python,
named by --python / --setup, PREFLIGHT_PYTHON / PREFLIGHT_SETUP or hosts.yaml (flag over environment over
file); a python3 nobody named is a guess, and what it lacks is no node fault.

Each run is the real CLI in a subprocess with a prolog's bare PATH, so ``python3`` is the system's
(/usr/bin/python3, no torch here), and the job's torch lives only in a venv (tests/job_venv.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from job_venv import SYSTEM_PYTHON, venv_with_cuda_torch

from preflight import exit_codes
from preflight.interpreter import with_interpreter
from preflight.inventory import Host

REPO = Path(__file__).resolve().parent.parent
BARE_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # what a Slurm prolog runs with: no /usr/local, no venv
VERSIONS_ON_GPU = ("--checks", "versions", "--skip", "versions.gpu_driver", "--accelerator", "gpu", "--json")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield venv_with_cuda_torch(tmp_path_factory.mktemp("jobvenv") / "venv")


def bare(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    """``preflight ARGS`` with the prolog's bare environment: exit code, JSON report, stderr."""
    base = {"PATH": BARE_PATH, "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "/root")}
    proc = subprocess.run([sys.executable, "-m", "preflight", *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False, env={**base, **(env or {})})
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.startswith("{") else {}), proc.stderr


def findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in report["findings"]}


@pytest.fixture(scope="module")
def system_python_has_no_torch() -> None:
    probe = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True, check=False)
    if probe.returncode != 1 or b"No module named 'torch'" not in probe.stderr:
        pytest.fail("these tests need /usr/bin/python3 without torch, as a bare node has (Debian's python3)")


def test_precedence_flag_over_environment_over_hosts_yaml() -> None:
    from_file = Host("n1", "n1", python="/opt/file/python", setup=("source /opt/file/env.sh",),
                     interpreter_from="hosts.yaml")
    environ = {"PREFLIGHT_PYTHON": "/opt/env/python", "PREFLIGHT_SETUP": "a=1\n\nb=2\n"}
    got = with_interpreter(from_file, None, [], environ)
    assert (got.python, got.setup) == ("/opt/env/python", ("a=1", "b=2"))
    got = with_interpreter(from_file, "/opt/flag/python", [], environ)
    assert (got.python, got.setup, got.interpreter_from) == ("/opt/flag/python", ("a=1", "b=2"),
                                                              "--python, PREFLIGHT_SETUP")
    got = with_interpreter(from_file, None, [], {})  # nothing named on the command line: hosts.yaml's
    assert got == from_file
    half = with_interpreter(from_file, None, ["conda activate train"], {})  # each half on its own
    assert (half.python, half.setup, half.interpreter_from) == ("/opt/file/python", ("conda activate train",),
                                                                "--setup, hosts.yaml")
    assert with_interpreter(Host("n1", "n1"), None, [], {"PREFLIGHT_PYTHON": "  "}).interpreter_from == ""


@pytest.mark.usefixtures("system_python_has_no_torch")
def test_node_without_a_named_interpreter_blames_no_node(venv: Path) -> None:
    """main: versions.cuda FAIL, exit 1 (a prolog drains the node). Now: skip, naming the interpreter tried and
    how to name the right one."""
    code, report, _ = bare("node", *VERSIONS_ON_GPU)
    assert code == exit_codes.OK, [f for f in report["findings"] if f["status"] in ("fail", "error")]
    found = findings(report)
    assert (found["versions.torch"]["status"], found["versions.cuda"]["status"]) == ("skip", "skip")
    assert "not found by /usr/bin/python3, which nobody named" in found["versions.cuda"]["message"]
    assert "--python" in found["versions.cuda"]["remedy"] and "PREFLIGHT_PYTHON" in found["versions.cuda"]["remedy"]


@pytest.mark.usefixtures("system_python_has_no_torch")
def test_named_interpreter_is_read_and_its_lack_is_a_fail(venv: Path, tmp_path: Path) -> None:
    code, report, _ = bare("node", *VERSIONS_ON_GPU, env={"PREFLIGHT_PYTHON": str(venv)})
    found = findings(report)
    assert code == exit_codes.OK, report["findings"]
    assert (found["versions.torch"]["observed"], found["versions.cuda"]["observed"],
            found["versions.nccl"]["observed"]) == ("2.11.0+cu130", "13.0", "2.28.9")
    # --python over PREFLIGHT_PYTHON
    code, report, _ = bare("node", *VERSIONS_ON_GPU, "--python", venv, env={"PREFLIGHT_PYTHON": "/nonexistent"})
    assert code == exit_codes.OK and findings(report)["versions.cuda"]["status"] == "pass"
    # The named interpreter lacks torch: evidence about the node, a fail (the prolog drains)
    code, report, _ = bare("node", *VERSIONS_ON_GPU, "--python", SYSTEM_PYTHON)
    assert code == exit_codes.PROBLEMS
    assert findings(report)["versions.cuda"]["status"] == "fail"
    assert findings(report)["versions.torch"]["status"] == "fail"


@pytest.mark.usefixtures("system_python_has_no_torch")
def test_setup_lines_activate_the_venv(venv: Path) -> None:
    """``--setup 'source VENV/bin/activate'`` (conda activate, module load alike): python3 is then the venv's."""
    code, report, _ = bare("node", *VERSIONS_ON_GPU, "--setup", f"source {venv.parent / 'activate'}")
    found = findings(report)
    assert code == exit_codes.OK, report["findings"]
    assert found["versions.cuda"]["observed"] == "13.0" and found["versions.setup"]["status"] == "pass"
    code, report, _ = bare("node", *VERSIONS_ON_GPU,
                           env={"PREFLIGHT_SETUP": f"true\nsource {venv.parent / 'activate'}"})
    assert code == exit_codes.OK and findings(report)["versions.cuda"]["observed"] == "13.0"


@pytest.mark.usefixtures("system_python_has_no_torch")
def test_node_hosts_takes_this_nodes_entry(venv: Path, tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("defaults:\n  python: /nonexistent/python\n"
                     "cluster:\n  accelerator: gpu\n  master_port: 29611\n"
                     f"hosts:\n  - name: gpu07\n    python: {venv}\n  - name: gpu08\n"
                     "checks:\n  sysctl:\n    min_somaxconn: 16\n")
    code, report, _ = bare("node", "--hosts", hosts, "--name", "gpu07", "--checks", "versions",
                           "--skip", "versions.gpu_driver", "--json")
    assert code == exit_codes.OK, report["findings"]
    assert findings(report)["versions.cuda"]["observed"] == "13.0"
    assert report["cluster"]["accelerator"] == "gpu" and report["cluster"]["master_port"] == 29611
    assert [h["name"] for h in report["hosts"]] == ["gpu07"]
    # The environment over the file: PREFLIGHT_PYTHON names the system's python3, which lacks torch: a fail
    code, report, _ = bare("node", "--hosts", hosts, "--name", "gpu07", "--checks", "versions",
                           "--skip", "versions.gpu_driver", "--json", env={"PREFLIGHT_PYTHON": SYSTEM_PYTHON})
    assert code == exit_codes.PROBLEMS and findings(report)["versions.cuda"]["status"] == "fail"
    # SLURMD_NODENAME finds the entry too; a name hosts.yaml lacks is a usage error (exit 2, the prolog keeps the node)
    code, report, _ = bare("node", "--hosts", hosts, "--checks", "versions", "--skip", "versions.gpu_driver",
                           "--json", env={"SLURMD_NODENAME": "gpu07"})
    assert code == exit_codes.OK and findings(report)["versions.cuda"]["observed"] == "13.0"
    code, _, err = bare("node", "--hosts", hosts, "--name", "gpu99", "--checks", "versions")
    assert code == exit_codes.USAGE and "'gpu99' is not a host of" in err


@pytest.mark.usefixtures("system_python_has_no_torch")
def test_local_run_takes_the_interpreter(venv: Path, tmp_path: Path) -> None:
    code, report, _ = bare("run", "--checks", "versions", "--skip", "versions.gpu_driver", "--accelerator", "gpu",
                           "--json", "--report-dir", tmp_path / "r", "--python", venv)
    assert code == exit_codes.OK, report["findings"]
    assert findings(report)["versions.cuda"]["observed"] == "13.0"
    code, report, _ = bare("run", "--checks", "versions", "--skip", "versions.gpu_driver", "--accelerator", "gpu",
                           "--json", "--report-dir", tmp_path / "r2")
    assert code == exit_codes.OK and findings(report)["versions.cuda"]["status"] == "skip"
