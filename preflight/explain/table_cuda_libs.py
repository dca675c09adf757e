"""The status codes of NVIDIA's math libraries as torch, TensorFlow and the libraries themselves print them:
``cublasStatus_t`` (``CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)```) and
``cudnnStatus_t`` (``cuDNN error: CUDNN_STATUS_BAD_PARAM``), both whole enums by name, cuDNN 8's and cuDNN 9's
(9 splits each class into sub-codes: ``CUDNN_STATUS_BAD_PARAM_NULL_POINTER``, ``CUDNN_STATUS_NOT_SUPPORTED_SHAPE``,
``CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED``...; a sub-code is read by its class unless listed).

What a status says is claimed: an allocation that failed is ``oom``; a parameter the library rejects is the job's
call (``app-fault``); a library of another version, or a GPU without the feature, is ``version-mismatch``. Execution
failures, internal errors, "not initialized" and "not supported" name no cause by themselves (a kernel that failed
earlier, a driver or version problem, or memory): they claim nothing and leave the lines around them to speak.

>>> [(d.code.code, d.code.category) for d in TABLE.decode(
...     "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")]
[('CUBLAS_STATUS_ALLOC_FAILED', 'oom')]
>>> [d.code.category for d in TABLE.decode("cuDNN error: CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH")]
['app-fault']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

SOURCE = "https://docs.nvidia.com/cuda/cublas/index.html#cublasstatus-t"
CUDNN_SOURCE = "https://docs.nvidia.com/deeplearning/cudnn/latest/api/cudnn-graph-library.html#cudnnstatus-t"
VERSION = "cuBLAS 12.x cublasStatus_t; cuDNN 8.9 and 9.x cudnnStatus_t"

_OOM_FIX = ("The library could not allocate GPU memory (its handle or workspace): the device is full - a smaller "
            "batch, fewer processes per GPU, or another process holding it (`nvidia-smi`).")
_APP_FIX = ("The library rejected the job's call (a shape, stride, dtype, pointer or stream it does not accept): "
            "rerun with CUDA_LAUNCH_BLOCKING=1 to find the call; fix the inputs in the model code.")
_VERSION_FIX = ("Install matching versions of torch, CUDA, cuBLAS / cuDNN and the driver (torch's wheels bring their "
                "own; a system copy on LD_LIBRARY_PATH can shadow it), and use a GPU the build supports.")
_GENERIC_FIX = ("The status names no cause by itself: the first CUDA error before it (an illegal access, a "
                "device-side assert), the memory in use, or the library and driver versions say why.")

# (name, the vendor's meaning, category, root_cause)
_ROWS: tuple[tuple[str, str, str, bool], ...] = (
    ("CUBLAS_STATUS_NOT_INITIALIZED", "the cuBLAS library was not initialized (no cublasCreate, a CUDA runtime "
     "error or the hardware setup)", "unknown", False),
    ("CUBLAS_STATUS_ALLOC_FAILED", "resource allocation failed inside cuBLAS, usually a cudaMalloc() failure",
     "oom", True),
    ("CUBLAS_STATUS_INVALID_VALUE", "an unsupported value or parameter was passed to the function", "app-fault",
     True),
    ("CUBLAS_STATUS_ARCH_MISMATCH", "the function requires a feature absent from the device architecture",
     "version-mismatch", True),
    ("CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed", "unknown", False),
    ("CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute (often a kernel launch failure)",
     "unknown", False),
    ("CUBLAS_STATUS_INTERNAL_ERROR", "an internal cuBLAS operation failed", "unknown", False),
    ("CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported", "unknown", False),
    ("CUBLAS_STATUS_LICENSE_ERROR", "the functionality requested requires some license", "unknown", False),
    ("CUDNN_STATUS_NOT_INITIALIZED", "the cuDNN library was not initialized properly", "unknown", False),
    ("CUDNN_STATUS_ALLOC_FAILED", "resource allocation failed inside cuDNN", "oom", True),
    ("CUDNN_STATUS_BAD_PARAM", "an incorrect value or parameter was passed to the function", "app-fault", True),
    ("CUDNN_STATUS_INVALID_VALUE", "an invalid value was passed", "app-fault", True),
    ("CUDNN_STATUS_ARCH_MISMATCH", "the function requires a feature absent from the current GPU",
     "version-mismatch", True),
    ("CUDNN_STATUS_MAPPING_ERROR", "an access to GPU memory space failed", "unknown", False),
    ("CUDNN_STATUS_EXECUTION_FAILED", "the GPU program failed to execute", "unknown", False),
    ("CUDNN_STATUS_INTERNAL_ERROR", "an internal cuDNN operation failed", "unknown", False),
    ("CUDNN_STATUS_NOT_SUPPORTED", "the functionality requested is not presently supported by cuDNN", "unknown",
     False),
    ("CUDNN_STATUS_LICENSE_ERROR", "the functionality requested requires some license", "unknown", False),
    ("CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", "a runtime library required by cuDNN cannot be found "
     "(NVRTC, a CUDA library)", "version-mismatch", True),
    ("CUDNN_STATUS_RUNTIME_IN_PROGRESS", "some tasks in the user stream are not completed", "unknown", False),
    ("CUDNN_STATUS_RUNTIME_FP_OVERFLOW", "numerical overflow occurred during the GPU kernel execution",
     "app-fault", True),
    ("CUDNN_STATUS_VERSION_MISMATCH", "the cuDNN library and the code calling it are of different versions",
     "version-mismatch", True),
    # cuDNN 9
    ("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "the cuDNN sub-libraries are of different versions",
     "version-mismatch", True),
    ("CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH", "a serialized plan of another cuDNN version",
     "version-mismatch", True),
    ("CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "a cuDNN sub-library could not be loaded", "version-mismatch",
     True),
    ("CUDNN_STATUS_DEPRECATED", "a deprecated API was called", "unknown", False),
    ("CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", "a host allocation inside cuDNN failed", "oom", True),
    ("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "a device allocation inside cuDNN failed", "oom",
     True),
    ("CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER", "the CUDA driver reported an error while cuDNN executed",
     "unknown", False),
)

_FIXES = {"oom": _OOM_FIX, "app-fault": _APP_FIX, "version-mismatch": _VERSION_FIX, "unknown": _GENERIC_FIX}
ENTRIES: dict[str, Code] = {
    name: Code(name, name, meaning, category, _FIXES[category],
               ("gpu.devices.processes",) if category == "oom" else (), root)
    for name, meaning, category, root in _ROWS}
# cuDNN 9's sub-codes read by their class: the longest listed prefix
_CLASSES = sorted((name for name in ENTRIES if name.startswith("CUDNN_STATUS_")), key=len, reverse=True)
_FIND = re.compile(r"\b(CUBLAS_STATUS_[A-Z_]+|CUDNN_STATUS_[A-Z0-9_]+)\b")


def find(line: str) -> list[str]:
    """The cuBLAS / cuDNN statuses of a line, each as its table entry (a cuDNN 9 sub-code as its class)."""
    out: list[str] = []
    for m in _FIND.finditer(line):
        name = m[1].rstrip("_")
        if name not in ENTRIES:
            name = next((c for c in _CLASSES if name.startswith(c + "_")), name)
        if name in ENTRIES and name not in out:
            out.append(name)
    return out


TABLE = CodeTable("cuda_libs", SOURCE + " ; " + CUDNN_SOURCE, VERSION, ENTRIES, find)
