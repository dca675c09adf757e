"""NCCL's ``ncclResult_t`` as a code table: every result code, the text ``ncclGetErrorString`` gives for it in each
NCCL version, and the ways logs print one.

Source: ``src/nccl.h.in`` (the enum) and ``ncclGetErrorString`` in ``src/init.cc`` of NVIDIA/nccl, read at every
release tag from v2.10.3-1 to v2.30.7-1. ``ncclRemoteError`` (6) appeared in 2.13, ``ncclInProgress`` (7) in 2.14,
``ncclTimeout`` (8) in 2.30. From 2.18 the texts carry a hint (``unhandled system error (run with NCCL_DEBUG=INFO for
details)``, ``internal error - please report this issue to the NCCL developers``); before they were bare (``unhandled
system error``, ``internal error``). Logs print a result as:

- its name: ``ncclSystemError: System call (e.g. socket, malloc) ...`` (torch's ``getNcclErrorDetailStr``);
- its text after ``NCCL error``: torch's ``NCCL error in: .../ProcessGroupNCCL.cpp:1269, unhandled system error (run
  with NCCL_DEBUG=INFO for details), NCCL version 2.18.1``, nccl-tests' ``Test NCCL failure common.cu:891 'internal
  error'``;
- CuPy's names of NCCL 2 (``NCCL_ERROR_SYSTEM_ERROR: unhandled system error``, cupy_backends/cuda/libs/nccl.pyx);
- NCCL's own INFO trace of a failing call, ``NCCL INFO transport/net.cc:684 -> 2`` (file:line, then the result).

>>> [d.code.name for d in TABLE.decode("RuntimeError: NCCL error in: ../ProcessGroupNCCL.cpp:825, invalid usage, "
...                                    "NCCL version 2.7.8")]
['ncclInvalidUsage']
>>> TABLE.find("node1:42:42 [0] NCCL INFO bootstrap.cc:1113 -> 3 [Async thread]")
['3']
>>> TABLE.decode("ncclRemoteError: A call failed possibly due to a network error")[0].code.root_cause
False
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable, check_values, compared_with

SOURCE = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/nccl.h.in"
VERSION = "NCCL 2.30.7-1 (ncclGetErrorString texts of 2.10-2.30)"

_SYMPTOM = ("Read the other ranks' logs for the earliest error (a crash, an OOM, a kill); then check the network "
            "between the nodes.")
_WARN_LINE = ("Run with NCCL_DEBUG=WARN (or INFO) and read the `NCCL WARN` line before it: it names the call that "
              "failed. ")

# (code, name, the texts ncclGetErrorString gave across versions (oldest first), category, fix, checks, root cause)
_ROWS: tuple[tuple[int, str, tuple[str, ...], str, str, tuple[str, ...], bool], ...] = (
    (0, "ncclSuccess", ("no error",), "unknown", "Nothing failed.", (), False),
    (1, "ncclUnhandledCudaError", ("unhandled cuda error", "unhandled cuda error (run with NCCL_DEBUG=INFO for "
                                                           "details)"),
     "unknown", _WARN_LINE + "A `Cuda failure N 'text'` there is decoded by the CUDA table; check the driver against "
     "the CUDA runtime and `nvidia-smi` on that node.", ("versions.gpu_driver", "versions.cuda"), False),
    (2, "ncclSystemError", ("unhandled system error", "unhandled system error (run with NCCL_DEBUG=INFO for "
                                                       "details)"),
     "unknown", _WARN_LINE + "A system or library call failed (a socket, /dev/shm, an ibv_* call, malloc); before "
     "NCCL 2.13 a peer that went away was reported so too.", ("net.reachability", "os.shm", "gpu.fabric.devices"),
     False),
    (3, "ncclInternalError", ("internal error", "internal error - please report this issue to the NCCL developers"),
     "unknown", _WARN_LINE + "Older NCCL (before 2.12) returned it for socket failures between ranks too; check the "
     "interfaces and reachability between the nodes.", ("net.interface", "net.reachability"), False),
    (4, "ncclInvalidArgument", ("invalid argument", "invalid argument (run with NCCL_DEBUG=WARN for details)"),
     "launch-args", _WARN_LINE + "An argument of an NCCL call is invalid (a null buffer, a buffer on another GPU, "
     "a bad rank or root).", ("nccl.visible_devices",), True),
    (5, "ncclInvalidUsage", ("invalid usage", "invalid usage (run with NCCL_DEBUG=WARN for details)"),
     "launch-args", _WARN_LINE + "NCCL was used in a way it refuses: two ranks on one GPU (Duplicate GPU detected), "
     "a rank outside 0..N-1, a communicator used after an error.", ("gpu.devices.count", "nccl.visible_devices"),
     True),
    (6, "ncclRemoteError", ("remote process exited or there was a network error",),
     "fabric", _SYMPTOM, ("net.reachability",), False),
    (7, "ncclInProgress", ("NCCL operation in progress",),
     "unknown", "Not a failure: a non-blocking communicator is still initialising; a job that stops here waited "
     "for a rank that never joined.", (), False),
    (8, "ncclTimeout", ("timeout",),
     "fabric", "A device-side barrier (GIN/LSA, NCCL 2.30) timed out waiting for a peer: " + _SYMPTOM,
     ("net.reachability",), False),
)
_CUPY = {"NCCL_ERROR_SUCCESS": 0, "NCCL_ERROR_UNHANDLED_CUDA_ERROR": 1, "NCCL_ERROR_SYSTEM_ERROR": 2,
         "NCCL_ERROR_INTERNAL_ERROR": 3, "NCCL_ERROR_INVALID_ARGUMENT": 4, "NCCL_ERROR_INVALID_USAGE": 5}

ENTRIES: dict[str, Code] = {
    str(code): Code(str(code), name, texts[-1], category, fix, checks, root)
    for code, name, texts, category, fix, checks, root in _ROWS
}
_BY_NAME = {name.lower(): str(code) for code, name, *_ in _ROWS}
# texts so particular that a line naming NCCL and carrying one is that result; the short ones need "NCCL error ..."
_OWN = tuple((t.lower(), str(code)) for code, _, texts, *_ in _ROWS if code in (1, 2, 6, 7) for t in texts)
_SHORT = tuple(sorted(((t.lower(), str(code)) for code, _, texts, *_ in _ROWS for t in texts),
                      key=lambda item: -len(item[0])))
_NAME = re.compile(r"\b(nccl(?:Success|UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|"
                   r"RemoteError|InProgress|Timeout))\b", re.IGNORECASE)
_CUPY_NAME = re.compile(r"\b(NCCL_ERROR_[A-Z_]+)\b")
_TRACE = re.compile(r"NCCL INFO \S+\.(?:cc|cu|h|c|cpp):\d+ -> (\d+)\b")
_CONTEXT = re.compile(r"\bnccl\b", re.IGNORECASE)
# "NCCL error in: FILE:LINE, " / "NCCL error: " / "Test NCCL failure common.cu:891 '" then the text
_MARKER = re.compile(r"\bnccl (?:error|failure)\b", re.IGNORECASE)


def _after_delimiter(lower: str, text: str, start: int) -> int:
    """Where ``text`` first stands after ``start`` as a whole phrase right after ``,`` ``:`` or a quote (else the
    line's length)."""
    at = lower.find(text, start)
    while at >= 0:
        before = lower[start:at].rstrip()
        if (not before or before[-1] in ",:'\"") and not lower[at + len(text):at + len(text) + 1].isalnum():
            return at
        at = lower.find(text, at + 1)
    return len(lower)


def find(line: str) -> list[str]:
    """The ``ncclResult_t`` codes a line carries, in the order they appear (each once)."""
    line = " ".join(line.split())  # runs of blanks as one space
    found: list[tuple[int, str]] = []
    # a check's ``result == ncclSuccess (1 vs. 0)`` reports 1, not success
    found += [(m.start(), _BY_NAME[m[1].lower()]) for m in _NAME.finditer(line) if not compared_with(line, m.start())]
    if "ncclSuccess" in line:
        found += [(at, n) for at, n in check_values(line) if n in ENTRIES]
    found += [(m.start(), str(_CUPY[m[1]])) for m in _CUPY_NAME.finditer(line) if m[1] in _CUPY]
    found += [(m.start(), m[1]) for m in _TRACE.finditer(line) if m[1] in ENTRIES]
    lower = line.lower()
    if _CONTEXT.search(line):
        for text, code in _OWN:
            at = lower.find(text)
            if at >= 0:
                found.append((at, code))
    for m in _MARKER.finditer(line):
        first = min((_after_delimiter(lower, text, m.end()), code) for text, code in _SHORT)
        if first[0] < len(line):
            found.append(first)
    out: list[str] = []
    for _, code in sorted(found):
        if code not in out:
            out.append(code)
    return out


TABLE = CodeTable("nccl_result", SOURCE, VERSION, ENTRIES, find)
