"""Scale: wall time and peak controller memory of ``preflight run`` (default checks) vs pdsh, 1..64 hosts.

For each size one namespace cluster (name "pfscale", subnet 51) comes up; ``preflight run`` with the
default checks (incl. the active TCP reachability phase) and ``pdsh`` running ONE command
(``sysctl -n net.core.somaxconn``) are timed on it, alternating, ``--repeat`` times. Peak memory is
the ``ru_maxrss`` of the tool's process tree (``os.wait4``: the largest single process, i.e. the
preflight controller; for pdsh its largest process). A linear fit over the sizes models 1,000 and
10,000 hosts. Prints a table and writes ``bench/results/scale.json``. Needs root.

    python bench/scale.py [--sizes 1,4,16,64] [--repeat 1]
    python bench/scale.py --fake [--sizes 1000,10000,50000] [--repeat 3]  # no SSH: see bench/fake_scale.py
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
from wall_time import (  # noqa: E402
    MAX_SIZE,
    RUN_TIMEOUT_S,
    Tool,
    _check_preflight,
    _read,
    _render,
    _signal_tree,
    build_tools,
    ensure_pdsh,
    machine_info,
)

CLUSTER_NAME = "pfscale"
CLUSTER_SUBNET = 51
RESULTS = REPO / "bench" / "results" / "scale.json"
MODEL_SIZES = (1_000, 10_000)
PARALLEL = 64  # preflight's default --parallel: hosts gathered at once


def measure(tool: Tool) -> dict[str, Any]:
    """One run: wall seconds, controller CPU seconds, peak RSS MiB of the tree, error (or None)."""
    env = {**os.environ, **tool.env}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        popen = subprocess.Popen(tool.argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 start_new_session=True)
        timer = threading.Timer(RUN_TIMEOUT_S, _signal_tree, args=(popen.pid,))
        timer.daemon = True
        timer.start()
        _, status, usage = os.wait4(popen.pid, 0)
        wall = time.perf_counter() - start
        timer.cancel()
        popen.returncode = os.waitstatus_to_exitcode(status)
        error, _ = tool.check(subprocess.CompletedProcess(tool.argv, popen.returncode, _read(out), _read(err)))
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_mib": usage.ru_maxrss / 1024.0,
            "error": error}


def bench_size(size: int, repeat: int, pdsh_ok: bool) -> dict[str, list[dict[str, Any]]]:
    """Bring one cluster up, time preflight (default checks) and pdsh on it, always tear it down."""
    runs: dict[str, list[dict[str, Any]]] = {"preflight": [], "pdsh": []}
    with tempfile.TemporaryDirectory(prefix=f"pfscale-{size}-") as tmp:
        work = Path(tmp)
        cluster = NetnsCluster(size, name=CLUSTER_NAME, subnet=CLUSTER_SUBNET, workdir=work / "cluster")
        try:
            up = time.perf_counter()
            cluster.up()
            print(f"size {size}: cluster up in {time.perf_counter() - up:.1f} s", file=sys.stderr)
            tools = build_tools(cluster, work, pdsh_ok, False)
            all_checks = tools["preflight-all"]
            assert all_checks is not None
            # `python -m preflight` from this checkout (an installed console script may point elsewhere).
            preflight = Tool("preflight", [sys.executable, "-m", "preflight", *all_checks.argv[1:]],
                             _check_preflight(size), {"PYTHONPATH": str(REPO)})
            for _ in range(repeat):
                runs["preflight"].append(measure(preflight))
                if tools["pdsh"] is not None:
                    runs["pdsh"].append(measure(tools["pdsh"]))
        finally:
            cluster.down()
    return runs


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    good = [r[key] for r in runs if r["error"] is None]
    return statistics.median(good) if good and len(good) == len(runs) else None


def fit(points: list[tuple[int, float]]) -> tuple[float, float] | None:
    """Least-squares line ``a + b * hosts`` through (hosts, value) points; None with < 2 sizes.

    >>> fit([(1, 1.0), (3, 2.0)])
    (0.5, 0.5)
    """
    if len({x for x, _ in points}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - b * mx, b


def model(summary: dict[int, dict[str, float | None]]) -> dict[str, Any]:
    """Per-host cost from the measured sizes, extrapolated to MODEL_SIZES (one controller, SSH)."""
    out: dict[str, Any] = {}
    for key in ("preflight_wall_s", "preflight_cpu_s", "preflight_maxrss_mib", "pdsh_wall_s"):
        points = [(size, v) for size, row in summary.items() if (v := row.get(key)) is not None]
        line = fit(points)
        if line is None:
            continue
        a, b = line
        out[key] = {"fixed": round(a, 4), "per_host": round(b, 6),
                    **{str(n): round(a + b * n, 2) for n in MODEL_SIZES}}
    return out


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if "--fake" in args_in:  # no SSH: the controller's own cost at 1k-50k hosts (bench/fake_scale.py)
        import fake_scale

        fake = argparse.ArgumentParser(prog="scale.py --fake", description=fake_scale.__doc__.splitlines()[0])
        fake.add_argument("--fake", action="store_true")
        fake.add_argument("--sizes", default="1000,10000,50000", help="comma-separated host counts")
        fake.add_argument("--repeat", type=int, default=3, help="runs per size, interleaved (median reported)")
        fake_args = fake.parse_args(args_in)
        return fake_scale.main([int(s) for s in fake_args.sizes.split(",")], max(1, fake_args.repeat))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1,4,16,64", help="comma-separated cluster sizes (1..244)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool and size (median reported)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not sizes or any(not 1 <= s <= MAX_SIZE for s in sizes) or args.repeat < 1:
        parser.error(f"sizes must be in 1..{MAX_SIZE} and --repeat >= 1")
    problem = cluster_support_problem()
    if problem:
        print(f"cannot build the bench cluster: {problem}", file=sys.stderr)
        return 1
    pdsh_ok = ensure_pdsh()
    raw: dict[int, dict[str, list[dict[str, Any]]]] = {}
    summary: dict[int, dict[str, float | None]] = {}
    for size in sizes:
        raw[size] = bench_size(size, args.repeat, pdsh_ok)
        summary[size] = {f"{tool}_{key}": _median(runs, key) for tool, runs in raw[size].items()
                         for key in ("wall_s", "cpu_s", "maxrss_mib")}
    fitted = model(summary)

    def cell(value: float | None, digits: int = 2) -> str:
        return "FAILED" if value is None else f"{value:.{digits}f}"

    body = [[str(size), cell(row["preflight_wall_s"]), cell(row["pdsh_wall_s"]),
             cell(row["preflight_maxrss_mib"], 1), cell(row["pdsh_maxrss_mib"], 1), cell(row["preflight_cpu_s"])]
            for size, row in summary.items()]
    body += [[f"{n} (model)", cell(fitted.get("preflight_wall_s", {}).get(str(n))),
              cell(fitted.get("pdsh_wall_s", {}).get(str(n))),
              cell(fitted.get("preflight_maxrss_mib", {}).get(str(n)), 1), "-",
              cell(fitted.get("preflight_cpu_s", {}).get(str(n)))] for n in MODEL_SIZES]
    machine = machine_info()
    print(f"machine: nproc={machine['nproc']}, python {machine['python']}; median of {args.repeat} run(s); "
          "every sshd shares this machine's CPUs\n")
    print(_render(["hosts", "preflight s", "pdsh 1 cmd s", "preflight MiB", "pdsh MiB", "preflight CPU s"], body))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    doc = {"machine": machine, "repeat": args.repeat, "sizes": sizes,
           "preflight": "preflight run --json (default checks, incl. net.reachability)",
           "pdsh": "pdsh -S -R ssh -f <size> sysctl -n net.core.somaxconn",
           "summary": {str(k): v for k, v in summary.items()}, "model": fitted,
           "runs": {str(k): v for k, v in raw.items()}}
    RESULTS.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS.relative_to(REPO)}", file=sys.stderr)
    return 0 if all(v is not None for row in summary.values() for v in row.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
