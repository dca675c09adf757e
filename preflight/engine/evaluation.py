"""Pure evaluation: gathered outputs -> facts -> findings -> the Report. No I/O, no clock, no threads.

>>> from preflight.inventory import parse_inventory
>>> inv = parse_inventory("hosts:\\n  - n1\\n")
>>> report = build_report(inv, [], {}, Judged([], {}), started="2026-01-01T00:00:00+00:00", duration_s=0.5)
>>> report.hosts[0].error, report.complete
('not checked (interrupted)', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from preflight import __version__
from preflight.batch import ProbeOutput
from preflight.checks.base import ActiveCheck, Check, EvalContext, Facts, StepOutcome, accelerator_skip
from preflight.engine.options import HostGather
from preflight.inventory import Inventory
from preflight.model import Finding, HostResult, Report, Status
from preflight.redact import secret_values

FactsByCheck = dict[str, dict[str, Facts]]  # check ident -> host -> facts


@dataclass(frozen=True)
class Judged:
    """Every finding of a run and the facts they were judged from."""

    findings: list[Finding]
    facts: FactsByCheck


def parse_facts(checks: Sequence[Check], gathered: Mapping[str, HostGather]) -> tuple[FactsByCheck, list[Finding]]:
    """Parse every gathered output (once): check ident -> host -> facts, plus what could not be parsed."""
    facts_by_check: FactsByCheck = {check.ident: {} for check in checks}
    problems: list[Finding] = []
    for gather in gathered.values():
        add_host_facts(checks, gather, facts_by_check, problems)
    return facts_by_check, problems


def add_host_facts(checks: Sequence[Check], gather: HostGather, facts_by_check: FactsByCheck,
                   problems: list[Finding]) -> None:
    """Parse one host's outputs into ``facts_by_check`` (check ident -> host -> facts) and ``problems``: the
    engine calls it as each host finishes, so parsing overlaps the other hosts' gathers. The host's facts are
    added together once all are parsed (a Ctrl-C while parsing leaves none of them, not some)."""
    name = gather.host.name
    found: dict[str, Facts] = {}
    failed: list[Finding] = []
    for check in checks:
        outputs = gather.outputs.get(check.ident)
        if outputs is None:
            continue  # unreachable: ssh.connect already says so
        if any(o.exit_status is None for o in outputs.values()):
            failed.append(Finding(f"{check.family}.gather", name, Status.ERROR,
                                  f"{check.family}.gather: {check.ident} not gathered: the host timed out"))
            continue
        parsed = safe_parse(check, outputs)
        if "parse_error" in parsed:
            failed.append(Finding(f"{check.family}.parse", name, Status.ERROR,
                                  f"{check.family}.parse: could not parse {check.ident}: {parsed['parse_error']}"))
            continue
        found[check.ident] = parsed
    for ident, parsed in found.items():
        facts_by_check.setdefault(ident, {})[name] = parsed
    problems += failed


def safe_parse(check: Check, outputs: Mapping[str, ProbeOutput]) -> Facts:
    """``check.parse``; a parser that raises (they must not) gives a ``parse_error`` fact instead."""
    try:
        return check.parse(outputs)
    except Exception as exc:
        return {"parse_error": f"{type(exc).__name__}: {exc}"}


def context(check: Check, inventory: Inventory, facts: FactsByCheck) -> EvalContext:
    """What ``check`` judges with: the cluster, the hosts, its parameters (defaults + hosts.yaml), all facts."""
    params = {**check.params, **inventory.params.get(check.family, {})}
    return EvalContext(inventory.cluster, inventory.hosts, params, facts)


def evaluate(checks: Sequence[Check], inventory: Inventory, gathered: Mapping[str, HostGather],
             parsed: tuple[FactsByCheck, list[Finding]], outcomes: Mapping[str, Sequence[StepOutcome]] | None,
             only: Sequence[str] = (), drop: Sequence[str] = (), inputs: Sequence[Finding] = (),
             stand_ins: Sequence[Finding] = ()) -> Judged:
    """Every check's findings over every host's facts (``parsed``: from :func:`parse_facts`) and the active
    checks' step outcomes (None: no active phase ran, an active check is not judged), the hosts' own findings
    first; a check that crashes is an ``<family>.internal`` error, never the end of the run. ``only``:
    finding-id prefixes to keep; ``drop``: finding ids to leave out (``--skip ID``); the hosts' own findings
    (``ssh.*``) and ``inputs`` are kept whatever they say. ``stand_ins`` replace the findings of their ids, where
    their check is judged (``Replay``)."""
    facts_by_check, problems = parsed
    kept = [f for gather in gathered.values() for f in gather.findings] + list(inputs)
    findings = list(problems)
    replaced = {f.check for f in stand_ins}
    for check in checks:
        skipped = accelerator_skip(check, inventory.cluster)
        if skipped is not None:  # not for this cluster's accelerator: one skip, or nothing
            findings += skipped
            continue
        judged = _judge(check, inventory, facts_by_check, outcomes)
        findings += [f for f in judged if f.check not in replaced] + [f for f in stand_ins if f.check in check.ids]
    if only:  # a skip of a selected id's parent (the accelerator skip) says why the selection ran nothing
        findings = [f for f in findings if selected(f.check, only)
                    or (f.status is Status.SKIP and any(item.startswith(f.check + ".") for item in only))]
    if drop:
        findings = [f for f in findings if f.check not in drop]
    order = {h.name: i for i, h in enumerate(inventory.hosts)}
    return Judged(sorted(kept + findings, key=lambda f: (order.get(f.host or "", -1), f.check)), facts_by_check)


def _judge(check: Check, inventory: Inventory, facts_by_check: FactsByCheck,
           outcomes: Mapping[str, Sequence[StepOutcome]] | None) -> list[Finding]:
    """One check's findings (none for an active check when no active phase ran); a crash is an error finding."""
    if isinstance(check, ActiveCheck) and outcomes is None:
        return []
    ctx = context(check, inventory, facts_by_check)
    facts = facts_by_check.get(check.ident, {})
    try:
        if isinstance(check, ActiveCheck):
            return check.judge(facts, (outcomes or {}).get(check.ident, []), ctx)
        return check.evaluate(facts, ctx)
    except Exception as exc:
        return [Finding(f"{check.family}.internal", None, Status.ERROR,
                        f"{check.family}.internal: {check.ident} crashed: {type(exc).__name__}: {exc}")]


def build_report(inventory: Inventory, checks: Sequence[Check], gathered: Mapping[str, HostGather], judged: Judged,
                 started: str, duration_s: float, complete: bool = True) -> Report:
    """The Report: every host (those never reached because of an interruption say so), the findings, and
    the secret values of the hosts' environments for the outputs to mask."""
    hosts = [gathered[h.name].result if h.name in gathered
             else HostResult(h.name, h.address, False, 0.0, error="not checked (interrupted)")
             for h in inventory.hosts]
    cluster = inventory.cluster
    return Report(hosts=hosts, findings=judged.findings, checks=[c.ident for c in checks], started=started,
                  duration_s=duration_s, complete=complete, tool_version=__version__,
                  extra={"cluster": {"accelerator": cluster.accelerator,
                                     "accelerator_reason": cluster.accelerator_reason,
                                     "devices_per_host": cluster.devices_per_host, "master": cluster.master,
                                     "master_port": cluster.master_port,
                                     **({"ssh_config": inventory.ssh_source} if inventory.ssh_source else {})}},
                  secrets=frozenset(secret_values(h.env for h in inventory.hosts).values()))  # every output masks


def selected(check_id: str, only: Sequence[str]) -> bool:
    """Whether a finding id is one of ``only`` or below one.

    >>> selected("sysctl.somaxconn", ["sysctl"]), selected("sysctlx.a", ["sysctl"])
    (True, False)
    """
    return any(check_id == item or check_id.startswith(item + ".") for item in only)
