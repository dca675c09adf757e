"""Gather through Slurm: one ``srun`` runs every node's script at once, inside the current allocation.

Thousands of nodes cost one srun (Slurm fans out over its own tree of slurmds) instead of
thousands of SSH sessions. Every host of the engine gets a ``SlurmTransport``; their
``run_script`` calls meet in one ``SlurmBatch``, which builds one payload, runs::

    srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=<nodes> --label --input=all sh -s

and splits stdout back per node as it arrives: the payload first prints ``@@PF-NODE <SLURMD_NODENAME>``
and ``--label`` prefixes every line with the task number. A node that printed nothing (down, not in
the allocation, srun failed) gets a ``TransportError`` of kind ``slurm``: an error finding for that host.

The gather is the first *round*; the active phase announces each later round (``expect``: the hosts
whose listeners, clients or cleanups come next) and gets one srun per round too, so a reachability
test over 1,000 nodes costs three sruns (listeners, clients, cleanup), each its own job step
(``--overlap``: the clients' step runs while the listeners' step still does).

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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ClusterShell.NodeSet import NodeSet

from preflight.inventory import Host
from preflight.transport.base import Execution, OutputWatcher, TransportError

HEADER = "@@PF-NODE"
_LABEL = re.compile(rb"^\s*(\d+): ?(.*)$", re.DOTALL)
_NONCE_LINE = re.compile(r"^PF_M=(\S+)\n")
# How long the first caller waits for the other hosts' scripts before srun starts without them.
GATHER_WAIT_S = 10.0


def choose(transport: str, hosts_spec: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to gather over srun: ``slurm``; not ``ssh``, ``openssh``; ``auto`` = ``--hosts slurm`` inside an
    allocation.

    >>> choose("auto", "slurm", {}), choose("slurm", "hosts.yaml", {})
    (False, True)
    """
    if transport not in ("auto", "ssh", "openssh", "slurm"):
        raise ValueError(f"--transport must be auto, ssh, openssh or slurm, not {transport!r}")
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


class LabelSplitter:
    """``srun --label`` output, line by line -> (node, the line without its label), as it arrives.

    The first line of each task names its node (``@@PF-NODE n1``) and yields nothing; lines of a task
    whose node is not known yet, or without a label (srun's own messages), yield ``(None, b"")``.

    >>> split = LabelSplitter()
    >>> split.feed(b"0: @@PF-NODE n1\\n"), split.feed(b" 0: ready\\n"), split.feed(b"srun: error\\n")
    ((None, b''), ('n1', b'ready\\n'), (None, b''))
    """

    _HEADER = HEADER.encode() + b" "

    def __init__(self) -> None:
        self.nodes: dict[bytes, str] = {}  # task number -> node

    def feed(self, line: bytes) -> tuple[str | None, bytes]:
        match = _LABEL.match(line)
        if not match:
            return None, b""
        task, rest = match.group(1), match.group(2)
        if task not in self.nodes and rest.startswith(self._HEADER):
            self.nodes[task] = rest[len(self._HEADER):].strip().decode("utf-8", "replace")
            return None, b""
        node = self.nodes.get(task)
        return (node, rest if rest.endswith(b"\n") else rest + b"\n") if node else (None, b"")


def split_labelled(stdout: bytes) -> dict[str, bytes]:
    """``srun --label`` output -> node -> its own bytes (the header line names the node of each task)."""
    split = LabelSplitter()
    found: dict[str, bytearray] = {}
    for line in stdout.splitlines(keepends=True):
        node, rest = split.feed(line)
        if node is not None:
            found.setdefault(node, bytearray()).extend(rest)
    return {node: bytes(found.get(node, b"")) for node in split.nodes.values()}


def srun_argv(nodes: Sequence[str], timeout: float, srun: str = "srun") -> list[str]:
    """The srun command line for ``nodes``.

    >>> srun_argv(["n1", "n2"], 30)[:6]
    ['srun', '--nodes=2', '--ntasks=2', '--ntasks-per-node=1', '--nodelist=n[1-2]', '--label']
    """
    minutes = max(1, math.ceil(timeout / 60) + 1)
    return [srun, f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}", "--ntasks-per-node=1",
            f"--nodelist={NodeSet.fromlist(list(nodes))}", "--label", "--input=all", "--kill-on-bad-exit=0",
            "--overlap", f"--time={minutes}", "--job-name=preflight", "sh", "-s"]


@dataclass(eq=False)
class _Round:
    """One srun: the hosts it waits for, their scripts and watchers, and what came back."""

    expected: set[str]
    scripts: dict[str, str] = field(default_factory=dict)
    watchers: dict[str, OutputWatcher] = field(default_factory=dict)
    timeout: float = 0.0
    first: float | None = None  # when the first script arrived
    started: bool = False
    # Set once every expected script is in (or the batch stopped): only this round's submitters wake.
    filled: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    results: dict[str, bytearray] = field(default_factory=dict)
    errors: dict[str, bytes] = field(default_factory=dict)
    stderr: bytes = b""  # srun's own complaints
    status: int | None = None
    timed_out: bool = False
    seconds: float = 0.0


class SlurmBatch:
    """Collects every host's script for a round, runs one srun per round, hands each host its part."""

    def __init__(self, hosts: Sequence[Host], srun: str = "srun", wait: float = GATHER_WAIT_S,
                 environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
        self.allocation = NodeSet(nodelist) if nodelist else None  # srun reaches only these
        self.srun = srun
        self.wait = wait
        self._lock = threading.Lock()
        # The gather is the first round: every host srun can reach.
        self._pending: list[_Round] = [_Round({h.name for h in hosts if self.allows(h.name)})]
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._stopped = False

    def allows(self, host: str) -> bool:
        """Whether ``host`` is in the current allocation (any host when the allocation is unknown)."""
        return self.allocation is None or host in self.allocation

    def expect(self, hosts: Collection[str]) -> None:
        """Announce the next round: its srun starts once each of ``hosts`` has submitted (or ``wait`` passed)."""
        wanted = {h for h in hosts if self.allows(h)}
        if wanted:
            with self._lock:
                self._pending.append(_Round(wanted))

    def submit(self, host: str, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        """Add ``host``'s script to the oldest round that waits for it; the caller that completes the round
        (or waits longest) runs its srun. ``on_stdout`` sees the host's lines as they arrive."""
        with self._lock:
            if self._stopped:
                raise TransportError("slurm", "stopped")
            round_ = next((r for r in self._pending if host in r.expected and host not in r.scripts), None)
            if round_ is None:  # not announced: a round of its own
                round_ = _Round({host})
                self._pending.append(round_)
            round_.scripts[host] = script
            if on_stdout is not None:
                round_.watchers[host] = on_stdout
            round_.timeout = max(round_.timeout, timeout)
            round_.first = round_.first or time.monotonic()
            if len(round_.scripts) >= len(round_.expected):
                round_.filled.set()  # wakes this round's waiters only: O(1) per host, not O(hosts)
        round_.filled.wait(max(0.0, round_.first + self.wait - time.monotonic()))
        with self._lock:
            leader = not round_.started
            if leader:
                round_.started = True
                self._pending.remove(round_)
        if leader:
            self._run(round_)
        round_.done.wait()
        if host not in round_.results:
            said = " ".join(round_.stderr.decode("utf-8", "replace").split())[-400:]
            raise TransportError("slurm", f"no output from {host} through srun (exit {round_.status}): "
                                          f"{said or 'nothing on stderr'}")
        return Execution(bytes(round_.results[host]), round_.errors.get(host, b""),
                         0 if round_.status == 0 else round_.status, round_.timed_out, round_.seconds)

    def _run(self, round_: _Round) -> None:
        start = time.monotonic()
        scripts = dict(round_.scripts)
        try:
            proc = subprocess.Popen(srun_argv(list(scripts), round_.timeout, self.srun), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            round_.stderr = f"cannot run {self.srun}: {exc}".encode()
            round_.seconds = time.monotonic() - start
            round_.done.set()
            return
        with self._lock:
            self._procs.add(proc)
            stopped = self._stopped
        if stopped:
            _kill_group(proc.pid)
        err = bytearray()
        helpers = [threading.Thread(target=_feed, args=(proc, build_payload(scripts).encode()), daemon=True),
                   threading.Thread(target=_drain, args=(proc, err), daemon=True)]
        for helper in helpers:
            helper.start()
        timer = threading.Timer(round_.timeout, self._expire, (round_, proc))
        timer.daemon = True
        timer.start()
        try:
            split = LabelSplitter()
            assert proc.stdout is not None
            for line in proc.stdout:
                node, rest = split.feed(line)
                if node is None or node not in scripts:
                    continue
                round_.results.setdefault(node, bytearray()).extend(rest)
                watcher = round_.watchers.get(node)
                if watcher is not None:
                    watcher(rest)
            for node in split.nodes.values():  # a node that printed its header and nothing else still answered
                if node in scripts:
                    round_.results.setdefault(node, bytearray())
            proc.wait()
            for helper in helpers:
                helper.join()
        finally:
            timer.cancel()
            with self._lock:
                self._procs.discard(proc)
            round_.status = None if round_.timed_out else proc.poll()
            # srun's own complaints, without the probes' framed stderr (kept per node in errors)
            round_.stderr = b"".join(line for line in bytes(err).splitlines(True) if b"@@PF-" not in line)
            round_.errors = {node: data for node, data in split_labelled(bytes(err)).items() if node in scripts}
            round_.seconds = time.monotonic() - start
            round_.done.set()

    @staticmethod
    def _expire(round_: _Round, proc: subprocess.Popen[bytes]) -> None:
        """The round's deadline: SIGTERM srun (it forwards it to the tasks and ends the step), then kill."""
        round_.timed_out = True
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)

    def stop(self) -> None:
        """Kill every srun still running and refuse new rounds (Ctrl-C: the engine closes every live transport)."""
        with self._lock:
            self._stopped = True
            procs = list(self._procs)
            for round_ in self._pending:
                round_.filled.set()
        for proc in procs:
            if proc.poll() is None:
                _kill_group(proc.pid)


def _feed(proc: subprocess.Popen[bytes], payload: bytes) -> None:
    """Write the payload to srun's stdin and close it (--input=all: every task reads it)."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except OSError:  # srun ended early: its exit status says why
        pass


def _drain(proc: subprocess.Popen[bytes], into: bytearray) -> None:
    stream = proc.stderr
    assert stream is not None
    while chunk := stream.read(65536):
        into.extend(chunk)


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
        return self.batch.submit(self.host.name, script, timeout, on_stdout)

    def close(self) -> None:
        """Nothing of one host's to close: the batch's sruns end with their rounds (``SlurmBatch.stop`` on Ctrl-C)."""


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
