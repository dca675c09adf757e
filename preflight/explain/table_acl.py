"""ACL return codes (``aclError``), and the aclnn operator-API status codes, decoded from their numbers.

- ``ACL``: every ``ACL_ERROR_*`` of CANN's aclError list (1xxxxx the program or its environment, 2xxxxx
  resources or a device that does not fit, 3xxxxx business errors, 5xxxxx inside the software or the device;
  107xxx/207xxx/507xxx are the runtime's, 145xxx/245xxx/345xxx/545xxx the Graph Engine's):
  ``table_acl_codes``.
- ``ACLNN``: the ``aclnnStatus`` values of the aclnn operator APIs (161xxx, 361001, 561xxx) from
  hicann/opbase's return-code reference.

torch_npu and CANN print the number in many ways; all are found, in any case: ``error code is 507033``,
``error code:507035``, ``ret=507033``, ``ret = 507033``, ``runtime result = 507049``, ``err=507015``,
``failed: 507015``, ``rtRet=507000``, Paddle's ``the error code is : 500002`` / ``is:500002``, and the symbolic
``ACL_ERROR_RT_*`` / ``ACLNN_ERR_*`` names.

>>> [d.code.name for d in ACL.decode("NPU function error: aclrtSetDevice(device_index), error code is 507033")]
['ACL_ERROR_RT_DEV_SETUP_ERROR']
>>> [d.code.name for d in ACLNN.decode("call aclnnFusedInferAttentionScoreV3 failed, error code is 561002")]
['ACLNN_ERR_INNER_TILING_ERROR']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_acl_codes import ROWS
from preflight.explain.table_cann import CHECKS

_PLOG = "the plog (~/ascend/log/debug/plog) and the EExxxx/EZxxxx lines printed with it"
# kind -> (category, root_cause, default fix)
KINDS: dict[str, tuple[str, bool, str]] = {
    "args": ("app-fault", True, "The program called the NPU runtime with an invalid argument or out of order: "
             "a bug in the model code or framework, or a torch_npu/CANN version mismatch; " + _PLOG
             + " name the call."),
    "config": ("launch-args", True, "Fix the file, path or dump/profiling setting the job gives CANN (the log "
               "line names it), the same on every node."),
    "model": ("version-mismatch", True, "Rebuild or reconvert the model/operator for this CANN version and "
              "SoC."),
    "unsupported": ("version-mismatch", True, "This NPU, driver or CANN does not support the feature or "
                    "operator: use a supported one or a driver/CANN/torch_npu combination that has it."),
    "libpath": ("version-mismatch", True, "CANN's environment is incomplete: source its set_env.sh in the job's "
                "environment on every node and check the toolkit and kernels packages match."),
    "oom": ("oom", True, "Out of NPU memory: smaller batch or sequence, fewer cached graphs, stop other "
            "processes on the NPU (`npu-smi info`); PYTORCH_NPU_ALLOC_CONF=expandable_segments:True reduces "
            "fragmentation."),
    "device_id": ("device-mapping", True, "The process asked for an NPU it cannot see: make "
                  "ASCEND_RT_VISIBLE_DEVICES, the ranks per node and the container's devices agree with "
                  "`npu-smi info`."),
    "permission": ("device-mapping", True, "The user may not use the NPU: run in the driver's group "
                   "(HwHiAiUser) or as root, with /dev/davinci* and /dev/davinci_manager mounted."),
    "resource": ("app-fault", True, "The program ran out of runtime resources (streams, events, notifies, "
                 "models, queues, programs): release unused ones, fewer concurrent tasks or models; other "
                 "processes on the NPU share the limit."),
    # an internal error, or a report that another layer failed, names no cause: decoded and shown, claims
    # nothing (issue 38, round 2: it filed missing Python packages and an allocator setting as `driver`)
    "internal": ("unknown", False, "An internal error of CANN: read " + _PLOG + " for the first error; check "
                 "`npu-smi info` health and that driver, firmware and CANN versions match; report it with the "
                 "logs if it persists."),
    "layer": ("unknown", False, "ACL reports that another module (GE, runtime, driver, profiling) failed: the "
              "error printed before it names the cause."),
    "device": ("driver", True, "The NPU or its driver failed: check `npu-smi info` health and processes, that "
               "driver, firmware and CANN versions are a supported combination, and dmesg; reset or reboot the "
               "NPU if it is unhealthy."),
    "ecc": ("driver", True, "An uncorrectable memory error (HBM multi-bit ECC / UCE) on the NPU: check "
            "`npu-smi info -t health -i N`; isolate the device and have it checked if it repeats."),
    "remote": ("driver", False, "The peer device's memory failed or was accessed out of bounds: read the peer "
               "rank's errors first."),
    "link": ("hccl-link", True, "A link between devices failed (HCCS/RoCE port, collective unit): check the "
             "device links (`hccn_tool -i N -link -g`, `npu-smi info`) and the peer rank; retry."),
    "kernel": ("app-fault", True, "An operator (kernel) failed on the device: " + _PLOG + " name it; typical "
               "causes are out-of-range indices or inputs, unsupported shapes or dtypes, or an operator "
               "package that does not match CANN; ASCEND_LAUNCH_BLOCKING=1 points at the failing op."),
    "kernel_timeout": ("app-fault", True, "An operator ran past its timeout on the device (a hung kernel, or a "
                       "communication kernel waiting for a peer): find it in the plog; check the other ranks "
                       "for an earlier error."),
    "sync_timeout": ("hccl-timeout", False, "The host waited too long for device work (stream/event sync, "
                     "task): the device was stuck on an operator or on a collective waiting for a peer; find the "
                     "earlier error on this or another rank."),
    "abort": ("driver", False, "The device work was aborted (task/stream/model abort, redeployment) because of "
              "another fault: find that fault first."),
    "capture": ("app-fault", True, "ACL graph capture was misused (capture begin/end, events, streams, "
                "unsupported calls while capturing): fix the capture code, or run without graph capture (e.g. "
                "vLLM's enforce_eager) to confirm."),
}


def _code(row: tuple[int, str, str, str] | tuple[int, str, str, str, str]) -> Code:
    category, root, fix = KINDS[row[3]]
    return Code(str(row[0]), row[1], row[2], category, row[4] if len(row) == 5 else fix,
                CHECKS.get(category, ()), root)


_NUMBER = re.compile(
    r"(?<![A-Za-z])(?:error[\s_]*code|err[\s_]*code|errno|\berr\b|ret(?:urn)?(?:[\s_]*code)?|rt[\s_]*ret|"
    r"result|status|acl[\s_]*error|failed|\bcode)\s*(?:is\s*[:=]?|[:=,])?\s*\[?\s*([1-5]\d{5})(?!\d)", re.IGNORECASE)
_NAME = re.compile(r"\b(?:ACL_ERROR|ACLNN_ERR)_[A-Z0-9_]+\b", re.IGNORECASE)


def find_numbers(line: str, by_name: dict[str, str]) -> list[str]:
    """The 6-digit ACL-style numbers a line reports as an error, and the codes of the names it carries.

    >>> find_numbers("SetDevice failed.ret=507033; ERROR code: 507035, runtime result = 507049 pid=507000", {})
    ['507033', '507035', '507049']
    >>> find_numbers("(Calling Function = aclrtSynchronizeStream, Code = 507014, Message = ...)", {})  # MindX SDK
    ['507014']
    >>> find_numbers("aclrtLaunchKernelWithHostArgs failed: 507015 (acl_error_rt_aicore_exception)",
    ...              {"ACL_ERROR_RT_AICORE_EXCEPTION": "507015"})
    ['507015']
    """
    found = [m.group(1) for m in _NUMBER.finditer(line)]
    found += [by_name[m.group(0).upper()] for m in _NAME.finditer(line) if m.group(0).upper() in by_name]
    return list(dict.fromkeys(found))


_ACL_NAMES = {row[1]: str(row[0]) for row in ROWS} | {"ACL_ERROR_RT_DEVIDE_OOM": "207018"}  # the list's typo
ACL = CodeTable(
    "acl", "https://github.com/hicann/runtime/blob/5dcf3b70b499eddb6c9a908dbd027bde32abc8af/"
    "docs/zh/api_ref/25-01_aclError.md", "CANN 9.2.0-beta.1 (hicann/runtime tag v9.2.0-beta.1)",
    {str(row[0]): _code(row) for row in ROWS}, lambda line: find_numbers(line, _ACL_NAMES))

_INNER = "Internal error of the aclnn API: "
_ACLNN_ROWS: tuple[tuple[int, str, str, str, bool, str], ...] = (
    (161001, "ACLNN_ERR_PARAM_NULLPTR", "Parameter verification error: parameters contain an invalid nullptr.",
     "app-fault", True, "The operator was called with a missing tensor/argument: the EZ1001 line names it."),
    (161002, "ACLNN_ERR_PARAM_INVALID", "Parameter verification error, e.g. input data types that do not "
     "conform to the type inference rules.", "app-fault", True,
     "The operator rejected its inputs (dtype, shape, format): the EZ1001 line after it says which."),
    (361001, "ACLNN_ERR_RUNTIME_ERROR", "Internal API call to NPU runtime failed.", "unknown", False,
     "The runtime call under the operator failed: the 507xxx code and EExxxx lines with it name why."),
    (561000, "ACLNN_ERR_INNER", _INNER + "an internal error occurs in an API.", "app-fault", True,
     "Read the EZ9999 lines after it; check the CANN kernels package matches the toolkit."),
    (561001, "ACLNN_ERR_INNER_INFERSHAPE_ERROR", _INNER + "output shape inference failed.", "app-fault", True,
     "The operator cannot infer its output shape from these inputs: check the input shapes (EZ lines)."),
    (561002, "ACLNN_ERR_INNER_TILING_ERROR", _INNER + "NPU kernel tiling failed.", "app-fault", True,
     "The operator's tiling rejected these inputs/attributes (the EZ9999 line says why, e.g. an unaligned "
     "block size or batch): change them or use an operator package that supports them."),
    (561003, "ACLNN_ERR_INNER_FIND_KERNEL_ERROR", _INNER + "the NPU kernel was not found (the operator binary "
     "package may not be installed).", "version-mismatch", True,
     "Install the CANN kernels (operator binary) package matching the toolkit and this SoC; source set_env.sh."),
    (561101, "ACLNN_ERR_INNER_CREATE_EXECUTOR", _INNER + "creating aclOpExecutor failed (possibly an OS "
     "exception).", "app-fault", True, "Check host memory and limits; read the plog for the failure."),
    (561102, "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR", _INNER + "uniqueExecutor ReleaseTo was not called.",
     "app-fault", True, "An operator implementation bug: report it with the operator name."),
    (561103, "ACLNN_ERR_INNER_NULLPTR", _INNER + "a nullptr access in an aclnn API.", "app-fault", True,
     "Often an unsourced CANN environment (ASCEND_OPP_PATH missing): source set_env.sh; else read "
     "aclGetRecentErrMsg / the EZ9999 lines."),
    (561104, "ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE", _INNER + "the number of operator attributes is wrong.",
     "version-mismatch", True, "The operator package and the framework disagree: match torch_npu and CANN."),
    (561105, "ACLNN_ERR_INNER_KEY_CONFLICT", _INNER + "hash key conflict in operator kernel matching.",
     "app-fault", True, "Report it with the operator name and its input shapes/dtypes."),
    (561106, "ACLNN_ERR_INNER_INVALID_IMPL_MODE", _INNER + "the operator's implementation mode is invalid.",
     "app-fault", True, "Use an implementation mode (precision/performance) the operator supports."),
    (561107, "ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND", _INNER + "the environment variable ASCEND_OPP_PATH is not "
     "found.", "version-mismatch", True, "Source CANN's set_env.sh in the job's environment on every node."),
    (561108, "ACLNN_ERR_INNER_LOAD_JSON_FAILED", _INNER + "loading the operator information JSON from the kernel "
     "library failed.", "version-mismatch", True, "Reinstall the kernels package matching the CANN toolkit."),
    (561109, "ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND", _INNER + "a field of the operator information JSON is "
     "missing.", "version-mismatch", True, "Reinstall the kernels package matching the CANN toolkit."),
    (561110, "ACLNN_ERR_INNER_JSON_FORMAT_INVALID", _INNER + "invalid 'format' in the operator information "
     "JSON.", "version-mismatch", True, "Reinstall the kernels package matching the CANN toolkit."),
    (561111, "ACLNN_ERR_INNER_JSON_DTYPE_INVALID", _INNER + "invalid 'dtype' in the operator information JSON.",
     "version-mismatch", True, "Reinstall the kernels package matching the CANN toolkit."),
    (561112, "ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND", _INNER + "the operator's binary kernel library is not "
     "loaded.", "version-mismatch", True,
     "Install the CANN kernels package for this SoC and toolkit version; source set_env.sh."),
    (561113, "ACLNN_ERR_INNER_OP_FILE_INVALID", _INNER + "loading fields of the operator information JSON "
     "failed.", "version-mismatch", True, "Reinstall the kernels package matching the CANN toolkit."),
    (561114, "ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND", _INNER + "more operator attributes than the operator "
     "information JSON has.", "version-mismatch", True, "Match the operator package with torch_npu and CANN."),
    (561115, "ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH", _INNER + "fewer operator attributes than the operator "
     "information JSON has.", "version-mismatch", True, "Match the operator package with torch_npu and CANN."),
    (561116, "ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE", _INNER + "an operator has more than 32 inputs.",
     "app-fault", True, "Split the operator's inputs (at most 32)."),
    (561117, "ACLNN_ERR_INNER_INPUT_JSON_IS_NULL", _INNER + "the operator information JSON is incomplete.",
     "version-mismatch", True, "Reinstall the kernels package matching the CANN toolkit."),
    (561118, "ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID", _INNER + "parsing the workspace of the static binary "
     "JSON failed.", "version-mismatch", True, "Reinstall the static kernels package matching CANN."),
    (561119, "ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID", _INNER + "parsing the core usage of the static binary "
     "JSON failed.", "version-mismatch", True, "Reinstall the static kernels package matching CANN."),
)
_ACLNN_NAMES = {row[1]: str(row[0]) for row in _ACLNN_ROWS} | {"ACLNN_ERR_INNER_KEY_CONFILICT": "561105"}
ACLNN = CodeTable(
    "aclnn", "https://github.com/hicann/opbase/blob/aa3cd74b7f6d772acd64ff48292a7e65a9bc8142/"
    "docs/en/api/nnopbase/opdev/aclnn_return_code/aclnn_return_codes.md", "opbase aa3cd74 (CANN 9.x aclnn)",
    {str(c): Code(str(c), name, meaning, cat, fix, CHECKS.get(cat, ()), root)
     for c, name, meaning, cat, root, fix in _ACLNN_ROWS},
    lambda line: find_numbers(line, _ACLNN_NAMES))

TABLES: tuple[CodeTable, ...] = (ACL, ACLNN)
