"""Pure judging of all_reduce pair results: slow pairs, the suspect host, link problems.

A pair's figure is its busbw at the largest size it measured; it is slow when below
``fraction`` x the reference of its class (intra / inter) at that size (the median over device
endpoints of each endpoint's median pair: robust to a slow host that is in most pairs), or below
``floor_gbps``.
A slow pair is blamed only once confirmed (preflight.allreduce.confirm: alone, then beside a control of its class).
A host slow with every partner (at least two) is the suspect; a slow pair between two otherwise
healthy hosts is a link problem.

>>> parse_lines('junk\\n{"pair": 3, "rank": 0, "sizes": []}\\n')
[{'pair': 3, 'rank': 0, 'sizes': []}]
>>> median([3.0, 1.0, 2.0]), median([1.0, 2.0])
(2.0, 1.5)
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.allreduce.confirm import alone_text, confirm
from preflight.allreduce.expected import Expected, ratio_text
from preflight.allreduce.results import PairResult, below, floor_of, reference, size_text
from preflight.allreduce.schedule import Pair
from preflight.findings import finding, median
from preflight.model import Finding, Status


def parse_lines(text: str) -> list[dict[str, Any]]:
    """The workers' JSON lines (dicts with an int ``pair``); anything else is skipped. Never raises."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("pair"), int) and not isinstance(data.get("pair"), bool):
            found.append(data)
    return found


def merge(pairs: Sequence[Pair], lines: Sequence[dict[str, Any]], timeout: float) -> list[PairResult]:
    """Join every rank's line to its pair; a rank that printed nothing was killed by the timeout."""
    by_pair: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        by_pair[int(line["pair"])].append(line)
    results = []
    for pair in pairs:
        result = PairResult(pair)
        ranks = {_int(line.get("rank")): line for line in by_pair.get(pair.index, [])}
        errors = [f"rank {r} ({pair.host if r == 0 else pair.peer}): {line['error']}"
                  for r, line in sorted(ranks.items()) if line.get("error")]
        missing = [r for r in (0, 1) if r not in ranks]
        if missing:
            errors.append(f"rank {'/'.join(map(str, missing))} printed nothing "
                          f"(killed after the {timeout:g} s timeout, or never started)")
        if errors:
            result.error = "; ".join(errors)
        else:
            for line in ranks.values():
                for entry in line.get("sizes") or []:
                    if not isinstance(entry, dict):
                        continue
                    size = _int(entry.get("bytes"))
                    busbw, algbw = _float(entry.get("busbw_gbps")), _float(entry.get("algbw_gbps"))
                    if size > 0 and busbw is not None and algbw is not None:
                        result.busbw[size] = min(busbw, result.busbw.get(size, busbw))
                        result.algbw[size] = min(algbw, result.algbw.get(size, algbw))
                    if entry.get("correct") is not True:
                        result.correct = False
            if not result.busbw:
                result.error = "no size measured within the budget"
        results.append(result)
    return results


def slow_pairs(measured: Sequence[PairResult], fraction: float, floor_gbps: float,
               hardware: Mapping[int, tuple[float, str]] | None = None) -> tuple[list[PairResult], dict[int, float]]:
    """The pairs below ``fraction`` x their class's reference or below their floor (``floor_gbps`` when set,
    else the pair's ``hardware`` floor: preflight.allreduce.floor), and each pair's reference."""
    slow: list[PairResult] = []
    medians: dict[int, float] = {}
    for r in measured:
        medians[r.pair.index] = reference([o for o in measured if o.pair.group == r.pair.group], r.size)
        if below(r, medians[r.pair.index], fraction, floor_of(r, floor_gbps, hardware)):
            slow.append(r)
    return slow, medians


def judge(results: Sequence[PairResult], hosts: Sequence[str], fraction: float, floor_gbps: float,
          pattern: str, remeasured: Mapping[int, PairResult] | None = None,
          hardware: Mapping[int, tuple[float, str]] | None = None,
          expected: Mapping[int, Expected] | None = None,
          controls: Mapping[int, PairResult] | None = None) -> list[Finding]:
    """Findings: allreduce.run (errors), allreduce.correct, allreduce.busbw (slow pairs, suspects), and one
    allreduce.pair pass finding with the figures of every measured pair that is not slow.

    ``remeasured``: slow pairs measured again alone (pair index -> result; None: no confirmation phase); one
    that is normal alone is a ``warn`` (contention or an ECMP collision), not a slow link; one not measured
    again is blamed only next to a pair confirmed slow (see :func:`confirm`). ``hardware``: inter pairs' floors from the
    line rate (pair index -> (GB/s, how)), used where ``floor_gbps`` is not set; ``expected``: each pair's expected
    busbw (preflight.allreduce.expected), which every pair finding reports its figure against; ``controls``: for a
    pair still slow alone, a known-good pair of its class run alone right after it (slow pair index -> the control's
    result), which excuses it when it was as slow then (a ``warn``)."""
    findings: list[Finding] = []
    exp = expected or {}
    measured = [r for r in results if r.error is None]
    for r in results:
        if r.error is not None:
            p = r.pair
            findings.append(finding(
                "allreduce.run", p.host, Status.ERROR,
                f"pair {p.label} (port {p.port}) did not complete: {r.error}",
                observed=r.error[:300], expected="both ranks report", peer=p.peer, device=p.device,
                peer_device=p.peer_device,
                remedy=_run_remedy(p.host, p.peer, r.error)))
        elif not r.correct:
            p = r.pair
            findings.append(finding(
                "allreduce.correct", p.host, Status.FAIL,
                f"pair {p.label} returned a wrong all_reduce sum",
                observed="wrong sum", expected="sum of rank+1", peer=p.peer, device=p.device,
                peer_device=p.peer_device, remedy="check the devices' memory (ECC) and the driver on both hosts"))
    slow, medians = slow_pairs(measured, fraction, floor_gbps, hardware)
    slow, recovered, excused, unconfirmed = confirm(slow, measured, remeasured, fraction, floor_gbps, hardware,
                                                    controls)
    for r in unconfirmed:
        p = r.pair
        findings.append(finding(
            "allreduce.busbw", p.host, Status.WARN,
            f"pair {_named(p)} slow in its round ({r.figure:.3g} GB/s at {size_text(r.size)}, reference "
            f"{medians[p.index]:.3g}) and not measured again alone (only the slowest pairs are: confirm_max), "
            "while no pair confirmed slow shares a host with it: not blamed",
            observed=f"{r.figure:.3g} GB/s with other pairs running", expected=f">= {fraction:g} x median",
            peer=p.peer, device=p.device, peer_device=p.peer_device,
            remedy="raise checks.allreduce.confirm_max in hosts.yaml to re-measure more slow pairs alone",
            **_figures(r, exp)))
    for first, alone in recovered:
        p = first.pair
        findings.append(finding(
            "allreduce.busbw", p.host, Status.WARN,
            f"pair {_named(p)} slow once ({first.figure:.3g} GB/s at {size_text(first.size)}, reference "
            f"{medians[p.index]:.3g}), normal alone ({alone.figure:.3g} GB/s at {size_text(alone.size)}): contention "
            f"or an ECMP collision, not a slow link",
            observed=f"{first.figure:.3g} GB/s with other pairs running, {alone.figure:.3g} GB/s alone",
            expected=f">= {fraction:g} x median", peer=p.peer, device=p.device, peer_device=p.peer_device,
            remedy="none needed if it does not repeat; if it does, look at the switch's ECMP hashing and the "
                   "other traffic on these hosts", **_figures(alone, exp)))
    for first, alone, control in excused:
        p, c = first.pair, control.pair
        findings.append(finding(
            "allreduce.busbw", p.host, Status.WARN,
            f"pair {_named(p)} slow in its round ({first.figure:.3g} GB/s at {size_text(first.size)}, reference "
            f"{medians[p.index]:.3g}) and alone ({alone.figure:.3g} GB/s at {size_text(alone.size)}), but a pair of "
            f"its class that was fine in the rounds, {c.label}, gave {control.figure:.3g} GB/s alone right after "
            f"it (not below {fraction:g} x that): the hosts or the network were slow then, not this link",
            observed=f"{alone.figure:.3g} GB/s alone, {control.figure:.3g} GB/s for {c.label} right after",
            expected=f">= {fraction:g} x median", peer=p.peer, device=p.device, peer_device=p.peer_device,
            remedy="none needed if it does not repeat; if it does, rerun when the hosts are idle "
                   "(other jobs' CPU or network load)", **_figures(alone, exp)))
    slow_ids = {r.pair.index for r in slow}
    suspects, bad_devices = _suspects(measured, slow_ids, hosts)
    failed_busbw: set[str] = set()
    for h in sorted(suspects, key=hosts.index):
        share = suspects[h]
        findings.append(finding(
            "allreduce.busbw", h, Status.FAIL,
            f"{h} is slow with every partner ({share} pairs below {fraction:g} x median): "
            f"suspect this host's NIC, cable or switch port",
            observed=f"slow with {share} partners", expected=f">= {fraction:g} x median busbw",
            remedy=f"on {h}: ethtool <iface>; tc qdisc show; check link speed and errors (ip -s link)"))
        failed_busbw.add(h)
    for (h, d), share in sorted(bad_devices.items(), key=lambda item: (hosts.index(item[0][0]), item[0][1])):
        findings.append(finding(
            "allreduce.busbw", h, Status.FAIL,
            f"device {d} of {h} is slow with every partner ({share} pairs below {fraction:g} x "
            f"median) while its other devices are not: suspect that device's link (its NIC port, cable or "
            f"switch port)", device=d,
            observed=f"device {d} slow with {share} partners", expected=f">= {fraction:g} x median busbw",
            remedy=f"on {h}: check device {d}'s port (Ascend: hccn_tool -i {d} -link -g; "
                   f"GPU: ibstat / ip -s link for its NIC)"))
        failed_busbw.add(h)
    for r in slow:
        p = r.pair
        floor = floor_of(r, floor_gbps, hardware)
        how = (hardware or {}).get(p.index, (0.0, ""))[1] if floor_gbps <= 0 else "floor_gbps"
        figure = (f"busbw {r.figure:.3g} GB/s (algbw {r.algbw[r.size]:.3g}) at {size_text(r.size)}, "
                  f"{ratio_text(r.figure, exp.get(p.index))} "
                  f"(reference {medians[p.index]:.3g}: median of the {_group_text(p)} pairs' endpoints"
                  + (f"; floor {floor:.3g} GB/s: {how}" if floor > 0 else "") + ")"
                  + alone_text(r, (remeasured or {}).get(p.index), (controls or {}).get(p.index)))
        culprit = _culprit(p, suspects, bad_devices)
        if culprit is not None:
            leader = culprit[0] == p.host and culprit[1] in (None, p.device)  # the culprit is rank 0's side
            other = p.peer if leader else p.host
            devices = (p.device, p.peer_device) if leader else (p.peer_device, p.device)
            what = f"suspect host {culprit[0]}" if culprit[1] is None else \
                f"suspect device {culprit[1]} of {culprit[0]}"
            findings.append(finding(
                "allreduce.busbw", culprit[0], Status.FAIL,
                f"pair {p.label} slow: {figure}; caused by {what}",
                observed=figure, expected=f">= {fraction:g} x median", peer=other, device=devices[0],
                peer_device=devices[1], remedy=f"fix {culprit[0]} first (see its own finding)", **_figures(r, exp)))
            continue
        what = "link problem between" if p.kind == "inter" else "slow device pair on"
        where = f"{p.host} and {p.peer}" if p.kind == "inter" else p.host
        for host, peer, dev, peer_dev in {(p.host, p.peer, p.device, p.peer_device),
                                          (p.peer, p.host, p.peer_device, p.device)}:
            findings.append(finding(
                "allreduce.busbw", host, Status.FAIL,
                f"{what} {where}: pair {p.label} {figure}",
                observed=figure, expected=f">= {fraction:g} x median" + (f", >= {floor_gbps:g} GB/s"
                                                                           if floor_gbps > 0 else ""),
                peer=peer, device=dev, peer_device=peer_dev,
                remedy=f"check the path between {p.host} and {p.peer}: cables, switch ports, "
                       f"ip -s link on both; rerun: preflight run --checks allreduce", **_figures(r, exp)))
            failed_busbw.add(host)
    for host in hosts:
        mine = [r for r in measured if host in (r.pair.host, r.pair.peer)]
        if not mine:
            continue
        if host not in failed_busbw:
            best = max(mine, key=lambda r: r.figure)
            figures = [r.figure for r in mine]
            unknown = sorted({_group_text(r.pair) for r in mine if r.pair.index not in exp})
            rated = [r.figure / exp[r.pair.index].gbps for r in mine if r.pair.index in exp]
            against = (f"; {min(rated):.2g}-{max(rated):.2g} of expected" if rated else "") + \
                (f"; no line rate known for the {', '.join(unknown)} pairs: judged against the other pairs only"
                 if unknown else "")
            findings.append(finding(
                "allreduce.busbw", host, Status.PASS,
                f"{len(mine)} pairs of {host} ok: best {best.figure:.3g} GB/s at "
                f"{size_text(best.size)}, median {median(figures):.3g} GB/s ({pattern}){against}",
                observed=f"median busbw {median(figures):.3g} GB/s"))
        if all(r.correct for r in mine):
            findings.append(finding("allreduce.correct", host, Status.PASS,
                                    f"all_reduce sums right in {len(mine)} pairs of {host}"))
    recovered_ids = {first.pair.index for first, _ in recovered} | {first.pair.index for first, _, _ in excused}
    for r in measured:
        if r.pair.index in slow_ids or r.pair.index in recovered_ids:
            continue  # its figures are on its allreduce.busbw fail (or warn) finding(s)
        p = r.pair
        findings.append(finding(
            "allreduce.pair", p.host, Status.PASS,
            f"{_named(p)} busbw {r.figure:.3g} GB/s at {size_text(r.size)} "
            f"({ratio_text(r.figure, exp.get(p.index))})",
            observed=f"busbw {r.figure:.3g} GB/s (algbw {r.algbw[r.size]:.3g}) at {size_text(r.size)}",
            peer=p.peer, device=p.device, peer_device=p.peer_device, **_figures(r, exp)))
    errored = {h for r in results if r.error is not None for h in (r.pair.host,)}
    for host in hosts:
        if host not in errored and any(host in (r.pair.host, r.pair.peer) for r in results):
            findings.append(finding("allreduce.run", host, Status.PASS,
                                    f"every pair led by {host} completed ({pattern})"))
    return findings


def _run_remedy(host: str, peer: str, error: str) -> str:
    """What to do about a pair that did not complete: a library that did not load, or the path between.

    >>> _run_remedy("a", "b", "rank 1 (b): ImportError: libhccl.so: cannot open shared object file")[:40]
    "source CANN's set_env.sh before the job "
    """
    if "cannot open shared object file" in error:
        return ("source CANN's set_env.sh before the job (hosts.yaml: setup: [source /usr/local/Ascend/ascend-toolkit/"
                "set_env.sh]) or install the library the error names on that host")
    return (f"check the firewall between {host} and {peer} (all TCP ports: gloo/nccl pick "
            f"ephemeral ones) and that torch runs on both: {host}$ python -c 'import torch'")


Endpoint = tuple[str, int]  # (host, device)


def _suspects(measured: Sequence[PairResult], slow_ids: set[int],
              hosts: Sequence[str]) -> tuple[dict[str, str], dict[Endpoint, str]]:
    """Hosts and devices slow with every partner (at least two), with their "slow/all" share.

    Every device of a pair is an endpoint, judged separately over its inter-host and its intra-host
    partners: it is bad when two or more partners of that kind are all slow with it. A host is the
    suspect when all its endpoints are bad for one kind (its NIC for inter, its bus for intra);
    otherwise its bad endpoints are suspect devices. With one device per host this is the host rule:
    slow with every partner host.
    """
    hosts_bad: dict[str, str] = {}
    devices_bad: dict[Endpoint, str] = {}
    for kind in ("inter", "intra"):
        partners: dict[Endpoint, set[Endpoint]] = defaultdict(set)
        slow_with: dict[Endpoint, set[Endpoint]] = defaultdict(set)
        for r in measured:
            p = r.pair
            if p.kind != kind:
                continue
            for a, b in (((p.host, p.device), (p.peer, p.peer_device)),
                         ((p.peer, p.peer_device), (p.host, p.device))):
                partners[a].add(b)
                if p.index in slow_ids:
                    slow_with[a].add(b)
        bad = {e for e, peers in partners.items() if len(peers) >= 2 and slow_with[e] == peers}
        for h in hosts:
            mine = [e for e in partners if e[0] == h]
            if mine and all(e in bad for e in mine):
                slow_n = sum(len(slow_with[e]) for e in mine)
                hosts_bad.setdefault(h, f"{slow_n}/{sum(len(partners[e]) for e in mine)}")
            else:
                devices_bad.update({e: f"{len(slow_with[e])}/{len(partners[e])}" for e in mine if e in bad})
    return hosts_bad, {e: share for e, share in devices_bad.items() if e[0] not in hosts_bad}


def _culprit(pair: Pair, hosts_bad: dict[str, str],
             devices_bad: dict[Endpoint, str]) -> tuple[str, int | None] | None:
    """(host, None) for a suspect host, (host, device) for a suspect device of ``pair``, else None."""
    for host, device in ((pair.host, pair.device), (pair.peer, pair.peer_device)):
        if host in hosts_bad:
            return host, None
        if (host, device) in devices_bad:
            return host, device
    return None


def _named(pair: Pair) -> str:
    """A pair as the report names it, with an intra pair's link class: ``node2:2<->node2:3 (NV2)``."""
    return f"{pair.label} ({pair.link})" if pair.link else pair.label


def _group_text(pair: Pair) -> str:
    """How the report names a pair's comparison class: "inter-host", "intra-host", "NV12 intra-host"."""
    return f"{pair.link} intra-host" if pair.link else f"{pair.kind}-host"


def _int(value: object) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return -1


def _float(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and value > 0:
        return float(value)
    return None


__all__ = ["PairResult", "confirm", "judge", "merge", "median", "parse_lines", "slow_pairs"]


def _figures(result: PairResult, expected: Mapping[int, Expected] | None = None) -> dict[str, Any]:
    """The machine-readable figures of a pair finding, at the size its verdict used (and its expected busbw)."""
    exp = (expected or {}).get(result.pair.index)
    return {"algbw_gbps": round(result.algbw.get(result.size, 0.0), 4), "busbw_gbps": round(result.figure, 4),
            "bytes": result.size, **({"expected_gbps": round(exp.gbps, 4)} if exp is not None else {})}
