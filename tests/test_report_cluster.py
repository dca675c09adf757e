"""Reports from real runs on the namespace cluster: 4 nodes, allreduce (gloo on CPU torch) and versions, healthy
and with node3 throttled by tc; HTML (checked in Debian's headless chromium), JUnit, Prometheus, Markdown, the
baseline, `preflight diff` and `preflight report`."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_runner import preflight
from conftest import cluster_fixture
from netns_cluster import NetnsCluster
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.cluster

# Small and quick; 2 shared cores make healthy pairs differ by up to ~30% (see test_allreduce_cluster.py),
# the 50 Mbit throttle is ~100x slower than either.
PARAMS = {"sizes_mib": [1, 4], "warmup": 1, "iters": 3, "trials": 5, "budget_s": 3.0, "init_timeout_s": 6.0,
          "fraction": 0.5}
NODES = ("node1", "node2", "node3", "node4")
RED = (0xD6, 0x27, 0x28)  # preflight.render.html.SLOW


@dataclass
class Run:
    code: int
    dir: Path
    report: dict[str, Any]
    stdout: str

    def file(self, name: str) -> Path:
        return self.dir / name


def run(cluster: NetnsCluster, where: Path, *extra: str) -> Run:
    import yaml

    hosts = cluster.write_hosts_yaml(where / "hosts.yaml", cluster={"devices_per_host": 1})
    doc = yaml.safe_load(hosts.read_text())
    doc["checks"] = {"allreduce": PARAMS}
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = where / "r"
    proc = preflight("run", "--hosts", str(hosts), "--checks", "allreduce,versions", "--report-dir", str(out),
               "--junit", str(out / "junit.xml"), "--prometheus", str(out / "preflight.prom"),
               "--markdown", str(out / "summary.md"), *extra)
    assert proc.returncode in (0, 1, 4), proc.stdout + proc.stderr
    return Run(proc.returncode, out, json.loads((out / "report.json").read_text()), proc.stdout)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pfrep", subnet=20)


@pytest.fixture(scope="module")
def healthy(cluster: NetnsCluster, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run(cluster, tmp_path_factory.mktemp("healthy"))


@pytest.fixture(scope="module")
def baseline(healthy: Run, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "baseline.json"
    proc = preflight("baseline", "save", str(healthy.file("report.json")), "--baseline", str(path))
    assert proc.returncode == 0 and path.exists(), proc.stderr
    return path


@pytest.fixture(scope="module")
def throttled(cluster: NetnsCluster, baseline: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    cluster.exec("node3", ["tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "50mbit",
                           "burst", "32kbit", "latency", "400ms"])
    try:
        # threshold 0.8: healthy pairs on 2 shared cores vary by up to ~60% between runs; throttled ones drop ~99%
        return run(cluster, tmp_path_factory.mktemp("throttled"), "--baseline", str(baseline),
                   "--baseline-threshold", "0.8")
    finally:
        cluster.exec("node3", ["tc", "qdisc", "del", "dev", "eth0", "root"])


def statuses(report: dict[str, Any], check: str) -> dict[tuple[str, str | None], str]:
    return {(f["host"], f.get("peer")): f["status"] for f in report["findings"] if f["check"] == check}


def slow_cells(page: str) -> set[tuple[str, str]]:
    return {(h, p) for h, p in re.findall(r'<rect [^>]*class="slow" data-host="([^"]+)" data-peer="([^"]+)"', page)}


def test_healthy_run_writes_every_report_without_false_alarms(healthy: Run, baseline: Path,
                                                              cluster: NetnsCluster, tmp_path: Path) -> None:
    assert healthy.code == 0, healthy.stdout
    page = healthy.file("report.html").read_text()
    assert len(re.findall(r'<rect [^>]*class="ok"', page)) == 12 and slow_cells(page) == set()
    assert "No problems found." in page
    cases = ET.parse(healthy.file("junit.xml")).getroot()
    assert cases.get("failures") == "0" and cases.get("errors") == "0"
    assert {c.get("name") for c in cases.iter("testcase")} >= set(NODES)
    families = {f.name: f for f in text_string_to_metric_families(healthy.file("preflight.prom").read_text())}
    busbw = [s for s in families["preflight_allreduce_busbw_gbps"].samples]
    assert len(busbw) == 6 and all(s.value > 0 for s in busbw)
    assert all(s.value <= 0 for s in families["preflight_check_status"].samples)  # pass or skip
    assert "No problems found." in healthy.file("summary.md").read_text()
    # a second healthy run against the baseline: nothing flagged
    again = run(cluster, tmp_path, "--baseline", str(baseline), "--baseline-threshold", "0.8")
    assert again.code == 0, again.stdout
    assert statuses(again.report, "baseline.busbw") == {(n, None): "pass" for n in NODES}
    assert statuses(again.report, "baseline.versions") == {(n, None): "pass" for n in NODES}
    assert again.report["baseline"]["path"] == str(baseline)


def test_throttled_host_is_red_everywhere(throttled: Run, healthy: Run) -> None:
    assert throttled.code == 1
    report = throttled.report
    assert {f["host"] for f in report["findings"] if f["status"] in ("fail", "error")
            and f["check"].startswith("allreduce.")} == {"node3"}
    assert statuses(report, "baseline.busbw") == {**{("node3", n): "fail" for n in ("node1", "node2", "node4")},
                                                  **{(n, "node3"): "fail" for n in ("node1", "node2", "node4")}}
    assert set(statuses(report, "baseline.versions").values()) == {"pass"}
    page = throttled.file("report.html").read_text()
    assert slow_cells(page) == {(a, b) for a in NODES for b in NODES if a != b and "node3" in (a, b)}
    assert len(re.findall(r'<rect [^>]*class="ok"', page)) == 6  # the three pairs without node3, both ways
    root = ET.parse(throttled.file("junit.xml")).getroot()
    failed = {(c.get("classname"), c.get("name")) for c in root.iter("testcase") if c.find("failure") is not None}
    assert ("allreduce.busbw", "node3") in failed
    assert {("baseline.busbw", n) for n in NODES} <= failed
    assert root.get("failures") == str(sum(1 for s in root.iter("testsuite") for c in s.iter("testcase")
                                           if c.find("failure") is not None))
    families = {f.name: f for f in text_string_to_metric_families(throttled.file("preflight.prom").read_text())}
    status = {(s.labels["check"], s.labels["host"]): s.value for s in families["preflight_check_status"].samples}
    assert status[("allreduce.busbw", "node3")] == 3 and status[("baseline.busbw", "node1")] == 3  # 3 = fail
    busbw = {frozenset((s.labels["host"], s.labels["peer"])): s.value
             for s in families["preflight_allreduce_busbw_gbps"].samples}
    assert busbw[frozenset(("node1", "node3"))] < busbw[frozenset(("node1", "node2"))] / 5
    summary = throttled.file("summary.md").read_text()
    assert summary.startswith("## preflight: **FAIL**") and "| fail | allreduce.busbw | node3 |" in summary
    assert all(f"| fail | baseline.busbw | {n} |" in summary for n in NODES)


def test_diff_and_rerender_of_the_saved_runs(healthy: Run, throttled: Run, tmp_path: Path) -> None:
    old, new = str(healthy.file("report.json")), str(throttled.file("report.json"))
    proc = preflight("diff", old, new, "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    down = {frozenset((b["host"], b["peer"])) for b in data["busbw_down"]}
    assert {frozenset((n, "node3")) for n in ("node1", "node2", "node4")} <= down
    assert all(b["change_pct"] < -5 for b in data["busbw_down"])
    assert ("allreduce.busbw", "node3") in {(c["check"], c["host"]) for c in data["worse"]}
    assert data["version_drift"] == []
    back = preflight("diff", new, old, "--threshold", "0.8")  # healthy pairs differ by up to ~60% between runs here
    assert back.returncode == 0 and "fixed    [fail -> pass] allreduce.busbw node3" in back.stdout, back.stdout
    proc = preflight("report", new, "--html", str(tmp_path / "again.html"), "--terminal")
    assert proc.returncode == 1 and "all_reduce busbw (GB/s)" in proc.stdout
    svg = re.compile(r"<svg.*?</svg>", re.S)
    assert svg.findall((tmp_path / "again.html").read_text()) == svg.findall(throttled.file("report.html").read_text())


# --- headless browser ----------------------------------------------------------------------------------------


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("PREFLIGHT_REQUIRE_CLUSTER"):
            pytest.fail("chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed")
    return found


def browse(page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=90, check=False)


def console_messages(stderr: str) -> list[str]:
    """Console output of the page (logged by chromium as INFO:CONSOLE), uncaught errors and CSP refusals."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def decode_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """A minimal PNG decoder (8-bit RGB/RGBA, not interlaced): width, height, rows, bytes per pixel."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], (0, 0, 0, 0, 0, 0, 0)
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp
    prev, rows = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev, strict=True))
        elif kind == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif kind == 4:
            for i in range(stride):
                a, b, c = (line[i - bpp] if i >= bpp else 0), prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def test_html_in_headless_chromium(throttled: Run, tmp_path: Path) -> None:
    page = throttled.file("report.html")
    # the detector works: a page with a console error and an uncaught exception is caught
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><p>x</p><script>console.error("boom"); missing();</script>')
    assert len(console_messages(browse(bad, "--dump-dom").stderr)) == 2
    dom = browse(page, "--dump-dom")
    assert dom.returncode == 0 and console_messages(dom.stderr) == [], dom.stderr
    assert 'id="heatmap"' in dom.stdout and len(re.findall(r'class="slow"', dom.stdout)) == 6
    assert "<script" not in dom.stdout
    shot = tmp_path / "shot.png"
    proc = browse(page, f"--screenshot={shot}", "--window-size=1000,1200")
    assert proc.returncode == 0 and console_messages(proc.stderr) == [], proc.stderr
    width, height, rows, bpp = decode_png(shot.read_bytes())
    assert (width, height) == (1000, 1200)
    colours = Counter(row[i:i + 3] for row in rows for i in range(0, len(row), bpp))
    assert len(colours) > 50  # text, the matrix and the heatmap: not a blank page
    assert colours[bytes(RED)] > 6 * 40 * 40  # the six slow heatmap cells (46 px squares) at least
    assert colours.most_common(1)[0][0] == b"\xff\xff\xff"  # white page background
