"""CUDA's ``cudaError_t`` as a code table: every runtime error code, its name and the text ``cudaGetErrorString`` prints
for it, and the ways logs print one.

Source: the ``cudaError`` enum of CUDA 13.0's ``driver_types.h`` (NVIDIA's CUDA Runtime API reference, "Data types used
by CUDA Runtime", documents the same enum) and the text libcudart 13.0.96 (the nvidia-cuda-runtime 13.0.96 wheel)
returns from ``cudaGetErrorString`` for each code, recorded with ``bench/cuda_error_table.py``. The numbers are those
of CUDA 10.1 and later (CUDA 10.0 and before numbered them differently: ``cuda runtime error (59) : device-side assert
triggered``), so a line with a text is decoded by its text, a bare number by this numbering. Older runtimes' wordings
that differ are kept beside the current one (``all CUDA-capable devices are busy or unavailable`` for 46, as in
https://github.com/pytorch/pytorch/issues/2704). The driver API's ``CUresult`` names (``CUDA_ERROR_OUT_OF_MEMORY``,
from CUDA 13.0's ``cuda.h``) share the numbers and map onto the same entries; ``cuGetErrorString`` of libcuda 580.159
(recorded on an H200, ``tests/fixtures/code_tables/``) prints the runtime's text for each, and the two codes the runtime
enum lacks (202, 916) have entries of their own. Logs print a code as:

- torch's c10 check: ``RuntimeError: CUDA error: an illegal memory access was encountered`` (and, from torch 2.6,
  ``Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/...``); THC before 1.0: ``cuda runtime error (2) :
  out of memory``, ``THCudaCheck FAIL file=... line=66 error=46 : all CUDA-capable devices are busy or unavailable``;
- NCCL: ``Cuda failure 'out of memory'`` (runtime calls), ``Cuda failure 999 'unknown error'`` (driver calls);
- the name: ``cudaErrorMemoryAllocation`` (CuPy, cuda-samples' ``code=2(cudaErrorMemoryAllocation)``),
  ``CUDA_ERROR_NO_DEVICE`` (JAX, TensorFlow, numba);
- a number next to CUDA: ``cudaError_t 700``, ``CUDA Error 802``, ``CUDA error code=700``; a ``CUresult`` by number
  (``CUresult error result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create``).

>>> [(d.code.code, d.code.name, d.code.category) for d in TABLE.decode("RuntimeError: CUDA error: device-side assert "
...                                                                  "triggered")]
[('710', 'cudaErrorAssert', 'app-fault')]
>>> TABLE.find("Failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected")
['100']
>>> TABLE.find("RuntimeError: Triton Error [CUDA]: device kernel image is invalid")
['200']
>>> TABLE.find("cuda runtime error (46) : all CUDA-capable devices are busy or unavailable at THCStorage.cu:66")
['46']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable, check_values, compared_with

SOURCE = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
VERSION = "CUDA 13.0 (driver_types.h; cudaGetErrorString of libcudart 13.0.96)"

# (code, name after "cudaError" (cudaSuccess whole), cudaGetErrorString's text), the enum's order
_ROWS: tuple[tuple[int, str, str], ...] = (
    (0, "cudaSuccess", "no error"),
    (1, "InvalidValue", "invalid argument"),
    (2, "MemoryAllocation", "out of memory"),
    (3, "InitializationError", "initialization error"),
    (4, "CudartUnloading", "driver shutting down"),
    (5, "ProfilerDisabled", "profiler disabled while using external profiling tool"),
    (6, "ProfilerNotInitialized", "profiler not initialized: call cudaProfilerInitialize()"),
    (7, "ProfilerAlreadyStarted", "profiler already started"),
    (8, "ProfilerAlreadyStopped", "profiler already stopped"),
    (9, "InvalidConfiguration", "invalid configuration argument"),
    (12, "InvalidPitchValue", "invalid pitch argument"),
    (13, "InvalidSymbol", "invalid device symbol"),
    (16, "InvalidHostPointer", "invalid host pointer"),
    (17, "InvalidDevicePointer", "invalid device pointer"),
    (18, "InvalidTexture", "invalid texture reference"),
    (19, "InvalidTextureBinding", "texture is not bound to a pointer"),
    (20, "InvalidChannelDescriptor", "invalid channel descriptor"),
    (21, "InvalidMemcpyDirection", "invalid copy direction for memcpy"),
    (22, "AddressOfConstant", "invalid address of constant"),
    (23, "TextureFetchFailed", "fetch from texture failed"),
    (24, "TextureNotBound", "cannot fetch from a texture that is not bound"),
    (25, "SynchronizationError", "incorrect use of __syncthreads()"),
    (26, "InvalidFilterSetting", "linear filtering not supported for non-float type"),
    (27, "InvalidNormSetting", "read as normalized float not supported for data type"),
    (28, "MixedDeviceExecution", "device emulation mode and device execution mode cannot be mixed"),
    (31, "NotYetImplemented", "feature not yet implemented"),
    (32, "MemoryValueTooLarge", "memory size or pointer value too large to fit in 32 bit"),
    (34, "StubLibrary", "CUDA driver is a stub library"),
    (35, "InsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version"),
    (36, "CallRequiresNewerDriver", "API call is not supported in the installed CUDA driver"),
    (37, "InvalidSurface", "invalid surface reference"),
    (43, "DuplicateVariableName", "duplicate global variable looked up by string name"),
    (44, "DuplicateTextureName", "duplicate texture looked up by string name"),
    (45, "DuplicateSurfaceName", "duplicate surface looked up by string name"),
    (46, "DevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable"),
    (49, "IncompatibleDriverContext", "incompatible driver context"),
    (52, "MissingConfiguration", "__global__ function call is not configured"),
    (53, "PriorLaunchFailure", "unspecified launch failure in prior launch"),
    (65, "LaunchMaxDepthExceeded", "launch would exceed maximum depth of nested launches"),
    (66, "LaunchFileScopedTex", "launch failed because kernel uses unsupported, file-scoped textures (texture objects "
                                "are supported)"),
    (67, "LaunchFileScopedSurf", "launch failed because kernel uses unsupported, file-scoped surfaces (surface objects "
                                 "are supported)"),
    (68, "SyncDepthExceeded", "cudaDeviceSynchronize failed because caller's grid depth exceeds "
                              "cudaLimitDevRuntimeSyncDepth"),
    (69, "LaunchPendingCountExceeded", "launch failed because launch would exceed "
                                       "cudaLimitDevRuntimePendingLaunchCount"),
    (98, "InvalidDeviceFunction", "invalid device function"),
    (100, "NoDevice", "no CUDA-capable device is detected"),
    (101, "InvalidDevice", "invalid device ordinal"),
    (102, "DeviceNotLicensed", "device doesn't have valid Grid license"),
    (103, "SoftwareValidityNotEstablished", "integrity checks failed"),
    (127, "StartupFailure", "startup failure in cuda runtime"),
    (200, "InvalidKernelImage", "device kernel image is invalid"),
    (201, "DeviceUninitialized", "invalid device context"),
    (205, "MapBufferObjectFailed", "mapping of buffer object failed"),
    (206, "UnmapBufferObjectFailed", "unmapping of buffer object failed"),
    (207, "ArrayIsMapped", "array is mapped"),
    (208, "AlreadyMapped", "resource already mapped"),
    (209, "NoKernelImageForDevice", "no kernel image is available for execution on the device"),
    (210, "AlreadyAcquired", "resource already acquired"),
    (211, "NotMapped", "resource not mapped"),
    (212, "NotMappedAsArray", "resource not mapped as array"),
    (213, "NotMappedAsPointer", "resource not mapped as pointer"),
    (214, "ECCUncorrectable", "uncorrectable ECC error encountered"),
    (215, "UnsupportedLimit", "limit is not supported on this architecture"),
    (216, "DeviceAlreadyInUse", "exclusive-thread device already in use by a different thread"),
    (217, "PeerAccessUnsupported", "peer access is not supported between these two devices"),
    (218, "InvalidPtx", "a PTX JIT compilation failed"),
    (219, "InvalidGraphicsContext", "invalid OpenGL or DirectX context"),
    (220, "NvlinkUncorrectable", "uncorrectable NVLink error detected during the execution"),
    (221, "JitCompilerNotFound", "PTX JIT compiler library not found"),
    (222, "UnsupportedPtxVersion", "the provided PTX was compiled with an unsupported toolchain."),
    (223, "JitCompilationDisabled", "PTX JIT compilation was disabled"),
    (224, "UnsupportedExecAffinity", "the provided execution affinity is not supported"),
    (225, "UnsupportedDevSideSync", "the provided PTX contains unsupported call to cudaDeviceSynchronize"),
    (226, "Contained", "Invalid access of peer GPU memory over nvlink or a hardware error"),
    (300, "InvalidSource", "device kernel image is invalid"),
    (301, "FileNotFound", "file not found"),
    (302, "SharedObjectSymbolNotFound", "shared object symbol not found"),
    (303, "SharedObjectInitFailed", "shared object initialization failed"),
    (304, "OperatingSystem", "OS call failed or operation not supported on this OS"),
    (400, "InvalidResourceHandle", "invalid resource handle"),
    (401, "IllegalState", "the operation cannot be performed in the present state"),
    (402, "LossyQuery", "attempted introspection would be semantically lossy"),
    (500, "SymbolNotFound", "named symbol not found"),
    (600, "NotReady", "device not ready"),
    (700, "IllegalAddress", "an illegal memory access was encountered"),
    (701, "LaunchOutOfResources", "too many resources requested for launch"),
    (702, "LaunchTimeout", "the launch timed out and was terminated"),
    (703, "LaunchIncompatibleTexturing", "launch uses incompatible texturing mode"),
    (704, "PeerAccessAlreadyEnabled", "peer access is already enabled"),
    (705, "PeerAccessNotEnabled", "peer access has not been enabled"),
    (708, "SetOnActiveProcess", "cannot set while device is active in this process"),
    (709, "ContextIsDestroyed", "context is destroyed"),
    (710, "Assert", "device-side assert triggered"),
    (711, "TooManyPeers", "peer mapping resources exhausted"),
    (712, "HostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    (713, "HostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    (714, "HardwareStackError", "hardware stack error"),
    (715, "IllegalInstruction", "an illegal instruction was encountered"),
    (716, "MisalignedAddress", "misaligned address"),
    (717, "InvalidAddressSpace", "operation not supported on global/shared address space"),
    (718, "InvalidPc", "invalid program counter"),
    (719, "LaunchFailure", "unspecified launch failure"),
    (720, "CooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
    (721, "TensorMemoryLeak", "tensor memory not completely freed"),
    (800, "NotPermitted", "operation not permitted"),
    (801, "NotSupported", "operation not supported"),
    (802, "SystemNotReady", "system not yet initialized"),
    (803, "SystemDriverMismatch", "system has unsupported display driver / cuda driver combination"),
    (804, "CompatNotSupportedOnDevice", "forward compatibility was attempted on non supported HW"),
    (805, "MpsConnectionFailed", "MPS client failed to connect to the MPS control daemon or the MPS server"),
    (806, "MpsRpcFailure", "the remote procedural call between the MPS server and the MPS client failed"),
    (807, "MpsServerNotReady", "MPS server is not ready to accept new MPS client requests"),
    (808, "MpsMaxClientsReached", "the hardware resources required to create MPS client have been exhausted"),
    (809, "MpsMaxConnectionsReached", "the hardware resources required to support device connections have been "
                                      "exhausted"),
    (810, "MpsClientTerminated", "the MPS client has been terminated by the server"),
    (811, "CdpNotSupported", "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not "
                             "support it"),
    (812, "CdpVersionMismatch", "unsupported interaction between different versions of CUDA Dynamic Parallelism"),
    (900, "StreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    (901, "StreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    (902, "StreamCaptureMerge", "operation would result in a merge of separate capture sequences"),
    (903, "StreamCaptureUnmatched", "capture was not ended in the same stream as it began"),
    (904, "StreamCaptureUnjoined", "capturing stream has unjoined work"),
    (905, "StreamCaptureIsolation", "dependency created on uncaptured work in another stream"),
    (906, "StreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"),
    (907, "CapturedEvent", "operation not permitted on an event last recorded in a capturing stream"),
    (908, "StreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"),
    (909, "Timeout", "wait operation timed out"),
    (910, "GraphExecUpdateFailure", "the graph update was not performed because it included changes which violated "
                                    "constraints specific to instantiated graph update"),
    (911, "ExternalDevice", "an async error has occured in external entity outside of CUDA"),
    (912, "InvalidClusterSize", "a kernel launch error has occurred due to cluster misconfiguration"),
    (913, "FunctionNotLoaded", "the function handle is not loaded when calling an API that requires a loaded function"),
    (914, "InvalidResourceType", "one or more resources passed in are not valid resource types for the operation"),
    (915, "InvalidResourceConfiguration", "one or more resources are insufficient or non-applicable for the operation"),
    (999, "Unknown", "unknown error"),
)
# CUresult (cuda.h) names after "CUDA_ERROR_" (CUDA_SUCCESS whole) -> number
_DRIVER: dict[str, int] = {
    "CUDA_SUCCESS": 0, "INVALID_VALUE": 1, "OUT_OF_MEMORY": 2, "NOT_INITIALIZED": 3, "DEINITIALIZED": 4,
    "PROFILER_DISABLED": 5, "PROFILER_NOT_INITIALIZED": 6, "PROFILER_ALREADY_STARTED": 7,
    "PROFILER_ALREADY_STOPPED": 8, "STUB_LIBRARY": 34, "CALL_REQUIRES_NEWER_DRIVER": 36, "DEVICE_UNAVAILABLE": 46,
    "NO_DEVICE": 100, "INVALID_DEVICE": 101, "DEVICE_NOT_LICENSED": 102, "INVALID_IMAGE": 200,
    "INVALID_CONTEXT": 201, "CONTEXT_ALREADY_CURRENT": 202, "MAP_FAILED": 205, "UNMAP_FAILED": 206,
    "ARRAY_IS_MAPPED": 207, "ALREADY_MAPPED": 208, "NO_BINARY_FOR_GPU": 209, "ALREADY_ACQUIRED": 210,
    "NOT_MAPPED": 211, "NOT_MAPPED_AS_ARRAY": 212, "NOT_MAPPED_AS_POINTER": 213, "ECC_UNCORRECTABLE": 214,
    "UNSUPPORTED_LIMIT": 215, "CONTEXT_ALREADY_IN_USE": 216, "PEER_ACCESS_UNSUPPORTED": 217, "INVALID_PTX": 218,
    "INVALID_GRAPHICS_CONTEXT": 219, "NVLINK_UNCORRECTABLE": 220, "JIT_COMPILER_NOT_FOUND": 221,
    "UNSUPPORTED_PTX_VERSION": 222, "JIT_COMPILATION_DISABLED": 223, "UNSUPPORTED_EXEC_AFFINITY": 224,
    "UNSUPPORTED_DEVSIDE_SYNC": 225, "CONTAINED": 226, "INVALID_SOURCE": 300, "FILE_NOT_FOUND": 301,
    "SHARED_OBJECT_SYMBOL_NOT_FOUND": 302, "SHARED_OBJECT_INIT_FAILED": 303, "OPERATING_SYSTEM": 304,
    "INVALID_HANDLE": 400, "ILLEGAL_STATE": 401, "LOSSY_QUERY": 402, "NOT_FOUND": 500, "NOT_READY": 600,
    "ILLEGAL_ADDRESS": 700, "LAUNCH_OUT_OF_RESOURCES": 701, "LAUNCH_TIMEOUT": 702,
    "LAUNCH_INCOMPATIBLE_TEXTURING": 703, "PEER_ACCESS_ALREADY_ENABLED": 704, "PEER_ACCESS_NOT_ENABLED": 705,
    "PRIMARY_CONTEXT_ACTIVE": 708, "CONTEXT_IS_DESTROYED": 709, "ASSERT": 710, "TOO_MANY_PEERS": 711,
    "HOST_MEMORY_ALREADY_REGISTERED": 712, "HOST_MEMORY_NOT_REGISTERED": 713, "HARDWARE_STACK_ERROR": 714,
    "ILLEGAL_INSTRUCTION": 715, "MISALIGNED_ADDRESS": 716, "INVALID_ADDRESS_SPACE": 717, "INVALID_PC": 718,
    "LAUNCH_FAILED": 719, "COOPERATIVE_LAUNCH_TOO_LARGE": 720, "TENSOR_MEMORY_LEAK": 721, "NOT_PERMITTED": 800,
    "NOT_SUPPORTED": 801, "SYSTEM_NOT_READY": 802, "SYSTEM_DRIVER_MISMATCH": 803,
    "COMPAT_NOT_SUPPORTED_ON_DEVICE": 804, "MPS_CONNECTION_FAILED": 805, "MPS_RPC_FAILURE": 806,
    "MPS_SERVER_NOT_READY": 807, "MPS_MAX_CLIENTS_REACHED": 808, "MPS_MAX_CONNECTIONS_REACHED": 809,
    "MPS_CLIENT_TERMINATED": 810, "CDP_NOT_SUPPORTED": 811, "CDP_VERSION_MISMATCH": 812,
    "STREAM_CAPTURE_UNSUPPORTED": 900, "STREAM_CAPTURE_INVALIDATED": 901, "STREAM_CAPTURE_MERGE": 902,
    "STREAM_CAPTURE_UNMATCHED": 903, "STREAM_CAPTURE_UNJOINED": 904, "STREAM_CAPTURE_ISOLATION": 905,
    "STREAM_CAPTURE_IMPLICIT": 906, "CAPTURED_EVENT": 907, "STREAM_CAPTURE_WRONG_THREAD": 908, "TIMEOUT": 909,
    "GRAPH_EXEC_UPDATE_FAILURE": 910, "EXTERNAL_DEVICE": 911, "INVALID_CLUSTER_SIZE": 912,
    "FUNCTION_NOT_LOADED": 913, "INVALID_RESOURCE_TYPE": 914, "INVALID_RESOURCE_CONFIGURATION": 915,
    "KEY_ROTATION": 916, "UNKNOWN": 999,
}
_OLDER: dict[int, tuple[str, ...]] = {46: ("all CUDA-capable devices are busy or unavailable",)}

_CATEGORY: dict[int, str] = {
    0: "unknown", 2: "oom",
    46: "device-mapping", 100: "device-mapping", 101: "device-mapping", 216: "device-mapping",
    98: "version-mismatch", 200: "version-mismatch", 209: "version-mismatch", 300: "version-mismatch",
    804: "version-mismatch",
    35: "driver", 36: "driver", 222: "driver",  # the driver is older than the runtime / PTX: upgrade the driver
    1: "driver", 3: "driver", 4: "driver", 34: "driver", 102: "driver", 103: "driver", 127: "driver", 201: "driver",
    214: "driver", 220: "driver", 221: "driver", 223: "driver", 226: "driver", 304: "driver", 702: "driver",
    800: "driver", 801: "driver", 802: "driver", 803: "driver", 805: "driver", 806: "driver", 807: "driver",
    808: "driver", 809: "driver", 810: "driver", 916: "driver", 999: "driver",
    217: "p2p", 711: "p2p",
}  # every other code: app-fault (the job's own kernel or API use)
_ECHO = frozenset({0, 4, 53, 709, 901})  # they only report an earlier failure (or none)

_FIX: dict[str, str] = {
    "unknown": "Nothing failed.",
    "oom": "Lower the per-GPU batch size or sequence length, shard (ZeRO/FSDP) or checkpoint activations, and check "
           "`nvidia-smi` for other processes (or another rank) holding memory on that GPU.",
    "device-mapping": "Make the ranks per node (--nproc-per-node) and each rank's device index agree with the GPUs "
                      "CUDA_VISIBLE_DEVICES leaves visible on that node (`nvidia-smi -L`), and start the job or "
                      "container with its GPUs.",
    "version-mismatch": "The driver is older than the CUDA runtime the job was built with: upgrade the NVIDIA driver "
                        "or use a build for the CUDA version the driver supports (`nvidia-smi` shows it).",
    "driver": "The GPU or its driver is unusable on that node: read `nvidia-smi` and `dmesg | grep -i xid`, reset the "
              "GPU or reboot the node, and drain it if it comes back.",
    "p2p": "GPU peer-to-peer is not possible between these GPUs (PCIe topology, ACS/IOMMU, a VM): check `nvidia-smi "
           "topo -m`, disable ACS/IOMMU for peer traffic or set NCCL_P2P_DISABLE=1.",
    "app-fault": "The job's own GPU code failed (a kernel bug, an index out of range, a CUDA call misused): rerun "
                 "with CUDA_LAUNCH_BLOCKING=1 to see the failing call. If it happens on one node only, read `dmesg` "
                 "there for an Xid (a GPU fault, not the code).",
}
_OLD_DRIVER = ("The NVIDIA driver on that node is older than the CUDA runtime (or the PTX) the job was built with: "
               "upgrade the driver to one that supports that CUDA version (`nvidia-smi` shows the highest CUDA the "
               "driver supports), or install a build of the framework for a CUDA version the driver supports.")
_FIXES: dict[int, str] = {
    35: _OLD_DRIVER, 36: _OLD_DRIVER, 222: _OLD_DRIVER,
    1: "A CUDA call got an argument the driver refuses. Inside NCCL (`Cuda failure 'invalid argument'`) that is "
       "usually a driver too old for the memory calls NCCL makes, or ranks in containers that do not share IPC; in the "
       "job's own code a bad launch or pointer: check the driver version, rerun with CUDA_LAUNCH_BLOCKING=1.",
    46: "Another process holds the GPU (compute mode EXCLUSIVE_PROCESS, or two ranks on one GPU), or the GPU is "
        "unusable (after an Xid 79): check `nvidia-smi` for its compute mode and processes.",
    100: "The process sees no GPU: CUDA_VISIBLE_DEVICES is empty or names GPUs the node lacks, the job or container "
         "was started without GPUs, or the driver is not loaded (`nvidia-smi`).",
    98: "The binary has no code for this GPU's architecture: install a build (torch, the extension) that covers its "
        "compute capability, or rebuild with TORCH_CUDA_ARCH_LIST including it.",
    209: "The binary has no kernel for this GPU's architecture: install a build (torch, the extension) that covers "
         "its compute capability, or rebuild with TORCH_CUDA_ARCH_LIST including it.",
    804: "CUDA forward-compatibility libraries (cuda-compat) were loaded on a GPU that does not support them: remove "
         "them from LD_LIBRARY_PATH, or upgrade the driver to one that supports the job's CUDA.",
    3: "CUDA could not start: the driver is not loaded or in a bad state (after an Xid), or the process forked after "
       "CUDA was initialised: check `nvidia-smi` and `dmesg`; use the spawn start method for worker processes.",
    34: "A stub libcuda was loaded instead of the driver's: the container did not get the host's driver libraries "
        "(NVIDIA container toolkit) or LD_LIBRARY_PATH points at the toolkit's stubs.",
    214: "The GPU reported an uncorrectable ECC memory error: a hardware fault. Drain the node, read `nvidia-smi -q -d "
         "ECC,PAGE_RETIREMENT` and `dmesg | grep Xid`, reset the GPU, replace it if the errors come back.",
    220: "An uncorrectable NVLink error: read `nvidia-smi nvlink -e` and `dmesg | grep Xid`, reset the GPU; drain the "
         "node if it recurs.",
    226: "A contained hardware error or a bad access to a peer GPU's memory over NVLink: read `dmesg | grep Xid`, "
         "reset the GPU; drain the node if it recurs.",
    802: "On NVSwitch systems the nvidia-fabricmanager service is not running or does not match the driver: install "
         "fabricmanager of exactly the driver's version and start it.",
    803: "The driver's user-space library and kernel module differ (upgraded without a reboot): reboot the node or "
         "reload the nvidia modules.",
    999: "The driver is in a bad state (after an Xid, a driver upgrade without reboot, a broken container runtime): "
         "check `nvidia-smi` and `dmesg | grep -i xid` on the node; reset the GPU or reboot.",
}
for _mps in range(805, 811):
    _FIXES[_mps] = ("The CUDA MPS daemon is missing, full or died: check `nvidia-cuda-mps-control` on that node, or "
                    "run without MPS.")
_CHECKS: dict[str, tuple[str, ...]] = {
    "oom": ("gpu.devices.processes",), "device-mapping": ("gpu.devices.count", "nccl.visible_devices"),
    "version-mismatch": ("versions.gpu_driver", "versions.cuda"), "driver": ("gpu.devices.driver", "gpu.xid"),
    "p2p": ("allreduce",), "app-fault": ("gpu.xid",), "unknown": (),
}
_CHECKS_OF: dict[int, tuple[str, ...]] = {35: ("versions.gpu_driver", "versions.cuda"),
                                          36: ("versions.gpu_driver", "versions.cuda"),
                                          222: ("versions.gpu_driver", "versions.cuda"),
                                          214: ("gpu.devices.ecc", "gpu.xid"), 220: ("gpu.devices.nvlink", "gpu.xid"),
                                          802: ("gpu.fabricmanager", "versions.gpu_driver")}


def _code(code: int, name: str, text: str) -> Code:
    category = _CATEGORY.get(code, "app-fault")
    full = name if name.startswith(("cuda", "CUDA_")) else "cudaError" + name
    return Code(str(code), full, text, category, _FIXES.get(code, _FIX[category]),
                _CHECKS_OF.get(code, _CHECKS[category]), code not in _ECHO)


# round 30: the CUresult codes the runtime enum lacks, with cuGetErrorString's text (libcuda 580.159, recorded on an
# H200: tests/fixtures/code_tables/gpu_error_strings_h200.json; every other driver text is the runtime's own)
_DRIVER_ONLY: tuple[tuple[int, str, str], ...] = (
    (202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current"),
    (916, "CUDA_ERROR_KEY_ROTATION", "an error happened during the key rotation sequence"),
)
ENTRIES: dict[str, Code] = {str(code): _code(code, name, text) for code, name, text in (*_ROWS, *_DRIVER_ONLY)}
_BY_NAME = {entry.name.lower(): key for key, entry in ENTRIES.items()}
_BY_NAME.update({("CUDA_ERROR_" + n if n != "CUDA_SUCCESS" else n).lower(): str(v) for n, v in _DRIVER.items()
                 if str(v) in ENTRIES})
_TEXTS = sorted([(t.lower(), str(c)) for c, _, t in (*_ROWS, *_DRIVER_ONLY) if c] +
                [(t.lower(), str(c)) for c, older in _OLDER.items() for t in older], key=lambda item: -len(item[0]))
# texts no other library prints: recognised without a CUDA marker before them, and without their leading "the" or
# closing full stop (round 39: UCX's FAQ quotes cudaErrorUnsupportedPtxVersion as "provided PTX was compiled with an
# unsupported toolchain")
_BARE_CODES = {"34", "35", "46", "98", "100", "209", "214", "217", "220", "222", "226", "700", "710", "715", "716",
               "719", "802", "803", "804"}
_BARE = [(t.removeprefix("the ").rstrip("."), c) for t, c in _TEXTS if c in _BARE_CODES]
_NAME = re.compile(r"\b(cuda(?:Error[A-Za-z]+|Success)|CUDA_(?:ERROR_[A-Z0-9_]+|SUCCESS))\b")
# "CUDA: " is MXNet's CUDA_CALL (``CUDA: invalid device ordinal``), "[CUDA]: " Triton's driver check (round 29:
# ``Triton Error [CUDA]: device kernel image is invalid``, cuGetErrorString's text); round 23: the CUDA samples' /
# nccl-tests' ``Cuda failure test.cu:20 'peer mapping resources exhausted'`` puts the file and line between
_MARKER = re.compile(r"(?:\bcuda(?: runtime)? error|\bcuda failure(?:\s+[\w./-]+:\d+)?|\bTHCudaCheck FAIL[^:]*"
                     r"|\bCUDA_ERROR_[A-Z_]+|\bcudaError[A-Za-z]*|\bcuda\]?(?=: ))\s*(?:\(?\d+\)?)?\s*[:'\"=,]*\s*",
                     re.IGNORECASE)
_NUMBER = re.compile(r"\bcudaError(?:_t)?\s*[=:(]?\s*(\d+)\b|\bCUDA error(?: code)?\s*[=:#]?\s*(\d+)\b"
                     r"|\bcuda\b[^\n]{0,80}?\berror code\s*[=:]?\s*(\d+)\b"
                     # a driver API result by number (torch_memory_saver's "CUresult error result=2 ... cu_mem_create")
                     r"|\bCUresult\b[^\n]{0,30}?\b(?:result|error|code|status)\s*[=:]\s*(\d+)\b", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The ``cudaError_t`` codes a line carries, in the order they appear (each once): by name, by text, else by a
    number next to CUDA."""
    line = " ".join(line.split())  # runs of blanks as one space
    found: list[tuple[int, str]] = []
    found += [(m.start(), _BY_NAME[m[1].lower()]) for m in _NAME.finditer(line) if m[1].lower() in _BY_NAME
              and not compared_with(line, m.start())]  # a check's ``e == cudaErrorX`` is no error it reports
    lower = line.lower()
    for m in _MARKER.finditer(line):
        rest = lower[m.end():]
        code = next((c for t, c in _TEXTS if rest.startswith(t)), None)
        if code is not None:
            found.append((m.end(), code))
    for text, code in _BARE:
        if text in lower:
            found.append((lower.index(text), code))
    if not found:
        found += [(m.start(), n) for m in _NUMBER.finditer(line) for n in m.groups() if n and n in ENTRIES]
    if "cudaSuccess" in line:
        found += [(at, n) for at, n in check_values(line) if n in ENTRIES]
    out: list[str] = []
    for _, code in sorted(found):
        if code not in out:
            out.append(code)
    if len(out) > 1:  # a check such as ``cudaSuccess == cudaStat (0 vs. 35)`` names success beside the failure
        out = [code for code in out if code != "0"]
    return out


TABLE = CodeTable("cuda_error", SOURCE, VERSION, ENTRIES, find)
