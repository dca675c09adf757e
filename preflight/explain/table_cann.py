"""CANN's error codes (``EI0006``, ``EJ0001``, ``EE9999``, ``EZ1001``...): the families EE (runtime), EH (ACL),
EI (HCCL), EJ (HCCP), EK (profiling), EL (driver) and EZ (operators), decoded even when no log sample of a
code exists. Three tables, each with its own source:

- ``CANN``: every EE/EH/EI/EJ/EK/EL/EZ entry of the error-code JSON CANN installs and its error-code
  reference is generated from (``table_cann_codes``: hicann/runtime ``error_code.json``, tag v9.2.0-beta.1).
- ``HCOMM``: the HCCL codes that file lacks (EI0009, EI0018-EI0020), from hicann/hcomm's
  ``docs/en/error_codes``; EI0009's text is hiascend's CANN 9.0.0 reference page
  (https://www.hiascend.com/document/detail/zh/canncommercial/900/maintenref/troubleshooting/atlaserrorcode_15_0381.html).
- ``CANN_INNER``: the ``X9999`` inner-error codes with no JSON template (EE9999, EH9999, EI9999, EL9999),
  from hicann/runtime's error-message guide; EK9999 and EZ9999 are in the JSON; and the other modules' inner
  codes the runtime reports (``base_info.hpp``): E29999 (FE, the fusion engine), E39999 (AI CPU and its
  scheduler, TSD), EE8888 (GE as the runtime reports it).

Codes are found in any case and any wrapping: ``EI0006:``, ``[EI0006]``, ``Bind_Failed(EJ0003)``,
``EZ9999[PID: 41421]``.

>>> [d.code.name for d in CANN.decode("EL0015: The device access is invalid.")]
['Invalid_Device_Access']
>>> [d.code.code for t in TABLES for d in t.decode("[ei0019] ... ee9999: Inner Error!")]
['EI0019', 'EE9999']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_cann_codes import ROWS

# The preflight checks that verify a category's cause on the hosts (shared by the Ascend tables).
CHECKS: dict[str, tuple[str, ...]] = {
    "oom": ("npu.processes", "os.memory"),
    "driver": ("npu.health", "versions.npu_driver", "versions.cann"),
    "device-mapping": ("npu.count", "npu.chip", "npu.env"),
    "version-mismatch": ("versions.cann", "versions.npu_driver", "versions.torch_npu_compat"),
    "launch-args": ("hccl.env", "hccn.rank_table"),
    "collective-mismatch": ("versions.cann", "versions.torch_npu_compat"),
    "hccl-timeout": ("hccn.link", "hccn.reachability", "npu.processes"),
    "hccl-link": ("hccn.link", "hccn.ip", "hccn.reachability"),
    "hccl-port": ("ports.listening", "ports.reserved"),
    "hccl-stale-process": ("npu.processes",),
    "master-unreachable": ("net.reachability", "hccl.env", "firewall.rules"),
    "p2p": ("allreduce",),
    "app-fault": (),
}

_RUNTIME = "https://github.com/hicann/runtime/blob/5dcf3b70b499eddb6c9a908dbd027bde32abc8af/"
_VERSION = "CANN 9.2.0-beta.1 (hicann/runtime tag v9.2.0-beta.1)"

_SHAPE = re.compile(r"(?<![A-Za-z0-9])(E[EHIJKLZ][0-9]{4})(?![0-9])", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The CANN error codes on a line (EE/EH/EI/EJ/EK/EL/EZ + 4 digits), upper-cased, in order, once each.

    >>> find("Communication_Error_Bind_IP_Port(EI0020): ... [EI0020] ei0020 EZ9999[PID: 41421] XEI0001 EI00012")
    ['EI0020', 'EZ9999']
    """
    return list(dict.fromkeys(m.group(1).upper() for m in _SHAPE.finditer(line)))


def _code(code: str, name: str, meaning: str, category: str, fix: str, root: bool) -> Code:
    return Code(code, name, meaning, category, fix, CHECKS.get(category, ()), root)


CANN = CodeTable("cann", _RUNTIME + "src/dfx/error_manager/error_code.json", _VERSION,
                 {row[0]: _code(*row) for row in ROWS}, find)

_HCOMM_ROWS = (
    ("EI0009", "Communication_Error_Initialize_Transport", "Device %s transport init error. Reason: %s.",
     "hccl-link", "Check whether the device port link is down: the optical module in place "
     "(`hccn_tool -i $i -optical -g`), the IP configured (`-ip -g`), the switch connected (`-lldp -g`); and "
     "whether the peer NPU failed first.", True),
    ("EI0018", "Execution_Error_UB_CQE",
     "An error CQE occurred during operator execution. Local information: server %s, device ID %s, device IP "
     "%s. Peer information: ...", "hccl-link",
     "Check the network between the two ends (port down, packet loss, ping), whether the peer process exited "
     "first, and the HBM/UB hardware of both devices (RAS fault check).", True),
    ("EI0019", "Communication_Error_Bind_IP_Port",
     "Failed to enable listening for the host network adapter socket. Reason: %s", "hccl-port",
     "The host port is taken by another process: move HCCL_IF_BASE_PORT and reserve the range "
     "(sysctl -w net.ipv4.ip_local_reserved_ports=...); check the job is not started twice on a device.", True),
    ("EI0020", "Communication_Error_Bind_IP_Port",
     "Failed to enable listening for the NPU network adapter socket. Reason: %s", "hccl-port",
     "Several processes use one device: with root info give them HCCL_NPU_SOCKET_PORT_RANGE; with a rank "
     "table give each its own device_port/host_port (16666 by default); kill leftover processes.", True),
)
HCOMM = CodeTable(
    "hcomm", "https://github.com/hicann/hcomm/tree/a23a418b73c3714f1c86d158f7c48c3f3ccd97e9/docs/en/error_codes",
    "hcomm a23a418 (CANN 9.x HCCL)", {row[0]: _code(*row) for row in _HCOMM_ROWS}, find)

_INNER = "Inner error: no template, the message after the code is the module's own text; "
_INNER_ROWS = (
    ("EE9999", "Inner_Error (Runtime/GE/system)", _INNER + "the runtime, GE or system layer failed.", "unknown",
     "Read the lines after 'EE9999' and the ACL code beside it (507xxx: AI Core exception, device setup, "
     "timeouts); check `npu-smi info` health if it names the device.", False),
    ("EH9999", "Inner_Error (ACL)", _INNER + "an ACL call failed inside.", "unknown",
     "Read the lines after 'EH9999' for the failing ACL call and its return code.", False),
    ("EI9999", "Inner_Error (HCCL)", _INNER + "HCCL failed inside.", "unknown",
     "Read the lines after 'EI9999' and the plog; an EIxxxx code from another rank usually names the cause.",
     False),
    ("EL9999", "Inner_Error (driver)", _INNER + "the NPU driver failed inside.", "driver",
     "Check `npu-smi info` health, the driver/firmware versions and the device's kernel log (dmesg).", False),
    ("E29999", "Inner_Error (FE)", _INNER + "the fusion engine (operator selection and fusion at graph compile "
     "time) failed inside.", "unknown",
     "Read the lines after 'E29999' for the operator and its input dtypes/shapes; an op unsupported for them is "
     "the model's, a missing operator package is the CANN install's (`versions.cann`).", False),
    ("E39999", "Inner_Error (AI CPU)", _INNER + "the AI CPU operator layer or its device scheduler (TSD) failed "
     "inside: an AI CPU kernel rejected its inputs, or the device-side AI CPU processes did not start.", "unknown",
     "Read the lines after 'E39999': an operator named with its inputs is the model's; 'tsd' / 'aicpu_sd' / "
     "'HDC' lines point at the device's AI CPU processes (`npu-smi info` health, restart the device).", False),
    ("EE8888", "Inner_Error (GE, as the runtime reports it)", _INNER + "the graph engine failed inside a runtime "
     "call.", "unknown", "Read the lines after 'EE8888' and the E1xxxx code near it: it names the graph step.",
     False),
)
_INNER_SHAPE = re.compile(r"(?<![A-Za-z0-9])(E[EHIJKLZ23][0-9]{4}|EE8888)(?![0-9])", re.IGNORECASE)


def find_inner(line: str) -> list[str]:
    """The inner-error codes on a line: the CANN shape and the numeric modules' ``E29999`` / ``E39999``.

    >>> find_inner("Call aclnnNonzeroV2 failed, detail:E39999: Inner Error"), find_inner("ee8888 E390010")
    (['E39999'], ['EE8888'])
    """
    return list(dict.fromkeys(m.group(1).upper() for m in _INNER_SHAPE.finditer(line)))


CANN_INNER = CodeTable(
    "cann_inner", _RUNTIME + "docs/zh/guidelines/error_message_guide/macro-selection-guide.md ; "
    "https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/"
    "src/runtime/core/inc/spec/base_info.hpp", _VERSION,
    {row[0]: _code(*row) for row in _INNER_ROWS}, find_inner)

TABLES: tuple[CodeTable, ...] = (CANN, HCOMM, CANN_INNER)
