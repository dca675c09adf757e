"""The history store under a Slurm prolog's load (docs/history.md, issue 42): many writers on one store at once.

Two measurements, one store each (``--processes``, default 64):

1. ``node``: that many ``preflight node --checks sysctl --history STORE --timeout T`` processes started together
   (as a prolog on every node of a job, here on one machine and one store: the worst case of contention). Every
   process must exit with the verdict's code (not 4: none past its timeout), and the store must hold every run
   and every finding row of them.
2. ``store``: the write path alone: that many processes, started together, each writing ``--writes`` runs of a
   node-sized report (``--findings`` findings) through ``preflight.history.store.record``, each write timed:
   the per-host write cost (p50 / p95 / max, ms) with every writer contending.

    python3 bench/history_writes.py [--processes 64] [--writes 5] [--findings 30] \
        [--json bench/results/history_writes.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from preflight.history import store  # noqa: E402
from preflight.model import Finding, Report, Status  # noqa: E402


def node_processes(count: int, timeout: float, folder: Path) -> dict[str, Any]:
    """``count`` concurrent ``preflight node`` processes on one store: exit codes, wall times, rows."""
    path = folder / "node.sqlite"
    command = [sys.executable, "-m", "preflight", "node", "--checks", "sysctl", "--json", "--timeout", str(timeout),
               "--history", str(path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(count)]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate()
        findings = len(json.loads(out)["findings"]) if out.strip().startswith("{") else -1
        outcomes.append((proc.returncode, findings, "history not recorded" in err))
    wall = time.monotonic() - began
    with sqlite3.connect(path) as conn:
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        rows = conn.execute("SELECT COUNT(*) FROM findings").fetchone()[0]
    expected_rows = sum(f for _, f, _ in outcomes if f > 0)
    return {"processes": count, "timeout_s": timeout, "wall_s": round(wall, 2),
            "exit_codes": sorted({c for c, _, _ in outcomes}), "warnings": sum(1 for *_, w in outcomes if w),
            "runs": runs, "rows": rows, "expected_rows": expected_rows,
            "every_row_present": runs == count and rows == expected_rows}


def _writer(args: tuple[str, int, int, int, float]) -> list[float]:
    path, worker, writes, findings, start = args
    report = Report([], [Finding(f"check.f{i}", f"node{worker:03d}", Status.PASS if i % 7 else Status.WARN, "m",
                                 observed=str(i)) for i in range(findings)], ["sysctl"], "", 0.1).redacted()
    while time.time() < start:  # every writer starts at the same moment
        time.sleep(0.001)
    costs = []
    for _ in range(writes):
        began = time.perf_counter()
        store.record(Path(path), report, "node", busy_s=8.0)
        costs.append((time.perf_counter() - began) * 1000)
    return costs


def store_writes(count: int, writes: int, findings: int, folder: Path) -> dict[str, Any]:
    """``count`` processes writing ``writes`` runs each on one store, every write timed."""
    path = folder / "store.sqlite"
    store.record(path, Report([], [], [], "", 0.0).redacted(), "setup")  # the schema exists; WAL set
    with multiprocessing.get_context("fork").Pool(count) as pool:
        start = time.time() + 2.0
        costs = [c for part in pool.map(_writer, [(str(path), w, writes, findings, start) for w in range(count)])
                 for c in part]
    runs, rows = len(store.runs(path)) - 1, len(store.load(path))
    costs.sort()
    return {"processes": count, "writes_each": writes, "findings_per_write": findings, "runs": runs, "rows": rows,
            "every_row_present": runs == count * writes and rows == count * writes * findings,
            "write_ms": {"p50": round(statistics.median(costs), 2), "p95": round(costs[int(len(costs) * 0.95)], 2),
                         "max": round(costs[-1], 2), "mean": round(statistics.fmean(costs), 2)}}


def alone(writes: int, findings: int, folder: Path) -> dict[str, float]:
    """One writer, no contention: the cost of the write itself."""
    costs = _writer((str(folder / "alone.sqlite"), 0, writes, findings, 0.0))
    costs.sort()
    return {"p50": round(statistics.median(costs), 2), "max": round(costs[-1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=64)
    parser.add_argument("--writes", type=int, default=5)
    parser.add_argument("--findings", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=8.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pf-history-bench-") as tmp:
        folder = Path(tmp)
        result = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_version()}, "
                             f"sqlite {sqlite3.sqlite_version}",
                  "alone_write_ms": alone(20, args.findings, folder),
                  "store": store_writes(args.processes, args.writes, args.findings, folder),
                  "node": node_processes(args.processes, args.timeout, folder)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
