"""Report renderers (HTML, JUnit, Prometheus, Markdown, terminal at 200 hosts), the JSON loader and the
`report` / `diff` / `baseline` commands, on synthetic reports (the real-cluster run is test_report_cluster.py)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import pytest
from cli_runner import preflight
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console

from preflight.compare import baseline_findings, diff
from preflight.model import Finding, HostResult, Report, Status
from preflight.render import html, json_report, junit, markdown, prometheus, terminal

EVIL = '<script>alert("x")</script> | `rm` & "q" \\ \x1b[31m\x00'


def pair(host: str, peer: str, busbw: float, status: Status = Status.PASS) -> Finding:
    check = "allreduce.pair" if status == Status.PASS else "allreduce.busbw"
    return Finding(check, host, status, f"{check}: {host}<->{peer}", observed=f"{busbw} GB/s", peer=peer,
                   device=0, peer_device=0, algbw_gbps=busbw / 1.5, busbw_gbps=busbw, bytes=4 << 20)


def sample(slow: str | None = "n3", torch: str = "2.4.0", bw: float = 10.0, hosts: int = 4,
           evil: bool = True) -> Report:
    """Hosts n1..nN: versions, a sysctl failure on n2 (with hostile text), an error, and all_reduce pairs
    (pairs with ``slow`` fail at 0.5 GB/s)."""
    names = [f"n{i}" for i in range(1, hosts + 1)]
    findings = [Finding("ssh.connect", n, Status.PASS, "ssh.connect: ok") for n in names]
    findings += [Finding("versions.torch", n, Status.PASS, f"versions.torch: torch {torch}", observed=torch,
                         expected=torch) for n in names]
    if evil:
        findings.append(Finding("sysctl.somaxconn", "n2", Status.FAIL, "sysctl.somaxconn: " + EVIL, observed=EVIL,
                                expected=">= 65535", remedy="echo " + EVIL))
        findings.append(Finding("os.shm", "n4", Status.ERROR, "os.shm: unreadable"))
        findings.append(Finding("os.shm", "n1", Status.WARN, "os.shm: small", observed="64M", expected=">= 1G"))
    findings.append(Finding("versions.cann", None, Status.SKIP, "versions.cann: not installed on any host"))
    for a, b in combinations(names, 2):
        if slow in (a, b):
            findings += [pair(a, b, 0.5, Status.FAIL), pair(b, a, 0.5, Status.FAIL)]
        else:
            findings.append(pair(a, b, bw))
    return Report([HostResult(n, f"10.0.0.{i}", True) for i, n in enumerate(names, 1)], findings,
                  ["versions", "sysctl", "os", "allreduce"], "2026-11-22T01:00:00+00:00", 12.5, tool_version="0.1.0")


# --- HTML -------------------------------------------------------------------------------------------------


def test_html_escapes_everything_and_needs_nothing_external(tmp_path: Path) -> None:
    path = html.write(sample().redacted(), tmp_path)
    assert path == tmp_path / "report.html"
    page = path.read_text(encoding="utf-8")
    assert "<script" not in page and "\x1b" not in page and "\x00" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert not re.search(r"\b(src|href)\s*=", page)
    assert [u for u in re.findall(r"https?://[^\s\"']+", page) if u != "http://www.w3.org/2000/svg"] == []
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    ET.fromstring(re.search(r"<svg.*?</svg>", page, re.S).group(0))  # type: ignore[union-attr]  # well-formed SVG


def test_html_heatmap_marks_the_slow_pairs_red() -> None:
    page = html.render(sample(slow="n3").redacted())
    cells = re.findall(r'<rect [^>]*class="(slow|ok)" data-host="([^"]+)" data-peer="([^"]+)" data-busbw="([^"]+)"',
                       page)
    assert len(cells) == 12  # 4 x 4 minus the diagonal
    slow = {(h, p) for cls, h, p, _ in cells if cls == "slow"}
    assert slow == {(h, p) for h in ("n1", "n2", "n3", "n4") for p in ("n1", "n2", "n3", "n4")
                    if h != p and "n3" in (h, p)}
    assert all(f'fill="{html.SLOW}"' in part for part in re.findall(r'<rect [^>]*class="slow"[^>]*>', page))
    assert not any(html.SLOW in part for part in re.findall(r'<rect [^>]*class="ok"[^>]*>', page))
    assert page.index('id="matrix"') < page.index('id="heatmap"') < page.index('id="problems"')
    # the matrix: worst rows first: the hosts with a fail (n1-n3: n3's pairs), then n4, whose error is only
    # "could not tell"
    rows = re.findall(r'<tr><td class="hosts">(n\d)</td>', page)
    assert rows[-1] == "n4" and set(rows[:-1]) == {"n1", "n2", "n3"}
    assert "observed" in page and "remedy" in page and "&gt;= 65535" in page


def test_html_heatmap_stays_bounded_on_a_large_cluster_and_keeps_the_slow_pairs() -> None:
    names = [f"n{i:03d}" for i in range(400)]
    hosts = [HostResult(n, n, True) for n in names]
    pairs = [(names[i], names[(i + k) % 400]) for i in range(400) for k in (1, 2, 3)]  # 3 matchings-like rounds
    findings = [Finding("allreduce.pair", a, Status.FAIL if "n300" in (a, b) else Status.PASS, "m", peer=b,
                        device=0, peer_device=0, busbw_gbps=0.1 if "n300" in (a, b) else 1.0) for a, b in pairs]
    page = html.render(Report(hosts, findings, ["allreduce"], "", 1.0).redacted())
    cells = re.findall(r'<rect [^>]*class="(slow|ok)" data-host="([^"]+)" data-peer="([^"]+)"', page)
    assert len(cells) <= 2 * len(pairs), "only measured pairs are drawn, not hosts x hosts"
    drawn = {h for _, h, _ in cells}
    assert len(drawn) <= html.HEATMAP_MAX_HOSTS and "n300" in drawn
    assert {(h, p) for cls, h, p in cells if cls == "slow"} >= {("n300", "n301"), ("n301", "n300")}
    assert f"{html.HEATMAP_MAX_HOSTS} of 400 hosts drawn" in page


def test_html_without_pairs_has_no_heatmap_and_says_no_problems() -> None:
    rep = Report([HostResult("a", "a", True)], [Finding("ssh.connect", "a", Status.PASS, "ok")], ["ssh"], "", 0.1)
    page = html.render(rep.redacted())
    assert "<svg" not in page and "No problems found." in page


# --- JUnit -------------------------------------------------------------------------------------------------


def test_junit_structure() -> None:
    rep = sample()
    root = ET.fromstring(junit.render(rep.redacted()))  # parses: control characters were dropped
    assert root.tag == "testsuites" and root.get("name") == "preflight"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"ssh", "versions", "sysctl", "os", "allreduce"}
    cases = {(c.get("classname"), c.get("name")): c for s in suites.values() for c in s.findall("testcase")}
    keys = {(f.check, f.host or "(cluster)") for f in rep.findings}
    assert set(cases) == keys
    assert int(root.get("tests", "-1")) == len(keys)
    fail = cases[("sysctl.somaxconn", "n2")].find("failure")
    assert fail is not None and fail.get("message", "").startswith("sysctl.somaxconn: <script>")
    assert "remedy:   echo <script>" in (fail.text or "")
    assert cases[("os.shm", "n4")].find("error") is not None
    assert cases[("versions.cann", "(cluster)")].find("skipped") is not None
    warn = cases[("os.shm", "n1")]
    assert list(warn) and warn[0].tag == "system-out" and "[warn]" in (warn[0].text or "")
    assert list(cases[("ssh.connect", "n1")]) == []
    for suite in suites.values():
        found = suite.findall("testcase")
        assert int(suite.get("tests", "-1")) == len(found)
        assert int(suite.get("failures", "-1")) == sum(c.find("failure") is not None for c in found)
        assert int(suite.get("errors", "-1")) == sum(c.find("error") is not None for c in found)
        assert int(suite.get("skipped", "-1")) == sum(c.find("skipped") is not None for c in found)
    assert int(root.get("failures", "-1")) == 1 + 4  # sysctl on n2 + allreduce.busbw on every host (pairs with n3)
    assert int(root.get("errors", "-1")) == 1 and int(root.get("skipped", "-1")) == 1


# --- Prometheus --------------------------------------------------------------------------------------------


def test_prometheus_exposition_parses_with_the_real_parser() -> None:
    rep = sample()
    odd = 'we"ird\\host\nx'
    rep = replace(rep, findings=[*rep.findings, Finding("os.shm", odd, Status.FAIL, "x")],
                  hosts=[*rep.hosts, HostResult(odd, "10.9.9.9", False)])  # the report is immutable
    text = prometheus.render(rep.redacted())
    assert text.endswith("\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert all(f.type == "gauge" for f in families.values())
    status = {(s.labels["check"], s.labels["host"]): s.value for s in families["preflight_check_status"].samples}
    assert status[("sysctl.somaxconn", "n2")] == 3 and status[("os.shm", "n4")] == 2  # fail 3, error 2
    assert status[("os.shm", "n1")] == 1 and status[("ssh.connect", "n1")] == 0
    assert status[("versions.cann", "")] == -1 and status[("os.shm", odd)] == 3
    assert len(status) == len({(f.check, f.host or "") for f in rep.findings})
    busbw = {(s.labels["host"], s.labels["peer"]): s.value for s in families["preflight_allreduce_busbw_gbps"].samples}
    assert busbw[("n1", "n2")] == 10.0 and busbw[("n1", "n3")] == 0.5 and busbw[("n3", "n1")] == 0.5
    reachable = {s.labels["host"]: s.value for s in families["preflight_host_reachable"].samples}
    assert reachable["n1"] == 1 and reachable[odd] == 0
    assert families["preflight_verdict"].samples[0].value == 3  # fail (an error beside it does not outrank it)
    assert families["preflight_exit_code"].samples[0].value == 1
    counts = {s.labels["status"]: s.value for s in families["preflight_findings"].samples}
    assert counts == {k: float(v) for k, v in rep.summary().items()}
    assert families["preflight_started_timestamp_seconds"].samples[0].value == 1795309200.0


def test_prometheus_per_host_verdicts_and_run_timestamps() -> None:
    """Each host with a finding: its own verdict (held 5), the run's start as its run timestamp, and a failed-run
    timestamp only for hosts with a fail (what examples/prometheus/preflight-rules.yml counts runs by)."""
    findings = [Finding("os.shm", "ok", Status.PASS, "m"), Finding("os.shm", "warned", Status.WARN, "m"),
                Finding("ssh.connect", "gone", Status.ERROR, "m"), Finding("os.shm", "bad", Status.FAIL, "m"),
                Finding("os.shm", "bad", Status.ERROR, "m"), Finding("os.shm", "kept", Status.FAIL, "m"),
                Finding("versions.cann", None, Status.FAIL, "m")]
    rep = Report([HostResult("ok", "10.0.0.1", True)], findings, ["os"], "2026-11-22T01:00:00+00:00", 1.0,
                 extra={"drain": {"held": ["kept"]}})

    def samples(report: Report) -> dict[str, dict[str, float]]:
        text = prometheus.render(report.redacted())
        return {f.name: {s.labels["host"]: s.value for s in f.samples}
                for f in text_string_to_metric_families(text) if f.name.startswith("preflight_host_")}

    got = samples(rep)
    assert got["preflight_host_verdict"] == {"ok": 0, "warned": 1, "gone": 2, "bad": 3, "kept": 5}
    assert got["preflight_host_run_timestamp_seconds"] == dict.fromkeys(["ok", "warned", "gone", "bad", "kept"],
                                                                        1795309200.0)
    assert got["preflight_host_failed_timestamp_seconds"] == {"bad": 1795309200.0, "kept": 1795309200.0}
    assert samples(replace(rep, findings=findings[:3]))["preflight_host_verdict"] == {"ok": 0, "warned": 1, "gone": 2}
    assert "preflight_host_failed_timestamp_seconds" not in samples(replace(rep, findings=findings[:3]))
    assert set(samples(replace(rep, started="unknown"))) == {"preflight_host_verdict", "preflight_host_reachable"}


# --- Markdown ----------------------------------------------------------------------------------------------


def test_markdown_summary_keeps_tables_intact() -> None:
    text = markdown.render(sample().redacted())
    assert text.startswith("## preflight: **FAIL**")
    table = [line for line in text.splitlines() if line.startswith("| ") and "|---" not in line]
    problems = [line for line in table if line.split(" | ")[0] in ("| fail", "| error", "| warn")]
    assert len(problems) == 4  # sysctl n2, busbw n3, os.shm n4 (error), os.shm n1 (warn)
    unescaped = [re.sub(r"\\\|", "", line).count("|") for line in problems]
    assert unescaped == [7, 7, 7, 7], problems  # 6 columns: no cell broke the table
    assert "\x1b" not in text and "\x00" not in text
    outside_code = re.sub(r"(`+) .*? \1", "", text)
    assert "<script" not in outside_code and "&lt;script&gt;" in outside_code  # code spans show it as text
    assert "| n1 - n3 | 0.5 | fail |" in text


# --- terminal at 200 hosts ---------------------------------------------------------------------------------


def test_terminal_200_hosts_fits_80_columns_worst_first() -> None:
    names = [f"gpu-node-{i:03d}" for i in range(1, 201)]
    families = ("os.shm", "net.mtu", "firewall.rules", "ports.hccl", "hccn.link", "npu.health", "allreduce.busbw")
    findings = []
    for n in names:
        findings.append(Finding("ssh.connect", n, Status.PASS, "ok"))
        findings.append(Finding("sysctl.somaxconn", n, Status.FAIL if n == "gpu-node-117" else Status.PASS,
                                "sysctl.somaxconn: " + ("/very/long/path/" * 12 if n == "gpu-node-117" else "ok"),
                                observed="128", expected=">= 65535", remedy="sysctl -w net.core.somaxconn=65535"))
        findings.append(Finding("versions.torch", n, Status.WARN if n in ("gpu-node-005", "gpu-node-006")
                                else Status.PASS, "versions.torch: x"))
        findings += [Finding(check, n, Status.PASS, "ok") for check in families]
    findings += [pair(a, b, 0.4 if "gpu-node-117" in (a, b) else 20.0 + i % 7,
                      Status.FAIL if "gpu-node-117" in (a, b) else Status.PASS)
                 for i, (a, b) in enumerate(zip(names[::2], names[1::2], strict=True))]
    rep = Report([HostResult(n, n, True) for n in names], findings,
                 ["ssh", "versions", "sysctl", "os", "net", "firewall", "ports", "hccn", "npu", "allreduce"],
                 "", 30.0, tool_version="0.1.0")
    console = Console(record=True, width=80, force_terminal=False, color_system=None)
    terminal.render(rep.redacted(), console)
    text = console.export_text()
    assert [line for line in text.splitlines() if len(line) > 80] == []
    assert "hosts x checks (1/2)" in text and "hosts x checks (2/2)" in text  # 11 families do not fit 80
    for part in text.split("hosts x checks (")[1:]:
        rows = [line.split("│")[0].strip() for line in part.splitlines() if line.startswith("gpu-node")
                and "│" in line]
        assert rows[:2] == ["gpu-node-117", "gpu-node-[005-006] (2)"], rows  # worst first
        assert rows[2].startswith("gpu-node-[001-004,007-1") and len(rows) <= 3, rows  # 197 hosts, folded
    headers = {cell.strip() for line in text.splitlines() if "┃" in line for cell in line.split("┃")}
    assert {"ssh", "versions", "sysctl", "os", "net", "firewall", "ports", "hccn", "npu", "allreduce"} < headers
    assert text.index("[fail] allreduce.busbw gpu-node-117") < text.index("[warn] versions.torch")
    assert "gpu-node-117 - gpu-node-118  busbw 0.4 GB/s (fail)" in text
    assert len(text.splitlines()) < 100


# --- loader, diff, baseline --------------------------------------------------------------------------------


def test_loader_round_trips_and_tolerates_unknown_keys(tmp_path: Path) -> None:
    rep = sample()
    data = rep.to_dict()
    data["future_key"] = {"x": 1}
    data["findings"][0]["future_field"] = 3
    data["hosts"][0]["future_field"] = 4
    back = json_report.from_dict(json.loads(json.dumps(data)))
    assert back.findings == rep.findings and back.hosts == rep.hosts and back.checks == rep.checks
    assert back.extra["future_key"] == {"x": 1}
    assert json_report.from_dict(data).to_dict()["summary"] == rep.summary()
    bad: object
    for bad in ({"schema": "other/1"}, [], {"schema": "preflight.report/1", "findings": [{"status": "pass"}]},
                {"schema": "preflight.report/1", "findings": [{"check": "a", "status": "weird"}]}):
        with pytest.raises(json_report.ReportFormatError):
            json_report.from_dict(bad)


def test_json_text_is_the_report_one_line_per_finding_and_redaction_is_done_once_per_report() -> None:
    """report.json and --json are one text (made once per report, kept with it: no global cache); redaction is
    done once, when the RedactedReport is built; a report changed after its redaction is redacted again."""
    rep = replace(sample(), secrets=frozenset({"hunter2secret"}))
    clean = rep.redacted()
    text = json_report.dumps(clean)
    assert json.loads(text) == json.loads(json.dumps(clean.to_dict()))
    lines = text.splitlines()
    assert len([line for line in lines if line.startswith('    {"check": ')]) == len(rep.findings)
    assert json_report.dumps(clean) is text and clean.redacted() is clean
    leaked = replace(clean, findings=[Finding("net.env", "n1", Status.WARN, "TOKEN=hunter2secret")])
    assert "hunter2secret" not in json_report.dumps(leaked) and "***" in json_report.dumps(leaked)
    changed = json_report.dumps(replace(clean, duration_s=2.0))
    assert "hunter2secret" not in changed and '"duration_s": 2.0' in changed


def test_diff_new_fixed_versions_and_busbw() -> None:
    old = sample(slow="n3", evil=False, bw=10.0)
    new = sample(slow=None, torch="2.5.1", bw=9.0)  # n3 fixed, torch drift, busbw -10%, sysctl/os new problems
    result = diff(old, new, threshold=0.05)
    assert result.got_worse()
    assert {(c.check, c.host) for c in result.worse} == {("sysctl.somaxconn", "n2"), ("os.shm", "n4"),
                                                         ("os.shm", "n1")}
    assert {(c.check, c.host, c.peer) for c in result.fixed} == {("allreduce.busbw", h, p) for h, p in
                                                                 [("n1", "n3"), ("n3", "n1"), ("n2", "n3"),
                                                                  ("n3", "n2"), ("n3", "n4"), ("n4", "n3")]}
    assert [(v.host, v.old, v.new) for v in result.versions] == [(f"n{i}", "2.4.0", "2.5.1") for i in range(1, 5)]
    assert sorted((b.host, b.peer, round(b.change, 2)) for b in result.busbw_down) == \
        [("n1", "n2", -0.1), ("n1", "n4", -0.1), ("n2", "n4", -0.1)]
    assert diff(old, new, threshold=0.2).busbw_down == []
    same = diff(old, old)
    assert not same.got_worse() and same.lines() == []


def test_diff_lists_the_problems_of_a_removed_host_as_gone_with_it() -> None:
    old = sample(slow="n3", evil=False, bw=10.0)
    new = replace(old, hosts=tuple(h for h in old.hosts if h.name != "n3"),
                  findings=tuple(f for f in old.findings if "n3" not in (f.host, f.peer)))
    result = diff(old, new)
    gone = {(c.check, c.host, c.peer, c.new) for c in result.fixed}
    assert ("allreduce.busbw", "n1", "n3", "host removed") in gone and len(gone) == 6
    assert all(c.new == "host removed" and "n3 is not in the new run" in c.message for c in result.fixed)
    assert result.hosts_removed == ["n3"] and not result.got_worse()


def test_baseline_findings_flag_drops_and_drift() -> None:
    base = sample(slow=None, evil=False, bw=10.0)
    now = sample(slow="n3", evil=False, bw=9.8, torch="2.5.1")
    found = baseline_findings(base, now, 0.05)
    busbw = {(f.host, f.peer): f.status for f in found if f.check == "baseline.busbw"}
    assert busbw == {("n3", "n1"): Status.FAIL, ("n3", "n2"): Status.FAIL, ("n3", "n4"): Status.FAIL,
                     ("n1", "n3"): Status.FAIL, ("n2", "n3"): Status.FAIL, ("n4", "n3"): Status.FAIL}
    slow = [f for f in found if f.check == "baseline.busbw" and f.status == Status.FAIL]
    assert all(f.message.startswith("baseline.busbw: ") and f.observed == "0.5 GB/s" and f.remedy for f in slow)
    versions = {f.host: (f.status, f.observed, f.expected) for f in found if f.check == "baseline.versions"}
    assert versions == {f"n{i}": (Status.WARN, "torch 2.5.1", "torch 2.4.0") for i in range(1, 5)}
    quiet = baseline_findings(base, sample(slow=None, evil=False, bw=9.7), 0.05)
    assert {f.status for f in quiet} == {Status.PASS} and len(quiet) == 8


def test_report_command_rerenders_and_refuses_other_files(tmp_path: Path) -> None:
    saved = json_report.write(sample().redacted(), tmp_path / "run")
    out = tmp_path / "out"
    proc = preflight("report", str(saved), "--html", str(out / "r.html"), "--junit", str(out / "j.xml"),
               "--prometheus", str(out / "p.prom"), "--markdown", str(out / "m.md"))
    assert proc.returncode == 1, proc.stderr  # the saved run failed
    assert (out / "r.html").read_text() == html.render(json_report.load(saved))
    ET.parse(out / "j.xml")
    assert list(text_string_to_metric_families((out / "p.prom").read_text()))
    assert (out / "m.md").read_text().startswith("## preflight: **FAIL**")
    term = preflight("report", str(saved))
    assert term.returncode == 1 and "hosts x checks" in term.stdout and "Problems (4)" in term.stdout
    (tmp_path / "other.json").write_text('{"schema": "something/2"}')
    (tmp_path / "junk.json").write_text("{not json")
    for name in ("other.json", "junk.json", "missing.json"):
        proc = preflight("report", str(tmp_path / name), "--terminal")
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.startswith(f"preflight: {tmp_path / name}: "), proc.stderr
    other = preflight("report", str(tmp_path / "other.json")).stderr
    assert "schema is 'something/2', expected 'preflight.report/1'" in other


def test_diff_and_baseline_commands(tmp_path: Path) -> None:
    good = json_report.write(sample(slow=None, evil=False).redacted(), tmp_path / "good")
    bad = json_report.write(sample(slow="n3", evil=False).redacted(), tmp_path / "bad")
    proc = preflight("diff", str(good), str(bad))
    assert proc.returncode == 1 and "WORSE" in proc.stdout
    assert "busbw    n1:0 <-> n3:0: 10 -> 0.5 GB/s (-95.0%)" in proc.stdout
    assert "worse    [pass -> fail] allreduce.busbw n3 <-> n1: allreduce.busbw: n3<->n1" in proc.stdout
    proc = preflight("diff", str(bad), str(good), "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["got_worse"] is False and len(data["fixed"]) == 6
    assert data["busbw_down"] == [] and data["version_drift"] == []
    assert preflight("diff", str(good), str(good)).returncode == 0
    assert preflight("diff", str(good), str(tmp_path / "nope.json")).returncode == 2
    store = tmp_path / "store" / "baseline.json"
    none_yet = preflight("baseline", "show", "--baseline", str(store))
    assert none_yet.returncode == 2 and "no baseline at" in none_yet.stderr and "baseline save" in none_yet.stderr
    refused = preflight("baseline", "save", str(bad), "--baseline", str(store))
    assert refused.returncode == 2 and "not a known-good run" in refused.stderr and not store.exists()
    assert preflight("baseline", "save", str(good), "--baseline", str(store)).returncode == 0
    assert json_report.load(store).findings == json_report.load(good).findings
    show = preflight("baseline", "show", "--baseline", str(store))
    assert show.returncode == 0 and "4 hosts" in show.stdout and "6 all_reduce pairs" in show.stdout
    proc = preflight("diff", str(bad), "--baseline", str(store), "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["old"] == str(store)
    (tmp_path / "wrong.json").write_text("[]")
    proc = preflight("run", "--baseline", str(tmp_path / "wrong.json"), "--checks", "sysctl")
    assert proc.returncode == 2 and proc.stderr.startswith("preflight: --baseline: ")


def test_a_long_remedy_is_printed_whole_never_wrapped_inside_its_quotes() -> None:
    remedy = ("echo 'net.core.somaxconn = 65535' >> /etc/sysctl.d/90-preflight.conf && sysctl -w "
              "net.core.somaxconn=65535 && sysctl -p /etc/sysctl.d/90-preflight.conf")
    rep = Report([HostResult("n1", "n1", True)],
                 [Finding("sysctl.somaxconn", "n1", Status.FAIL, "sysctl.somaxconn: 128 is below 65535",
                          observed="128", expected=">= 65535", remedy=remedy)], ["sysctl"], "", 1.0)
    console = Console(record=True, width=80, force_terminal=False, color_system=None)
    terminal.render(rep.redacted(), console)
    lines = console.export_text().splitlines()
    assert any(line.strip() == f"remedy:   {remedy}" for line in lines), lines


def test_one_cause_on_eight_devices_is_one_problem_naming_them() -> None:
    def ping(dev: int, received: int = 0) -> Finding:
        return Finding("hccn.reachability", "sv1", Status.FAIL,
                       f"hccn.reachability: device {dev} on sv1 -> device {dev} on sv3 (192.168.3.{10 + dev}): "
                       "no reply",
                       observed=f"{received}/3 received", expected="every ping answered", peer="sv3", device=dev,
                       peer_device=dev, remedy=f"hccn_tool -i {dev} -ping -g address 192.168.3.{10 + dev}  # on sv1")
    findings = [ping(d) for d in range(8)] + [ping(9, received=2)]  # device 9 loses some: another story
    rep = Report([HostResult("sv1", "sv1", True), HostResult("sv3", "sv3", True)], findings, ["hccn"], "", 1.0)
    found = terminal.problems(rep)
    assert len(found) == 2
    folded = next(f for f, _ in found if f.device == 0)
    assert folded.message.endswith("(the same on devices 0-7; shown for device 0)")
    console = Console(record=True, width=200, force_terminal=False, color_system=None)
    terminal.render(rep.redacted(), console)
    assert "Problems (2):" in console.export_text()
    assert html.render(rep.redacted()).count('class="problem"') == 2
    assert len(json.loads(json_report.dumps(rep.redacted()))["findings"]) == 9, "the JSON report keeps every finding"
