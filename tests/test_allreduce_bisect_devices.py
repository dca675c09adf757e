"""--bisect within a node (issue 41): the search over a host's devices driven round by round through the check's
own planning and judging, with simulated groups: a group of one host's devices runs at its best ring's slowest link
(the mixed topology of tests/test_allreduce_gpu_cluster.py: NVLink pairs, a PCIe switch, across sockets), a group
across hosts at the network's speed."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from test_allreduce import CHECK
from test_allreduce_bisect import lines

from preflight.allreduce.bisect import Group, GroupResult, Judged, Search
from preflight.allreduce.bisect_devices import judge_round, next_groups, split
from preflight.allreduce.expected import Expected
from preflight.batch import ProbeOutput
from preflight.checks.base import EvalContext, Facts, StepOutcome
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

LINKS = {"0-1": "NV2", "2-3": "NV2", "0-2": "PIX", "1-3": "PIX", "0-3": "SYS", "1-2": "SYS"}
RATE = {"NV2": 0.04, "PIX": 0.012, "SYS": 0.008}  # the CUDA simulator's (tests/sim/python_cuda)


def links8() -> dict[str, str]:
    """8 GPUs: NV2 within 0-1, 2-3, 4-5, 6-7; PIX within 0-3 and 4-7; SYS across."""
    return {f"{i}-{j}": "NV2" if i // 2 == j // 2 else "PIX" if i // 4 == j // 4 else "SYS"
            for i in range(8) for j in range(i + 1, 8)}


def context(n: int, devices: int = 4, links: Mapping[str, str] = LINKS, **params: Any) -> EvalContext:
    hosts = [Host(name=f"n{i}", address=f"10.0.0.{i}") for i in range(1, n + 1)]
    rows: dict[str, dict[str, str]] = {}
    for pair, cls in links.items():
        i, j = pair.split("-")
        rows.setdefault(f"GPU{i}", {})[f"GPU{j}"] = cls
        rows.setdefault(f"GPU{j}", {})[f"GPU{i}"] = cls
    topo = {h.name: {"topology": {"rows": rows}} for h in hosts}
    return EvalContext(ClusterSpec(accelerator="gpu", master="n1", devices_per_host=devices), hosts,
                       {**CHECK.params, "mode": "bisect", **params}, {"gpu.devices": topo})


def ring(devs: Sequence[int], links: Mapping[str, str], degraded: Mapping[str, float]) -> float:
    """The busbw of the best ring over ``devs`` (as NCCL searches for it): the highest of every ring's slowest link."""
    def rate(i: int, j: int) -> float:
        k = f"{min(i, j)}-{max(i, j)}"
        return RATE[links[k]] * degraded.get(k, 1.0)
    if len(devs) == 2:
        return rate(*devs)
    first, *rest = devs
    return max(min(rate(a, b) for a, b in zip((first, *order), (*order, first), strict=True))
               for order in itertools.permutations(rest))


def drive(ctx: EvalContext, degraded: Mapping[str, Mapping[str, float]] | None = None,
          links: Mapping[str, str] = LINKS, hung: Sequence[str] = (),
          passing: Sequence[str] = (), once: Sequence[str] = ()) -> tuple[list[Finding], list[list[Group]]]:
    """Run both searches to their end: (findings, every round's groups). ``degraded``: host -> {"i-j": factor};
    ``passing``: units (``host/device``) whose host's degradation is gone once they ran one confirming pair (a busy
    moment of the box, not a fault); ``once``: hosts degraded in their first within-node group only (contention)."""
    facts: dict[str, Facts] = {h.name: {"torch": True, "torch_npu": False, "nic": {"speeds": {}, "addrs": {}}}
                               for h in ctx.hosts}
    outcomes: list[StepOutcome] = []
    rounds: list[list[Group]] = []
    for _ in range(64):
        if not CHECK.followups(facts, ctx, outcomes):
            break
        _, _, groups = CHECK.searches(facts, ctx, outcomes)
        per_host: dict[str, list[str]] = {}
        for g in groups:
            within = "/" in g.hosts[0]
            places = [split(m) for m in g.hosts] if within else [(h, 0) for h in g.hosts]
            host = places[0][0]
            dead = within and any(m in hung for m in g.hosts)
            over = any(m in passing and any(p.suspect == m for r in rounds for p in r) for m in g.hosts) or \
                within and host in once and any("/" in p.hosts[0] and split(p.hosts[0])[0] == host
                                                for r in rounds for p in r)
            busbw = None if dead else ring([d for _, d in places], links,
                                           {} if over else (degraded or {}).get(host, {})) if within else 1.0
            for name, text in lines(g.index, g.hosts, busbw, set(hung)).items():
                per_host.setdefault(split(name)[0] if within else name, []).append(text)
        rounds.append(groups)
        outcomes.append(StepOutcome({}, {h: {"ranks": ProbeOutput("\n".join(t) + "\n")} for h, t in per_host.items()}))
    return CHECK.judge(facts, outcomes, ctx), rounds


def problems(findings: list[Finding]) -> list[str]:
    return [f.message for f in findings if f.status != Status.PASS]


def named(findings: list[Finding]) -> set[tuple[str, int | None]]:
    return {(str(f.host), f.device) for f in findings if f.status == Status.FAIL and f.check == "allreduce.busbw"}


def test_a_healthy_mixed_topology_names_nobody_in_one_within_node_round() -> None:
    findings, rounds = drive(context(4))
    assert problems(findings) == []
    within = [r for r in rounds if "/" in r[0].hosts[0]]
    assert len(within) == 1 and [g.hosts for g in within[0]] == [tuple(f"n{i}/{d}" for d in range(4))
                                                                 for i in range(1, 5)]
    assert any("nobody named by --bisect within the nodes" in f.message for f in findings)


def test_a_degraded_device_is_named_with_its_host() -> None:
    bad = {"n3": {"0-3": 0.25, "1-3": 0.25, "2-3": 0.25}}  # every link of device 3 at a quarter
    findings, rounds = drive(context(4), bad)
    assert named(findings) == {("n3", 3)}, problems(findings)
    fail = next(f for f in findings if f.status == Status.FAIL)
    assert "n3 device 3 named by --bisect within the node" in fail.message and fail.peer_device in (0, 1)
    cleared = [f for f in findings if f.status == Status.WARN and f.check == "allreduce.busbw"]
    assert [(f.host, f.device) for f in cleared] == [("n3", 2)], "device 2 was a suspect, cleared by its partner"
    within = [r for r in rounds if "/" in r[0].hosts[0]]
    # the whole nodes; n3's again; its halves (+ the same halves on a known-good host); 2 pairs (+ refs); device 3
    # once more
    assert len(within) == 5 and [g.suspect for g in within[4] if g.suspect] == ["n3/3"]
    assert [(g.hosts, g.again) for g in within[1]] == [(tuple(f"n3/{d}" for d in range(4)), True)]
    refs = [g for g in within[2] if g.reference]
    assert [split(g.hosts[0])[0] for g in refs] == ["n1", "n1"] and len(within[2]) == 4


def test_a_device_slow_once_with_a_known_good_device_and_normal_the_second_time_is_not_named() -> None:
    """A busy moment that slowed device 3's groups and its first confirming pair is over by its second: not named."""
    bad = {"n3": {"0-3": 0.25, "1-3": 0.25, "2-3": 0.25}}
    findings, rounds = drive(context(4), bad, passing=["n3/3"])
    assert named(findings) == set(), problems(findings)
    warned = [f for f in findings if f.status == Status.WARN and f.check == "allreduce.busbw" and f.device == 3]
    assert len(warned) == 1 and "slow with known-good device" in warned[0].message and "not named" in warned[0].message
    assert [g.suspect for r in rounds for g in r if g.suspect == "n3/3"] == ["n3/3", "n3/3"]


def test_a_host_group_slow_once_and_normal_run_again_is_a_contention_warning_not_split() -> None:
    """A busy moment that slowed n2's whole group is over when it runs again: one warn (normal again), no split,
    nobody named, and its first row a pass."""
    bad = {"n2": {"0-3": 0.2, "1-3": 0.2, "2-3": 0.2}}
    findings, rounds = drive(context(3), bad, once=["n2"])
    assert named(findings) == set(), problems(findings)
    within = [r for r in rounds if "/" in r[0].hosts[0]]
    assert len(within) == 2 and [(g.hosts, g.again) for g in within[1]] == [(tuple(f"n2/{d}" for d in range(4)), True)]
    inside = [m for m in problems(findings) if "(within " in m or "device" in m]  # not the search across hosts'
    assert len(inside) == 1 and "slow once, normal again" in inside[0], inside
    first = [f for f in findings if f.check == "allreduce.bisect" and f.group == within[1][0].hosts]
    assert [(f.round, f.status) for f in first] == [(within[0][0].round, Status.PASS),
                                                   (within[1][0].round, Status.WARN)]
    assert "slow" in first[0].message and "run again" in first[0].message
    from rich.console import Console

    from preflight.cli import rounds_table
    from preflight.model import Report

    console = Console(width=200, record=True)
    console.print(rounds_table(Report([], findings, ["allreduce"], "2026-11-28T00:00:00Z", 1.0)))
    assert "n2 devices 0-3 (run again)" in console.export_text()
    assert any("nobody named by --bisect within the nodes" in f.message for f in findings)


def test_halves_are_compared_with_the_same_halves_not_with_each_other() -> None:
    """A half of NVLink devices and a half across sockets differ by design: neither is slow for it."""
    links = {"0-1": "NV2", "2-3": "SYS", "0-2": "PIX", "1-3": "PIX", "0-3": "SYS", "1-2": "SYS"}
    bad = {"n2": {"0-1": 0.1, "0-2": 0.1}}  # device 0 degraded: the whole and the half 0-1 slow; 2-3 (SYS) fine
    findings, _ = drive(context(3), bad, links=links)
    assert named(findings) == {("n2", 0)}, problems(findings)
    halves = [f for f in findings if f.check == "allreduce.bisect" and f.group and len(f.group) == 2
              and f.round is not None and "confirming" not in f.message]
    assert {f.status for f in halves if f.group == ("n2/2", "n2/3")} == {Status.PASS}, [f.message for f in halves]


def test_eight_devices_one_degraded_named_in_six_rounds() -> None:
    links = links8()
    bad = {"n2": {k: 0.2 for k in links if "5" in k.split("-")}}
    findings, rounds = drive(context(2, devices=8, links=links), bad, links=links)
    assert named(findings) == {("n2", 5)}, problems(findings)
    assert len([r for r in rounds if "/" in r[0].hosts[0]]) == 6  # 8, 8 again, 4, 2, the pairs, the slow pair again


def test_a_degraded_link_between_two_good_devices_is_a_warning_not_a_name() -> None:
    findings, _ = drive(context(2), {"n2": {"2-3": 0.1}})
    assert named(findings) == set()
    link = [f for f in findings if "the link between devices 2 and 3 of n2" in f.message]
    assert len(link) == 1 and link[0].status == Status.WARN


def test_a_hung_device_is_named() -> None:
    findings, _ = drive(context(3), hung=["n1/1"])
    assert named(findings) == {("n1", 1)}, problems(findings)
    assert "its rank never arrived" in next(f for f in findings if f.status == Status.FAIL).message


def test_one_host_and_no_rate_is_not_judged() -> None:
    findings, rounds = drive(context(1))
    assert named(findings) == set() and len(rounds) == 1
    assert any("not judged" in f.message for f in findings if f.check == "allreduce.bisect")


def test_one_device_per_host_adds_no_within_node_round() -> None:
    _, rounds = drive(context(4, devices=1))
    assert all("/" not in g.hosts[0] for r in rounds for g in r)


def test_a_group_is_never_compared_with_other_devices_or_other_links() -> None:
    """Two hosts' groups of the same devices compare; the same devices with other link classes do not."""
    same = {"a": "NV2", "b": "NV2"}
    other = {"a": "NV2", "b": "SYS"}
    for topo, expect in ((same, "slow"), (other, "unjudged")):
        def link(h: str, i: int, j: int, t: dict[str, str] = topo) -> str:
            return t[h]
        rs = [GroupResult(Group(i, 0, (f"{h}/0", f"{h}/1"), 1), busbw=b) for i, (h, b) in enumerate((("a", 1.0),
                                                                                                    ("b", 0.2)))]
        judged = judge_round(rs, lambda h, d, s: None, link, 0.8, 0.4)
        assert judged[1].verdict == expect


def test_a_round_of_four_whole_nodes_all_below_expected_is_a_shared_cause() -> None:
    s = Search()
    first = next_groups({f"h{i}": 4 for i in range(4)}, s, lambda h, i, j: "NV2", 1)
    s.rounds.append([Judged(GroupResult(g, busbw=0.1), "slow", "") for g in first])
    assert next_groups({f"h{i}": 4 for i in range(4)}, s, lambda h, i, j: "NV2", 1) == [] and s.shared


def test_four_slow_hosts_of_six_slow_again_are_searched_not_a_shared_cause() -> None:
    """Only every whole-node group of the first round slow is a shared cause: four of six hosts slow, and slow again
    when run once more, are split into halves, each host on its own."""
    counts = {f"h{i}": 4 for i in range(6)}
    s = Search()
    first = next_groups(counts, s, lambda h, i, j: "NV2", 1)
    s.rounds.append([Judged(GroupResult(g, busbw=0.1 if k < 4 else 1.0), "slow" if k < 4 else "ok", "")
                     for k, g in enumerate(first)])
    again = next_groups(counts, s, lambda h, i, j: "NV2", 1)
    assert [g.again for g in again] == [True] * 4 and not s.shared
    s.rounds.append([Judged(GroupResult(g, busbw=0.1), "slow", "") for g in again])
    halves = [g for g in next_groups(counts, s, lambda h, i, j: "NV2", 1) if not g.reference]
    assert not s.shared and len(halves) == 8 and all(len(g.hosts) == 2 for g in halves)


def test_within_node_groups_run_each_host_s_ranks_on_their_own_devices() -> None:
    ctx = context(2)
    facts: dict[str, Facts] = {h.name: {"torch": True} for h in ctx.hosts}
    group = Group(7, 3, ("n2/0", "n2/1", "n2/2", "n2/3"), 29611)
    step = CHECK._group_step([group], {h.name: h for h in ctx.hosts}, ctx)
    (probe,) = step.foreground["n2"]
    assert list(step.foreground) == ["n2"] and probe.command.count("PF_DEVICE=") == 4
    for d in range(4):
        assert f"PF_DEVICE={d}" in probe.command and f"LOCAL_RANK={d}" in probe.command
    assert "MASTER_ADDR=10.0.0.2" in probe.command and probe.command.endswith("& wait")
    assert json.loads(CHECK.spec(ctx))["backend"] == "nccl" and facts


def test_a_fault_between_the_halves_is_a_warning_not_a_name() -> None:
    """Device 3's PCIe and cross-socket paths degraded, its NVLink to device 2 not: the whole node is slow, both
    halves (NVLink pairs) fine."""
    findings, _ = drive(context(2), {"n2": {"0-3": 0.25, "1-3": 0.25}})
    assert named(findings) == set()
    between = [f for f in findings if "the fault lies on a link between them" in f.message]
    assert len(between) == 1 and between[0].host == "n2" and between[0].status == Status.WARN


def test_the_terminal_table_shows_the_within_node_rounds_by_host_and_devices() -> None:
    from rich.console import Console

    from preflight.cli import rounds_table
    from preflight.model import Report

    findings, _ = drive(context(2), {"n2": {"0-3": 0.25, "1-3": 0.25, "2-3": 0.25}})
    console = Console(width=200, record=True)
    console.print(rounds_table(Report([], findings, ["allreduce"], "2026-11-27T00:00:00Z", 1.0)))
    text = console.export_text()
    for row in ("n2 devices 0-3", "n1 devices 0-3", "n2 devices 2,3 ", "n1 devices 2,3 (reference)",
                "n2 devices 1,3 (confirming device 3)"):
        assert row in text, text
    assert any("n1 devices 0,1 (reference)" in line and "│ ok, 0.04 GB/s" in line for line in text.splitlines()), text


def test_two_devices_per_host_leave_a_slow_pair_unconfirmed_not_named() -> None:
    findings, _ = drive(context(3, devices=2, links={"0-1": "NV2"}), {"n2": {"0-1": 0.1}}, links={"0-1": "NV2"})
    assert named(findings) == set()
    assert sorted((f.host, f.device) for f in findings if "no known-good device of its host" in f.message) == \
        [("n2", 0), ("n2", 1)]


def test_a_group_below_its_expected_busbw_is_slow_though_no_host_compares() -> None:
    exp = Expected(0.02, "0.6 x NV2")
    r = GroupResult(Group(0, 2, ("a/0", "a/1"), 1), busbw=0.005, size=64 << 20)
    ok = GroupResult(Group(1, 2, ("a/2", "a/3"), 1), busbw=0.019, size=64 << 20)
    judged = judge_round([r, ok], lambda h, d, s: exp, lambda h, i, j: "NV2" if i // 2 == j // 2 else "SYS", 0.8, 0.4)
    assert [j.verdict for j in judged] == ["slow", "ok"]
    assert judged[0].why == "0.005 GB/s below 0.4 x expected 0.02 GB/s (0.6 x NV2)"
    assert judged[1].why == "0.019 GB/s, 0.95 of expected 0.02 GB/s"


def test_cpu_slots_are_not_searched_within_a_node() -> None:
    ctx = context(2)
    cpu = EvalContext(ClusterSpec(accelerator="cpu", master="n1", devices_per_host=4), ctx.hosts, ctx.params)
    _, rounds = drive(cpu)
    assert all("/" not in g.hosts[0] for r in rounds for g in r)


def test_a_910a_host_group_hccl_refuses_is_not_run_and_says_why() -> None:
    """HCCL on Atlas training (910A) takes 1, 2, 4 or 8 devices of a server (2 or 4 inside one HCCS group): with 6
    devices per host no within-node group is planned (the torch_npu simulator refuses it as HCCL does), and each
    host says why; with 4 (NPUs 0-3, one HCCS group) the search runs."""
    def npu(devices: int) -> EvalContext:
        ctx = context(2, devices=devices)
        return EvalContext(ClusterSpec(accelerator="npu", master="n1", devices_per_host=devices), ctx.hosts,
                           ctx.params, {"npu": {h.name: {"generation": "910A"} for h in ctx.hosts}})
    findings, rounds = drive(npu(6))
    assert all("/" not in g.hosts[0] for r in rounds for g in r)
    skipped = [f for f in findings if f.check == "allreduce.bisect" and f.status == Status.SKIP]
    assert sorted(str(f.host) for f in skipped) == ["n1", "n2"]
    assert all("1, 2, 4 or 8 devices" in f.message and "not 6" in f.message for f in skipped)
    assert named(findings) == set()
    findings, rounds = drive(npu(4))  # the simulated rates of LINKS; the check plans by 910A's HCCS classes
    assert any("/" in g.hosts[0] for r in rounds for g in r)
    assert not [f for f in findings if f.status == Status.SKIP]
