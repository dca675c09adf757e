"""allreduce's confirmation (preflight.allreduce.confirm): a pair still slow alone is blamed only when a pair of its
class that was fine in the rounds, run alone right after it, did better.

Found in CI (tests/test_allreduce_npu_cluster.py, the tc-shaped node2, 2 shared cores at load 10-25): a healthy
HCCS pair on node1 (devices 0<->1) gave 0.144 GB/s at 256 KiB in its round while the other hosts' HCCS pairs gave
~0.5, was still below 0.3 x that reference alone, later, on the loaded box, and was failed.
"""

from __future__ import annotations

from test_allreduce import run_confirmed, topo_context

from preflight.allreduce.schedule import Pair
from preflight.allreduce.verdict import PairResult, judge
from preflight.checks.base import EvalContext
from preflight.model import Finding, Status

KiB256 = 1 << 18
HOSTS = ["node1", "node2", "node3"]
HCCS = {h: Pair(6 + k, "intra", h, 0, h, 1, 29606 + k, "HCCS") for k, h in enumerate(HOSTS)}
INTER = [Pair(i, "inter", a, d, b, d, 29600 + i) for i, (a, b, d) in enumerate(
    [("node2", "node3", 0), ("node2", "node3", 1), ("node1", "node3", 0), ("node1", "node3", 1),
     ("node1", "node2", 0), ("node1", "node2", 1)])]
FLOORS = {p.index: (0.048, "0.4 x expected 0.12 GB/s") for p in INTER}  # the simulated 1 GbE ports


def at(pair: Pair, gbps: float) -> PairResult:
    """A pair that measured 256 KiB only (the 1 MiB size did not fit the 2 s budget)."""
    return PairResult(pair, {KiB256: gbps}, {KiB256: gbps})


# The CI run's figures: node2 shaped to 20 Mbit/s, node1's HCCS pair at 0.144 beside 0.55 and 0.5 (reference 0.5).
ROUNDS = [at(p, f) for p, f in zip(INTER, [0.00183, 0.00074, 0.30, 0.25, 0.00235, 0.00238], strict=True)]
ROUNDS += [at(HCCS["node1"], 0.144), at(HCCS["node2"], 0.55), at(HCCS["node3"], 0.5)]
ALONE = {**{p.index: at(p, 0.0024) for p in INTER if "node2" in (p.host, p.peer)}, 6: at(HCCS["node1"], 0.13)}


def verdict(controls: dict[int, PairResult] | None) -> list[Finding]:
    return judge(ROUNDS, HOSTS, 0.3, 0.0, "every host pair", ALONE, FLOORS, None, controls)


def fails_without_node2(findings: list[Finding]) -> list[str]:
    return [f.message for f in findings if f.status == Status.FAIL and "node2" not in (f.host, f.peer)]


def test_the_ci_numbers_fail_the_healthy_hccs_pair_when_only_the_rounds_reference_judges_it() -> None:
    """No control (none ran): 0.13 GB/s alone is below 0.3 x 0.5, the reference from the rounds."""
    fails = fails_without_node2(verdict(None))  # one finding per device of the pair
    assert len(fails) == 2 and all("slow device pair on node1: pair node1:0<->node1:1" in f for f in fails)
    assert all("alone: 0.13 GB/s at 262144 B" in f for f in fails)


def test_a_control_as_slow_at_that_moment_excuses_the_hccs_pair_and_node2_is_still_named() -> None:
    controls = {6: at(HCCS["node3"], 0.2)}  # node3's HCCS pair alone right after: the box was slow then
    controls |= {p.index: at(INTER[2], 0.28) for p in INTER if "node2" in (p.host, p.peer)}
    findings = verdict(controls)
    assert fails_without_node2(findings) == []
    [warn] = [f for f in findings if f.status == Status.WARN]
    assert (warn.host, warn.device, warn.peer_device) == ("node1", 0, 1)
    assert "node3:0<->node3:1, gave 0.2 GB/s alone right after it" in warn.message
    assert "the hosts or the network were slow then, not this link" in warn.message
    assert [f.host for f in findings if f.status == Status.FAIL and f.peer is None] == ["node2"]
    shaped = [f for f in findings if f.status == Status.FAIL and f.peer is not None]
    assert len(shaped) == 4 and all("node1:0<->node3:0 right after: 0.28 GB/s" in f.message for f in shaped)


def test_a_pair_slow_beside_its_control_still_fails() -> None:
    """A slow HCCS link: slow in its round, alone, and below 0.3 x the control run right after it."""
    fails = fails_without_node2(verdict({6: at(HCCS["node3"], 0.5)}))
    assert len(fails) == 2 and all("node1:0<->node1:1" in f and "node3:0<->node3:1 right after: 0.5 GB/s" in f
                                   for f in fails)


def test_a_control_that_did_not_complete_keeps_the_verdict() -> None:
    failed = PairResult(HCCS["node3"], error="rank 1 (node3): DistStoreError: timed out")
    fails = fails_without_node2(verdict({6: failed}))
    assert len(fails) == 2 and all("node3:0<->node3:1 right after: no figure to compare" in f for f in fails)


def test_the_check_runs_a_control_right_after_a_pair_still_slow_alone_and_none_after_one_that_recovered() -> None:
    """Through the check's follow-ups (npu, 3 hosts x 2 devices, HCCS): node2's pairs alone each followed by an
    inter control (no host of node2), node1's HCCS pair alone followed by another host's HCCS pair."""
    base = topo_context(3, 2, "npu", {"npu": "A2"})
    ctx = EvalContext(base.cluster, base.hosts, {**base.params, "fraction": 0.3, "confirm_max": 8}, base.other_facts)
    shaped = {frozenset(("n1", "n2")): 0.0024, frozenset(("n2", "n3")): 0.0018}
    first = {**shaped, frozenset(("n1",)): 0.144, frozenset(("n2",)): 0.55, frozenset(("n3",)): 0.5}
    log: list[str] = []
    findings, alone_runs = run_confirmed(ctx, first, {**shaped, frozenset(("n1",)): 0.13}, control=0.2, log=log)
    assert alone_runs == 5
    assert log == ["n2:0<->n3:0", "n1:0<->n3:0 (control)", "n2:1<->n3:1", "n1:0<->n3:0 (control)",
                   "n1:0<->n2:0", "n1:0<->n3:0 (control)", "n1:1<->n2:1", "n1:0<->n3:0 (control)",
                   "n1:0<->n1:1", "n3:0<->n3:1 (control)"]
    assert [f.message for f in findings if f.status == Status.FAIL and "n2" not in (f.host, f.peer)] == []
    assert [f.host for f in findings if f.status == Status.FAIL and f.peer is None] == ["n2"]
    log.clear()
    findings, _ = run_confirmed(ctx, first, {**shaped, frozenset(("n1",)): 0.5}, control=0.2, log=log)
    assert "n3:0<->n3:1 (control)" not in log, "recovered alone: no control"
    findings, _ = run_confirmed(ctx, first, {**shaped, frozenset(("n1",)): 0.13}, control=0.5)
    assert {(f.host, f.device, f.peer_device) for f in findings
            if f.status == Status.FAIL and f.host == f.peer} == {("n1", 0, 1), ("n1", 1, 0)}, "beside a normal control"
