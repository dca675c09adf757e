"""Expected busbw from the hardware (issue 41, part 1): the table, the interface speed of gloo's hosts, and the
pair verdict read against it (uniformly slow pairs fail; no rate: said so, relative rule only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_allreduce import CHECK, context, run

from preflight.allreduce.expected import SHARES, expected, pcie_gbps
from preflight.allreduce.floor import Rates, host_expected
from preflight.allreduce.nic import parse_speeds
from preflight.checks.base import EvalContext
from preflight.model import Status

FIXTURE = Path(__file__).parent / "fixtures" / "allreduce" / "speeds.json"


@pytest.mark.parametrize("case", sorted(json.loads(FIXTURE.read_text())["cases"]))
def test_recorded_speeds_parse(case: str) -> None:
    recorded = json.loads(FIXTURE.read_text())["cases"][case]
    assert parse_speeds(recorded["output"]) == recorded["speeds"]


def test_every_class_has_a_source_or_says_it_has_none() -> None:
    assert set(SHARES) == {"rdma", "npu_roce", "nvlink", "pcie", "tcp", "hccs"}
    assert all(s.source and 0 < s.share <= 1 for shares in SHARES.values() for s in shares)
    assert SHARES["hccs"] == ()  # no rate read for HCCS: the relative rule judges


def test_expected_of_each_class() -> None:
    assert expected("rdma", 400 / 8).gbps == 48.0  # type: ignore[union-attr]
    assert expected("pcie", pcie_gbps(4, 16), size=16 << 20).gbps == 14.175  # type: ignore[union-attr]
    assert expected("pcie", pcie_gbps(4, 16), size=4 << 20) is None  # a GiB-message figure: not below 16 MiB
    assert expected("tcp", 100 / 8).gbps == 1.07  # type: ignore[union-attr]  # gloo's one thread, not 11 GB/s
    assert expected("tcp", 1 / 8).gbps == 0.11  # type: ignore[union-attr]
    assert expected("nvlink", 300.0, size=8 << 20) is None and expected("hccs", 100.0) is None


def nic_facts(speed: str, device: str) -> dict[str, object]:
    return {"speeds": parse_speeds(f"eth0 speed={speed} device={device} devtype=\n"),
            "addrs": {"eth0": ["10.0.0.1/24"]}}


def test_tcp_rate_from_a_real_nic_a_virtual_one_or_the_declared_rate() -> None:
    real = Rates("cpu", addresses={"n1": "10.0.0.1"}, nic={"n1": nic_facts("1000", "1")})
    exp, _ = host_expected(real, "n1")
    assert exp is not None and exp.gbps == 0.11 and "eth0: 1000 Mb/s" in exp.how
    veth = Rates("cpu", addresses={"n1": "10.0.0.1"}, nic={"n1": nic_facts("10000", "0")})
    assert host_expected(veth, "n1") == (None, "eth0 is a virtual interface (no device): its speed 10000 is no line "
                                               "rate")
    declared = Rates("cpu", addresses={"n1": "10.0.0.1"}, nic={"n1": nic_facts("10000", "0")}, nic_gbps=1.0)
    exp, _ = host_expected(declared, "n1")
    assert exp is not None and exp.gbps == 0.11 and "nic_gbps 1 Gb/s declared in hosts.yaml" in exp.how
    # a reported rate wins over the declared one
    exp, _ = host_expected(Rates("cpu", addresses={"n1": "10.0.0.1"}, nic={"n1": nic_facts("25000", "1")},
                                 nic_gbps=1.0), "n1")
    assert exp is not None and exp.gbps == 1.07


def cpu_context(n: int, nic_gbps: float = 0.0) -> EvalContext:
    return context(n, nic_gbps=nic_gbps)


def test_a_uniformly_slow_gloo_cluster_fails_against_the_declared_interface_speed() -> None:
    ctx = cpu_context(3, nic_gbps=1.0)  # 1 GbE: expected 0.11 GB/s, floor 0.4 x 0.11 = 0.044
    facts = {h.name: {"torch": True, "torch_npu": False, "nic": nic_facts("10000", "0")} for h in ctx.hosts}
    facts = {h: {**f, "nic": {**f["nic"], "addrs": {"eth0": [f"10.0.0.{i}/24"]}}}  # type: ignore[dict-item]
             for i, (h, f) in enumerate(facts.items(), 1)}
    slow = judge_with(ctx, facts, 0.0125)  # 100 Mbit/s shaping on every host: the pairs agree
    fails = [f for f in slow if f.status == Status.FAIL]
    assert {f.host for f in fails} == {"n1", "n2", "n3"}, [f.message for f in slow]
    assert all("0.11 of expected 0.11 GB/s" in (f.observed or "") for f in fails if f.peer)
    assert all(f.expected_gbps == 0.11 for f in fails if f.peer)
    healthy = judge_with(ctx, facts, 0.5)
    assert not [f for f in healthy if f.status != Status.PASS]
    assert all("of expected 0.11 GB/s" in f.message for f in healthy if f.check == "allreduce.pair")


def test_no_rate_known_says_so_and_the_relative_rule_judges() -> None:
    findings = run(cpu_context(3), {})
    assert not [f for f in findings if f.status != Status.PASS]
    busbw = [f for f in findings if f.check == "allreduce.busbw"]
    assert all("no line rate known for the inter-host pairs: judged against the other pairs only" in f.message
               for f in busbw), [f.message for f in busbw]


def judge_with(ctx: EvalContext, facts: dict[str, dict[str, object]], busbw: float) -> list:  # type: ignore[type-arg]
    from test_allreduce import line

    from preflight.batch import ProbeOutput
    from preflight.checks.base import StepOutcome

    outcomes = []
    for pairs in CHECK.rounds(facts, ctx):
        text: dict[str, list[str]] = {}
        for p in pairs:
            for rank, host in ((0, p.host), (1, p.peer)):
                text.setdefault(host, []).append(line(p, rank, busbw))
        outcomes.append(StepOutcome({}, {h: {"ranks": ProbeOutput("\n".join(t) + "\n")} for h, t in text.items()}))
    return CHECK.judge(facts, outcomes, ctx)
