"""HCCL's host ports (issue 18): the 16/32 count per CANN release, HCCL_HOST_SOCKET_PORT_RANGE in the ports
check, and a port outside the ephemeral range needing no reservation. Sources: docs/versions-and-ports.md."""

from __future__ import annotations

from typing import Any

import pytest

from preflight.checks.ports import PortsCheck, job_ports
from preflight.context import EvalContext
from preflight.firewall.targets import targets_for
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding
from preflight.ports import hccl_host_ports, hccl_ports


def judge(reserved: str, cann: str | None = "8.0.0", env: dict[str, str] | None = None,
          port_range: str | None = None, listeners: list[dict[str, Any]] | None = None) -> dict[str, Finding]:
    """ports' findings on one npu host, by check id."""
    host = Host("n1", "n1", env=env or {})
    other: dict[str, Any] = {"versions": {"n1": {"cann": cann}}}
    if port_range is not None:
        other["sysctl"] = {"n1": {"ports": {"net.ipv4.ip_local_port_range": port_range,
                                            "net.ipv4.ip_local_reserved_ports": reserved}}}
    ctx = EvalContext(ClusterSpec(accelerator="npu", master="n0"), [host], params=PortsCheck.params,
                      other_facts=other)
    facts = {"n1": {"reserved_ports": reserved, "source": "ss", "ss": "ok", "listeners": listeners or []}}
    return {f.check: f for f in PortsCheck().evaluate(facts, ctx)}


@pytest.mark.parametrize(("cann", "needed", "advised"), [
    ("6.3.RC2", 16, 16), ("8.0.RC3", 16, 16), ("8.0.0", 16, 16),  # pages up to 8.0.0 say 16
    ("8.1.RC1", 16, 32), ("8.2.RC1.alpha002", 16, 32), (None, 16, 32), ("junk", 16, 32),  # no page settles it
    ("8.2.RC1", 32, 32), ("8.3.RC1", 32, 32), ("8.5.0", 32, 32), ("9.0.0", 32, 32),  # 32 from 8.2.RC1 on
])
def test_count_per_cann_release(cann: str | None, needed: int, advised: int) -> None:
    ports = hccl_host_ports({}, cann)
    assert (ports.count, ports.widened().count) == (needed, advised)


def test_cann_82rc1_needs_32() -> None:
    """8.2.RC1 commercial's page is the first saying 32: 16 reserved is a fail (it passed with the 8.5 cutoff)."""
    found = judge("60000-60015", "8.2.RC1")["ports.reserved"]
    assert found.status == "fail" and "60016-60031 missing" in found.message
    assert found.remedy is not None and "ip_local_reserved_ports=60000-60031 " in found.remedy


def test_release_in_doubt_warns_for_16_and_passes_32() -> None:
    doubt = judge("60000-60015", "8.1.RC1")["ports.reserved"]
    assert doubt.status == "warn" and "60016-60031 is not reserved" in doubt.message
    assert "no CANN page settles 16 or 32" in doubt.message and doubt.expected == "60000-60031 reserved"
    assert judge("60000-60031", "8.1.RC1")["ports.reserved"].status == "pass"
    assert judge("60000-60015", None)["ports.reserved"].status == "warn"
    assert judge("60000-60003", "8.1.RC1")["ports.reserved"].status == "fail", "16 are used for sure"


def test_old_cann_passes_16_and_32() -> None:
    narrow = judge("60000-60015", "8.0.0")["ports.reserved"]
    assert narrow.status == "pass" and "reserving 32 now is harmless" in narrow.message
    assert judge("60000-60031", "8.0.0")["ports.reserved"].status == "pass"


def test_host_socket_port_range_decides_the_ports() -> None:
    """HCCL_HOST_SOCKET_PORT_RANGE overrides HCCL_IF_BASE_PORT (CANN 8.1.RC1 on): reserve those ports, not 60000."""
    env = {"HCCL_HOST_SOCKET_PORT_RANGE": "61000-61003,61010", "HCCL_IF_BASE_PORT": "50000"}
    ok = judge("61000-61003,61010", "8.1.RC1", env)
    assert ok["ports.reserved"].status == "pass", ok["ports.reserved"].message
    assert ok["ports.reserved"].message.startswith("ports.reserved: HCCL ports 61000-61003,61010 reserved "
                                                   "(HCCL_HOST_SOCKET_PORT_RANGE=61000-61003,61010)")
    missing = judge("60000-60031", "8.5.0", env)["ports.reserved"]
    assert missing.status == "fail" and "61000-61003,61010 missing" in missing.message
    held = judge("61000-61003,61010", "8.5.0", env, listeners=[
        {"address": "0.0.0.0", "port": 61010, "interface": None, "processes": [{"name": "stale", "pid": 7}]}])
    assert held["ports.listening"].status == "fail" and "HCCL port 61010 is held by stale (pid 7)" in \
        held["ports.listening"].message
    assert "HCCL_HOST_SOCKET_PORT_RANGE to a free range" in (held["ports.listening"].remedy or "")


def test_host_socket_port_range_auto_and_junk() -> None:
    auto = judge("", "8.1.RC1", {"HCCL_HOST_SOCKET_PORT_RANGE": "auto"})["ports.reserved"]
    assert auto.status == "pass" and "nothing to reserve" in auto.message
    for junk in ("60000-", "0-10", "60000-60010,60005"):  # not a list, port 0, overlapping
        bad = judge("60000-60031", "8.5.0", {"HCCL_HOST_SOCKET_PORT_RANGE": junk})["ports.reserved"]
        assert bad.status == "fail" and "not overlapping, or auto" in (bad.expected or ""), junk


def test_host_socket_port_range_is_ignored_before_cann_81() -> None:
    found = judge("60000-60015", "8.0.0", {"HCCL_HOST_SOCKET_PORT_RANGE": "61000-61003"})["ports.reserved"]
    assert found.status == "pass" and "ignored before CANN 8.1.RC1" in found.message


def test_firewall_and_ports_share_the_ports() -> None:
    env = {"HCCL_HOST_SOCKET_PORT_RANGE": "61000-61003,61010"}
    ctx = EvalContext(ClusterSpec(accelerator="npu"), [Host("n1", "n1", env=env)],
                      other_facts={"versions": {"n1": {"cann": "8.5.0"}}})
    hccl = [t for t in targets_for("n1", {}, ctx)[0] if t.kind == "hccl"]
    assert [t.ranges for t in hccl] == [hccl_ports("n1", ctx).ranges] == [((61000, 61003), (61010, 61010))]
    assert job_ports(Host("n1", "n1", env=env), ctx.cluster) == [61000, 61001, 61002, 61003, 61010], \
        "the listening probe names the holders of these ports"


def test_ports_outside_the_ephemeral_range_need_no_reservation() -> None:
    """Reserving ports the kernel never hands out as source ports does nothing: no fail for not doing it."""
    outside = judge("", "8.0.0", port_range="32768\t59999")["ports.reserved"]
    assert outside.status == "pass", outside.message
    assert "outside net.ipv4.ip_local_port_range (32768-59999)" in outside.message
    straddle = judge("", "8.5.0", port_range="32768 60010")["ports.reserved"]
    assert straddle.status == "fail" and "60000-60010 missing" in straddle.message
    assert judge("", "8.0.0", port_range="1024 65000")["ports.reserved"].status == "fail"
    assert judge("", "8.0.0")["ports.reserved"].status == "fail", "range unknown: as if inside"
