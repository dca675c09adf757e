"""Ascend Transformer Boost (ATB, the operator library MindIE, vllm-ascend's and torch_npu's fused kernels run on)
status codes, ``atb::ErrorType``, as a code table: decoded after the ATB operation's own ``... fail, error code: N``
lines (``infer shape fail``, ``setup fail``, ``setup check fail``, ``execute check fail``, ``PreLaunch`` / ``Launch``
``fail``, a graph node's ``SetupNodeRunners`` / ``fill tiling buffer`` failures) or by the enum's name
(``atb::ERROR_INVALID_TENSOR_DIM``), even when no log sample of a code exists.

Source: hicann/ascend-transformer-boost ``include/atb/types.h`` (``enum ErrorType``, the same 30 entries since the
repository's first version of the header); the log templates are ``src/atb/operation/operation_base.cpp`` and
``src/atb/runner/graph_runner.cpp`` at the same commit.

Category by meaning: an operation's parameter, tensors (count, dtype, format, dimensions, size, address), graph,
stream, workspace or context that the operation refuses is the job's own call (``app-fault``); device or host
memory that ran out is ``oom``; a failed runtime / CANN / HCCL call, an internal error, an empty communicator and a
failed host copy only report another failure and claim nothing.

>>> [(d.code.name, d.code.category) for d in TABLE.decode(
...     "[error] [1256320] [operation_base.cpp:353] Qwen_layer_0_graph infer shape fail, error code: 8")]
[('ERROR_INVALID_TENSOR_DIM', 'app-fault')]
>>> [(d.code.name, d.code.category) for d in TABLE.decode("SetupNodeRunners fail, error code:26")]
[('ERROR_OUT_OF_DEVICE_MEMORY', 'oom')]
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

_REPO = "https://github.com/hicann/ascend-transformer-boost/blob/ddcc8b6225b8b7d4703c69c319244bdea0f0c9a1/"
SOURCE = _REPO + "include/atb/types.h"
VERSION = "hicann/ascend-transformer-boost ddcc8b6 (2026-07-22); enum ErrorType unchanged since 5051d20 (2025-04-24)"

# (number, name, the header's comment in English) for every ErrorType entry, in the header's order
ROWS: tuple[tuple[int, str, str], ...] = (
    (1, "ERROR_INVALID_PARAM", "invalid parameter"),
    (2, "ERROR_INVALID_GRAPH", "invalid computation graph"),
    (3, "ERROR_INTERNAL_ERROR", "internal error"),
    (4, "ERROR_RT_FAIL", "a runtime API call failed"),
    (5, "ERROR_INVALID_IN_TENSOR_NUM", "the operation's input tensor count differs from its definition"),
    (6, "ERROR_INVALID_TENSOR_DTYPE", "wrong tensor data type"),
    (7, "ERROR_INVALID_TENSOR_FORMAT", "wrong tensor data format"),
    (8, "ERROR_INVALID_TENSOR_DIM", "wrong tensor dimensions"),
    (9, "ERROR_INVALID_TENSOR_SIZE", "wrong tensor size"),
    (10, "ERROR_OPERATION_NULL_RUNNER", "operation internal error (no runner)"),
    (11, "ERROR_GRAPH_INFERSHAPE_FUNC_FAIL", "the graph's infer-shape function failed"),
    (12, "ERROR_CANN_ERROR", "a CANN API call failed"),
    (13, "ERROR_INVALID_TENSOR_INI_MATCH", "the tensors fail the operation's ini configuration check"),
    (14, "ERROR_INVALID_TENSOR_ADDR", "wrong tensor address"),
    (15, "ERROR_INVALID_TENSOR_NUM", "wrong tensor count"),
    (16, "ERROR_INVALID_TENSOR_DIM_NUM", "wrong number of tensor dimensions"),
    (17, "ERROR_INVALID_SINGLE_OPERATION_PARAM", "invalid single-operation parameter"),
    (18, "ERROR_GRAPH_NODE_RESHAPE_FUNC_FAIL", "a graph node's reshape function is wrong"),
    (19, "ERROR_INVALID_GRAPH_NODE_CHUNK", "invalid graph node chunk parameter"),
    (20, "ERROR_INVALID_CONTEXT_ADDR", "wrong context address"),
    (21, "ERROR_INVALID_STREAM", "wrong stream"),
    (22, "ERROR_INVALID_WORKSPACE_SIZE", "wrong workspace size"),
    (23, "ERROR_INVALID_WORKSPACE_ADDR", "wrong workspace address"),
    (24, "ERROR_INVALID_OPERATION_ADDR", "wrong operation address"),
    (25, "ERROR_HCCL_FAIL", "an HCCL API call failed"),
    (26, "ERROR_OUT_OF_DEVICE_MEMORY", "device memory is not enough"),
    (27, "ERROR_OUT_OF_HOST_MEMORY", "host memory is not enough"),
    (28, "ERROR_COMM_EMPTY", "the communicator pointer is empty"),
    (29, "ERROR_COPY_HOST_MEMORY_FAIL", "a host memory copy failed"),
)
_REPORTS_ONLY = {"ERROR_INTERNAL_ERROR", "ERROR_RT_FAIL", "ERROR_OPERATION_NULL_RUNNER", "ERROR_CANN_ERROR",
                 "ERROR_HCCL_FAIL", "ERROR_COMM_EMPTY", "ERROR_COPY_HOST_MEMORY_FAIL"}
_FIX = {
    "app-fault": "An ATB operation refused what the job passed it (the lines before name the operation and the "
                 "tensor or parameter): use shapes, dtypes and parameters the operation supports (its documentation's "
                 "constraints), or report it with them.",
    "oom": "The NPU (or the host) ran out of memory for the operation: lower the batch size, sequence length or the "
           "memory the server reserves, and check `npu-smi info` for other processes on the device.",
    "unknown": "Only reports that a call under the operation failed: read the lines around it (the plog) for the "
               "cause.",
}


def _code(number: int, name: str, meaning: str) -> Code:
    category = ("oom" if name.startswith("ERROR_OUT_OF_") else "unknown" if name in _REPORTS_ONLY else "app-fault")
    return Code(str(number), name, meaning, category, _FIX[category],
                ("npu.processes",) if category == "oom" else (), category != "unknown")


ENTRIES = {str(n): _code(n, name, meaning) for n, name, meaning in ROWS}
_NAMES = {code.name: key for key, code in ENTRIES.items()}
# The operation's and the graph runner's templates (operation_base.cpp, graph_runner.cpp): "<prefix> infer shape
# fail, error code: 8", "node[3] setup fail, PreparseNodeVariantPack fail, error code:9", "invalid param, setup check
# fail, error code: 1", "Launch fail, error code: 4"
_STATUS = re.compile(r"\b(?:infer shape(?: check)?|setup(?: check)?|execute(?: check)?|PreLaunch|Launch|"
                     r"SetupNodeRunners|PreparseNodeVariantPack|InitTensorFromRunnerVariantPack|setup nodes|"
                     r"fill tiling buffer) fail, error code: ?(\d+)\b", re.IGNORECASE)
# The names only with ATB's namespace, or the ones no other library uses (ERROR_INVALID_PARAM is everybody's)
_NAME = re.compile(r"\batb::(ERROR_[A-Z_]+)\b|\b(ERROR_(?:INVALID_(?:IN_)?TENSOR_\w+|GRAPH_\w+_FUNC_FAIL|"
                   r"OPERATION_NULL_RUNNER|INVALID_GRAPH_NODE_CHUNK|INVALID_SINGLE_OPERATION_PARAM|"
                   r"OUT_OF_(?:DEVICE|HOST)_MEMORY))\b")


def find(line: str) -> list[str]:
    """The ATB status codes a line carries: after an ATB ``... fail, error code:`` template, or by name.

    >>> find("node[2] setup fail, PreparseNodeVariantPack fail, error code:9; atb::ERROR_INVALID_TENSOR_DTYPE")
    ['9', '6']
    >>> find("socket setup fail, error code: 111")  # no ATB status with that number
    []
    """
    found = [(m.start(), m[1]) for m in _STATUS.finditer(line)]
    found += [(m.start(), _NAMES.get(m[1] or m[2], "")) for m in _NAME.finditer(line)]
    return list(dict.fromkeys(code for _, code in sorted(found) if code in ENTRIES))


TABLE = CodeTable("atb", SOURCE, VERSION, ENTRIES, find)
