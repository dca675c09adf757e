"""The one application path: `judge` is the engine's evaluation over replayed gathers, `node --facts` the engine's
passive gather, and `node`'s hard time bound answers and exits 4 (preflight.app)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone

from preflight.app import select_checks
from preflight.app.judge import NOT_RUN, stand_ins
from preflight.engine import Engine, Replay, RunOptions
from preflight.inventory import ClusterSpec, Host, Inventory
from preflight.transport.local import LocalTransport


def test_replaying_a_gather_judges_as_the_gather_did_and_stands_in_for_the_active_checks() -> None:
    """The same outputs, gathered here or replayed (judge's path), give the same findings; the active check the
    replay cannot run gets its stand-in, and the passive engine never judged it."""
    inventory = Inventory([Host("n1", "localhost")], ClusterSpec(accelerator="cpu", master="n1"))
    checks = select_checks(["sysctl", "os.shm", "net.reachability"], [])
    passive = select_checks(["sysctl", "os.shm"], []).checks
    gathered = Engine(inventory, passive, RunOptions(parallel=1, only=checks.only),
                      transport_factory=lambda h: LocalTransport())
    report = gathered.run()
    replayed = Engine(inventory, checks.checks, RunOptions(only=checks.only, passive=True),
                      transport_factory=lambda h: LocalTransport())
    kept = list(gathered.gathered.values())
    again = replayed.replay(Replay(kept, report.started, datetime.now(timezone.utc),
                                   stand_ins=stand_ins(checks.checks)))
    assert [f for f in again.findings if f.check != "net.reachability"] == list(report.findings)
    [skip] = [f for f in again.findings if f.check == "net.reachability"]
    assert skip.status.value == "skip" and skip.observed == NOT_RUN and skip.host is None
    assert again.started == report.started and again.checks == tuple(c.ident for c in checks.checks)


def test_a_passive_engine_opens_no_listener_and_runs_no_step() -> None:
    inventory = Inventory([Host("n1", "localhost")], ClusterSpec(accelerator="cpu", master="n1"))
    engine = Engine(inventory, select_checks(["net.reachability"], []).checks, RunOptions(parallel=1, passive=True),
                    transport_factory=lambda h: LocalTransport())
    assert not engine.keep_open and not engine.overlaps.servers
    engine.run()
    assert engine.outcomes == {}


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)


def test_the_node_deadline_answers_and_exits_4_when_the_run_overruns() -> None:
    late = _python("import time\nfrom preflight.app.node import Deadline\n"
                   "with Deadline(0.3, lambda: print('too late', flush=True)):\n    time.sleep(30)\n")
    assert (late.returncode, late.stdout) == (4, "too late\n")
    settled = _python("import time\nfrom preflight.app.node import Deadline\n"
                      "with Deadline(0.3, lambda: print('too late', flush=True)) as bound:\n"
                      "    with bound.settled():\n        time.sleep(0.8)\n        print('answered', flush=True)\n"
                      "    time.sleep(0.5)\n")
    assert (settled.returncode, settled.stdout) == (0, "answered\n"), "the answer being written holds the bound off"
