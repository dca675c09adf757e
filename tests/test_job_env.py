"""The job's environment for python-level probes and workers (preflight.job_env), run for real with ``sh``:
setup lines reach the interpreter, hosts.yaml ``env`` and then the test's own variables win, a failing line
is named while the rest and the probe still run, and npu hosts source CANN's set_env.sh by default."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from preflight.inventory import ClusterSpec, Host
from preflight.job_env import job_command, parse_setup

SHOW = "import json, os; print(json.dumps({k: os.environ.get(k) for k in ('A', 'B', 'C', 'ASCEND_HOME_PATH')}))"


def run(command: str, home: Path | None = None) -> tuple[dict[str, str | None], str]:
    env = {**os.environ, "HOME": str(home)} if home else None
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_setup_then_hosts_yaml_env_then_the_tests_own_variables() -> None:
    host = Host("n1", "n1", setup=("export A=setup B=setup C=setup", "echo noise-on-stdout"),
                env={"B": "yaml", "C": "yaml"})
    seen, stderr = run(job_command(host, ClusterSpec(), [sys.executable, "-c", SHOW], {"C": "test"}))
    assert seen["A"] == "setup" and seen["B"] == "yaml" and seen["C"] == "test"
    assert parse_setup(stderr)["ran"].startswith("ran 2 line(s): export A=setup")


def test_a_failing_line_is_named_and_the_rest_still_runs() -> None:
    host = Host("n1", "n1", setup=("source /nonexistent/set_env.sh", "export A=after"))
    seen, stderr = run(job_command(host, ClusterSpec(), [sys.executable, "-c", SHOW]))
    assert seen["A"] == "after", "the next line and the probe still ran"
    failed = parse_setup(stderr)["failed"]
    assert "source /nonexistent/set_env.sh" in failed and "exit 1" in failed and "ran" not in parse_setup(stderr)


def test_npu_hosts_source_cann_set_env_by_default(tmp_path: Path) -> None:
    toolkit = tmp_path / "Ascend" / "ascend-toolkit"
    toolkit.mkdir(parents=True)
    (toolkit / "set_env.sh").write_text(f"export ASCEND_HOME_PATH={toolkit}/latest\n")
    command = job_command(Host("n1", "n1"), ClusterSpec(accelerator="npu"), [sys.executable, "-c", SHOW])
    seen, stderr = run(command, home=tmp_path)
    assert seen["ASCEND_HOME_PATH"] == f"{toolkit}/latest"
    assert parse_setup(stderr) == {"sourced": f"sourced {toolkit}/set_env.sh"}
    (toolkit / "set_env.sh").unlink()
    seen, stderr = run(command, home=tmp_path)
    assert seen["ASCEND_HOME_PATH"] is None and parse_setup(stderr) == {}, "none found: silent (versions.cann says)"


def test_values_are_quoted_and_cpu_hosts_without_setup_run_plain() -> None:
    host = Host("n1", "n1", env={"A": "x; touch /tmp/pf-pwned", "B": "$(id)"})
    seen, _ = run(job_command(host, ClusterSpec(), [sys.executable, "-c", SHOW]))
    assert seen["A"] == "x; touch /tmp/pf-pwned" and seen["B"] == "$(id)"
    assert not Path("/tmp/pf-pwned").exists()
    assert job_command(Host("n1", "n1"), ClusterSpec(), ["python3", "-V"]) == "python3 -V"
