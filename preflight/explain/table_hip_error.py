"""HIP's ``hipError_t`` (AMD ROCm) as a code table: every runtime error code, its name and the text
``hipGetErrorString`` prints, and the ways ROCm logs print one.

Source: the ``hipError_t`` enum of HIP's ``hip_runtime_api.h`` (ROCm/HIP) for the numbers, ROCm/clr's
``hipamd/src/hip_error.cpp`` (``ihipGetErrorName`` / ``ihipGetErrorString``) for the names and texts. HIP numbers its
codes as CUDA 10.1+ does (``hipErrorNoBinaryForGpu`` 209 is ``cudaErrorNoKernelImageForDevice``), so a code takes the
category of its CUDA twin (``table_cuda_error``), but for the code objects the HIP runtime cannot load for this GPU
(``hipErrorInvalidKernelFile`` 218, ``hipErrorInvalidSource`` 300: a build without this gfx target, like 209) and the
HSA runtime's own 1052/1053; the fixes are ROCm's. Logs print a code as:

- torch on ROCm: ``RuntimeError: HIP error: invalid device function`` (the text; ``table_cuda_error`` reads the texts
  both runtimes share too);
- the name: ``hipErrorNoBinaryForGpu: Unable to find code object for all current devices!``, ``HIP_CHECK`` /
  rocm-smi's ``hipErrorOutOfMemory``;
- a number next to HIP: ``hipError_t 209``, ``HIP error 700``, ``HIP error code: 2``, and the runtime's own log line
  ``:0:/.../hip_platform.cpp:110 : 3010170007 us: Cannot retrieve Static function, error: 218``.

>>> [(d.code.code, d.code.category) for d in TABLE.decode("hipErrorNoBinaryForGpu: Unable to find code object for all "
...                                                       "current devices!")]
[('hipErrorNoBinaryForGpu', 'version-mismatch')]
>>> TABLE.find(":0:/src/hipamd/src/hip_platform.cpp:110 : 3010170007 us: Cannot retrieve Static function, error: 218")
['hipErrorInvalidKernelFile']
>>> TABLE.find("RuntimeError: HIP error: an illegal memory access was encountered")
['hipErrorIllegalAddress']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_cuda_error import ENTRIES as CUDA

SOURCE = "https://github.com/ROCm/clr/blob/bb3a2f04606077e81f163bf1118f5fd993ab9d72/hipamd/src/hip_error.cpp"
VERSION = ("ROCm/clr bb3a2f0 (hip_error.cpp); numbers of ROCm/HIP 00904d4 include/hip/hip_runtime_api.h (ROCm 5-6)")

# (number, name after "hipError" (hipSuccess whole), hipGetErrorString's text), the enum's order
ROWS: tuple[tuple[int, str, str], ...] = (
    (0, "hipSuccess", "no error"), (1, "InvalidValue", "invalid argument"), (2, "OutOfMemory", "out of memory"),
    (3, "NotInitialized", "initialization error"), (4, "Deinitialized", "driver shutting down"),
    (5, "ProfilerDisabled", "profiler disabled while using external profiling tool"),
    (6, "ProfilerNotInitialized", "profiler is not initialized"),
    (7, "ProfilerAlreadyStarted", "profiler already started"),
    (8, "ProfilerAlreadyStopped", "profiler already stopped"),
    (9, "InvalidConfiguration", "invalid configuration argument"), (12, "InvalidPitchValue", "invalid pitch argument"),
    (13, "InvalidSymbol", "invalid device symbol"), (17, "InvalidDevicePointer", "invalid device pointer"),
    (21, "InvalidMemcpyDirection", "invalid copy direction for memcpy"),
    (35, "InsufficientDriver", "driver version is insufficient for runtime version"),
    (52, "MissingConfiguration", "__global__ function call is not configured"),
    (53, "PriorLaunchFailure", "unspecified launch failure in prior launch"),
    (98, "InvalidDeviceFunction", "invalid device function"),
    (100, "NoDevice", "no ROCm-capable device is detected"), (101, "InvalidDevice", "invalid device ordinal"),
    (200, "InvalidImage", "device kernel image is invalid"), (201, "InvalidContext", "invalid device context"),
    (202, "ContextAlreadyCurrent", "context is already current context"),
    (205, "MapFailed", "mapping of buffer object failed"), (206, "UnmapFailed", "unmapping of buffer object failed"),
    (207, "ArrayIsMapped", "array is mapped"), (208, "AlreadyMapped", "resource already mapped"),
    (209, "NoBinaryForGpu", "no kernel image is available for execution on the device"),
    (210, "AlreadyAcquired", "resource already acquired"), (211, "NotMapped", "resource not mapped"),
    (212, "NotMappedAsArray", "resource not mapped as array"),
    (213, "NotMappedAsPointer", "resource not mapped as pointer"),
    (214, "ECCNotCorrectable", "uncorrectable ECC error encountered"),
    (215, "UnsupportedLimit", "limit is not supported on this architecture"),
    (216, "ContextAlreadyInUse", "exclusive-thread device already in use by a different thread"),
    (217, "PeerAccessUnsupported", "peer access is not supported between these two devices"),
    (218, "InvalidKernelFile", "invalid kernel file"),
    (219, "InvalidGraphicsContext", "invalid OpenGL or DirectX context"),
    (300, "InvalidSource", "device kernel image is invalid"), (301, "FileNotFound", "file not found"),
    (302, "SharedObjectSymbolNotFound", "shared object symbol not found"),
    (303, "SharedObjectInitFailed", "shared object initialization failed"),
    (304, "OperatingSystem", "OS call failed or operation not supported on this OS"),
    (400, "InvalidHandle", "invalid resource handle"),
    (401, "IllegalState", "the operation cannot be performed in the present state"),
    (500, "NotFound", "named symbol not found"), (600, "NotReady", "device not ready"),
    (700, "IllegalAddress", "an illegal memory access was encountered"),
    (701, "LaunchOutOfResources", "too many resources requested for launch"),
    (702, "LaunchTimeOut", "the launch timed out and was terminated"),
    (704, "PeerAccessAlreadyEnabled", "peer access is already enabled"),
    (705, "PeerAccessNotEnabled", "peer access has not been enabled"),
    (708, "SetOnActiveProcess", "cannot set while device is active in this process"),
    (709, "ContextIsDestroyed", "context is destroyed"), (710, "Assert", "device-side assert triggered"),
    (712, "HostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    (713, "HostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    (719, "LaunchFailure", "unspecified launch failure"),
    (720, "CooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
    (801, "NotSupported", "operation not supported"),
    (900, "StreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    (901, "StreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    (902, "StreamCaptureMerge", "operation would result in a merge of separate capture sequences"),
    (903, "StreamCaptureUnmatched", "capture was not ended in the same stream as it began"),
    (904, "StreamCaptureUnjoined", "capturing stream has unjoined work"),
    (905, "StreamCaptureIsolation", "dependency created on uncaptured work in another stream"),
    (906, "StreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"),
    (907, "CapturedEvent", "operation not permitted on an event last recorded in a capturing stream"),
    (908, "StreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"),
    (910, "GraphExecUpdateFailure", "the graph update was not performed because it included changes which violated "
                                    "constraints specific to instantiated graph update"),
    (999, "Unknown", "unknown error"), (1052, "RuntimeMemory", "runtime memory call returned error"),
    (1053, "RuntimeOther", "runtime call other than memory returned error"),
)

_OWN_CATEGORY = {218: "version-mismatch", 300: "version-mismatch", 1052: "driver", 1053: "driver"}
_FIX: dict[str, str] = {
    "unknown": "Nothing failed.",
    "oom": "Lower the per-GPU batch size or sequence length, shard or checkpoint activations, and check `rocm-smi "
           "--showpids` for other processes (or another rank) holding memory on that GPU.",
    "device-mapping": "Make the ranks per node and each rank's device index agree with the GPUs HIP_VISIBLE_DEVICES / "
                      "ROCR_VISIBLE_DEVICES leave visible (`rocm-smi`), and start the container with /dev/kfd and "
                      "/dev/dri.",
    "version-mismatch": "The binary (torch, RCCL, an extension) has no code object for this GPU's gfx target or was "
                        "built for another ROCm: install a build for this GPU and ROCm version, or rebuild with it in "
                        "PYTORCH_ROCM_ARCH / GPU_TARGETS (`rocminfo | grep gfx` names it).",
    "driver": "The GPU, the amdgpu driver or the ROCm runtime (HSA) is unusable on that node, or the driver is older "
              "than the runtime: read `rocm-smi`, `dmesg | grep -i amdgpu`, check the ROCm and driver versions match; "
              "reset the GPU or reboot, and drain the node if it comes back.",
    "p2p": "GPU peer access is not possible between these GPUs (PCIe topology, IOMMU/ACS, no XGMI): check `rocm-smi "
           "--showtopo`, set iommu=pt or disable ACS, or NCCL_P2P_DISABLE=1.",
    "app-fault": "The job's own GPU code failed (a kernel bug, an index out of range, a HIP call misused): rerun with "
                 "AMD_SERIALIZE_KERNEL=3 / HIP_LAUNCH_BLOCKING=1 to see the failing call; if it happens on one node "
                 "only, read `dmesg` there for a GPU fault.",
}


def _code(number: int, name: str, text: str) -> Code:
    twin = CUDA.get(str(number))
    category = _OWN_CATEGORY.get(number, twin.category if twin else "app-fault")
    root = twin.root_cause if twin and number not in _OWN_CATEGORY else True
    full = name if name.startswith("hip") else "hipError" + name
    return Code(full, full, f"{text} ({number})", category, _FIX[category], twin.checks if twin else (), root)


ENTRIES: dict[str, Code] = {("hipSuccess" if n == "hipSuccess" else "hipError" + n): _code(c, n, t)
                            for c, n, t in ROWS}
_BY_NUMBER = {str(c): ("hipSuccess" if n == "hipSuccess" else "hipError" + n) for c, n, _ in ROWS}
_BY_LOWER = {key.lower(): key for key in ENTRIES}
_TEXTS = sorted({(t.lower(), _BY_NUMBER[str(c)]) for c, _, t in ROWS if c}, key=lambda item: -len(item[0]))
_NAME = re.compile(r"\b(hip(?:Error[A-Za-z]+|Success))\b")
_MARKER = re.compile(r"\bhip error\s*[:'\"=,]*\s*", re.IGNORECASE)
_NUMBER = re.compile(r"\bhipError(?:_t)?\s*[=:(]?\s*(\d+)\b|\bHIP error(?: code)?\s*[=:#]?\s*(\d+)\b"
                     r"|\bhip_\w+\.(?:cpp|hpp|cc)\b[^\n]{0,160}?\berror:?\s*(\d+)\b", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The ``hipError_t`` codes a line carries, in order, once each: by name, by text after ``HIP error``, else by a
    number next to HIP."""
    line = " ".join(line.split())
    found = [(m.start(), _BY_LOWER[m[1].lower()]) for m in _NAME.finditer(line) if m[1].lower() in _BY_LOWER]
    lower = line.lower()
    for m in _MARKER.finditer(line):
        code = next((c for t, c in _TEXTS if lower[m.end():].startswith(t)), None)
        if code is not None:
            found.append((m.end(), code))
    if not found:
        found += [(m.start(), _BY_NUMBER[n]) for m in _NUMBER.finditer(line) for n in m.groups() if n in _BY_NUMBER]
    out = list(dict.fromkeys(code for _, code in sorted(found)))
    return [c for c in out if c != "hipSuccess"] if len(out) > 1 else out


TABLE = CodeTable("hip_error", SOURCE, VERSION, ENTRIES, find)
