"""What ``preflight fix`` may change, and why (docs/fix.md): findings and facts -> a :class:`Plan`, pure.

One rule per finding id, each reading only the finding and the facts:

- ``sysctl.somaxconn``, ``sysctl.tcp_max_syn_backlog``: the value the check's remedy names, written into
  /etc/sysctl.d/90-preflight.conf and loaded (``preflight.fix.sysctl``); never lower than the value in force;
- ``ports.reserved``, ``sysctl.port_range``: the job's ports added to ``net.ipv4.ip_local_reserved_ports``, merged
  with every reservation there (``preflight.fix.ports``), one change for both findings;
- ``firewall.*``: openings for exactly the job's ports from the cluster (``preflight.fix.firewall``);
- ``hccn.ip``, ``hccn.subnet`` with ``--include hccn.ip``: the device IPs their remedies set, only on devices no
  process holds (``preflight.fix.device_ip``);
- anything else, and any of the above on a container, or where the host's sysctl files could not be read: the
  finding's remedy, printed, never run.

>>> from preflight.context import EvalContext
>>> from preflight.inventory import ClusterSpec, Host
>>> from preflight.model import Finding, Status
>>> ctx = EvalContext(ClusterSpec(master="n1"), [Host("n1", "n1")], other_facts={
...     "sysctl": {"n1": {"values": {"net.core.somaxconn": "128"}}}, "fix.state": {"n1": {"files": {}}}})
>>> low = Finding("sysctl.somaxconn", "n1", Status.FAIL, "low", remedy="sysctl -w net.core.somaxconn=1024 && ...")
>>> [c.summary for c in plan([low], ctx, run_id="r", created="t").hosts[0].changes]
['net.core.somaxconn 128 -> 1024']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from preflight.container import container_of
from preflight.context import EvalContext
from preflight.fix import device_ip
from preflight.fix.model import POLICY_VERSION, Change, HostPlan, Plan, digest
from preflight.fix.ports import reserved_change, wanted_ranges
from preflight.fix.sysctl import STATE_KEY, remedy_value, setting_change, state_files
from preflight.model import Finding, Status
from preflight.ports import RESERVED_KEY, SYSCTL_CONF

__all__ = ["NEVER", "POLICY_VERSION", "host_state", "plan", "stale"]

# What fix never touches, whatever a finding says (docs/fix.md lists the same, with the reasons).
NEVER = (
    "a chain's default policy, a firewalld zone's target, ufw's defaults",
    "enabling, disabling, starting, stopping or reloading ufw, firewalld, nftables or iptables (a reload flushes "
    "the rules others added at runtime)",
    "saving whole rule sets (iptables-save, nft list ruleset, netfilter-persistent save): they would persist "
    "docker's and kube-proxy's rules",
    "network interfaces, addresses, routes, MTUs",
    "sshd and its configuration",
    "NPU device IPs (hccn_tool), unless --include hccn.ip names them, and then only on devices no process holds",
    "any sysctl file but /etc/sysctl.d/90-preflight.conf, and `sysctl --system` (it resets values set at runtime)",
    "a sysctl value lower than the one in force, a reservation already there",
    "hosts.yaml, the job's environment, drivers, packages, services",
)
LISTEN_QUEUE = {"sysctl.somaxconn": "net.core.somaxconn", "sysctl.tcp_max_syn_backlog": "net.ipv4.tcp_max_syn_backlog"}
RESERVED = ("ports.reserved", "sysctl.port_range")
ACTIONABLE = (Status.FAIL, Status.WARN)


def plan(findings: Sequence[Finding], ctx: EvalContext, *, include: Iterable[str] = (), run_id: str,
         created: str) -> Plan:
    """Every host's changes for ``findings`` (``ctx.other_facts``: every check's facts and the fix's own state
    under ``fix.state``), in ``ctx.hosts``' order; the cluster-wide findings' remedies under the host ""."""
    by_host: dict[str, list[Finding]] = {}
    for f in findings:
        by_host.setdefault(f.host or "", []).append(f)
    hosts = [h.name for h in ctx.hosts] + sorted(set(by_host) - {h.name for h in ctx.hosts})
    plans = []
    for host in hosts:
        changes, notes = host_changes(host, by_host.get(host, []), ctx, run_id, include)
        plans.append(HostPlan(host, tuple(changes), host_state(host, changes, ctx), tuple(notes)))
    return Plan(run_id, created, POLICY_VERSION, tuple(p for p in plans if p.host or p.changes or p.notes),
                tuple(sorted(include)))


def host_changes(host: str, findings: Sequence[Finding], ctx: EvalContext, run_id: str = "",
                 include: Iterable[str] = ()) -> tuple[list[Change], list[str]]:
    """One host's changes, in the order they run (sysctls, reserved ports, firewall, the device IPs when
    ``include`` names hccn.ip, then what is only printed), and what could not be planned (the host's ``error``
    findings)."""
    wrong = [f for f in findings if f.status in ACTIONABLE]
    notes = [f"could not tell: {f.message}" for f in findings if f.status is Status.ERROR]
    if not host:
        return [printed(f) for f in wrong], notes
    files = state_files(ctx.other_facts.get(STATE_KEY, {}).get(host))
    sysctl_ok = files is not None and not (container_of(ctx.other_facts, host) or {}).get("engine")
    conf = files.get(SYSCTL_CONF) if files else None
    changes: list[Change] = []
    handled: set[int] = set()
    for index, f in enumerate(wrong):
        if f.check in LISTEN_QUEUE and sysctl_ok and files is not None:
            change = listen_queue(host, f, ctx, conf, files)
            if change is not None:
                changes.append(change)
                conf = change.files[0].after
                handled.add(index)
    reserving = [(i, f) for i, f in enumerate(wrong) if f.check in RESERVED]
    if reserving and sysctl_ok and files is not None:
        change = reserved_ports(host, [f for _, f in reserving], ctx, conf, files)
        if change is not None:
            changes.append(change)
            handled |= {i for i, f in reserving if wanted_ranges(f.remedy) is not None}
    walls = [(i, f) for i, f in enumerate(wrong) if f.check.startswith("firewall.")]
    if walls:
        opened = firewall_changes(host, [f for _, f in walls], ctx, run_id)
        changes += opened
        answered = {fix for change in opened for fix in change.fixes}
        handled |= {i for i, f in walls if f.check in answered}
    devices = [(i, f) for i, f in enumerate(wrong) if f.check in device_ip.FINDINGS]
    if devices and device_ip.INCLUDE in include:
        planned, taken = device_ip.device_ip_changes(host, [f for _, f in devices], ctx)
        changes += planned
        handled |= {devices[n][0] for n in taken}
    changes += [printed(f) for i, f in enumerate(wrong) if i not in handled]
    if files is None and any(f.check in LISTEN_QUEUE or f.check in RESERVED for f in wrong):
        notes.append(f"could not read the sysctl configuration files of {host}: their remedies are printed only")
    return changes, notes


def listen_queue(host: str, f: Finding, ctx: EvalContext, conf: str | None,
                 files: Mapping[str, str | None]) -> Change | None:
    """sysctl.somaxconn / sysctl.tcp_max_syn_backlog: the value the check's remedy names, never a lower one."""
    key = LISTEN_QUEUE[f.check]
    value, current = remedy_value(f.remedy, key), current_value(host, key, ctx)
    if value is None or not value.isdecimal():
        return None
    if current is not None and current.isdecimal() and int(current) >= int(value):
        return None
    return setting_change(host, (f.check,), key, current, value, conf, files)


def reserved_ports(host: str, found: Sequence[Finding], ctx: EvalContext, conf: str | None,
                   files: Mapping[str, str | None]) -> Change | None:
    """ports.reserved / sysctl.port_range: one change adding every range their remedies reserve to what is
    reserved now."""
    current = current_value(host, RESERVED_KEY, ctx)
    wanted = [(f.check, ranges) for f in found if (ranges := wanted_ranges(f.remedy)) is not None]
    if current is None or not wanted:
        return None
    fixes = tuple(dict.fromkeys(check for check, _ in wanted))
    return reserved_change(host, fixes, current, [r for _, ranges in wanted for r in ranges], conf, files)


def firewall_changes(host: str, found: Sequence[Finding], ctx: EvalContext, run_id: str) -> list[Change]:
    """firewall.*: ``preflight.fix.firewall``'s openings (the firewall part of issue 40), tagged with the run."""
    from preflight.fix import firewall

    return list(firewall.firewall_changes(host, found, ctx, run_id))


def printed(f: Finding) -> Change:
    """A finding fix does not change: its remedy, shown as the exact command and never run."""
    return Change(f.host or "", (f.check,), "print", f.message, remedy=f.remedy or "(no remedy: see the finding)")


def current_value(host: str, key: str, ctx: EvalContext) -> str | None:
    """The value of ``key`` in force on ``host`` as the checks read it (the sysctl check's facts; the ports
    check's for the reserved ports); None when unread.

    >>> facts = {"ports": {"n1": {"reserved_ports": ""}}}
    >>> from preflight.inventory import ClusterSpec
    >>> current_value("n1", RESERVED_KEY, EvalContext(ClusterSpec(), [], other_facts=facts))
    ''
    """
    facts = ctx.other_facts.get("sysctl", {}).get(host, {})
    for section in ("values", "ports"):
        values = facts.get(section)
        if isinstance(values, Mapping) and isinstance(values.get(key), str):
            return str(values[key])
    if key == RESERVED_KEY:
        raw = ctx.other_facts.get("ports", {}).get(host, {}).get("reserved_ports")
        return raw if isinstance(raw, str) else None
    return None


def _sysctl_state(host: str, keys: Sequence[str], ctx: EvalContext) -> Any:
    files = state_files(ctx.other_facts.get(STATE_KEY, {}).get(host))
    return {"values": {key: current_value(host, key, ctx) for key in keys},
            "conf": None if files is None else files.get(SYSCTL_CONF), "read": files is not None}


def _firewall_state(host: str, ctx: EvalContext) -> Any:
    from preflight.fix import firewall

    return firewall.firewall_state(host, ctx)


# part of HostPlan.state -> (the kinds it covers, the state those kinds' changes were made from)
PARTS: dict[str, tuple[tuple[str, ...], Callable[[str, Sequence[str], EvalContext], Any]]] = {
    "sysctl": (("sysctl", "reserved_ports"), _sysctl_state),
    "firewall": (("firewall",), lambda host, keys, ctx: _firewall_state(host, ctx)),
    "device_ip": (("device_ip",), lambda host, keys, ctx: device_ip.device_state(host, ctx)),
}


def host_state(host: str, changes: Sequence[Change], ctx: EvalContext) -> tuple[tuple[str, str], ...]:
    """The digest of each part of ``host``'s state that ``changes`` were made from (HostPlan.state)."""
    keys = [key for c in changes for key, _ in c.expect]
    return tuple((part, digest(read(host, keys, ctx))) for part, (kinds, read) in PARTS.items()
                 if any(c.kind in kinds for c in changes))


def stale(saved: Plan, ctx: EvalContext) -> dict[str, str]:
    """host -> why its state is not what ``saved`` was planned from (``--apply FILE`` refuses those hosts), for
    every host with a change to apply; the facts in ``ctx`` are gathered anew."""
    why: dict[str, str] = {}
    for host_plan in saved.applicable:
        host, changes = host_plan.host, host_plan.applicable
        if not any(isinstance(facts, Mapping) and facts.get(host) for facts in ctx.other_facts.values()):
            why[host] = "could not be read again (unreachable?): its state cannot be compared with the plan's"
            continue
        reasons = _moved_values(host, changes, ctx)
        now = dict(host_state(host, changes, ctx))
        reasons += [f"its {part} state changed since the plan" for part, was in host_plan.state
                    if now.get(part) != was and not (part == "sysctl" and reasons)]
        if reasons:
            why[host] = "; ".join(dict.fromkeys(reasons))
    return why


def _moved_values(host: str, changes: Sequence[Change], ctx: EvalContext) -> list[str]:
    """The sysctl values and files that are no longer what the plan read."""
    reasons = []
    files = state_files(ctx.other_facts.get(STATE_KEY, {}).get(host))
    first: dict[str, str | None] = {}
    for change in (c for c in changes if c.kind in PARTS["sysctl"][0]):
        for key, was in change.undo.values:
            now = current_value(host, key, ctx)
            if now != was:
                reasons.append(f"{key} was {was or '(empty)'} when planned, is {now or '(unread)'} now")
        for edit in change.files:
            first.setdefault(edit.path, edit.before)
    for path, before in first.items():
        if files is None:
            reasons.append(f"{path} could not be read again")
        elif files.get(path) != before:
            reasons.append(f"{path} changed since the plan")
    return reasons
