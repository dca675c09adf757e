"""The slurm transport next to SSH: ``preflight run`` (default checks) on the same nodes, both ways.

For each size one namespace cluster (name "pfslb", subnet 53) and a real Slurm on it
(``tests/slurm_cluster.py``: slurmctld here, one slurmd per node namespace) come up. Timed, alternating,
``--repeat`` times:

- ``ssh``: ``preflight run --hosts hosts.yaml`` (one SSH session per node, the master-port test during
  the gather);
- ``srun``: ``salloc -N <size> preflight run --hosts slurm`` (one srun for the gather, one per round of
  the active phase);
- ``salloc``: ``salloc -N <size> true``, the allocation alone, to subtract from ``srun``.

Wall time and the controller's CPU (user+sys of the timed process tree, ``os.wait4``: preflight and its
ssh threads, or salloc + preflight + its sruns; the slurmds and sshds are not in it). Every daemon shares
this machine's CPUs, so compare in one run. Prints a table and writes ``bench/results/slurm.json``.
Needs root, slurm-wlm and munge.

    python bench/slurm.py [--sizes 4,16,64] [--repeat 3]
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

from netns_cluster import NetnsCluster, cluster_support_problem  # noqa: E402
from slurm_cluster import SlurmCluster, slurm_support_problem  # noqa: E402
from wall_time import _render, machine_info  # noqa: E402

RESULTS = REPO / "bench" / "results" / "slurm.json"
RUN_TIMEOUT_S = 300


def measure(argv: list[str], env: dict[str, str], size: int, report: bool) -> dict[str, Any]:
    """One run: wall seconds, CPU seconds of the process tree, error (None when the run counts).

    A preflight run counts when it exits 0 or 1 with a JSON report in which every host was reached.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=REPO)
        timer = threading.Timer(RUN_TIMEOUT_S, proc.kill)
        timer.daemon = True
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)  # rusage of the whole tree it waited for
        wall = time.perf_counter() - start
        timer.cancel()
        code = proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    error = None
    if report:
        try:
            hosts = json.loads(stdout).get("hosts", [])
            if code not in (0, 1, 4) or sum(1 for h in hosts if h.get("reachable")) != size:
                error = f"exit {code}, {sum(1 for h in hosts if h.get('reachable'))}/{size} hosts reached"
        except ValueError:
            error = f"exit {code}, no JSON report: {stderr.strip()[-300:]}"
    elif code != 0:
        error = f"exit {code}: {stderr.strip()[-300:]}"
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "exit": code, "error": error}


def bench_size(size: int, repeat: int) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {"ssh": [], "srun": [], "salloc": []}
    with tempfile.TemporaryDirectory(prefix=f"pfslb-{size}-") as tmp:
        work = Path(tmp)
        with NetnsCluster(size, name="pfslb", subnet=53, workdir=work / "cluster") as netns, \
                SlurmCluster(netns, work / "slurm") as slurm:
            hosts = netns.write_hosts_yaml(work / "hosts.yaml")
            env = slurm.env(PYTHONPATH=str(REPO))
            preflight = [sys.executable, "-m", "preflight", "run", "--json", "--report-dir", str(work / "reports")]
            salloc = ["salloc", f"--nodes={size}", "--nodelist=" + ",".join(n.name for n in netns.nodes)]
            for _ in range(repeat):
                runs["ssh"].append(measure([*preflight, "--hosts", str(hosts)], env, size, True))
                runs["srun"].append(measure([*salloc, *preflight, "--hosts", "slurm"], env, size, True))
                runs["salloc"].append(measure([*salloc, "true"], env, size, False))
    return runs


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    good = [r[key] for r in runs if r["error"] is None]
    return statistics.median(good) if good and len(good) == len(runs) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="4,16,64", help="comma-separated cluster sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per way and size (median reported)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    problem = cluster_support_problem() or slurm_support_problem()
    if problem:
        print(f"cannot build the bench cluster: {problem}", file=sys.stderr)
        return 1
    raw: dict[int, dict[str, list[dict[str, Any]]]] = {}
    summary: dict[int, dict[str, float | None]] = {}
    for size in sizes:
        print(f"size {size}...", file=sys.stderr)
        raw[size] = bench_size(size, args.repeat)
        for way, runs in raw[size].items():
            for run in runs:
                if run["error"]:
                    print(f"  {way}: {run['error']}", file=sys.stderr)
        summary[size] = {f"{way}_{key}": _median(runs, key) for way, runs in raw[size].items()
                         for key in ("wall_s", "cpu_s")}

    def cell(value: float | None) -> str:
        return "FAILED" if value is None else f"{value:.2f}"

    body = [[str(size), cell(row["ssh_wall_s"]), cell(row["srun_wall_s"]), cell(row["salloc_wall_s"]),
             cell(row["ssh_cpu_s"]), cell(row["srun_cpu_s"])] for size, row in summary.items()]
    print(f"median of {args.repeat}; every slurmd and sshd shares this machine's CPUs\n")
    print(_render(["hosts", "ssh s", "srun s (incl. salloc)", "salloc alone s", "ssh CPU s", "srun CPU s"], body))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    doc = {"machine": machine_info(), "repeat": args.repeat, "sizes": sizes,
           "ssh": "preflight run --hosts hosts.yaml --json (default checks)",
           "srun": "salloc -N <size> preflight run --hosts slurm --json (default checks)",
           "salloc": "salloc -N <size> true",
           "summary": {str(k): v for k, v in summary.items()}, "runs": {str(k): v for k, v in raw.items()}}
    RESULTS.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS.relative_to(REPO)}", file=sys.stderr)
    return 0 if all(v is not None for row in summary.values() for v in row.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
