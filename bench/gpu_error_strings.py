"""Record the error texts a real GPU node's libraries print, for explain's code tables: the CUDA driver API's
``cuGetErrorName`` / ``cuGetErrorString`` for every ``CUresult`` the driver knows, NVML's ``nvmlErrorString`` for every
``nvmlReturn_t`` and NCCL's ``ncclGetErrorString`` for every ``ncclResult_t`` (the libraries as loaded, no GPU work).

    python3 bench/gpu_error_strings.py > gpu_error_strings.json     # on a GPU node (driver, torch's NCCL wheel)

A code the library does not know is left out (cuGetErrorString returns CUDA_ERROR_INVALID_VALUE for it; NVML and
NCCL print their own "unknown" text, recorded once under ``unknown``).
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import sys


def _cuda() -> dict[str, object]:
    lib = ctypes.CDLL("libcuda.so.1")
    out: dict[str, object] = {"library": "libcuda.so.1"}
    version = ctypes.c_int()
    if lib.cuDriverGetVersion(ctypes.byref(version)) == 0:
        out["driver_api_version"] = version.value
    codes: dict[str, dict[str, str]] = {}
    for code in range(0, 1000):
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        if lib.cuGetErrorName(code, ctypes.byref(name)) != 0 or lib.cuGetErrorString(code, ctypes.byref(text)) != 0:
            continue
        codes[str(code)] = {"name": (name.value or b"").decode(), "text": (text.value or b"").decode()}
    out["codes"] = codes
    return out


def _nvml() -> dict[str, object]:
    lib = ctypes.CDLL("libnvidia-ml.so.1")
    lib.nvmlErrorString.restype = ctypes.c_char_p
    unknown = (lib.nvmlErrorString(998) or b"").decode()
    codes = {str(code): (lib.nvmlErrorString(code) or b"").decode() for code in [*range(0, 40), 999]}
    return {"library": "libnvidia-ml.so.1", "unknown": unknown,
            "codes": {k: v for k, v in codes.items() if v != unknown or k == "999"}}


def _nccl() -> dict[str, object]:
    found = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "nccl", "lib",
                                          "libnccl.so*")))
    lib = ctypes.CDLL(found[0] if found else "libnccl.so.2")
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    version = ctypes.c_int()
    lib.ncclGetVersion(ctypes.byref(version))
    unknown = (lib.ncclGetErrorString(999) or b"").decode()
    codes = {str(code): (lib.ncclGetErrorString(code) or b"").decode() for code in range(0, 20)}
    return {"library": found[0] if found else "libnccl.so.2", "version": version.value, "unknown": unknown,
            "codes": {k: v for k, v in codes.items() if v != unknown}}


def main() -> int:
    record: dict[str, object] = {}
    for name, read in (("cuda_driver", _cuda), ("nvml", _nvml), ("nccl", _nccl)):
        try:
            record[name] = read()
        except OSError as exc:  # a library that is not there: say so, record the rest
            record[name] = {"error": str(exc)}
    json.dump(record, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
