"""The controller's cost of the two SSH transports, and of reading the user's ssh config with ``ssh -G``.

Part 1 (no cluster): ``load_inventory`` of N hosts with and without an ssh config (an ``Include``d file with a
``Match`` block): what asking ``ssh -G`` about every host adds, in total and per host.

Part 2: one namespace cluster per size (name "pfsshb", subnet 172); timed, alternating, ``--repeat`` times,
``preflight run --hosts hosts.yaml --checks sysctl --json`` with ``--transport ssh`` (paramiko, in-process) and
``--transport openssh`` (one ssh ControlMaster per host, a multiplexed ``ssh`` per script). Wall time and the
controller's CPU: user+sys of the timed process tree (``os.wait4``) plus, for openssh, the ControlMasters, which
``ssh -f`` moves out of that tree: their CPU is sampled from /proc every 20 ms while the run lasts (the last
< 20 ms of each is missed). The sshds are not in either figure. Prints a table and writes
``bench/results/ssh.json``. Needs root.

    python bench/ssh.py [--sizes 4,16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))  # this checkout's preflight, not an installed one

from netns_cluster import NetnsCluster, cluster_support_problem  # noqa: E402
from wall_time import _render, machine_info  # noqa: E402

RESULTS = REPO / "bench" / "results" / "ssh.json"
TICK = os.sysconf("SC_CLK_TCK")


def config_cost(sizes: list[int], repeat: int) -> dict[int, dict[str, float]]:
    """Seconds to load an inventory of N hosts without and with an ssh config (median of ``repeat``)."""
    from preflight.inventory import parse_inventory

    out: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "conf.d").mkdir()
        (Path(tmp) / "conf.d" / "cluster.conf").write_text(
            "Host gpu*\n  HostName %h.cluster.example\n  User trainer\nMatch originalhost gpu1*\n  Port 2201\n")
        config = Path(tmp) / "config"
        config.write_text(f"Include {tmp}/conf.d/*.conf\n")
        for size in sizes:
            names = "".join(f"  - gpu{i}\n" for i in range(size))
            timings: dict[str, list[float]] = {"plain": [], "ssh -G": []}
            for _ in range(repeat):
                for label, head in (("plain", ""), ("ssh -G", f"defaults:\n  ssh_config: {config}\n")):
                    start = time.perf_counter()
                    parse_inventory(f"{head}hosts:\n{names}")
                    timings[label].append(time.perf_counter() - start)
            out[size] = {k: statistics.median(v) for k, v in timings.items()}
    return out


def _masters_cpu(stop: threading.Event, seen: dict[int, float]) -> None:
    """Sample the CPU seconds of every ssh ControlMaster (``ControlMaster=yes`` on its command line)."""
    while not stop.is_set():
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if b"ControlMaster=yes" not in Path(f"/proc/{entry}/cmdline").read_bytes():
                    continue
                fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
                seen[int(entry)] = (int(fields[11]) + int(fields[12])) / TICK
            except (OSError, IndexError, ValueError):
                continue
        stop.wait(0.02)


def measure(hosts: Path, transport: str) -> dict[str, Any]:
    argv = [sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--checks", "sysctl", "--json",
            "--transport", transport, "--report-dir", tempfile.mkdtemp()]
    seen: dict[int, float] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=_masters_cpu, args=(stop, seen), daemon=True)
    sampler.start()
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.DEVNULL, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        stop.set()
        sampler.join()
        out.seek(0)
        report = json.loads(out.read() or b"{}")
    reached = [h for h in report.get("hosts", []) if h.get("reachable")]
    ok = os.waitstatus_to_exitcode(status) in (0, 1) and len(reached) == len(report.get("hosts", [])) > 0
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "masters_cpu": sum(seen.values()),
            "error": None if ok else f"exit {os.waitstatus_to_exitcode(status)}, {len(reached)} reached"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,16")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    problem = cluster_support_problem()
    if problem:
        print(f"cannot run: {problem}", file=sys.stderr)
        return 1
    config = config_cost(sorted({*sizes, 64}), max(args.repeat, 3))
    print(_render(["hosts", "inventory s", "with ssh -G s", "ssh -G ms/host"],
                  [[str(n), f"{c['plain']:.3f}", f"{c['ssh -G']:.3f}", f"{1000 * (c['ssh -G'] - c['plain']) / n:.1f}"]
                   for n, c in config.items()]))
    runs: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for size in sizes:
        with NetnsCluster(size, name="pfsshb", subnet=172, workdir=Path(tempfile.mkdtemp())) as cluster:
            hosts = cluster.write_hosts_yaml(cluster.workdir / "hosts.yaml")
            runs[size] = {"ssh": [], "openssh": []}
            for _ in range(args.repeat):
                for transport in ("ssh", "openssh"):
                    runs[size][transport].append(measure(hosts, transport))

    def med(size: int, transport: str, key: str) -> float:
        good = [r[key] for r in runs[size][transport] if r["error"] is None]
        return statistics.median(good) if good else float("nan")

    body = [[str(n), f"{med(n, 'ssh', 'wall'):.2f}", f"{med(n, 'openssh', 'wall'):.2f}", f"{med(n, 'ssh', 'cpu'):.2f}",
             f"{med(n, 'openssh', 'cpu'):.2f}", f"{med(n, 'openssh', 'masters_cpu'):.2f}"] for n in sizes]
    print(_render(["hosts", "paramiko s", "openssh s", "paramiko CPU s", "openssh CPU s", "+ masters CPU s"], body))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": machine_info(), "repeat": args.repeat, "config_cost": config,
                                   "runs": runs}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
