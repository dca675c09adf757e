"""``--bisect`` within a node: its findings (pure): every within-node round's groups, and which device is named.

- ``allreduce.bisect``, one per group run, on its host: round, members (``group``: ``host/device``), figure
  against expected and verdict; ``pass`` for a group that was fine, a reference run or one not judged, ``warn``
  for one that was slow or hung and was split or confirmed, and for a whole-node group's second run that was
  normal (slow once, normal again: contention; its first run's row is then a ``pass``).
- ``allreduce.busbw`` ``fail`` on a named device (``host``, ``device``; its known-good partner ``peer_device``):
  slow twice running (or hung once) with a known-good device of its own host, after slow or hung groups. ``warn``
  for a suspect its partner cleared, for one left unconfirmed (no known-good device of its host, or nothing to
  compare with), and for a slow pair whose two devices are both fine with other partners (the link between them:
  the pair test judges it). ``fail`` with no host when every host's group of a round of four or more was below
  expected (a shared cause); ``pass`` with no host when nobody is named within the nodes.

>>> from preflight.allreduce.bisect import Group, GroupResult, Judged, Search
>>> s = Search([[Judged(GroupResult(Group(0, 1, ("a/0", "a/1"), 1), busbw=1.0), "ok", "1 GB/s")]])
>>> [(f.check, f.host, f.status.value) for f in findings(s, 1)]
[('allreduce.bisect', 'a', 'pass'), ('allreduce.busbw', None, 'pass')]
"""

from __future__ import annotations

from preflight.allreduce.bisect import MIN_SPLIT, Judged, Search, halves
from preflight.allreduce.bisect_devices import CONFIRM_RUNS, describe, host_of, split
from preflight.allreduce.bisect_verdict import figures_of
from preflight.findings import finding
from preflight.model import Finding, Status

REMEDY = ("on {host}: nvidia-smi topo -m and nvidia-smi nvlink -s (NVLink lanes down), nvidia-smi -q -d PCIE "
          "(a link trained below its width or generation), the device's health; on Ascend npu-smi info; then "
          "rerun with --bisect")


def findings(search: Search, runs: int) -> list[Finding]:
    """Every finding of a finished within-node search (``runs``: the group runs it took)."""
    alone = {j.result.group.hosts: j for r in search.rounds[1:2] for j in r if j.result.group.again}
    out = [_group_finding(j, alone.get(j.result.group.hosts) if k == 0 else None)
           for k, r in enumerate(search.rounds) for j in r]
    for judged in (j for r in search.rounds for j in r if not j.result.correct):
        g = judged.result.group
        out.append(finding("allreduce.correct", host_of(g.hosts), Status.FAIL,
                           f"group {describe(g.hosts)} returned a wrong sum", observed="wrong sum",
                           expected="sum of rank+1", group=g.hosts, round=g.round,
                           remedy="check the devices' memory (ECC) and the driver on that host"))
    named: list[str] = []
    cleared: set[str] = set()
    confirming: dict[str, list[Judged]] = {}  # each suspect's confirming pairs, in order
    for judged in (j for r in search.rounds for j in r if j.result.group.suspect is not None):
        confirming.setdefault(str(judged.result.group.suspect), []).append(judged)
    for suspect, tried in confirming.items():
        judged = tried[-1]
        host, device = split(suspect)
        partner = split(judged.result.group.hosts[0])[1]
        place = dict(device=device, peer=host, peer_device=partner, **figures_of(judged))
        before = "".join(f"; slow with known-good device {split(j.result.group.hosts[0])[1]} first ({j.why})"
                         for j in tried[:-1])
        if judged.verdict == "ok":
            cleared.add(suspect)
            out.append(finding(
                "allreduce.busbw", host, Status.WARN,
                f"{host} device {device} was in slow or hung groups ({_trail(search, suspect)}{before}) but is "
                f"normal with known-good device {partner} ({judged.why}): not named", observed=judged.why,
                expected="slow with a known-good device", remedy="none if it does not repeat", **place))
        elif judged.verdict == "unjudged":
            out.append(_unconfirmed(search, suspect, f"its pair with device {partner} had nothing to compare with "
                                                     f"({judged.why})"))
        elif judged.verdict == "slow" and len(tried) < CONFIRM_RUNS and suspect in search.suspects:
            continue  # waiting for its second run: reported as unconfirmed below
        else:
            named.append(suspect)
            how = "its rank never arrived" if suspect in judged.result.missing else judged.verdict
            out.append(finding(
                "allreduce.busbw", host, Status.FAIL,
                f"{host} device {device} named by --bisect within the node: {how} with known-good device "
                f"{partner} ({judged.why}{before}); before: {_trail(search, suspect)}", observed=judged.why,
                expected="as fast as the same devices on other hosts and its expected busbw",
                remedy=REMEDY.format(host=host), **place))
    out += [_unconfirmed(search, s, "no known-good device of its host was left to pair it with")
            for s in search.suspects]
    out += _links(search, cleared)
    out += _between(search)
    first = search.rounds[0] if search.rounds else []
    if search.shared:
        figures = ", ".join(f"{describe(j.result.group.hosts)} {j.why}" for j in first)
        out.append(finding(
            "allreduce.busbw", None, Status.FAIL,
            f"every one of the {len(first)} hosts' groups of all their devices was below what it should give: a "
            f"cause the hosts share (the driver, NCCL_P2P_DISABLE or another setting), not one device: {figures}",
            observed=f"{len(first)} of {len(first)} groups slow", expected="groups at their expected busbw",
            remedy="check the job's env (NCCL_P2P_*, CUDA_VISIBLE_DEVICES), the driver and nvidia-smi topo -m"))
    elif not named:
        out.append(finding("allreduce.busbw", None, Status.PASS,
                           f"nobody named by --bisect within the nodes ({runs} runs in {len(search.rounds)} rounds)",
                           observed=f"{runs} runs", expected="no device slow with a known-good device of its host"))
    return out


def _unconfirmed(search: Search, suspect: str, why: str) -> Finding:
    host, device = split(suspect)
    return finding("allreduce.busbw", host, Status.WARN,
                   f"{host} device {device} is a suspect ({_trail(search, suspect)}) but {why}: not named",
                   observed="unconfirmed", expected="a pair with a known-good device of its host", device=device,
                   remedy="rerun without --bisect (--checks allreduce: every device pair of the host) to judge it")


def _links(search: Search, cleared: set[str]) -> list[Finding]:
    """A slow or hung searching pair whose two devices were both cleared with other partners: the link between
    them is suspect (a warn: no run confirms a link; the pair test judges it against its class)."""
    out = []
    for judged in (j for r in search.rounds for j in r):
        g = judged.result.group
        if not g.searching or len(g.hosts) != 2 or judged.verdict not in ("slow", "hung") \
                or not set(g.hosts) <= cleared:
            continue
        host, (a, b) = host_of(g.hosts), sorted(split(m)[1] for m in g.hosts)
        out.append(finding(
            "allreduce.busbw", host, Status.WARN,
            f"the link between devices {a} and {b} of {host} was {judged.verdict} (round {g.round}: {judged.why}) "
            "while both devices are normal with known-good partners: the link is suspect, not named",
            observed=judged.why, expected="as fast as the same pair on other hosts", device=a, peer=host,
            peer_device=b, remedy=f"preflight run --checks allreduce (every device pair of {host}, judged in its "
                                  "link class); " + REMEDY.format(host=host), **figures_of(judged)))
    return out


def _between(search: Search) -> list[Finding]:
    """A slow or hung searching group whose halves were both fine: the fault lies on a link between its halves,
    which no half runs (a warn: nobody named; the pair test runs every pair of the host)."""
    ran = {j.result.group.hosts: j for r in search.rounds for j in r if j.result.group.searching}
    out = []
    for judged in ran.values():
        g = judged.result.group
        if judged.verdict not in ("slow", "hung") or len(g.hosts) < MIN_SPLIT:
            continue
        parts = [ran.get(h) for h in halves(g.hosts)]
        if not all(p is not None and p.verdict == "ok" for p in parts):
            continue
        host = host_of(g.hosts)
        out.append(finding(
            "allreduce.busbw", host, Status.WARN,
            f"{describe(g.hosts)} was {judged.verdict} (round {g.round}: {judged.why}) but both its halves "
            f"({', '.join(describe(h) for h in halves(g.hosts))}) were fine: the fault lies on a link between them, "
            "which no half runs: not named", observed=judged.why, expected="as fast as its halves allow",
            remedy=f"preflight run --checks allreduce (every device pair of {host}, judged in its link class); "
                   + REMEDY.format(host=host), **figures_of(judged)))
    return out


def _group_finding(judged: Judged, again: Judged | None = None) -> Finding:
    """A group's row; ``again``: a whole-node group's second run (Group.again), after this first one was slow."""
    g = judged.result.group
    host = host_of(g.hosts)
    if g.suspect is not None:
        what = f"pair {describe(g.hosts)} (confirming device {split(g.suspect)[1]})"
    elif g.reference:
        what = f"group {describe(g.hosts)} (reference, the same devices on a known-good host)"
    elif g.again:
        what = f"group {describe(g.hosts)} ({len(g.hosts)} devices, run again after a slow run)"
    else:
        what = f"group {describe(g.hosts)} ({len(g.hosts)} devices)"
    then = {"ok": "fine", "unjudged": "not judged", "slow": "split", "hung": "split"}[judged.verdict]
    if judged.verdict in ("slow", "hung"):
        then = ("compared only" if g.reference else "confirmed" if g.suspect is not None
                else "run again" if again is not None
                else "its devices confirmed in pairs" if len(g.hosts) < 4 else "split")
    elif g.again:
        then = ("slow once, normal again with fewer groups beside it: contention on the host (other processes, or "
                "this box), not split")
    status = Status.WARN if judged.verdict in ("slow", "hung") and not g.reference else Status.PASS
    if again is not None and again.verdict == "ok":
        status = Status.PASS  # one warn for a slow run that was normal again: on the second run's row
    elif g.again and judged.verdict == "ok":
        status = Status.WARN
    return finding("allreduce.bisect", host, status, f"round {g.round} (within {host}): {what}: {judged.verdict}, "
                   f"{judged.why}: {then}", observed=judged.why,
                   expected="its expected busbw, or the best run of the same devices on another host",
                   group=g.hosts, round=g.round, **figures_of(judged))


def _trail(search: Search, member: str) -> str:
    """The searching groups ``member`` was in, with their verdicts: why it became a suspect."""
    steps = [j for r in search.rounds for j in r if j.result.group.searching and member in j.result.group.hosts]
    return "; ".join(f"round {j.result.group.round} {describe(j.result.group.hosts)}: {j.verdict}, {j.why}"
                     for j in steps)
