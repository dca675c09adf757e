"""gpu.xid: Xid errors the NVIDIA driver logged in the kernel log since boot (``dmesg``, else ``journalctl -k``).

The driver reports GPU faults as kernel lines such as
``NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response``.
Each is judged by NVIDIA's Xid catalog (``preflight.xid_catalog``: every code with its recommended action): an Xid
whose action is a GPU reset, a reboot or support (RESET_GPU, RESTART_BM, CONTACT_SUPPORT, the Xid 48 / NVLink
workflows...) fails, since a job started there crashes or hangs at its first collective; one the catalog has no
action for, or that is not in it, warns; the application's own faults (RESTART_APP) and IGNORE pass with a note.
The line itself decides where the catalog says so: an Xid 45 ("preemptive cleanup") that names its cause
(``caused by previous Xid 149``) is judged as that cause (an application's cleanup after an NVLink fault is not
the application's fault); an NVLink5 Xid 144-150 by the ``Fatal``/``Nonfatal`` word it prints (the catalog's
144-150 decode); an Xid 154 by the recovery action it names (``None`` passes).

The kernel log is read, and repeated events counted, on the node (``preflight.xid_log``: the probe and its
parser).

Finding id: gpu.xid.errors.

>>> facts = parse_klog("@@source dmesg\\n@@lines 43\\n@@xids 5\\n@@count 5 [Sun Feb 23 16:24:18 2025] NVRM: Xid "
...                    "(PCI:0000:9b:00): 119, pid=2024380, Timeout\\n@@last [Sun Feb 23 16:30:13 2025] NVRM: Xid "
...                    "(PCI:0000:9b:00): 119, pid=1240590, Timeout\\n")
>>> facts["groups"]
[{'bus': '0000:9b:00', 'xid': 119, 'cause': None, 'count': 5, 'first': 'Sun Feb 23 16:24:18 2025', \
'last': 'Sun Feb 23 16:30:13 2025', 'text': 'pid=1240590, Timeout'}]
>>> _judge("n1", facts).message.split(" in the kernel log")[0]
'gpu.xid.errors: Xid 119 (GSP RPC Timeout) x5 on 0000:9b:00 over 5m55s'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.xid_catalog import ACTIONS, XIDS, Assessment, assess, nvlink_severity, worst
from preflight.xid_log import READ, line_seconds, parse_klog


class GpuXidCheck(Check):
    ids = ("gpu.xid.errors",)
    accelerators = frozenset({"gpu"})
    not_applicable = "no NVIDIA GPUs to check"
    order = 59
    summary = ("Xid errors in the kernel log since boot (dmesg, else journalctl -k; --sudo where neither is "
               "readable), judged by NVIDIA's Xid catalog: an Xid needing a GPU reset, a reboot or support fails "
               "(45 by the Xid it names as its cause, NVLink 144-150 by their Fatal word, 154 by its action); "
               "repeats counted on the node")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("klog", READ, timeout=30, root=True)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        out = outputs.get("klog", ProbeOutput("", "not run", None))
        facts = parse_klog(out.stdout)
        rest = [line.strip() for line in out.stderr.splitlines() if line.strip()]
        status = "did not finish" if out.exit_status is None else f"exit status {out.exit_status}"
        said = rest[0] if rest else (status if not out.ok else None)
        if facts["source"] is not None and facts["lines"] is None and not facts["error"]:
            facts["error"] = f"the {facts['source']} log was not read to its end ({said or 'no count printed'})"
        if facts["source"] is None and not facts["error"] and not facts["why"]:
            facts["why"] = said or "empty log"
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return [_judge(host, facts[host]) for host in sorted(facts)]


def judge_groups(groups: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Assessment]]:
    """Each group with what the catalog asks for it; an Xid 45 naming its cause is judged as that cause (its lines
    on the same GPU when the log has them, else the cause's catalog entry)."""
    judged = []
    for group in groups:
        cause = group.get("cause")
        if group["xid"] == 45 and cause and cause != 45:
            found = [assess(g["xid"], g["text"]) for g in groups if g["bus"] == group["bus"] and g["xid"] == cause]
            by_cause = worst(found) if found else assess(cause)
            judged.append((group, Assessment(by_cause.level, by_cause.action,
                                             f"for Xid {cause}, the cause Xid 45 names: {by_cause.why}")))
        else:
            judged.append((group, assess(group["xid"], group["text"])))
    return judged


def _judge(host: str, host_facts: Facts) -> Finding:
    check = "gpu.xid.errors"
    source = host_facts.get("source")
    if host_facts.get("error"):
        return finding(check, host, Status.ERROR, f"could not read the Xid lines of {host}'s kernel log: "
                       f"{host_facts['error']}", observed=str(host_facts["error"]), expected="the probe's output")
    if source is None:
        return finding(check, host, Status.SKIP,
                       f"the kernel log of {host} is not readable by this user ({host_facts.get('why')}): "
                       "Xid errors not checked", observed=str(host_facts.get("why")),
                       expected="dmesg or journalctl -k readable",
                       remedy="preflight run --sudo ...  # or: sudo sysctl kernel.dmesg_restrict=0, or add the "
                              "user to the adm group (journalctl -k)")
    judged = judge_groups(host_facts.get("groups") or [])
    counted = xid_events(host_facts.get("groups") or [])
    read = f"{source}, {host_facts.get('lines')} lines since boot"
    left_out = int(host_facts.get("left_out") or 0)
    fatal = [(g, a) for g, a in judged if a.level == "fatal"]
    check_ = [(g, a) for g, a in judged if a.level == "check"]
    benign = [(g, a) for g, a in judged if a.level == "benign"]
    if fatal:
        todo = "; ".join(sorted({ACTIONS.get(a.action, f"the driver's recovery action: {a.action}") for _, a in fatal}))
        example = max(fatal, key=lambda item: int(item[0]["count"]))[0]
        return finding(check, host, Status.FAIL,
                       f"{listing(fatal)} in the kernel log of {host} ({read}): NVIDIA's Xid catalog says "
                       f"{'; '.join(a.why for a in _distinct(fatal))}; a job there crashes or hangs. E.g. Xid "
                       f"{example['xid']} on {example['bus']}: {example['text'][:160]}", observed=listing(fatal),
                       expected="no Xid that needs a GPU reset, a reboot or support since boot",
                       remedy=f"drain the node, then: {todo}  # nvidia-smi -q | grep -A3 -i -E 'remapp|recovery' "
                              "shows what the driver asks; RMA if it comes back", events=counted)
    unreadable = host_facts.get("unreadable") or []
    if check_ or left_out or unreadable:
        more = (f"; {left_out} more kinds of Xid not listed by the probe" if left_out else "") + (
            f"; {len(unreadable)} Xid lines without a readable code ({unreadable[0][:120]})" if unreadable else "")
        return finding(check, host, Status.WARN,
                       f"{listing(check_) or 'no listed Xid needs action'}{more} in the kernel log of {host} "
                       f"({read}): the catalog gives no clear action; look the code up before running a job there",
                       observed=listing(check_) + more, expected="no Xid since boot",
                       remedy="dmesg -T | grep -A2 'NVRM: Xid'  # NVIDIA: analyzing-xid-catalog.html", events=counted)
    note = (f"; application or ignorable Xids only: {listing(benign)} (the catalog: restart the application / no "
            "action)") if benign else ""
    return finding(check, host, Status.PASS, "no Xid needing a GPU reset or reboot in the kernel log of "
                   f"{host} ({read}){note}", observed=f"{host_facts.get('xid_lines') or 0} Xid lines",
                   expected="no Xid that needs a GPU reset, a reboot or support since boot", events=counted)


def xid_events(groups: list[dict[str, Any]]) -> tuple[Event, ...]:
    """One :class:`Event` per kind of Xid the log holds (code, cause, NVLink severity, GPU), for "new since the last
    run" (docs/history.md): its count since boot and when the newest was logged.

    >>> xid_events([{"bus": "0000:9b:00", "xid": 119, "cause": None, "count": 5, "first": "a", "last": "b",
    ...              "text": "pid=1, Timeout"}])
    (Event(key='Xid 119 on 0000:9b:00', count=5, last='b', new=None),)
    """
    found: dict[str, Event] = {}
    for group in groups:
        severity = nvlink_severity(str(group.get("text") or "")) if 144 <= int(group["xid"]) <= 150 else None
        cause = group.get("cause")
        key = (f"Xid {group['xid']}" + (f" caused by Xid {cause}" if cause and cause != group["xid"] else "")
               + (f" {severity}" if severity else "") + f" on {group['bus']}")
        seen = found.get(key)
        count = int(group["count"]) + (seen.count if seen else 0)
        found[key] = Event(key, count, group.get("last") or (seen.last if seen else None))
    return tuple(found.values())


def _distinct(judged: list[tuple[dict[str, Any], Assessment]]) -> list[Assessment]:
    return list({a.why: a for _, a in judged}.values())


def listing(judged: list[tuple[dict[str, Any], Assessment]], most: int = 6) -> str:
    """``Xid 119 (GSP RPC Timeout) x5 on 0000:9b:00 over 5m55s, ...``: one item per code and cause, GPUs joined."""
    items: dict[tuple[int, int | None], list[dict[str, Any]]] = {}
    for group, _ in judged:
        items.setdefault((group["xid"], group.get("cause")), []).append(group)
    texts = []
    for (xid, cause), groups in items.items():
        entry = XIDS.get(xid)
        name = entry.name if entry else "not in the catalog"
        why = ""
        if cause and cause != xid:
            cause_entry = XIDS.get(cause)
            why = f", caused by Xid {cause}" + (f" ({cause_entry.mnemonic})" if cause_entry else "")
        count = sum(int(g["count"]) for g in groups)
        buses = ", ".join(sorted({g["bus"] for g in groups}))
        texts.append(f"Xid {xid} ({name}{why}) x{count} on {buses}{_span(groups)}")
    extra = f", and {len(texts) - most} more" if len(texts) > most else ""
    return ", ".join(texts[:most]) + extra


def _span(groups: list[dict[str, Any]]) -> str:
    """`` over 2h58m`` between the first and the last event when both times can be read; else ``""``."""
    if sum(int(g["count"]) for g in groups) < 2:
        return ""
    firsts = [line_seconds(g.get("first")) for g in groups]
    lasts = [line_seconds(g.get("last")) for g in groups]
    if None in firsts or None in lasts:
        return ""
    seconds = int(max(x for x in lasts if x is not None) - min(x for x in firsts if x is not None))
    if seconds < 0:
        return ""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")]
    shown = [f"{value}{unit}" for value, unit in parts if value][:2]
    return f" over {''.join(shown) or '0s'}"
