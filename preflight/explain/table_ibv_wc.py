"""InfiniBand / RoCE work-completion statuses (``enum ibv_wc_status``) as a code table: what an RDMA transfer's
completion said when it failed, decoded from every status libibverbs knows, whichever library printed it.

Source: rdma-core's ``libibverbs/verbs.h`` (the enum: 0 ``IBV_WC_SUCCESS`` to 23 ``IBV_WC_TM_RNDV_INCOMPLETE``) and
``libibverbs/enum_strs.c`` (``ibv_wc_status_str``, the texts), commit 691953d8 of linux-rdma/rdma-core. The
meanings are the InfiniBand architecture's completion errors as libibverbs names them. Logs print a status as:

- NCCL's NET/IB: ``Got completion with error 12, opcode 0, len 0, vendor err 129`` (2.0-2.22), ``NET/IB: Got
  completion from peer 10.0.0.2<4213> with status=12 opcode=0 ...`` (2.23+), ``status=IBV_WC_RETRY_EXC_ERR(12)``
  (2.28+);
- the enum's names anywhere (``IBV_WC_REM_ACCESS_ERR``); Open MPI's openib BTL ``... status number 12 for wr_id``;
  perftest's ``Completion with error at client ... Failed status 12: wr_id 0 syndrom 0x81``;
- libibverbs' own texts on a completion line (``failed with status transport retry counter exceeded (12)``).

Categories: a retry or timeout at the transport (12, 13, 20), a bad or aborted response (7, 16) is the ``fabric``
(a link, a switch port, or a peer that stopped answering); a length error (1) is the receive buffer too small for
what came, on NCCL the ``mtu`` of the two ends differing. A protection or access error (4, 8, 10) is by the
architecture a buffer the HCA may not touch, but on a GPU cluster NCCL's maintainers find status 4 (and 5 with vendor
err 249) usually caused by PCIe ACS left enabled, which breaks GPUDirect RDMA between the GPU and the NIC
(NVIDIA/nccl#928, NVIDIA/nccl#1353): the PCIe fabric of the host, ``fabric`` as the NCCL signature reads it. A
flush (5) otherwise only says an earlier error put the queue pair in the error state (a symptom). The rest (queue
pair, memory window, EE context, tag matching, fatal and general errors) are the host's RDMA stack, ``rdma``.

>>> [d.code.name for d in TABLE.decode("NET/IB : Got completion with error 4, opcode 1, len 0, vendor err 81")]
['IBV_WC_LOC_PROT_ERR']
>>> TABLE.find("NET/IB: Got completion from peer 10.1.1.2<51234> with status=IBV_WC_WR_FLUSH_ERR(5) opcode=0")
['5']
>>> TABLE.find("error polling LP CQ with status RETRY EXCEEDED ERROR status number 12 for wr_id 1d3b0 opcode 0")
['12']
>>> TABLE.find("ibv_poll_cq: status local protection error (4)"), TABLE.find("loss 0.4 status 12")
(['4'], [])
>>> TABLE.find("Fatal error: remote access error while reading config"), TABLE.find("wc status: fatal error")
([], [])
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

SOURCE = ("https://github.com/linux-rdma/rdma-core/blob/691953d8d502f54088f776c5ba2aeed0a5ac945d/libibverbs/verbs.h ; "
          "https://github.com/linux-rdma/rdma-core/blob/691953d8d502f54088f776c5ba2aeed0a5ac945d/libibverbs/"
          "enum_strs.c")
VERSION = "rdma-core 691953d8 (enum ibv_wc_status 0-23, unchanged since the TM statuses of v14)"

_FABRIC = ("Check the links and switch ports between the two hosts (`ibstat` / `ibv_devinfo` port state, the port "
           "error counters, `ibdiagnet`), and whether the peer process was still alive then.")
_ACCESS = ("The HCA could not access a buffer. On GPU hosts the usual cause is PCIe ACS left enabled on the switches "
           "between GPU and NIC, which breaks GPUDirect RDMA: disable ACS (BIOS or `setpci`); NCCL_NET_GDR_LEVEL=0 "
           "running confirms it. Otherwise check GPUDirect RDMA itself (nvidia-peermem loaded, or DMA-BUF) and the "
           "memlock limit.")
_QP = "A queue pair or work request the HCA rejected: the RDMA stack (driver, firmware, rdma-core) of this host."
# (status, name, ibv_wc_status_str text, meaning, category, fix, root cause)
_ROWS: tuple[tuple[int, str, str, str, str, str, bool], ...] = (
    (1, "IBV_WC_LOC_LEN_ERR", "local length error",
     "A received message was longer than the receive buffer posted for it.", "mtu",
     "Set the same MTU on every RDMA port of the job (`ibv_devinfo` active_mtu, the switch ports); on RoCE the "
     "interface MTU too.", True),
    (2, "IBV_WC_LOC_QP_OP_ERR", "local QP operation error", _QP, "rdma", _QP, True),
    (3, "IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error", _QP, "rdma", _QP, True),
    (4, "IBV_WC_LOC_PROT_ERR", "local protection error",
     "The local buffer of the work request is not registered for this access (memory key or protection domain).",
     "fabric", _ACCESS, True),
    (5, "IBV_WC_WR_FLUSH_ERR", "Work Request Flushed Error",
     "The work request was flushed because the queue pair had already gone to the error state: an earlier "
     "completion error (or the peer's) is the cause.", "fabric",
     "Find the first completion error before it (on this host or the peer) and the peer's own log; with vendor err "
     "249 and no error before it, PCIe ACS breaking GPUDirect RDMA (see status 4).", False),
    (6, "IBV_WC_MW_BIND_ERR", "memory management operation error",
     "A memory window bind or invalidate failed.", "rdma", _QP, True),
    (7, "IBV_WC_BAD_RESP_ERR", "bad response error",
     "The responder sent an unexpected transport-layer response.", "fabric", _FABRIC, True),
    (8, "IBV_WC_LOC_ACCESS_ERR", "local access error",
     "A protection error on the local data buffer while receiving an RDMA write with immediate data.", "fabric",
     _ACCESS, True),
    (9, "IBV_WC_REM_INV_REQ_ERR", "remote invalid request error",
     "The responder found the request invalid (an operation its queue pair does not allow, or a message longer "
     "than it accepts).", "rdma",
     "Check both ends run the same NCCL / plugin and the same MTU; then the peer's RDMA stack.", True),
    (10, "IBV_WC_REM_ACCESS_ERR", "remote access error",
     "The responder refused access to its memory (the remote key, address or permission of an RDMA read/write).",
     "fabric", _ACCESS, True),
    (11, "IBV_WC_REM_OP_ERR", "remote operation error",
     "The responder could not complete the operation (its queue pair failed).", "rdma",
     "Read the peer's log and its RDMA stack (dmesg on that host).", True),
    (12, "IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded",
     "The peer never acknowledged: packets were lost on the way, a link or switch port is down or flapping, or the "
     "peer is gone.", "fabric", _FABRIC, True),
    (13, "IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded",
     "The peer kept answering 'receiver not ready': it posted no receive buffer in time (stalled or gone).",
     "fabric", _FABRIC, True),
    (14, "IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation error", _QP, "rdma", _QP, True),
    (15, "IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request", _QP, "rdma", _QP, True),
    (16, "IBV_WC_REM_ABORT_ERR", "aborted error",
     "The responder aborted the operation.", "fabric", _FABRIC, True),
    (17, "IBV_WC_INV_EECN_ERR", "invalid EE context number", _QP, "rdma", _QP, True),
    (18, "IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state", _QP, "rdma", _QP, True),
    (19, "IBV_WC_FATAL_ERR", "fatal error",
     "A fatal error of the HCA or its transport.", "rdma",
     "Check the HCA (`ibv_devinfo`, dmesg for mlx5 errors, firmware) on this host.", True),
    (20, "IBV_WC_RESP_TIMEOUT_ERR", "response timeout error",
     "The responder did not answer in time.", "fabric", _FABRIC, True),
    (21, "IBV_WC_GENERAL_ERR", "general error",
     "The HCA reported an error no other status describes.", "rdma",
     "Read the vendor error (`vendor err N`) with the HCA's documentation; check dmesg on the host.", True),
    (22, "IBV_WC_TM_ERR", "TM error", "A tag-matching offload error.", "rdma", _QP, True),
    (23, "IBV_WC_TM_RNDV_INCOMPLETE", "TM software rendezvous",
     "A tag-matching rendezvous left to software.", "rdma", _QP, True),
)
_CHECKS: dict[str, tuple[str, ...]] = {
    "fabric": ("hccn.link", "allreduce"),
    "mtu": ("net.mtu", "hccn.link"),
    "rdma": ("nccl.ib_hca", "gpu.fabric.memlock"),
}
ENTRIES: dict[str, Code] = {
    str(status): Code(str(status), name, meaning, category, fix, _CHECKS[category], root)
    for status, name, _text, meaning, category, fix, root in _ROWS}
_BY_NAME = {name: str(status) for status, name, *_ in _ROWS}
# libibverbs' texts, but those any error message may say ("fatal error", "general error", "aborted error", "TM error")
_GENERIC = {"fatal error", "general error", "aborted error", "tm error"}
_BY_TEXT = {text.lower(): str(status) for status, _name, text, *_ in _ROWS if text.lower() not in _GENERIC}

_NAME = re.compile(r"\bIBV_WC_[A-Z_]+\b")
# NCCL's NET/IB completion lines (both wordings), Open MPI openib's "status number N", perftest's "Failed status N:"
_NUMBER = re.compile(r"Got completion (?:from peer \S+ )?with (?:status\s*=\s*(?:IBV_WC_\w+\()?|error\s*)(\d+)"
                     r"|\bstatus number (\d+)\b|\bFailed status (\d+):", re.IGNORECASE)
_TEXT = re.compile("|".join(re.escape(t) for t in sorted(_BY_TEXT, key=len, reverse=True)), re.IGNORECASE)
_COMPLETION = re.compile(r"completion|poll_cq|\bibv_|\bwr_id\b|\bwc\b|\bcq\b|NET/IB", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The work-completion statuses a line carries: by number on a completion line, by enum name, or by
    libibverbs' text (but the generic ones) on a line about a completion; in order, once each."""
    found: list[tuple[int, str]] = []
    found += [(m.start(), _BY_NAME[m[0]]) for m in _NAME.finditer(line) if m[0] in _BY_NAME]
    for m in _NUMBER.finditer(line):
        number = next(g for g in m.groups() if g is not None)
        if number in ENTRIES:
            found.append((m.start(), number))
    if _COMPLETION.search(line):
        found += [(m.start(), _BY_TEXT[m[0].lower()]) for m in _TEXT.finditer(line)]
    return list(dict.fromkeys(code for _, code in sorted(found)))


TABLE = CodeTable("ibv_wc_status", SOURCE, VERSION, ENTRIES, find)
