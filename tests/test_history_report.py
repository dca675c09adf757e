"""The run report's history section (docs/history.md, "In the run report"): report.json's ``history`` and
report.html's History section, made by the application from the store (``app.history.with_section``) and drawn by
the pure renderer; no section without history; every value escaped."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_runner import preflight
from schema_check import errors

from preflight.app import history as history_app
from preflight.history import store, view
from preflight.model import Event, Finding, HostResult, Report, Status
from preflight.render import html

HOSTILE = 'node<2>"'
SCRIPT = "<script>alert(1)</script>"


def report(host: str, status: Status, observed: str | None = None, **extra: object) -> Report:
    return Report([HostResult(host, host, True)], [Finding("sysctl.somaxconn", host, status, "m", observed=observed),
                                                   Finding("sysctl.port_range", host, Status.PASS, "m")],
                  ["sysctl"], "2026-11-27T00:00:00+00:00", 0.1, extra=dict(extra))


def filled(path: Path, host: str, statuses: list[Status], now: float) -> None:
    """``host``'s earlier runs, an hour apart, the last an hour before ``now``."""
    for i, status in enumerate(statuses):
        store.record(path, report(host, status, observed=SCRIPT).redacted(), "node",
                     now=now - 3600.0 * (len(statuses) - i))


def test_the_section_is_escaped_and_counts_this_run(tmp_path: Path) -> None:
    path, now = tmp_path / "h.sqlite", time.time()
    filled(path, HOSTILE, [Status.FAIL, Status.PASS, Status.FAIL], now)
    drain = {"unhealthy": [HOSTILE], "max_unhealthy": None, "tripped": False, "recommend_drain": [],
             "drain_after": "3/5", "held": [HOSTILE], "flapping": [], "hard": []}
    this = report(HOSTILE, Status.PASS, observed=SCRIPT, drain=drain)
    xid = Finding("gpu.xid.errors", HOSTILE, Status.WARN, "m", events=(Event(f"Xid 13 {SCRIPT}", 3, None, new=2),),
                  previous_run="2026-11-27T06:10:01+00:00")
    judged = history_app.with_section(Report(this.hosts, [*this.findings, xid], this.checks, this.started, 0.1,
                                             extra=this.extra), path, now=now).redacted()
    section = judged.extra["history"]
    [host] = section["hosts"]
    assert host["host"] == HOSTILE and host["lemon"]["runs"] == 4 and host["lemon"]["failed_runs"] == 2
    assert host["flapping"] == [{"finding": "sysctl.somaxconn", "changes": 3,
                                 "statuses": ["fail", "pass", "fail", "pass"]}]
    page = html.render(judged)
    assert '<h2 id="history">History</h2>' in page and "2 of 4" in page and "--drain-after 3/5" in page
    assert "node&lt;2&gt;&quot;" in page and HOSTILE not in page
    assert "&lt;script&gt;" in page and "<script>" not in page
    assert "Xid 13 &lt;script&gt;alert(1)&lt;/script&gt; +2 (3 in all)" in page
    assert errors(json.loads(json.dumps(judged.to_dict())), "report") == []


def test_the_judged_rows_give_what_every_row_gives(tmp_path: Path) -> None:
    """``store.load_judged`` leaves out the rows that cannot change a lemon score or a flap: the same section."""
    path, now = tmp_path / "h.sqlite", time.time()
    cycle = [Status.PASS, Status.FAIL, Status.WARN, Status.SKIP]
    for i in range(12):
        findings = [Finding(f"sysctl.f{j}", f"n{h}", cycle[(i * j + h) % 4] if j < 3 else Status.PASS, "m")
                    for h in range(4) for j in range(6)]
        findings.append(Finding("net.cluster", None, Status.FAIL, "m"))
        store.record(path, Report([], findings, [], "", 0.1).redacted(), "run", now=now - 600.0 * (12 - i))
    since = now - 7 * 86400.0
    for hosts in (["n0", "n1", "n2", "n3"], ["n2"]):
        judged = store.load_judged(path, hosts, since)
        assert len(judged) < len(store.load(path, hosts, since))
        section = view.for_report(judged, [], now, since, k=2)
        assert section == view.for_report(store.load(path, hosts, since), [], now, since, k=2)
        assert section and all(h["flapping"] and h["lemon"]["failed_runs"] for h in section["hosts"])


def test_no_section_without_history(tmp_path: Path) -> None:
    now = time.time()
    this = report("n1", Status.FAIL)
    assert "history" not in history_app.with_section(this, None, now=now).extra  # --no-history
    assert "history" not in history_app.with_section(this, tmp_path / "none.sqlite", now=now).extra  # no store
    other = tmp_path / "other.sqlite"
    filled(other, "n2", [Status.FAIL, Status.FAIL], now)  # runs of other hosts only
    filled(other, "n1", [Status.FAIL], now - 30 * 86400.0)  # and of n1, outside the 7 days
    assert "history" not in history_app.with_section(this, other, now=now).extra
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a database" * 100)
    assert "history" not in history_app.with_section(this, broken, now=now).extra  # no exception either
    page = html.render(this.redacted())
    assert 'id="history"' not in page and "History" not in page


def test_a_run_writes_the_section(tmp_path: Path) -> None:
    """A real local ``preflight run``: a fresh store gives no section, a store with earlier runs of this host does
    (report.json and report.html, and ``preflight report`` draws it again); ``--no-history`` none."""
    path = tmp_path / "h.sqlite"
    first = preflight("run", "--checks", "sysctl", "--history", path, "--report-dir", tmp_path / "r1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    data = json.loads((tmp_path / "r1" / "report.json").read_text())
    assert "history" not in data and 'id="history"' not in (tmp_path / "r1" / "report.html").read_text()
    [host] = [h["name"] for h in data["hosts"]]
    filled(path, host, [Status.FAIL, Status.PASS, Status.FAIL], time.time())
    second = preflight("run", "--checks", "sysctl", "--history", path, "--report-dir", tmp_path / "r2", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    data = json.loads((tmp_path / "r2" / "report.json").read_text())
    [entry] = data["history"]["hosts"]
    assert entry["lemon"]["runs"] == 5 and entry["lemon"]["failed_runs"] == 2  # three filled, r1, this one
    assert entry["flapping"][0]["statuses"][:3] == ["fail", "pass", "fail"]  # the filled runs precede r1
    page = (tmp_path / "r2" / "report.html").read_text()
    assert '<h2 id="history">History</h2>' in page and "2 of 5" in page and "<script>" not in page
    again = preflight("report", tmp_path / "r2" / "report.json", "--html", tmp_path / "again.html", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "2 of 5" in (tmp_path / "again.html").read_text()
    off = preflight("run", "--checks", "sysctl", "--no-history", "--report-dir", tmp_path / "r3", cwd=tmp_path)
    assert off.returncode == 0, off.stderr
    assert "history" not in json.loads((tmp_path / "r3" / "report.json").read_text())
