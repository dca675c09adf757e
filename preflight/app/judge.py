"""``preflight judge``: the facts files of many nodes (``preflight node --facts``, ``preflight.app.facts``) judged
together, as ``run`` judges what it gathered: each file replayed to the engine as its host's gather
(``Engine.replay``), then the engine's own evaluation, drift, MTU, versions and the rest.

What needs the controller is reported as not run: the active checks (they connect the hosts to each other
live) and ``os.clock`` (it needs the controller's send and receive times).

>>> [f.check for f in stand_ins(select_checks([], []).checks)]
['os.clock', 'net.reachability', 'hccn.reachability']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from preflight import facts_file
from preflight.app.cluster import check_accelerator, load_cluster
from preflight.app.run import finish
from preflight.app.selection import UsageError, select_checks
from preflight.checks.base import ActiveCheck, Check
from preflight.drain import parse_limit
from preflight.engine import Engine, HostGather, Replay, RunOptions
from preflight.facts_current import DEFAULT_MAX_AGE, FILE_ID, parse_age, set_aside
from preflight.inventory import ClusterSpec, Host, Inventory
from preflight.model import Finding, HostResult, RedactedReport, Status
from preflight.render.outputs import ReportOutputs
from preflight.transport.base import Transport, TransportError

CLOCK = "os.clock"
CLUSTER_ID = "facts.cluster"
NOT_RUN = "not run: needs the controller"  # the observed value of what only `run` can tell
SPEC_KEYS = ("accelerator", "devices_per_host", "master", "master_port")  # what changes a probe's command


@dataclass(frozen=True)
class JudgeRequest:
    """One ``preflight judge``: the facts files (or folders of them) and how to judge them."""

    paths: Sequence[Path]
    hosts: Path | None = None  # hosts.yaml: the hosts expected, the cluster section and the checks' parameters
    checks: Sequence[str] = ()  # default: what the first file was gathered with
    skip: Sequence[str] = ()
    accelerator: str = "auto"
    max_unhealthy: str | None = None
    outputs: ReportOutputs | None = None
    drain_after: str | None = None  # --drain-after (docs/history.md), counted in ``history``
    history: Path | None = None
    problems: list[str] = field(default_factory=list)  # filled in: every unreadable file, for stderr
    run_id: str | None = None  # judge only files of this run (default: the run most files carry)
    max_age: str = DEFAULT_MAX_AGE  # files gathered longer ago are set aside ("0": no bound)


def facts_paths(paths: Sequence[Path]) -> list[Path]:
    """Files as given, folders as their ``*.json`` files (sorted); a path that does not exist is a UsageError.

    >>> facts_paths([Path("/nonexistent-preflight")])
    Traceback (most recent call last):
    ...
    preflight.app.selection.UsageError: /nonexistent-preflight: no such file or folder
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.glob("*.json") if p.is_file())
        elif path.exists():
            found.append(path)
        else:
            raise UsageError(f"{path}: no such file or folder")
    return found


def judge_facts(request: JudgeRequest) -> RedactedReport:
    """Read every facts file and judge them together, as ``run`` judges what it gathered: the engine over the
    files (``Engine.replay``), passive (no active phase), with what the files say of themselves and what only
    ``run`` can tell (:func:`stand_ins`)."""
    since = datetime.now(timezone.utc)
    if request.drain_after is not None:
        from preflight.app.history import check_policy

        check_policy(request.drain_after, request.history)
    try:
        if request.max_unhealthy is not None:
            parse_limit(request.max_unhealthy)
        max_age_s = parse_age(request.max_age)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    loaded: list[facts_file.NodeFacts] = []
    problems: list[Finding] = []
    for path in facts_paths(request.paths):
        try:
            loaded.append(facts_file.load(path))
        except facts_file.FactsError as exc:
            request.problems.append(str(exc))
            problems.append(Finding(FILE_ID, None, Status.ERROR, f"{FILE_ID}: {exc}", observed="unreadable",
                                    remedy=f"write it again with `preflight node --facts {path.name}` on its node"))
    if not loaded and request.hosts is None:
        raise UsageError("no facts file could be read" + (f": {'; '.join(request.problems)}"
                                                          if request.problems else " (none given)"))
    inventory = _inventory(request, loaded)  # every file's host, a file set aside below included
    loaded, stale = set_aside(loaded, request.run_id, max_age_s, datetime.now(timezone.utc))
    problems += stale
    chosen = (request.checks, request.skip) if request.checks or request.skip or not loaded \
        else loaded[0].selection
    selection = select_checks(*chosen)
    gathered, more = _gathered(inventory, loaded, selection.checks, {f.host for f in stale if f.host})
    names = {h.name for h in inventory.hosts}
    problems += more + cluster_drift(inventory.cluster, [f for f in loaded if f.host.name in names])
    started = min((f.gathered_at for f in loaded if f.gathered_at), default="") \
        or datetime.now(timezone.utc).isoformat(timespec="seconds")
    engine = Engine(inventory, selection.checks, RunOptions(only=selection.only, drop=selection.dropped,
                                                            passive=True), transport_factory=_no_transport)
    report = engine.replay(Replay([gathered[h.name] for h in inventory.hosts], started, since, problems,
                                  stand_ins(selection.checks)))
    return finish(report, request.max_unhealthy, request.outputs, request.drain_after, request.history)


def _inventory(request: JudgeRequest, loaded: Sequence[facts_file.NodeFacts]) -> Inventory:
    """hosts.yaml's inventory, or the files' hosts with the first file's cluster (``--accelerator`` over it)."""
    if request.hosts is not None:  # who named a node's interpreter: hosts.yaml, else what its file says
        inventory = load_cluster(request.hosts, accelerator=request.accelerator)
        named = {f.host.name: f.host.interpreter_from for f in loaded}
        return replace(inventory, hosts=[replace(h, interpreter_from=h.interpreter_from or named.get(h.name, ""))
                                         for h in inventory.hosts])
    hosts = list({f.host.name: f.host for f in loaded}.values())
    common = Counter(_spec(f.cluster) for f in loaded).most_common(1)[0][0]
    cluster = next(f.cluster for f in loaded if _spec(f.cluster) == common)  # the majority's, first of ties
    check_accelerator(request.accelerator)
    if request.accelerator != "auto":
        cluster = replace(cluster, accelerator=request.accelerator,
                          accelerator_reason=f"--accelerator {request.accelerator}")
    return Inventory(hosts=hosts, cluster=cluster)


def _spec(cluster: ClusterSpec) -> tuple[object, ...]:
    return tuple(getattr(cluster, key) for key in SPEC_KEYS)


def cluster_drift(cluster: ClusterSpec, loaded: Sequence[facts_file.NodeFacts]) -> list[Finding]:
    """A ``facts.cluster`` warning per file gathered for another cluster than the one judged (its probes, e.g.
    the master it resolved, are not what ``run`` would have sent).

    >>> from preflight.facts_file import NodeFacts
    >>> from preflight.inventory import Host
    >>> one = NodeFacts("n2.json", Host("n2", "n2"), ClusterSpec(master="n2"), "", 0.1, ((), ()), {})
    >>> [f.message for f in cluster_drift(ClusterSpec(master="n1"), [one])]  # doctest: +ELLIPSIS
    ["facts.cluster: n2.json was gathered for master 'n2' (judged with 'n1'): ..."]
    """
    found = []
    want = _spec(cluster)
    for facts in loaded:
        diff = [f"{key} {got!r} (judged with {wanted!r})"
                for key, got, wanted in zip(SPEC_KEYS, _spec(facts.cluster), want, strict=True)
                if got != wanted]
        if diff:
            found.append(Finding(CLUSTER_ID, facts.host.name, Status.WARN, f"{CLUSTER_ID}: {facts.path} was "
                                 f"gathered for {', '.join(diff)}: some of its probes differ from what `run` "
                                 "would send", observed="; ".join(diff), expected="the judged cluster",
                                 remedy="preflight node --facts FILE --hosts hosts.yaml  (the same hosts.yaml on "
                                        "every node and for judge)"))
    return found


def _gathered(inventory: Inventory, loaded: Sequence[facts_file.NodeFacts], checks: Sequence[Check],
              set_aside: AbstractSet[str] = frozenset()) -> tuple[dict[str, HostGather], list[Finding]]:
    """Host name -> what its file holds, as the engine's gather would have given it, plus what is amiss
    (``set_aside``: hosts whose file was not current, already said: not "missing" again)."""
    problems: list[Finding] = []
    by_host: dict[str, facts_file.NodeFacts] = {}
    names = {h.name for h in inventory.hosts}
    for facts in loaded:
        name = facts.host.name
        if name not in names:
            problems.append(Finding(FILE_ID, None, Status.ERROR, f"{FILE_ID}: {facts.path} holds the facts of "
                                    f"{name}, which is not a host of the inventory: not judged", observed=name))
        elif name in by_host:
            problems.append(Finding(FILE_ID, name, Status.ERROR, f"{FILE_ID}: {facts.path} and "
                                    f"{by_host[name].path} both hold {name}'s facts: judged the first one",
                                    observed=facts.path))
        else:
            by_host[name] = facts
    gathered: dict[str, HostGather] = {}
    for host in inventory.hosts:
        found = by_host.get(host.name)
        if found is None and host.name in set_aside:
            gathered[host.name] = HostGather(host, HostResult(host.name, host.address, False, 0.0,
                                                              error="its facts file is not of this run"))
            continue
        if found is None:
            problems.append(Finding(FILE_ID, host.name, Status.ERROR, f"{FILE_ID}: no facts file of {host.name} "
                                    "among those given", observed="missing", expected="a facts file",
                                    remedy=f"preflight node --facts {host.name}.json  (on {host.name})"))
            gathered[host.name] = HostGather(host, HostResult(host.name, host.address, False, 0.0,
                                                              error="no facts file"))
            continue
        facts = found
        missing = [c.ident for c in checks if c.ident not in facts.outputs]
        outputs = {c.ident: facts.outputs[c.ident] for c in checks if c.ident in facts.outputs}
        probes = sum(len(o) for o in outputs.values())
        status, note = (Status.ERROR, f"; not gathered there: {', '.join(missing)} (gathered with other "
                                      "--checks?)") if missing else (Status.PASS, "")
        problems.append(Finding(FILE_ID, host.name, status, f"{FILE_ID}: {facts.path}, gathered "
                                f"{facts.gathered_at or 'at an unknown time'} ({probes} probes in "
                                f"{facts.seconds:.2f} s){note}", observed=facts.path))
        gathered[host.name] = HostGather(host, HostResult(host.name, host.address, True, facts.seconds),
                                         outputs=outputs)
    return gathered, problems


def _no_transport(host: Host) -> Transport:
    """A replay reaches no host (and loads no SSH library)."""
    raise TransportError("replay", f"{host.name}: judged from its facts file, never reached")


def stand_ins(checks: Sequence[Check]) -> list[Finding]:
    """The skips standing in for what only ``run`` can do (``Replay.stand_ins``): ``os.clock`` and every active
    check (one not for the cluster's accelerator gets its usual skip instead: the engine's evaluation decides)."""
    found: list[Finding] = []
    for check in checks:
        if CLOCK in check.ids:
            found.append(Finding(CLOCK, None, Status.SKIP, f"{CLOCK}: not judged from facts files: the clock "
                                 "offset needs the controller's send and receive times (`preflight run` has them)",
                                 observed=NOT_RUN))
        if isinstance(check, ActiveCheck):
            ident = check.ids[0]
            found.append(Finding(ident, None, Status.SKIP, f"{ident}: not run by `preflight judge`: an active "
                                 "check connects the hosts to each other live (`preflight run` over SSH or Slurm "
                                 "runs it)", observed=NOT_RUN))
    return found
