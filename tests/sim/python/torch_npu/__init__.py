"""Simulated ``torch_npu`` for the namespace test cluster: enforces what real torch_npu and HCCL enforce.

Put on a node's PYTHONPATH (tests/ascend_sim.py: only in NPU test clusters). Without CANN's environment
(``libhccl.so`` / ``libascendcl.so`` in a folder of LD_LIBRARY_PATH, as ``set_env.sh`` sets it) ``import torch_npu``
fails with the real message (LinZhekai/X-Oscar issue #4, https://github.com/LinZhekai/X-Oscar/issues/4)::

    ImportError: libhccl.so: cannot open shared object file: No such file or directory. Please check that the
    cann package is installed. Please run 'source set_env.sh' in the CANN installation path.

With it, ``torch.npu`` exists (device_count from the simulated npu-smi state,
/usr/local/Ascend/driver/tools/sim_state.json; set_device, current_device, synchronize), ``npu:k`` tensors are
CPU tensors underneath (PyTorch's python PrivateUse1 backend), and the ``hccl`` process-group backend is gloo
underneath, refusing what HCCL refuses, in torch_npu's HCCL_CHECK_ERROR format (torch_npu/csrc/distributed/
HCCLUtils.hpp; seen in vllm-ascend issue #2712: ``create_config:...:148 HCCL function error:
hcclCommInitRootInfoConfig(...), error code is 1``), with HCCL_E_NOT_SUPPORT = 5 (hccl_types.h):

- float64 on Atlas training (910A) and A2/A3 (CANN's HcclAllReduce reference: fp64 only on Ascend 950), with
  torch_npu's own dtype check text (ProcessGroupHCCL.cpp: "HCCL AllReduce & Reduce: Unsupported data type
  at::kDouble");
- on 910A a server's devices in one group other than 1, 2, 4 or 8, or a group of 2 or 4 across the HCCS groups
  0-3 / 4-7 (CANN HCCL docs for Atlas training series; ../shared/reference/ascend.md).

``PF_SIM_HCCL_DELAY_S`` (seconds per MiB, default 0) slows this rank's all_reduce (a degraded device).
"""

from __future__ import annotations

import json
import os
import socket
import time
import types
from datetime import timedelta
from typing import Any

STATE = os.environ.get("PF_SIM_NPU_STATE", "/usr/local/Ascend/driver/tools/sim_state.json")
LIBS = ("libhccl.so", "libascendcl.so")
HCCL_E_NOT_SUPPORT = 5


def _missing_lib() -> str | None:
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    for lib in LIBS:
        if not any(os.path.isfile(os.path.join(d, lib)) for d in dirs):
            return lib
    return None


_lib = _missing_lib()
if _lib is not None:
    raise ImportError(f"{_lib}: cannot open shared object file: No such file or directory. Please check that the "
                      "cann package is installed. Please run 'source set_env.sh' in the CANN installation path.")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from pf_sim_tensor import device_tensor_type, host  # noqa: E402
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend  # noqa: E402


def _state() -> dict[str, Any]:
    try:
        with open(STATE) as f:
            data: dict[str, Any] = json.load(f)
            return data
    except (OSError, ValueError):
        return {"devices": []}


def generation() -> str:
    """910A, A2 or A3, by the rule the npu-smi simulator and the npu check use."""
    state = _state()
    if state.get("a3"):
        return "A3"
    return "A2" if str(state.get("chip", "")).upper().startswith(("910B", "A2")) else "910A"


def _hccl_error(where: str, line: int, call: str, code: int) -> RuntimeError:
    return RuntimeError(f"{where}:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:{line} HCCL function error: "
                        f"{call}, error code is {code}\n[ERROR] (PID:{os.getpid()}, Device:{_current[0]}, "
                        "RankID:-1) ERR02200 DIST call hccl api failed.")


NpuTensor = device_tensor_type("npu")  # an ``npu:k`` tensor: a CPU tensor underneath (``cpu_data``)
_host = host


_current = [0]


def device_count() -> int:
    return len(_state().get("devices") or [])


def set_device(device: Any) -> None:
    index = device.index if isinstance(device, torch.device) else int(device)
    if not 0 <= index < device_count():
        raise RuntimeError(f"Invalid device ID {index}, device count is {device_count()}")
    _current[0] = index


def current_device() -> int:
    return _current[0]


def synchronize(device: Any = None) -> None:
    return None


npu = types.ModuleType("torch_npu.npu")
for _f in (device_count, set_device, current_device, synchronize):
    setattr(npu, _f.__name__, _f)
npu.is_available = lambda: device_count() > 0  # type: ignore[attr-defined]

_setup_privateuseone_for_python_backend("npu", backend_module=npu)
_lib_impl = torch.library.Library("aten", "IMPL")


def _empty(size: Any, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
           memory_format: Any = None) -> torch.Tensor:
    return NpuTensor(torch.empty(size, dtype=dtype), device.index or 0)


def _empty_strided(size: Any, stride: Any, dtype: Any = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> torch.Tensor:
    return NpuTensor(torch.empty_strided(size, stride, dtype=dtype), device.index or 0)


def _copy_from(src: Any, dst: Any, non_blocking: bool = False) -> Any:
    _host(dst).copy_(_host(src))
    return dst


_lib_impl.impl("empty.memory_format", _empty, "PrivateUse1")
_lib_impl.impl("empty_strided", _empty_strided, "PrivateUse1")
_lib_impl.impl("_copy_from", _copy_from, "PrivateUse1")


class ProcessGroupHCCL(dist.ProcessGroup):  # type: ignore[misc]
    """``hccl``: gloo underneath; refuses float64 and the 910A groups HCCL refuses, like HCCL."""

    def __init__(self, store: Any, rank: int, size: int, timeout: timedelta) -> None:
        super().__init__(rank, size)
        device = _current[0]
        store.set(f"pf_sim_hccl_device_{rank}", f"{socket.gethostname()} {device}")
        placed = [store.get(f"pf_sim_hccl_device_{r}").decode().split() for r in range(size)]
        per_server: dict[str, set[int]] = {}
        for server, dev in placed:
            per_server.setdefault(server, set()).add(int(dev))
        store.add("pf_sim_hccl_seen", 1)  # both ranks read both devices before either refuses: both say why
        while store.add("pf_sim_hccl_seen", 0) < size:
            time.sleep(0.01)
        store.add("pf_sim_hccl_past", 1)  # rank 0 serves the store: it waits until every rank is past the wait
        while rank == 0 and store.add("pf_sim_hccl_past", 0) < size:
            time.sleep(0.01)
        if generation() == "910A" and not all(_allowed_910a(devs) for devs in per_server.values()):
            raise _hccl_error("create_config", 148, "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, "
                              "&(comm->hcclComm_))", HCCL_E_NOT_SUPPORT)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        self._delay = float(os.environ.get("PF_SIM_HCCL_DELAY_S", "0") or 0)

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return "hccl"

    def allreduce(self, tensors: Any, opts: Any = None) -> Any:
        if any(t.dtype == torch.float64 for t in tensors) and not generation().startswith("950"):
            # torch_npu's own dtype check before HcclAllReduce (checkSupportedDataTypeOfAllReduce in
            # Ascend/pytorch torch_npu/csrc/distributed/ProcessGroupHCCL.cpp: int8/16/32/64, fp16, fp32, bf16)
            raise RuntimeError("HCCL AllReduce & Reduce: Unsupported data type at::kDouble")
        if self._delay:
            time.sleep(self._delay * sum(t.numel() * t.element_size() for t in tensors) / (1 << 20))
        work = self._gloo.allreduce([_host(t) for t in tensors], opts) if opts is not None \
            else self._gloo.allreduce([_host(t) for t in tensors])
        return work

    def barrier(self, opts: Any = None) -> Any:
        return self._gloo.barrier(opts) if opts is not None else self._gloo.barrier()


def _allowed_910a(devices: set[int]) -> bool:
    """HCCL on Atlas training: 1, 2, 4 or 8 devices of a server; 2 or 4 inside one HCCS group (0-3, 4-7)."""
    if len(devices) not in (1, 2, 4, 8):
        return False
    return len(devices) == 8 or len({d // 4 for d in devices}) == 1


def _create(store: Any, rank: int, size: int, timeout: timedelta) -> ProcessGroupHCCL:
    return ProcessGroupHCCL(store, rank, size, timeout)


dist.Backend.register_backend("hccl", _create, devices=["npu"])
