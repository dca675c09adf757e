"""The Ascend NPU driver's return codes as two code tables: ``drvError_t`` (``DRV_ERROR_*``), which the CANN runtime
logs after a failed driver call, and the DCMI interface's return codes (``DCMI_ERR_CODE_*``, -8001 to -8255), which
``npu-smi``, the device plugin and other DCMI users print. Both are decoded even when no log sample of a code exists.

Sources: hicann/driver ``pkg_inc/ascend_hal_error.h`` (every ``drvError_t`` entry; its comments are the meanings) and
the DCMI API reference's return-code table (``docs/en/Ascend_910B_DCMI_API/.../return-codes.md``, the same codes for
910_93 and 950). Logs print them as the runtime's ``Call driver api halMemAlloc failed, drvRetCode=6``, ``[drv api]
drvGetDevNum failed: drvRetCode=1!``, ``drv ret=0x57``, ``halMbufAlloc failed, drvRet=6``, and DCMI's ``dcmi model
initialized failed, because the device is used. ret is -8020``, ``ret = -8005``, or the code's name.

Category by meaning: no or an invalid device, a permission refused (a container without the device) is
``device-mapping``; out of memory is ``oom``; a resource another process or container holds is
``hccl-stale-process``; the device, its link or the driver failing (not ready, hung, reset, bus down, ioctl and
message failures, inner errors) is ``driver``; an argument the caller passed, a timeout, an unsupported feature or a
retry request only report another failure and claim nothing.

>>> [(d.code.name, d.code.category) for d in DRV.decode("Call driver api halMemAlloc failed, drvRetCode=6, drvDevId=0")]
[('DRV_ERROR_OUT_OF_MEMORY', 'oom')]
>>> [(d.code.name, d.code.category) for d in DCMI.decode("dcmi model initialized failed, because the device is used. "
...                                                        "ret is -8020")]
[('DCMI_ERR_CODE_RESOURCE_OCCUPIED', 'hccl-stale-process')]
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

_DRIVER = "https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/"
DRV_SOURCE = _DRIVER + "pkg_inc/ascend_hal_error.h"
DCMI_SOURCE = _DRIVER + "docs/en/Ascend_910B_DCMI_API/Ascend_910B_DCMI_API/return-codes.md"
VERSION = "hicann/driver ef377e9 (2026-07-21, CANN 9.x driver)"

# (number, name, the header's comment) for every drvError_t entry, in the header's order
DRV_ROWS: tuple[tuple[int, str, str], ...] = (
    (0, 'DRV_ERROR_NONE', 'success'),
    (1, 'DRV_ERROR_NO_DEVICE', 'no valid device'),
    (2, 'DRV_ERROR_INVALID_DEVICE', 'invalid device'),
    (3, 'DRV_ERROR_INVALID_VALUE', 'invalid value'),
    (4, 'DRV_ERROR_INVALID_HANDLE', 'invalid handle'),
    (5, 'DRV_ERROR_INVALID_MALLOC_TYPE', 'invalid malloc type'),
    (6, 'DRV_ERROR_OUT_OF_MEMORY', 'out of memory'),
    (7, 'DRV_ERROR_INNER_ERR', 'driver inside error'),
    (8, 'DRV_ERROR_PARA_ERROR', 'driver wrong parameter'),
    (9, 'DRV_ERROR_UNINIT', 'driver uninit'),
    (10, 'DRV_ERROR_REPEATED_INIT', 'driver repeated init'),
    (11, 'DRV_ERROR_NOT_EXIST', 'there is resource'),
    (12, 'DRV_ERROR_REPEATED_USERD', ''),
    (13, 'DRV_ERROR_BUSY', 'task already running'),
    (14, 'DRV_ERROR_NO_RESOURCES', 'driver short of resources'),
    (15, 'DRV_ERROR_OUT_OF_CMD_SLOT', ''),
    (16, 'DRV_ERROR_WAIT_TIMEOUT', 'driver wait timeout'),
    (17, 'DRV_ERROR_IOCRL_FAIL', 'driver ioctl fail'),
    (18, 'DRV_ERROR_SOCKET_CREATE', 'driver create socket error'),
    (19, 'DRV_ERROR_SOCKET_CONNECT', 'driver connect socket error'),
    (20, 'DRV_ERROR_SOCKET_BIND', 'driver bind socket error'),
    (21, 'DRV_ERROR_SOCKET_LISTEN', 'driver listen socket error'),
    (22, 'DRV_ERROR_SOCKET_ACCEPT', 'driver accept socket error'),
    (23, 'DRV_ERROR_CLIENT_BUSY', 'driver client busy error'),
    (24, 'DRV_ERROR_SOCKET_SET', 'driver socket set error'),
    (25, 'DRV_ERROR_SOCKET_CLOSE', 'driver socket close error'),
    (26, 'DRV_ERROR_RECV_MESG', 'driver recv message error'),
    (27, 'DRV_ERROR_SEND_MESG', 'driver send message error'),
    (28, 'DRV_ERROR_SERVER_BUSY', ''),
    (29, 'DRV_ERROR_CONFIG_READ_FAIL', ''),
    (30, 'DRV_ERROR_STATUS_FAIL', ''),
    (31, 'DRV_ERROR_SERVER_CREATE_FAIL', ''),
    (32, 'DRV_ERROR_WAIT_INTERRUPT', ''),
    (33, 'DRV_ERROR_BUS_DOWN', ''),
    (34, 'DRV_ERROR_DEVICE_NOT_READY', ''),
    (35, 'DRV_ERROR_REMOTE_NOT_LISTEN', ''),
    (36, 'DRV_ERROR_NON_BLOCK', ''),
    (37, 'DRV_ERROR_OVER_LIMIT', ''),
    (38, 'DRV_ERROR_FILE_OPS', ''),
    (39, 'DRV_ERROR_MBIND_FAIL', ''),
    (40, 'DRV_ERROR_MALLOC_FAIL', ''),
    (41, 'DRV_ERROR_REPEATED_SUBSCRIBED', ''),
    (42, 'DRV_ERROR_PROCESS_EXIT', ''),
    (43, 'DRV_ERROR_DEV_PROCESS_HANG', ''),
    (44, 'DRV_ERROR_REMOTE_NO_SESSION', ''),
    (45, 'DRV_ERROR_HOT_RESET_IN_PROGRESS', ''),
    (46, 'DRV_ERROR_OPER_NOT_PERMITTED', ''),
    (47, 'DRV_ERROR_NO_EVENT_RESOURCES', ''),
    (48, 'DRV_ERROR_NO_STREAM_RESOURCES', ''),
    (49, 'DRV_ERROR_NO_NOTIFY_RESOURCES', ''),
    (50, 'DRV_ERROR_NO_MODEL_RESOURCES', ''),
    (51, 'DRV_ERROR_TRY_AGAIN', ''),
    (52, 'DRV_ERROR_DST_PATH_ILLEGAL', 'send file dst path illegal'),
    (53, 'DRV_ERROR_OPEN_FAILED', 'send file open failed'),
    (54, 'DRV_ERROR_NO_FREE_SPACE', 'send file no free space'),
    (55, 'DRV_ERROR_LOCAL_ABNORMAL_FILE', 'send file local file abnormal'),
    (56, 'DRV_ERROR_DST_PERMISSION_DENIED', 'send file dst Permission denied'),
    (57, 'DRV_ERROR_DST_NO_SUCH_FILE', 'pull file no such file or directory'),
    (58, 'DRV_ERROR_MEMORY_OPT_FAIL', ''),
    (59, 'DRV_ERROR_RUNTIME_ON_OTHER_PLAT', ''),
    (60, 'DRV_ERROR_SQID_FULL', 'driver SQ   is full'),
    (61, 'DRV_ERROR_SERVER_HAS_BEEN_CREATED', ''),
    (62, 'DRV_ERROR_NO_PROCESS', ''),
    (63, 'DRV_ERROR_NO_SUBSCRIBE_THREAD', ''),
    (64, 'DRV_ERROR_NON_SCHED_GRP_MUL_THREAD', ''),
    (65, 'DRV_ERROR_NO_GROUP', ''),
    (66, 'DRV_ERROR_GROUP_EXIST', ''),
    (67, 'DRV_ERROR_THREAD_EXCEEDS_SPEC', ''),
    (68, 'DRV_ERROR_THREAD_NOT_RUNNIG', ''),
    (69, 'DRV_ERROR_PROCESS_NOT_MATCH', ''),
    (70, 'DRV_ERROR_EVENT_NOT_MATCH', ''),
    (71, 'DRV_ERROR_PROCESS_REPEAT_ADD', ''),
    (72, 'DRV_ERROR_GROUP_NON_SCHED', ''),
    (73, 'DRV_ERROR_NO_EVENT', ''),
    (74, 'DRV_ERROR_COPY_USER_FAIL', ''),
    (75, 'DRV_ERROR_QUEUE_EMPTY', ''),
    (76, 'DRV_ERROR_QUEUE_FULL', ''),
    (77, 'DRV_ERROR_RUN_IN_ILLEGAL_CPU', ''),
    (78, 'DRV_ERROR_SUBSCRIBE_THREAD_TIMEOUT', ''),
    (79, 'DRV_ERROR_BAD_ADDRESS', ''),
    (80, 'DRV_ERROR_DST_FILE_IS_BEING_WRITTEN', 'send file The dts file is being written'),
    (81, 'DRV_ERROR_EPOLL_CLOSE', 'epoll close'),
    (82, 'DRV_ERROR_CDQ_ABNORMAL', ''),
    (83, 'DRV_ERROR_CDQ_NOT_EXIST', ''),
    (84, 'DRV_ERROR_NO_CDQ_RESOURCES', ''),
    (85, 'DRV_ERROR_CDQ_QUIT', ''),
    (86, 'DRV_ERROR_PARTITION_NOT_RIGHT', ''),
    (87, 'DRV_ERROR_RESOURCE_OCCUPIED', ''),
    (88, 'DRV_ERROR_PERMISSION', ''),
    (89, 'DRV_ERROR_RESUME', ''),
    (90, 'DEV_ERROR_UNAUTHORIZED_ACCESS_DEVICE', ''),
    (91, 'DEV_ERROR_BIST_HW_ERR', ''),
    (92, 'DEV_ERROR_BIST_SW_ERR', ''),
    (93, 'DEV_ERROR_DUP_CONFIG', ''),
    (94, 'DRV_ERROR_POWER_OP_FAIL', ''),
    (95, 'DRV_ERROR_NET_UNREACH', 'net error or device failure'),
    (96, 'DRV_ERROR_TRANS_LINK_ABNORMAL', ''),
    (97, 'DRV_ERROR_TRANS_LINK_ACK_TIMEOUT_ERR', ''),
    (98, 'DRV_ERROR_CALL_NO_RETRY', 'Function call error, no need to retry'),
    (99, 'DRV_ERROR_CONNECT', ''),
    (65534, 'DRV_ERROR_NOT_SUPPORT', ''),
)

_DRV_CATEGORY: dict[str, tuple[str, ...]] = {
    "device-mapping": ("NO_DEVICE", "INVALID_DEVICE", "OPER_NOT_PERMITTED", "PERMISSION", "UNAUTHORIZED_ACCESS_DEVICE"),
    "oom": ("OUT_OF_MEMORY", "MALLOC_FAIL"),
    "hccl-stale-process": ("RESOURCE_OCCUPIED", "REPEATED_USERD"),
    # round 38: a driver call the installed driver does not support (LMCache-Ascend's "Unable to halHostRegister:
    # 65534" on a driver older than the 24.1 it needs) is the driver's release
    "driver": ("NOT_SUPPORT", "INNER_ERR", "UNINIT", "IOCRL_FAIL", "STATUS_FAIL", "BUS_DOWN", "DEVICE_NOT_READY",
               "DEV_PROCESS_HANG", "HOT_RESET_IN_PROGRESS", "BIST_HW_ERR", "BIST_SW_ERR", "POWER_OP_FAIL",
               "TRANS_LINK_ABNORMAL", "TRANS_LINK_ACK_TIMEOUT_ERR", "RECV_MESG", "SEND_MESG", "SOCKET_CONNECT",
               "REMOTE_NOT_LISTEN", "NET_UNREACH", "CONNECT", "CDQ_ABNORMAL", "MEMORY_OPT_FAIL", "COPY_USER_FAIL",
               "BAD_ADDRESS"),
}
_DCMI_ROWS: tuple[tuple[int, str, str, str], ...] = (
    (-8001, "INVALID_PARAMETER", "Incorrect input parameter.", "unknown"),
    (-8002, "OPER_NOT_PERMITTED", "Permission error.", "device-mapping"),
    (-8003, "MEM_OPERATE_FAIL", "Memory API operation failed.", "oom"),
    (-8004, "SECURE_FUN_FAIL", "Secure function execution failed.", "driver"),
    (-8005, "INNER_ERR", "Internal error.", "driver"),
    (-8006, "TIME_OUT", "Response timeout.", "driver"),
    (-8007, "INVALID_DEVICE_ID", "Invalid device ID.", "device-mapping"),
    (-8008, "DEVICE_NOT_EXIST", "Device not found.", "device-mapping"),
    (-8009, "IOCTL_FAIL", "ioctl return failed.", "driver"),
    (-8010, "SEND_MSG_FAIL", "Message sending failed.", "driver"),
    (-8011, "RECV_MSG_FAIL", "Message receiving failed.", "driver"),
    (-8012, "NOT_REDAY", "Not ready.", "driver"),
    (-8013, "NOT_SUPPORT_IN_CONTAINER", "This API is not supported in a container environment.", "unknown"),
    (-8015, "RESET_FAIL", "Reset failed.", "driver"),
    (-8016, "ABORT_OPERATE", "Reset canceled.", "driver"),
    (-8017, "IS_UPGRADING", "The upgrade is in progress.", "driver"),
    (-8020, "RESOURCE_OCCUPIED", "Device resources are occupied.", "hccl-stale-process"),
    (-8023, "CONFIG_INFO_NOT_EXIST", "The requested configuration information does not exist.", "unknown"),
    (-8255, "NOT_SUPPORT", "The device ID or feature is not supported.", "unknown"),
)
_FIX: dict[str, str] = {
    "device-mapping": "The process cannot reach that NPU: the device ID is not one of this node's (`npu-smi info -l`), "
                      "ASCEND_RT_VISIBLE_DEVICES names another, or the container was started without /dev/davinciN, "
                      "/dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc and the driver mounts (or as a user "
                      "outside HwHiAiUser).",
    "oom": "The NPU (or the host, for DCMI) ran out of memory: lower the batch size or the model's footprint and "
           "check `npu-smi info` for other processes holding the device.",
    "hccl-stale-process": "Another process or container holds the NPU: find it (`npu-smi info` lists the processes, "
                          "`lsof /dev/davinciN`), stop it or wait for it, then retry.",
    "driver": "The NPU or its driver is unhealthy on that node: read `npu-smi info` (Health), the device log "
              "(`msnpureport`, /var/log/npu/slog) and dmesg; reset the NPU (`npu-smi set -t reset`) or reboot, and "
              "drain the node if it stays unhealthy.",
    "unknown": "Only reports the failure of the call that passed it: read the lines around it for the cause.",
}
_CHECKS = {"device-mapping": ("npu.count", "npu.env"), "oom": ("npu.processes",),
           "hccl-stale-process": ("npu.processes",), "driver": ("npu.health", "versions.npu_driver"), "unknown": ()}


def _drv_code(number: int, name: str, meaning: str) -> Code:
    short = name.split("_ERROR_", 1)[1]
    category = next((c for c, names in _DRV_CATEGORY.items() if short in names), "unknown")
    return Code(str(number), name, meaning or short.lower().replace("_", " "), category, _FIX[category],
                _CHECKS[category], category != "unknown")


def _dcmi_code(number: int, name: str, meaning: str, category: str) -> Code:
    return Code(str(number), "DCMI_ERR_CODE_" + name, meaning, category, _FIX[category], _CHECKS[category],
                category != "unknown")


DRV_ENTRIES = {str(n): _drv_code(n, name, meaning) for n, name, meaning in DRV_ROWS if n}
DCMI_ENTRIES = {str(row[0]): _dcmi_code(*row) for row in _DCMI_ROWS}
_DRV_NAMES = {code.name: key for key, code in DRV_ENTRIES.items()}
_DCMI_NAMES = {code.name: key for key, code in DCMI_ENTRIES.items()}
# after drvRetCode= / drvRet= / drv ret=, or right after a HAL call's name ("Unable to halHostRegister: 65534")
_DRV_NUMBER = re.compile(r"\bdrv(?:RetCode|Ret| ret)\s*[=:\[]\s*(0x[0-9a-fA-F]+|\d+)|\bUnable to hal[A-Z]\w+: (\d+)\b",
                         re.IGNORECASE)
_DRV_NAME = re.compile(r"\b(D(?:RV|EV)_ERROR_[A-Z_]+)\b")
_DCMI_NUMBER = re.compile(r"\b(?:ret(?:urn)?(?: code)?(?: is)?|err(?:or)?(?: ?code)?(?: is)?)\s*[=:\[(]?\s*(-8\d{3})\b",
                          re.IGNORECASE)
_DCMI_NAME = re.compile(r"\b(DCMI_ERR_CODE_[A-Z_]+)\b")


def find_drv(line: str) -> list[str]:
    """The driver return codes a line carries: after ``drvRetCode=`` / ``drvRet=`` / ``drv ret=``, or by name.

    >>> find_drv("[drv api] halGetSocVersion deviceId=0, drv ret=0x57; DRV_ERROR_NO_DEVICE; drvRetCode=0")
    ['87', '1']
    """
    found = [(m.start(), str(int(m[1] or m[2], 0))) for m in _DRV_NUMBER.finditer(line)]
    found += [(m.start(), _DRV_NAMES[m[1]]) for m in _DRV_NAME.finditer(line) if m[1] in _DRV_NAMES]
    return list(dict.fromkeys(code for _, code in sorted(found) if code in DRV_ENTRIES))


def find_dcmi(line: str) -> list[str]:
    """The DCMI return codes a line carries: a -8xxx after ``ret`` / ``error code``, or by name.

    >>> find_dcmi("dcmi_get_device_info failed, ret = -8005; DCMI_ERR_CODE_DEVICE_NOT_EXIST; port -8080")
    ['-8005', '-8008']
    """
    found = [(m.start(), m[1]) for m in _DCMI_NUMBER.finditer(line)]
    found += [(m.start(), _DCMI_NAMES[m[1]]) for m in _DCMI_NAME.finditer(line) if m[1] in _DCMI_NAMES]
    return list(dict.fromkeys(code for _, code in sorted(found) if code in DCMI_ENTRIES))


DRV = CodeTable("ascend_drv", DRV_SOURCE, VERSION, DRV_ENTRIES, find_drv)
DCMI = CodeTable("dcmi", DCMI_SOURCE, VERSION, DCMI_ENTRIES, find_dcmi)
TABLES: tuple[CodeTable, ...] = (DRV, DCMI)
