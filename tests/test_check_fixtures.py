"""Parsers and evaluators against recorded-output fixtures: adding a case is adding a JSON file.

parse fixtures:    tests/fixtures/<check ident>/parse/*.json
                   {source?, context: {host, cluster}, commands: {key: command},
                    outputs: {key: {stdout, stderr, exit_status}}, facts}
                   (preflight/fixture_format.py; the commands must be what probes() builds today for the
                   context: tests/fixture_commands.py --update rewrites them after a deliberate change)
evaluate fixtures: tests/fixtures/<check ident>/evaluate/*.json
                   {cluster, params, facts_by_host, findings: [{check, host, status}], env?, other_facts?}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fixture_commands
import pytest

from preflight.batch import ProbeOutput
from preflight.checks import all_checks
from preflight.checks.base import ActiveCheck, Check, EvalContext
from preflight.inventory import ClusterSpec, Host

FIXTURES = Path(__file__).parent / "fixtures"
CHECKS = {c.ident: c for c in all_checks()}  # fixture folders are named by check ident


def _cases(kind: str) -> list[Any]:
    return [pytest.param(path, id=f"{path.parts[-3]}/{path.stem}")
            for path in sorted(FIXTURES.glob(f"*/{kind}/*.json"))]


def _check(path: Path) -> Check:
    return CHECKS[path.parts[-3]]


@pytest.mark.parametrize("path", _cases("parse"))
def test_parse_fixture(path: Path) -> None:
    fixture = json.loads(path.read_text())
    outputs = {key: ProbeOutput(o["stdout"], o.get("stderr", ""), o.get("exit_status", 0))
               for key, o in fixture["outputs"].items()}
    assert _check(path).parse(outputs) == fixture["facts"]


@pytest.mark.parametrize("path", _cases("parse"))
def test_parse_fixture_commands_are_todays(path: Path) -> None:
    """A fixture's output stays valid only while probes() still builds the command that printed it."""
    problems = fixture_commands.problems(path, json.loads(path.read_text()), CHECKS)
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize("path", _cases("evaluate"))
def test_evaluate_fixture(path: Path) -> None:
    fixture = json.loads(path.read_text())
    check = _check(path)
    env = fixture.get("env", {})  # optional: host -> its env from hosts.yaml
    hosts = [Host(name=n, address=n, env=env.get(n, {})) for n in fixture["facts_by_host"]]
    cluster = ClusterSpec(**{"master": hosts[0].name, **fixture.get("cluster", {})})
    ctx = EvalContext(cluster, hosts, {**check.params, **fixture.get("params", {})},
                      fixture.get("other_facts", {}))  # optional: other checks' facts, by check ident
    findings = check.evaluate(fixture["facts_by_host"], ctx)
    got = sorted((f.check, f.host or "", f.status.value) for f in findings)
    want = sorted((f["check"], f["host"] or "", f["status"]) for f in fixture["findings"])
    assert got == want
    for f in findings:
        assert f.message.startswith(f.check), "messages start with the check's id"
        if f.status.value in ("fail", "error"):
            assert f.expected or f.remedy or f.status.value == "error", f


def test_every_check_has_fixtures() -> None:
    """Active checks (which make hosts talk to each other) have their own test modules."""
    for family, check in CHECKS.items():
        if isinstance(check, ActiveCheck):
            continue
        assert list((FIXTURES / family / "parse").glob("*.json")), family
        assert list((FIXTURES / family / "evaluate").glob("*.json")), family


def test_probe_commands_quote_hostile_python_path() -> None:
    host = Host(name="n1", address="n1", python="python3; touch /tmp/pwned")
    for check in CHECKS.values():
        for probe in check.probes(host, ClusterSpec(master="n1")):
            assert "python3; touch" not in probe.command or "'python3; touch /tmp/pwned'" in probe.command
