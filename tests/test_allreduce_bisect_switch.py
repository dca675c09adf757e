"""--bisect with switches known (issue 41, part 2, "across switches or racks"): hosts.yaml ``switch:``, groups cut at
switch boundaries, and the path between two switches named (after a confirming pair) instead of a host. Simulated
groups as in test_allreduce_bisect: a group runs at its slowest host's speed, or at the uplink's when it spans
the switches and the uplink is slow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from test_allreduce import CHECK
from test_allreduce_bisect import facts_of, lines, named

from preflight.allreduce import domains
from preflight.allreduce.bisect import Group, GroupResult, Judged, Search, halves, next_groups
from preflight.batch import ProbeOutput
from preflight.checks.base import EvalContext, Facts, StepOutcome
from preflight.inventory import ClusterSpec, Host, InventoryError, parse_inventory
from preflight.model import Finding, Status

Speed = Callable[[Sequence[str], bool], float | None]  # a group's hosts, whether it is a confirming pair -> busbw


def context(switches: dict[str, int], **params: object) -> EvalContext:
    """Hosts a1.., b1.. on switches A, B (in the order given), e.g. {"A": 4, "B": 4}."""
    hosts = [Host(name=f"{s.lower()}{i}", address=f"10.0.{k}.{i}", switch=s)
             for k, (s, n) in enumerate(switches.items()) for i in range(1, n + 1)]
    return EvalContext(ClusterSpec(accelerator="cpu", master=hosts[0].name), hosts,
                       {**CHECK.params, "mode": "bisect", "fraction": 0.5, "nic_gbps": 1.0, **params})


def drive(ctx: EvalContext, speed: Speed) -> tuple[list[Finding], list[list[tuple[str, ...]]]]:
    """The search to its end: (findings, each round's groups)."""
    facts: dict[str, Facts] = facts_of(ctx)
    outcomes: list[StepOutcome] = []
    rounds = []
    for _ in range(64):
        if not CHECK.followups(facts, ctx, outcomes):
            break
        _, groups, _ = CHECK.search(facts, ctx, outcomes)
        rounds.append([g.hosts for g in groups])
        text: dict[str, str] = {}
        for g in groups:
            busbw = speed(g.hosts, not g.searching)
            text.update(lines(g.index, g.hosts, busbw, set(g.hosts) if busbw is None else set()))
        outcomes.append(StepOutcome({}, {h: {"ranks": ProbeOutput(t + "\n")} for h, t in text.items()}))
    return CHECK.judge(facts, outcomes, ctx), rounds


def uplink(slow: float | None, pairs_too: bool = True) -> Speed:
    """Groups spanning switches run at ``slow`` (None: they hang); within one switch at 0.11 GB/s (the expected
    busbw of 1 Gb/s)."""
    def speed(hosts: Sequence[str], pair: bool) -> float | None:
        spans = len({h[0] for h in hosts}) > 1
        return slow if spans and (pairs_too or not pair) else 0.11
    return speed


def paths(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.check == "allreduce.busbw" and f.host is None and "the path" in f.message]


def test_hosts_run_in_switch_order_and_halves_cut_at_the_boundary() -> None:
    labels = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "b3": "B", "b4": "B", "b5": "B"}
    interleaved = ["a1", "b1", "a2", "b2", "a3", "b3", "b4", "b5"]
    s = Search(labels=labels)
    root = next_groups(interleaved, s, 29600)
    assert root[0].hosts == ("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5")
    s.rounds.append([Judged(GroupResult(root[0], busbw=0.01, size=1), "slow", "")])
    assert [g.hosts for g in next_groups(interleaved, s, 29600)] == [("a1", "a2", "a3"), ("b1", "b2", "b3", "b4",
                                                                                           "b5")]
    assert halves(("a1", "b1", "b2", "b3", "b4", "b5", "b6", "b7"), {"a1": "A", **{f"b{i}": "B" for i in
                                                                                  range(1, 8)}})[0] == ("a1",)
    assert domains.cut(["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2"],
                       {h: h[0] for h in ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2"]}) == 4


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13])
def test_without_labels_the_halves_are_todays(n: int) -> None:
    hosts = [f"n{i}" for i in range(n)]
    middle = n // 2
    assert halves(hosts) == halves(hosts, {}) == (tuple(hosts[:middle]), tuple(hosts[middle:]))
    assert halves(hosts, dict.fromkeys(hosts, "one")) == halves(hosts)  # one switch: cut in the middle
    assert domains.order(hosts, {}) == hosts and domains.spanned(hosts, {}) == ()


def test_a_slow_uplink_is_named_and_no_host() -> None:
    findings, rounds = drive(context({"A": 4, "B": 4}), uplink(0.0025))
    assert named(findings) == set(), [f.message for f in findings if f.status != Status.PASS]
    [path] = paths(findings)
    assert path.status == Status.FAIL and "switches A <-> B (their uplink) named by --bisect" in path.message
    assert "known-good a1 and b1 are slow across it" in path.message and path.busbw_gbps == 0.0025
    assert rounds == [[("a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4")],
                      [("a1", "a2", "a3", "a4"), ("b1", "b2", "b3", "b4")], [("a1", "b1")]]
    assert not [f for f in findings if f.message.startswith("nobody named")]
    groups = [f for f in findings if f.check == "allreduce.bisect"]
    assert "(8 hosts, switches A, B): slow" in groups[0].message and groups[0].message.endswith(
        "split at the switch boundary")
    assert "(4 hosts, switch A): ok" in groups[1].message
    assert "confirming the path A <-> B, switches A, B" in groups[3].message


def test_an_uplink_fine_with_its_confirming_pair_is_not_named() -> None:
    findings, _ = drive(context({"A": 4, "B": 4}), uplink(0.0025, pairs_too=False))
    assert named(findings) == set()
    [path] = paths(findings)
    assert path.status == Status.WARN and "not named" in path.message
    assert not [f for f in findings if f.status == Status.FAIL]


def test_a_hung_uplink_is_named() -> None:
    findings, _ = drive(context({"A": 3, "B": 5}), uplink(None))  # a firewall between the switches
    assert named(findings) == set(), [f.message for f in findings if f.status != Status.PASS]
    [path] = paths(findings)
    assert path.status == Status.FAIL and "are hung across it" in path.message


def test_the_uplink_of_three_switches_is_the_pair_that_explains_the_slow_groups() -> None:
    def speed(hosts: Sequence[str], pair: bool) -> float:
        sw = {h[0] for h in hosts}
        return 0.0025 if {"a", "b"} <= sw else 0.11  # A <-> B slow; C fine with both
    findings, _ = drive(context({"A": 4, "B": 4, "C": 8}), speed)
    assert named(findings) == set(), [f.message for f in findings if f.status != Status.PASS]
    assert [f.status for f in paths(findings)] == [Status.FAIL]
    assert "switches A <-> B" in paths(findings)[0].message


@pytest.mark.parametrize("bad", ["a3", "b2"])
def test_one_slow_host_is_named_with_a_partner_of_its_own_switch(bad: str) -> None:
    def speed(hosts: Sequence[str], pair: bool) -> float:
        return 0.0025 if bad in hosts else 0.11
    findings, rounds = drive(context({"A": 4, "B": 4}), speed)
    assert named(findings) == {bad} and not paths(findings)
    confirm = [f for f in findings if f.check == "allreduce.bisect" and "confirming " + bad in f.message]
    assert confirm and all(h[0] == bad[0] for f in confirm for h in f.group or ())


def test_a_small_group_spanning_switches_is_split_at_the_boundary() -> None:
    labels = {"a1": "A", "b1": "B", "b2": "B"}
    s = Search(labels=labels)
    s.rounds.append([Judged(GroupResult(Group(0, 0, ("a1", "b1", "b2"), 1), busbw=0.01, size=1), "slow", "")])
    assert [g.hosts for g in next_groups(["a1", "b1", "b2"], s, 29600)] == [("b1", "b2")]
    assert s.suspects == ["a1"]  # alone on its side: waits for a known-good partner


def test_hosts_yaml_switch_key() -> None:
    text = ("defaults:\n  switch: leaf0\nhosts:\n  - {name: 'n[1-2]', switch: leaf1}\n  - n3\n")
    assert [(h.name, h.switch) for h in parse_inventory(text, Path("hosts.yaml")).hosts] == \
        [("n1", "leaf1"), ("n2", "leaf1"), ("n3", "leaf0")]
    assert [h.switch for h in parse_inventory("hosts: [a, b]\n", Path("hosts.yaml")).hosts] == [None, None]


@pytest.mark.parametrize("text, line, words", [
    ("hosts:\n  - {name: a, switch: s1}\n  - b\n", 3, "switch: is given for some hosts but not this one"),
    ("hosts:\n  - a\n  - name: b\n    switch: ''\n", 3, "switch must be a name"),
    ("hosts:\n  - name: a\n    switch: [x, y]\n", 3, "switch must be a single value"),
])
def test_hosts_yaml_switch_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(InventoryError) as err:
        parse_inventory(text, Path("hosts.yaml"))
    assert str(err.value).startswith(f"hosts.yaml:{line}: ") and words in str(err.value), str(err.value)


def test_the_terminal_table_shows_each_groups_switches() -> None:
    from rich.console import Console

    from preflight.cli import rounds_table
    from preflight.model import Report

    findings, _ = drive(context({"A": 4, "B": 4}), uplink(0.0025))
    console = Console(width=200, record=True)
    console.print(rounds_table(Report([], findings, ["allreduce"], "2026-11-27T00:00:00Z", 1.0)))
    text = console.export_text()
    assert "a[1-4],b[1-4] (switches A, B)" in text and "a[1-4] (switch A)" in text
    assert "a1,b1 (switches A, B)" in text, text


def test_without_a_rate_round_0_is_judged_against_its_halves_and_the_uplink_named() -> None:
    findings, rounds = drive(context({"A": 4, "B": 4}, nic_gbps=0.0), uplink(0.0025))
    assert named(findings) == set(), [f.message for f in findings if f.status != Status.PASS]
    [path] = paths(findings)
    assert path.status == Status.FAIL and "A <-> B" in path.message and len(rounds) == 3
    root = next(f for f in findings if f.check == "allreduce.bisect")
    assert root.expected_gbps is None and "below 0.25 x 0.11 GB/s, the slower of its halves (A | B)" in root.message


def test_a_healthy_labelled_cluster_without_a_rate_costs_three_runs_and_names_nobody() -> None:
    findings, rounds = drive(context({"A": 4, "B": 4}, nic_gbps=0.0), uplink(0.08))  # the whole ring a bit slower
    assert not [f for f in findings if f.status != Status.PASS], [f.message for f in findings]
    assert sum(len(r) for r in rounds) == 3
