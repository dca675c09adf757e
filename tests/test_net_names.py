"""net.names' judge over what each host's ``getent hosts`` printed (the cluster run: test_checks23_cluster.py)."""

from __future__ import annotations

from preflight.checks.net_names import judge_names, names_command, parse_names

Resolved = dict[str, dict[str, str | None]]
INVENTORY = {"a": "10.0.0.1", "b": "10.0.0.2", "c": "10.0.0.3"}


def verdicts(resolved: Resolved) -> dict[str, str]:
    return {f.host or "": f.status.value for f in judge_names(resolved, INVENTORY)}


def test_getent_output_framed_per_name() -> None:
    # getent hosts prints "ADDRESS<spaces>CANONICAL [ALIASES]" and exits 2 for a name it cannot resolve.
    text = "== b\n10.0.0.2        b.cluster b\nrc 0\n== c\nrc 2\n"
    assert parse_names(text) == {"b": "10.0.0.2", "c": None}
    assert names_command(["b", "c"]).startswith("for pf_n in b c; do")


def test_consistent_cluster_passes() -> None:
    resolved: Resolved = {"a": {"b": "10.0.0.2", "c": "10.0.0.3"}, "b": {"a": "10.0.0.1", "c": "10.0.0.3"},
                          "c": {"a": "10.0.0.1", "b": "10.0.0.2"}}
    assert verdicts(resolved) == {"a": "pass", "b": "pass", "c": "pass"}


def test_missing_stale_and_loopback_fail_on_the_resolver() -> None:
    resolved: Resolved = {"a": {"b": "10.0.0.2", "c": None}, "b": {"a": "127.0.1.1", "c": "10.0.0.3"},
                          "c": {"a": "10.0.0.9", "b": "10.0.0.2"}}
    findings = {f.host: f for f in judge_names(resolved, INVENTORY)}
    assert {h: f.status.value for h, f in findings.items()} == {"a": "fail", "b": "fail", "c": "fail"}
    assert "c does not resolve" in str(findings["a"].observed)
    assert "loopback" in str(findings["b"].observed)
    # a -> 127.0.1.1 on b and 10.0.0.9 on c: no majority, the inventory's address decides.
    assert "a -> 10.0.0.9, not 10.0.0.1" in str(findings["c"].observed)
    assert "10.0.0.1 a" in str(findings["c"].remedy)


def test_names_no_host_resolves_are_labels() -> None:
    resolved: Resolved = {"a": {"b": None, "c": None}, "b": {"a": None, "c": None}, "c": {"a": None, "b": None}}
    findings = judge_names(resolved, INVENTORY)
    assert [f.status.value for f in findings] == ["pass", "pass", "pass"]
    assert all("resolve on no host" in f.message for f in findings)
