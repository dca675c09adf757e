"""Record the CUDA, NCCL error tables of the libraries on this machine, for ``preflight.explain``'s decoded layer.

Reads the ``cudaError`` enum of the toolkit's ``driver_types.h`` and asks the runtime (``cudaGetErrorName`` /
``cudaGetErrorString``), the driver (``cuGetErrorName`` / ``cuGetErrorString``) and NCCL (``ncclGetErrorString``)
what they print for every code. Writes JSON to stdout::

    python3 bench/cuda_error_table.py > cuda_errors.json

Needs a CUDA toolkit (its header and libcudart), the driver's libcuda; NCCL is optional. No GPU work is done.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import re
import sys


def _load(names: list[str]) -> ctypes.CDLL | None:
    for name in names:
        for path in sorted(glob.glob(name)) if "*" in name else [name]:
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    return None


def _enum(header: str) -> dict[str, int]:
    text = open(header, encoding="utf-8", errors="replace").read()
    body = text[text.index("enum __device_builtin__ cudaError"):]
    body = body[:body.index("};")]
    return {m[1]: int(m[2]) for m in re.finditer(r"^\s*(cudaError\w+)\s*=\s*(\d+)", body, re.M)}


def main() -> int:
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    header = os.path.join(cuda_home, "include", "driver_types.h")
    out: dict[str, object] = {"header": header}
    enum = _enum(header) if os.path.exists(header) else {}
    out["enum"] = enum
    rt = _load([os.path.join(cuda_home, "lib64", "libcudart.so"), "libcudart.so",
                *glob.glob("/opt/*/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcudart.so*"),
                *glob.glob("/usr/local/lib/python3*/dist-packages/nvidia/cu*/lib/libcudart.so*")])
    if rt is not None:
        ver = ctypes.c_int()
        rt.cudaRuntimeGetVersion(ctypes.byref(ver))
        out["runtime_version"] = ver.value
        rt.cudaGetErrorName.restype = ctypes.c_char_p
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        codes = sorted(set(enum.values()) | set(range(0, 1100)))
        out["runtime"] = {c: [rt.cudaGetErrorName(c).decode(), rt.cudaGetErrorString(c).decode()] for c in codes}
    drv = _load(["libcuda.so.1", "libcuda.so"])
    if drv is not None:
        ver = ctypes.c_int()
        drv.cuDriverGetVersion(ctypes.byref(ver))
        out["driver_version"] = ver.value
        table: dict[int, list[str]] = {}
        for c in range(0, 1100):
            name, text = ctypes.c_char_p(), ctypes.c_char_p()
            if drv.cuGetErrorName(c, ctypes.byref(name)) == 0 and name.value:
                drv.cuGetErrorString(c, ctypes.byref(text))
                table[c] = [name.value.decode(), (text.value or b"").decode()]
        out["driver"] = table
    nccl = _load([*glob.glob("/opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so*"), "libnccl.so.2"])
    if nccl is not None:
        ver = ctypes.c_int()
        nccl.ncclGetVersion(ctypes.byref(ver))
        nccl.ncclGetErrorString.restype = ctypes.c_char_p
        out["nccl_version"] = ver.value
        out["nccl"] = {c: nccl.ncclGetErrorString(c).decode() for c in range(0, 12)}
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
