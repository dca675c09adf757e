"""NVML's ``nvmlReturn_t`` as a code table: every return code, its ``NVML_ERROR_*`` name and the text
``nvmlErrorString`` prints for it, and the ways logs print one.

Source: the ``NVML_ERROR_*`` constants of nvidia-ml-py 13.615.71 (``pynvml.py``, NVIDIA's Python binding of
``nvml.h``) and the text libnvidia-ml 580.159 returns from ``nvmlErrorString`` for each code, recorded on an H200 node
with ``bench/gpu_error_strings.py`` (``tests/fixtures/code_tables/gpu_error_strings_h200.json``). Logs print a code
as:

- nvidia-smi: ``Failed to initialize NVML: Driver/library version mismatch``, ``Unable to determine the device handle
  for GPU0000:3B:00.0: GPU is lost``;
- the NVIDIA container toolkit: ``nvidia-container-cli: initialization error: nvml error: driver not loaded``;
- pynvml: ``pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded`` (its class is the name, capitalised words);
- the name: ``NVML_ERROR_LIB_RM_VERSION_MISMATCH`` (NCCL's ``nvmlInit_v2() failed``, DCGM).

The text alone (``Not Supported``, ``Unknown Error``) is never read: nvidia-smi prints ``[Not Supported]`` for a
healthy GPU's field.

>>> [(d.code.code, d.code.name, d.code.category) for d in TABLE.decode("Failed to initialize NVML: Insufficient "
...                                                                  "Permissions")]
[('4', 'NVML_ERROR_NO_PERMISSION', 'driver')]
>>> TABLE.find("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost"), TABLE.find("Power Draw : [Not Supported]")
(['15'], [])
>>> TABLE.find('NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":1154')
[]
"""

from __future__ import annotations

import re
import string

from preflight.explain.decode import Code, CodeTable, compared_with

SOURCE = "https://pypi.org/project/nvidia-ml-py/13.615.71/"
VERSION = "NVML 13.615.71 (nvidia-ml-py); nvmlErrorString of libnvidia-ml 580.159"

# (code, name after NVML_ERROR_ (NVML_SUCCESS whole), nvmlErrorString's text, category), the header's order
ROWS: tuple[tuple[int, str, str, str], ...] = (
    (0, "NVML_SUCCESS", "Success", "unknown"),
    (1, "UNINITIALIZED", "Uninitialized", "unknown"),
    (2, "INVALID_ARGUMENT", "Invalid Argument", "unknown"),
    (3, "NOT_SUPPORTED", "Not Supported", "unknown"),
    (4, "NO_PERMISSION", "Insufficient Permissions", "driver"),
    (5, "ALREADY_INITIALIZED", "Already Initialized", "unknown"),
    (6, "NOT_FOUND", "Not Found", "device-mapping"),
    (7, "INSUFFICIENT_SIZE", "Insufficient Size", "unknown"),
    (8, "INSUFFICIENT_POWER", "Insufficient External Power", "driver"),
    (9, "DRIVER_NOT_LOADED", "Driver Not Loaded", "driver"),
    (10, "TIMEOUT", "Timeout", "driver"),
    (11, "IRQ_ISSUE", "Interrupt Request Issue", "driver"),
    (12, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found", "driver"),
    (13, "FUNCTION_NOT_FOUND", "Function Not Found", "version-mismatch"),
    (14, "CORRUPTED_INFOROM", "Corrupted infoROM", "driver"),
    (15, "GPU_IS_LOST", "GPU is lost", "driver"),
    (16, "RESET_REQUIRED", "GPU requires reset", "driver"),
    (17, "OPERATING_SYSTEM", "GPU access blocked by the operating system", "driver"),
    (18, "LIB_RM_VERSION_MISMATCH", "Driver/library version mismatch", "driver"),
    (19, "IN_USE", "In use by another client", "device-mapping"),
    (20, "MEMORY", "Insufficient Memory", "oom"),
    (21, "NO_DATA", "No data", "unknown"),
    (22, "VGPU_ECC_NOT_SUPPORTED", "vGPU ECC not supported", "unknown"),
    (23, "INSUFFICIENT_RESOURCES", "Insufficient Resources", "driver"),
    (24, "FREQ_NOT_SUPPORTED", "Invalid Frequency", "unknown"),
    (25, "ARGUMENT_VERSION_MISMATCH", "Argument version mismatch", "version-mismatch"),
    (26, "DEPRECATED", "Requested functionality has been deprecated", "version-mismatch"),
    (27, "NOT_READY", "System is not in ready state", "driver"),
    (28, "GPU_NOT_FOUND", "No supported GPUs were found", "device-mapping"),
    (29, "INVALID_STATE", "Resource not in correct state to perform requested operation", "unknown"),
    (30, "RESET_TYPE_NOT_SUPPORTED", "Reset type is not supported for given device", "unknown"),
    (999, "UNKNOWN", "Unknown Error", "driver"),
)

_FIXES: dict[str, str] = {
    "unknown": "The NVML call was refused for the caller's own reason (the field or call is not available here): "
               "no fault of the node by itself.",
    "driver": "The node's NVIDIA driver or GPU is not usable through NVML: run `nvidia-smi` there, read `dmesg | grep "
              "-i -e xid -e nvrm`; reload the driver or reboot after an upgrade, reset or drain a lost GPU; in a "
              "container, start it with the GPUs and the driver's libraries (NVIDIA container toolkit).",
    "device-mapping": "The GPU asked for is not there or another client holds it: check `nvidia-smi -L`, "
                      "CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES and the processes on the GPU.",
    "version-mismatch": "The caller needs an NVML (driver) of another release than the one installed: upgrade the "
                        "driver or use the tool's release that matches it.",
    "oom": "NVML could not allocate host memory: check the node's memory (`free -g`, the OOM killer in dmesg).",
}
_SPECIFIC: dict[int, str] = {
    18: "The driver's user-space library and kernel module differ (upgraded without a reboot): reboot the node or "
        "reload the nvidia modules.",
    9: "The NVIDIA kernel module is not loaded: `lsmod | grep nvidia`, `modprobe nvidia` (check dmesg for why it "
       "failed), or the container was started without the GPUs.",
    27: "On NVSwitch systems the fabric manager is not running or does not match the driver: start "
        "nvidia-fabricmanager of exactly the driver's version.",
}
_CHECKS: dict[str, tuple[str, ...]] = {
    "unknown": (), "driver": ("gpu.devices.driver", "gpu.xid"), "device-mapping": ("gpu.devices.count",),
    "version-mismatch": ("versions.gpu_driver",), "oom": (),
}


def _name(name: str) -> str:
    return name if name == "NVML_SUCCESS" else "NVML_ERROR_" + name


def _class(name: str) -> str:
    """pynvml's exception class for a name (``_extractNVMLErrorsAsClasses``): ``NVMLError_DriverNotLoaded``."""
    return "NVMLError_" + string.capwords(name, "_").replace("_", "")


ENTRIES: dict[str, Code] = {
    str(code): Code(str(code), _name(name), text, category, _SPECIFIC.get(code, _FIXES[category]),
                    _CHECKS[category], code != 0)
    for code, name, text, category in ROWS}
_BY_NAME = {_name(name).lower(): str(code) for code, name, _, _ in ROWS} | \
    {_class(name).lower(): str(code) for code, name, _, _ in ROWS if name != "NVML_SUCCESS"}
_TEXTS = sorted(((text.lower(), str(code)) for code, _, text, _ in ROWS), key=lambda item: -len(item[0]))
_NAMED = re.compile(r"\b(NVML_(?:ERROR_[A-Z_]+|SUCCESS)|NVMLError_[A-Za-z]+)\b")
# where the text follows: nvidia-smi's and the toolkit's wrappers, pynvml's class, a failed nvml call
_MARKER = re.compile(r"(?:initialize NVML|\bnvml error|\bNVMLError_[A-Za-z]+|Unable to determine the device handle "
                     r"for \S+|\bnvml\w*\(\) failed)\s*:\s*", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The ``nvmlReturn_t`` codes a line carries, in order: by name or pynvml class, else by the text after an NVML
    wrapper."""
    found = [(m.start(), _BY_NAME[m[1].lower()]) for m in _NAMED.finditer(line) if m[1].lower() in _BY_NAME
             # a check's ``NVML_SUCCESS == r`` (torch's allocator) compares with a name, it reports none
             and not compared_with(line, m.start()) and not line[m.end():].lstrip().startswith(("==", "!="))]
    lower = line.lower()
    for m in _MARKER.finditer(line):
        code = next((c for text, c in _TEXTS if lower[m.end():].startswith(text)), None)
        if code is not None:
            found.append((m.end(), code))
    return list(dict.fromkeys(code for _, code in sorted(found)))


TABLE = CodeTable("nvml", SOURCE, VERSION, ENTRIES, find)
