"""HcclResult, the return code of every HCCL call: the whole enum of CANN's ``hccl_types.h``.

torch_npu prints it as ``HCCL function error: <call>, error code is N``; HCCL's own log lines carry it as
``errNo[0x000000000500000N]`` (module 5, the code in the low 16 bits: ``HCCL_ERROR_CODE`` in hicann/hccl's
``src/common/log.h``) and ``call trace: hcclRet -> N``. The number alone names only the layer that failed;
the EIxxxx / EExxxx line printed next to it (``table_cann``) usually says why.

>>> [d.code.name for d in HCCL_RESULTS.decode("HCCL function error: HcclGetRootInfo(&hcclID), error code is 7")]
['HCCL_E_UNAVAIL']
>>> HCCL_RESULTS.find("[ERROR] HCCL(60570,):... [InitCommRootInfo]errNo[0x0000000005000013] init failed")
['19']
>>> HCCL_RESULT[11]
'HCCL_E_TCP_CONNECT'
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

SOURCE = ("https://github.com/hicann/hcomm/blob/2b912e7d2b105735579276a63a51364890c56788/"
          "include/hccl/hccl_types.h")
VERSION = "hcomm 2b912e7 (CANN 9.x hccl_types.h)"

_LINK = ("hccn.link", "hccn.reachability", "npu.processes")
_FIRST = "Read the EIxxxx/EExxxx lines and the plog (~/ascend/log) printed with it for the first error; "

# (code, name, the header's comment, category, fix, checks, root_cause)
_ROWS: tuple[tuple[int, str, str, str, str, tuple[str, ...], bool], ...] = (
    (0, "HCCL_SUCCESS", "success", "unknown", "-", (), False),
    (1, "HCCL_E_PARA", "parameter error", "launch-args",
     _FIRST + "check the rank count and parallel sizes against the NPUs, and the HCCL_* variables on every node.",
     ("hccl.env", "npu.count"), True),
    (2, "HCCL_E_PTR", "empty pointer", "app-fault",
     _FIRST + "a null buffer or communicator was passed: usually a framework/CANN version mismatch or a bug.",
     ("versions.torch_npu_compat",), True),
    (3, "HCCL_E_MEMORY", "memory error", "oom",
     "Free NPU memory (smaller batch, other processes: `npu-smi info`) or lower HCCL_BUFFSIZE.",
     ("npu.processes",), True),
    (4, "HCCL_E_INTERNAL", "internal error", "hccl-link",
     _FIRST + "HCCL reports that a step failed; the cause is the earlier error.", _LINK, False),
    (5, "HCCL_E_NOT_SUPPORT", "not support feature", "version-mismatch",
     "The operation or setting is not supported by this HCCL/NPU: check the CANN, driver and torch_npu "
     "versions and the HCCL_* options used.", ("versions.cann", "versions.torch_npu_compat"), True),
    (6, "HCCL_E_NOT_FOUND", "not found specific resource", "launch-args",
     _FIRST + "a communicator, group or rank-table entry that was asked for does not exist.",
     ("hccn.rank_table", "hccl.env"), True),
    (7, "HCCL_E_UNAVAIL", "resource unavailable", "hccl-port",
     "A port or device resource is taken: kill leftover training processes, reserve HCCL's ports "
     "(HCCL_IF_BASE_PORT / HCCL_HOST_SOCKET_PORT_RANGE / HCCL_NPU_SOCKET_PORT_RANGE).",
     ("ports.listening", "ports.reserved", "npu.processes"), True),
    (8, "HCCL_E_SYSCALL", "call system interface error", "hccl-link",
     _FIRST + "a system call (socket, file, memory) failed underneath HCCL.", _LINK, False),
    (9, "HCCL_E_TIMEOUT", "timeout", "hccl-timeout",
     "Find the rank that failed or lagged first; raise HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT only when "
     "all ranks merely start or run far apart.", _LINK, False),
    (10, "HCCL_E_OPEN_FILE_FAILURE", "open file fail", "launch-args",
     "A file HCCL needs (the rank table, RANK_TABLE_FILE) cannot be opened: check its path and permissions "
     "on every node.", ("hccn.rank_table",), True),
    (11, "HCCL_E_TCP_CONNECT", "tcp connect fail", "hccl-link",
     "A TCP connection between ranks failed: check the host/device IPs ranks advertise (HCCL_IF_IP, "
     "HCCL_SOCKET_IFNAME), firewalls and reserved ports (net.ipv4.ip_local_reserved_ports).",
     ("net.reachability", "hccn.reachability", "ports.reserved"), True),
    (12, "HCCL_E_ROCE_CONNECT", "roce connect fail", "hccl-link",
     "The RoCE link between device NICs could not be set up: check link, IP and TLS of the device ports "
     "(`hccn_tool -i N -link -g`, `-ip -g`, `-tls -g`).", ("hccn.link", "hccn.ip", "hccn.reachability"), True),
    (13, "HCCL_E_TCP_TRANSFER", "tcp transfer fail", "hccl-link",
     "Data transfer over a TCP socket failed: a peer rank exited or the host network dropped; find the "
     "peer's first error.", _LINK, False),
    (14, "HCCL_E_ROCE_TRANSFER", "roce transfer fail", "hccl-link",
     "Data transfer over the device RoCE network failed: check the device links and the peer rank.",
     ("hccn.link", "hccn.reachability"), True),
    (15, "HCCL_E_RUNTIME", "call runtime api fail", "driver",
     _FIRST + "the CANN runtime call HCCL made failed (EExxxx / 507xxx).", ("npu.health", "versions.cann"), False),
    (16, "HCCL_E_DRV", "call driver api fail", "driver",
     _FIRST + "the NPU driver call HCCL made failed (ELxxxx).", ("npu.health", "versions.npu_driver"), False),
    (17, "HCCL_E_PROFILING", "call profiling api fail", "launch-args",
     "A profiling call failed inside HCCL: disable or fix the profiling options of the job.", (), False),
    (18, "HCCL_E_CCE", "call cce api fail", "driver",
     _FIRST + "a device kernel call HCCL made failed.", ("npu.health",), False),
    (19, "HCCL_E_NETWORK", "call network api fail", "hccl-link",
     _FIRST + "a network-layer call (RDMA/HCCP: ra reg mr, QP) failed; check device links and memory.",
     ("hccn.link", "npu.processes"), False),
    (20, "HCCL_E_AGAIN", "try again", "hccl-timeout",
     "A transient condition: retry; if it repeats, read the plog for what HCCL was waiting for.", _LINK, False),
    (21, "HCCL_E_REMOTE", "error cqe", "hccl-link",
     "An error completion (CQE) on the device network: a link flapped or the peer process exited first; "
     "check `grep -rn 'error cqe'` in the plog, the device links and the peer's log.", _LINK, True),
    (22, "HCCL_E_SUSPENDING", "error communicator suspending", "hccl-link",
     "The communicator was suspended after another fault (step-level recovery): find that fault.", _LINK, False),
    (23, "HCCL_E_OPRETRY_FAIL", "retry constraint", "hccl-link",
     "HCCL's operator retry after a link fault failed: check the device links and the peer rank.", _LINK, True),
    (24, "HCCL_E_OOM", "out of memory", "oom",
     "Free NPU memory (smaller batch, other processes: `npu-smi info`) or lower HCCL_BUFFSIZE.",
     ("npu.processes",), True),
    (1041, "HCCL_E_IN_STATUS", "the error information is in the status", "hccl-link",
     _FIRST + "the real error is carried in the communicator's status.", _LINK, False),
)

# The compatible view catalog_ascend lists in its cause text: number -> name (with a hint where useful).
_HINTS = {1: " (parameter)", 2: " (null pointer)", 7: " (resource/port in use)", 16: " (driver)",
          21: " (error CQE)"}
HCCL_RESULT: dict[int, str] = {code: name + _HINTS.get(code, "") for code, name, *_ in _ROWS}

_BY_NAME = {name: str(code) for code, name, *_ in _ROWS}
_TORCH_NPU = re.compile(r"hccl\s*function\s*error\b.*?error\s*code\s*(?:is|[:=])?\s*(\d+)", re.IGNORECASE)
_ERRNO = re.compile(r"errNo\s*\[\s*0x0*5(?:00|01)([0-9a-f]{4})\s*\]", re.IGNORECASE)
_TRACE = re.compile(r"call\s*trace\s*:\s*(?:hccl)?\s*ret\s*->\s*(\d+)", re.IGNORECASE)
_NAME = re.compile(r"\bHCCL_E_[A-Z_]+\b", re.IGNORECASE)
# HCCL's own HCCL_ERROR lines: "... failed, ret[7]", "return[9]", "ret=11", "ret = 4" (hicann/hccl), and what its
# callers print on a line naming an Hccl* call: "ret: 0x9" (hexadecimal), MindSpore's "| Error Number 2"; a six-digit
# number there is an aclError (table_acl), so only HcclResult's own range is read
_RET = re.compile(r"\b(?:ret|return|error\s*number)\s*(?:\[\s*(\d{1,4})\s*\]|[=:]?\s*(0x[0-9a-f]{1,4}|\d{1,4})\b)",
                  re.IGNORECASE)
_RANGE = {code for code, *_ in _ROWS if code}


def find(line: str) -> list[str]:
    """HcclResult numbers on a line: torch_npu's ``error code is N``, HCCL's ``errNo[0x...0500000N]``,
    ``call trace: hcclRet -> N`` and ``ret[N]`` / ``return[N]`` / ``ret=N`` (HCCL log lines only), or an ``HCCL_E_*``
    name; in order, once each.

    >>> find("hccl function error :HcclGetRootInfo(&hcclID), Error Code is 11")
    ['11']
    >>> find("[ERROR] HCCL(17381,python):... [Init]call trace: hcclRet -> 7"), find("call trace: ret -> 7")
    (['7'], [])
    >>> find("returned HCCL_E_TIMEOUT after 1800 s")
    ['9']
    >>> find("[ERROR] HCCL(3,python):... [Init]HcclCommInitRootInfo failed, return[11]; ret[507018]"), find("ret[7]")
    (['11'], [])
    >>> find("HcclCommPrepare fail, ret: 0x9"), find('HcclCommInitRootInfo failed. | Error Number 2'), find("ret: 0x9")
    (['9'], ['2'], [])
    """
    found = [m.group(1) for m in _TORCH_NPU.finditer(line)]
    found += [str(int(m.group(1), 16)) for m in _ERRNO.finditer(line)]
    if "hccl" in line.lower():
        found += [m.group(1) for m in _TRACE.finditer(line)]
        found += [str(int(n, 0)) for m in _RET.finditer(line) for n in m.groups() if n and int(n, 0) in _RANGE]
    found += [_BY_NAME[m.group(0).upper()] for m in _NAME.finditer(line) if m.group(0).upper() in _BY_NAME]
    return list(dict.fromkeys(str(int(c)) for c in found))


HCCL_RESULTS = CodeTable(
    "hccl_result", SOURCE, VERSION,
    {str(code): Code(str(code), name, meaning, cat, fix, checks, root)
     for code, name, meaning, cat, fix, checks, root in _ROWS if code},
    find)
