"""An operator's own check that failed (round 26): the last reading of a log no signature, code, family or known
case explains.

A C++ check in an operator or kernel (``TORCH_CHECK``, ``c10::Error``, an assertion) refusing what the job gave
it is the job's fault (``app-fault``), whatever words the operator's author chose. The message is the line the
check printed: the one just before ``Exception raised from ... at FILE:N`` or ``frame #0:``, the text of
``C++ exception with description "..."``, or ``what():`` after ``terminate called after throwing``. A check in
the distributed, memory or device layers (a raise site under ``distributed``/``c10d``, a message that names a
network, a store, a timeout, memory, a version, a driver) is left to their own readings.

>>> check_failure([["RuntimeError: unsupported memory format Preserve",
...                 "Exception raised from empty_tensor_restride at ../c10/core/TensorImpl.h:2378 (most recent call "
...                 "first):", "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57"]])
(0, 1, 'RuntimeError: unsupported memory format Preserve')
>>> check_failure([["[E731 07:58:03.605 compiler_depend.ts:429] RopeOperation setup failed!",
...                 "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0xb8 (0xffff in libc10.so)"]])[1:]
(1, '[E731 07:58:03.605 compiler_depend.ts:429] RopeOperation setup failed!')
>>> check_failure([["RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
...                 "c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
...                 "Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:672"]]) is None
True
>>> check_failure([["Traceback (most recent call last):", "KeyError: 'model'"]]) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_RAISED = re.compile(r"Exception raised from \S+ at (?P<site>\S+?):\d+")
_FRAME0 = re.compile(r"^\s*(?:\[[^\]]*\]:?\s*)?frame #0:\s*(?:c10::Error::Error|c10::detail::torchCheckFail|"
                     r"c10::\w+Error::\w+Error)")
_DESCRIBED = re.compile(r"C\+\+ exception with description \"(?P<msg>.+?)\"?\s*(?:thrown|$)")
_WHAT = re.compile(r"^\s*what\(\):\s*(?P<msg>\S.*)")
_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?:c10::\w*Error|std::runtime_error)'")
_NOT_MESSAGE = re.compile(r"^\s*(?:\[[^\]]*\]:?\s*)?(?:frame #\d+|Exception raised from|File \"|Traceback|\s*$|"
                          r"\^+|~+|During handling|The above exception)")
# the layers with readings of their own: a raise site or message in them is theirs, not an operator's
_OTHER_SITE = re.compile(r"distributed|c10d|ProcessGroup|Store|CUDACachingAllocator|NPUCachingAllocator|"
                         r"elastic|rendezvous|/cuda/CUDA(?:Functions|Exception)|npu/NPU(?:Functions|Exception)",
                         re.IGNORECASE)
_OTHER_WORDS = re.compile(
    r"NCCL|HCCL|gloo|TCPStore|\bstore\b|rendezvous|socket|connect|address|\bport\b|timed? ?out|timeout|"
    r"out of memory|\bOOM\b|allocat|memory pool|(?:insufficient|no|not enough) (?:device )?memory|"
    r"driver|version|\bdevice\b|\bdevices\b|ordinal|visible|not compiled|compiled with|"
    r"undefined symbol|No such file|not found|cannot open|permission|\bECC\b|Xid|ACL|aclrt|\bE[A-Z0-9]\d{4}\b|"
    r"ERR\d{5}|error code|errno|CUDA error|NPU error|launch|environment|\benv\b|MASTER_|RANK|WORLD_SIZE|"
    r"could not run '|backend|signal|killed|abort",
    re.IGNORECASE)
WINDOW = 6  # lines back from the raise site to the check's message


def _message_before(lines: Sequence[str], at: int) -> int | None:
    """The index of the check's message: the nearest line before ``at`` that is no frame, path or blank."""
    for k in range(at - 1, max(-1, at - 1 - WINDOW), -1):
        if not _NOT_MESSAGE.match(lines[k]):
            return k
    return None


def _operator_message(message: str, site: str = "") -> bool:
    return bool(message.strip()) and not _OTHER_SITE.search(site) and not _OTHER_WORDS.search(message)


def check_failure(files: Sequence[Sequence[str]]) -> tuple[int, int, str] | None:
    """The first operator check that failed: (file index, 1-based line number, its message), or None."""
    for index, lines in enumerate(files):
        for k, line in enumerate(lines):
            raised = _RAISED.search(line)
            if raised or _FRAME0.match(line):
                if not raised and k and _RAISED.search(lines[k - 1]):
                    continue  # read at its "Exception raised from" line
                at = _message_before(lines, k)
                site = raised.group("site") if raised else ""
                if at is not None and _operator_message(lines[at], site):
                    return index, at + 1, lines[at].strip()
                continue
            described = _DESCRIBED.search(line)
            if described and _operator_message(described.group("msg")):
                return index, k + 1, described.group("msg").strip()
            if _TERMINATE.search(line) and k + 1 < len(lines):
                what = _WHAT.match(lines[k + 1])
                if what and _operator_message(what.group("msg")):
                    return index, k + 2, what.group("msg").strip()
    return None
