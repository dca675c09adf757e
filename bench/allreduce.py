"""allreduce check vs. a plain torch.distributed script, its pairwise rounds vs. the same pairs one by one,
and consecutive healthy runs (false positives).

One network-namespace cluster (``tests/netns_cluster.py``, name "pfbar", subnet 18; always torn
down) of ``--hosts`` nodes is brought up and three figures are taken on it:

1. busbw of the pair node1<->node2 as ``preflight run --checks allreduce`` reports it (a hosts
   file listing only those two hosts), at each size of ``--sizes-mib`` (one run per size: the
   check's figure is its largest size), next to a minimal gloo ``all_reduce`` script started by
   hand over ssh on the same two hosts (same sizes, warm-up, iterations and trials; busbw = bytes /
   time for a pair, GB = 1e9); medians of ``--repeat`` interleaved runs and their ratio per size;
2. wall time of ``preflight run --checks allreduce`` on all hosts (pairwise rounds) next to the sum
   of one ``preflight run`` per pair (2-host hosts files, one after the other), and their ratio;
3. ``--healthy-runs`` consecutive ``preflight run --checks allreduce`` on all hosts with the
   default ``fraction`` (0.8): every allreduce ``fail`` or ``error`` is a false positive on this
   healthy cluster; ``warn`` ("slow once, normal alone": a pair slow in its round and normal when
   re-measured alone, i.e. contention) is counted apart.

Figures are printed and written to ``bench/results/allreduce.json``. Needs root.

    python bench/allreduce.py [--hosts 8] [--sizes-mib 4,16] [--repeat 5] [--healthy-runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from netns_cluster import NetnsCluster, Node, cluster_support_problem  # noqa: E402

from preflight.allreduce.schedule import plan  # noqa: E402

CLUSTER_NAME = "pfbar"
CLUSTER_SUBNET = 18
RESULTS = REPO / "bench" / "results" / "allreduce.json"
RUN_TIMEOUT_S = 300.0
PLAIN_PORT = 29750  # the plain script's rendezvous port (the check counts up from 29600)
# The check's defaults for these three; the plain script uses the same.
WARMUP, ITERS, TRIALS = 2, 5, 3
BUSBW_RE = re.compile(r"busbw ([0-9.eE+-]+) GB/s")

# The plain script: rank 0 prints one JSON line {size_bytes: busbw_gbps}. A trial times ITERS all_reduces
# after a barrier; the slowest rank's time counts (MAX all_reduce), the best trial is kept.
PLAIN_SCRIPT = """
import json, os, sys, time
import torch, torch.distributed as dist
sizes, warmup, iters, trials = json.loads(sys.argv[1])
dist.init_process_group("gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
out = {}
for size in sizes:
    buf = torch.ones(max(1, size // 4), dtype=torch.float32)
    for _ in range(warmup):
        dist.all_reduce(buf)
    best = None
    for _ in range(trials):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        t = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        best = float(t[0]) if best is None else min(best, float(t[0]))
    algbw = buf.numel() * 4 / best / 1e9
    out[str(size)] = algbw * 2 * (world - 1) / world
dist.destroy_process_group()
if rank == 0:
    print(json.dumps(out))
"""


def _sigterm_to_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _ssh_argv(cluster: NetnsCluster, node: Node, remote: str) -> list[str]:
    """ssh to ``node`` as root with the cluster's key and known_hosts (strict host-key checking)."""
    return ["ssh", "-i", str(cluster.client_key), "-o", f"UserKnownHostsFile={cluster.known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            f"root@{node.address}", remote]


def write_hosts(cluster: NetnsCluster, path: Path, nodes: list[Node], sizes_mib: list[float]) -> Path:
    """A hosts file for ``nodes`` with ``checks: {allreduce: {sizes_mib: ...}}``."""
    import yaml

    cluster.write_hosts_yaml(path, nodes=nodes)
    doc = yaml.safe_load(path.read_text())
    doc["checks"] = {"allreduce": {"sizes_mib": sizes_mib, "warmup": WARMUP, "iters": ITERS, "trials": TRIALS}}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run_preflight(hosts: Path, report_dir: Path) -> tuple[float, list[dict[str, Any]]]:
    """``preflight run --checks allreduce --json``: (wall seconds, allreduce findings). Raises on a bad run."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--checks", "allreduce", "--report-dir", str(report_dir)],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False, cwd=REPO)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1, 4):
        raise RuntimeError(f"preflight exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    findings = [f for f in json.loads(proc.stdout)["findings"] if str(f.get("check", "")).startswith("allreduce.")]
    bad = [f["message"] for f in findings if f.get("status") in ("error", "fail")]
    if bad:
        print(f"  note: preflight reported problems: {bad}", file=sys.stderr)
    return wall, findings


def preflight_pair_busbw(findings: list[dict[str, Any]]) -> float:
    """The pair's busbw (GB/s) from a 2-host run: ``busbw_gbps`` fields, else ``busbw X GB/s`` in observed."""
    values: list[float] = []
    for f in findings:
        if f.get("check") != "allreduce.busbw":
            continue
        if isinstance(f.get("busbw_gbps"), (int, float)):
            values.append(float(f["busbw_gbps"]))
            continue
        match = BUSBW_RE.search(str(f.get("observed") or ""))
        if match:
            values.append(float(match.group(1)))
    if not values:
        raise RuntimeError(f"no busbw figure in the allreduce.busbw findings: {findings}")
    return min(values)  # both hosts report the same pair; min is the conservative one


def plain_busbw(cluster: NetnsCluster, a: Node, b: Node, sizes: list[int]) -> dict[int, float]:
    """Run PLAIN_SCRIPT on ``a`` (rank 0, master) and ``b`` over ssh: size in bytes -> busbw GB/s."""
    args = json.dumps([sizes, WARMUP, ITERS, TRIALS])
    procs = []
    for rank, node in enumerate((a, b)):
        env = {"MASTER_ADDR": a.address, "MASTER_PORT": str(PLAIN_PORT), "RANK": str(rank), "WORLD_SIZE": "2",
               "GLOO_SOCKET_IFNAME": "eth0"}
        remote = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-c", PLAIN_SCRIPT, args])
        procs.append(subprocess.Popen(_ssh_argv(cluster, node, remote), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
        if proc.returncode != 0:
            raise RuntimeError(f"plain script exited {proc.returncode}: {err.strip()[-500:]}")
        outs.append(out)
    result: dict[str, float] = json.loads(outs[0].strip().splitlines()[-1])
    return {int(k): v for k, v in result.items()}


def bench(size: int, sizes_mib: list[float], repeat: int, healthy_runs: int) -> dict[str, Any]:
    """Bring the cluster up, take both figures, always tear it down."""
    sizes = [int(m * (1 << 20)) for m in sizes_mib]
    with tempfile.TemporaryDirectory(prefix="pfbar-") as tmp:
        work = Path(tmp)
        cluster = NetnsCluster(size, name=CLUSTER_NAME, subnet=CLUSTER_SUBNET, workdir=work / "cluster")
        try:
            cluster.up()
            n1, n2 = cluster.nodes[0], cluster.nodes[1]
            print("figure 1: node1<->node2, preflight then plain script, per size...", file=sys.stderr)
            pair_hosts = {m: write_hosts(cluster, work / f"pair-{m}.yaml", [n1, n2], [m]) for m in sizes_mib}
            pf_runs: dict[int, list[float]] = {nbytes: [] for nbytes in sizes}
            plain_runs: list[dict[int, float]] = []
            for r in range(repeat):  # interleaved, so that background load hits both alike
                for m, nbytes in zip(sizes_mib, sizes, strict=True):
                    _, pair_findings = run_preflight(pair_hosts[m], work / f"r-pair{r}-{m}")
                    pf_runs[nbytes].append(preflight_pair_busbw(pair_findings))
                plain_runs.append(plain_busbw(cluster, n1, n2, sizes))
            per_size = {}
            for nbytes in sizes:
                pf, plain = statistics.median(pf_runs[nbytes]), statistics.median(run[nbytes] for run in plain_runs)
                per_size[str(nbytes)] = {"preflight_gbps": pf, "plain_gbps": plain, "ratio": pf / plain,
                                         "preflight_runs_gbps": pf_runs[nbytes],
                                         "plain_runs_gbps": [run[nbytes] for run in plain_runs]}

            print(f"figure 2: all {size} hosts in rounds, then every pair alone...", file=sys.stderr)
            all_hosts = write_hosts(cluster, work / "all.yaml", cluster.nodes, sizes_mib)
            rounds_wall, _ = run_preflight(all_hosts, work / "r-all")
            by_name = {n.name: n for n in cluster.nodes}
            schedule = plan([n.name for n in cluster.nodes], 1, 29600)
            pairs = [p for rnd in schedule for p in rnd]
            seq: list[dict[str, Any]] = []
            for i, p in enumerate(pairs):
                hosts = write_hosts(cluster, work / f"p{i}.yaml", [by_name[p.host], by_name[p.peer]], sizes_mib)
                wall, _ = run_preflight(hosts, work / f"r-p{i}")
                seq.append({"pair": f"{p.host}<->{p.peer}", "wall_s": round(wall, 3)})

            print(f"figure 3: {healthy_runs} consecutive runs on all {size} hosts...", file=sys.stderr)
            healthy: list[dict[str, Any]] = []
            for r in range(healthy_runs):
                wall, findings = run_preflight(all_hosts, work / f"r-healthy{r}")
                flagged = [f"{f.get('host')}: {f.get('check')} {f.get('status')}: {f.get('message')}"
                           for f in findings if f.get("status") in ("fail", "error")]
                warned = [f"{f.get('host')}: {f.get('check')} {f.get('status')}: {f.get('message')}"
                          for f in findings if f.get("status") == "warn"]
                pairs_measured = sum(1 for f in findings if f.get("check") == "allreduce.busbw")
                healthy.append({"wall_s": round(wall, 3), "busbw_findings": pairs_measured, "flagged": flagged,
                                "warned": warned})
        finally:
            cluster.down()
    seq_total = sum(s["wall_s"] for s in seq)
    return {
        "busbw": {"pair": "node1<->node2", "sizes_mib": sizes_mib, "warmup": WARMUP, "iters": ITERS,
                  "trials": TRIALS, "repeat": repeat, "per_size": per_size},
        "healthy": {"runs": healthy_runs, "hosts": size, "fraction": 0.8,
                    "false_positives": sum(len(h["flagged"]) for h in healthy),
                    "slow_once_warnings": sum(len(h["warned"]) for h in healthy), "per_run": healthy},
        "wall": {"hosts": size, "pairs": len(pairs), "rounds": len(schedule),
                 "rounds_wall_s": round(rounds_wall, 3), "sequential_wall_s": round(seq_total, 3),
                 "sequential_runs": seq, "ratio_rounds_over_sequential": rounds_wall / seq_total},
    }


def _runs(values: list[float]) -> str:
    return " ".join(f"{v:.3g}" for v in values)


def format_result(res: dict[str, Any]) -> str:
    bw, wall, healthy = res["busbw"], res["wall"], res["healthy"]
    lines = [f"busbw node1<->node2 (gloo, GB = 1e9, median of {bw['repeat']} interleaved runs; target ratio "
             "0.90..1.10):",
             "  size     preflight   plain torch   ratio   (preflight runs | plain runs)"]
    for size, row in bw["per_size"].items():
        lines.append(f"  {int(size) >> 20:>3} MiB  {row['preflight_gbps']:8.3g}   {row['plain_gbps']:10.3g}   "
                     f"{row['ratio']:5.2f}   ({_runs(row['preflight_runs_gbps'])} | {_runs(row['plain_runs_gbps'])})")
    lines += [
        f"wall time, {wall['hosts']} hosts, {wall['pairs']} pairs:",
        f"  preflight pairwise rounds   {wall['rounds_wall_s']:.2f} s",
        f"  one preflight run per pair  {wall['sequential_wall_s']:.2f} s (sum)",
        f"  ratio rounds/sequential     {wall['ratio_rounds_over_sequential']:.2f}",
        f"healthy cluster, {healthy['runs']} consecutive runs on {healthy['hosts']} hosts, fraction "
        f"{healthy['fraction']}: {healthy['false_positives']} false positive(s) (fail or error), "
        f"{healthy['slow_once_warnings']} 'slow once, normal alone' warning(s)",
    ]
    for i, run in enumerate(healthy["per_run"], 1):
        lines.append(f"  run {i}: {run['wall_s']:.1f} s, {run['busbw_findings']} busbw findings, "
                     f"{len(run['flagged'])} fail/error, {len(run['warned'])} warn"
                     + (f": {'; '.join(run['flagged'])}" if run["flagged"] else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hosts", type=int, default=8, help="cluster size for the wall-time figure (2..244)")
    parser.add_argument("--sizes-mib", default="4,16", help="comma-separated all_reduce sizes in MiB")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved busbw runs of each side (median)")
    parser.add_argument("--healthy-runs", type=int, default=10, help="consecutive runs on all hosts (false positives)")
    args = parser.parse_args(argv)
    try:
        sizes_mib = [float(s) for s in args.sizes_mib.split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes-mib must be comma-separated numbers")
    if not sizes_mib or any(m <= 0 for m in sizes_mib) or not 2 <= args.hosts <= 244 or args.repeat < 1:
        parser.error("sizes must be > 0, --hosts in 2..244 and --repeat >= 1")
    sizes_mib = [int(m) if m.is_integer() else m for m in sizes_mib]
    problem = cluster_support_problem()
    if problem:
        print(f"cannot build the bench cluster: {problem}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    try:
        res = bench(args.hosts, sizes_mib, args.repeat, max(0, args.healthy_runs))
    except KeyboardInterrupt:
        print("interrupted; cluster torn down", file=sys.stderr)
        return 130
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
        print(f"bench failed (cluster torn down): {exc}", file=sys.stderr)
        return 1
    print(format_result(res))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    doc = {"machine": {"nproc": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
           "note": "every node shares this machine's CPUs: the pairs of a round contend for them", **res}
    RESULTS.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
