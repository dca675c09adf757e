"""Gather through Slurm: one ``srun`` runs every node's script at once, inside the current allocation.

Thousands of nodes cost one srun (Slurm fans out over its own tree of slurmds) instead of
thousands of SSH sessions. Every host of the engine gets a ``SlurmTransport``; their
``run_script`` calls meet in one ``SlurmBatch``, which builds one payload, runs::

    srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=<nodes> --label --input=all sh -s

and splits stdout back per node: the payload first prints ``@@PF-NODE <SLURMD_NODENAME>`` and
``--label`` prefixes every line with the task number. A node that printed nothing (down, not in the
allocation, srun failed) gets a ``TransportError`` of kind ``slurm``: an error finding for that host.

>>> split_labelled(b"0: @@PF-NODE n1\\n1: @@PF-NODE n2\\n0: a\\n 1: b\\n")
{'n1': b'a\\n', 'n2': b'b\\n'}
"""

from __future__ import annotations

import math
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from ClusterShell.NodeSet import NodeSet

from preflight.inventory import Host
from preflight.transport.base import Execution, OutputWatcher, TransportError

HEADER = "@@PF-NODE"
_LABEL = re.compile(rb"^\s*(\d+): ?(.*)$", re.DOTALL)
_NONCE_LINE = re.compile(r"^PF_M=(\S+)\n")
# How long the first caller waits for the other hosts' scripts before srun starts without them.
GATHER_WAIT_S = 10.0


def choose(transport: str, hosts_spec: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to gather over srun: ``slurm``; ``ssh``; ``auto`` = ``--hosts slurm`` inside an allocation.

    >>> choose("auto", "slurm", {}), choose("slurm", "hosts.yaml", {})
    (False, True)
    """
    if transport not in ("auto", "ssh", "slurm"):
        raise ValueError(f"--transport must be auto, ssh or slurm, not {transport!r}")
    if transport == "auto":
        return hosts_spec == "slurm" and inside_allocation(environ)
    return transport == "slurm"


def inside_allocation(environ: Mapping[str, str] | None = None) -> bool:
    """Whether we run inside a Slurm allocation (salloc, sbatch, srun) with srun on PATH."""
    env = os.environ if environ is None else environ
    return bool(env.get("SLURM_JOB_ID")) and _which("srun") is not None


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)


def build_payload(scripts: Mapping[str, str]) -> str:
    """One sh script for every node: pick this node's marker (and its script when they differ).

    The engine's scripts differ only in their first line (``PF_M=<nonce>``), so the payload
    carries each distinct body once and a ``case`` table of node -> marker.

    >>> p = build_payload({"n1": "PF_M=a\\necho hi\\n", "n2": "PF_M=b\\necho hi\\n"})
    >>> p.count("echo hi"), "n1) PF_M=a; pf_g=0;;" in p
    (1, True)
    """
    bodies: dict[str, int] = {}
    table: list[str] = []
    for node, script in scripts.items():
        match = _NONCE_LINE.match(script)
        marker, body = (match.group(1), script[match.end():]) if match else ("''", script)
        group = bodies.setdefault(body, len(bodies))
        table.append(f"  {shlex.quote(node)}) PF_M={marker}; pf_g={group};;")
    lines = [
        'pf_node="${SLURMD_NODENAME:-$(hostname)}"',
        f"printf '%s %s\\n' {HEADER} \"$pf_node\"",
        f"printf '%s %s\\n' {HEADER} \"$pf_node\" >&2",
        'case "$pf_node" in',
        *table,
        "  *) echo \"preflight: node $pf_node is not in the host list\" >&2; exit 99;;",
        "esac",
    ]
    for body, group in bodies.items():
        lines += [f'if [ "$pf_g" = {group} ]; then', body.rstrip("\n") or ":", "fi"]
    return "\n".join(lines) + "\n"


def split_labelled(stdout: bytes) -> dict[str, bytes]:
    """``srun --label`` output -> node -> its own bytes (the header line names the node of each task)."""
    by_task: dict[bytes, bytearray] = {}
    nodes: dict[bytes, str] = {}
    header = HEADER.encode() + b" "
    for line in stdout.splitlines(keepends=True):
        match = _LABEL.match(line)
        if not match:
            continue
        task, rest = match.group(1), match.group(2)
        if task not in nodes and rest.startswith(header):
            nodes[task] = rest[len(header):].strip().decode("utf-8", "replace")
            continue
        by_task.setdefault(task, bytearray()).extend(rest if rest.endswith(b"\n") else rest + b"\n")
    return {node: bytes(by_task.get(task, b"")) for task, node in nodes.items()}


def srun_argv(nodes: Sequence[str], timeout: float, srun: str = "srun") -> list[str]:
    """The srun command line for ``nodes``.

    >>> srun_argv(["n1", "n2"], 30)[:6]
    ['srun', '--nodes=2', '--ntasks=2', '--ntasks-per-node=1', '--nodelist=n[1-2]', '--label']
    """
    minutes = max(1, math.ceil(timeout / 60) + 1)
    return [srun, f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}", "--ntasks-per-node=1",
            f"--nodelist={NodeSet.fromlist(list(nodes))}", "--label", "--input=all", "--kill-on-bad-exit=0",
            "--overlap", f"--time={minutes}", "--job-name=preflight", "sh", "-s"]


class SlurmBatch:
    """Collects every host's script, runs one srun, hands each host its part."""

    def __init__(self, hosts: Sequence[Host], srun: str = "srun", wait: float = GATHER_WAIT_S,
                 environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
        self.allocation = NodeSet(nodelist) if nodelist else None  # srun reaches only these
        self.expected = [h.name for h in hosts if self.allows(h.name)]
        self.srun = srun
        self.wait = wait
        self._lock = threading.Condition()
        self._scripts: dict[str, str] = {}
        self._first: float | None = None
        self._started = False
        self._done = threading.Event()
        self._results: dict[str, bytes] = {}
        self._errors: dict[str, bytes] = {}
        self._stderr = b""
        self._status: int | None = None
        self._timed_out = False
        self._seconds = 0.0
        self._proc: subprocess.Popen[bytes] | None = None

    def allows(self, host: str) -> bool:
        """Whether ``host`` is in the current allocation (any host when the allocation is unknown)."""
        return self.allocation is None or host in self.allocation

    def submit(self, host: str, script: str, timeout: float) -> Execution:
        """Register ``host``'s script; the caller that completes the set (or waits longest) runs srun."""
        with self._lock:
            if self._started:
                raise TransportError("slurm", "the srun batch already ran (one gather per run)")
            self._scripts[host] = script
            self._first = self._first or time.monotonic()
            self._lock.notify_all()
            while not self._started and len(self._scripts) < len(self.expected):
                left = self._first + self.wait - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            leader = not self._started
            self._started = True
        if leader:
            self._run(timeout)
        self._done.wait()
        if host not in self._results:
            said = " ".join(self._stderr.decode("utf-8", "replace").split())[-400:]
            raise TransportError("slurm", f"no output from {host} through srun (exit {self._status}): "
                                          f"{said or 'nothing on stderr'}")
        return Execution(self._results[host], self._errors.get(host, b""), 0 if self._status == 0 else self._status,
                         self._timed_out, self._seconds)

    def _run(self, timeout: float) -> None:
        start = time.monotonic()
        try:
            scripts = dict(self._scripts)
            proc = self._proc = subprocess.Popen(
                srun_argv(list(scripts), timeout, self.srun), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True)
            try:
                out, err = proc.communicate(build_payload(scripts).encode(), timeout=timeout)
            except subprocess.TimeoutExpired:
                self._timed_out = True
                proc.send_signal(signal.SIGTERM)  # srun forwards it to the tasks and ends the step
                try:
                    out, err = proc.communicate(timeout=3)
                except subprocess.TimeoutExpired:
                    _kill_group(proc.pid)
                    out, err = proc.communicate()
            self._status = None if self._timed_out else proc.returncode
            # srun's own complaints, without the probes' framed stderr (kept per node in _errors)
            self._stderr = b"".join(line for line in err.splitlines(True) if b"@@PF-" not in line)
            self._results = {node: data for node, data in split_labelled(out).items() if node in scripts}
            self._errors = {node: data for node, data in split_labelled(err).items() if node in scripts}
        except OSError as exc:
            self._stderr = f"cannot run {self.srun}: {exc}".encode()
        finally:
            self._seconds = time.monotonic() - start
            self._done.set()

    def stop(self) -> None:
        """Kill srun if it is still running (Ctrl-C: the engine closes every live transport)."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            _kill_group(proc.pid)


class SlurmTransport:
    """One host's view of the shared batch (the engine's Transport interface)."""

    def __init__(self, host: Host, batch: SlurmBatch) -> None:
        self.host = host
        self.batch = batch

    def connect(self) -> None:
        if not self.batch.allows(self.host.name):
            raise TransportError("slurm", f"{self.host.name} is not in this Slurm allocation "
                                          f"({self.batch.allocation}): srun cannot reach it")

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        execution = self.batch.submit(self.host.name, script, timeout)
        if on_stdout is not None:
            on_stdout(execution.stdout)
        return execution

    def close(self) -> None:
        self.batch.stop()


def slurm_transport_factory(hosts: Sequence[Host], srun: str = "srun") -> tuple[Callable[[Host], SlurmTransport],
                                                                             SlurmBatch]:
    """A factory for Engine(transport_factory=...) and the batch it shares."""
    batch = SlurmBatch(hosts, srun)
    return (lambda host: SlurmTransport(host, batch)), batch


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
