"""Scheduler hooks without a cluster: host lists, drain safety, the srun payload, ``preflight node``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from preflight import drain
from preflight.batch import Probe, build_script, parse_output
from preflight.hostlists import looks_like_hostfile
from preflight.inventory import InventoryError, load_inventory, parse_hostfile, slurm_inventory
from preflight.model import Finding, HostResult, Report, Status
from preflight.transport.slurm import build_payload, choose, split_labelled, srun_argv

REPO = Path(__file__).resolve().parent.parent

DEEPSPEED = """\
# DeepSpeed hostfile
worker-1 slots=8
worker-2 slots=8   # second box

worker-[3-4] slots=8
"""


def test_deepspeed_hostfile_is_recognised_by_content(tmp_path: Path) -> None:
    path = tmp_path / "hostfile"
    path.write_text(DEEPSPEED)
    inventory = load_inventory(path)
    assert [h.name for h in inventory.hosts] == ["worker-1", "worker-2", "worker-3", "worker-4"]
    assert inventory.cluster.devices_per_host == 8
    assert inventory.cluster.master == "worker-1"


def test_hostfile_prefix_mpich_and_open_mpi_forms(tmp_path: Path) -> None:
    path = tmp_path / "hosts.txt"
    path.write_text("n1:4\nn2 slots=4 max_slots=8\n")
    inventory = load_inventory(Path(f"hostfile:{path}"))
    assert [h.name for h in inventory.hosts] == ["n1", "n2"]
    assert inventory.cluster.devices_per_host == 4


def test_hostfile_with_uneven_slots_keeps_the_default() -> None:
    inventory = parse_hostfile("a slots=8\nb slots=4\nc\n", None)
    assert inventory.cluster.devices_per_host == 1


@pytest.mark.parametrize(("text", "line", "words"), [
    ("n1 slots=8\nn2 slots=eight\n", 2, "slots must be a whole number"),
    ("n1\n# c\nn1 slots=2\n", 3, "duplicate host 'n1' (first on line 1)"),
    ("n1 slots=8\nn2 gpus=8\n", 2, "unknown field 'gpus'"),
    ("n1\nn[1-\n", 2, "bad host range"),
])
def test_hostfile_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(InventoryError) as caught:
        parse_hostfile(text, Path("hf"))
    assert str(caught.value).startswith(f"hf:{line}: ")
    assert words in str(caught.value)


def test_empty_hostfile_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "hf"
    path.write_text("# nothing\n\n")
    with pytest.raises(InventoryError, match="lists no hosts"):
        load_inventory(Path(f"hostfile:{path}"))


def test_yaml_is_not_taken_for_a_hostfile() -> None:
    assert not looks_like_hostfile("hosts:\n  - n1\n")
    assert not looks_like_hostfile("- n1\n- n2\n")
    assert not looks_like_hostfile("")
    assert looks_like_hostfile("n1\n")


def test_slurm_nodelist_expanded_with_clustershell() -> None:
    inventory = slurm_inventory({"SLURM_JOB_NODELIST": "gpu[001-003,010],cpu-a"})
    assert [h.name for h in inventory.hosts] == ["cpu-a", "gpu001", "gpu002", "gpu003", "gpu010"]
    with pytest.raises(InventoryError, match="SLURM_JOB_NODELIST is not set"):
        slurm_inventory({})


def test_nodes_prefix_and_bad_range() -> None:
    assert [h.name for h in load_inventory(Path("nodes:n[08-10]")).hosts] == ["n08", "n09", "n10"]
    with pytest.raises(InventoryError, match="bad host range"):
        load_inventory(Path("nodes:n[1-"))


def _report(bad: int, total: int) -> Report:
    hosts = [HostResult(f"n{i}", f"n{i}", True) for i in range(total)]
    findings = [Finding("sysctl.somaxconn", f"n{i}", Status.FAIL if i < bad else Status.PASS, "x")
                for i in range(total)]
    return Report(hosts=hosts, findings=findings, checks=["sysctl"], started="", duration_s=0.0)


def test_max_unhealthy_trips_past_the_limit() -> None:
    report, tripped = drain.apply(_report(3, 10), "20%")
    assert tripped and report.extra["drain"]["recommend_drain"] == []
    assert report.findings[0].check == "preflight.max_unhealthy" and report.findings[0].status is Status.ERROR
    report, tripped = drain.apply(_report(2, 10), "20%")
    assert not tripped and report.extra["drain"]["recommend_drain"] == ["n0", "n1"]
    assert drain.apply(_report(2, 10), "2")[1] is False
    assert drain.apply(_report(3, 10), "2")[1] is True
    assert drain.apply(_report(3, 10), None)[1] is False
    for bad in ("x", "-1", "120%", "2.5"):
        with pytest.raises(ValueError):
            drain.parse_limit(bad)


def test_srun_payload_runs_each_nodes_script_and_splits_back() -> None:
    scripts = {name: build_script([Probe("who", f"echo I am {name}; echo {name} complains >&2")],
                                  nonce=f"nonce{name}") for name in ("n1", "n2")}
    payload = build_payload(scripts)
    assert payload.count("pf_run who") == 2  # two different bodies; equal ones are carried once:
    same = {n: build_script([Probe("who", "hostname")], nonce=f"x{n}") for n in ("a", "b", "c")}
    assert build_payload(same).count("pf_run who") == 1
    out, err = b"", b""
    for task, name in enumerate(("n2", "n1")):  # what `srun --label` prints, tasks interleaved by line
        run = subprocess.run(["sh", "-s"], input=payload.encode(), capture_output=True,
                             env={**os.environ, "SLURMD_NODENAME": name}, check=True)
        out += b"".join(f"{task}: ".encode() + line for line in run.stdout.splitlines(keepends=True))
        err += b"".join(f"{task}: ".encode() + line for line in run.stderr.splitlines(keepends=True))
    parts, errors = split_labelled(out), split_labelled(err)
    assert set(parts) == set(errors) == {"n1", "n2"}
    for name in ("n1", "n2"):
        who = parse_output(parts[name], ["who"], f"nonce{name}", errors[name])["who"]
        assert (who.stdout, who.stderr) == (f"I am {name}\n", f"{name} complains\n")
    stranger = subprocess.run(["sh", "-s"], input=payload.encode(), capture_output=True,
                              env={**os.environ, "SLURMD_NODENAME": "n9"})
    assert stranger.returncode == 99 and b"not in the host list" in stranger.stderr


def test_srun_argv_and_transport_choice() -> None:
    argv = srun_argv([f"n{i}" for i in range(1, 101)], 60)
    assert "--nodelist=n[1-100]" in argv and "--ntasks-per-node=1" in argv and argv[-2:] == ["sh", "-s"]
    assert choose("auto", "slurm", {"SLURM_JOB_ID": "1"}) is (os.system("command -v srun >/dev/null") == 0)
    assert choose("ssh", "slurm", {"SLURM_JOB_ID": "1"}) is False
    with pytest.raises(ValueError):
        choose("rsh", None, {})


def _node(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "preflight", "node", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60, cwd=REPO)


def test_node_one_line_verdict_and_exit_code() -> None:
    low = _node("--checks", "sysctl", "--set", "sysctl.min_somaxconn=1", "--set", "sysctl.min_tcp_max_syn_backlog=1")
    assert low.returncode == 0, low.stdout
    assert low.stdout.count("\n") == 1 and low.stdout.startswith(f"preflight node {os.uname().nodename}: OK")
    high = _node("--checks", "sysctl", env={"PREFLIGHT_NODE_SET": "sysctl.min_somaxconn=999999999"})
    assert high.returncode == 1 and ": FAIL in " in high.stdout and "sysctl.somaxconn" in high.stdout


def test_node_json_and_usage_errors() -> None:
    out = _node("--checks", "sysctl", "--json")
    report = json.loads(out.stdout)
    assert {f["check"].split(".")[0] for f in report["findings"]} <= {"sysctl", "ssh"}
    assert _node("--set", "sysctl.nope=1").returncode == 2
    assert _node("--set", "sysctl.min_somaxconn=lots").returncode == 2
    bad = _node("--checks", "net.reachability")
    assert bad.returncode == 2 and "not a node check" in bad.stderr


def test_node_timeout_is_a_hard_bound(tmp_path: Path) -> None:
    # A python3 that hangs for 10 minutes: the versions probes wait on it; the run must still end at its --timeout.
    # The bound tells a hang from an end (600 s against 2 s), not speed: generous enough for a loaded box.
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nexec sleep 600\n")
    fake.chmod(0o755)
    start = time.monotonic()
    out = _node("--checks", "versions", "--timeout", "2", env={"PATH": f"{tmp_path}:{os.environ['PATH']}"})
    seconds = time.monotonic() - start
    assert seconds < 45, seconds  # the fake would hold it 600 s
    assert out.returncode == 4, "past its own timeout the node could not tell: never a drain"
    assert out.stdout.startswith("preflight node ") and out.stdout.count("\n") == 1


def test_node_never_loads_ssh() -> None:
    """`preflight node` (a prolog's budget) runs without importing paramiko: ~85 ms of imports it has no use for."""
    code = ("import sys\nfrom preflight.cli import main\nsys.argv = ['preflight', 'node', '--checks', 'sysctl']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint('paramiko loaded:', 'paramiko' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.stdout.startswith("preflight node ") and "paramiko loaded: False" in out.stdout, out.stdout + out.stderr
