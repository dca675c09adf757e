"""Whether logs show a run that finished cleanly: nothing failed, so an informational line is not a cause.

Users pass healthy logs too ("is this right?", or the log of a rank that did fine). A healthy job at
``NCCL_DEBUG=INFO`` prints lines a catalog recognises as hints (``NET/IB : No device found``, ``Failed to
initialize NET plugin IB`` on a node without RDMA), and naming one of them the root cause would be a false
alarm. A log set is clean when (all three):

- every NCCL communicator it shows initialised was closed again: NCCL prints ``Init COMPLETE`` at the end of
  ``ncclCommInitRank*`` and ``Destroy COMPLETE`` at the end of ``ncclCommDestroy`` (init.cc; at ``NCCL_DEBUG=
  INFO``), and a job that fails or hangs never destroys its communicator. ``Abort COMPLETE`` (``ncclCommAbort``)
  is the failure path, except where torch aborts a communicator at shutdown with nothing wrong: then it says
  ``Aborting ncclComm_ 0x.. with reason: No abort reason provided.`` (NCCLUtils.cpp; recorded on a real H200
  with torch 2.11 under torchrun at ``TORCH_DISTRIBUTED_DEBUG=DETAIL``: ``tests/fixtures/explain/recorded_h200_3``);
- no line outside NCCL's own ``INFO`` lines and torch's info-level lines (glog's ``[I1128 08:56:58.52 ...]``, where
  c10d's debug trace says ``uv_loop_close failed`` at every clean exit) looks like an error (``SUSPICIOUS``),
  harmless warnings aside;
- nothing the matcher found is a root cause (the caller checks that).

Without NCCL INFO lines nothing can be said: a log is never called clean for lacking errors alone (a hang's log
has none either).

>>> ok = ["h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 60 commId 0x4e - Init COMPLETE",
...       "all_reduce ok 1.0", "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 60 - Destroy COMPLETE"]
>>> finished_cleanly([ok], [frozenset()])
'every NCCL communicator the log shows (1) was initialised and closed again, and no line reports an error'
>>> finished_cleanly([ok[:2]], [frozenset()]) is None  # initialised, never destroyed: a hang or a kill
True
>>> finished_cleanly([ok + ["RuntimeError: boom"]], [frozenset()]) is None
True
>>> finished_cleanly([[line.lower() for line in ok]], [frozenset()]) is not None  # any case
True
>>> shutdown = [ok[0], "[I1128 08:56:59.948 NCCLUtils.cpp:397] Aborting ncclComm_ 0x1 with reason: No abort reason "
...             "provided.", "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 60 - Abort COMPLETE",
...             "[I1128 08:57:00.488 TCPStoreLibUvBackend.cpp:1321] [c10d] uv_loop_close failed with:-16 errn:EBUSY"]
>>> finished_cleanly([shutdown], [frozenset()]) is not None
True
>>> failed = ["[E1128 08:55:23.69 NCCLUtils.cpp:397] Aborting ncclComm_ 0x1 with reason: Watchdog caught collective "
...           "operation timeout"] + shutdown[2:3]
>>> finished_cleanly([ok[:1] + failed], [frozenset()]) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# any case: a paste through a tool that changed it (a chat, a ticket system's lower-casing) still reads as NCCL's
_INIT = re.compile(r"NCCL INFO .*\bInit COMPLETE\b", re.IGNORECASE)
_DESTROY = re.compile(r"NCCL INFO .*\bDestroy COMPLETE\b", re.IGNORECASE)
_NCCL_INFO = re.compile(r"\bNCCL INFO\b", re.IGNORECASE)
_ABORT = re.compile(r"NCCL INFO .*\bAbort COMPLETE\b", re.IGNORECASE)
_SHUTDOWN_ABORT = re.compile(r"Aborting ncclComm_ \S+ with reason: No abort reason provided", re.IGNORECASE)
# glog's info level as c10 prints it, after torchrun's rank prefix: "[rank0]:[I1128 08:56:58.523617056 file.cpp:12]"
_GLOG_INFO = re.compile(r"^(?:\[rank\d+\]:)?\[?I\d{4} \d{2}:\d{2}:\d{2}")
# words of a line that looks like an error (the matcher's suspicious lines of an unrecognised log, too)
SUSPICIOUS = re.compile(r"error|exception|traceback|timed? ?out|times out|refused|fail|fatal|killed|abort|"
                    r"denied|unreachable|no route|reset by peer|sigkill|signal 9|\bE\d{4}\b|\bE[IJ]\d{4}\b",
                    re.IGNORECASE)


def finished_cleanly(files: Sequence[Sequence[str]], harmless: Sequence[frozenset[int]]) -> str | None:
    """Why the logs (their lines, file by file; ``harmless``: each file's 1-based harmless-warning line numbers)
    show a clean finish, or None when they do not."""
    inits = destroys = 0
    for lines, warned in zip(files, harmless, strict=True):
        file_inits = sum(1 for line in lines if _INIT.search(line))
        file_destroys = sum(1 for line in lines if _DESTROY.search(line))
        aborts = sum(1 for line in lines if _ABORT.search(line))
        file_destroys += min(aborts, sum(1 for line in lines if _SHUTDOWN_ABORT.search(line)))
        if file_destroys < file_inits:
            return None
        for number, line in enumerate(lines, start=1):
            if number not in warned and not _NCCL_INFO.search(line) and not _GLOG_INFO.match(line) \
                    and SUSPICIOUS.search(line):
                return None
        inits, destroys = inits + file_inits, destroys + file_destroys
    if inits == 0:
        return None
    return (f"every NCCL communicator the log shows ({inits}) was initialised and closed again, and no line "
            "reports an error")
