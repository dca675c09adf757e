"""Green: a healthy 64-host namespace cluster's default checks, several runs in a row; any alarm is a false one.

The nodes share this machine's kernel and clock and have no firewall, so every ``warn``, ``fail`` or ``error``
is a false alarm (``os.memlock`` aside: this machine's limit cannot be raised; on a cpu cluster it is a skip).
On a small box every sshd and probe competes for the CPU, as on a busy real node: the timing checks
(``os.clock``, ``net.reachability``) must stay honest. ``--busy N`` adds N busy loops for the whole bench.
Prints per run the wall time and the count of non-pass findings by id, and writes ``bench/results/green.json``.
Needs root.

    python bench/green.py [--size 64] [--runs 3] [--busy 0]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from netns_cluster import NetnsCluster, cluster_support_problem  # noqa: E402
from wall_time import machine_info  # noqa: E402

CLUSTER_NAME = "pfgreen"
CLUSTER_SUBNET = 74
RESULTS = REPO / "bench" / "results" / "green.json"
IGNORED = ("os.memlock",)  # the test machine cannot raise it
RUN_TIMEOUT_S = 600


def alarms(report: dict[str, Any]) -> Counter[str]:
    """Non-pass findings (warn, fail, error) by id, ``IGNORED`` left out.

    >>> alarms({"findings": [{"check": "os.clock", "status": "warn"}, {"check": "os.clock", "status": "pass"},
    ...                      {"check": "os.memlock", "status": "warn"}, {"check": "x", "status": "skip"}]})
    Counter({'os.clock': 1})
    """
    return Counter(f["check"] for f in report.get("findings", [])
                   if f.get("status") not in ("pass", "skip") and f.get("check") not in IGNORED)


def one_run(hosts: Path, work: Path) -> dict[str, Any]:
    """``preflight run --hosts HOSTS --json``: wall seconds, exit code, alarms by id and a few messages."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--report-dir", str(work)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    seconds = round(time.perf_counter() - start, 1)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return {"wall_s": seconds, "exit": proc.returncode, "error": proc.stderr[-2000:], "alarms": {}}
    found = alarms(report)
    examples = sorted({f["message"] for f in report["findings"]
                       if f["check"] in found and f["status"] not in ("pass", "skip")})[:10]
    return {"wall_s": seconds, "exit": proc.returncode, "complete": report.get("complete"),
            "reachable": sum(bool(h.get("reachable")) for h in report.get("hosts", [])),
            "alarms": dict(sorted(found.items())), "examples": examples}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0, help="busy loops running during the whole bench")
    args = parser.parse_args(argv)
    problem = cluster_support_problem()
    if problem:
        print(f"cannot build a namespace cluster here: {problem}", file=sys.stderr)
        return 2
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="pfgreen-") as tmp:
            work = Path(tmp)
            cluster = NetnsCluster(args.size, name=CLUSTER_NAME, subnet=CLUSTER_SUBNET, workdir=work / "cluster")
            cluster.up()
            try:
                hosts = cluster.write_hosts_yaml(work / "hosts.yaml")
                for number in range(1, args.runs + 1):
                    run = one_run(hosts, work / f"report{number}")
                    runs.append(run)
                    found = ", ".join(f"{k} {v}" for k, v in run["alarms"].items()) or "none"
                    print(f"run {number}: {run['wall_s']:.1f} s, exit {run['exit']}, "
                          f"non-pass findings (os.memlock aside): {found}", flush=True)
            finally:
                cluster.down()
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    green = all(not r["alarms"] and r.get("complete") and r.get("reachable") == args.size for r in runs)
    result = {"size": args.size, "runs": runs, "busy_loops": args.busy, "all_green": green,
              "ignored": list(IGNORED), "machine": machine_info(),
              "when": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"all green: {green}; written {RESULTS.relative_to(REPO)}")
    return 0 if green else 1


if __name__ == "__main__":
    sys.exit(main())
