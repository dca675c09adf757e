"""The listen-queue thresholds follow the job: its rank count, the floor, the vendor advice, the user's override."""

from __future__ import annotations

import pytest

from preflight.checks.base import EvalContext
from preflight.checks.sysctl import FLOOR, NPU_RECOMMENDED, SysctlCheck, needed
from preflight.container import container_sysctl_remedy
from preflight.inventory import ClusterSpec, Host
from preflight.ranks import Ranks, from_slurm, world

SOMAXCONN = "net.core.somaxconn"
BACKLOG = "net.ipv4.tcp_max_syn_backlog"


def judge(values: dict[str, str], cluster: ClusterSpec, hosts: int, **params: int) -> dict[str, tuple[str, str]]:
    """sysctl's verdict on host n0 of ``hosts`` hosts: finding id -> (status, message)."""
    check = SysctlCheck()
    inventory = [Host(f"n{i}", f"n{i}") for i in range(hosts)]
    ctx = EvalContext(cluster, inventory, {**check.params, **params}, {})
    findings = check.evaluate({"n0": {"values": values}}, ctx)
    return {f.check: (f.status.value, f.message) for f in findings}


STOCK = {SOMAXCONN: "4096", BACKLOG: "1024"}  # kernel >= 5.4 defaults (the syn backlog grows with memory)
OLD = {SOMAXCONN: "128", BACKLOG: "128"}  # the pre-5.4 somaxconn default, the least syn backlog the kernel picks


def test_a_stock_kernel_passes_a_two_node_sixteen_rank_gpu_cluster() -> None:
    got = judge(STOCK, ClusterSpec(accelerator="gpu", devices_per_host=8), hosts=2)
    assert {k: v[0] for k, v in got.items()} == {"sysctl.somaxconn": "pass", "sysctl.tcp_max_syn_backlog": "pass"}


def test_an_old_kernel_fails_a_sixty_four_node_512_rank_cluster_with_the_reasoning() -> None:
    got = judge(OLD, ClusterSpec(accelerator="gpu", devices_per_host=8), hosts=64)
    status, message = got["sysctl.somaxconn"]
    assert status == "fail"
    assert message.startswith("sysctl.somaxconn: net.core.somaxconn is 128, below 1024 = 2 x 512 ranks "
                              "(64 hosts x 8 devices) connecting to the master's rendezvous")
    assert got["sysctl.tcp_max_syn_backlog"][0] == "fail"


@pytest.mark.parametrize(("ranks", "minimum"), [(1, FLOOR), (16, FLOOR), (64, FLOOR), (65, 130), (512, 1024),
                                                (40000, 80000)])
def test_the_need_is_twice_the_ranks_never_below_the_floor(ranks: int, minimum: int) -> None:
    assert needed(SOMAXCONN, Ranks(ranks, "r"), "gpu").minimum == minimum


def test_without_a_rank_count_only_the_floor_applies() -> None:
    need = needed(BACKLOG, None, "cpu")
    assert (need.minimum, need.advised) == (FLOOR, 0) and "--ranks" in need.why
    got = judge({SOMAXCONN: "128", BACKLOG: "127"}, ClusterSpec(ranks=0), hosts=1)
    assert got["sysctl.somaxconn"][0] == "pass" and got["sysctl.tcp_max_syn_backlog"][0] == "fail"


def test_npu_clusters_warn_below_ascends_recommendation_but_fail_only_below_the_need() -> None:
    npu = ClusterSpec(accelerator="npu", devices_per_host=8)
    assert {v[0] for v in judge(STOCK, npu, hosts=2).values()} == {"warn"}
    assert "Ascend's multi-node training guide" in judge(STOCK, npu, hosts=2)["sysctl.somaxconn"][1]
    assert judge(OLD, npu, hosts=64)["sysctl.somaxconn"][0] == "fail"
    high = {SOMAXCONN: str(NPU_RECOMMENDED), BACKLOG: str(NPU_RECOMMENDED)}
    assert {v[0] for v in judge(high, npu, hosts=64).values()} == {"pass"}


def test_a_configured_minimum_replaces_the_rule() -> None:
    """hosts.yaml's min_somaxconn (as before) is the minimum, on any cluster, with nothing else applied."""
    npu = ClusterSpec(accelerator="npu", devices_per_host=8)
    got = judge({SOMAXCONN: "4096", BACKLOG: "4096"}, npu, hosts=64, min_somaxconn=8192, min_tcp_max_syn_backlog=4096)
    assert got["sysctl.somaxconn"][0] == "fail" and "min_somaxconn" in got["sysctl.somaxconn"][1]
    assert got["sysctl.tcp_max_syn_backlog"][0] == "pass"  # no npu advice over a configured minimum


def test_the_rank_count_comes_from_the_cluster_as_data() -> None:
    hosts = [Host("a", "a"), Host("b", "b")]
    assert world(ClusterSpec(devices_per_host=0), hosts) == Ranks(2, "2 hosts x 1 device")
    assert world(ClusterSpec(devices_per_host=8, ranks=24, ranks_reason="SLURM_NTASKS=24"), hosts) == \
        Ranks(24, "SLURM_NTASKS=24")
    assert world(ClusterSpec(ranks=0), hosts) is None


def test_slurm_variables_give_the_rank_count() -> None:
    # The Prolog sees the node list, not task counts; a job step sees SLURM_JOB_NUM_NODES and SLURM_NTASKS.
    assert from_slurm({"SLURM_JOB_NODELIST": "gpu[01-64]"}, 8) == Ranks(512, "64 hosts in SLURM_JOB_NODELIST x 8 "
                                                                             "devices")
    assert from_slurm({"SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "2"}, 8) == \
        Ranks(16, "SLURM_JOB_NUM_NODES=2 x 8 devices")  # torchrun: one task per node, 8 ranks each
    assert from_slurm({"SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "64"}, 8) == Ranks(64, "SLURM_NTASKS=64")
    assert from_slurm({"SLURM_JOB_NODELIST": "bad[", "SLURM_NTASKS": "0"}, 8) is None


def test_on_a_container_the_remedy_sets_the_sysctl_for_its_network_namespace() -> None:
    """os.container's facts change the remedy: docker run --sysctl / the pod's securityContext, the kubelet's
    allowance for an unsafe sysctl, and the host's sysctl -w kept for host networking."""
    check = SysctlCheck()
    cluster = ClusterSpec(accelerator="gpu", devices_per_host=8)
    ctx = EvalContext(cluster, [Host(f"n{i}", f"n{i}") for i in range(64)], dict(check.params),
                      {"os.container": {"n0": {"engine": "kubernetes", "evidence": ["cgroup /kubepods"],
                                               "proc_sys_ro": True}}})
    findings = {f.check: f for f in check.evaluate({"n0": {"values": OLD}}, ctx)}
    remedy = str(findings["sysctl.somaxconn"].remedy)
    assert remedy.startswith("this host is a container (kubernetes)")
    assert "docker run --sysctl net.core.somaxconn=1024" in remedy and "/proc/sys is read-only" in remedy
    assert "--allowed-unsafe-sysctls=net.core.somaxconn" in remedy
    assert remedy.endswith("sysctl -w net.core.somaxconn=1024 && echo 'net.core.somaxconn = 1024' >> "
                           "/etc/sysctl.d/90-preflight.conf")
    ctx = EvalContext(cluster, ctx.hosts, dict(check.params), {"os.container": {"n0": {"engine": None}}})
    plain = {f.check: f for f in check.evaluate({"n0": {"values": OLD}}, ctx)}
    assert str(plain["sysctl.somaxconn"].remedy).startswith("sysctl -w net.core.somaxconn=1024")


def test_a_safe_sysctl_needs_no_kubelet_allowance() -> None:
    remedy = container_sysctl_remedy({"engine": "kubernetes"}, "net.ipv4.ip_local_reserved_ports", "60000-60015",
                                     "sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015")
    assert "securityContext.sysctls" in remedy and "unsafe" not in remedy
