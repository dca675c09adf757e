"""Parsers and evaluators against recorded-output fixtures: adding a case is adding a JSON file.

parse fixtures:    tests/fixtures/<check ident>/parse/*.json
                   {source?, context: {host, cluster}, commands: {key: command},
                    outputs: {key: {stdout, stderr, exit_status}}, facts}
                   (preflight/fixture_format.py; the commands must be what probes() builds today for the
                   context: tests/fixture_commands.py --update rewrites them after a deliberate change)
evaluate fixtures: tests/fixtures/<check ident>/evaluate/*.json
                   {cluster, params, facts_by_host, findings: [{check, host, status}], env?, other_facts?}
                   or, instead of (or with) findings, no_fail_or_warn: [finding id, ...]: each id is found
                   on every host and none of its findings is fail or warn (real outputs of healthy machines)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import fixture_commands
import pytest

from preflight import recorder
from preflight.batch import ProbeOutput
from preflight.checks import all_checks
from preflight.checks.base import ActiveCheck, Check, EvalContext, finding_ids
from preflight.engine import Engine, HostGather
from preflight.inventory import ClusterSpec, Host, Inventory
from preflight.model import HostResult

FIXTURES = Path(__file__).parent / "fixtures"
CHECKS = {c.ident: c for c in all_checks()}  # fixture folders are named by check ident


# Evaluate fixtures of real healthy outputs that today's checks judge wrongly (issue 18): they assert the
# correct verdict and xfail (strict) until the check is fixed; then the xfail fails and its entry goes.
KNOWN_WRONG: dict[str, str] = {}


def _cases(kind: str) -> list[Any]:
    cases = []
    for path in sorted(FIXTURES.glob(f"*/{kind}/*.json")):
        why = KNOWN_WRONG.get(path.relative_to(FIXTURES).as_posix())
        marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
        cases.append(pytest.param(path, id=f"{path.parts[-3]}/{path.stem}", marks=marks))
    return cases


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


def test_record_writes_fixtures_in_the_same_format(tmp_path: Path) -> None:
    """`preflight run --record` fixtures pass the parse and command tests as written, env cut to what counts."""
    host = Host("node 2", "10.0.0.2", env={"NCCL_SOCKET_IFNAME": "eth0", "SECRET_TOKEN": "hunter2"})
    inventory = Inventory(hosts=[host], cluster=ClusterSpec(accelerator="npu", devices_per_host=2, master="node1"))
    checks = [CHECKS[ident] for ident in ("net", "os", "hccn.ip", "ports", "sysctl")]
    engine = Engine(inventory, checks)
    outputs = {c.ident: {p.key: ProbeOutput(f"{p.key} said\n") for p in c.probes(host, inventory.cluster)}
               for c in checks}
    engine.gathered[host.name] = HostGather(host, HostResult(host.name, host.address, True), outputs)
    written = recorder.record(engine, tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(
        f"{c.ident}/parse/node_2.json" for c in checks)
    for path in written:
        fixture = json.loads(path.read_text())
        assert fixture_commands.problems(path, fixture, CHECKS) == []
        assert list(fixture["commands"]) == list(fixture["outputs"]) == list(outputs[path.parts[-3]])
        assert fixture["context"]["host"] == {"name": "node 2", "python": "python3", "env": (
            {"NCCL_SOCKET_IFNAME": "eth0"} if path.parts[-3] == "net" else {})}
        assert "hunter2" not in path.read_text()
        test_parse_fixture(path)


@pytest.mark.parametrize("path", _cases("evaluate"))
def test_evaluate_fixture(path: Path) -> None:
    fixture = json.loads(path.read_text())
    check = _check(path)
    env = fixture.get("env", {})  # optional: host -> its env from hosts.yaml
    named = fixture.get("interpreter_from", {})  # optional: host -> who named its interpreter (hosts.yaml, ...)
    hosts = [Host(name=n, address=n, env=env.get(n, {}), interpreter_from=named.get(n, ""))
             for n in fixture["facts_by_host"]]
    cluster = ClusterSpec(**{"master": hosts[0].name, **fixture.get("cluster", {})})
    ctx = EvalContext(cluster, hosts, {**check.params, **fixture.get("params", {})},
                      fixture.get("other_facts", {}))  # optional: other checks' facts, by check ident
    findings = check.evaluate(fixture["facts_by_host"], ctx)
    assert "findings" in fixture or fixture.get("no_fail_or_warn"), "an evaluate fixture must assert something"
    if "findings" in fixture:
        got = sorted((f.check, f.host or "", f.status.value) for f in findings)
        want = sorted((f["check"], f["host"] or "", f["status"]) for f in fixture["findings"])
        assert got == want
    for ident in fixture.get("no_fail_or_warn", []):
        for host in fixture["facts_by_host"]:
            mine = [f for f in findings if f.check == ident and f.host == host]
            assert mine, f"no {ident} finding for {host}"
            bad = [f"{f.status.value}: {f.message}" for f in mine if f.status.value in ("fail", "warn")]
            assert not bad, bad
    declared = finding_ids(check)
    assert {f.check for f in findings} | {f["check"] for f in fixture.get("findings", [])} <= declared, \
        "every finding id a check emits is in its ids (what --checks/--skip accept)"
    for f in findings:
        assert f.message.startswith(f.check), "messages start with the check's id"
        if f.status.value in ("fail", "error"):
            assert f.expected or f.remedy or f.status.value == "error", f


# Where the checks (and the shared pieces that build their findings) name finding ids literally.
_ID_SOURCES = [*sorted((Path(__file__).parents[1] / "checks").glob("*.py")),
               *(Path(__file__).parents[1] / "preflight" / name for name in
                 ("net_view.py", "allreduce/verdict.py", "ascend/hccn_calls.py"))]
_LITERAL_ID = re.compile(r'(?:\bcheck = |\bfinding\(\s*|\bFinding\(\s*)"([a-z_]+\.[a-z_.]+)"')


def test_finding_ids_named_in_the_sources_are_declared() -> None:
    """The active checks (no evaluate fixtures) too: an id written in a check or its helpers is declared."""
    declared = {i for c in CHECKS.values() for i in finding_ids(c)}
    named = {m for path in _ID_SOURCES for m in _LITERAL_ID.findall(path.read_text())}
    assert {"allreduce.busbw", "net.mtu", "os.clock", "gpu.devices.smi"} <= named  # the pattern finds them
    assert named - declared == set()


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
