"""Issue 38's eighth frozen set, spent and folded (after round 11): what is left of it guards against false alarms.

tests/fixtures/explain/frozen8/logs.json held 57 real failure logs (15 Ascend; below the 60 / 20 the issue asks: the
session's search budget and the uncited Ascend threads ran out) scored blind: 28 of 57 (Ascend 7 of 15) at the
freezing commit 5be336b and after round 11 (8922aad), no answer changed (docs/explain.md "Round 11"). It was read
only after that measurement: the 27 logs ``explain`` names right (every category but ``unknown``) moved into
``corpus.json``, where ``test_explain_coverage.py`` requires each to stay right. The 30 left here are the ones the
corpus cannot hold: 2 labelled ``unknown`` (application bugs) and 28 still missed. None may be blamed on a cluster
category it is not, but for the answers listed in ``KNOWN_WRONG``.
"""

from __future__ import annotations

from pathlib import Path

from spent_sets import blamed_bugs, check_cited_nowhere_else, check_real_and_labelled, load, new_wrong

FROZEN8_DIR = Path(__file__).parent / "fixtures" / "explain" / "frozen8"
FROZEN8 = load(FROZEN8_DIR)
FOLDED = 27  # of the 57: moved into corpus.json after round 11's measurement (explained right there)
# Left logs whose text reads as another class than the one their source found (the source's cause in brackets): an
# Ascend acl module that cannot be imported read as versions (CANN's set_env.sh not sourced: the driver runtime);
# ibv_modify_qp timing out read as RDMA (a rail-only fabric: NCCL_CROSS_NIC=0) and NCCL's socket failing read as
# RDMA (a host firewall); ACL 507033 read as a device (a driver too new for the CANN); HCCL subgroups created late
# read as a stale process (the application's order); the EFA provider's -12 read as memory (the locked-memory
# limit); a refused connection read as a firewall (fairseq started without its world size and rank); gloo's peer
# closing read as the fabric (gloo on localhost: GLOO_SOCKET_IFNAME); a rendezvous failure read as the rendezvous
# (the rank-0 pod's name not resolvable yet); a torch-npu build read as the driver (versions); a hang read as
# versions (P2P).
KNOWN_WRONG = {
    "https://github.com/Ascend/MindSpeed-MM/blob/57069cd55a8ab16d5affe379a2e2c5f0a4d962b9/docs/zh/FAQ.md#case-2":
        "version-mismatch",
    "https://github.com/NVIDIA/nccl/issues/2013": "rdma",
    "https://github.com/NVIDIA/nccl/issues/352": "rdma",
    "https://github.com/PaddlePaddle/Paddle/issues/68865": "device-mapping",
    "https://github.com/areal-project/AReaL/pull/1254": "hccl-stale-process",
    "https://github.com/awslabs/awsome-distributed-ai/issues/647": "oom",
    "https://github.com/facebookresearch/fairseq/issues/1096": "firewall",
    "https://github.com/meta-pytorch/data/issues/1142": "fabric",
    "https://github.com/pytorch/pytorch/issues/80772": "rendezvous",
    "https://github.com/vllm-project/vllm-ascend/issues/540": "driver",
    "https://github.com/vllm-project/vllm/issues/5484": "version-mismatch",
}


def test_left_logs_are_real_and_labelled() -> None:
    assert len(FROZEN8) == 57 - FOLDED
    check_real_and_labelled(FROZEN8)


def test_left_logs_are_cited_nowhere_else() -> None:
    check_cited_nowhere_else(FROZEN8, FROZEN8_DIR, KNOWN_WRONG)


def test_no_cluster_fault_is_claimed_for_an_application_bug() -> None:
    """A false alarm is as bad as a miss: none of the 2 ``unknown``-labelled logs may be blamed on the cluster."""
    assert sum(log["category"] == "unknown" for log in FROZEN8) == 2
    assert not blamed_bugs(FROZEN8, KNOWN_WRONG)


def test_left_misses_claim_no_new_wrong_category() -> None:
    assert sum(log["category"] != "unknown" for log in FROZEN8) == 28
    assert not new_wrong(FROZEN8, KNOWN_WRONG)
