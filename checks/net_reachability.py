"""net.reachability: a real TCP test between the nodes, not rule reading.

A short-lived listener is opened on the master port of the master (and, on NPU clusters, on
``HCCL_IF_BASE_PORT`` of every host), and every other host connects to it with a short timeout.
A blocked pair is named, and when no host at all can reach a port the host behind it is blamed.
Listeners close after their window (or as soon as every expected peer has connected), so
nothing is left listening.

Both scripts use only the standard library and run under ``python -S`` (no site start-up).

Pattern: every pair while the cluster has at most ``all_pairs_max_hosts`` hosts; beyond that,
each host connects to the master plus its two ring neighbours' HCCL port (bounded: 3 per host).

The listener and connector and their probe commands live in preflight.connect (shared with diagnose).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from preflight.checks.base import *
from preflight.connect import (
    LISTENER,
    LISTENER_READY,
    Target,
    connect_command,
    connect_meaning,
    connector_seconds,
    parse_listeners,
    parse_results,
)

HCCL_DEFAULT_BASE_PORT = 60000

class ReachabilityCheck(DerivedCheck, ActiveCheck):
    ids = ("net.reachability",)
    order = 60
    summary = "real TCP connects to the master port (and HCCL base ports on NPU) from every other host"
    # listener_wait: how long a client connecting during the gather retries a refused connect (the master's
    # listener may start after the client's script reached its connect); a refusal is then tested again.
    params: ClassVar[Mapping[str, Any]] = {"connect_timeout": 3.0, "all_pairs_max_hosts": 16, "listener_wait": 10.0}

    needs = ("versions",)  # whether the host's python runs (the listener and connector are python)

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
        all_pairs = len(order) <= int(ctx.params["all_pairs_max_hosts"])
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

        No host waits: the master's listener starts with the master's gather and binds right after its ``ports``
        probes (which must not see it; it waits for the engine's go file itself), every other host connects at the
        end of its own gather script, retrying a refused connect for up to ``listener_wait`` seconds while the
        listener may still be starting. Planned from hosts.yaml alone, so a host whose python turns out broken still
        connects (bash needs none); ``judge`` leaves it out as it does in ``steps``, and ``steps`` tests again
        whatever was refused or did not run.
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
        wait = float(ctx.params["listener_wait"])
        clients = {h: [_connector(hosts[h], [target], ctx, retry=wait)] for h in sources}
        return Overlap(master.name, [listen], LISTENER_READY, clients, [stop], first=("ports",), waits_for_go=True)

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        """The connects the overlap did not settle: every target on a host with no listener report, and
        on the others the sources whose connect was refused or did not run (the overlap's listener may
        not have been up yet: a refusal counts only once the listener is known to be up)."""
        usable = [h for h, why in self.usable(facts, ctx).items() if why is None]
        plan, _ = self.pairs(ctx, usable)
        settled = _settled(done)
        plan = {t: [s for s in sources if (s, t.host, t.port) not in settled] for t, sources in plan.items()}
        plan = {t: sources for t, sources in plan.items() if sources}
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
                                    f"cannot test from or to {host}: its python does not run: {why_not[host]}",
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
        if not outcomes or not any(plan.values()):  # e.g. the only reachable host is the master
            few = "fewer than 2 hosts" + ("" if len(usable) == len(ctx.hosts) else
                                          f": {len(usable)} of {len(ctx.hosts)} reachable with a working python")
            return findings + [finding(check, None, Status.SKIP, f"nothing to test ({few})")]
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
                    f"could not listen on {where}: {why}; reachability of this port not tested "
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
                    f"no host could connect to {where}: {kinds} ({connect_meaning(kinds)})",
                    observed=f"{len(failed)}/{len(sources)} hosts: {kinds}", expected="every host connects",
                    remedy=_remedy(target.port)))
                continue
            for source, result in sorted(failed.items()):
                problem_hosts.add(source)
                findings.append(finding(
                    check, source, Status.FAIL,
                    f"{source} cannot connect to {where}: {result} ({connect_meaning(result)})",
                    observed=result, expected="connect", peer=target.host,
                    remedy=f"on {target.host}: {_remedy(target.port)}; or check the route from {source}"))
        for host in usable:
            if host not in problem_hosts and tested.get(host):
                findings.append(finding(check, host, Status.PASS,
                                        f"all {tested[host]} connection tests involving {host} passed "
                                        f"({pattern})"))
        return findings


CONNECT_RETRY_S = 2.0  # a refused connect is retried this long (a listener may still be starting)


def _connect_seconds(ctx: EvalContext) -> float:
    """How long one client may spend on a target: its connects (a timed-out one is tried again, longer) and
    the refused retries."""
    return connector_seconds(float(ctx.params["connect_timeout"]), CONNECT_RETRY_S)


def _connector(host: Host, targets: Sequence[Target], ctx: EvalContext, retry: float = CONNECT_RETRY_S) -> Probe:
    """The client probe ``host`` runs against ``targets`` (during the gather or in a step alike)."""
    timeout = float(ctx.params["connect_timeout"])
    return Probe("connect", connect_command(host.python, timeout, retry, targets),
                 timeout=connector_seconds(timeout, retry) + 8.0)


def _settled(done: Sequence[StepOutcome]) -> set[tuple[str, str, int]]:
    """(source, target host, port) whose connect needs no new test: the target's listener reported (bound
    or not: a port it could not bind is judged as such) and the result was not "refused".

    >>> listen = ProbeOutput('{"ready": true}\\n{"listeners": [{"port": 1, "bound": true, "peers": []}]}')
    >>> def said(result): return ProbeOutput('{"results": [{"target": "m", "port": 1, "result": "%s"}]}' % result)
    >>> sorted(_settled([StepOutcome({"m": {"listen": listen}}, {"a": {"connect": said("ok")},
    ...                                                             "b": {"connect": said("refused")}})]))
    [('a', 'm', 1)]
    """
    listened = {(host, _int(entry.get("port"), -1)) for outcome in done for host, outs in outcome.background.items()
                for entry in parse_listeners(outs.get("listen", ProbeOutput("")).stdout)}
    return {(source, str(entry.get("target")), _int(entry.get("port"), -1))
            for outcome in done for source, outs in outcome.foreground.items()
            for entry in parse_results(outs.get("connect", ProbeOutput("")).stdout)
            if (str(entry.get("target")), _int(entry.get("port"), -1)) in listened and entry.get("result") != "refused"}


def _master_target(master: Host, ctx: EvalContext) -> Target:
    return Target(master.name, master.env.get("MASTER_ADDR", master.address), ctx.cluster.master_port, "master port")


def _int(value: object, default: int) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


def _remedy(port: int) -> str:
    return f"iptables -I INPUT -p tcp --dport {port} -j ACCEPT  (or open it in ufw/firewalld/nftables)"
