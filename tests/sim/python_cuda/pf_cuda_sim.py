"""Simulated CUDA devices and NCCL for the namespace test cluster: enforces what CUDA and NCCL enforce, and runs
each intra-host link at its own rate.

Loaded by sitecustomize.py right after ``import torch`` (a CPU build). The devices are the simulated
nvidia-smi's (``PF_SIM_GPU_STATE``, default /usr/local/nvidia/sim_state.json; schema in tests/gpu_sim.py),
narrowed by ``CUDA_VISIBLE_DEVICES`` as the CUDA runtime does:

- ``torch.cuda``: is_available, device_count, set_device (an index past the count fails with CUDA's
  ``invalid device ordinal``), current_device, synchronize; ``cuda:k`` tensors are CPU tensors underneath
  (a wrapper subclass, like tests/sim/python/torch_npu), so ``torch.full/zeros/tensor(..., device="cuda:k")``,
  ``.cpu()`` and ``.item()`` work; a tensor of another device in a collective is refused (torch's "No backend
  type associated with device type cpu"). Indexing a ``cuda`` tensor directly needs CUDA's device guard, which a
  CPU build lacks: copy it to the host first (``.cpu()``), as the allreduce worker does.
- the ``nccl`` process-group backend is gloo underneath. Two ranks on one host and one GPU are refused with
  NCCL's own text (init.cc's ``Duplicate GPU detected``; in a torch log, csguoh/MambaIR issue #39,
  https://github.com/csguoh/MambaIR/issues/39)::

      ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
      Last error:
      Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 4000

  Recorded on a real NVIDIA H200 (torch 2.11.0+cu130, NCCL 2.28.9, 2026-11-26: the allreduce worker, two ranks
  on GPU 0), torch puts one line before it, ``DistBackendError: NCCL error in:
  /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, invalid usage (run with NCCL_DEBUG=WARN for details),
  NCCL version 2.28.9``, and raises at the first collective (the communicator is made lazily); the simulator
  raises at init, which the worker reports the same way (no size measured, the error).

- an all_reduce between two GPUs of one host takes at least ``bytes / rate`` where the rate is that of their
  ``nvidia-smi topo -m`` class (the state's ``links``, "i-j" -> "NV2" | "PIX" | "SYS" ..., default NV18, as
  the nvidia-smi simulator prints them): ``GBPS`` (scaled down far below real NVLink/PCIe so that gloo on a
  loaded 2-core box stays faster than every class, keeping their order: NVLink > PCIe switch > host bridge >
  across sockets), or the state's ``sim_gbps``. ``sim_degraded`` {"i-j": factor} runs one link at that
  fraction of its class's rate (an NVLink with failed lanes). Pairs across hosts run at the network's own speed.
- a group of three or more GPUs of one host (``--bisect`` within a node) runs as NCCL's ring does: over the ring
  of its GPUs whose slowest link is the fastest (NCCL searches its rings so; ``best_ring``), at that link's rate
  as its busbw (an all_reduce of ``bytes`` over k ranks takes ``2 (k-1)/k x bytes / rate``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
import sys
import time
from datetime import timedelta
from typing import Any

import torch
import torch.cuda.nccl
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python"))
from pf_sim_tensor import device_tensor_type, host  # noqa: E402  (tests/sim/python, shared with torch_npu)

STATE = os.environ.get("PF_SIM_GPU_STATE", "/usr/local/nvidia/sim_state.json")
GBPS = {"NV": 0.02, "PIX": 0.012, "PXB": 0.012, "PHB": 0.01, "NODE": 0.01, "SYS": 0.008}  # NV: per NVLink
NCCL_VERSION = (2, 27, 5)
NV_CAP = 5  # bonded NVLinks beyond this run at the cap (NV18 would otherwise outrun gloo on this box)


def _state() -> dict[str, Any]:
    try:
        with open(STATE) as f:
            data = json.load(f)
            return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _physical() -> list[int]:
    """The physical GPU indices this process sees, in CUDA ordinal order."""
    count = len(_state().get("gpus") or [])
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return list(range(count))
    seen: list[int] = []
    for word in visible.split(","):
        word = word.strip()
        if not word.isdigit() or int(word) >= count:
            break  # the CUDA runtime stops at the first invalid entry
        seen.append(int(word))
    return seen


def link_class(state: dict[str, Any], i: int, j: int) -> str:
    return str((state.get("links") or {}).get(f"{min(i, j)}-{max(i, j)}", "NV18"))


def link_gbps(state: dict[str, Any], i: int, j: int) -> float:
    """The simulated busbw of the link between physical GPUs i and j of one host."""
    cls = link_class(state, i, j)
    rates = {**GBPS, **(state.get("sim_gbps") or {})}
    nvlink = re.fullmatch(r"NV(\d+)", cls)
    rate = rates["NV"] * min(int(nvlink.group(1)), NV_CAP) if nvlink else float(rates.get(cls, rates["SYS"]))
    return rate * float((state.get("sim_degraded") or {}).get(f"{min(i, j)}-{max(i, j)}", 1.0))


def best_ring(state: dict[str, Any], gpus: list[int]) -> float:
    """The busbw of a ring all_reduce over ``gpus`` of one host: the best ring's slowest link (every order tried:
    at most 8 GPUs, 5040 rings).

    >>> links = {"0-1": "NV2", "2-3": "NV2", "0-2": "PIX", "1-3": "PIX", "0-3": "SYS", "1-2": "SYS"}
    >>> best_ring({"links": links}, [0, 1, 2, 3]), best_ring({"links": links}, [0, 3])
    (0.012, 0.008)
    """
    if len(gpus) == 2:
        return link_gbps(state, *gpus)
    first, *rest = gpus
    return max(min(link_gbps(state, a, b) for a, b in zip((first, *order), (*order, first), strict=True))
               for order in itertools.permutations(rest))


CudaTensor = device_tensor_type("cuda")  # a ``cuda:k`` tensor: a CPU tensor underneath (``cpu_data``)
_host = host


_current = [0]


def device_count() -> int:
    return len(_physical())


def set_device(device: Any) -> None:
    index = device.index if isinstance(device, torch.device) else int(device)
    if not 0 <= index < device_count():
        raise RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported "
                           "at some other API call, so the stacktrace below might be incorrect.")
    _current[0] = index


def current_device() -> int:
    return _current[0]


def synchronize(device: Any = None) -> None:
    return None


def _bus_id(state: dict[str, Any], physical: int) -> str:
    """NCCL's busId as its logs print it: "00000000:18:00.0" -> "18000"."""
    gpus = state.get("gpus") or []
    bus = str(gpus[physical].get("bus_id", "")) if physical < len(gpus) else ""
    digits = re.sub(r"[^0-9a-fA-F]", "", bus) or "0"
    return format(int(digits, 16), "x")


class NcclOptions:
    """ProcessGroupNCCL.Options: what torch sets on it."""

    def __init__(self) -> None:
        self.is_high_priority_stream = False
        self._timeout = timedelta(minutes=10)
        self.global_ranks_in_group: list[int] = []
        self.group_name = ""


# The dtypes torch's nccl all_reduce refuses (ProcessGroupNCCL's getNcclDataType), with the name its TypeError gives:
# recorded on a real H200, torch 2.11.0+cu130 / NCCL 2.28.9 (tests/fixtures/explain/recorded_h200_3/
# nccl_allreduce_dtypes.txt); bool, (u)int8, int32, int64, the floats, complex (SUM) and float8 all reduce there.
NCCL_REFUSED_DTYPES = {torch.int16: "Short", torch.uint16: "UInt16", torch.uint32: "UInt32", torch.uint64: "UInt64"}


class ProcessGroupNCCL(dist.ProcessGroup):  # type: ignore[misc]
    """``nccl``: gloo underneath; refuses two ranks on one GPU; intra-host links run at their class's rate."""

    Options: type[NcclOptions] = NcclOptions

    def __init__(self, store: Any, rank: int, size: int, options: NcclOptions) -> None:
        super().__init__(rank, size)
        state = _state()
        physical = _physical()[_current[0]] if _current[0] < device_count() else _current[0]
        me = {"host": socket.gethostname(), "gpu": physical, "bus": _bus_id(state, physical)}
        store.set(f"pf_sim_nccl_rank_{rank}", json.dumps(me))
        ranks = [json.loads(store.get(f"pf_sim_nccl_rank_{r}")) for r in range(size)]
        store.add("pf_sim_nccl_seen", 1)  # every rank has read every rank before any refuses: all say why
        while store.add("pf_sim_nccl_seen", 0) < size:
            time.sleep(0.01)
        store.add("pf_sim_nccl_past", 1)  # rank 0 serves the store: it waits until every rank is past the wait
        while rank == 0 and store.add("pf_sim_nccl_past", 0) < size:
            time.sleep(0.01)
        for other, theirs in enumerate(ranks):
            if other != rank and theirs["host"] == me["host"] and theirs["gpu"] == me["gpu"]:
                raise dist.DistBackendError(  # the first line as torch 2.11 + NCCL 2.28.9 print it (docstring)
                    "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, invalid usage (run with "
                    "NCCL_DEBUG=WARN for details), NCCL version 2.28.9\n"
                    "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
                    f"Duplicate GPU detected : rank {rank} and rank {other} both on CUDA device {me['bus']}")
        same_host = size >= 2 and all(r["host"] == ranks[0]["host"] for r in ranks)
        self._gbps = best_ring(state, [r["gpu"] for r in ranks]) if same_host else 0.0
        self._share = 2 * (size - 1) / size  # a ring all_reduce moves 2 (k-1)/k of the bytes over each link
        self._gloo = dist.ProcessGroupGloo(store, rank, size, options._timeout)

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return "nccl"

    def _set_sequence_number_for_group(self) -> None:
        return None

    def allreduce(self, tensors: Any, opts: Any = None) -> Any:
        for t in tensors:
            if not isinstance(t, CudaTensor):
                raise RuntimeError(f"No backend type associated with device type {t.device.type}")
            if t.dtype in NCCL_REFUSED_DTYPES:
                raise TypeError(f"Input tensor data type is not supported for NCCL process group: "
                                f"{NCCL_REFUSED_DTYPES[t.dtype]}")
        start = time.perf_counter()
        host = [_host(t) for t in tensors]
        work = self._gloo.allreduce(host, opts) if opts is not None else self._gloo.allreduce(host)
        if self._gbps > 0:
            work.wait()
            nbytes = sum(t.numel() * t.element_size() for t in tensors)
            time.sleep(max(0.0, self._share * nbytes / (self._gbps * 1e9) - (time.perf_counter() - start)))
        return work

    def barrier(self, opts: Any = None) -> Any:
        return self._gloo.barrier(opts) if opts is not None else self._gloo.barrier()


def _empty(size: Any, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
           memory_format: Any = None) -> torch.Tensor:
    return CudaTensor(torch.empty(size, dtype=dtype), device.index or 0)


def _empty_strided(size: Any, stride: Any, dtype: Any = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> torch.Tensor:
    return CudaTensor(torch.empty_strided(size, stride, dtype=dtype), device.index or 0)


def _copy(dst: Any, src: Any, non_blocking: bool = False) -> Any:
    _host(dst).copy_(_host(src))
    return dst


_installed: list[Any] = []


def install() -> None:
    """Patch torch.cuda and the nccl backend (once)."""
    if _installed:
        return
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("empty.memory_format", _empty, "CUDA")
    lib.impl("empty_strided", _empty_strided, "CUDA")
    lib.impl("copy_", _copy, "CUDA")
    _installed.append(lib)
    torch.cuda._lazy_init = lambda: None
    torch.cuda.is_available = lambda: device_count() > 0
    for f in (device_count, set_device, current_device, synchronize):
        setattr(torch.cuda, f.__name__, f)
    torch.cuda.nccl.version = lambda: NCCL_VERSION  # c10d's error logging asks for it
    c10d._NCCL_AVAILABLE = True
    c10d.ProcessGroupNCCL = ProcessGroupNCCL
    dist.ProcessGroupNCCL = ProcessGroupNCCL
