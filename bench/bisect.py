"""--bisect vs the pair rounds on the namespace cluster (issue 41): runs, wall time and verdict with one slow node,
and consecutive healthy --bisect runs (false alarms).

For each ``--hosts`` size a cluster (``tests/netns_cluster.py``, name "pfbis<n>", subnet 22; always torn down) is
brought up, one node's eth0 shaped with ``tc tbf 20mbit``, and ``preflight run --json`` is timed with
``--bisect``, with the default pair rounds (``pattern: auto``: every pair up to 16 hosts, 3 matchings above) and
with every pair forced (``pattern: all``) unless ``--no-all-pairs``. Then the shaping is removed and
``--healthy-runs`` consecutive ``--bisect`` runs are judged: any named host (an ``allreduce.busbw`` fail) or
error is a false alarm. ``--phases`` runs a subset (e.g. ``healthy`` alone: no node is shaped). Every run records
the load average before and after it. Results: ``bench/results/bisect.json``, merged per size and phase (a phase
not run keeps its earlier figures; a new healthy series moves the earlier one to ``healthy_earlier``). Needs root.

    python bench/bisect.py [--hosts 16,32,64] [--healthy-runs 10] [--no-all-pairs]
                           [--phases bisect,default,all,healthy] [--init-timeout 20]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from netns_cluster import NetnsCluster, cluster_support_problem  # noqa: E402

RESULTS = REPO / "bench" / "results" / "bisect.json"
PARAMS = {"sizes_mib": [1], "warmup": 1, "iters": 3, "trials": 3, "budget_s": 3.0, "init_timeout_s": 20.0,
          "fraction": 0.3}
SHAPE = ["tbf", "rate", "20mbit", "burst", "32kbit", "latency", "400ms"]
PHASES = ("bisect", "default", "all", "healthy")
RUN_TIMEOUT_S = [3600.0]  # one preflight run's limit (--run-timeout: every pair at 64 hosts takes longer)


def _load() -> list[float]:
    """The 1, 5 and 15 minute load averages, rounded (the box is shared with other engineers' tests)."""
    return [round(x, 2) for x in os.getloadavg()]


def run(cluster: NetnsCluster, work: Path, tag: str, bisect: bool, **params: Any) -> dict[str, Any]:
    """One ``preflight run --checks allreduce``: wall seconds, runs (group or pair runs), named hosts, exit."""
    import yaml

    hosts = cluster.write_hosts_yaml(work / f"{tag}.yaml")
    doc = yaml.safe_load(hosts.read_text())
    check = {**PARAMS, **params}
    doc["checks"] = {"allreduce": check}
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    argv = [sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json", "--checks", "allreduce",
            "--report-dir", str(work / f"r-{tag}")] + (["--bisect"] if bisect else [])
    load_before = _load()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S[0], check=False, cwd=REPO)
    wall = time.perf_counter() - start
    findings = [f for f in json.loads(proc.stdout)["findings"] if f["check"].startswith("allreduce.")]
    named = sorted({f["host"] for f in findings if f["status"] == "fail" and f["check"] == "allreduce.busbw"
                    and f["host"]})
    runs = sum(1 for f in findings if f["check"] == "allreduce.bisect") if bisect else \
        len({frozenset((f["host"], f["peer"])) for f in findings if f.get("peer") and f.get("busbw_gbps")})
    errors = [f["message"] for f in findings if f["status"] == "error"]
    return {"wall_s": round(wall, 1), "runs": runs, "named": named, "exit": proc.returncode, "errors": errors[:3],
            "started": started, "load_before": load_before, "load_after": _load(),
            "init_timeout_s": check["init_timeout_s"]}


def bench(size: int, healthy_runs: int, phases: set[str],
          save: Callable[[dict[str, Any]], None] = lambda out: None) -> dict[str, Any]:
    """One size, the ``phases`` asked for; ``save`` gets what is measured so far after each phase (a run cut short
    keeps its figures)."""
    with tempfile.TemporaryDirectory(prefix="pfbis-") as tmp:
        work = Path(tmp)
        cluster = NetnsCluster(size, name=f"pfbis{size}", subnet=22, workdir=work / "cluster")
        try:
            cluster.up()
            slow = f"node{size // 2 + 1}"
            out: dict[str, Any] = {"hosts": size, "slow": slow}
            if phases & {"bisect", "default", "all"}:
                cluster.exec(slow, ["tc", "qdisc", "add", "dev", "eth0", "root", *SHAPE])
                if "bisect" in phases:
                    print(f"{size} hosts: --bisect...", file=sys.stderr)
                    out["bisect"] = run(cluster, work, "bisect", True)
                    save(out)
                if "default" in phases:
                    print(f"{size} hosts: pair rounds (default)...", file=sys.stderr)
                    out["pairs_default"] = run(cluster, work, "default", False)
                    save(out)
                if "all" in phases:
                    print(f"{size} hosts: every pair...", file=sys.stderr)
                    out["pairs_all"] = run(cluster, work, "all", False, pattern="all", all_pairs_max_hosts=1000)
                    save(out)
                cluster.exec(slow, ["tc", "qdisc", "del", "dev", "eth0", "root"])
            if "healthy" in phases and healthy_runs:
                healthy: list[dict[str, Any]] = []
                for i in range(healthy_runs):
                    print(f"{size} hosts: healthy --bisect {i + 1}/{healthy_runs}...", file=sys.stderr)
                    healthy.append(run(cluster, work, f"healthy{i}", True))
                    out["healthy"] = healthy
                    out["false_alarms"] = sum(len(h["named"]) + len(h["errors"]) for h in healthy)
                    save(out)
            return out
        finally:
            cluster.down()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hosts", default="16,32,64", help="comma-separated cluster sizes")
    parser.add_argument("--healthy-runs", type=int, default=10)
    parser.add_argument("--no-all-pairs", action="store_true", help="skip the forced every-pair run")
    parser.add_argument("--init-timeout", type=float, default=PARAMS["init_timeout_s"],
                        help="the check's init_timeout_s (a group's bound is 20 s + this + 2 x budget_s); 64 ranks "
                             "importing torch on 2 shared cores need more than the default")
    parser.add_argument("--run-timeout", type=float, default=RUN_TIMEOUT_S[0],
                        help="seconds one preflight run may take (default 3600; every pair at 64 hosts: ~2 h)")
    parser.add_argument("--phases", default=",".join(PHASES),
                        help=f"comma-separated subset of {','.join(PHASES)} (default: all of them)")
    args = parser.parse_args(argv)
    phases = {p.strip() for p in args.phases.split(",") if p.strip()}
    if phases - set(PHASES):
        parser.error(f"unknown phase(s): {', '.join(sorted(phases - set(PHASES)))}; known: {', '.join(PHASES)}")
    if args.no_all_pairs:
        phases.discard("all")
    PARAMS["init_timeout_s"] = args.init_timeout
    RUN_TIMEOUT_S[0] = args.run_timeout
    problem = cluster_support_problem()
    if problem:
        print(f"cannot build the bench cluster: {problem}", file=sys.stderr)
        return 1
    machine = {"nproc": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout still tears the cluster down
    earlier: dict[int, dict[str, Any]] = {}  # each size's entry as this run found it

    def save(size: int, result: dict[str, Any]) -> None:
        """Merge ``result`` into the file as it is now: other sizes and phases not run keep their figures."""
        doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        doc["machine"] = machine
        sizes = doc.setdefault("sizes", {})
        if size not in earlier:
            earlier[size] = dict(sizes.get(str(size), {}))
        entry = {**earlier[size], **result}
        if "healthy" in result and earlier[size].get("healthy"):
            entry["healthy_earlier"] = earlier[size]["healthy"]  # an earlier series, not part of this one
        sizes[str(size)] = entry
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(doc, indent=2) + "\n")

    for size in [int(s) for s in args.hosts.split(",") if s.strip()]:
        result = bench(size, max(0, args.healthy_runs), phases, functools.partial(save, size))
        print(json.dumps(result))
        save(size, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
