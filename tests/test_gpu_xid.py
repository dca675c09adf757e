"""gpu.xid beyond its fixtures: the probe counts a flood on the node (run for real, with each awk there is), and
NVIDIA's Xid catalog (preflight/xid_catalog.py) decides what each line asks for."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.batch import ProbeOutput
from preflight.checks.gpu_xid import GpuXidCheck, _judge
from preflight.model import Status
from preflight.xid_catalog import ACTIONS, XIDS, assess, describe, parse_line
from preflight.xid_log import READ, line_time

ROOT = Path(__file__).resolve().parent.parent
# The real line of NVIDIA/open-gpu-kernel-modules#1150 (an Xid 45 after an NVLink Xid 149), repeated with times.
FLOOD_LINE = "NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch {ch:08x} caused by previous Xid 149"
AWKS = {"mawk": ["mawk"], "gawk": ["gawk"], "original-awk": ["original-awk"], "busybox": ["busybox", "awk"]}


def _flood_log() -> str:
    """3000 ordinary kernel lines, an Xid 79 early on, then 672 Xid 45 over three hours (dmesg -T times)."""
    lines = [f"[Mon May 18 00:{i % 60:02d}:00 2026] usb 1-{i}: new device" for i in range(3000)]
    lines.insert(10, "[Mon May 18 00:00:10 2026] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.")
    for i in range(672):
        seconds = 3600 + i * 16  # 01:00:00 .. 03:58:56
        stamp = f"[Mon May 18 {seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d} 2026]"
        lines.append(f"{stamp} {FLOOD_LINE.format(ch=i)}")
    return "\n".join(lines) + "\n"


def _run_probe(tmp_path: Path, log: str, awk: list[str]) -> ProbeOutput:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "kernel.log").write_text(log)
    for name, body in (("dmesg", f"cat {tmp_path / 'kernel.log'}"), ("awk", f'exec {" ".join(awk)} "$@"')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    done = subprocess.run(["sh", "-c", READ], capture_output=True, text=True, timeout=60,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    return ProbeOutput(done.stdout, done.stderr, done.returncode)


@pytest.mark.parametrize("awk", sorted(AWKS))
def test_a_flood_is_counted_on_the_node_before_anything_is_cut(tmp_path: Path, awk: str) -> None:
    if not shutil.which(AWKS[awk][0]):
        pytest.skip(f"{awk} is not installed here")
    out = _run_probe(tmp_path, _flood_log(), AWKS[awk])
    assert out.exit_status == 0 and out.stdout.count("\n") == 6, out  # bounded: 3 framing lines, 2 kinds, 1 last line
    facts = GpuXidCheck().parse({"klog": out})
    assert (facts["lines"], facts["xid_lines"], facts["error"]) == (3673, 673, None)
    flood = next(g for g in facts["groups"] if g["xid"] == 45)
    assert (flood["count"], flood["cause"], flood["first"], flood["last"]) == (
        672, 149, "Mon May 18 01:00:00 2026", "Mon May 18 03:58:56 2026")
    assert [g["xid"] for g in facts["groups"]] == [79, 45]  # the early fatal Xid is not pushed out
    result = _judge("node1", facts)
    assert result.status is Status.FAIL
    assert "Xid 45 (Preemptive cleanup, caused by Xid 149 (NVLINK_NETIR_ERROR)) x672 on 0000:dc:00 over 2h58m" \
        in result.message
    assert "Xid 79 (GPU has fallen off the bus) x1 on 0000:2b:00" in result.message


def test_a_log_without_xid_lines_is_counted_and_passes(tmp_path: Path) -> None:
    out = _run_probe(tmp_path, "[Mon May 18 00:00:00 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n",
                     ["mawk"] if shutil.which("mawk") else ["awk"])
    assert out.stdout == "@@source dmesg\n@@lines 1\n@@xids 0\n"
    assert _judge("n1", GpuXidCheck().parse({"klog": out})).status is Status.PASS


@pytest.mark.parametrize(("code", "text", "level"), [
    (149, "NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000)", "fatal"),
    (145, "RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008)", "benign"),
    (144, "", "fatal"),  # no line to decode: the catalog's WORKFLOW_NVLINK5_ERR
    *((code, "", "fatal") for code in range(145, 151)),
    (154, "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)", "fatal"),
    (154, "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)", "benign"),
    (45, "pid=22884, name=VLLM::Worker, channel 0x00000010 caused by previous Xid 45", "benign"),
    (13, "Graphics SM Warp Exception", "benign"), (63, "Row Remapper: New row marked", "benign"),
    (79, "GPU has fallen off the bus.", "fatal"), (48, "", "fatal"), (119, "", "fatal"), (74, "", "fatal"),
    (16, "Head 00000000 Count 00000000", "fatal"),  # unused on Ampere and newer: CONTACT_SUPPORT
    (159, "", "check"), (171, "", "check"), (173, "", "check"),
])
def test_what_the_catalog_asks_for(code: int, text: str, level: str) -> None:
    assert assess(code, text).level == level


def test_xid45_is_judged_as_its_cause_and_by_the_causes_own_line() -> None:
    def groups(*items: tuple[str, int, int | None, str]) -> dict[str, object]:
        return {"source": "dmesg", "lines": 9, "xid_lines": len(items), "left_out": 0, "unreadable": [],
                "groups": [{"bus": b, "xid": x, "cause": c, "count": 1, "first": None, "last": None, "text": t}
                           for b, x, c, t in items]}
    cleanup = "pid=1, name=python3, Ch 00000001 caused by previous Xid 145"
    alone = groups(("0000:ed:00", 45, 145, cleanup))
    assert _judge("n1", alone).status is Status.FAIL  # the 145 line is not in the log: its catalog entry decides
    nonfatal = groups(("0000:ed:00", 145, None, "RLW_REMAP Nonfatal XC0 i0 Link 02 (0x1 0x2)"),
                      ("0000:ed:00", 45, 145, cleanup))
    assert _judge("n1", nonfatal).status is Status.PASS  # its cause says Nonfatal on that GPU, and no Xid 154
    elsewhere = groups(("0000:ba:00", 145, None, "RLW_REMAP Nonfatal XC0 i0 Link 02 (0x1 0x2)"),
                       ("0000:ed:00", 45, 145, cleanup))
    assert _judge("n1", elsewhere).status is Status.FAIL  # another GPU's line says nothing of this one


@pytest.mark.parametrize(("line", "when"), [
    ("[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=1", "Sun Feb 23 16:24:18 2025"),
    ("May 27 16:50:10 fedora kernel: NVRM: Xid (PCI:0000:09:00): 79, GPU has fallen off the bus.", "May 27 16:50:10"),
    ("192.168.11.119: kern: warning: [2026-04-22T21:26:20.599488292Z]: NVRM: Xid (PCI:0000:48:00): 74, x",
     "2026-04-22T21:26:20.599488292Z"),
    ("[24128.828315] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000", "24128.828315"),
    ("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990", None),
])
def test_line_times_in_the_formats_seen(line: str, when: str | None) -> None:
    assert parse_line(line) is not None and line_time(line) == when


def test_lines_parse_in_every_published_shape() -> None:
    mig = parse_line("NVRM: Xid (PCI:0000:48:00 GPU-I:02 GPU-CI:01): 31, pid=1, name=x, Ch 00000001")
    old = parse_line("NVRM: Xid (0000:01:00): 16, Head 00000000 Count 00000000")
    assert (mig and mig.bus, old and old.code) == ("0000:48:00", 16)
    assert parse_line("NVRM: Xid (43, pid: 5678): ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR") is None
    assert parse_line("NVRM: GPU at PCI:0000:9b:00: GPU-509665ad") is None


def test_the_catalog_is_whole_and_uses_the_known_actions() -> None:
    assert sorted(XIDS) == list(range(1, 173))  # every code of the r590 catalog, none missing
    assert {x.action for x in XIDS.values()} <= set(ACTIONS)
    assert XIDS[45].mnemonic == "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL" and XIDS[45].action == "WORKFLOW_XID_45"
    assert [XIDS[c].action for c in range(144, 151)] == ["WORKFLOW_NVLINK5_ERR"] * 7
    assert describe(79) == "Xid 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS (GPU has fallen off the bus): RESTART_BM"


def test_the_catalog_is_neutral() -> None:
    tree = ast.parse((ROOT / "preflight" / "xid_catalog.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and m.startswith("preflight")}, imported
