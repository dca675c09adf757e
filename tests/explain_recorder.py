"""Record real failed launches on the namespace cluster for ``preflight explain``: logs and a report.json.

A 2-node job (``python -m torch.distributed.run``, gloo on CPU torch, a small all_reduce loop) is started over
ssh on node1 (the master) and node2, broken one way per case:

- ``blocked_port``: an iptables ``DROP`` of the master port on node1's eth0 (loopback still accepted);
- ``wrong_interface``: ``GLOO_SOCKET_IFNAME=eth9`` (no such interface) on node2 only;
- ``killed_rank``: the rank on node2 killed with SIGKILL after a few all_reduce steps.

Each node's launcher writes its ranks' logs with ``--log-dir`` (``--redirects 3``: ``<run id>/attempt_0/<local
rank>/{stdout,stderr}.log`` and ``error.json``, as torchrun lays them out) and its own output to
``console.log``. Then ``preflight run --hosts`` runs on the same broken cluster (the job's GLOO_SOCKET_IFNAME in
hosts.yaml's ``env``) and its report.json is kept. Layout::

    OUT/<case>/logs/node1/console.log, OUT/<case>/logs/node1/<run id>/attempt_0/0/stderr.log, ...
    OUT/<case>/report.json

Script use (root, under the cluster lock): ``flock /tmp/preflight-cluster.lock python3 tests/explain_recorder.py
tests/fixtures/explain/recorded_netns``.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CASES = ("blocked_port", "wrong_interface", "killed_rank")
PORTS = {"blocked_port": 29531, "wrong_interface": 29532, "killed_rank": 29533}
NODES = ("node1", "node2")

# The job: init, then all_reduce steps; @record writes error.json for the launcher, as torchrun's docs advise.
JOB = '''\
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main() -> None:
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank = dist.get_rank()
    with open(os.path.join(sys.argv[1], f"rank{rank}.pid"), "w") as f:
        f.write(str(os.getpid()))
    for step in range(int(sys.argv[2])):
        t = torch.ones(1 << 16)
        dist.all_reduce(t)
        print(f"rank {rank} step {step}: sum {t[0].item():.0f}", flush=True)
        time.sleep(0.5)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def ssh_argv(cluster: object, node: str, command: str) -> list[str]:
    """``ssh`` to a cluster node as root with the cluster's key and known_hosts."""
    from netns_cluster import NetnsCluster

    assert isinstance(cluster, NetnsCluster)
    return ["ssh", "-i", str(cluster.client_key), "-o", f"UserKnownHostsFile={cluster.known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", f"root@{cluster.node(node).address}", command]


def launch_line(case: str, rank: int, work: Path, logs: Path, steps: int) -> str:
    """The shell line one node runs: the launcher with its console to ``logs/console.log``."""
    env = "GLOO_SOCKET_IFNAME=eth9 " if case == "wrong_interface" and rank == 1 else ""
    argv = [sys.executable, "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=1", f"--node-rank={rank}",
            "--master-addr=node1", f"--master-port={PORTS[case]}", "--max-restarts=0",
            "--rdzv-conf=timeout=30", f"--log-dir={logs}", "--redirects=3", str(work / "job.py"),
            str(work), str(steps)]
    return f"cd {shlex.quote(str(work))} && {env}exec {shlex.join(argv)} >{shlex.quote(str(logs / 'console.log'))} 2>&1"


@contextmanager
def broken(cluster: object, case: str) -> Iterator[None]:
    """The case's fault on the cluster for the duration (the job's own faults need nothing here)."""
    from netns_cluster import NetnsCluster

    assert isinstance(cluster, NetnsCluster)
    rule = ["-i", "eth0", "-p", "tcp", "--dport", str(PORTS[case]), "-j", "DROP"]
    if case == "blocked_port":
        cluster.exec("node1", ["iptables", "-I", "INPUT", *rule])
    try:
        yield
    finally:
        if case == "blocked_port":
            cluster.exec("node1", ["iptables", "-D", "INPUT", *rule], check=False)


def run_job(cluster: object, case: str, out: Path, work: Path, deadline_s: float = 150.0) -> None:
    """Both nodes' launchers, each over its ssh session; the killed_rank case kills rank 1 mid-run."""
    steps = 40 if case == "killed_rank" else 6
    procs = []
    for rank, node in enumerate(NODES):
        logs = out / "logs" / node
        logs.mkdir(parents=True)
        procs.append(subprocess.Popen(ssh_argv(cluster, node, launch_line(case, rank, work, logs, steps)),
                                      stdin=subprocess.DEVNULL))
    try:
        if case == "killed_rank":
            pidfile, start = work / "rank1.pid", time.monotonic()
            while not pidfile.exists() and time.monotonic() - start < 90:
                time.sleep(0.2)
            time.sleep(4)  # a few all_reduce steps done
            subprocess.run(ssh_argv(cluster, "node2", f"kill -KILL {int(pidfile.read_text())}"), check=True)
        start = time.monotonic()
        for proc in procs:
            proc.wait(timeout=max(1.0, deadline_s - (time.monotonic() - start)))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def hosts_yaml(cluster: object, case: str, path: Path) -> Path:
    """hosts.yaml for ``preflight run``: the job's master, port and (per host) GLOO_SOCKET_IFNAME."""
    import yaml
    from netns_cluster import NetnsCluster

    assert isinstance(cluster, NetnsCluster)
    cluster.write_hosts_yaml(path, nodes=[cluster.node(n) for n in NODES],
                             cluster={"master": "node1", "master_port": PORTS[case]})
    doc = yaml.safe_load(path.read_text())
    if case == "wrong_interface":
        doc["hosts"][1]["env"] = {"GLOO_SOCKET_IFNAME": "eth9"}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run_preflight(hosts: Path, out: Path) -> int:
    """``preflight run --hosts`` (every default check) with report.json written to ``out``."""
    report_dir = out / "run"
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--report-dir",
                           str(report_dir)], capture_output=True, text=True, timeout=300,
                          check=False)
    if not (report_dir / "report.json").is_file():
        raise RuntimeError(f"preflight run wrote no report ({proc.returncode}): {proc.stderr[-2000:]}")
    (report_dir / "report.json").replace(out / "report.json")
    for leftover in sorted(report_dir.rglob("*"), reverse=True):
        leftover.unlink() if leftover.is_file() else leftover.rmdir()
    report_dir.rmdir()
    return proc.returncode


def record(cluster: object, case: str, out: Path, scratch: Path) -> None:
    """Record ``case`` into ``out`` (created): the job's logs, then preflight's report on the same fault."""
    out, work = out.resolve(), scratch.resolve() / case  # the nodes' shells start elsewhere: absolute paths
    work.mkdir(parents=True)
    (work / "job.py").write_text(JOB)
    out.mkdir(parents=True)
    with broken(cluster, case):
        run_job(cluster, case, out, work)
        run_preflight(hosts_yaml(cluster, case, scratch / f"{case}-hosts.yaml"), out)


def main(argv: list[str]) -> int:
    """Record every case (or those named after OUT) into OUT on a fresh 2-node cluster."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from netns_cluster import NetnsCluster

    out, cases = Path(argv[0]).resolve(), argv[1:] or list(CASES)
    with tempfile.TemporaryDirectory(prefix="pfexp-") as tmp, \
            NetnsCluster(2, name="pfexp", subnet=38, workdir=Path(tmp) / "cluster") as cluster:
        for case in cases:
            record(cluster, case, out / case, Path(tmp) / "work")
            print(f"recorded {case} in {out / case}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
