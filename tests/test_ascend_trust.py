"""Issue 18 item 4 (Ascend): real hardware that was judged wrongly, each case from a real public output.

- Atlas A3 (vllm-ascend #960 / #4930 ``npu-smi info``: ``Ascend910``, two chip rows per NPU, Phy-ID 0-15) was
  classified as 910A: npu.count failed (16 rows vs 8 NPUs) and hccn.subnet applied the 910A pairing.
- ``net health status: Init`` (MindCluster fault-diag guide) failed; ``Detect ip set`` was a link failure.
- ``The command is not supported on this product.`` (stdout, exit 13) from -tls/-optical/-mtu was an error.
- hccn.rank_table matched server_id only to hosts.yaml's address/name and rejected the ``group_list`` format
  (Ascend/modelzoo ResNext50 hccl.json).
- A2 with routed per-plane segments (a gateway inside each device's segment) failed hccn.subnet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preflight.batch import ProbeOutput
from preflight.checks.hccn_link import HccnLinkCheck
from preflight.checks.hccn_rank_table import RankTableCheck
from preflight.checks.hccn_subnet import HccnSubnetCheck
from preflight.checks.npu import NpuCheck
from preflight.context import EvalContext
from preflight.inventory import ClusterSpec, Host

FIXTURES = Path(__file__).resolve().parent / "fixtures"
A3_IDLE = FIXTURES / "npu" / "parse" / "real_a3_ascend910_16chips_idle_vllm_ascend_960.json"
A3_BUSY = FIXTURES / "npu" / "parse" / "real_a3_ascend910_16chips_processes_vllm_ascend_4930.json"
GROUP_LIST = FIXTURES / "hccn.rank_table" / "evaluate" / "real_group_list_modelzoo_resnext50_hccl.json"
TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
# `npu-smi info -l` as the reference (shared/reference/ascend.md) describes it for A3: Total Count counts the
# 8 NPUs, each NPU block says Chip Count : 2 (no public A3 capture exists: tests/fixtures/README.md).
A3_LIST = "\tTotal Count                    : 8\n\n" + "".join(
    f"\tNPU ID                         : {n}\n\tChip Count                     : 2\n\n" for n in range(8))


def ctx(devices: int, hosts: tuple[str, ...] = ("n1",), other: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None, host_objs: list[Host] | None = None) -> EvalContext:
    cluster = ClusterSpec(accelerator="npu", devices_per_host=devices)
    return EvalContext(cluster=cluster, hosts=host_objs or [Host(name=h, address=h) for h in hosts],
                       params=dict(params or {}), other_facts=dict(other or {}))


def a3_facts(path: Path = A3_IDLE) -> dict[str, Any]:
    fixture = json.loads(path.read_text())
    outputs = {k: ProbeOutput(v["stdout"], v["stderr"], v["exit_status"]) for k, v in fixture["outputs"].items()}
    outputs["list"] = ProbeOutput(A3_LIST, "", 0)
    return NpuCheck().parse(outputs)


def statuses(findings: list[Any], prefix: str) -> dict[tuple[str, str | None], str]:
    return {(f.check, f.host): f.status.value for f in findings if f.check.startswith(prefix)}


# --- Atlas A3 ---------------------------------------------------------------------------------------------------

def test_a3_table_is_classified_a3_with_16_chips() -> None:
    facts = a3_facts()
    assert facts["generation"] == "A3" and facts["chip"] == "Ascend910"
    assert len(facts["devices"]) == 16 and sorted(d["phy_id"] for d in facts["devices"]) == list(range(16))
    assert {d["id"] for d in facts["devices"]} == set(range(8))
    assert [(d["id"], d["chip_index"], d["phy_id"]) for d in facts["devices"][2:4]] == [(1, 0, 2), (1, 1, 3)]
    assert facts["total_count"] == 8


def test_healthy_a3_node_passes_npu_with_devices_per_host_16() -> None:
    findings = NpuCheck().evaluate({"n1": a3_facts()}, ctx(16))
    assert set(statuses(findings, "npu.").values()) == {"pass"}, [f.message for f in findings]
    count = next(f for f in findings if f.check == "npu.count")
    assert "16 chips on 8 NPUs" in count.message
    assert next(f for f in findings if f.check == "npu.chip").message == "npu.chip: n1 has Ascend910 NPUs (A3)"


def test_a3_devices_per_host_8_names_the_chip_count() -> None:
    findings = NpuCheck().evaluate({"n1": a3_facts()}, ctx(8))
    count = next(f for f in findings if f.check == "npu.count")
    assert count.status.value == "fail"
    assert "devices_per_host counts chips" in count.message and "16" in str(count.remedy)


def test_a3_missing_chip_fails_count() -> None:
    facts = a3_facts()
    facts["devices"] = facts["devices"][:-1]
    count = next(f for f in NpuCheck().evaluate({"n1": facts}, ctx(16)) if f.check == "npu.count")
    assert count.status.value == "fail" and "15" in count.message


def test_a3_busy_chips_are_named_by_npu_and_chip() -> None:
    facts = a3_facts(A3_BUSY)
    procs = next(f for f in NpuCheck().evaluate({"n1": facts}, ctx(16)) if f.check == "npu.processes")
    assert procs.status.value == "fail" and "NPU 0 chip 1" in procs.message


def ip_facts(ips: Mapping[int, str], netmask: str = "255.255.255.0",
             gateways: Mapping[int, str] | None = None) -> dict[str, Any]:
    return {"tool": TOOL, "conf": {}, "conf_error": None, "devices": [
        {"id": d, "state": "ok", "ip": ip, "netmask": netmask, "error": None,
         "gateway": (gateways or {}).get(d), "gateway_error": None} for d, ip in sorted(ips.items())]}


def test_a3_chips_of_one_npu_in_different_segments_pass_subnet() -> None:
    # chip 0 of every NPU in 10.20.0.0/24, chip 1 in 10.20.1.0/24 (the deployer's rule: the two chips of one
    # NPU in different segments); the 910A rule (0/4 paired, 0-3 apart) would fail this node
    ips = {phy: f"10.20.{phy % 2}.{10 + phy // 2}" for phy in range(16)}
    other = {"npu": {"n1": a3_facts()}, "hccn.ip": {"n1": ip_facts(ips)}}
    findings = HccnSubnetCheck().evaluate({"n1": {}}, ctx(16, other=other))
    assert statuses(findings, "hccn.subnet") == {("hccn.subnet", "n1"): "pass"}, [f.message for f in findings]
    assert "A3" in findings[0].message


def test_a3_chips_of_one_npu_in_one_segment_fail_subnet() -> None:
    ips = {phy: f"10.20.{phy % 2}.{10 + phy // 2}" for phy in range(16)}
    ips[5] = "10.20.0.99"  # NPU 2's second chip now shares chip 4's segment
    other = {"npu": {"n1": a3_facts()}, "hccn.ip": {"n1": ip_facts(ips)}}
    findings = HccnSubnetCheck().evaluate({"n1": {}}, ctx(16, other=other))
    bad = [f for f in findings if f.status.value != "pass"]
    assert [(f.status.value, f.device, f.peer_device) for f in bad] == [("fail", 5, 4)]
    assert "NPU 2" in bad[0].message


# --- A2 routed planes -------------------------------------------------------------------------------------------

def a2_npu(host_devices: int = 8) -> dict[str, Any]:
    return {"tool": "/usr/local/bin/npu-smi", "error": None, "chip": "910B3", "generation": "A2",
            "devices": [{"id": i, "chip": "910B3", "health": "OK", "bus_id": None} for i in range(host_devices)]}


def test_a2_routed_per_plane_segments_warn() -> None:
    ips = {d: f"10.{d}.0.11" for d in range(8)}
    gateways = {d: f"10.{d}.0.1" for d in range(8)}
    other = {"npu": {"n1": a2_npu()}, "hccn.ip": {"n1": ip_facts(ips, gateways=gateways)}}
    findings = HccnSubnetCheck().evaluate({"n1": {}}, ctx(8, other=other))
    assert [(f.status.value, f.host) for f in findings] == [("warn", "n1")], [f.message for f in findings]
    assert "routed" in findings[0].message and "hccn.reachability" in str(findings[0].remedy)


def test_a2_per_plane_segments_without_gateways_still_fail() -> None:
    ips = {d: f"10.{d}.0.11" for d in range(8)}
    other = {"npu": {"n1": a2_npu()}, "hccn.ip": {"n1": ip_facts(ips)}}
    findings = HccnSubnetCheck().evaluate({"n1": {}}, ctx(8, other=other))
    assert {f.status.value for f in findings} == {"fail"}


# --- hccn_tool net_health and unsupported commands ----------------------------------------------------------------

def link_outputs(net_health: str, unsupported: tuple[str, ...] = ()) -> ProbeOutput:
    """The hccn.link script's output for one device (the formats of shared/reference/ascend.md)."""
    bodies = {"link": ("link status: UP", 0), "net_health": (f"net health status: {net_health}", 0),
              "lldp": ("Chassis ID TLV\n\tMAC: aa:bb:cc:dd:ee:ff\nPort ID TLV\n\tIfname: 400GE1/1/20:2\n"
                       "System Name TLV\n\tleaf-1\nEnd of LLDPDU TLV", 0),
              "tls": ("dev_id:0, tls switch[0](0:disable, 1:enable), tls preconfigured[1](0:non-preset, 1:preset), "
                      "tls alarm time threshold[60]days", 0),
              "optical": ("optical info:\n    present              : present", 0), "mtu": ("mtu:9000", 0),
              "speed": ("Speed: 200000 Mb/s", 0)}
    for op in unsupported:
        bodies[op] = ("The command is not supported on this product.", 13)
    text = f"@@tool {TOOL}\n" + "".join(f"@@call 0 {op}\n{out}\n\n@@rc 0 {rc}\n" for op, (out, rc) in bodies.items())
    return ProbeOutput(text, "", 0)


def link_findings(net_health: str, unsupported: tuple[str, ...] = ()) -> dict[str, Any]:
    check = HccnLinkCheck()
    facts = check.parse({"link": link_outputs(net_health, unsupported)})
    return {f.check: f for f in check.evaluate({"n1": facts}, ctx(1))}


def test_net_health_init_is_healthy() -> None:
    # the real line from MindCluster's fault-diag guide (tests/fixtures: /work/corpus net_health_init_mindcluster_doc)
    found = link_findings("Init")
    assert found["hccn.link.net_health"].status.value == "pass"
    assert "Init" in found["hccn.link.net_health"].message


def test_detect_ip_set_is_a_warning_with_the_setting_command() -> None:
    found = link_findings("Detect ip set")["hccn.link.net_health"]
    assert found.status.value == "warn"
    assert "hccn_tool -i 0 -netdetect -s address" in str(found.remedy)


def test_net_health_fault_still_fails() -> None:
    assert link_findings("Fault")["hccn.link.net_health"].status.value == "fail"


def test_not_supported_tls_optical_mtu_are_skips() -> None:
    found = link_findings("Success", ("tls", "optical", "mtu"))
    assert {op: found[f"hccn.link.{op}"].status.value for op in ("tls", "optical", "mtu")} == \
        {"tls": "skip", "optical": "skip", "mtu": "skip"}
    assert "not supported on this product" in found["hccn.link.tls"].message
    assert found["hccn.link.up"].status.value == "pass"


# --- hccn.rank_table --------------------------------------------------------------------------------------------

def live_ip(ips: Mapping[int, str]) -> dict[str, Any]:
    return {"tool": TOOL, "devices": [{"id": d, "state": "ok", "ip": ip, "netmask": "255.255.255.0"}
                                      for d, ip in ips.items()]}


def net_facts(own: list[str], resolved: list[str]) -> dict[str, Any]:
    return {"hostname": "x", "self": {"addrs": resolved, "error": None},
            "interfaces": {"eth0": {"addrs": [f"{a}/24" for a in own]}, "lo": {"addrs": ["127.0.0.1/8"]}}}


TABLE_BY_IP = {"status": "completed", "version": "1.0", "server_count": "2", "server_list": [
    {"server_id": "10.0.0.11", "device": [{"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"}]},
    {"server_id": "10.0.0.12", "device": [{"device_id": "0", "device_ip": "192.168.1.9", "rank_id": "1"}]}]}


def test_rank_table_keyed_by_ip_matches_hosts_named_in_hosts_yaml() -> None:
    other = {"hccn.ip": {"node1": live_ip({0: "192.168.1.8"}), "node2": live_ip({0: "192.168.1.9"})},
             "net": {"node1": net_facts(["10.0.0.11"], ["10.0.0.11"]), "node2": net_facts(["10.0.0.12"], [])}}
    found = RankTableCheck().evaluate({"node1": {"table": None}, "node2": {"table": None}},
                                      ctx(1, ("node1", "node2"), other, {"rank_table": TABLE_BY_IP}))
    assert statuses(found, "hccn.rank_table") == {("hccn.rank_table", "node1"): "pass",
                                                  ("hccn.rank_table", "node2"): "pass"}, [f.message for f in found]
    assert "net" in RankTableCheck.needs


def test_rank_table_legacy_group_list_real_sample() -> None:
    table = json.loads(GROUP_LIST.read_text())["params"]["rank_table"]
    live = {d: ip for d, ip in enumerate(["192.168.10.64", "192.168.20.64", "192.168.130.64", "192.168.140.64",
                                         "192.168.10.65", "192.168.20.65", "192.168.30.65", "192.168.40.65"])}
    hosts = [Host(name="atlas1", address="10.246.246.60")]
    good = RankTableCheck().evaluate({"atlas1": {"table": None}}, ctx(
        8, other={"hccn.ip": {"atlas1": live_ip(live)}}, params={"rank_table": table}, host_objs=hosts))
    assert statuses(good, "hccn.rank_table") == {("hccn.rank_table", "atlas1"): "pass"}, [f.message for f in good]
    live[6] = "192.168.30.66"
    bad = RankTableCheck().evaluate({"atlas1": {"table": None}}, ctx(
        8, other={"hccn.ip": {"atlas1": live_ip(live)}}, params={"rank_table": table}, host_objs=hosts))
    assert [(f.status.value, f.device) for f in bad] == [("fail", 6)]
