"""torch_npu's own error codes (``ERRxxyyy``), the whole table of ``NPUException.h``: a submodule (``xx``: 00 PTA
the framework, 01 OPS the operators, 02 DIST the process group, 03 GRAPH, 04 PROF) and an ``ErrCode`` (``yyy``: 001
invalid parameter ... 012 permission, 100 / 200 / 300 a failed ACL / HCCL / GE call), printed by
``formatErrorCode`` under the error as ``[ERROR] <time> (PID:n, Device:d, RankID:r) ERR01001 OPS invalid
parameter``; ``ERR99999 UNKNOWN`` is torch_npu's Python-side wrapper of any other exception.

Only what the code itself says is claimed: an operator (OPS) or graph (GRAPH) that rejected its arguments or does
not support them is ``app-fault`` (the job's call, like CANN's EZxxxx parameter codes); a memory error of any
submodule is ``oom`` (the caching allocator's); a failed ACL / HCCL / GE call, an internal error and the other
generic codes claim nothing and leave the CANN code or the text printed with them to speak. A signature on the
message above the code outranks it (``current CANN version do not support`` is a version, not the job's call).

>>> [(d.code.code, d.code.category) for d in TABLE.decode(
...     "[ERROR] 2024-11-28-11:37:15 (PID:6547, Device:0, RankID:-1) ERR01007 OPS feature not supported")]
[('ERR01007', 'app-fault')]
>>> [d.code.category for d in TABLE.decode("(PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed")]
['unknown']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

SOURCE = ("https://github.com/Ascend/pytorch/blob/f38af7869a43923254fb75d7d7a7fbbcec3caef5/"
          "torch_npu/csrc/core/npu/NPUException.h")
VERSION = "torch_npu f38af78 (SubModule / ErrCode of NPUException.h, errCodeMap of NPUException.cpp)"

SUBMODULES = {0: "PTA", 1: "OPS", 2: "DIST", 3: "GRAPH", 4: "PROF"}
ERRCODES = {1: ("PARAM", "invalid parameter"), 2: ("TYPE", "invalid type"), 3: ("VALUE", "invalid value"),
            4: ("PTR", "invalid pointer"), 5: ("INTERNAL", "internal error"), 6: ("MEMORY", "memory error"),
            7: ("NOT_SUPPORT", "feature not supported"), 8: ("NOT_FOUND", "resource not found"),
            9: ("UNAVAIL", "resource unavailable"), 10: ("SYSCALL", "system call failed"),
            11: ("TIMEOUT", "timeout error"), 12: ("PERMISSION", "permission error"),
            100: ("ACL", "call acl api failed"), 200: ("HCCL", "call hccl api failed"),
            300: ("GE", "call ge api failed")}

_REJECTED = {"PARAM", "TYPE", "VALUE", "PTR", "NOT_SUPPORT"}
_APP_FIX = ("The operator rejected the job's call (the message above the code says which argument: shape, dtype, "
            "format, a value): fix the call in the model code, or use a torch_npu / CANN that supports it; "
            "ASCEND_LAUNCH_BLOCKING=1 pins the failing operator.")
_OOM_FIX = ("Out of NPU memory in torch_npu's caching allocator: smaller batch or sequence, stop other processes "
            "on the NPU (`npu-smi info`); PYTORCH_NPU_ALLOC_CONF=expandable_segments:True reduces fragmentation.")
_GENERIC_FIX = ("torch_npu only reports that a step failed; the CANN code (EZ/EE/EI..., 5xxxxx) or the message "
                "printed with it names the cause.")


def _code(sub: int, err: int) -> Code:
    name, meaning = ERRCODES[err]
    module = SUBMODULES[sub]
    text = f"ERR{sub:02d}{err:03d}"
    if name == "MEMORY":
        return Code(text, f"{module}_{name}", f"{module} {meaning}", "oom", _OOM_FIX, ("npu.processes",))
    if module in ("OPS", "GRAPH") and name in _REJECTED:
        return Code(text, f"{module}_{name}", f"{module} {meaning}", "app-fault", _APP_FIX)
    return Code(text, f"{module}_{name}", f"{module} {meaning}", "unknown", _GENERIC_FIX, root_cause=False)


ENTRIES: dict[str, Code] = {c.code: c for c in (_code(s, e) for s in SUBMODULES for e in ERRCODES)}
ENTRIES["ERR99999"] = Code("ERR99999", "UNKNOWN", "UNKNOWN application exception (torch_npu's wrapper of a Python "
                           "exception)", "unknown", "Read the exception printed above it.", root_cause=False)

_FIND = re.compile(r"\bERR(\d{5})\b")


def find(line: str) -> list[str]:
    """The ``ERRxxyyy`` codes of a line, each once."""
    out: list[str] = []
    for m in _FIND.finditer(line):
        code = f"ERR{m[1]}"
        if code not in out:
            out.append(code)
    return out


TABLE = CodeTable("torch_npu_err", SOURCE, VERSION, ENTRIES, find)
