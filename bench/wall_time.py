"""Wall time of ``preflight run`` next to pdsh, a parallel OpenSSH loop and Ansible ad-hoc.

For each cluster size one network-namespace cluster (``tests/netns_cluster.py``, name "pfbench",
subnet 3) is brought up, every tool is run ``--repeat`` times on it (one tool at a time, never
concurrently, rounds interleaved), and the medians are printed and written to
``bench/results/wall_time.json``.  A run only counts if it exited 0 and produced one expected
output per host; otherwise the tool shows as FAILED.  Needs root.

    python bench/wall_time.py [--sizes 1,4,16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from netns_cluster import NetnsCluster, cluster_support_problem  # noqa: E402

CLUSTER_NAME = "pfbench"
CLUSTER_SUBNET = 3
SYSCTL_KEY = "net.core.somaxconn"
EXPECTED_VALUE = "65535"  # what netns_cluster sets in every node namespace
RUN_TIMEOUT_S = 300.0
RESULTS = REPO / "bench" / "results" / "wall_time.json"
TOOLS = ("preflight", "pdsh", "ssh-loop", "ansible")


@dataclass
class ToolResult:
    """Timings of one tool at one size; ``error`` set (and no median) once any run failed."""

    available: bool = True
    runs: list[float] = field(default_factory=list)
    error: str | None = None

    @property
    def median(self) -> float | None:
        if not self.available or self.error is not None or not self.runs:
            return None
        return statistics.median(self.runs)

    def cell(self) -> str:
        if not self.available:
            return "not available"
        if self.error is not None:
            return "FAILED"
        median = self.median
        return "-" if median is None else f"{median:.3f}"

    def to_dict(self) -> dict[str, Any]:
        return {"available": self.available, "ok": self.median is not None, "median_s": self.median,
                "runs_s": [round(r, 4) for r in self.runs], "error": self.error}


# A check returns None when the run succeeded, else a reason.
Check = Callable[[subprocess.CompletedProcess[str]], str | None]


@dataclass
class Tool:
    """How to run one tool once on the cluster and how to tell that the run succeeded."""

    name: str
    argv: list[str]
    check: Check
    env: dict[str, str] = field(default_factory=dict)


def _sigterm_to_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _ssh_options(cluster: NetnsCluster) -> list[str]:
    """OpenSSH options shared by pdsh and the ssh loop: our key, our known_hosts, strict checking."""
    return ["-F", "/dev/null", "-i", str(cluster.client_key),
            "-o", f"UserKnownHostsFile={cluster.known_hosts}", "-o", "StrictHostKeyChecking=yes",
            "-o", "BatchMode=yes"]


def _tail(text: str, limit: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _failure(proc: subprocess.CompletedProcess[str], what: str) -> str:
    return f"{what}; rc={proc.returncode}; stderr: {_tail(proc.stderr)!r}; stdout: {_tail(proc.stdout)!r}"


def _check_preflight(size: int) -> Check:
    def check(proc: subprocess.CompletedProcess[str]) -> str | None:
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            return _failure(proc, "stdout is not JSON")
        hosts = report.get("hosts", [])
        reachable = sum(1 for h in hosts if h.get("reachable"))
        bad = [f"{f.get('host')}: {f.get('check')} {f.get('status')}: {f.get('message')}"
               for f in report.get("findings", []) if f.get("status") in ("fail", "error")]
        bad += [f"{h.get('name')}: {h.get('error')} ({h.get('seconds')}s)" for h in hosts if h.get("error")]
        if proc.returncode != 0 or len(hosts) != size or reachable != size or not report.get("complete"):
            return (f"rc={proc.returncode}; {reachable}/{len(hosts)} hosts reachable of {size}; "
                    f"complete={report.get('complete')}; {_tail('; '.join(bad), 600)}")
        return None
    return check


def _check_lines(size: int, parse: Callable[[str], list[str]]) -> Check:
    """Exit 0 and exactly ``size`` outputs, each the expected sysctl value."""
    def check(proc: subprocess.CompletedProcess[str]) -> str | None:
        values = parse(proc.stdout)
        if proc.returncode != 0:
            return _failure(proc, "non-zero exit")
        if len(values) != size or any(v != EXPECTED_VALUE for v in values):
            return _failure(proc, f"expected {size} x {EXPECTED_VALUE}, got {values!r}")
        return None
    return check


def _pdsh_values(stdout: str) -> list[str]:
    return [line.partition(": ")[2].strip() for line in stdout.splitlines() if ": " in line]


def _plain_values(stdout: str) -> list[str]:
    return [line.strip() for line in stdout.splitlines() if line.strip()]


def _ansible_values(stdout: str) -> list[str]:
    """Value lines following ``host | CHANGED | rc=0 >>`` headers."""
    values, lines = [], stdout.splitlines()
    for i, line in enumerate(lines):
        if " | " in line and " >>" in line and "rc=0" in line and i + 1 < len(lines):
            values.append(lines[i + 1].strip())
    return values


def build_tools(cluster: NetnsCluster, work: Path, ansible_ok: bool) -> list[Tool | None]:
    """The four tools in TOOLS order (None where the tool is not available)."""
    size = len(cluster.nodes)
    addresses = [n.address for n in cluster.nodes]
    hosts_yaml = cluster.write_hosts_yaml(work / "hosts.yaml")
    ssh_opts = _ssh_options(cluster)

    preflight = shutil.which("preflight") or "preflight"
    tools: list[Tool | None] = [Tool(
        "preflight",
        [preflight, "run", "--hosts", str(hosts_yaml), "--json", "--report-dir", str(work / "reports")],
        _check_preflight(size))]

    pdsh = shutil.which("pdsh")
    tools.append(None if pdsh is None else Tool(
        "pdsh",
        [pdsh, "-S", "-R", "ssh", "-l", "root", "-f", str(max(size, 1)), "-w", ",".join(addresses),
         "sysctl", "-n", SYSCTL_KEY],
        _check_lines(size, _pdsh_values),
        # -S: exit with the largest remote exit code; %u/%h are pdsh's user/host placeholders.
        {"PDSH_SSH_ARGS": shlex.join(["-x", "-a", *ssh_opts]) + " -l%u %h"}))

    ssh_cmd = shlex.join(["ssh", *ssh_opts])
    loop = (f"rc=0; pids=(); for a in {' '.join(addresses)}; do "
            f"{ssh_cmd} root@$a sysctl -n {SYSCTL_KEY} & pids+=($!); done; "
            'for p in "${pids[@]}"; do wait "$p" || rc=1; done; exit $rc')
    tools.append(Tool("ssh-loop", ["bash", "-c", loop], _check_lines(size, _plain_values)))

    if not ansible_ok:
        tools.append(None)
    else:
        inventory = work / "inventory.ini"
        common = f"-o UserKnownHostsFile={cluster.known_hosts} -o StrictHostKeyChecking=yes"
        inventory.write_text(
            "[all]\n" + "".join(f"{a}\n" for a in addresses)
            + "[all:vars]\nansible_user=root\n"
            + f"ansible_ssh_private_key_file={cluster.client_key}\n"
            + f"ansible_ssh_common_args={common}\n"
            + f"ansible_python_interpreter={sys.executable}\n")
        tools.append(Tool(
            "ansible",
            [shutil.which("ansible") or "ansible", "all", "-i", str(inventory), "-m", "command",
             "-a", f"sysctl -n {SYSCTL_KEY}", "-f", str(max(size, 1))],
            _check_lines(size, _ansible_values),
            {"ANSIBLE_HOST_KEY_CHECKING": "True",
             # No ControlPersist master: every run opens fresh connections, like the other tools.
             "ANSIBLE_SSH_ARGS": "-o ControlMaster=no -o ControlPath=none",
             "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp"),
             "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0"}))
    return tools


def run_once(tool: Tool) -> tuple[float, str | None]:
    """Run the tool once; return (wall seconds, failure reason or None)."""
    env = {**os.environ, **tool.env}
    start = time.perf_counter()
    try:
        # Own process group, so that a timeout or Ctrl-C also ends the tool's forks and ssh children.
        popen = subprocess.Popen(tool.argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
    except OSError as exc:
        return time.perf_counter() - start, f"could not start: {exc}"
    try:
        out, err = popen.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill_tree(popen)
        return time.perf_counter() - start, f"timed out after {RUN_TIMEOUT_S:.0f}s"
    except BaseException:
        _kill_tree(popen)
        raise
    elapsed = time.perf_counter() - start
    return elapsed, tool.check(subprocess.CompletedProcess(tool.argv, popen.returncode, out, err))


def _descendants(root: int) -> set[int]:
    """PIDs of every live descendant of ``root`` (from /proc parent links)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _kill_tree(popen: subprocess.Popen[str]) -> None:
    """SIGKILL the tool, its process group and every descendant, then reap it.

    Descendants are killed by PID as well because some tools (Ansible's forks) move their workers
    into process groups of their own; left alive, their ssh clients would hang on the torn-down
    cluster's dead TCP connections.
    """
    for _ in range(2):  # a second pass catches what forked while the first ran
        pids = _descendants(popen.pid)
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    popen.communicate()


def ensure_pdsh() -> bool:
    """pdsh on PATH, installing it with apt-get once if missing."""
    if shutil.which("pdsh"):
        return True
    print("pdsh missing: apt-get install -y pdsh", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "pdsh"], check=False, capture_output=True)
    return shutil.which("pdsh") is not None


def ensure_ansible() -> bool:
    """ansible on PATH, trying `pip install ansible-core` once if missing."""
    if shutil.which("ansible"):
        return True
    print("ansible missing: pip install ansible-core", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "ansible-core"], check=False,
                   capture_output=True)
    return shutil.which("ansible") is not None


def bench_size(size: int, repeat: int, pdsh_ok: bool, ansible_ok: bool) -> dict[str, ToolResult]:
    """Bring one cluster of ``size`` nodes up, time every tool on it, always tear it down."""
    results = {name: ToolResult() for name in TOOLS}
    with tempfile.TemporaryDirectory(prefix=f"pfbench-{size}-") as tmp:
        work = Path(tmp)
        cluster = NetnsCluster(size, name=CLUSTER_NAME, subnet=CLUSTER_SUBNET, workdir=work / "cluster")
        try:
            cluster.up()
            tools = build_tools(cluster, work, ansible_ok)
            if not pdsh_ok:
                tools[1] = None
            for name, tool in zip(TOOLS, tools, strict=True):
                if tool is None:
                    results[name].available = False
            for round_no in range(repeat):
                for name, tool in zip(TOOLS, tools, strict=True):
                    result = results[name]
                    if tool is None or result.error is not None:
                        continue
                    elapsed, error = run_once(tool)
                    result.runs.append(elapsed)
                    if error is not None:
                        result.error = f"run {round_no + 1}: {error}"
                        print(f"  size {size}: {name} FAILED: {result.error}", file=sys.stderr)
        finally:
            cluster.down()
    return results


def machine_info() -> dict[str, Any]:
    def version(argv: list[str]) -> str:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return "n/a"
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        return lines[0] if lines else "n/a"

    return {"nproc": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release(),
            "ssh": version(["ssh", "-V"]), "pdsh": version(["pdsh", "-V"]),
            "ansible": version(["ansible", "--version"])}


def format_table(machine: dict[str, Any], repeat: int, rows: dict[int, dict[str, ToolResult]]) -> str:
    header = (f"machine: nproc={machine['nproc']}, python {machine['python']}, kernel {machine['kernel']}; "
              f"median of {repeat} run(s), tools run one at a time.\n"
              "All sshds share this machine's CPUs with the client: compare ratios, not absolute times.")
    columns = ["size", "preflight s", "pdsh s", "ssh-loop s", "ansible s", "preflight/pdsh"]
    body = []
    for size, results in rows.items():
        pf, pd = results["preflight"].median, results["pdsh"].median
        ratio = f"{pf / pd:.2f}" if pf is not None and pd else "n/a"
        body.append([str(size), *(results[t].cell() for t in TOOLS), ratio])
    widths = [max(len(c), *(len(r[i]) for r in body)) for i, c in enumerate(columns)]
    lines = [" | ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)),
             "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return header + "\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1,4,16", help="comma-separated cluster sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool and size (median reported)")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes must be comma-separated integers")
    if not sizes or any(s < 1 for s in sizes) or args.repeat < 1:
        parser.error("sizes and --repeat must be >= 1")
    problem = cluster_support_problem()
    if problem:
        print(f"cannot build the bench cluster: {problem}", file=sys.stderr)
        return 1

    signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    pdsh_ok, ansible_ok = ensure_pdsh(), ensure_ansible()
    machine = machine_info()
    rows: dict[int, dict[str, ToolResult]] = {}
    try:
        for size in sizes:
            print(f"size {size}: cluster up, {args.repeat} round(s)...", file=sys.stderr)
            rows[size] = bench_size(size, args.repeat, pdsh_ok, ansible_ok)
    except KeyboardInterrupt:
        print("interrupted; cluster torn down", file=sys.stderr)
        return 130

    print(format_table(machine, args.repeat, rows))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    doc = {"machine": machine, "repeat": args.repeat, "sizes": sizes,
           "note": "all sshds share this machine's CPUs; compare ratios, not absolute times",
           "results": {str(size): {t: r.to_dict() for t, r in res.items()} for size, res in rows.items()}}
    RESULTS.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}", file=sys.stderr)
    failed = any(r.error is not None for res in rows.values() for r in res.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
