"""Collect-then-judge without a cluster: the facts file format, its errors, and `judge` over files built from the
recorded outputs of tests/fixtures (the same outputs the parser tests read)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from cli_runner import preflight

from preflight.app import UsageError
from preflight.app.judge import JudgeRequest, judge_facts
from preflight.batch import ProbeOutput
from preflight.checks.sysctl import SysctlCheck
from preflight.checks.versions import VersionsCheck
from preflight.facts_file import FORMAT, FactsError, dump, from_text, to_text
from preflight.fixture_format import host_and_cluster
from preflight.inventory import ClusterSpec, Host

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def recorded(check: str, name: str) -> dict[str, Any]:
    """A parse fixture recorded with `preflight run --record` (real outputs, with their source)."""
    fixture: dict[str, Any] = json.loads((FIXTURES / check / "parse" / f"{name}.json").read_text())
    assert fixture["source"].startswith("recorded with `preflight run --record`"), fixture["source"]
    return fixture


def outputs_of(fixture: dict[str, Any]) -> dict[str, ProbeOutput]:
    return {k: ProbeOutput(v["stdout"], v.get("stderr", ""), v.get("exit_status", 0))
            for k, v in fixture["outputs"].items()}


def write_facts(folder: Path, name: str, sysctl: dict[str, ProbeOutput], versions: dict[str, ProbeOutput],
                master: str = "n1", gathered: datetime | None = None, run_id: str | None = None) -> Path:
    """``name``'s facts file in ``folder``, gathered now (or at ``gathered``) for ``run_id``."""
    host, cluster = Host(name, name), ClusterSpec(master=master)
    when = (gathered or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    doc = dump([VersionsCheck(), SysctlCheck()], host, cluster, {"versions": versions, "sysctl": sysctl},
               when, 0.5, (("sysctl",), ()), run_id)
    path = folder / f"{name}.json"
    path.write_text(to_text(doc))
    return path


@pytest.fixture
def facts(tmp_path: Path) -> Path:
    """Three hosts' facts from the recorded sysctl and versions outputs; n3's somaxconn is lower."""
    sysctl = outputs_of(recorded("sysctl", "recorded_debian12"))
    versions = outputs_of(recorded("versions", "recorded_cpu_node"))
    key = next(k for k, v in sysctl.items() if "net.core.somaxconn" in v.stdout)
    lines = [line if not line.startswith("net.core.somaxconn") else "net.core.somaxconn=128"
             for line in sysctl[key].stdout.splitlines()]
    for name in ("n1", "n2"):
        write_facts(tmp_path, name, sysctl, versions)
    write_facts(tmp_path, "n3", {**sysctl, key: replace(sysctl[key], stdout="\n".join(lines) + "\n")}, versions)
    (tmp_path / "hosts.yaml").write_text("cluster: {master: n1}\nhosts: [n1, n2, n3]\n"
                                         "checks: {sysctl: {min_somaxconn: 4096}}\n")
    return tmp_path


def test_a_facts_file_reads_back_what_was_dumped(facts: Path) -> None:
    read = from_text((facts / "n3.json").read_text(), "n3.json")
    assert read.host.name == "n3" and read.selection == (("sysctl",), ())
    assert set(read.outputs) == {"versions", "sysctl"}
    assert any("somaxconn=128" in o.stdout for o in read.outputs["sysctl"].values())
    doc = json.loads((facts / "n3.json").read_text())
    host, cluster = host_and_cluster(doc["context"])
    assert (host.name, cluster.master) == ("n3", "n1"), "the context is a parse fixture's"
    assert set(doc["checks"]["sysctl"]["commands"]) == set(doc["checks"]["sysctl"]["outputs"])


@pytest.mark.parametrize(("text", "message"), [
    ('{"format": "preflight.facts/1",\n "checks": {\n', "x.json:3: not JSON"),
    ('{"format": "preflight.report/1"}', "x.json: not a preflight facts file (format 'preflight.report/1'"),
    ('[1, 2]', "x.json: not a preflight facts file (format 'list'"),
    (json.dumps({"format": FORMAT, "context": {}, "checks": {}}), "x.json: context.host.name missing"),
    (json.dumps({"format": FORMAT, "context": {"host": {"name": "n1"}}, "checks": {"os": {"outputs": {
        "shm": {"stdout": "", "exit_status": "0"}}}}}), "x.json: checks.os.outputs.shm: exit_status must be"),
])
def test_a_bad_facts_file_is_named_with_its_line(text: str, message: str) -> None:
    with pytest.raises(FactsError) as caught:
        from_text(text, "x.json")
    assert str(caught.value).startswith(message)


def test_judge_names_the_drifting_host_with_the_site_threshold(facts: Path) -> None:
    report = judge_facts(JudgeRequest(paths=[facts], hosts=facts / "hosts.yaml"))
    somaxconn = {f.host: f.status.value for f in report.findings if f.check == "sysctl.somaxconn"}
    assert somaxconn == {"n1": "pass", "n2": "pass", "n3": "fail"}
    assert not any(f.check.startswith("versions.") for f in report.findings), "the files' --checks sysctl"
    assert {f.host for f in report.findings if f.check == "facts.file" and f.status.value == "pass"} == \
        {"n1", "n2", "n3"}
    assert not any(f.check == "facts.cluster" for f in report.findings)


def test_a_file_gathered_for_another_cluster_is_a_warning(facts: Path) -> None:
    """Without hosts.yaml each node takes itself as the master: judge says so, judged with the majority's."""
    outputs = from_text((facts / "n2.json").read_text(), "n2.json").outputs
    write_facts(facts, "n2", outputs["sysctl"], outputs["versions"], master="n2")
    for hosts in (facts / "hosts.yaml", None):
        report = judge_facts(JudgeRequest(paths=[facts], hosts=hosts))
        drift = [f for f in report.findings if f.check == "facts.cluster"]
        assert [(f.host, f.status.value, f.observed) for f in drift] == \
            [("n2", "warn", "master 'n2' (judged with 'n1')")]
        assert "--hosts hosts.yaml" in (drift[0].remedy or "")


def test_judge_without_hosts_yaml_takes_the_files_hosts_and_reports_what_is_missing(facts: Path) -> None:
    (facts / "n2.json").unlink()
    (facts / "n1.json").write_text((facts / "n1.json").read_text()[:100])
    request = JudgeRequest(paths=[facts / "n1.json", facts / "n3.json"], checks=["sysctl"])
    report = judge_facts(request)
    assert [h.name for h in report.hosts] == ["n3"]
    assert len(request.problems) == 1 and request.problems[0].startswith(f"{facts / 'n1.json'}:")
    with_hosts = judge_facts(JudgeRequest(paths=[facts], hosts=facts / "hosts.yaml"))
    errors = {(f.host, f.observed) for f in with_hosts.findings
              if f.check == "facts.file" and f.status.value == "error"}
    assert errors == {(None, "unreadable"), ("n1", "missing"), ("n2", "missing")}
    assert [h.reachable for h in with_hosts.hosts] == [False, False, True]


def test_judge_with_nothing_readable_or_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or folder"):
        judge_facts(JudgeRequest(paths=[tmp_path / "nope.json"]))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(UsageError, match="no facts file could be read"):
        judge_facts(JudgeRequest(paths=[tmp_path]))


def test_cli_exit_codes(facts: Path, tmp_path: Path) -> None:
    proc = preflight("judge", facts, "--hosts", facts / "hosts.yaml", "--report-dir", tmp_path / "r")
    assert proc.returncode == 1, proc.stderr
    assert "n3" in proc.stdout and "sysctl.somaxconn" in proc.stdout
    (facts / "n2.json").write_text("{\n")
    proc = preflight("judge", facts / "n2.json", "--report-dir", tmp_path / "r2")
    assert proc.returncode == 2 and f"{facts / 'n2.json'}:2: not JSON" in proc.stderr
    proc = preflight("node", "--facts", tmp_path / "f.json", "--hosts", facts / "hosts.yaml", "--name", "elsewhere")
    assert proc.returncode == 2 and "'elsewhere' is not a host of" in proc.stderr
    assert not (tmp_path / "f.json").exists()


def test_node_facts_here_respects_skip_and_judge_says_what_it_did_not_run(tmp_path: Path) -> None:
    """This machine, no hosts.yaml: every check `run` would send but the skipped one, then judged."""
    proc = preflight("node", "--facts", tmp_path / "here.json", "--skip", "firewall", "--name", "here",
                     "--timeout", "60")
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    read = from_text((tmp_path / "here.json").read_text(), "here.json")
    assert read.host.name == "here" and read.selection == ((), ("firewall",))
    assert "firewall" not in read.outputs and {"os", "sysctl", "net", "net.reachability"} <= set(read.outputs)
    proc = preflight("judge", tmp_path / "here.json", "--report-dir", tmp_path / "r")
    assert proc.returncode in (0, 1, 4), proc.stderr
    assert "not run (they need `preflight run`'s controller): net.reachability, os.clock" in proc.stdout
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert not any(f["check"].startswith("firewall") for f in report["findings"])


# Facts tied to one run (issue 36): a file of another run, or older than --max-age, is an error, never judged.

def _recorded_outputs() -> tuple[dict[str, ProbeOutput], dict[str, ProbeOutput]]:
    return outputs_of(recorded("sysctl", "recorded_debian12")), outputs_of(recorded("versions", "recorded_cpu_node"))


def _facts_findings(report: Any) -> dict[str | None, tuple[str, str]]:
    return {f.host: (f.status.value, f.message) for f in report.findings if f.check == "facts.file"}


def test_a_leftover_file_from_long_ago_is_an_error_not_judged(tmp_path: Path) -> None:
    """main judged a file dated 2025-01-01 as current (facts.file pass)."""
    sysctl, versions = _recorded_outputs()
    write_facts(tmp_path, "n1", sysctl, versions)
    write_facts(tmp_path, "n2", sysctl, versions, gathered=datetime(2025, 1, 1, tzinfo=timezone.utc))
    report = judge_facts(JudgeRequest(paths=[tmp_path]))
    found = _facts_findings(report)
    assert found["n1"][0] == "pass"
    assert found["n2"][0] == "error" and "longer ago than --max-age 1 h" in found["n2"][1], found
    assert not [f for f in report.findings if f.host == "n2" and f.check.startswith("sysctl.")], "n2 not judged"
    assert [h.reachable for h in report.hosts if h.name == "n2"] == [False]
    assert report.exit_code() == 4
    assert _facts_findings(judge_facts(JudgeRequest(paths=[tmp_path], max_age="0")))["n2"][0] == "pass"
    an_hour_ago = datetime.now(timezone.utc) - timedelta(minutes=50)
    write_facts(tmp_path, "n2", sysctl, versions, gathered=an_hour_ago)
    assert _facts_findings(judge_facts(JudgeRequest(paths=[tmp_path])))["n2"][0] == "pass"


def test_files_of_another_run_are_set_aside(tmp_path: Path) -> None:
    sysctl, versions = _recorded_outputs()
    for name, run in (("n1", "job-7"), ("n2", "job-7"), ("n3", "job-6"), ("n4", None)):
        write_facts(tmp_path, name, sysctl, versions, run_id=run)
    found = _facts_findings(judge_facts(JudgeRequest(paths=[tmp_path])))  # the run most files carry: job-7
    assert {h: s for h, (s, _) in found.items()} == {"n1": "pass", "n2": "pass", "n3": "error", "n4": "error"}
    assert "is of run 'job-6', not of run 'job-7' (most of the files)" in found["n3"][1]
    assert "is of no run id" in found["n4"][1]
    found = _facts_findings(judge_facts(JudgeRequest(paths=[tmp_path], run_id="job-6")))
    assert {h: s for h, (s, _) in found.items()} == {"n1": "error", "n2": "error", "n3": "pass", "n4": "error"}
    assert "(--run-id / PREFLIGHT_RUN_ID)" in found["n1"][1]


def test_cli_run_id_from_the_environment_and_a_bad_max_age(tmp_path: Path) -> None:
    sysctl, versions = _recorded_outputs()
    write_facts(tmp_path, "n1", sysctl, versions, run_id="a")
    write_facts(tmp_path, "n2", sysctl, versions, run_id="b")
    done = preflight("judge", tmp_path, "--json", "--report-dir", tmp_path / "r", env={"PREFLIGHT_RUN_ID": "b"})
    assert done.returncode == 4, done.stderr
    found = {f["host"]: f["status"] for f in json.loads(done.stdout)["findings"] if f["check"] == "facts.file"}
    assert found == {"n1": "error", "n2": "pass"}
    bad = preflight("judge", tmp_path, "--max-age", "soon")
    assert bad.returncode == 2 and "--max-age 'soon'" in bad.stderr


def test_node_facts_writes_the_run_id(tmp_path: Path) -> None:
    done = preflight("node", "--facts", tmp_path / "here.json", "--checks", "sysctl", env={"PREFLIGHT_RUN_ID": "r9"})
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "here.json").read_text())["run_id"] == "r9"
    done = preflight("node", "--facts", tmp_path / "flag.json", "--checks", "sysctl", "--run-id", "r10")
    assert json.loads((tmp_path / "flag.json").read_text())["run_id"] == "r10"
