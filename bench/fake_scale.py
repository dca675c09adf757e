"""The controller's own cost at 1k-50k hosts, without SSH: ``python bench/scale.py --fake``.

A fake transport answers every host's gather script at once with the outputs this machine gave to the
same probes (run once, for real, through ``sh``: real formats, nothing made up), framed with the script's
own nonce, so the real engine, parsers, cross-host evaluation and report writers (report.json and
report.html) do all their work. Each size runs in a child process; it reports the controller CPU seconds
and the peak-RSS growth of the run (inventory load to written report), and both per host.

The fake nodes' somaxconn and tcp_max_syn_backlog are raised to ``TUNED_BACKLOG`` (else the thresholds,
which scale with the rank count, fail from 2,048 hosts on and the sizes would judge different findings).
``net.reachability`` is left out: its listener and connectors are real sockets on real nodes, which a
fake host has not; every other default check runs.

    python bench/scale.py --fake [--sizes 1000,10000,50000] [--repeat 3]
"""

from __future__ import annotations

import json
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

RESULTS = REPO / "bench" / "results" / "scale_fake.json"
SKIPPED = ("net.reachability",)
# net.core.somaxconn and net.ipv4.tcp_max_syn_backlog of the fake nodes: above 2 x 50,000 ranks, so the
# sysctl findings are the same (pass) at every size and the sizes compare like for like.
TUNED_BACKLOG = 262144


class Canned:
    """Probe key -> (stdout, stderr, exit status), from one real run of the probes here."""

    def __init__(self, outputs: dict[str, tuple[str, str, int]]) -> None:
        self.outputs = outputs

    def answer(self, script: str) -> tuple[bytes, bytes]:
        """stdout and stderr of ``script`` as the node's shell would frame them (see preflight.batch)."""
        first = script.split("\n", 1)[0]  # PF_M='@@PF-<nonce>'
        marker = shlex.split(first.split("=", 1)[1])[0]
        sent = re.search(r"^PF_SENT=(\S+)$", script, re.MULTILINE)
        out, err = [], []
        for line in script.splitlines():
            if not line.startswith("pf_run "):
                continue
            key = shlex.split(line.split(" ", 2)[1])[0]  # the command after it may span lines
            stdout, stderr, status = self.outputs.get(key, ("", "", 0))
            if key == "os/clock" and sent:  # the clock probe echoes the controller's send time: a live answer
                stdout = f"ref {sent.group(1)}\n{time.time():.9f}\n"
            out.append(f"{marker} BEGIN {key}\n{stdout}\n{marker} END {key} {status}\n")
            err.append(f"{marker} BEGIN {key}\n{stderr}\n{marker} END {key}\n")
        return "".join(out).encode(), "".join(err).encode()


class FakeTransport:
    """A host that answers at once with the canned outputs."""

    def __init__(self, canned: Canned) -> None:
        self.canned = canned

    def connect(self) -> None:
        return None

    def run_script(self, script: str, timeout: float, on_stdout: Any = None) -> Any:
        from preflight.transport.base import Execution

        stdout, stderr = self.canned.answer(script)
        if on_stdout is not None:
            on_stdout(stdout)
        return Execution(stdout, stderr, 0, False, 0.0)

    def close(self) -> None:
        return None


def canned_outputs(checks: Any, inventory: Any) -> Canned:
    """Run the first host's probes here for real (LocalTransport) and keep what they printed."""
    from preflight.batch import build_script, new_nonce, parse_output
    from preflight.engine import RunOptions
    from preflight.engine.planning import plan
    from preflight.transport.local import LocalTransport

    planned = [p for _, p in plan(checks, inventory.hosts[0], inventory.cluster, RunOptions())]
    nonce = new_nonce()
    execution = LocalTransport().run_script(build_script(planned, nonce), 120.0)
    parsed = parse_output(execution.stdout, [p.key for p in planned], nonce, execution.stderr)
    canned = {key: (out.stdout, out.stderr, out.exit_status if out.exit_status is not None else 1)
              for key, out in parsed.items()}
    if "sysctl/read" in canned:  # tuned for the largest job benched: every size judges the same healthy values
        stdout, stderr, status = canned["sysctl/read"]
        lines = stdout.split("\n")
        canned["sysctl/read"] = ("\n".join([str(TUNED_BACKLOG), str(TUNED_BACKLOG), *lines[2:]]), stderr, status)
    return Canned(canned)


def one(size: int) -> dict[str, Any]:
    """One run at ``size`` hosts in this process: controller CPU and peak-RSS growth."""
    from preflight import app
    from preflight.engine import Engine, RunOptions

    with tempfile.TemporaryDirectory(prefix="pffake-") as tmp:
        hosts = Path(tmp) / "hosts.yaml"
        hosts.write_text(f"cluster:\n  accelerator: cpu\nhosts:\n  - name: node[1-{size}]\n")
        single = hosts.with_name("one.yaml")
        single.write_text("cluster:\n  accelerator: cpu\nhosts:\n  - name: node1\n")
        probe_inventory = app.load_cluster(single, accelerator="cpu")
        selection = app.select_checks((), SKIPPED)
        canned = canned_outputs(selection.checks, probe_inventory)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpu_before, wall_before = time.process_time(), time.perf_counter()
        inventory = app.load_cluster(hosts, accelerator="cpu")
        engine = Engine(inventory, selection.checks, RunOptions(parallel=64, keep_outputs=False),  # as `run`
                        transport_factory=lambda host: FakeTransport(canned))
        report = engine.run()
        app.save(report.redacted(), Path(tmp) / "report")
        cpu = time.process_time() - cpu_before
        wall = time.perf_counter() - wall_before
        rss_growth_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024.0
        statuses: dict[str, int] = {}
        for finding in report.findings:
            statuses[finding.status.value] = statuses.get(finding.status.value, 0) + 1
    return {"hosts": size, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "cpu_ms_per_host": round(1000 * cpu / size, 4), "rss_growth_mib": round(rss_growth_mib, 1),
            "kib_per_host": round(1024 * rss_growth_mib / size, 3), "findings": statuses}


def _run_one(size: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--one", str(size)], capture_output=True, text=True,
                          check=False, env={"PYTHONPATH": str(REPO), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    if done.returncode != 0:
        raise RuntimeError(f"size {size}: failed\n{done.stderr[-2000:]}")
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return row


def main(sizes: list[int], repeat: int = 3) -> int:
    """Every size ``repeat`` times, the sizes interleaved (one round after another: a slow spell of this shared
    box hits every size alike), each run a fresh process; the row of a size is its median-CPU run."""
    runs: dict[int, list[dict[str, Any]]] = {size: [] for size in sizes}
    for round_no in range(repeat):
        for size in sizes:
            try:
                runs[size].append(_run_one(size))
            except RuntimeError as exc:
                print(exc, file=sys.stderr)
                return 1
            print(f"round {round_no + 1}, size {size}: {runs[size][-1]}", file=sys.stderr)
    rows = []
    for size in sizes:
        ordered = sorted(runs[size], key=lambda r: float(r["cpu_ms_per_host"]))
        rows.append({**ordered[len(ordered) // 2], "runs_cpu_ms_per_host": [r["cpu_ms_per_host"] for r in runs[size]],
                     "runs_kib_per_host": [r["kib_per_host"] for r in runs[size]]})
    base = rows[0]
    print(f"median of {repeat} run(s) per size")
    print("hosts   | controller CPU s | ms/host | vs first | peak RSS growth MiB | KiB/host | vs first | wall s")
    for row in rows:
        print(f"{row['hosts']:>7} | {row['cpu_s']:>16.2f} | {row['cpu_ms_per_host']:>7.3f} | "
              f"{row['cpu_ms_per_host'] / base['cpu_ms_per_host']:>8.2f} | {row['rss_growth_mib']:>19.1f} | "
              f"{row['kib_per_host']:>8.2f} | {row['kib_per_host'] / max(base['kib_per_host'], 1e-9):>8.2f} | "
              f"{row['wall_s']:>6.1f}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"what": __doc__.splitlines()[0] if __doc__ else "", "skipped": SKIPPED,
                                   "python": sys.version.split()[0], "repeat": repeat, "rows": rows}, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(one(int(sys.argv[2]))))
        sys.exit(0)
    sys.exit(main([int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "1000,10000,50000").split(",")],
                  int(sys.argv[2]) if len(sys.argv) > 2 else 3))
