"""``fix --include hccn.ip`` planning and deciding, pure: the hccn.ip / hccn.subnet findings and facts as the checks
produce them (hccn_tool and npu-smi outputs in the simulators' real formats) -> device-IP changes or printed lines.
The apply on the namespace cluster: tests/test_fix_device_ip_cluster.py."""

from __future__ import annotations

from typing import Any

from preflight.ascend.npu_smi import parse_info
from preflight.checks.base import ClusterSpec, EvalContext, Finding, Host, Status
from preflight.fix import policy
from preflight.fix.device_ip import decide, device_ip_changes, held_devices, undo_decision
from preflight.fix.model import Change, DeviceIp, Plan

MASK = "255.255.255.0"
TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
SMI = "/usr/local/Ascend/driver/tools/npu-smi"
# npu-smi info on an Atlas A2 (shared/reference/ascend.md): device 1 held by pid 4242
NPU_SMI = """+------------------------------------------------------------------------------------------------+
| npu-smi 23.0.0                   Version: 23.0.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 94.3        53                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          4487 / 65536         |
+===========================+===============+====================================================+
| 1     910B3               | OK            | 94.3        53                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          4487 / 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| No running processes found in NPU 0                                                            |
+===========================+===============+====================================================+
| 1       0                 | 4242          | python3                  | 3000                    |
+===========================+===============+====================================================+
"""


def ctx(devices: list[dict[str, Any]], npu: dict[str, Any] | None = None,
        others: dict[str, Any] | None = None) -> EvalContext:
    npu = npu if npu is not None else {"tool": SMI, **parse_info(NPU_SMI)}
    facts = {"hccn.ip": {"n1": {"tool": TOOL, "devices": devices}, **(others or {})}, "npu": {"n1": npu}}
    return EvalContext(ClusterSpec(accelerator="npu"), [Host("n1", "n1")], other_facts=facts)


def ok(device: int, ip: str) -> dict[str, Any]:
    return {"id": device, "state": "ok", "ip": ip, "netmask": MASK, "error": None}


def subnet(*devices: tuple[int, str]) -> Finding:
    remedy = " && ".join(f"hccn_tool -i {d} -ip -s address {ip} netmask {MASK}" for d, ip in devices)
    return Finding("hccn.subnet", "n1", Status.FAIL, "n1: devices ... outside the node's segment (A2)",
                   remedy=remedy)


def test_the_process_table_decides_which_devices_may_change() -> None:
    assert held_devices({"tool": SMI, **parse_info(NPU_SMI)}) == {1: "pid 4242 (python3)"}
    found = [subnet((0, "10.0.1.20"), (1, "10.0.1.21"))]
    changes, answered = device_ip_changes("n1", found, ctx([ok(0, "10.0.9.20"), ok(1, "10.0.9.21")]))
    assert answered == {0}
    assert [(c.kind, c.summary) for c in changes] == [
        ("device_ip", "NPU device 0 IP 10.0.9.20/24 -> 10.0.1.20/24"),
        ("print", "NPU device 1 IP -> 10.0.1.21: a process holds it (pid 4242 (python3)): printed only")]
    assert changes[0].commands == ((TOOL, "-i", "0", "-ip", "-s", "address", "10.0.1.20", "netmask", MASK),)
    assert changes[0].undo.commands == ((TOOL, "-i", "0", "-ip", "-s", "address", "10.0.9.20", "netmask", MASK),)


def test_what_cannot_be_told_is_printed_never_applied() -> None:
    found = [subnet((0, "10.0.1.20"))]
    no_table = {"tool": SMI, "devices": [{"id": 0, "chip_index": 0}], "processes": [], "process_table": False}
    for facts, why in ((ctx([ok(0, "10.0.9.20")], npu=no_table), "no readable process table"),
                       (ctx([ok(0, "10.0.9.20")], npu={"tool": None}), "npu-smi was not found"),
                       (ctx([{"id": 0, "state": "error", "error": "busy"}]), "could not be read (busy)"),
                       (ctx([ok(0, "10.0.9.20")], others={"n2": {"devices": [ok(5, "10.0.1.20")]}}),
                        "10.0.1.20 is n2 device 5's")):
        (change,), _ = device_ip_changes("n1", found, facts)
        assert change.kind == "print" and why in change.summary, change.summary
    clash = [subnet((0, "10.0.1.20")), Finding("hccn.ip", "n1", Status.FAIL, "no IP",
                                                remedy=f"hccn_tool -i 0 -ip -s address 10.0.1.99 netmask {MASK}")]
    (change,), _ = device_ip_changes("n1", clash, ctx([ok(0, "10.0.9.20")]))
    assert change.kind == "print" and "different addresses" in change.summary
    placeholder = Finding("hccn.ip", "n1", Status.FAIL, "duplicate",
                          remedy="hccn_tool -i 0 -ip -s address <unused address> netmask <netmask>")
    assert device_ip_changes("n1", [placeholder], ctx([ok(0, "10.0.9.20")])) == ([], set())


def test_only_with_include_and_the_plan_round_trips() -> None:
    found = [subnet((0, "10.0.1.20"))]
    facts = ctx([ok(0, "10.0.9.20"), ok(1, "10.0.1.21")])
    without = policy.plan(found, facts, run_id="r", created="t")
    assert [c.kind for c in without.hosts[0].changes] == ["print"]
    included = policy.plan(found, facts, include=("hccn.ip",), run_id="r", created="t")
    assert [c.kind for c in included.hosts[0].changes] == ["device_ip"]
    assert dict(included.hosts[0].state).keys() == {"device_ip"}
    assert Plan.loads(included.dumps()) == included
    moved = ctx([ok(0, "10.0.7.20"), ok(1, "10.0.1.21")])
    assert "device_ip state changed" in policy.stale(included, moved)["n1"]


def test_just_before_applying_and_undoing() -> None:
    ip = DeviceIp(TOOL, SMI, 0, "10.0.1.20", MASK, None)
    change = Change("n1", ("hccn.ip",), "device_ip", "s", device_ip=ip)
    assert decide(change, None, {}) == ("apply", "")
    assert decide(change, None, {0: "pid 7 (python3)"}) == ("refused", "a process holds device 0 now (pid 7 (python3))")
    assert decide(change, None, None)[0] == "refused"
    assert decide(change, ("10.0.1.20", MASK), None) == ("already", "")
    assert undo_decision(change, ("10.0.1.20", MASK))[0] == "refused"  # no address to put back
    back = Change("n1", ("hccn.ip",), "device_ip", "s", device_ip=DeviceIp(TOOL, SMI, 0, "10.0.1.20", MASK,
                                                                              ("10.0.9.20", MASK)))
    assert undo_decision(back, ("10.0.1.20", MASK)) == ("restore", "")
    assert undo_decision(back, ("10.0.9.20", MASK))[0] == "gone"
    assert "changed since the fix" in undo_decision(back, ("10.0.5.5", MASK))[1]
