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
from preflight.explain.table_acl import KINDS

SOURCE = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/"
          "torch_npu/csrc/core/npu/NPUQueue.cpp")
VERSION = "torch_npu 9e73e70 (deviceErrorMap of NPUQueue.cpp)"

# RepoStatus -> the name torch_npu prints, the ACL code the runtime reports for it (table_acl_codes) and its kind
ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("UCE ERROR", "UCE_EXIT", "ACL_ERROR_RT_DEVICE_MEM_ERROR (507053): an uncorrectable memory error", "ecc"),
    ("HBM MULTI BIT ECC ERROR", "HBM_ECC_EXIT", "ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR (507054)", "ecc"),
    ("SUSPECT MEM ERROR", "SUSPECT_MEM_EXIT", "ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR (507055): a peer's memory",
     "remote"),
    ("HCCS LINK ERROR", "HCCS_LINK_EXIT", "ACL_ERROR_RT_LINK_ERROR (507056): the HCCS link between two NPUs",
     "link"),
    ("HCCL OP RETRY FAILED", "HCCL_OP_RETRY_EXIT", "ACL_ERROR_RT_COMM_OP_RETRY_FAIL (507904): HCCL retried the "
     "collective on a failed link and gave up", "link"),
    ("SUSPECT REMOTE ERROR", "SUSPECT_REMOTE_EXIT", "ACL_ERROR_RT_SUSPECT_REMOTE_ERROR (507057): a peer's memory "
     "fault or out-of-bounds access", "remote"),
    ("FORCE STOP", "STOP_EXIT", "the device's work was stopped by the fault handling after another fault", "abort"),
)


def _code(row: tuple[str, str, str, str]) -> Code:
    category, root, fix = KINDS[row[3]]
    return Code(row[0], row[1], row[2], category, fix, (), root)


ENTRIES: dict[str, Code] = {row[0]: _code(row) for row in ROWS}
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
