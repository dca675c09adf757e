"""``--drain-after`` (docs/history.md): the policy over a host's earlier runs, through the one verdict function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import preflight

from preflight import exit_codes
from preflight.history import policy, store
from preflight.model import Finding, HostResult, Report, Status, Verdict

NOW = 1_000_000.0


def rows(host: str, *statuses: str, finding: str = "sysctl.somaxconn", step: float = 60.0) -> list[store.Row]:
    """``host``'s earlier runs, oldest first, one a ``step`` apart, the last one ``step`` before NOW."""
    n = len(statuses)
    return [store.Row(f"{host}-{i}", NOW - step * (n - i), "run", host, finding, s, None)
            for i, s in enumerate(statuses)]


def run(*failing: tuple[str, str]) -> Report:
    findings = [Finding(check, host, Status.FAIL, "bad") for host, check in failing]
    findings.append(Finding("os.shm", "ok1", Status.PASS, "fine"))
    hosts = sorted({h for h, _ in failing} | {"ok1"})
    return Report([HostResult(h, h, True) for h in hosts], findings, [], "", 0.0,
                  extra={"drain": {"unhealthy": sorted({h for h, _ in failing}), "max_unhealthy": None,
                                   "tripped": False, "recommend_drain": sorted({h for h, _ in failing})}})


def judged(report: Report, text: str, earlier: list[store.Row]) -> Report:
    return policy.apply(report, policy.parse(text), earlier, NOW)


def test_a_first_fail_is_held_and_the_nth_drains() -> None:
    first = judged(run(("n2", "sysctl.somaxconn")), "3/5", [])
    assert first.verdict() is Verdict.HELD and first.exit_code() == exit_codes.HELD == 6
    assert first.extra["drain"]["held"] == ["n2"] and first.extra["drain"]["recommend_drain"] == []
    [note] = [f for f in first.findings if f.check == policy.CHECK]
    assert "--drain-after 3/5" in note.message and "failed in 1 of the last 1 runs" in note.message
    four_of_five = judged(run(("n2", "sysctl.somaxconn")), "3/5", rows("n2", "fail", "fail", "pass", "fail"))
    assert four_of_five.verdict() is Verdict.FAIL and four_of_five.extra["drain"]["recommend_drain"] == ["n2"]
    assert "failed in 4 of the last 5 runs" in four_of_five.findings[-1].message
    short = judged(run(("n2", "sysctl.somaxconn")), "3/5", rows("n2", "fail", "fail", "pass"))  # 3 of 4 so far
    assert short.verdict() is Verdict.FAIL and "failed in 3 of the last 4 runs" in short.findings[-1].message
    old = rows("n2", "fail", "fail", "pass", "pass", "pass")  # the fails are outside the last 5 runs
    assert judged(run(("n2", "sysctl.somaxconn")), "3/5", old).verdict() is Verdict.HELD


def test_fails_within_a_duration() -> None:
    earlier = rows("n2", "fail", "fail", step=600.0)  # 20 and 10 minutes ago
    assert judged(run(("n2", "sysctl.somaxconn")), "3x/30m", earlier).verdict() is Verdict.FAIL
    assert judged(run(("n2", "sysctl.somaxconn")), "3x/15m", earlier).verdict() is Verdict.HELD


def test_flapping_is_held_and_reported() -> None:
    earlier = rows("n2", "fail", "pass", "fail", "pass")
    report = judged(run(("n2", "sysctl.somaxconn")), "3/5", earlier)  # 3 fails of 5, but it flaps
    assert report.verdict() is Verdict.HELD and report.extra["drain"]["recommend_drain"] == []
    assert report.extra["drain"]["flapping"] == [
        {"host": "n2", "finding": "sysctl.somaxconn", "statuses": ["fail", "pass", "fail", "pass", "fail"]}]
    assert "flapping, not drained" in report.findings[-1].message


def test_hard_faults_act_at_once_and_another_host_still_drains() -> None:
    report = judged(run(("n3", "gpu.devices.count")), "3/5", rows("n3", "pass", "fail", "pass", "fail"))
    assert report.verdict() is Verdict.FAIL and report.extra["drain"]["hard"] == ["n3"]
    assert report.extra["drain"]["recommend_drain"] == ["n3"]
    both = judged(run(("n2", "sysctl.somaxconn"), ("n3", "gpu.xid.errors")), "3/5", [])
    assert both.verdict() is Verdict.FAIL and both.extra["drain"]["recommend_drain"] == ["n3"]
    assert both.extra["drain"]["held"] == ["n2"]


def test_suspect_still_wins() -> None:
    report = run(("n2", "sysctl.somaxconn"))
    tripped = Report(report.hosts, report.findings, [], "", 0.0,
                     extra={"drain": {**report.extra["drain"], "tripped": True, "recommend_drain": []}})
    assert judged(tripped, "1/1", []).verdict() is Verdict.SUSPECT


@pytest.mark.parametrize("text", ["3", "0/5", "6/5", "3x", "3x/soon", "x/5"])
def test_bad_policies(text: str) -> None:
    with pytest.raises(ValueError, match="--drain-after"):
        policy.parse(text)


def test_node_under_the_policy(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    args = ("node", "--checks", "sysctl", "--set", "sysctl.min_somaxconn=999999999", "--timeout", "20",
            "--history", path, "--drain-after", "2/3")
    first = preflight(*args)
    assert first.returncode == exit_codes.HELD, first.stdout + first.stderr
    assert ": HELD in " in first.stdout and "held back, not drained" in first.stdout
    second = preflight(*args, "--json")
    assert second.returncode == exit_codes.PROBLEMS, second.stderr
    report = json.loads(second.stdout)
    assert report["verdict"] == "fail" and report["exit_code"] == 1 and report["drain"]["drain_after"] == "2/3"
    assert [r.exit_code for r in store.runs(path)] == [6, 1]
    assert preflight(*args[:-2], "--drain-after", "2/3", "--no-history").returncode == exit_codes.USAGE
