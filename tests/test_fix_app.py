"""``preflight fix``'s application side that needs no cluster: the state probe as a check beside the others, a
saved plan read back (the cluster test, tests/test_fix_cluster.py, runs the rest)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import preflight

from preflight.app import fix as fix_app
from preflight.app.run import prepare
from preflight.batch import ProbeOutput
from preflight.fix.model import Plan
from preflight.fix.sysctl import STATE_KEY, STATE_PROBE

FIXTURE = Path(__file__).parent / "fixtures" / "fix" / "state" / "debian12_recorded.json"


def test_the_state_probe_runs_beside_the_selected_checks() -> None:
    engine = prepare(fix_app.run_request(fix_app.FixRequest(checks=["sysctl"])))
    assert [c.ident for c in engine.checks][-1] == STATE_KEY
    state = engine.checks[-1]
    host = engine.inventory.hosts[0]
    assert [p.command for p in state.probes(host, engine.inventory.cluster)] == [STATE_PROBE]
    assert state.evaluate({}, engine.context(state)) == []


def test_the_state_probe_parses_what_it_printed_and_says_when_it_could_not() -> None:
    fixture = json.loads(FIXTURE.read_text())
    state = fix_app.FixState()
    assert state.parse({"state": ProbeOutput(fixture["output"])}) == fixture["state"]
    failed = state.parse({"state": ProbeOutput("", "sh: 1: cannot open\n", exit_status=2)})
    assert failed == {"files": None, "error": "sh: 1: cannot open"}


def test_a_saved_plan_is_read_back_or_refused_with_its_name(tmp_path: Path) -> None:
    plan = Plan("r1", "2025-01-01T00:00:00+00:00", "1", ())
    good = tmp_path / "plan.json"
    good.write_text(plan.dumps())
    assert fix_app.read_plan(good) == plan
    bad = tmp_path / "other.json"
    bad.write_text('{"schema": "preflight.report/1"}')
    with pytest.raises(ValueError, match=r"other.json: not a preflight fix plan"):
        fix_app.read_plan(bad)
    with pytest.raises(ValueError, match="cannot read the plan"):
        fix_app.read_plan(tmp_path / "missing.json")


def test_usage_errors(tmp_path: Path) -> None:
    """Refused before anything runs: no --hosts needed."""
    for args, message in ((["plan.json"], "FILE or RUN goes with --apply or --undo"),
                          (["--apply", "--undo"], "--apply and --undo cannot go together"),
                          (["--include", "sshd"], "--include sshd: fix can include only hccn.ip"),
                          (["--undo", "--include", "hccn.ip"], "--include goes with planning and --apply: undo "
                                                               "puts back what the run's journal holds")):
        done = preflight("fix", *args)
        assert (done.returncode, done.stderr.strip()) == (2, f"preflight: {message}")
    bad = tmp_path / "plan.json"
    bad.write_text("{}")
    done = preflight("fix", "--apply", bad, "--yes")
    assert done.returncode == 2 and "not a preflight fix plan" in done.stderr
