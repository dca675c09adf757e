"""net.reachability: a real TCP test between the nodes, not rule reading.

A short-lived listener is opened on the master port of the master (and, on NPU clusters, on
``HCCL_IF_BASE_PORT`` of every host), and every other host connects to it with a short timeout.
A blocked pair is named, and when no host at all can reach a port the host behind it is blamed.
Listeners close after their window (or as soon as every expected peer has connected), so
nothing is left listening.

Both scripts use only the standard library and run under ``python -S`` (no site start-up).

Pattern: every pair while the cluster has at most ``all_pairs_max_hosts`` hosts; beyond that,
each host connects to the master plus its two ring neighbours' HCCL port (bounded: 3 per host).

>>> parse_results('{"results": [{"target": "n1", "port": 29500, "result": "ok", "ms": 0.4}]}')
[{'target': 'n1', 'port': 29500, 'result': 'ok', 'ms': 0.4}]
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import ActiveCheck, EvalContext, Facts, Overlap, Step, StepOutcome, finding
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status
from preflight.node_python import with_json_writer

HCCL_DEFAULT_BASE_PORT = 60000

# argv: tag window_seconds port:expected_connections ...  -> one JSON line (also when stopped by SIGTERM)
# Low-level modules only (_socket, _signal: no enum, json or threading imports): ~9 ms per run.
LISTENER_READY = '{"ready": true}'  # the listener's first line, once every port is bound (or failed to bind)
LISTENER = with_json_writer(r"""
import _signal, _socket, errno, os, select, sys, time
# JSON_WRITER
class Stop(Exception):
    pass
def stop(signum, frame):
    _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
    raise Stop()
_signal.signal(_signal.SIGTERM, stop)
window = float(sys.argv[2])
ports = [tuple(int(x) for x in item.split(":")) for item in sys.argv[3:]]
out, socks = {"listeners": []}, {}
for port, expected in ports:
    entry = {"port": port, "expected": expected, "bound": False, "peers": []}
    out["listeners"].append(entry)
    try:
        try:
            s = _socket.socket(_socket.AF_INET6, _socket.SOCK_STREAM)
            s.setsockopt(_socket.IPPROTO_IPV6, _socket.IPV6_V6ONLY, 0)
            s.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            s.bind(("::", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise
            s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            s.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", port))
        s.listen(128)
        entry["bound"] = True
        socks[s] = entry
    except OSError as exc:
        entry["error"] = errno.errorcode.get(exc.errno or 0, str(exc))
print(js({"ready": True}), flush=True)
deadline = time.time() + window
# Our stdout is the SSH session: once nobody reads it (the run ended or was interrupted), poll reports
# an error on it and the listener ends at once instead of holding the port for the rest of its window.
poller = select.poll()
poller.register(1, 0)
by_fd = {}
for s, entry in socks.items():
    if entry["expected"] > 0:
        poller.register(s.fileno(), select.POLLIN)
        by_fd[s.fileno()] = s
try:
    while by_fd and time.time() < deadline:
        events = poller.poll(int(1000 * min(0.2, max(0.0, deadline - time.time()))))
        if any(fd == 1 for fd, _ in events):
            out["orphaned"] = True
            break
        for fd, _ in events:
            s = by_fd.get(fd)
            if s is None:
                continue
            conn, addr = s._accept()
            os.close(conn)
            peer = addr[0][7:] if addr[0].startswith("::ffff:") else addr[0]
            socks[s]["peers"].append(peer)
            if len(socks[s]["peers"]) >= socks[s]["expected"]:
                poller.unregister(fd)
                del by_fd[fd]
except Stop:
    out["stopped"] = True
for s in socks:
    s.close()
print(js(out))
""")

# argv: connect_timeout retry_seconds name=address:port ...  -> one JSON line
# Every target at once with non-blocking connects and one select loop (no threads). "refused" is
# retried every 0.2 s for retry_seconds (the listener may still be starting); a name is resolved
# with getaddrinfo and its first address is used.
CONNECTOR = with_json_writer(r"""
import _socket, errno, select, sys, time
# JSON_WRITER
timeout, retry = float(sys.argv[1]), float(sys.argv[2])
NAMES = {errno.EHOSTUNREACH: "unreachable", errno.ENETUNREACH: "unreachable", errno.ECONNREFUSED: "refused",
         errno.ETIMEDOUT: "timeout"}
jobs = []
for spec in sys.argv[3:]:
    name, _, rest = spec.partition("=")
    address, _, port = rest.rpartition(":")
    jobs.append({"name": name, "address": address.strip("[]"), "port": int(port), "start": time.time(),
                 "sock": None, "at": 0.0, "again": 0.0, "result": None})
def finish(job, result):
    if job["sock"] is not None:
        job["sock"].close()
        job["sock"] = None
    if result == "refused" and time.time() - job["start"] <= retry:
        job["again"] = time.time() + 0.2
        return
    job["result"] = result
    job["ms"] = round((time.time() - job["start"]) * 1000, 1)
def resolve(address, port):
    # A literal address needs no getaddrinfo (glibc's costs ~8 ms even for one: NSS and gai.conf).
    for family, sockaddr in ((_socket.AF_INET, (address, port)), (_socket.AF_INET6, (address, port, 0, 0))):
        try:
            _socket.inet_pton(family, address)
            return family, _socket.SOCK_STREAM, 0, sockaddr
        except OSError:
            pass
    family, kind, proto, _, sockaddr = _socket.getaddrinfo(address, port, 0, _socket.SOCK_STREAM)[0]
    return family, kind, proto, sockaddr
def attempt(job):
    try:
        family, kind, proto, sockaddr = resolve(job["address"], job["port"])
        job["sock"] = _socket.socket(family, kind, proto)
        job["sock"].setblocking(False)
        job["at"] = time.time()
        code = job["sock"].connect_ex(sockaddr)
    except OSError as exc:
        finish(job, errno.errorcode.get(exc.errno or 0, str(exc)))
        return
    if code not in (0, errno.EINPROGRESS, errno.EAGAIN):
        finish(job, NAMES.get(code, errno.errorcode.get(code, str(code))))
    elif code == 0:
        finish(job, "ok")
while True:
    open_jobs = [j for j in jobs if j["result"] is None]
    if not open_jobs:
        break
    now = time.time()
    for job in open_jobs:
        if job["sock"] is None and now >= job["again"]:
            attempt(job)
    live = [j for j in open_jobs if j["sock"] is not None]
    waits = [j["at"] + timeout - now for j in live] + [j["again"] - now for j in open_jobs if j["sock"] is None]
    _, writable, _ = select.select([], [j["sock"] for j in live], [], max(0.0, min(waits + [0.2])))
    now = time.time()
    for job in live:
        if job["sock"] in writable:
            code = job["sock"].getsockopt(_socket.SOL_SOCKET, _socket.SO_ERROR)
            finish(job, "ok" if code == 0 else NAMES.get(code, errno.errorcode.get(code, str(code))))
        elif now >= job["at"] + timeout:
            finish(job, "timeout")
print(js({"results": [{"target": j["name"], "address": j["address"], "port": j["port"], "result": j["result"],
                       "ms": j["ms"]} for j in jobs]}))
""")

# One target (beyond all_pairs_max_hosts every CPU/GPU host only connects to the master): bash's
# /dev/tcp under timeout(1), ~3 ms a host instead of ~15 ms for the python connector, with the same
# JSON line and the same words (ok, refused, timeout, unreachable; else unresolved or error).
# Where bash or timeout is missing, the python connector runs instead.
_BASH_CONNECT = r"""i=0
while :; do
  e=$(LC_ALL=C timeout {timeout} bash -c 'exec 3<>"/dev/tcp/$0/$1"' {address} {port} 2>&1); rc=$?
  case "$rc:$e" in
    0:*) r=ok ;;
    124:*) r=timeout ;;
    *refused*) r=refused ;;
    *"No route"*|*nreachable*) r=unreachable ;;
    *"not known"*|*"name resolution"*|*"No address"*) r=unresolved ;;
    *) r=error ;;
  esac
  [ "$r" = refused ] && [ "$i" -lt {tries} ] || break
  i=$((i + 1))
  sleep 0.2
done
printf '{{"results": [{{"target": %s, "address": %s, "port": {port}, "result": "%s"}}]}}\n' {name} {address_json} "$r"
"""


@dataclass(frozen=True)
class Target:
    host: str
    address: str
    port: int
    what: str  # "master port" or "HCCL base port"


def connect_command(python: str, timeout: float, retry: float, targets: Sequence[Target]) -> str:
    """The probe that connects to ``targets`` and prints one JSON line (results named by target host).

    >>> one = Target("n1", "10.0.0.1", 29500, "master port")
    >>> "bash -c" in connect_command("python3", 3.0, 2.0, [one])
    True
    >>> "bash -c" in connect_command("python3", 3.0, 2.0, [one, Target("n2", "fe80::2", 60000, "HCCL base port")])
    False
    """
    specs = [f"{t.host}=[{t.address}]:{t.port}" if ":" in t.address else f"{t.host}={t.address}:{t.port}"
             for t in targets]
    fallback = shlex.join([python, "-S", "-c", CONNECTOR, str(timeout), str(retry), *specs])
    if len(targets) != 1:
        return fallback
    [target] = targets
    fast = _BASH_CONNECT.format(timeout=timeout, address=shlex.quote(target.address), port=target.port,
                                tries=max(0, int(retry / 0.2)), name=shlex.quote(json.dumps(target.host)),
                                address_json=shlex.quote(json.dumps(target.address)))
    return ("if command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then\n"
            f"{fast}else exec {fallback}\nfi")


def _last_json_list(text: str, key: str) -> list[dict[str, Any]]:
    """The dict entries of ``key`` in the last JSON line that has it as a list; [] for anything else."""
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get(key), list):
            return [entry for entry in data[key] if isinstance(entry, dict)]
    return []


def parse_results(text: str) -> list[dict[str, Any]]:
    """The connector's result list."""
    return _last_json_list(text, "results")


def parse_listeners(text: str) -> list[dict[str, Any]]:
    """The listener's per-port report."""
    return _last_json_list(text, "listeners")


class ReachabilityCheck(ActiveCheck):
    family = "net"
    name = "net.reachability"
    order = 60
    summary = "real TCP connects to the master port (and HCCL base ports on NPU) from every other host"
    params: ClassVar[Mapping[str, Any]] = {"connect_timeout": 3.0, "all_pairs_max_hosts": 16}

    needs = ("versions",)  # whether the host's python runs (the listener and connector are python)

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return []  # nothing to gather: the versions check already ran the host's python

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        return {}

    def usable(self, facts: Mapping[str, Facts], ctx: EvalContext) -> dict[str, str | None]:
        """Reachable hosts -> None when their python runs, else why not (from the versions facts)."""
        versions = ctx.other_facts.get("versions", {})
        return {h: (versions[h].get("python_error") if h in versions else "versions facts missing")
                for h in facts}

    # --- planning (pure) ---

    def targets(self, ctx: EvalContext, usable: Sequence[str]) -> list[Target]:
        hosts = {h.name: h for h in ctx.hosts}
        found = []
        master = hosts.get(ctx.cluster.master)
        if master and master.name in usable:
            found.append(_master_target(master, ctx))
        if ctx.cluster.accelerator == "npu":
            for name in usable:
                host = hosts[name]
                port = _int(host.env.get("HCCL_IF_BASE_PORT"), HCCL_DEFAULT_BASE_PORT)
                found.append(Target(name, host.env.get("HCCL_IF_IP", host.address), port, "HCCL base port"))
        return found

    def pairs(self, ctx: EvalContext, usable: Sequence[str]) -> tuple[dict[Target, list[str]], str]:
        """target -> sources, and the pattern's name."""
        order = [h.name for h in ctx.hosts if h.name in usable]
        all_pairs = len(order) <= int(ctx.params.get("all_pairs_max_hosts", 16))
        plan: dict[Target, list[str]] = {}
        for target in self.targets(ctx, order):
            if target.what == "master port" or all_pairs:
                plan[target] = [h for h in order if h != target.host]
            else:
                i = order.index(target.host)
                plan[target] = sorted({order[(i - 1) % len(order)], order[(i + 1) % len(order)]} - {target.host})
        return plan, ("every pair" if all_pairs else "every host to the master, HCCL ports of ring neighbours")

    def overlap(self, ctx: EvalContext, window: float) -> Overlap | None:
        """The master-port test, run during the gather: the master listens, every other host's gather connects.

        Planned from hosts.yaml alone, so a host whose python turns out broken still connects (bash
        needs none); ``judge`` leaves it out as it does in ``steps``.
        """
        hosts = {h.name: h for h in ctx.hosts}
        master = hosts.get(ctx.cluster.master)
        if master is None:
            return None
        target = _master_target(master, ctx)
        sources = [h.name for h in ctx.hosts if h.name != master.name]
        if not sources:
            return None
        listen, stop = self._listener(master, window, [f"{target.port}:{len(sources)}"])
        clients = {h: [_connector(hosts[h], [target], ctx)] for h in sources}
        return Overlap(master.name, [listen], LISTENER_READY, clients, [stop])

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        usable = [h for h, why in self.usable(facts, ctx).items() if why is None]
        plan, _ = self.pairs(ctx, usable)
        covered = {(host, _int(entry.get("port"), -1)) for outcome in done
                   for host, outs in outcome.background.items()
                   for entry in parse_listeners(outs.get("listen", ProbeOutput("")).stdout)}
        plan = {t: s for t, s in plan.items() if s and (t.host, t.port) not in covered}
        if not plan:
            return []
        hosts = {h.name: h for h in ctx.hosts}
        window = _connect_seconds(ctx) + 3.0  # the listeners outlast every client's connect and retries
        listen: dict[str, list[str]] = defaultdict(list)
        connect: dict[str, list[Target]] = defaultdict(list)
        for target, sources in plan.items():
            listen[target.host].append(f"{target.port}:{len(sources)}")
            for source in sources:
                connect[source].append(target)
        listeners = {h: self._listener(hosts[h], window, ports) for h, ports in listen.items()}
        foreground = {h: [_connector(hosts[h], targets, ctx)] for h, targets in connect.items()}
        return [Step(background={h: [pair[0]] for h, pair in listeners.items()}, foreground=foreground,
                     timeout=window + 10, cleanup={h: [pair[1]] for h, pair in listeners.items()},
                     ready=LISTENER_READY, ready_timeout=window)]

    @staticmethod
    def _listener(host: Host, window: float, ports: Sequence[str]) -> tuple[Probe, Probe]:
        """The listener probe for ``ports`` ("port:expected peers") and the probe that stops it early."""
        tag = "preflight-listener-" + hashlib.sha256(repr((host.name, sorted(ports))).encode()).hexdigest()[:12]
        listen = Probe("listen", shlex.join([host.python, "-S", "-c", LISTENER, tag, str(window), *ports]),
                       timeout=window + 5)
        # Match only the interpreter running the listener ("PYTHON -S -c ... tag"), not the shell around
        # it; "[r]" keeps the pattern from matching this pkill's own shell.
        marker = tag.replace("listener", "listene[r]")
        stop = Probe("stop", "pkill -TERM -f " + shlex.quote(f"^{re.escape(host.python)} -S -c .*{marker}")
                     + " || true", timeout=5)
        return listen, stop

    # --- judging (pure) ---

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        check = self.name
        findings: list[Finding] = []
        why_not = self.usable(facts, ctx)
        broken = sorted(h for h, why in why_not.items() if why is not None)
        for host in broken:
            findings.append(finding(check, host, Status.ERROR,
                                    f"{check}: cannot test from or to {host}: its python does not run: {why_not[host]}",
                                    remedy="set `python:` for this host in hosts.yaml"))
        usable = [h for h in facts if h not in broken]
        plan, pattern = self.pairs(ctx, usable)
        listened: dict[tuple[str, int], dict[str, Any]] = {}
        results: dict[tuple[str, str, int], str] = {}
        for outcome in outcomes:
            for host, outs in outcome.background.items():
                for entry in parse_listeners(outs.get("listen", ProbeOutput("")).stdout):
                    listened[(host, _int(entry.get("port"), -1))] = entry
            for host, outs in outcome.foreground.items():
                for entry in parse_results(outs.get("connect", ProbeOutput("")).stdout):
                    results[(host, str(entry.get("target")), _int(entry.get("port"), -1))] = str(entry.get("result"))
        if not outcomes:
            return findings + [finding(check, None, Status.SKIP, f"{check}: nothing to test (fewer than 2 hosts)")]
        problem_hosts: set[str] = set()
        tested: dict[str, int] = defaultdict(int)
        for target, sources in plan.items():
            if not sources:
                continue
            where = f"{target.host}:{target.port} ({target.what})"
            listener = listened.get((target.host, target.port))
            if listener is None or not listener.get("bound"):
                why = listener.get("error", "no report") if listener else "the listener did not run"
                problem_hosts.add(target.host)
                findings.append(finding(
                    check, target.host, Status.WARN,
                    f"{check}: could not listen on {where}: {why}; reachability of this port not tested "
                    "(see ports.listening for what holds it)", observed=str(why), expected="port free to listen"))
                continue
            outcome_by_source = {s: results.get((s, target.host, target.port), "not run") for s in sources}
            failed = {s: r for s, r in outcome_by_source.items() if r != "ok"}
            for source in sources:
                tested[source] += 1
            tested[target.host] += len(sources)
            if not failed:
                continue
            if len(failed) == len(sources) and len(sources) > 1:
                kinds = ", ".join(sorted(set(failed.values())))
                problem_hosts.add(target.host)
                findings.append(finding(
                    check, target.host, Status.FAIL,
                    f"{check}: no host could connect to {where}: {kinds} ({connect_meaning(kinds)})",
                    observed=f"{len(failed)}/{len(sources)} hosts: {kinds}", expected="every host connects",
                    remedy=_remedy(target.port)))
                continue
            for source, result in sorted(failed.items()):
                problem_hosts.add(source)
                findings.append(finding(
                    check, source, Status.FAIL,
                    f"{check}: {source} cannot connect to {where}: {result} ({connect_meaning(result)})",
                    observed=result, expected="connect", peer=target.host,
                    remedy=f"on {target.host}: {_remedy(target.port)}; or check the route from {source}"))
        for host in usable:
            if host not in problem_hosts and tested.get(host):
                findings.append(finding(check, host, Status.PASS,
                                        f"{check}: all {tested[host]} connection tests involving {host} passed "
                                        f"({pattern})"))
        return findings


CONNECT_RETRY_S = 2.0  # a refused connect is retried this long (a listener may still be starting)


def _connect_seconds(ctx: EvalContext) -> float:
    """How long one client may spend on a target: its connect timeout plus the retries."""
    return float(ctx.params.get("connect_timeout", 3.0)) + CONNECT_RETRY_S


def _connector(host: Host, targets: Sequence[Target], ctx: EvalContext) -> Probe:
    """The client probe ``host`` runs against ``targets`` (during the gather or in a step alike)."""
    timeout = float(ctx.params.get("connect_timeout", 3.0))
    return Probe("connect", connect_command(host.python, timeout, CONNECT_RETRY_S, targets),
                 timeout=_connect_seconds(ctx) + 8.0)


def _master_target(master: Host, ctx: EvalContext) -> Target:
    return Target(master.name, master.env.get("MASTER_ADDR", master.address), ctx.cluster.master_port, "master port")


def _int(value: object, default: int) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


def connect_meaning(result: str) -> str:
    """What a connector's result says about the path, e.g. ``timeout`` -> packets dropped (DROP rule)."""
    if "timeout" in result:
        return "packets dropped: a firewall DROP rule or a black-holed route"
    if "refused" in result:
        return "actively refused: a firewall REJECT rule, or nothing listening"
    if "unreachable" in result:
        return "no route to the host"
    return "see the result code"


def _remedy(port: int) -> str:
    return f"iptables -I INPUT -p tcp --dport {port} -j ACCEPT  (or open it in ufw/firewalld/nftables)"
