"""Events since the last run (issue 42, docs/history.md): gpu.xid.errors and hccn.link.flaps count what they saw
(``Finding.events``), the store keeps it (schema 2), and the next run of the host says what is new; a fatal Xid
drains at once under --drain-after whether new or not, a benign one never; ``preflight history --html``.

The outputs are real (tests/fixtures: the probe's output of leptonai/gpud's captured dmesg with Xid 119, hicann/
hccl's `hccn_tool -i 0 -link_stat -g` with its `link down count`); where a later run is needed, the same log
grown by its own later lines, or the same port's counters raised, as the sources would print them.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_runner import preflight

from preflight.app import history as history_app
from preflight.batch import ProbeOutput
from preflight.checks.gpu_xid import GpuXidCheck, _judge
from preflight.checks.hccn_link import _judge_flaps, parse_flaps
from preflight.history import events, policy, store
from preflight.model import Event, Finding, Report, Status

FIXTURES = Path(__file__).parent / "fixtures"
XID_LOG = Path(__file__).parent / "sim" / "dmesg_xid119_h100.log"  # gpud's dmesg -T: five Xid 119 on 0000:9b:00


def _output(path: str, key: str) -> ProbeOutput:
    out = json.loads((FIXTURES / path).read_text())["outputs"][key]
    return ProbeOutput(out["stdout"], out.get("stderr", ""), out.get("exit_status", 0))


def _xid(path: str, host: str = "node1") -> Finding:
    return _judge(host, GpuXidCheck().parse({"klog": _output(f"gpu.xid/parse/{path}", "klog")}))


def _report(*findings: Finding) -> Report:
    return Report([], list(findings), ["gpu.xid"], "2026-11-27T06:10:01+00:00", 0.1)


def test_the_xid_finding_counts_each_kind(tmp_path: Path) -> None:
    found = _xid("real_dmesg_xid119_gsp_timeout.json")
    assert found.status is Status.FAIL
    assert found.events == (Event("Xid 119 on 0000:9b:00", 5, "Sun Feb 23 16:30:13 2025"),)
    caused = _xid("real_journal_xid45_caused_by_xid149_145.json")
    assert [e.key for e in caused.events or ()] == [
        "Xid 45 caused by Xid 149 on 0000:dc:00", "Xid 45 caused by Xid 145 on 0000:ed:00",
        "Xid 45 caused by Xid 145 on 0000:ba:00", "Xid 45 caused by Xid 145 on 0000:97:00"]
    fatal = _xid("real_kmsg_xid149_netir_fatal.json").events or ()
    nonfatal = _xid("real_kmsg_xid145_rlw_nonfatal.json").events or ()
    assert [e.key.split(" on ")[0] for e in fatal + nonfatal] == ["Xid 149 Fatal", "Xid 145 Nonfatal"]


def test_events_survive_redaction_json_and_the_store(tmp_path: Path) -> None:
    found = _xid("real_dmesg_xid119_gsp_timeout.json")
    clean = Report([], [found], [], "", 0.0, secrets=frozenset({"hunter22secret"})).redacted()
    assert clean.findings[0].events == found.events  # nothing to mask in a key or a kernel time
    assert Finding.from_dict(json.loads(json.dumps(clean.findings[0].to_dict()))).events == found.events
    path = tmp_path / "h.sqlite"
    store.record(path, clean, "node", now=1000.0)
    previous = store.previous_events(path, [("node1", "gpu.xid.errors")])
    assert previous[("node1", "gpu.xid.errors")].events == found.events
    masked = Report([], [Finding("gpu.xid.errors", "n1", Status.PASS, "m",
                                 events=(Event("Xid 13 on HF_TOKEN=hunter22", 1),))], [], "", 0.0).redacted()
    assert masked.findings[0].events == (Event("Xid 13 on HF_TOKEN=***", 1),)


def _grown(lines: int) -> str:
    return "".join(XID_LOG.read_text().splitlines(keepends=True)[:lines])


def _xid_lines(log: str) -> int:
    return sum("NVRM: Xid" in line for line in log.splitlines())


def _fake_dmesg(folder: Path, log: str) -> dict[str, str]:
    """PATH with a ``dmesg`` that prints ``log`` (the probe runs ``dmesg -T``)."""
    (folder / "bin").mkdir(exist_ok=True)
    (folder / "kernel.log").write_text(log)
    (folder / "bin" / "dmesg").write_text(f"#!/bin/sh\ncat {folder / 'kernel.log'}\n")
    (folder / "bin" / "dmesg").chmod(0o755)
    return {"PATH": f"{folder / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def _node(tmp_path: Path, store_path: Path, log: str, *extra: str) -> dict[str, Any]:
    done = preflight("node", "--checks", "gpu.xid", "--accelerator", "gpu", "--json", "--timeout", "60",
                     "--history", store_path, *extra, env=_fake_dmesg(tmp_path, log))
    assert "history not" not in done.stderr, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    report["exit"] = done.returncode
    return report


def test_node_says_which_xids_are_new_since_its_last_run(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    cut = next(i for i in range(1, 60) if _xid_lines(_grown(i)) == 3)  # the log when only 3 Xids were logged
    first = _node(tmp_path, path, _grown(cut))
    xid = next(f for f in first["findings"] if f["check"] == "gpu.xid.errors")
    assert xid["status"] == "fail" and xid["events"] == [
        {"key": "Xid 119 on 0000:9b:00", "count": 3, "last": "Sun Feb 23 16:24:30 2025"}]
    assert "since the last run" not in xid["message"] and "previous_run" not in xid  # no earlier run

    second = _node(tmp_path, path, XID_LOG.read_text())  # two more Xid 119 logged since
    xid = next(f for f in second["findings"] if f["check"] == "gpu.xid.errors")
    assert xid["status"] == "fail" and second["exit"] == 1
    assert xid["events"] == [{"key": "Xid 119 on 0000:9b:00", "count": 5, "last": "Sun Feb 23 16:30:13 2025",
                              "new": 2}]
    assert "; since the last run (" in xid["message"] and "new: Xid 119 on 0000:9b:00 x2 (5 since boot)" in \
        xid["message"]
    assert xid["previous_run"].startswith("20")

    third = _node(tmp_path, path, XID_LOG.read_text())  # nothing logged since: seen before, still a fail
    xid = next(f for f in third["findings"] if f["check"] == "gpu.xid.errors")
    assert xid["status"] == "fail" and third["exit"] == 1  # a fatal Xid is not hidden by being old
    assert xid["events"][0]["new"] == 0
    assert "seen before, nothing new: Xid 119 on 0000:9b:00 x5" in xid["message"] and "new: Xid" not in \
        xid["message"].replace("nothing new: Xid", "")

    off = _node(tmp_path, path, XID_LOG.read_text(), "--no-history")
    xid = next(f for f in off["findings"] if f["check"] == "gpu.xid.errors")
    assert "since the last run" not in xid["message"] and "new" not in xid["events"][0]


def test_a_restarted_log_counts_its_xids_as_new() -> None:
    before = (Event("Xid 119 on 0000:9b:00", 5, "Sun Feb 23 16:30:13 2025"),)
    after_reboot = (Event("Xid 119 on 0000:9b:00", 2, "Mon Feb 24 09:00:01 2025"),)
    assert [e.new for e in events.compare(after_reboot, before)] == [2]
    same = (Event("Xid 119 on 0000:9b:00", 5, "Sun Feb 23 16:30:13 2025"),)
    assert [e.new for e in events.compare(same, before)] == [0]


def test_link_downs_since_the_last_run() -> None:
    real = _output("hccn.link/parse/real_link_stat_link_down_count_hccl_docs.json", "link_stat")
    first = _judge_flaps("hccn.link.flaps", "n1", parse_flaps(real), 86400 * 30, 24.0)[-1]
    assert first.events == (Event("device 0 link down", 1, "Sun Oct  5 10:13:50 2025"),)
    # The same port three link downs later (the counters and records as the tool prints them).
    later_text = real.stdout.replace("link up count       : 2", "link up count       : 5").replace(
        "link down count     : 1", "link down count     : 4").replace(
        "[devid 0]link change records :\n", "[devid 0]link change records :\n"
        "[devid 0]    Tue Oct 28 20:01:12 2025    LINK UP\n[devid 0]    Tue Oct 28 20:01:02 2025    LINK DOWN\n")
    later = _judge_flaps("hccn.link.flaps", "n1", parse_flaps(ProbeOutput(later_text, "", 0)), 86400 * 30, 24.0)[-1]
    assert later.status is Status.WARN  # a link down 1.8 h before the port's clock: the check's own verdict
    annotated = events.annotate(_report(later), {("n1", "hccn.link.flaps"): ("2026-11-27T06:10:01+00:00",
                                                                           first.events or ())})
    got = annotated.findings[0]
    assert got.status is Status.WARN and got.events == (
        Event("device 0 link down", 4, "Tue Oct 28 20:01:02 2025", new=3),)
    assert got.message.endswith("since the last run (2026-11-27 06:10:01 UTC): new: device 0 link down +3 "
                                "(4 in all)")


def test_a_version_1_store_is_read_and_migrated(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with sqlite3.connect(path) as conn:
        for statement in store.MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        conn.execute("INSERT INTO runs VALUES ('r0', '2026-11-26T00:00:00+00:00', 1.0, 'node', 'pass', 0)")
        conn.execute("INSERT INTO findings VALUES ('r0', '2026-11-26T00:00:00+00:00', 1.0, 'node', 'node1',"
                     " 'gpu.xid.errors', 'pass', '0 Xid lines')")
    assert [r.observed for r in store.load(path)] == ["0 Xid lines"]  # --drain-after reads a v1 store
    assert store.previous_events(path, [("node1", "gpu.xid.errors")]) == {}  # it has no events: nothing compared
    store.record(path, _report(_xid("real_dmesg_xid119_gsp_timeout.json")).redacted(), "node", now=2.0)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "2"
    assert store.previous_events(path, [("node1", "gpu.xid.errors")])[("node1", "gpu.xid.errors")].events[0].count \
        == 5


def test_a_broken_store_leaves_the_events_uncompared(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    path.write_bytes(b"not a database" * 100)
    said: list[str] = []
    report = _report(_xid("real_dmesg_xid119_gsp_timeout.json"))
    assert history_app.with_events(report, path, warn=said.append) is report
    assert len(said) == 1 and "history not read" in said[0]


@pytest.mark.parametrize(("fixture", "drained"), [
    ("real_dmesg_xid119_gsp_timeout.json", True),  # GSP RPC timeout: reset the GPU -> fail, a hard fault
    ("real_kmsg_xid149_netir_fatal.json", True),  # NVLink5 Fatal
    ("real_kmsg_xid145_rlw_nonfatal.json", False),  # NVLink5 Nonfatal: benign, passes
    ("real_xid31_app_mmu_fault.json", False),  # the application's own MMU fault: passes
], ids=["xid119", "xid149-fatal", "xid145-nonfatal", "xid31-app"])
def test_only_a_fatal_xid_drains_at_once(fixture: str, drained: bool) -> None:
    found = _xid(fixture)
    other = Finding("sysctl.somaxconn", "node1", Status.FAIL, "low", observed="64")  # held alone under 3/5
    judged = policy.apply(_report(found, other), policy.parse("3/5"), [], now=1000.0)
    drain = judged.extra["drain"]
    assert (found.status is Status.FAIL) == drained
    assert drain["hard"] == (["node1"] if drained else []) and drain["held"] == ([] if drained else ["node1"])
    assert judged.exit_code() == (1 if drained else 6)


def test_a_device_count_is_hard_only_when_a_device_is_missing() -> None:
    def count(observed: str, expected: str, check: str = "gpu.devices.count") -> Finding:
        return Finding(check, "node1", Status.FAIL, "m", observed=observed, expected=expected)

    assert policy.hard_fault(count("7 GPUs (indexes 0, 1, 2, 3, 4, 5, 6)", "8 GPUs (devices_per_host)"))
    assert not policy.hard_fault(count("8 GPUs (indexes 0, 1, 2, 3, 4, 5, 6, 7)", "4 GPUs (devices_per_host)"))
    assert policy.hard_fault(count("7 in npu-smi info (ids 0, 1, 2, 3, 4, 5, 6)", "8 NPUs (devices_per_host)",
                                   "npu.count"))
    assert not policy.hard_fault(count("16 chips on 8 NPUs in npu-smi info (device ids 0-15)",
                                       "8 chips (devices_per_host counts chips: one device and one rank each)",
                                       "npu.count"))


def test_every_hard_fault_id_is_a_finding_the_checks_declare() -> None:
    from preflight.checks import all_checks
    from preflight.checks.base import finding_ids

    declared = {ident for check in all_checks() for ident in finding_ids(check)}
    assert policy.HARD_FAULTS <= declared, policy.HARD_FAULTS - declared


def test_history_html_is_written_and_escaped(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    for i, status in enumerate([Status.FAIL, Status.PASS, Status.FAIL, Status.PASS]):
        hostile = Finding("net.env", "node<2>", status, "m", observed="<script>alert(1)</script> HF_TOKEN=hunter22")
        store.record(path, Report([], [hostile], [], "", 0.0).redacted(), "run", now=1000.0 + i)
    page = tmp_path / "out" / "history.html"
    (tmp_path / "out").mkdir()
    done = preflight("history", "--history", path, "--html", page)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "hunter22" not in text and "HF_TOKEN=***" in text
    assert "node&lt;2&gt;" in text and "<h3>Flapping</h3>" in text and "2 of 4 runs failed" in text
    assert text.count('class="st"') == 4 + 2  # the flapping row's 4 statuses, the 2 fails of the timeline
    unwritable = preflight("history", "--history", path, "--html", tmp_path / "missing" / "h.html")
    assert unwritable.returncode == 4 and "cannot write" in unwritable.stderr
