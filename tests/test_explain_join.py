"""``preflight explain --report``: each candidate cause confirmed, ruled out or not checked by a saved report.

The logic (preflight.explain.join) on small reports built here, then the CLI on launches recorded on the
namespace cluster (tests/fixtures/explain/recorded_netns/, README there): real torch.distributed logs and the
report.json ``preflight run`` wrote on the same broken cluster.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from preflight.explain.join import CONFIRMED, NOT_CHECKED, RULED_OUT, join, report_host, weigh
from preflight.explain.matcher import explain_texts
from preflight.model import Finding, HostResult, Report, Status
from preflight.render.json_report import write

RECORDED = Path(__file__).parent / "fixtures" / "explain" / "recorded_netns"
HOSTS = [HostResult("node1", "10.0.0.1", True), HostResult("node2", "10.0.0.2", True)]


def report(*findings: Finding, hosts: list[HostResult] = HOSTS) -> Report:
    return Report(hosts, list(findings), [], "2026-01-01T00:00:00Z", 1.0)


def test_a_fail_confirms_a_pass_rules_out_nothing_is_not_checked() -> None:
    r = report(Finding("os.memory", "node2", Status.FAIL, "os.memory: 1% available"),
               Finding("net.interface", "node2", Status.PASS, "GLOO_SOCKET_IFNAME=eth0 exists"))
    assert [(e.status, e.hosts) for e in weigh("os.memory", "node2", r)] == [(CONFIRMED, ("node2",))]
    assert weigh("net.interface", "node2", r)[0].describe() == \
        "net.interface passed on node2: GLOO_SOCKET_IFNAME=eth0 exists"
    assert [e.status for e in weigh("firewall.rules", "node2", r)] == [NOT_CHECKED]


def test_a_check_of_one_host_counts_only_on_the_host_that_saw_the_failure() -> None:
    r = report(Finding("os.memory", "node1", Status.FAIL, "os.memory: 1% available"),
               Finding("os.memory", "node2", Status.PASS, "os.memory: 80% available"))
    assert [(e.status, e.hosts) for e in weigh("os.memory", "node2", r)] == [(RULED_OUT, ("node2",))]
    # the log did not say which host: every host counts
    assert [(e.status, e.hosts) for e in weigh("os.memory", None, r)] == [(CONFIRMED, ("node1",))]


def test_a_check_of_the_path_counts_on_every_host() -> None:
    """The client's log times out; the master's firewall drops it: the fail on node1 confirms node2's cause."""
    r = report(Finding("firewall.rules", "node1", Status.FAIL, "tcp 29500 dropped from node2"),
               Finding("firewall.rules", "node2", Status.PASS, "nothing dropped"))
    assert [(e.status, e.hosts) for e in weigh("firewall.rules", "node2", r)] == [(CONFIRMED, ("node1",))]
    passed = report(Finding("firewall.rules", "node1", Status.PASS, "nothing dropped"),
                    Finding("firewall.rules", "node2", Status.PASS, "nothing dropped"))
    assert [(e.status, e.hosts) for e in weigh("firewall.rules", "node2", passed)] == \
        [(RULED_OUT, ("node1", "node2"))]


def test_skipped_unreadable_and_unreachable_are_not_checked() -> None:
    r = report(Finding("npu.processes", "node2", Status.SKIP, "npu.processes: not an npu host"),
               Finding("os.memory", "node2", Status.ERROR, "os.memory: could not read /proc/meminfo"),
               hosts=[HOSTS[0], HostResult("node2", "10.0.0.2", False, error="timed out")])
    assert [e.finding for e in weigh("npu.processes", "node2", r)] == ["skipped: npu.processes: not an npu host"]
    assert weigh("os.memory", "node2", r)[0].finding == "could not tell: os.memory: could not read /proc/meminfo"
    assert weigh("os.shm", "node2", r)[0].finding == "the report has no answer from this host"


def test_a_whole_check_covers_its_findings() -> None:
    r = report(Finding("allreduce.run", "node1", Status.ERROR, "did not complete"),
               Finding("allreduce.busbw", "node2", Status.FAIL, "slow with every partner"))
    assert [(e.status, e.check) for e in weigh("allreduce", None, r)] == [(CONFIRMED, "allreduce.busbw")]


def test_a_stale_process_on_the_device_confirms_the_hccl_cause() -> None:
    log = "EJ0001: Failed to initialize the HCCP process. Reason: Maybe the last training process is running."
    r = report(Finding("npu.processes", "node2", Status.FAIL, "npu.processes: pid 4711 (python) holds NPU 3"))
    joined = join(explain_texts({"node2.log": log}), r)
    best = joined.verdicts[0]
    assert (best.match.signature.category, best.status) == ("hccl-stale-process", CONFIRMED)
    assert best.evidence[0].describe() == "npu.processes failed on node2: npu.processes: pid 4711 (python) holds NPU 3"


def test_a_confirmed_root_cause_moves_ahead_and_a_ruled_out_one_is_kept() -> None:
    texts = {"rank0.log": "[E1127 01:00:00.000 x.cpp:1] Signal 9 (SIGKILL) received by PID 77\n",
             "rank1.log": "[E1127 01:00:05.000 x.cpp:1] RuntimeError: [../third_party/gloo/gloo/transport/tcp/"
                          "device.cc:84] ifa != nullptr. Unable to find address for: eth9\n"}
    explanation = explain_texts(texts)
    assert [m.signature.category for m in explanation.matches] == ["oom", "wrong-interface"]
    r = report(Finding("os.memory", "node1", Status.PASS, "os.memory: 80% available"),
               Finding("net.interface", "node2", Status.FAIL, "GLOO_SOCKET_IFNAME='eth9': no such interface"))
    joined = join(explanation, r)
    assert joined.reranked
    assert [(v.match.signature.category, v.status) for v in joined.verdicts] == \
        [("wrong-interface", CONFIRMED), ("oom", RULED_OUT)]
    # nothing confirmed: the log's order stands, the ruled-out cause stays first, marked
    kept = join(explanation, report(Finding("os.memory", "node1", Status.PASS, "os.memory: 80% available")))
    assert not kept.reranked and [v.status for v in kept.verdicts] == [RULED_OUT, NOT_CHECKED]


def test_report_host_by_name_address_or_short_name() -> None:
    r = report()
    assert [report_host(r, n) for n in ("node1", "10.0.0.2", "node2.example.com", "node7", None)] == \
        ["node1", "node2", "node2", None, None]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "preflight", "explain", *args], capture_output=True, text=True,
                          timeout=60, check=False)


def test_cli_report_option(tmp_path: Path) -> None:
    log = tmp_path / "rank1.log"
    log.write_text("torch.distributed.DistNetworkError: The client socket has timed out after 60s while trying "
                   "to connect to (node1, 29500).\n")
    saved = write(report(Finding("firewall.rules", "node1", Status.FAIL, "tcp 29500 dropped from node2"),
                         Finding("net.reachability", "node2", Status.PASS, "node2 -> node1:29500 connected")
                         ).redacted(), tmp_path / "r")
    proc = _cli(str(log), "--report", str(saved))
    assert proc.returncode == 0, proc.stderr
    assert f"evidence from {saved}: confirmed" in proc.stdout
    assert "  confirmed    firewall.rules failed on node1: tcp 29500 dropped from node2" in proc.stdout
    data = json.loads(_cli(str(log), "--report", str(saved), "--json").stdout)
    best = data["matches"][0]
    assert best["status"] == CONFIRMED and data["reranked"] is False
    assert {"status": CONFIRMED, "check": "firewall.rules", "host": "node1", "hosts": ["node1"],
            "finding": "tcp 29500 dropped from node2"} in best["evidence"]
    assert {"status": RULED_OUT, "check": "net.reachability", "host": "node2", "hosts": ["node2"],
            "finding": "node2 -> node1:29500 connected"} in best["evidence"]


def test_cli_report_that_cannot_be_used(tmp_path: Path) -> None:
    log = tmp_path / "r.log"
    log.write_text("boom\n")
    (tmp_path / "bad.json").write_text("{\"schema\": \"other\"}")
    for args, message in (([str(tmp_path / "bad.json")], "not a preflight report"),
                          ([str(tmp_path / "none.json")], "cannot read"),
                          ([str(tmp_path / "bad.json"), "--hosts", "hosts.yaml"], "give one")):
        proc = _cli(str(log), "--report", *args)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


# --- launches recorded on the namespace cluster ------------------------------------------------------------

def explain_recorded(case: str) -> dict[str, Any]:
    """``preflight explain <case>/logs --report <case>/report.json --json`` on a recording."""
    proc = _cli(str(RECORDED / case / "logs"), "--report", str(RECORDED / case / "report.json"), "--json")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def evidence(match: dict[str, Any], status: str) -> set[tuple[str, str | None]]:
    return {(e["check"], e["host"]) for e in match["evidence"] if e["status"] == status}


def test_recorded_blocked_master_port() -> None:
    """The worker's store client times out first (node2); the master's iptables DROP is what the report names."""
    best = explain_recorded("blocked_port")["matches"][0]
    assert (best["category"], best["id"], best["host"]) == ("master-unreachable", "c10d.client_timed_out", "node2")
    assert best["file"].endswith("blocked_port/logs/node2/console.log") and best["rank"] is None  # no worker ran
    assert best["status"] == "confirmed"
    assert evidence(best, "confirmed") == {("firewall.rules", "node1"), ("net.reachability", "node2")}
    rule = next(e for e in best["evidence"] if e["check"] == "firewall.rules")
    assert "dropped by iptables rule `-A INPUT -i eth0 -p tcp -m tcp --dport 29531 -j DROP`" in rule["finding"]
    assert evidence(best, "ruled out") == {("net.master_resolution", None)}  # the name resolves alike on both


def test_recorded_wrong_gloo_interface() -> None:
    """Rank 1 on node2 dies at init (no eth9); rank 0 then times out waiting for it: node2's net.interface fails."""
    data = explain_recorded("wrong_interface")
    best = data["matches"][0]
    assert (best["category"], best["id"], best["rank"], best["host"]) == \
        ("wrong-interface", "gloo.ifname_not_found", 1, "node2")
    assert best["status"] == "confirmed" and not data["reranked"]
    assert evidence(best, "confirmed") == {("net.interface", "node2")}
    assert "GLOO_SOCKET_IFNAME='eth9'" in best["evidence"][0]["finding"]
    waited = [m for m in data["matches"] if m["id"] == "store.socket_timeout"]
    assert {m["file"].split("/logs/")[1].split("/")[0] for m in waited} == {"node1"}
    assert {m["status"] for m in waited} == {"ruled out"}  # master resolution, reachability, firewall all pass


def test_recorded_killed_rank() -> None:
    """Rank 1 on node2 got SIGKILL mid all_reduce; rank 0 sees the peer close. The catalog's likeliest reason for a
    SIGKILL is the OOM killer: the report rules it out (node2 had its memory), so something else killed it."""
    data = explain_recorded("killed_rank")
    best = data["matches"][0]
    assert (best["category"], best["id"], best["rank"], best["host"]) == ("oom", "elastic.exit_sigkill", 1, "node2")
    assert best["status"] == "ruled out" and evidence(best, "ruled out") == {("os.memory", "node2")}
    reset = next(m for m in data["matches"] if m["id"] == "gloo.connection_reset")
    assert (reset["host"], reset["status"]) == ("node1", "ruled out")  # the network was fine too


def test_recordings_terminal_text() -> None:
    proc = _cli(str(RECORDED / "blocked_port" / "logs"), "--report", str(RECORDED / "blocked_port" / "report.json"))
    assert proc.returncode == 0, proc.stderr
    assert "evidence from " in proc.stdout and "  confirmed    firewall.rules failed on node1: " in proc.stdout
