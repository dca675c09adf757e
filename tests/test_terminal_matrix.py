"""The all_reduce busbw hosts x hosts matrix of the terminal report, from a synthetic report only."""

from __future__ import annotations

from itertools import combinations

from rich.console import Console

from preflight.model import Finding, HostResult, Report, Status
from preflight.render import terminal


def pair(host: str, peer: str, busbw: float, status: Status = Status.PASS, device: int = 0,
         peer_device: int = 0) -> Finding:
    check = "allreduce.pair" if status == Status.PASS else "allreduce.busbw"
    return Finding(check, host, status, f"{check}: {host}<->{peer}", peer=peer, device=device,
                   peer_device=peer_device, algbw_gbps=busbw, busbw_gbps=busbw, bytes=4 << 20)


def report(names: list[str], slow: str | None = None) -> Report:
    """Every host pair at 10 + i GB/s; pairs with ``slow`` fail at 0.5 GB/s (filed under both hosts)."""
    findings = [Finding("allreduce.busbw", n, Status.PASS if n != slow else Status.FAIL, "allreduce.busbw: x")
                for n in names]
    for i, (a, b) in enumerate(combinations(names, 2)):
        if slow in (a, b):
            findings += [pair(a, b, 0.5, Status.FAIL), pair(b, a, 0.5, Status.FAIL)]
        else:
            findings.append(pair(a, b, 10.0 + i))
    findings.append(pair(names[0], names[0], 99.0, device=0, peer_device=1))  # intra-host: not in the matrix
    findings.append(pair(names[0], names[1], 77.0, device=1, peer_device=1))  # device 1: not in the matrix
    return Report([HostResult(n, f"10.0.0.{i}", True) for i, n in enumerate(names)], findings, ["allreduce"],
                  "2024-01-01T00:00:00Z", 1.0)


def render(rep: Report, width: int) -> tuple[str, str]:
    console = Console(record=True, width=width, force_terminal=True, color_system="truecolor")
    terminal.render(rep.redacted(), console)
    return console.export_text(clear=False), console.export_html(inline_styles=True)


def test_matrix_of_four_hosts_fits_and_colours_failing_cells() -> None:
    text, html = render(report(["n1", "n2", "n3", "n4"], slow="n3"), 80)
    assert "all_reduce busbw (GB/s)" in text
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()
            if line.split() and line.split()[0] in ("n1", "n2", "n3", "n4") and "│" in line}
    assert [c for c in rows["n1"] if c != "│"] == ["-", "10", "0.5", "12"]
    assert [c for c in rows["n3"] if c != "│"] == ["0.5", "0.5", "-", "0.5"]
    assert [c for c in rows["n4"] if c != "│"] == ["12", "14", "0.5", "-"]
    assert "99" not in text and "77" not in text  # intra-host and device-1 pairs stay out
    assert text.index("hosts x checks") < text.index("all_reduce busbw") < text.index("Problems")
    assert html.count(">0.5<") == 6
    red = [part for part in html.split("<span") if ">0.5<" in part]
    assert all("color: #800000" in part or "color: #ff0000" in part for part in red), red
    green = [part for part in html.split("<span") if " 14</span>" in part]
    assert green and all("#008000" in part or "#00ff00" in part for part in green), green


def test_wide_matrix_falls_back_to_the_ten_slowest_pairs() -> None:
    names = [f"gpu-node-{i:03d}" for i in range(1, 13)]
    text, _ = render(report(names, slow="gpu-node-007"), 80)
    assert "all_reduce busbw (GB/s): 10 slowest of 66 host pairs" in text
    lines = [line.strip() for line in text.splitlines() if " - " in line and "busbw" in line]
    assert len(lines) == 10
    assert lines[0] == "gpu-node-001 - gpu-node-007  busbw 0.5 GB/s (fail)"
    assert sum("(fail)" in line for line in lines) == 10 and all("gpu-node-007" in line for line in lines[:10])
    text, _ = render(report(names), 200)
    assert not [line for line in text.splitlines() if " - " in line and "busbw" in line]
    assert "gpu-node-012 │" in text  # twelve columns fit in 200


def test_fallback_lists_ok_pairs_slowest_first() -> None:
    names = [f"a-very-long-host-name-{i}" for i in range(1, 5)]
    text, _ = render(report(names), 80)
    lines = [line.strip() for line in text.splitlines() if " - " in line and "busbw" in line]
    assert lines[0] == "a-very-long-host-name-1 - a-very-long-host-name-2  busbw 10 GB/s (ok)"
    assert len(lines) == 6 and all(line.endswith("(ok)") for line in lines)
    text, _ = render(report(names), 200)
    assert not [line for line in text.splitlines() if " - " in line and "busbw" in line]


def test_no_pair_figures_no_matrix() -> None:
    rep = Report([HostResult("n1", "10.0.0.1", True)], [Finding("sysctl.somaxconn", "n1", Status.PASS, "ok")],
                 ["sysctl"], "2024-01-01T00:00:00Z", 1.0)
    text, _ = render(rep, 80)
    assert "all_reduce busbw" not in text
