"""Causes read from the shape of the logs rather than from one line, for logs whose lines name no cause: a silent
hang in NCCL's setup on one host (``hang``) and NCCL's socket on a container or overlay interface
(``socket_ifaces``, round 10).

Each returns an ``Evidence`` (its signature and the line it points at), or None; ``matcher`` turns it into a
``family`` match.

>>> e = interface_evidence([["boom: unhandled system error", "h:1:1 [0] NCCL INFO NET/Socket : Using "
...                          "[0]eth0:10.0.0.2<0> [1]br-05ab815fa14e:172.19.0.1<0>"]], failing=True)
>>> (e.signature.category, e.file_index, e.line_number)
('wrong-interface', 0, 2)
>>> interface_evidence([["h:1:1 [0] NCCL INFO NET/Socket : Using [0]br-05ab815fa14e:172.19.0.1<0>"]], False) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from preflight.explain.coll_shapes import collective_mismatch
from preflight.explain.families import FAMILY_WEIGHT, checks_by_category
from preflight.explain.hang import silent_hang
from preflight.explain.launch_shapes import command_shape, lightning_shape, nccl_tests_shape
from preflight.explain.op_checks import check_failure
from preflight.explain.signature import Signature
from preflight.explain.socket_ifaces import stalls_across_hosts, virtual_choice

_HANG_SOURCE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs"
_IFACE_SOURCE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname"
_COLL_SOURCE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/collectives.html"
_CHECK_SOURCE = "https://github.com/pytorch/pytorch/blob/v2.9.1/c10/util/Exception.h"
# round 23: each launch shape, with the documentation that states its cause
_LAUNCH = (
    (lightning_shape, "Lightning", "ranks against the Trainer's world",
     "Lightning's start line shows {seen}: the processes launched do not make the world the Trainer expects (under "
     "Slurm, --nodes / --ntasks-per-node against Trainer(num_nodes, devices); a python started without srun; a "
     "stray NODE_RANK / WORLD_SIZE), so ranks repeat or never join and DDP's start hangs.",
     "Launch exactly num_nodes x devices processes: under Slurm `srun python train.py` with #SBATCH --nodes and "
     "--ntasks-per-node equal to Trainer(num_nodes=..., devices=...); unset launcher variables left in the "
     "environment.", "https://github.com/Lightning-AI/pytorch-lightning/blob/7f0c3436cd3f6ad3753125672024fc415cbcb414/"
     "docs/source-pytorch/clouds/cluster_advanced.rst#troubleshooting"),
    (nccl_tests_shape, "nccl-tests", "each process ran alone",
     "Under an MPI launch, {seen}: every process ran the test as a job of its own (the binary was built without "
     "MPI support), so no collective crossed the nodes and the bandwidth is one node's.",
     "Rebuild nccl-tests with MPI=1 (`make clean; make MPI=1 MPI_HOME=...`) and launch one process per GPU with "
     "-g 1.", "https://github.com/NVIDIA/nccl-tests/blob/master/README.md"),
    (command_shape, "torchrun", "launch commands disagree",
     "The launch commands in the logs disagree: {seen}. Every node must be started with the same master address "
     "and port and the same --nnodes, each with its own --node_rank, or the nodes never meet.",
     "Start every node with one --master_addr (the first node's routable address, not localhost) and "
     "--master_port, and give each node its own --node_rank from 0 to nnodes-1.",
     "https://pytorch.org/docs/stable/elastic/run.html"),
)


@dataclass(frozen=True)
class Evidence:
    """A cause the shape of the logs shows, and the line (file index, 1-based line number) that shows it."""

    signature: Signature
    file_index: int
    line_number: int
    component: str
    family: str


def collective_evidence(files: Sequence[Sequence[str]]) -> Evidence | None:
    """Collectives the ranks called differently (``preflight.explain.coll_shapes``, round 25), or None."""
    mismatch = collective_mismatch(files)
    if mismatch is None:
        return None
    sig = Signature(
        "family.nccl.collective_mismatch", "collective-mismatch", (),
        f"NCCL's own lines show the ranks called different collectives at the same point ({mismatch[2]}): every "
        "rank must issue the same collectives in the same order with the same sizes and types, or the job hangs "
        "(or corrupts data) there.",
        "Find where the ranks' code paths diverge before that call (a collective inside a rank-dependent branch, "
        "parameters or buffers of different sizes per rank, a different model or config on some rank); "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL checks the calls' shapes across ranks.",
        checks_by_category().get("collective-mismatch", ()), _COLL_SOURCE, weight=FAMILY_WEIGHT)
    return Evidence(sig, mismatch[0], mismatch[1], "NCCL", "collectives that differ across ranks")


def hang_evidence(files: Sequence[Sequence[str]]) -> Evidence | None:
    """A silent hang in NCCL's setup on one node (``preflight.explain.hang``), or None."""
    hang = silent_hang(files)
    if hang is None:
        return None
    sig = Signature(
        "family.nccl.silent_hang_one_node", "p2p", (),
        f"The logs stop during NCCL's setup of {hang.devices} GPUs of one host ({hang.host}) with no error anywhere: "
        "the job hung there. Within one host NCCL's first transfers go GPU to GPU (PCIe P2P), and where the IOMMU "
        "or PCIe ACS redirects that traffic they never complete (NCCL's troubleshooting guide); no signature or "
        "code names this, it was recognised by the shape of the logs.",
        "Rerun with NCCL_P2P_DISABLE=1: if it runs (over shared memory), P2P is blocked. Then boot with iommu=pt "
        "(or intel_iommu=off / amd_iommu=off), or disable ACS on the PCIe switches in the BIOS; the CUDA samples' "
        "p2pBandwidthLatencyTest shows whether P2P works.", checks_by_category().get("p2p", ()), _HANG_SOURCE,
        weight=FAMILY_WEIGHT)
    return Evidence(sig, hang.file_index, hang.line_number, "NCCL", "silent hang in setup on one node")


def interface_evidence(files: Sequence[Sequence[str]], failing: bool) -> Evidence | None:
    """NCCL's socket on a virtual interface, when the logs fail (``failing``: a match that is no harmless warning)
    or stop in NCCL's setup between hosts; else None."""
    for index, lines in enumerate(files):
        found = virtual_choice(lines)
        if found is None or not (failing or stalls_across_hosts(lines)):
            continue
        sig = Signature(
            "family.nccl.virtual_socket_interface", "wrong-interface", (),
            f"NCCL's socket bootstrap/transport lists the interface {found[1]}, a container or overlay bridge whose "
            "address exists on this host alone (NCCL takes every interface that is up but docker* and lo unless "
            "NCCL_SOCKET_IFNAME says otherwise): a peer told that address cannot reach it, and the job fails with "
            "a generic error or hangs while connecting. No signature or code names this; it was recognised by the "
            "interfaces NCCL listed.",
            "Set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) on every node to the interface the hosts share "
            "(e.g. NCCL_SOCKET_IFNAME=ens5, or ^docker,veth,br- to exclude), or run the containers with the host "
            "network.", checks_by_category().get("wrong-interface", ()), _IFACE_SOURCE, weight=FAMILY_WEIGHT)
        return Evidence(sig, index, found[0] + 1, "NCCL", "socket on a virtual interface")
    return None


def launch_evidence(files: Sequence[Sequence[str]]) -> Evidence | None:
    """A launch mistake the shape of the logs shows (``preflight.explain.launch_shapes``), or None."""
    for finder, component, family, cause, fix, source in _LAUNCH:
        found = finder(files)
        if found is not None:
            sig = Signature(f"family.launch.{finder.__name__}", "launch-args", (), cause.format(seen=found[2]), fix,
                            checks_by_category().get("launch-args", ()), source, weight=FAMILY_WEIGHT)
            return Evidence(sig, found[0], found[1], component, family)
    return None


def operator_evidence(files: Sequence[Sequence[str]]) -> Evidence | None:
    """An operator's own C++ check that refused the job's input (``preflight.explain.op_checks``, round 26), or
    None."""
    found = check_failure(files)
    if found is None:
        return None
    sig = Signature(
        "family.operator.check_failed", "app-fault", (),
        f"An operator's own C++ check failed ({found[2][:160]}): a TORCH_CHECK, c10::Error or assertion in the "
        "operator or kernel refused what the job gave it (a shape, dtype, format or parameter it does not take). No "
        "signature, code or known case names this message; it was recognised by the C++ exception around it.",
        "Read the message for the operator and the value it refused; fix the inputs or the model's configuration, or "
        "update the framework / device plugin whose operator lacks that case (its release notes or issues).",
        checks_by_category().get("app-fault", ()), _CHECK_SOURCE, weight=FAMILY_WEIGHT // 3)
    return Evidence(sig, found[0], found[1], "operator", "operator check failed")
