"""torch_npu's names for the device faults its task queue stops on (``deviceErrorMap`` of ``NPUQueue.cpp``), printed
as ``RuntimeError: UCE ERROR happened.``: each is the runtime's own fault (an ACL code of ``table_acl``), so each is
decoded as that code is: an uncorrectable memory error (``UCE ERROR``, ``HBM MULTI BIT ECC ERROR``) is ``driver``,
a failed link between NPUs (``HCCS LINK ERROR``, ``HCCL OP RETRY FAILED``: HCCL retried the collective and the link
stayed down) ``hccl-link``, a peer's memory fault (``SUSPECT MEM ERROR``, ``SUSPECT REMOTE ERROR``) and a stop the
cluster's fault handling forced (``FORCE STOP``) point at another fault and claim nothing first.

>>> [(d.code.code, d.code.category) for d in TABLE.decode("RuntimeError: HCCS LINK ERROR happened.")]
[('HCCS LINK ERROR', 'hccl-link')]
>>> TABLE.decode("RuntimeError: FORCE STOP happened.")[0].code.root_cause
False
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable, Gate
from preflight.explain.table_acl import ACL, KINDS

SOURCE = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/"
          "torch_npu/csrc/core/npu/NPUQueue.cpp")
VERSION = "torch_npu 9e73e70 (deviceErrorMap of NPUQueue.cpp)"

# RepoStatus -> the name torch_npu prints and the ACL code the runtime reports for it (its row of table_acl_codes:
# meaning, category and fix come from there); FORCE STOP has none: the fault handling stopped the device's work
ROWS: tuple[tuple[str, str, int | None], ...] = (
    ("UCE ERROR", "UCE_EXIT", 507053), ("HBM MULTI BIT ECC ERROR", "HBM_ECC_EXIT", 507054),
    ("SUSPECT MEM ERROR", "SUSPECT_MEM_EXIT", 507055), ("HCCS LINK ERROR", "HCCS_LINK_EXIT", 507056),
    ("HCCL OP RETRY FAILED", "HCCL_OP_RETRY_EXIT", 507904), ("SUSPECT REMOTE ERROR", "SUSPECT_REMOTE_EXIT", 507057),
    ("FORCE STOP", "STOP_EXIT", None),
)


def _code(name: str, status: str, acl: int | None) -> Code:
    if acl is None:
        category, root, fix = KINDS["abort"]
        return Code(name, status, "the device's work was stopped by the fault handling after another fault", category,
                    fix, (), root)
    same = ACL.entries[str(acl)]
    return Code(name, status, f"{same.name} ({acl}): {same.meaning}", same.category, same.fix, (),
                same.root_cause)


ENTRIES: dict[str, Code] = {row[0]: _code(*row) for row in ROWS}
# torch_npu prints "<name> happened." (and "..., <ACL message>"): the upper-case name, as a whole phrase
_FIND = re.compile(r"\b(" + "|".join(re.escape(row[0]) for row in ROWS) + r")\b(?= happened|[.,:]|$)")


def find(line: str) -> list[str]:
    """The device-fault names of a line, each once (upper case, as torch_npu prints them).

    >>> find("RuntimeError: UCE ERROR happened. UCE ERROR happened."), find("a uce error happened")
    (['UCE ERROR'], [])
    """
    return list(dict.fromkeys(m.group(1) for m in _FIND.finditer(line)))


TABLE = CodeTable("torch_npu_device", SOURCE, VERSION, ENTRIES, find,
                  Gate(tuple(row[0].lower() for row in ROWS)))
