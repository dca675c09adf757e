"""The history store (docs/history.md): schema and migrations, WAL, many writers at once, and a broken store that
is a warning and never another exit code; ``preflight history`` on a store."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import preflight

from preflight.app import history as history_app
from preflight.history import store
from preflight.history.view import summarize
from preflight.model import Finding, RedactedReport, Report, Status


def report(host: str = "n1", *statuses: Status, observed: str | None = None) -> RedactedReport:
    findings = [Finding(f"sysctl.f{i}", host, s, "m", observed=observed) for i, s in enumerate(statuses or
                                                                                               (Status.PASS,))]
    return Report([], findings, ["sysctl"], "2026-11-27T00:00:00+00:00", 0.1).redacted()


def test_schema_wal_and_rows(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "h.sqlite"
    run_id = store.record(path, report("n1", Status.FAIL, Status.PASS, observed="64"), "node", now=100.0)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "2"
        assert conn.execute("SELECT run_id, command, verdict, exit_code FROM runs").fetchall() == [
            (run_id, "node", "fail", 1)]
    rows = store.load(path)
    assert [(r.host, r.finding, r.status, r.observed, r.at) for r in rows] == [
        ("n1", "sysctl.f0", "fail", "64", 100.0), ("n1", "sysctl.f1", "pass", "64", 100.0)]
    assert store.load(path, ["n2"]) == [] and store.load(path, since=101.0) == []


def test_observed_values_are_stored_redacted(tmp_path: Path) -> None:
    raw = Report([], [Finding("net.env", "n1", Status.WARN, "m", observed="HF_TOKEN=hunter22")], [], "", 0.0)
    store.record(tmp_path / "h.sqlite", raw.redacted(), "run")
    assert b"hunter22" not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert [r.observed for r in store.load(tmp_path / "h.sqlite")] == ["HF_TOKEN=***"]


def test_a_newer_schema_is_refused_and_an_older_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "h.sqlite"
    store.record(path, report(), "run")
    monkeypatch.setattr(store, "MIGRATIONS", (*store.MIGRATIONS, ("ALTER TABLE runs ADD COLUMN note TEXT",)))
    monkeypatch.setattr(store, "SCHEMA_VERSION", 3)
    store.record(path, report(), "run")  # migrated from 2 to 3 in place, the old rows kept
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "3"
        assert "note" in [c[1] for c in conn.execute("PRAGMA table_info(runs)")]
    assert len(store.runs(path)) == 2
    monkeypatch.setattr(store, "SCHEMA_VERSION", 2)
    with pytest.raises(store.HistoryError, match="newer than this preflight"):
        store.record(path, report(), "run")
    with pytest.raises(store.HistoryError, match="schema version 3"):
        store.load(path)


def _write(args: tuple[str, int]) -> None:
    path, worker = args
    for i in range(4):
        store.record(Path(path), report(f"n{worker}", Status.FAIL, Status.PASS, Status.WARN), "node",
                     run_id=f"w{worker}-{i}")


def test_concurrent_writers_lose_no_row(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with multiprocessing.get_context("spawn").Pool(16) as pool:
        pool.map(_write, [(str(path), w) for w in range(16)])
    assert len(store.runs(path)) == 16 * 4
    rows = store.load(path)
    assert len(rows) == 16 * 4 * 3
    assert {r.host for r in rows} == {f"n{w}" for w in range(16)}


def test_a_broken_store_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    store.record(path, report(), "run")
    path.write_bytes(path.read_bytes()[:300])  # truncated
    said: list[str] = []
    history_app.record(report(), "run", path, warn=said.append)
    assert len(said) == 1 and "history not recorded" in said[0]
    said.clear()
    history_app.record(report(), "node", tmp_path / "h2.sqlite", busy_s=0.0, warn=said.append)
    assert said and "no time left" in said[0] and not (tmp_path / "h2.sqlite").exists()


def node(*extra: str | Path) -> subprocess.CompletedProcess[str]:
    return preflight("node", "--checks", "sysctl", "--timeout", "20", *extra)


@pytest.mark.parametrize("settings", [(), ("--set", "sysctl.min_somaxconn=999999999")], ids=["ok", "fail"])
def test_truncated_store_keeps_the_exit_code(tmp_path: Path, settings: tuple[str, ...]) -> None:
    without = node(*settings, "--no-history")
    path = tmp_path / "h.sqlite"
    node(*settings, "--history", path)
    path.write_bytes(path.read_bytes()[:300])
    broken = node(*settings, "--history", path)
    assert broken.returncode == without.returncode, broken.stderr
    assert without.returncode == (1 if settings else 0)
    assert broken.stdout.split(" in ")[0] == without.stdout.split(" in ")[0]
    assert "warning: history not recorded" in broken.stderr and "warning" not in without.stderr


def test_read_only_store_keeps_the_exit_code(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "h.sqlite"
    assert node("--history", path).returncode == 0
    before = store.load(path)
    command = [sys.executable, "-m", "preflight", "node", "--checks", "sysctl", "--timeout", "20", "--history",
               str(path)]
    if os.geteuid() == 0:  # root writes through file modes: a read-only mount, as a container's volume
        if shutil.which("unshare") is None:
            pytest.skip("no unshare for a read-only mount")
        command = ["unshare", "-m", "sh", "-c", f'mount --bind "{folder}" "{folder}" && '
                   f'mount -o remount,bind,ro "{folder}" && exec "$@"', "sh", *command]
    else:
        path.chmod(0o444)
        folder.chmod(0o555)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert "warning: history not recorded" in done.stderr
    assert store.load(path) == before


def test_history_command(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    for i, status in enumerate([Status.FAIL, Status.PASS, Status.FAIL, Status.PASS]):
        store.record(path, report("n2", status, observed="64"), "run", now=1_000.0 + i)
    done = preflight("history", "--history", path, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    [host] = data["hosts"]
    assert host["host"] == "n2" and host["lemon"]["failed_runs"] == 2 and host["lemon"]["runs"] == 4
    assert [f["finding"] for f in host["flapping"]] == ["sysctl.f0"]
    assert [e["status"] for e in host["timeline"]] == ["fail", "fail"]
    terminal = preflight("history", "n2", "--history", path)
    assert "FLAPPING sysctl.f0: fail pass fail pass (3 changes)" in terminal.stdout
    assert preflight("history", "--history", path, "--since", "yesterday-ish").returncode == 2
    assert preflight("history", "--history", tmp_path / "none.sqlite").returncode == 4


def test_flapping_threshold_and_lemon_order() -> None:
    rows = [store.Row(f"r{i}", float(i), "run", host, "a", s, None)
            for i, (host, s) in enumerate([("n1", "fail"), ("n2", "pass"), ("n1", "pass"), ("n2", "pass"),
                                           ("n1", "fail")])]
    data = summarize(rows, now=5.0, k=2)
    assert [h["host"] for h in data["hosts"]] == ["n1", "n2"]
    assert [f["changes"] for f in data["hosts"][0]["flapping"]] == [2]
    assert summarize(rows, now=5.0)["hosts"][0]["flapping"] == []


def test_a_store_locked_too_long_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    store.record(path, report(), "run")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another writer that never lets go
        said: list[str] = []
        history_app.record(report(), "node", path, busy_s=0.2, warn=said.append)
        assert len(said) == 1 and "locked" in said[0], said
    finally:
        holder.close()
    assert len(store.runs(path)) == 1


def test_judge_records_its_verdict(tmp_path: Path) -> None:
    facts = tmp_path / "n1.json"
    assert preflight("node", "--facts", facts, "--checks", "sysctl").returncode == 0
    path = tmp_path / "h.sqlite"
    judged = preflight("judge", facts, "--checks", "sysctl", "--report-dir", tmp_path / "r", "--history", path)
    assert judged.returncode in (0, 1, 4) and "history not recorded" not in judged.stderr, judged.stderr
    [run] = store.runs(path)
    assert run.command == "judge" and run.exit_code == judged.returncode
    assert preflight("judge", facts, "--checks", "sysctl", "--report-dir", tmp_path / "r2", "--history", path,
                     "--no-history").returncode == judged.returncode
    assert len(store.runs(path)) == 1


def test_an_immediate_busy_answer_is_tried_again(tmp_path: Path) -> None:
    """WAL mode answers SQLITE_BUSY without waiting while the last connection cleans up: a fresh try passes."""
    path = tmp_path / "h.sqlite"
    store.record(path, report(), "run")
    tries: list[int] = []

    def busy_twice(conn: sqlite3.Connection) -> int:
        tries.append(1)
        if len(tries) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    assert store._transact(path, 5.0, False, busy_twice) == 1 and len(tries) == 3
    tries.clear()
    with pytest.raises(store.StoreBusy, match="database is locked"):
        store._transact(path, 0.0, False, busy_twice)  # no time left: one try, the busy answer kept
    assert len(tries) == 1

    def broken(conn: sqlite3.Connection) -> int:
        tries.append(1)
        raise sqlite3.OperationalError("no such table: nowhere")

    tries.clear()
    with pytest.raises(store.HistoryError, match="no such table") as caught:
        store._transact(path, 5.0, False, broken)  # not a busy answer: never tried again
    assert len(tries) == 1 and not isinstance(caught.value, store.StoreBusy)
