"""--bisect offline (issue 41, part 2): the search driven round by round through the check's own planning and
judging, with simulated groups (a group runs at its slowest host's speed; a group with a blocked host hangs)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pytest
from test_allreduce import CHECK

from preflight.batch import ProbeOutput
from preflight.checks.base import EvalContext, Facts, StepOutcome
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status


def context(n: int, **params: Any) -> EvalContext:
    hosts = [Host(name=f"n{i}", address=f"10.0.0.{i}") for i in range(1, n + 1)]
    return EvalContext(ClusterSpec(accelerator="cpu", master="n1"), hosts,
                       {**CHECK.params, "mode": "bisect", "fraction": 0.5, **params})


def facts_of(ctx: EvalContext, speed_mbps: int = 10000, device: int = 0) -> dict[str, Facts]:
    return {h.name: {"torch": True, "torch_npu": False,
                     "nic": {"speeds": {"eth0": {"speed_mbps": speed_mbps, "device": bool(device), "devtype": ""}},
                             "addrs": {"eth0": [f"{h.address}/24"]}}} for h in ctx.hosts}


def lines(index: int, hosts: Sequence[str], busbw: float | None, blocked: set[str]) -> dict[str, str]:
    out = {}
    for rank, host in enumerate(hosts):
        if busbw is None:
            arrived = host not in blocked and not (rank > 0 and hosts[0] in blocked)
            line: dict[str, Any] = {"pair": index, "rank": rank, "sizes": [], "error": "DistStoreError: timeout",
                                    "arrived": arrived}
            if arrived:
                line["seen"] = [r for r, h in enumerate(hosts) if h not in blocked]
        else:
            line = {"pair": index, "rank": rank, "error": None, "arrived": True,
                    "sizes": [{"bytes": 4 << 20, "busbw_gbps": busbw, "algbw_gbps": busbw, "correct": True}]}
        out[host] = json.dumps(line)
    return out


def drive(ctx: EvalContext, slow: dict[str, float], blocked: set[str] = frozenset(),  # type: ignore[assignment]
          healthy: float = 1.0, facts: dict[str, Facts] | None = None) -> tuple[list[Finding], int, int]:
    """Run the search to its end: (findings, group runs, rounds)."""
    facts = facts or facts_of(ctx)
    outcomes: list[StepOutcome] = []
    runs = 0
    for _ in range(64):
        if not CHECK.followups(facts, ctx, outcomes):
            break
        _, groups, _ = CHECK.search(facts, ctx, outcomes)
        text: dict[str, str] = {}
        for g in groups:
            busbw = None if set(g.hosts) & set(blocked) else min(slow.get(h, healthy) for h in g.hosts)
            text.update(lines(g.index, g.hosts, busbw, set(blocked)))
        runs += len(groups)
        outcomes.append(StepOutcome({}, {h: {"ranks": ProbeOutput(t + "\n")} for h, t in text.items()}))
    return CHECK.judge(facts, outcomes, ctx), runs, len(outcomes)


def named(findings: list[Finding]) -> set[str]:
    return {str(f.host) for f in findings if f.status == Status.FAIL and f.check == "allreduce.busbw" and f.host}


@pytest.mark.parametrize("n", [8, 16, 32, 64])
def test_one_slow_host_named_within_the_run_bound(n: int) -> None:
    ctx = context(n)
    bad = f"n{n // 2 + 1}"
    findings, runs, _ = drive(ctx, {bad: 0.01})
    assert named(findings) == {bad}, [f.message for f in findings if f.status != Status.PASS]
    assert runs <= 2 * math.log2(n) + 4
    why = next(f for f in findings if f.host == bad and f.status == Status.FAIL)
    assert "named by --bisect" in why.message and "before: round 0" in why.message


def test_healthy_cluster_names_nobody_and_the_relative_rule_splits_once() -> None:
    findings, runs, rounds = drive(context(8), {})
    assert not [f for f in findings if f.status != Status.PASS]
    assert (runs, rounds) == (3, 2)  # no rate known: round 0 unjudged, its halves compared
    assert any("nobody named" in f.message for f in findings)


def test_healthy_cluster_with_a_known_rate_costs_one_run() -> None:
    findings, runs, _ = drive(context(8), {}, facts=facts_of(context(8), 1000, device=1))  # 1 GbE: 0.11 GB/s
    assert runs == 1 and not [f for f in findings if f.status != Status.PASS]
    root = next(f for f in findings if f.check == "allreduce.bisect")
    assert root.expected_gbps == 0.11 and root.group == tuple(f"n{i}" for i in range(1, 9)) and root.round == 0


def test_two_slow_hosts_and_a_hung_rank_are_named() -> None:
    ctx = context(8, nic_gbps=1.0)
    findings, runs, _ = drive(ctx, {"n2": 0.01, "n7": 0.01}, blocked={"n5"})
    assert named(findings) == {"n2", "n5", "n7"}, [f.message for f in findings if f.status != Status.PASS]
    hung = next(f for f in findings if f.host == "n5" and f.status == Status.FAIL)
    assert "its rank never arrived" in hung.message


def test_hung_rank_named_without_a_known_rate() -> None:
    findings, _, _ = drive(context(8), {}, blocked={"n1"})  # the store's own host: nobody reaches it
    assert named(findings) == {"n1"}, [f.message for f in findings if f.status != Status.PASS]


def test_a_uniformly_slow_cluster_is_flagged_against_the_interface_speed() -> None:
    ctx = context(8, nic_gbps=1.0)
    findings, runs, _ = drive(ctx, {}, healthy=0.0125)  # every link shaped to 100 Mbit/s
    assert named(findings) == set()
    shared = [f for f in findings if f.status == Status.FAIL and f.host is None]
    assert len(shared) == 1 and "a cause the hosts share" in shared[0].message
    assert runs == 7  # 1 + 2 + 4: four groups all slow


def test_a_small_uniformly_slow_cluster_is_flagged_though_no_round_has_four_groups() -> None:
    findings, _, _ = drive(context(4, nic_gbps=1.0), {}, healthy=0.0125)
    assert named(findings) == set()
    assert [f.host for f in findings if f.status == Status.FAIL] == [None]
