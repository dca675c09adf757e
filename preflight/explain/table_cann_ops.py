"""CANN's operator, compiler and AI CPU error codes (``E40021``, ``E90003``, ``E60006``, ``E30006``...): the
families of CANN's error-code JSON that ``table_cann`` does not take (its EE/EH/EI/EJ/EK/EL/EZ are the runtime,
ACL, HCCL, HCCP, profiling, driver and aclnn ones), decoded even when no log sample of a code exists.

The entries are ``table_cann_ops_codes.ROWS`` (hicann/runtime ``error_code.json``, tag v9.2.0-beta.1, the same
file ``table_cann`` reads). Their category follows from the JSON's own errClass family and errTitle
(``category_of``): an operator that rejects its inputs or fails to compile or tile (E2/E4 ``Compilation_Error``,
E5-E7 ``Invalid_Argument*`` / ``Not_Supported_*`` / ``Inner_Error_Tiling_Fail``, E9/EA/EB
``Inner_Error_Compile_Fail``) is the job's ``app-fault``; an invalid environment variable or configuration
file is ``launch-args``; a Python, package or OPP problem (wrong Python version, a module that does not import,
a package whose signature does not verify, an OPP file that is missing) is ``version-mismatch``; an AI CPU
scheduler, TSDaemon, device connection or driver-call failure on the device is ``driver``.

Codes are found in any case and wrapping: ``E40021:``, ``Failure_to_Compile_Op(E40021)``, ``[E90003]``,
``RuntimeError: E40021: [PID: 2000]``.

>>> [(d.code.name, d.code.category) for d in TABLE.decode("E90003: Compile operator failed, cause: Template ...")]
[('Inner_Error_Compile_Fail', 'app-fault')]
>>> category_of("E40020", "Environment_Error_Import_Python_Module_Failed")
'version-mismatch'
>>> category_of("E39002", "Inner_Error_Driver_API_Call_Failed"), category_of("EP0002", "Config_Error")
('driver', 'launch-args')
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_cann import CHECKS
from preflight.explain.table_cann_ops_codes import ROWS

_SOURCE = ("https://github.com/hicann/runtime/blob/5dcf3b70b499eddb6c9a908dbd027bde32abc8af/src/dfx/error_manager/"
           "error_code.json")
_VERSION = "CANN 9.2.0-beta.1 (hicann/runtime tag v9.2.0-beta.1)"

# the AI CPU entries (E3xxxx) whose cause is the device side, by errTitle; the other E3 titles are below
_AICPU_DEVICE = ("Device_Connection_Failure", "Inner_Error_Device_Status_Abnormal", "Inner_Error_TSDaemon",
                 "Inner_Error_AICPU_Scheduler", "Inner_Error_Device_Subprocess", "Inner_Error_Driver_API",
                 "Inner_Error_Failed_Send_OPP", "Cgroup_Add_Failure", "Inner_Error_Cgroup", "NN_Process_Bin_Error",
                 "Inner_Error_Verify_NN_Process_Binary")
_PACKAGE = ("Package_Error", "Environment_Error", "Inner_Error_Failed_Load_Package", "Invalid_Config_Value")
_CONFIG = ("Config_Error", "Invalid_Numa", "Invalid_Graph_Parallel_Option", "Invalid_Slice_Number",
           "Unsupported_Attribute", "Invalid_Memory_Budget")

FIXES: dict[str, str] = {
    "app-fault": "An operator rejected its inputs or could not be compiled or tiled for them (the message names "
                 "the operator, the input and what it expects): fix the shapes, dtypes or formats the model passes, "
                 "use a dtype this SoC supports, or a CANN/op package where the operator supports them.",
    "launch-args": "Fix the environment variable or configuration file the message names (its valid values are "
                   "in the message or CANN's environment-variable reference), the same on every node.",
    "version-mismatch": "Install matching packages: the CANN toolkit, its kernels/OPP package for this SoC, the "
                        "Python version and modules it needs (source set_env.sh); the message names what is "
                        "missing or does not verify.",
    "driver": "The NPU side failed (AI CPU scheduler, TSDaemon, device link, driver call, or an ECC error that "
              "damaged a binary): check `npu-smi info` health, dmesg and the driver/firmware versions; reset or "
              "reboot the NPU if it stays unhealthy.",
}


def category_of(code: str, title: str) -> str:
    """The category of an entry from its family (the code's first two characters) and its errTitle."""
    family = code[:2]
    if family == "E3":
        if title.startswith(_AICPU_DEVICE):
            return "driver"
        return "version-mismatch" if title.startswith(_PACKAGE) else "app-fault"
    if family == "EM":
        return "driver"  # the queue_schedule process on the device
    if title.startswith(_CONFIG) or title == "File_Operation_Error_Invalid_Path" or (
            family in ("EP", "EZ") and title.startswith("File_Operation_Error")):  # EZ: opbase's (table_cann_opbase)
        return "launch-args"
    if title.startswith(_PACKAGE) or (family in ("E2", "E4") and title.startswith("File_Operation_Error")):
        return "version-mismatch"  # an OPP / fusion file CANN installs is missing or unreadable
    return "app-fault"


def _code(code: str, title: str, message: str) -> Code:
    category = category_of(code, title)
    return Code(code, title or f"{code[:2]}xxxx operator check", message, category, FIXES[category],
                CHECKS.get(category, ()), True)


_SHAPE = re.compile(r"(?<![A-Za-z0-9])(E[2-9][0-9]{4}|E[ABFMOP][0-9]{4})(?![0-9])", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The operator / compiler / AI CPU error codes on a line, upper-cased, in order, once each.

    >>> find("Failure_to_Compile_Op(E40021): ... [e90003] E5000 E600001 0xE40021 EP0002")
    ['E40021', 'E90003', 'EP0002']
    """
    return list(dict.fromkeys(m.group(1).upper() for m in _SHAPE.finditer(line)))


TABLE = CodeTable("cann_ops", _SOURCE, _VERSION, {row[0]: _code(*row) for row in ROWS}, find)
