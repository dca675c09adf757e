"""The Ascend simulators (tests/sim/hccn_tool, tests/sim/npu-smi) print the real formats from their state.

They are run directly (no cluster): copied into a temporary tools folder with a state file next to them,
as tests/ascend_sim.install does on a node.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ascend_sim import SIM_DIR, TOOLS, a3_state, healthy_state

FIXTURE_A3 = (Path(__file__).resolve().parent / "fixtures" / "npu" / "parse"
              / "real_a3_ascend910_16chips_idle_vllm_ascend_960.json")


def put(folder: Path, state: dict[str, Any] | None) -> Path:
    """Copy both simulators into ``folder`` (as ascend_sim.install does) with ``state`` next to them."""
    for tool in TOOLS:
        text = (SIM_DIR / tool).read_text().split("\n", 1)[1]
        (folder / tool).write_text(f"#!{sys.executable} -S\n{text}")
        (folder / tool).chmod(0o755)
    if state is not None:
        (folder / "sim_state.json").write_text(json.dumps(state))
    return folder


def sim(folder: Path, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(folder / tool), *args], capture_output=True, text=True, timeout=10, check=False)


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    state = healthy_state("910B3", [f"192.168.1.{10 + i}" for i in range(8)])
    state["devices"][1].update(ip=None, link="DOWN", net_health="Receive timeout", lldp=None, optical=False,
                               tls=1, gateway="192.168.1.1", mtu=1500)
    state["devices"][2]["error"] = "busy"
    state["devices"][3]["error"] = "not_supported"
    state["devices"][4]["error"] = "not_exist"
    state["devices"][5].update(health="Alarm", processes=[{"pid": 4242, "name": "python3", "memory_mb": 3000}])
    state["reachable"] = ["192.168.1.11"]
    return put(tmp_path, state)


def test_hccn_tool_get_ops(tools: Path) -> None:
    def ok(device: int, *op: str) -> list[str]:
        proc = sim(tools, "hccn_tool", "-i", str(device), *op, "-g")
        assert (proc.returncode, proc.stderr) == (0, ""), proc
        return proc.stdout.splitlines()

    assert ok(0, "-ip") == ["ipaddr:192.168.1.10", "netmask:255.255.255.0"]
    assert ok(0, "-link") == ["link status: UP"]
    assert ok(1, "-link") == ["link status: DOWN"]
    assert ok(0, "-net_health") == ["net health status: Success"]
    assert ok(1, "-net_health") == ["net health status: Receive timeout"]
    assert ok(0, "-mtu") == ["mtu:9000"]
    assert ok(1, "-mtu") == ["mtu:1500"]
    assert ok(0, "-speed") == ["Speed: 200000 Mb/s"]
    assert ok(0, "-netdetect") == ["netdetect addr: 0.0.0.0"]
    assert ok(1, "-gateway") == ["default gateway:192.168.1.1, Iface:eth1"]
    tls = ok(0, "-tls")
    assert tls[0] == ("dev_id:0, tls switch[0](0:disable, 1:enable), tls preconfigured[1](0:non-preset, 1:preset), "
                      "tls alarm time threshold[60]days")
    assert "dev_id:0, [pub cert] info:" in tls
    assert ok(1, "-tls")[0].startswith("dev_id:1, tls switch[1](0:disable, 1:enable)")
    lldp = ok(0, "-lldp")
    assert lldp[:4] == ["Chassis ID TLV", "\tMAC: aa:bb:cc:00:00:00", "Port ID TLV", "\tIfname: 400GE1/1/1:1"]
    assert lldp[lldp.index("System Name TLV") + 1] == "\tleaf-1" and lldp[-1] == "End of LLDPDU TLV"
    assert ok(1, "-lldp") == [], "no neighbour: empty output"
    optical = ok(0, "-optical")
    assert optical[:2] == ["optical info:", "present              : present"]  # the real module's layout
    assert "Tx Power0            : 1.4035 mW" in optical and "RxPower Low Thres    : 0.1445 mW" in optical
    assert ok(1, "-optical") == ["optical info:", "present              : not present"]


def test_hccn_tool_ping(tools: Path) -> None:
    good = sim(tools, "hccn_tool", "-i", "0", "-ping", "-g", "address", "192.168.1.11")
    assert good.returncode == 0
    lines = good.stdout.splitlines()
    assert lines[0] == "device 0 PING 192.168.1.11" and lines[1] == "recv seq=0,time=0.067000ms"
    assert lines[-1] == "3 packets transmitted, 3 received, 0.00% packet loss"
    bad = sim(tools, "hccn_tool", "-i", "6", "-ping", "-g", "address", "192.168.1.99")
    assert bad.returncode != 0
    assert bad.stdout.splitlines() == ["device 6 PING 192.168.1.99", "recv time out seq=0", "recv time out seq=1",
                                       "recv time out seq=2", "3 packets transmitted, 0 received, 100.00% packet loss"]
    down = sim(tools, "hccn_tool", "-i", "1", "-ping", "-g", "address", "192.168.1.11")
    assert down.returncode != 0 and "0 received" in down.stdout, "a device without IP / link reaches nobody"


@pytest.mark.parametrize(("args", "text", "status"), [
    (("-i", "1", "-ip", "-g"), "Get ipconf failed, because no ip was preset there!", 13),
    (("-i", "0", "-gateway", "-g"), "Get gateway failed, because no gateway was preset there!", 2),
    (("-i", "9", "-ip", "-g"), "Get invalid device id.", 4),
    (("-i", "x", "-link", "-g"), "Get invalid device id.", 4),
    (("-i", "4", "-link", "-g"), "The device is not exist!", None),
])
def test_hccn_tool_errors(tools: Path, args: tuple[str, ...], text: str, status: int | None) -> None:
    proc = sim(tools, "hccn_tool", *args)
    assert proc.stdout == "" and proc.stderr.splitlines() == [text]
    assert proc.returncode != 0 and (status is None or proc.returncode == status)


def test_hccn_tool_speed_unknown_and_link_stat(tmp_path: Path) -> None:
    """``Speed: Unknown!``, busy on stdout (info level) and the 910B driver's -link_stat layout (hicann/driver
    tool_ext.c, cmd.c, tool.c)."""
    state = healthy_state("910B3", ["192.168.1.10", "192.168.1.11"])
    state["devices"][0].update(speed=None, link_changes=[])
    state["devices"][2:] = []
    state["devices"][1]["error"] = "busy"
    folder = put(tmp_path, state)
    assert sim(folder, "hccn_tool", "-i", "0", "-speed", "-g").stdout == "Speed: Unknown!\n"
    busy = sim(folder, "hccn_tool", "-i", "1", "-ip", "-g")
    assert (busy.stdout, busy.stderr, busy.returncode != 0) == ("hccn_tool is busy, please try again.\n", "", True)
    lines = sim(folder, "hccn_tool", "-i", "0", "-link_stat", "-g").stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["[devid 0]current time        ", "[devid 0]link up count       ",
                                                      "[devid 0]link down count     ", "[devid 0]link change records "]
    assert lines[-1].endswith(": NA")


def test_hccn_tool_not_supported_is_stdout_exit_13(tools: Path, tmp_path: Path) -> None:
    """As the driver prints it (shared/reference/ascend.md): info level, stdout, exit status 13 (0x300d)."""
    whole = sim(tools, "hccn_tool", "-i", "3", "-lldp", "-g")  # "error": "not_supported": every op
    assert (whole.returncode, whole.stdout, whole.stderr) == (13, "The command is not supported on this product.\n", "")
    state = healthy_state("910B3", ["192.168.1.10"])
    state["devices"][0]["unsupported"] = ["-tls", "-optical", "-mtu"]
    (tmp_path / "partial").mkdir()
    folder = put(tmp_path / "partial", state)
    for op in ("-tls", "-optical", "-mtu"):
        proc = sim(folder, "hccn_tool", "-i", "0", op, "-g")
        assert (proc.returncode, proc.stdout, proc.stderr) == (13, "The command is not supported on this product.\n",
                                                               ""), op
    assert sim(folder, "hccn_tool", "-i", "0", "-link", "-g").stdout == "link status: UP\n"


def test_hccn_tool_usage(tools: Path) -> None:
    for args in (("-i", "0", "-bogus", "-g"), ("-i", "0", "-ip"), ()):
        proc = sim(tools, "hccn_tool", *args)
        assert proc.returncode != 0 and proc.stderr.startswith("Usage: hccn_tool"), args


def test_npu_smi_info_a2(tools: Path) -> None:
    proc = sim(tools, "npu-smi", "info")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("| npu-smi 24.1.0                   Version: 24.1.0")
    assert lines[3] == ("| NPU   Name                | Health        | Power(W)    Temp(C)           "
                        "Hugepages-Usage(page)|")
    assert lines[6] == ("| 0     910B3               | OK            | 92.5        48                0    / 0       "
                        "      |")
    assert lines[7] == ("| 0                         | 0000:C1:00.0  | 0           0    / 0          3400 / 65536   "
                        "      |")
    assert lines[21].startswith("| 5     910B3               | Alarm         |")
    assert "| No running processes found in NPU 0" + " " * 60 + "|" in lines
    assert ("| 5       0                 | 4242          | python3                  | 3000                    |"
            in lines)
    assert len({len(line) for line in lines if line}) == 1, "a rectangular box"


def test_npu_smi_info_910a(tmp_path: Path) -> None:
    state = healthy_state("910ProB", [f"10.0.{i}.1" for i in range(8)])
    lines = sim(put(tmp_path, state), "npu-smi", "info").stdout.splitlines()
    assert lines[1].startswith("| npu-smi 23.0.rc1                 Version: 23.0.rc1")
    assert lines[3] == "| NPU   Name           | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|"
    assert lines[6].startswith("| 0     910ProB        | OK            |")
    assert lines[7] == ("| 0                    | 0000:C1:00.0  | 0           1198 / 15137      3400 / 32768         |")
    assert "| No running processes found in NPU 7" in "\n".join(lines)


def test_npu_smi_list_and_errors(tools: Path, tmp_path: Path) -> None:
    listing = sim(tools, "npu-smi", "info", "-l")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[:5] == ["\tTotal Count                    : 8", "", "\tNPU ID                         : 0",
                         "\tChip Count                     : 1", ""]
    assert "\tNPU ID                         : 7" in lines
    bogus = sim(tools, "npu-smi", "bogus")
    assert bogus.returncode != 0 and bogus.stderr.startswith("Usage: npu-smi")
    (tools / "sim_state.json").unlink()
    unloaded = sim(tools, "npu-smi", "info")
    assert unloaded.returncode != 0 and unloaded.stdout == "dcmi module initialize failed. ret is -8005\n"
    assert sim(tools, "hccn_tool", "-i", "0", "-ip", "-g").stderr == "The device is not exist!\n"


def test_npu_smi_a3_prints_the_real_a3_table(tmp_path: Path) -> None:
    """The A3 table line for line as vllm-ascend #960 shows it, digits aside (values are the simulator's own)."""
    state = a3_state([f"10.20.{p % 2}.{10 + p // 2}" for p in range(16)])
    folder = put(tmp_path, state)
    real = json.loads((FIXTURE_A3).read_text())["outputs"]["info"]["stdout"]
    printed = sim(folder, "npu-smi", "info").stdout
    assert re.sub(r"\d", "0", printed) == re.sub(r"\d", "0", real)
    listing = sim(folder, "npu-smi", "info", "-l").stdout.splitlines()
    assert listing[0] == "\tTotal Count                    : 8"
    assert listing.count("\tChip Count                     : 2") == 8
    state["devices"][3]["processes"] = [{"pid": 3328327, "name": "", "memory_mb": 50119}]
    (folder / "sim_state.json").write_text(json.dumps(state))
    busy = sim(folder, "npu-smi", "info").stdout.splitlines()
    assert "| 1       1                 | 3328327       |                          | 50119                   |" in busy
