"""AWS EFA's completion errors as a code table: what libfabric's EFA provider reports for a failed transfer
(``prov_errno``), as NCCL's OFI plugin (aws-ofi-nccl) and Open MPI's OFI MTL print it, decoded from every code the
provider knows.

Source: libfabric's ``prov/efa/src/efa_errno.h`` at 2a98071 (ofiwg/libfabric): the ``efa_io_comp_status`` codes 1-15
of rdma-core's EFA provider and the provider's own codes 4096-4126, each with the text ``efa_strerror`` prints.
aws-ofi-nccl (2daf7d3) prints a failed completion as ``NET/OFI Request %p completed with error. RC: %d. Flags: %ld.
Error: %d (%s). Completed length: %ld`` (the provider's code, then its text), and an unreachable peer as ``...
completed with error: err: %d, flags: %ld, prov_errno: %d, strerror: %s`` with its banner: "This error indicates
that the security group on either this instance or the peer instance is not setup correctly"
(``src/platform-aws.cpp``: EFA returns FI_EHOSTUNREACH only for packets the security groups dropped).

Categories: an unreachable remote (15) ``firewall``, as the plugin says; a peer that stopped answering or reset the
connection (8, 13, 4124, 4126, a handshake that failed) ``fabric``, no root cause (the peer's own log has it, or the
path between them); receiver-not-ready (10) ``fabric``; a length mismatch (6, 11, 4115) ``collective-mismatch``; the
provider's shared-memory path (4122, 4123) ``shm``; its registered pools and internal receive buffers (4105, 4112)
``memlock``: the provider's help (``Libfabric error: (-12) Cannot allocate memory`` / ``EFA internal error: (4112)
Failure to post internal receive buffers``) comes from a locked-memory limit of 64 KiB (awslabs/awsome-distributed-ai
#647); the rest (invalid keys, address handles, queue pairs, packets, posting) the host's EFA stack, ``rdma``.

>>> [d.code.category for d in TABLE.decode("NET/OFI Request 0x7f3a completed with error. RC: 113. Flags: 0. "
...     "Error: 15 (Unreachable remote (never received a response)). Completed length: 0")]
['firewall']
>>> TABLE.find("libfabric:1234:efa:cq:efa_rdm_pke_handle_send_error(): prov_errno: 4126 (Unresponsive receiver "
...            "(reachable by EFA device but handshake failed))")
['4126']
>>> TABLE.find("Error: 15 (no such file)"), TABLE.find("loss 0.2 error 13")
([], [])
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

SOURCE = "https://github.com/ofiwg/libfabric/blob/2a980717ed663b16c15502218f52330ee3621a73/prov/efa/src/efa_errno.h"
VERSION = "libfabric 2a98071 (EFA provider: efa_io_comp_status 1-15, provider codes 4096-4126); aws-ofi-nccl 2daf7d3"

_SG = ("Allow all traffic between the instances: the security group of every instance needs an inbound and an "
       "outbound rule allowing all traffic from and to the security group itself (AWS: EFA and NCCL set-up, "
       "efa-start-nccl); then check the peer instance is alive and in the same placement / subnet.")
_PEER = ("Read the peer rank's own log first (it exited, hung or was killed); then the security groups and the EFA "
         "devices of both instances (`fi_info -p efa`).")
_STACK = ("Check this instance's EFA stack: the EFA installer's libfabric and the aws-ofi-nccl plugin the job loads "
          "(`fi_info -p efa`, `NCCL_DEBUG=INFO` lines of NET/OFI), the same versions on every node.")
# (code, name, efa_strerror text, category, root cause)
_ROWS: tuple[tuple[int, str, str, str, bool], ...] = (
    (1, "FLUSHED", "Flushed during queue pair destroy", "fabric", False),
    (2, "LOCAL_ERROR_QP_INTERNAL_ERROR", "Internal queue pair error (local)", "rdma", True),
    (3, "LOCAL_ERROR_UNSUPPORTED_OP", "Unsupported operation type", "rdma", True),
    (4, "LOCAL_ERROR_INVALID_AH", "Invalid address handle (local)", "rdma", True),
    (5, "LOCAL_ERROR_INVALID_LKEY", "Local key (LKEY) invalid or does not match IOVA", "rdma", True),
    (6, "LOCAL_ERROR_BAD_LENGTH", "Message too long", "collective-mismatch", True),
    (7, "REMOTE_ERROR_BAD_ADDRESS", "Remote key (RKEY) not registered or does not match remote IOVA", "rdma", True),
    (8, "REMOTE_ERROR_ABORT", "Connection was reset by remote peer", "fabric", False),
    (9, "REMOTE_ERROR_BAD_DEST_QPN", "Bad queue pair (QP) number (QP does not exist or is in error state)", "fabric",
     False),
    (10, "REMOTE_ERROR_RNR", "Destination resource not ready (no work queue entries posted on receive queue)",
     "fabric", True),
    (11, "REMOTE_ERROR_BAD_LENGTH", "Remote scatter-gather list too short", "collective-mismatch", True),
    (12, "REMOTE_ERROR_BAD_STATUS", "Unexpected status returned by responder", "rdma", True),
    (13, "LOCAL_ERROR_UNRESP_REMOTE", "Unresponsive remote (was previously responsive)", "fabric", False),
    (14, "REMOTE_ERROR_UNKNOWN_PEER", "No valid address handle at remote side (required for RDMA operations)",
     "rdma", True),
    (15, "LOCAL_ERROR_UNREACH_REMOTE", "Unreachable remote (never received a response)", "firewall", True),
    (4096, "OTHER", "Unknown error", "rdma", True),
    (4097, "DEPRECATED_PKT_TYPE", "Deprecated packet type encountered", "rdma", True),
    (4098, "INVALID_PKT_TYPE", "Invalid packet type encountered", "rdma", True),
    (4099, "UNKNOWN_PKT_TYPE", "Unknown packet type encountered", "rdma", True),
    (4100, "PKT_POST", "Failure to post packet", "rdma", True),
    (4101, "PKT_SEND", "Failure to send packet", "rdma", True),
    (4102, "PKT_PROC_MSGRTM", "Error processing non-tagged RTM", "rdma", True),
    (4103, "PKT_PROC_TAGRTM", "Error processing tagged RTM", "rdma", True),
    (4104, "PKT_ALREADY_PROCESSED", "Packet already processed", "rdma", True),
    (4105, "OOM", "Out of memory", "memlock", True),
    (4106, "MR_DEREG", "MR deregistration error", "rdma", True),
    (4107, "RXE_COPY", "RX entry copy error", "rdma", True),
    (4108, "RXE_POOL_EXHAUSTED", "RX entries exhausted", "rdma", True),
    (4109, "TXE_POOL_EXHAUSTED", "TX entries exhausted", "rdma", True),
    (4110, "AV_INSERT", "Failure inserting address into address vector", "rdma", True),
    (4111, "RMA_ADDR", "RMA address verification failed", "rdma", True),
    (4112, "INTERNAL_RX_BUF_POST", "Failure to post internal receive buffers", "memlock", True),
    (4113, "PEER_HANDSHAKE", "Failure posting handshake to peer", "fabric", False),
    (4114, "WR_POST_SEND", "Failure to post work request(s) to send queue", "rdma", True),
    (4115, "RTM_MISMATCH", "RTM size mismatch", "collective-mismatch", True),
    (4116, "READ_POST", "Error posting read request", "rdma", True),
    (4117, "RDMA_READ_POST", "Error posting RDMA read request", "rdma", True),
    (4118, "INVALID_DATATYPE", "Invalid data type encountered", "rdma", True),
    (4119, "WRITE_SEND_COMP", "Failure to write send completion", "rdma", True),
    (4120, "WRITE_RECV_COMP", "Failure to write receive completion", "rdma", True),
    (4121, "DGRAM_CQ_READ", "Error reading from DGRAM CQ", "rdma", True),
    (4122, "SHM_INTERNAL_ERROR", "SHM internal error", "shm", True),
    (4123, "WRITE_SHM_CQ_ENTRY", "Failure to write CQ entry for SHM operation", "shm", True),
    (4124, "ESTABLISHED_RECV_UNRESP", "Unresponsive receiver (connection previously established)", "fabric", False),
    (4125, "INVALID_PKT_TYPE_ZCPY_RX", "Invalid packet type received when zero copy recv mode is ON", "rdma", True),
    (4126, "UNESTABLISHED_RECV_UNRESP", "Unresponsive receiver (reachable by EFA device but handshake failed)",
     "fabric", False),
)
_FIXES = {"memlock": "Raise the locked-memory limit to unlimited for the job (`ulimit -l`, limits.conf, the "
                      "container's --ulimit memlock=-1, Slurm's PropagateResourceLimits): the provider registers its "
                      "buffers.",
          "firewall": _SG, "fabric": _PEER, "rdma": _STACK,
          "collective-mismatch": "Check that every rank posts the same sizes in the same order (the same NCCL and "
                                 "plugin on every node).",
          "shm": "Give the job a larger /dev/shm (--ipc=host, --shm-size), or FI_EFA_ENABLE_SHM_TRANSFER=0 to check.",
          }
_CHECKS = {"firewall": ("firewall.rules", "net.reachability"), "fabric": ("net.reachability", "allreduce"),
           "rdma": ("gpu.fabric.devices",), "shm": ("os.shm",), "memlock": ("os.memlock",), "collective-mismatch": ()}
ENTRIES: dict[str, Code] = {
    str(code): Code(str(code), f"EFA {name}", text, category, _FIXES[category], _CHECKS[category], root)
    for code, name, text, category, root in _ROWS}
# texts no other library prints: the generic ones ("Unknown error", "Out of memory", "Message too long") only by number
_GENERIC = {"unknown error", "out of memory", "message too long", "unsupported operation type"}
_BY_TEXT = {text.lower(): str(code) for code, _n, text, *_ in _ROWS if text.lower() not in _GENERIC}
_TEXT = re.compile("|".join(re.escape(t) for t in sorted(_BY_TEXT, key=len, reverse=True)), re.IGNORECASE)
# the provider's code after "Error:" (aws-ofi-nccl) or "prov_errno:" (the plugin's security-group banner, libfabric)
_NUMBER = re.compile(r"\b(?:prov_errno:?\s*|Error:\s*)(\d+)\b(?=\s*(?:\(|,|$))|\bEFA internal error: \((\d+)\)",
                     re.IGNORECASE)
_EFA_LINE = re.compile(r"NET/OFI|\befa\b|prov_errno|libfabric|\bfi_cq", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The EFA codes a line of the OFI plugin or libfabric carries: by number after ``Error:`` / ``prov_errno:``,
    or by ``efa_strerror``'s text; in order, once each."""
    if not _EFA_LINE.search(line):
        return []
    found = [(m.start(), m[1] or m[2]) for m in _NUMBER.finditer(line) if (m[1] or m[2]) in ENTRIES]
    found += [(m.start(), _BY_TEXT[m[0].lower()]) for m in _TEXT.finditer(line)]
    return list(dict.fromkeys(code for _, code in sorted(found)))


TABLE = CodeTable("efa", SOURCE, VERSION, ENTRIES, find)
