"""What a check is: declared probes, a pure parser, a pure cluster-wide evaluator.

The engine owns all I/O. A check never opens a connection or a file: it names the commands it
wants run (``probes``), turns their output into JSON-able facts (``parse``), and turns every
host's facts into findings (``evaluate``). Parsers must never raise on odd output: they record
what they could not read in the facts, and ``evaluate`` turns that into an ``error`` finding.

This module is a check's one import place: the contract (``Check``, ``DerivedCheck``, ``ActiveCheck``, ``Step``,
...) and what every check uses with it (``Probe``, ``ProbeOutput``, ``Host``, ``ClusterSpec``, ``Finding``,
``Status``, ``Event``, ``EvalContext``, ``Facts``, ``finding``, ``majority``, ``tool_missing``, ``tool_skip``).
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from preflight.batch import Probe, ProbeOutput

# EvalContext lives below the registry (preflight.context), the evaluators' small pieces in preflight.findings
# (where the shared helpers under preflight/ reach them too): re-exported here for the checks (__all__).
from preflight.context import EvalContext
from preflight.findings import Facts, finding, majority, tool_missing, tool_skip
from preflight.inventory import ClusterSpec, Host
from preflight.model import Event, Finding, Status

__all__ = ["ENGINE_SUFFIXES", "ActiveCheck", "Check", "ClusterSpec", "DerivedCheck", "EvalContext", "Event", "Facts",
           "Finding", "Host", "Overlap", "Probe", "ProbeOutput", "Status", "Step", "StepOutcome", "accelerator_skip",
           "applies", "finding", "finding_ids", "majority", "planned_probes", "tool_missing", "tool_skip"]


class Check(abc.ABC):
    """A passive check: gather facts on every host, then judge them across the cluster."""

    # First part of every finding id, e.g. "sysctl"; and the unique key when a family has several check modules
    # (e.g. "net.reachability"). A check in checks/ that declares no family takes both from its module's name
    # (``_from_module``): gpu_devices.py is family "gpu", name "gpu.devices"; sysctl.py is family "sysctl".
    family: ClassVar[str]
    name: ClassVar[str] = ""
    summary: ClassVar[str]  # one line for `preflight list-checks`
    params: ClassVar[Mapping[str, Any]] = {}  # parameter name -> default (documents the type too)
    order: ClassVar[int] = 50  # position in reports and `list-checks`
    needs: ClassVar[tuple[str, ...]] = ()  # families whose facts ``evaluate`` reads via ctx.other_facts
    by_default: ClassVar[bool] = True  # False: runs only when --checks names it (costly active tests)
    # "node": judged from this host alone (run by `preflight node`); "cluster": needs the other hosts.
    scope: ClassVar[str] = "node"
    # The cluster accelerators (cluster.accelerator) the check applies to; None: every one. On any other
    # cluster the engine plans none of its probes or steps and reports ``accelerator_skip`` instead.
    accelerators: ClassVar[frozenset[str] | None] = None
    # The end of that one cluster-wide skip finding (e.g. "NCCL is not used"); None: no finding at all.
    not_applicable: ClassVar[str | None] = None
    # The skip finding's id when it is not ``ident`` (e.g. "npu.devices" for the family-wide npu check).
    skip_id: ClassVar[str | None] = None
    # True: the engine adds the output ``RECEIVED`` (preflight.batch) to this check's outputs: the controller's
    # time when the host's script output came back (with $PF_SENT, its send time, it brackets the host's run).
    stamped: ClassVar[bool] = False
    # Every finding id evaluate/judge can emit. Not listed here (``finding_ids`` adds them): the accelerator
    # skip id and the engine's ``<family>.gather``/``.parse``/``.internal`` errors. `--checks`/`--skip` accept
    # these ids (and nothing unknown), so a typo cannot silently select nothing.
    ids: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Off its ``accelerators``, whoever calls a check gets ``accelerator_skip`` from evaluate/judge, no steps."""
        super().__init_subclass__(**kwargs)
        if not hasattr(cls, "family") and (named := _from_module(cls.__module__)) is not None:
            cls.family, cls.name = named
        for name in ("evaluate", "judge", "steps"):
            method = cls.__dict__.get(name)
            if method is not None:
                setattr(cls, name, _gated(name, method))

    @property
    def ident(self) -> str:
        """The registry key: ``name`` when set, else ``family``."""
        return self.name or self.family

    def selected_by(self, item: str) -> bool:
        """Whether ``--checks item`` (its family, its ident or one of its finding ids) asks for this check.

        >>> from preflight.checks.sysctl import SysctlCheck
        >>> SysctlCheck().selected_by("sysctl.somaxconn"), SysctlCheck().selected_by("versions")
        (True, False)
        >>> SysctlCheck().selected_by("sysctl.somaxcon")  # not an id it can emit
        False
        """
        return item in (self.family, self.ident) or item in finding_ids(self)

    @abc.abstractmethod
    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        """Commands to run on ``host``; keys must be unique within the check."""

    @abc.abstractmethod
    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        """Pure: probe outputs of one host -> facts. Never raises."""

    @abc.abstractmethod
    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        """Pure: facts of every reachable host -> findings."""


def _from_module(module: str) -> tuple[str, str] | None:
    """(family, name) a check takes from its module when it declares no family; None outside checks/.

    >>> _from_module("preflight.checks.gpu_devices"), _from_module("preflight.checks.hccn_rank_table")
    (('gpu', 'gpu.devices'), ('hccn', 'hccn.rank_table'))
    >>> _from_module("preflight.checks.sysctl"), _from_module("preflight.checks.base"), _from_module("tests.x")
    (('sysctl', ''), None, None)
    """
    package, _, stem = module.rpartition(".")
    if package not in ("preflight.checks", "checks") or stem == "base":
        return None
    family, _, rest = stem.partition("_")
    return family, f"{family}.{rest}" if rest else ""


class DerivedCheck(Check):
    """A check that gathers nothing: it judges the facts other checks gathered (``needs``, ctx.other_facts)."""

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return []

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        return {}


# Finding ids the engine emits for any check, by family: a host that timed out before the check's probes
# ended, a parser that raised, an evaluator that raised (preflight.engine.evaluation).
ENGINE_SUFFIXES = ("gather", "parse", "internal")


def finding_ids(check: Check) -> frozenset[str]:
    """Every finding id ``check`` can put in a report: its declared ``ids``, its accelerator skip, the engine's.

    >>> from preflight.checks.sysctl import SysctlCheck
    >>> sorted(finding_ids(SysctlCheck()))  # doctest: +NORMALIZE_WHITESPACE
    ['sysctl.gather', 'sysctl.internal', 'sysctl.parse', 'sysctl.port_range', 'sysctl.somaxconn',
     'sysctl.tcp_max_syn_backlog']
    """
    skip = [check.skip_id or check.ident] if check.accelerators and check.not_applicable is not None else []
    return frozenset([*check.ids, *skip, *(f"{check.family}.{suffix}" for suffix in ENGINE_SUFFIXES)])


def _gated(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (evaluate, judge or steps) answering for the accelerator mismatch first, in one place."""

    @functools.wraps(method)
    def gated(self: Check, *args: Any, **kwargs: Any) -> Any:
        ctx = next((a for a in (*args, *kwargs.values()) if isinstance(a, EvalContext)), None)
        skipped = None if ctx is None else accelerator_skip(self, ctx.cluster)
        if skipped is None:
            return method(self, *args, **kwargs)
        return [] if name == "steps" else skipped

    return gated


def applies(check: Check, cluster: ClusterSpec) -> bool:
    """Whether ``check`` applies to ``cluster``'s accelerator (its ``accelerators`` declaration)."""
    return check.accelerators is None or cluster.accelerator in check.accelerators


def planned_probes(check: Check, host: Host, cluster: ClusterSpec) -> list[Probe]:
    """``check``'s probes for ``host``, none when the check does not apply to the cluster."""
    return check.probes(host, cluster) if applies(check, cluster) else []


def accelerator_skip(check: Check, cluster: ClusterSpec) -> list[Finding] | None:
    """None when ``check`` applies to ``cluster``; else what to report instead of evaluating it.

    One cluster-wide skip (or nothing, when the check declares no ``not_applicable`` reason).

    >>> class Nccl(DerivedCheck):
    ...     family, summary, accelerators, not_applicable = "nccl", "", frozenset({"gpu"}), "NCCL is not used"
    ...     def evaluate(self, facts, ctx): return []
    >>> accelerator_skip(Nccl(), ClusterSpec(accelerator="gpu")) is None
    True
    >>> [f.message for f in accelerator_skip(Nccl(), ClusterSpec(accelerator="npu")) or []]
    ['nccl: not a gpu cluster (accelerator: npu): NCCL is not used']
    """
    if applies(check, cluster):
        return None
    if check.not_applicable is None or not check.accelerators:
        return []
    wanted = "/".join(sorted(check.accelerators))
    article = "an" if wanted[0] in "aeiou" else "a"
    check_id = check.skip_id or check.ident
    return [finding(check_id, None, Status.SKIP, f"not {article} {wanted} cluster (accelerator: "
                    f"{cluster.accelerator}): {check.not_applicable}")]


@dataclass(frozen=True)
class Step:
    """One choreographed phase of an active check, run by the engine on the hosts' open connections.

    ``background`` probes (listeners, servers) are started first; ``foreground`` probes (clients)
    run at the same time on their hosts. Both must end by themselves within ``timeout`` seconds
    (clients retry briefly while servers come up; servers stop after their window), so nothing is
    left running on a node. Keys: host name -> probes, run as one script per host and role.
    """

    background: Mapping[str, Sequence[Probe]]
    foreground: Mapping[str, Sequence[Probe]]
    timeout: float = 30.0
    # Run once every foreground probe has ended, on the hosts whose background probes have not ended by
    # themselves shortly after (e.g. stop listeners still waiting for a peer that never came).
    cleanup: Mapping[str, Sequence[Probe]] = field(default_factory=dict)
    # A line the background scripts print once their servers are up: when set, the foreground starts
    # only after every background host printed it (or ended, or ``ready_timeout`` passed), so clients
    # do not spend their retries on servers still starting.
    ready: str | None = None
    ready_timeout: float = 10.0


@dataclass(frozen=True)
class StepOutcome:
    """What a step's probes printed: role ("background"/"foreground") -> host -> probe key -> output."""

    background: Mapping[str, Mapping[str, ProbeOutput]]
    foreground: Mapping[str, Mapping[str, ProbeOutput]]


@dataclass(frozen=True)
class Overlap:
    """The part of an active check that runs during the gather, on the sessions the gather opens anyway.

    No host waits for another: every client's gather script is sent at once with the ``clients`` probes at its end
    (so they must retry until the server is up, bounded). On ``server`` the probes of the checks named in ``first``
    run at the start of its gather script; the engine starts ``server_probes`` at once on another channel of the
    same connection, but they start their work only once those first probes have ended (so e.g. ports.listening
    never sees our own listener): they run with ``PREFLIGHT_GO`` naming a file the gather creates then, behind a
    shell loop that waits for it, or, when ``waits_for_go``, wait for it themselves (after their own start-up). The
    engine watches their output for ``ready``. ``cleanup`` ends the server probes if they still run once the gather
    is done. The outputs reach ``steps`` (as ``done``) and ``judge`` as the first StepOutcome: background is the
    server's, foreground each client's; ``steps`` re-tests what a client may have tried before the server was up.
    Planned from hosts.yaml alone: no facts exist yet.
    """

    server: str
    server_probes: Sequence[Probe]
    ready: str
    clients: Mapping[str, Sequence[Probe]]
    cleanup: Sequence[Probe] = ()
    ready_timeout: float = 10.0
    first: Sequence[str] = ()  # check idents whose probes on ``server`` run before ``server_probes`` start
    waits_for_go: bool = False  # the server probes wait for the file $PREFLIGHT_GO names themselves


class ActiveCheck(Check):
    """A check that makes hosts talk to each other after the gather (reachability, all_reduce).

    ``steps`` (pure) plans phases from the gathered facts; the engine runs them; ``judge`` (pure)
    turns the facts and the phases' outputs into findings.
    """

    scope: ClassVar[str] = "cluster"

    def overlap(self, ctx: EvalContext, window: float) -> Overlap | None:
        """What of this check can run during the gather (``ctx`` holds no facts yet), or None.

        ``window``: seconds the gather may take, which the server probes must outlast.
        """
        return None

    @abc.abstractmethod
    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        """Phases to run, in order; only hosts in ``facts`` (reachable ones) may appear.

        ``done``: what the overlap already ran during the gather; plan only what it did not cover.
        """

    def followups(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome]) -> list[Step]:
        """Steps planned from what ``steps`` measured (``done``: every outcome so far), run after them: e.g.
        re-measuring alone what looked slow before blaming it. Asked again after each batch ran, until it returns
        none (at most the engine's ``FOLLOWUP_ROUNDS`` times): a search plans its next round from the last one's
        results. None by default."""
        return []

    @abc.abstractmethod
    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        """Findings from the gathered facts and every step's outcome."""

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return self.judge(facts, [], ctx)
