"""allreduce offline: the circle schedule (property test), the planned commands, and the verdict."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import combinations
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from preflight.allreduce.schedule import Pair, circle_rounds, matching_rounds, plan, ring_rounds
from preflight.allreduce.verdict import PairResult, judge, merge, parse_lines
from preflight.batch import ProbeOutput
from preflight.checks.allreduce import AllreduceCheck
from preflight.checks.base import EvalContext, Facts, StepOutcome
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

CHECK = AllreduceCheck()


@given(st.integers(min_value=2, max_value=33))
def test_circle_schedule_covers_every_pair_once(n: int) -> None:
    rounds = circle_rounds(n)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    seen = [frozenset(p) for r in rounds for p in r]
    assert sorted(map(sorted, seen)) == sorted(map(sorted, map(frozenset, combinations(range(n), 2))))
    for r in rounds:
        members = [h for p in r for h in p]
        assert len(members) == len(set(members)), "a host twice in one round"
        assert len(r) == n // 2


@given(st.integers(min_value=1, max_value=9), st.integers(min_value=1, max_value=4))
def test_plan_ports_unique_and_devices_paired(n: int, devices: int) -> None:
    hosts = [f"h{i}" for i in range(n)]
    pairs = [p for r in plan(hosts, devices, 29499, avoid=[29500]) for p in r]
    assert len({p.port for p in pairs}) == len(pairs) and 29500 not in {p.port for p in pairs}
    inter = [p for p in pairs if p.kind == "inter"]
    intra = [p for p in pairs if p.kind == "intra"]
    assert len(inter) == n * (n - 1) // 2 * devices and all(p.device == p.peer_device for p in inter)
    assert len(intra) == n * devices * (devices - 1) // 2 and all(p.host == p.peer for p in intra)


def context(n: int, devices: int = 1, accelerator: str = "cpu", **params: Any) -> EvalContext:
    hosts = [Host(name=f"n{i}", address=f"10.0.0.{i}", env={"NCCL_DEBUG": "INFO"}) for i in range(1, n + 1)]
    return EvalContext(ClusterSpec(accelerator=accelerator, devices_per_host=devices, master="n1"), hosts,
                       {**CHECK.params, **params})


def torch_facts(ctx: EvalContext) -> dict[str, Facts]:
    return {h.name: {"torch": True, "torch_npu": False} for h in ctx.hosts}


def line(pair: Pair, rank: int, busbw: float, correct: bool = True, error: str | None = None,
         top: int = 4 << 20) -> str:
    sizes = [{"bytes": 1 << 20, "time_s": 0.001, "algbw_gbps": busbw * 2, "busbw_gbps": busbw * 2, "correct": True},
             {"bytes": top, "time_s": 0.004, "algbw_gbps": busbw, "busbw_gbps": busbw, "correct": correct}]
    return json.dumps({"pair": pair.index, "rank": rank, "sizes": [] if error else sizes, "error": error})


def run(ctx: EvalContext, speed: dict[frozenset[str], float] | Callable[[Pair], float],
        errors: frozenset[frozenset[str]] = frozenset(),
        wrong: frozenset[frozenset[str]] = frozenset(), top: int = 4 << 20) -> list[Finding]:
    """Judge a simulated run: pair (host set, or a function of the pair) -> busbw at sizes up to ``top`` bytes;
    pairs in ``errors`` fail."""
    facts = torch_facts(ctx)
    outcomes = []
    for pairs in CHECK.rounds(facts, ctx):
        text: dict[str, list[str]] = {}
        for p in pairs:
            key = frozenset((p.host, p.peer))
            busbw = speed(p) if callable(speed) else speed.get(key, 1.0)
            for rank, host in ((0, p.host), (1, p.peer)):
                err = "DistStoreError: timed out" if key in errors else None
                text.setdefault(host, []).append(line(p, rank, busbw, key not in wrong, err, top))
        outcomes.append(StepOutcome({}, {h: {"ranks": ProbeOutput("\n".join(t) + "\n")} for h, t in text.items()}))
    return CHECK.judge(facts, outcomes, ctx)


def run_confirmed(ctx: EvalContext, first: dict[frozenset[str], float], alone: dict[frozenset[str], float],
                  control: float = 1.0, log: list[str] | None = None) -> tuple[list[Finding], int]:
    """Rounds at ``first`` speeds, then the check's follow-up steps until it plans no more: slow pairs alone at
    ``alone`` speeds, controls (pairs fine in the rounds, run after one still slow alone) at ``control``. Returns
    the findings and how many slow pairs ran alone; ``log`` gets each follow-up's pair label, controls marked."""
    facts = torch_facts(ctx)
    outcomes = []
    for pairs in CHECK.rounds(facts, ctx):
        text: dict[str, list[str]] = {}
        for p in pairs:
            for rank, host in ((0, p.host), (1, p.peer)):
                text.setdefault(host, []).append(line(p, rank, first.get(frozenset((p.host, p.peer)), 1.0)))
        outcomes.append(StepOutcome({}, {h: {"ranks": ProbeOutput("\n".join(t) + "\n")} for h, t in text.items()}))
    again = {r.pair.index: r.pair for r in CHECK.first_results(facts, ctx, outcomes)[1]}
    every = {p.index: p for r in CHECK.rounds(facts, ctx) for p in r}
    alone_runs = 0
    while followups := CHECK.followups(facts, ctx, outcomes):
        for step in followups:
            text = {}
            for host, probes in step.foreground.items():
                index = int(probes[0].command.split("PF_PAIR=")[1].split()[0])
                pair = every[index]
                assert len(step.foreground) == len({pair.host, pair.peer}), "a pair alone: its hosts only"
                speed = alone.get(frozenset((pair.host, pair.peer)), 1.0) if index in again else control
                text[host] = [line(pair, rank, speed) for rank, on in enumerate((pair.host, pair.peer)) if on == host]
            alone_runs += index in again
            (log if log is not None else []).append(pair.label + ("" if index in again else " (control)"))
            outcomes.append(StepOutcome({}, {h: {"ranks": ProbeOutput("\n".join(t) + "\n")}
                                             for h, t in text.items()}))
    return CHECK.judge(facts, outcomes, ctx), alone_runs


def test_a_pair_slow_once_but_normal_alone_is_a_warning_not_a_fail() -> None:
    ctx = context(4)
    findings, confirmations = run_confirmed(ctx, {frozenset(("n3", "n4")): 0.4}, {})
    assert confirmations == 1
    assert not [f for f in findings if f.status == Status.FAIL]
    [warn] = [f for f in findings if f.status == Status.WARN]
    assert {warn.host, warn.peer} == {"n3", "n4"} and "normal alone" in warn.message
    assert "ECMP" in warn.message and warn.busbw_gbps == 1.0, "the figure is the one measured alone"
    assert statuses(findings, "allreduce.busbw")["n1"] == Status.PASS


def test_a_pair_still_slow_alone_fails_and_a_slow_host_is_still_named() -> None:
    ctx = context(4)
    slow = {frozenset(("n1", "n2")): 0.3}
    findings, confirmations = run_confirmed(ctx, slow, slow)
    assert confirmations == 1
    assert sorted((f.host, f.peer) for f in findings if f.status == Status.FAIL) == [("n1", "n2"), ("n2", "n1")]
    host = {frozenset(("n3", x)): 0.1 for x in ("n1", "n2", "n4")}
    findings, confirmations = run_confirmed(ctx, host, host)
    assert confirmations == 3 and not [f for f in findings if f.status == Status.WARN]
    assert [f.host for f in findings if f.status == Status.FAIL and f.peer is None] == ["n3"]


def test_a_pair_is_judged_alone_at_the_size_it_was_found_slow_at() -> None:
    """Found in CI (loaded box): the alone run reached a larger size than the round, where only one pair of the
    class had a figure; judged there against that one pair, a healthy pair stayed slow and was failed."""
    MiB = 1 << 20
    pairs = [Pair(0, "inter", "n1", 0, "n2", 0, 29600), Pair(1, "inter", "n3", 0, "n4", 0, 29601),
             Pair(2, "inter", "n1", 0, "n3", 0, 29602), Pair(3, "inter", "n2", 0, "n4", 0, 29603)]
    rounds = [PairResult(pairs[0], {MiB: 1.0, 4 * MiB: 2.0}, {MiB: 1.0, 4 * MiB: 2.0}),
              PairResult(pairs[1], {MiB: 0.2}, {MiB: 0.2})]
    rounds += [PairResult(p, {MiB: 1.0}, {MiB: 1.0}) for p in pairs[2:]]
    alone = {1: PairResult(pairs[1], {MiB: 0.9, 4 * MiB: 0.5}, {MiB: 0.9, 4 * MiB: 0.5})}
    findings = judge(rounds, ["n1", "n2", "n3", "n4"], 0.8, 0.0, "all", alone)
    assert not [f for f in findings if f.status == Status.FAIL]
    [warn] = [f for f in findings if f.status == Status.WARN]
    assert "normal alone (0.9 GB/s at 1 MiB)" in warn.message
    still = {1: PairResult(pairs[1], {MiB: 0.3, 4 * MiB: 0.5}, {MiB: 0.3, 4 * MiB: 0.5})}
    failed = judge(rounds, ["n1", "n2", "n3", "n4"], 0.8, 0.0, "all", still)
    assert {f.host for f in failed if f.status == Status.FAIL} == {"n3", "n4"}


def test_confirmations_are_capped_worst_first_and_an_unconfirmed_pair_is_not_blamed_alone() -> None:
    """Found on the bench (10 healthy runs, 6 hosts): a pair past confirm_max, slow only from contention,
    was failed without being measured again."""
    ctx = context(6, confirm_max=2)
    slow = {frozenset(("n1", "n2")): 0.5, frozenset(("n3", "n4")): 0.2, frozenset(("n5", "n6")): 0.3}
    findings, confirmations = run_confirmed(ctx, slow, {})
    assert confirmations == 2
    warned = {frozenset((str(f.host), str(f.peer))): f.message for f in findings if f.status == Status.WARN}
    assert set(warned) == set(slow), "two recovered alone, the third was never measured again"
    assert "normal alone" in warned[frozenset(("n3", "n4"))]
    assert "not measured again alone" in warned[frozenset(("n1", "n2"))]
    assert not [f for f in findings if f.status == Status.FAIL]


def test_an_unconfirmed_pair_next_to_a_pair_confirmed_slow_is_still_blamed() -> None:
    ctx = context(6, confirm_max=2)
    slow = {frozenset(("n1", "n2")): 0.2, frozenset(("n1", "n3")): 0.3, frozenset(("n1", "n4")): 0.5}
    findings, confirmations = run_confirmed(ctx, slow, slow)  # n1 is bad; n1-n4 is not re-measured
    assert confirmations == 2
    failed = {frozenset((str(f.host), str(f.peer))) for f in findings if f.status == Status.FAIL and f.peer}
    assert failed == set(slow)


def test_a_host_paired_once_with_a_bad_host_does_not_drag_its_other_pairs_down() -> None:
    ctx = context(6, confirm_max=1)  # n2-n1 confirmed slow; n1-n3 slow from contention, never re-measured
    findings, _ = run_confirmed(ctx, {frozenset(("n1", "n2")): 0.2, frozenset(("n1", "n3")): 0.5},
                                {frozenset(("n1", "n2")): 0.2})
    failed = {frozenset((str(f.host), str(f.peer))) for f in findings if f.status == Status.FAIL and f.peer}
    assert frozenset(("n1", "n3")) not in failed


def statuses(findings: list[Finding], check: str) -> dict[str | None, Status]:
    found: dict[str | None, Status] = {}
    for f in findings:
        if f.check == check:
            found[f.host] = Status.worst([found.get(f.host, Status.SKIP), f.status])
    return found


def test_steps_one_probe_per_host_per_round_in_the_jobs_env() -> None:
    ctx = context(4, accelerator="gpu")
    steps = CHECK.steps(torch_facts(ctx), ctx)
    assert len(steps) == 3
    for step in steps:
        assert set(step.foreground) == {"n1", "n2", "n3", "n4"} and not step.background
        command = step.foreground["n1"][0].command
        assert command.startswith("env ") and "env -i" not in command and command.endswith(" & wait")
        assert "NCCL_ALGO=Ring" in command and "NCCL_DEBUG=INFO" in command and " WORLD_SIZE=2 " in command
        assert '"backend":"nccl"' in command


def test_intra_pairs_with_several_devices() -> None:
    ctx = context(2, devices=4)
    steps = CHECK.steps(torch_facts(ctx), ctx)
    assert len(steps) == 1 + 3  # one inter round, then 3 intra rounds
    assert steps[0].foreground["n1"][0].command.count("WORLD_SIZE=2") == 4  # devices 0..3 to the partner
    assert steps[1].foreground["n2"][0].command.count("WORLD_SIZE=2") == 4  # two pairs, two ranks each


def test_healthy_cluster_passes_every_host() -> None:
    ctx = context(4)
    findings = run(ctx, {})
    assert {f.status for f in findings} == {Status.PASS}
    assert statuses(findings, "allreduce.busbw") == {f"n{i}": Status.PASS for i in range(1, 5)}
    assert "circle schedule" in findings[0].message or any("circle" in f.message for f in findings)
    pairs = [f for f in findings if f.check == "allreduce.pair"]
    assert {frozenset((str(f.host), str(f.peer))) for f in pairs} == \
        {frozenset((f"n{a}", f"n{b}")) for a, b in combinations(range(1, 5), 2)}
    assert len(pairs) == 6 and all(f.status == Status.PASS for f in pairs)
    for f in pairs:
        assert (f.busbw_gbps, f.algbw_gbps, f.bytes, f.device, f.peer_device) == (1.0, 1.0, 4 << 20, 0, 0)
        assert f.message == f"allreduce.pair: {f.host}:0<->{f.peer}:0 busbw 1 GB/s at 4 MiB (no line rate known)"
        assert f.to_dict()["busbw_gbps"] == 1.0 and f.to_dict()["bytes"] == 4 << 20


def test_host_slow_with_every_partner_is_the_suspect() -> None:
    ctx = context(4)
    findings = run(ctx, {frozenset(("n3", x)): 0.1 for x in ("n1", "n2", "n4")})
    assert statuses(findings, "allreduce.busbw") == {"n1": Status.PASS, "n2": Status.PASS, "n3": Status.FAIL,
                                                    "n4": Status.PASS}
    fails = [f for f in findings if f.status == Status.FAIL]
    assert [f.peer for f in fails if f.peer is None] == [None]
    assert sorted(str(f.peer) for f in fails if f.peer) == ["n1", "n2", "n4"]
    pair = next(f for f in fails if f.peer)
    assert pair.observed is not None and "busbw 0.1 GB/s" in pair.observed and "4 MiB" in pair.observed
    assert pair.device == 0 and pair.peer_device == 0 and "caused by suspect host n3" in pair.message
    assert (pair.busbw_gbps, pair.bytes) == (0.1, 4 << 20) and pair.algbw_gbps is not None
    as_json = pair.to_dict()
    assert as_json["busbw_gbps"] == 0.1 and as_json["bytes"] == 4 << 20 and "algbw_gbps" in as_json
    ok_pairs = {frozenset((str(f.host), str(f.peer))): f for f in findings if f.check == "allreduce.pair"}
    assert set(ok_pairs) == {frozenset(p) for p in (("n1", "n2"), ("n1", "n4"), ("n2", "n4"))}
    assert all(f.status == Status.PASS and f.busbw_gbps == 1.0 for f in ok_pairs.values())


def test_single_slow_pair_is_a_link_problem_naming_both() -> None:
    ctx = context(4)
    findings = run(ctx, {frozenset(("n1", "n2")): 0.3})
    fails = sorted((f.host, f.peer) for f in findings if f.status == Status.FAIL)
    assert fails == [("n1", "n2"), ("n2", "n1")]
    assert all("link problem between" in f.message for f in findings if f.status == Status.FAIL)
    assert statuses(findings, "allreduce.busbw")["n3"] == Status.PASS
    pairs = {frozenset((str(f.host), str(f.peer))) for f in findings if f.check == "allreduce.pair"}
    assert len(pairs) == 5 and frozenset(("n1", "n2")) not in pairs
    slow = [f for f in findings if f.status == Status.FAIL]
    assert all(f.busbw_gbps == 0.3 and f.bytes == 4 << 20 for f in slow)


def test_floor_fails_uniformly_slow_pairs() -> None:
    ctx = context(3, floor_gbps=5.0)
    fails = [f for f in run(ctx, {}) if f.status == Status.FAIL]
    assert len(fails) == 3 + 3  # three suspects (slow with every partner) plus their pairs
    assert {f.host for f in fails} == {"n1", "n2", "n3"}


def test_errored_pair_and_wrong_sum() -> None:
    ctx = context(4)
    findings = run(ctx, {}, errors=frozenset({frozenset(("n2", "n4"))}), wrong=frozenset({frozenset(("n1", "n3"))}))
    bad = sorted((f.check, f.status.value, f.host, f.peer) for f in findings if f.status != Status.PASS)
    assert len(bad) == 2
    assert bad[0][:2] == ("allreduce.correct", "fail") and {bad[0][2], bad[0][3]} == {"n1", "n3"}
    assert bad[1][:2] == ("allreduce.run", "error") and {bad[1][2], bad[1][3]} == {"n2", "n4"}
    pairs = {frozenset((str(f.host), str(f.peer))) for f in findings if f.check == "allreduce.pair"}
    assert len(pairs) == 5 and frozenset(("n2", "n4")) not in pairs  # an errored pair has no figures


def test_rank_that_printed_nothing_is_an_error() -> None:
    pair = Pair(0, "inter", "a", 0, "b", 0, 29600)
    (result,) = merge([pair], parse_lines(line(pair, 0, 1.0)), 40.0)
    assert result.error is not None and "rank 1 printed nothing" in result.error and "40 s" in result.error


def test_host_without_torch_is_an_error_and_left_out() -> None:
    ctx = context(3)
    facts = torch_facts(ctx)
    facts["n2"] = CHECK.parse({"torch": ProbeOutput('{"torch": false, "torch_npu": false}\n')})
    assert all("n2" not in step.foreground for step in CHECK.steps(facts, ctx))
    findings = CHECK.judge(facts, [], ctx)
    assert [(f.host, f.status) for f in findings] == [("n2", Status.ERROR)]


def test_parse_never_raises() -> None:
    for text in ("", "junk", '{"torch": 1}', "\xff{", '{"pair": true}'):
        assert CHECK.parse({"torch": ProbeOutput(text, exit_status=1)})["torch"] is None or text == ""
        assert parse_lines(text) == []
    assert CHECK.parse({})["torch"] is None


def test_single_host_is_skipped() -> None:
    ctx = context(1)
    assert CHECK.steps(torch_facts(ctx), ctx) == []
    assert [f.status for f in CHECK.judge(torch_facts(ctx), [], ctx)] == [Status.SKIP]


def test_not_run_by_default_only_when_asked() -> None:
    assert AllreduceCheck.by_default is False
    assert AllreduceCheck().selected_by("allreduce") and AllreduceCheck().selected_by("allreduce.busbw")


@given(st.integers(min_value=2, max_value=33))
def test_ring_rounds_give_every_host_its_two_neighbours(n: int) -> None:
    rounds = ring_rounds(n)
    for r in rounds:
        members = [h for p in r for h in p]
        assert len(members) == len(set(members)), "a host twice in one round"
    edges = [frozenset(p) for r in rounds for p in r]
    assert len(edges) == len(set(edges)) == (1 if n == 2 else n)
    assert set(edges) == {frozenset((i, (i + 1) % n)) for i in range(n)}
    assert len(rounds) <= (2 if n % 2 == 0 else 3)


@given(st.integers(min_value=2, max_value=33), st.integers(min_value=1, max_value=5),
       st.integers(min_value=0, max_value=1000))
def test_matchings_never_repeat_a_pair(n: int, k: int, seed: int) -> None:
    rounds = matching_rounds(n, k, seed)
    assert len(rounds) == min(k, n - 1 if n % 2 == 0 else n)
    for r in rounds:
        members = [h for p in r for h in p]
        assert len(members) == len(set(members)) and len(r) == n // 2
    edges = [frozenset(p) for r in rounds for p in r]
    assert len(edges) == len(set(edges))
    assert matching_rounds(n, k, seed) == rounds  # the same seed plans the same pairs (steps and judge agree)


def test_large_cluster_runs_matchings_and_says_so() -> None:
    ctx = context(20)
    assert len(CHECK.rounds(torch_facts(ctx), ctx)) == 3  # 3 matchings instead of 19 circle rounds
    findings = run(ctx, {})
    assert {f.status for f in findings} == {Status.PASS}
    assert len([f for f in findings if f.check == "allreduce.pair"]) == 30
    assert all("3 random matchings" in f.message for f in findings if f.check == "allreduce.busbw")
    small = context(4, pattern="all", all_pairs_max_hosts=2)
    assert len(CHECK.rounds(torch_facts(small), small)) == 3


def test_ring_pattern_still_names_the_suspect_host() -> None:
    ctx = context(6, pattern="ring")
    assert len(CHECK.rounds(torch_facts(ctx), ctx)) == 2
    findings = run(ctx, lambda p: 0.1 if "n4" in (p.host, p.peer) else 1.0)
    assert statuses(findings, "allreduce.busbw") == {f"n{i}": Status.FAIL if i == 4 else Status.PASS
                                                    for i in range(1, 7)}
    suspect = [f for f in findings if f.status == Status.FAIL and f.peer is None]
    assert [(f.host, f.device) for f in suspect] == [("n4", None)] and "ring neighbours" not in suspect[0].message
    assert all("ring neighbours" in f.message for f in findings if f.check == "allreduce.run")


def test_unknown_pattern_is_an_error_not_a_silent_skip() -> None:
    ctx = context(3, pattern="star")
    findings = CHECK.judge(torch_facts(ctx), [], ctx)
    assert [(f.check, f.status) for f in findings] == [("allreduce.run", Status.ERROR)]
    assert "'star'" in findings[0].message


def test_one_slow_device_is_named_not_its_whole_host() -> None:
    """Device 1 of n2 is slow with device 1 of every other host; its device 0 and the others are fine."""
    ctx = context(4, devices=2)
    findings = run(ctx, lambda p: 0.1 if p.kind == "inter" and ("n2", 1) in
                   ((p.host, p.device), (p.peer, p.peer_device)) else 1.0)
    fails = [f for f in findings if f.status == Status.FAIL]
    suspect = [f for f in fails if f.peer is None]
    assert [(f.host, f.device) for f in suspect] == [("n2", 1)]
    assert "device 1 of n2 is slow with every partner (3/3" in suspect[0].message
    pairs = [f for f in fails if f.peer is not None]
    assert len(pairs) == 3 and all(f.host == "n2" and f.device == 1 and f.peer_device == 1 for f in pairs)
    assert all("caused by suspect device 1 of n2" in f.message for f in pairs)
    assert statuses(findings, "allreduce.busbw") == {"n1": Status.PASS, "n2": Status.FAIL, "n3": Status.PASS,
                                                    "n4": Status.PASS}


def test_host_with_every_device_slow_is_the_suspect_host() -> None:
    ctx = context(4, devices=2)
    findings = run(ctx, lambda p: 0.1 if p.kind == "inter" and "n3" in (p.host, p.peer) else 1.0)
    suspect = [f for f in findings if f.status == Status.FAIL and f.peer is None]
    assert [(f.host, f.device) for f in suspect] == [("n3", None)]
    assert "n3 is slow with every partner (6/6" in suspect[0].message


def test_device_slow_with_every_local_partner() -> None:
    ctx = context(2, devices=4)
    findings = run(ctx, lambda p: 0.1 if p.kind == "intra" and p.host == "n1" and 2 in (p.device, p.peer_device)
                   else 1.0)
    suspect = [f for f in findings if f.status == Status.FAIL and f.peer is None]
    assert [(f.host, f.device) for f in suspect] == [("n1", 2)]
    pairs = [f for f in findings if f.status == Status.FAIL and f.peer is not None]
    assert sorted((f.device, f.peer_device) for f in pairs) == [(2, 0), (2, 1), (2, 3)]
    assert all(f.host == "n1" == f.peer for f in pairs)


def test_slow_host_among_three_is_found_although_it_is_in_most_pairs() -> None:
    """n3 is in 2 of the 3 pairs: a plain median of pairs would be its own slow figure."""
    ctx = context(3)
    findings = run(ctx, lambda p: 0.006 if "n3" in (p.host, p.peer) else 1.0)
    suspect = [f for f in findings if f.status == Status.FAIL and f.peer is None]
    assert [(f.host, f.device) for f in suspect] == [("n3", None)]
    assert statuses(findings, "allreduce.busbw") == {"n1": Status.PASS, "n2": Status.PASS, "n3": Status.FAIL}


def topo_context(n: int, devices: int, accelerator: str, topology: dict[str, Any]) -> EvalContext:
    """``n`` hosts whose npu / gpu.devices facts carry ``topology`` ({"npu": generation} or {"gpu": topo rows})."""
    base = context(n, devices=devices, accelerator=accelerator)
    other: dict[str, dict[str, Facts]] = {"npu": {}, "gpu.devices": {}}
    for h in base.hosts:
        if "npu" in topology:
            other["npu"][h.name] = {"generation": topology["npu"]}
        if "gpu" in topology:
            other["gpu.devices"][h.name] = {"topology": topology["gpu"]}
    return EvalContext(base.cluster, base.hosts, base.params, other)


def test_910a_plans_no_pair_across_the_hccs_groups() -> None:
    ctx = topo_context(2, 8, "npu", {"npu": "910A"})
    intra = [p for r in CHECK.rounds(torch_facts(ctx), ctx) for p in r if p.kind == "intra"]
    assert all(p.device // 4 == p.peer_device // 4 for p in intra), "HCCL refuses 2-device groups across 0-3/4-7"
    assert {(p.host, p.device, p.peer_device) for p in intra} == {
        (h, i, j) for h in ("n1", "n2") for g in (0, 4) for i in range(g, g + 4) for j in range(i + 1, g + 4)}
    assert {p.link for p in intra} == {"HCCS"}
    a2 = topo_context(2, 8, "npu", {"npu": "A2"})
    assert len([p for r in CHECK.rounds(torch_facts(a2), a2) for p in r if p.kind == "intra"]) == 2 * 28


# Mixed links, as on PCIe servers with NVLink bridges: GPU0-GPU1 bridged with 2 links, GPU2-GPU3 with 1,
# GPU0/1 to GPU2/3 through a PCIe switch (PIX) or across the sockets (SYS).
MIXED = {"GPU0": {"GPU1": "NV2", "GPU2": "PIX", "GPU3": "SYS"}, "GPU1": {"GPU2": "SYS", "GPU3": "PIX"},
         "GPU2": {"GPU3": "NV1"}}


def gpu_speed(degraded: frozenset[tuple[str, int, int]] = frozenset()) -> Callable[[Pair], float]:
    """busbw per link class (NV2 > NV1 > SYS), a degraded pair at a tenth."""
    rates = {"NV2": 40.0, "NV1": 20.0, "PIX": 12.0, "SYS": 6.0, "": 10.0}

    def speed(p: Pair) -> float:
        rate = rates.get(p.link, 8.0)
        return rate / 10 if (p.host, p.device, p.peer_device) in degraded else rate
    return speed


def test_mixed_nvlink_and_pcie_pairs_are_judged_within_their_class() -> None:
    ctx = topo_context(3, 4, "gpu", {"gpu": {"rows": MIXED}})
    pairs = [p for r in CHECK.rounds(torch_facts(ctx), ctx) for p in r if p.kind == "intra"]
    assert {p.link for p in pairs} == {"NV1", "NV2", "PIX", "SYS"}
    findings = run(ctx, gpu_speed())
    assert not [f for f in findings if f.status != Status.PASS], [f.message for f in findings if f.status != "pass"]
    assert any("(NV2)" in f.message for f in findings if f.check == "allreduce.pair")
    findings = run(ctx, gpu_speed(frozenset({("n2", 0, 1)})))  # n2's NV2 pair at a tenth
    fails = [f for f in findings if f.status == Status.FAIL]
    assert {(f.host, f.device, f.peer_device) for f in fails} == {("n2", 0, 1), ("n2", 1, 0)}
    assert all("NV2 intra-host" in f.message for f in fails)


def nvlink_context(env: dict[str, str] | None = None) -> EvalContext:
    """3 hosts of 4 GPUs in the MIXED topology whose nvidia-smi nvlink -s gives 25 GB/s per link: GPU0/1 two links
    each (their NV2), GPU2/3 one (their NV1)."""
    base = topo_context(3, 4, "gpu", {"gpu": {"rows": MIXED}})
    nvlink = {str(g): {"name": "Tesla V100-SXM2-32GB", "links": {str(k): 25.0 for k in range(2 if g < 2 else 1)}}
              for g in range(4)}
    hosts = [Host(name=h.name, address=h.address, env=env or {}) for h in base.hosts]
    other = {"gpu.devices": {h: {**facts, "nvlink": nvlink} for h, facts in base.other_facts["gpu.devices"].items()}}
    return EvalContext(base.cluster, hosts, base.params, other)


def test_nvlink_pairs_alike_but_far_below_their_links_rate_fail_the_floor() -> None:
    # every NVLink pair at 5 GB/s: they agree with each other, but NV2 = 2 x 25 GB/s is expected to give 0.6 x 50 =
    # 30 at 64 MiB and asks for 0.4 x 30 = 12; NV1 for 6 (traffic fallen back to PCIe looks like this)
    def slow(p: Pair) -> float:
        return 5.0 if p.link.startswith("NV") else gpu_speed()(p)

    findings = run(nvlink_context(), slow, top=64 << 20)
    fails = [f for f in findings if f.status == Status.FAIL]
    assert {f.device for f in fails} == {0, 1, 2, 3} and {f.host for f in fails} == {"n1", "n2", "n3"}
    assert any("0.17 of expected 30 GB/s" in (f.observed or "") and "floor 12 GB/s: 0.4 x expected 30 GB/s = 0.6 x "
               "50 GB/s NV2 x 25 GB/s per link (nvidia-smi nvlink -s)" in (f.observed or "")
               for f in fails), [f.observed for f in fails]
    assert all(f.expected_gbps in (30.0, 15.0) for f in fails if f.busbw_gbps is not None)
    healthy = run(nvlink_context(), gpu_speed(), top=64 << 20)  # NV2 40, NV1 20 GB/s: above 12 and 6
    assert not [f for f in healthy if f.status != Status.PASS], [f.message for f in healthy if f.status != "pass"]
    assert not [f for f in run(nvlink_context(), slow) if f.status == Status.FAIL], "4 MiB: too small to judge"
    p2p_off = nvlink_context(env={"NCCL_P2P_DISABLE": "1"})  # the job itself will not use NVLink
    assert not [f for f in run(p2p_off, slow, top=64 << 20) if f.status == Status.FAIL]


def fabric_context(n: int, rate: int, env: dict[str, str] | None = None) -> EvalContext:
    """gpu hosts with one Active 'rate' Gb/s port (mlx5_0) and one Down port (mlx5_1), as gpu.fabric parses ibstat."""
    base = context(n, accelerator="gpu")
    hosts = [Host(name=h.name, address=h.address, env=env or {}) for h in base.hosts]
    fabric = {"cas": [{"name": "mlx5_0", "ports": [{"port": 1, "state": "Active", "rate": rate}]},
                      {"name": "mlx5_1", "ports": [{"port": 1, "state": "Down", "rate": rate}]}]}
    return EvalContext(base.cluster, hosts, base.params, {"gpu.fabric": {h.name: fabric for h in hosts}})


def test_a_uniformly_slow_cluster_fails_the_floor_from_the_line_rate() -> None:
    ctx = fabric_context(3, 400)  # 400 Gb/s = 50 GB/s: expected 0.96 x 50 = 48, floor 0.4 x 48 = 19.2 GB/s
    fails = [f for f in run(ctx, {}) if f.status == Status.FAIL]  # every pair at 1 GB/s: they agree
    assert fails and all(f.host in ("n1", "n2", "n3") for f in fails)
    assert any("floor 19.2 GB/s: 0.4 x expected 48 GB/s = 0.96 x 50 GB/s RDMA line rate (ibstat)" in (f.observed or "")
               for f in fails), [f.observed for f in fails]
    assert {f.expected_gbps for f in fails if f.peer} == {48.0}
    fast = run(ctx, lambda p: 30.0)
    assert not [f for f in fast if f.status != Status.PASS]
    unknown = fabric_context(3, 400, env={"NCCL_IB_HCA": "=mlx5_1"})  # the job uses the Down port only
    assert not [f for f in run(unknown, {}) if f.status == Status.FAIL], "no known rate: no floor"
    cpu = context(3)
    assert not [f for f in run(cpu, {}) if f.status == Status.FAIL], "veth / no RDMA: never a hardware floor"


def npu_link_context(n: int, speeds: dict[str, list[int | None]]) -> EvalContext:
    """npu hosts (A2, 2 devices) whose hccn.link facts give each device's port speed in Mb/s."""
    base = topo_context(n, 2, "npu", {"npu": "A2"})
    links = {host: {"devices": {str(d): {"speed": s} for d, s in enumerate(per_device)}}
             for host, per_device in speeds.items()}
    return EvalContext(base.cluster, base.hosts, base.params, {**base.other_facts, "hccn.link": links})


def test_npu_inter_pairs_have_a_floor_from_their_ports_speed() -> None:
    ctx = npu_link_context(2, {"n1": [200000, 200000], "n2": [200000, 100000]})  # 0.4 x 0.96 x 25 GB/s = 9.6 GB/s
    fails = [f for f in run(ctx, lambda p: 8.0 if p.kind == "inter" else 50.0) if f.status == Status.FAIL]
    assert fails and all(f.device is not None for f in fails), [f.message for f in fails]
    assert any("0.96 x 25 GB/s NPU port (hccn_tool -speed)" in (f.observed or "") for f in fails)
    healthy = run(ctx, lambda p: 12.0 if p.kind == "inter" else 50.0)  # above both floors (9.6 and 4.8 GB/s)
    assert not [f for f in healthy if f.status == Status.FAIL], [f.message for f in healthy if f.status != "pass"]
    unknown = npu_link_context(2, {"n1": [None, None], "n2": [200000, 200000]})  # link down: no speed
    assert not [f for f in run(unknown, lambda p: 0.5) if f.status == Status.FAIL], "no known speed: no floor"
