"""``preflight fix``'s plan: the checks run as ``run`` runs them, with the fix's own read-only state probe beside
them, then ``preflight.fix.policy`` turns the findings and facts into a plan (nothing is changed here).

``--apply FILE`` gathers the saved plan's hosts again (:func:`refresh`) and leaves out every host whose state is
not the one the plan was made from. Applying and undoing: ``preflight.app.fix_apply``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import ClassVar

from preflight.app.run import RunRequest, prepare, run_cluster
from preflight.checks.base import Check, ClusterSpec, EvalContext, Facts, Finding, Host, Probe, ProbeOutput
from preflight.engine import RunOptions
from preflight.fix import policy
from preflight.fix.model import Plan
from preflight.fix.sysctl import STATE_KEY, STATE_PROBE, parse_state
from preflight.model import RedactedReport


@dataclass(frozen=True)
class FixRequest:
    """One ``preflight fix``: where, which checks, how to apply."""

    hosts: Path | None = None
    checks: Sequence[str] = ()
    skip: Sequence[str] = ()
    options: RunOptions = field(default_factory=RunOptions)  # its ``sudo``: --sudo
    accelerator: str = "auto"
    transport: str = "auto"
    include: frozenset[str] = frozenset()  # --include hccn.ip
    max_parallel: int = 8
    max_failures: int = 1


@dataclass(frozen=True)
class Gathered:
    """What a run of the checks gave: the report (redacted: what is shown), its findings and the facts (every
    check's and the fix's state) as the policy reads them."""

    report: RedactedReport
    findings: tuple[Finding, ...]
    ctx: EvalContext
    complete: bool


@dataclass(frozen=True)
class Planned:
    plan: Plan
    gathered: Gathered


class FixState(Check):
    """The host's sysctl configuration files, read-only (``preflight.fix.sysctl.STATE_PROBE``): what the plan's
    diffs start from and which file wins at boot. Judges nothing; runs only under ``preflight fix``."""

    family: ClassVar[str] = "fix"
    name: ClassVar[str] = STATE_KEY
    summary: ClassVar[str] = "the sysctl configuration files preflight fix edits and reads"

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("state", STATE_PROBE, timeout=10)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        out = outputs.get("state")
        if out is None or not out.ok and not out.stdout:
            return {"files": None, "error": (out.stderr.strip() if out else "") or "not read"}
        return parse_state(out.stdout)

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return []


def run_request(request: FixRequest, checks: Sequence[str] | None = None) -> RunRequest:
    """The ``run`` request the plan is made from (``checks``: instead of the request's, for a re-run)."""
    return RunRequest(hosts=request.hosts, checks=request.checks if checks is None else checks, skip=request.skip,
                      options=request.options, accelerator=request.accelerator, transport=request.transport,
                      extra_checks=(FixState(),))


def gather(request: FixRequest, checks: Sequence[str] | None = None) -> Gathered:
    """Run the checks (``checks``: these instead of the request's) and the state probe on every host."""
    engine = prepare(run_request(request, checks))
    result = run_cluster(run_request(request, checks), engine)
    ctx = EvalContext(engine.inventory.cluster, engine.inventory.hosts, {}, engine.facts()[0])
    return Gathered(result.report, tuple(result.report.findings), ctx, result.complete)


def new_run_id(now: datetime | None = None) -> str:
    """``20250101T000000Z-1a2b``: when, and four random hex digits.

    >>> new_run_id(datetime(2025, 1, 1, tzinfo=timezone.utc))[:17]
    '20250101T000000Z-'
    """
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def plan_cluster(request: FixRequest) -> Planned:
    """Gather, then plan (``preflight.fix.policy.plan``)."""
    gathered = gather(request)
    now = datetime.now(timezone.utc)
    plan = policy.plan(gathered.findings, gathered.ctx, include=request.include, run_id=new_run_id(now),
                       created=now.isoformat(timespec="seconds"))
    return Planned(plan, gathered)


def refresh(request: FixRequest, saved: Plan) -> tuple[Plan, dict[str, str], Gathered]:
    """``--apply FILE``: the hosts of ``saved`` gathered again; the plan less every host whose state is not what
    it was planned from, host -> why for those, and what was gathered."""
    gathered = gather(request)
    refused = policy.stale(saved, gathered.ctx)
    return saved.without(refused), refused, gathered


def read_plan(path: Path) -> Plan:
    """A plan file (``--plan-out``); ValueError naming the file when it is not one."""
    try:
        return Plan.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read the plan {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def with_include(request: FixRequest, plan: Plan) -> FixRequest:
    """The request with the saved plan's ``--include`` (a saved plan is applied as it was planned)."""
    return replace(request, include=frozenset(plan.include))
