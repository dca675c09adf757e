"""``--bisect``'s findings (pure): the search round by round, and who is named and why.

- ``allreduce.bisect``, one per group run: its round, hosts (``group``), figure against expected (``busbw_gbps``,
  ``expected_gbps``) and verdict; ``pass`` for a group that was fine (or split only to compare halves), ``warn``
  for one that was slow or hung and was split or confirmed.
- ``allreduce.busbw`` ``fail`` on a named host: slow (or never arriving) in every group it was in and with a
  known-good partner; the message lists each of those groups' figures. ``warn`` for a suspect left unconfirmed
  (no known-good partner) or cleared by its partner. ``fail`` with no host when every group of a round of four or
  more was below expected (a shared cause); ``pass`` with no host when nobody is named.
- With switches known (hosts.yaml ``switch:``): each group's message says its switch(es); ``allreduce.busbw``
  ``fail`` with no host names the path between two switches (the uplink) when a group spanning them was slow or
  hung, every one of its hosts proved fine elsewhere, and a pair of known-good hosts across that path was slow or
  hung too; ``warn`` when that pair was fine (not named).

>>> from preflight.allreduce.bisect import Group, GroupResult, Judged, Search
>>> s = Search([[Judged(GroupResult(Group(0, 0, ("a", "b"), 1), busbw=1.0, size=1 << 20), "ok", "1 GB/s")]])
>>> [(f.check, f.status.value) for f in findings(s, 1)]
[('allreduce.bisect', 'pass'), ('allreduce.busbw', 'pass')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from preflight.allreduce import domains
from preflight.allreduce.bisect import Judged, Search, uplinks
from preflight.findings import finding
from preflight.model import Finding, Status

MiB = 1 << 20


def findings(search: Search, runs: int) -> list[Finding]:
    """Every finding of a finished search (``runs``: the group runs it took)."""
    out: list[Finding] = []
    for judged in (j for r in search.rounds for j in r):
        out.append(_group_finding(judged, search.labels))
        if not judged.result.correct:
            g = judged.result.group
            out.append(finding("allreduce.correct", None, Status.FAIL, f"group {g.label} returned a wrong sum",
                               observed="wrong sum", expected="sum of rank+1", group=g.hosts, round=g.round,
                               remedy="check the devices' memory (ECC) and the driver on those hosts"))
    named = []
    for judged in (j for r in search.rounds for j in r if j.result.group.suspect is not None):
        suspect = str(judged.result.group.suspect)
        trail = _trail(search, suspect)
        partner = judged.result.group.hosts[0]
        if judged.verdict == "ok":
            out.append(finding(
                "allreduce.busbw", suspect, Status.WARN,
                f"{suspect} was in slow or hung groups ({trail}) but is normal with known-good {partner} "
                f"({judged.why}): not named", observed=judged.why, expected="slow with a known-good partner",
                peer=partner, remedy="none if it does not repeat (contention on the hosts or the network)",
                **figures_of(judged)))
            continue
        named.append(suspect)
        how = "its rank never arrived" if suspect in judged.result.missing else judged.verdict
        out.append(finding(
            "allreduce.busbw", suspect, Status.FAIL,
            f"{suspect} named by --bisect: {how} with known-good {partner} ({judged.why}); before: {trail}",
            observed=judged.why, expected="as fast as its known-good partner and its expected busbw", peer=partner,
            remedy=f"on {suspect}: ethtool <iface>; tc qdisc show; ip -s link; the firewall (all TCP ports "
                   "between the hosts); then rerun with --bisect", **figures_of(judged)))
    for suspect in search.suspects:
        out.append(finding(
            "allreduce.busbw", suspect, Status.WARN,
            f"{suspect} is a suspect ({_trail(search, suspect)}) but no known-good partner was left to confirm it "
            "with: not named", observed="unconfirmed", expected="a pair with a known-good host",
            remedy="rerun without --bisect (every pair) to judge it"))
    paths = _uplink_findings(search)
    out += paths
    below = [j for r in search.rounds for j in r if j.verdict == "slow" and j.expected is not None]
    if search.shared or (not named and not search.good and below):
        last = search.rounds[-1]
        figures = ", ".join(f"{j.result.group.label} {j.why}" for j in last)
        out.append(finding(
            "allreduce.busbw", None, Status.FAIL,
            f"every one of the {len(last)} groups of round {last[0].result.group.round} was below what it should "
            f"give: a cause the hosts share (the network, a switch, every node's setting), not one node: {figures}",
            observed=f"{len(last)} of {len(last)} groups slow", expected="groups at their expected busbw",
            remedy="check the switch ports' speed and the hosts' NIC settings (ethtool; tc qdisc show)"))
    elif not named and not any(f.status == Status.FAIL for f in paths):
        root = search.rounds[0][0] if search.rounds and search.rounds[0] else None
        status = Status.PASS
        text = f"nobody named by --bisect ({runs} runs in {len(search.rounds)} rounds)"
        if root is not None and root.verdict in ("slow", "hung"):
            status = Status.WARN
            text += (f"; the whole cluster was {root.verdict} in round 0 ({root.why}) while no smaller group stayed "
                     "so: the fault lies between groups or was transient")
        out.append(finding("allreduce.busbw", None, status, text, observed=f"{runs} runs",
                           expected="no host slow with a known-good partner"))
    return out


def _uplink_findings(search: Search) -> list[Finding]:
    """The path between switches each confirming pair across switches tested: named when slow or hung."""
    out: list[Finding] = []
    pairs = {j.result.group.uplink: j for r in search.rounds for j in r if j.result.group.uplink is not None}
    for spanning, side, other in uplinks(search):
        name = domains.path(side, other, search.labels)
        trail = (f"round {spanning.result.group.round} {spanning.result.group.label} "
                 f"({domains.describe(spanning.result.group.hosts, search.labels)}): {spanning.verdict}, "
                 f"{spanning.why}; every one of its hosts fine within its switch or with a known-good partner")
        judged = pairs.get(name)
        if judged is None:
            out.append(finding(
                "allreduce.busbw", None, Status.WARN, f"the path {name} is a suspect ({trail}) but no known-good "
                "host on each side was left to confirm it with: not named", observed="unconfirmed",
                expected="a pair of known-good hosts across the switches", remedy="rerun with --bisect"))
            continue
        first, second = judged.result.group.hosts
        if judged.verdict == "ok":
            out.append(finding(
                "allreduce.busbw", None, Status.WARN, f"the path {name} was suspect ({trail}) but known-good "
                f"{first} and {second} are normal across it ({judged.why}): not named", observed=judged.why,
                expected="slow across the switches", peer=second,
                remedy="none if it does not repeat (contention on the uplink or the hosts)", **figures_of(judged)))
            continue
        out.append(finding(
            "allreduce.busbw", None, Status.FAIL,
            f"the path between switches {name} (their uplink) named by --bisect: known-good {first} and {second} "
            f"are {judged.verdict} across it ({judged.why}); before: {trail}", observed=judged.why,
            expected="as fast across the switches as within each", peer=second,
            remedy=f"check the uplink ports between {name.replace(' <-> ', ' and ')} (speed, errors, "
                   "oversubscription, ECMP) and the firewall between the switches' subnets; then rerun with "
                   "--bisect", **figures_of(judged)))
    return out


def _group_finding(judged: Judged, labels: Mapping[str, str] | None = None) -> Finding:
    g = judged.result.group
    where = domains.describe(g.hosts, labels or {})
    if g.suspect:
        what = f"pair {g.hosts[0]}<->{g.suspect} (confirming {g.suspect}{', ' + where if where else ''})"
    elif g.uplink:
        what = f"pair {g.hosts[0]}<->{g.hosts[1]} (confirming the path {g.uplink}, {where})"
    else:
        what = f"group {g.label} ({len(g.hosts)} hosts{', ' + where if where else ''})"
    then = {"ok": "fine", "unjudged": "split once to compare halves",
            "slow": "split" if g.searching else "confirmed", "hung": "split" if g.searching else
            "confirmed"}[judged.verdict]
    spans = len(domains.spanned(g.hosts, labels or {})) > 1
    if judged.verdict in ("slow", "hung") and g.searching and len(g.hosts) < 4 and not spans:
        then = "its hosts confirmed in pairs"
    elif judged.verdict != "ok" and g.searching and spans:
        then = "split at the switch boundary"
    status = Status.WARN if judged.verdict in ("slow", "hung") else Status.PASS
    return finding("allreduce.bisect", None, status, f"round {g.round}: {what}: {judged.verdict}, {judged.why}: "
                   f"{then}", observed=judged.why, expected="its expected busbw, or the best group of its round",
                   group=g.hosts, round=g.round, **figures_of(judged))


def figures_of(judged: Judged) -> dict[str, Any]:
    r = judged.result
    figures: dict[str, Any] = {}
    if r.busbw is not None:
        figures.update(busbw_gbps=round(r.busbw, 4), algbw_gbps=round(r.algbw or 0.0, 4), bytes=r.size)
    if judged.expected is not None:
        figures["expected_gbps"] = round(judged.expected.gbps, 4)
    return figures


def _trail(search: Search, host: str) -> str:
    """The search groups ``host`` was in, with their verdicts: why it became a suspect."""
    steps: Sequence[Judged] = [j for r in search.rounds for j in r
                               if j.result.group.searching and host in j.result.group.hosts]
    return "; ".join(f"round {j.result.group.round} {j.result.group.label}: {j.verdict}, {j.why}" for j in steps)
