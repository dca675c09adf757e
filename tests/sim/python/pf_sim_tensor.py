"""The tensor of a simulated accelerator (tests/sim/python/torch_npu, tests/sim/python_cuda): a CPU tensor
underneath, shown on the device, every op run on the CPU tensors and wrapped again.

>>> import torch
>>> Npu = device_tensor_type("npu")
>>> Npu.__name__
'NpuTensor'
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._pytree import tree_map


def device_tensor_type(device_type: str) -> type[torch.Tensor]:
    """A wrapper-subclass type for ``device_type`` ("npu", "cuda"): ``Type(cpu_tensor, index)``; its
    ``cpu_data`` is the CPU tensor. ``.cpu()`` / ``.to("cpu")`` return the plain CPU tensor."""

    class DeviceTensor(torch.Tensor):  # type: ignore[misc]
        cpu_data: torch.Tensor

        @staticmethod
        def __new__(cls, data: torch.Tensor, index: int) -> Any:
            made = torch.Tensor._make_wrapper_subclass(cls, data.size(), strides=data.stride(), dtype=data.dtype,
                                                       device=torch.device(device_type, index), requires_grad=False)
            made.cpu_data = data
            return made

        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            index = [0]

            def unwrap(x: Any) -> Any:
                if isinstance(x, DeviceTensor):
                    index[0] = x.device.index or 0
                    return x.cpu_data
                if isinstance(x, torch.device) and x.type == device_type:
                    return torch.device("cpu")
                return x

            kwargs = kwargs or {}
            out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))
            if func is torch.ops.aten._to_copy.default and getattr(kwargs.get("device"), "type", "") == "cpu":
                return out
            return tree_map(lambda x: DeviceTensor(x, index[0])
                            if isinstance(x, torch.Tensor) and not isinstance(x, DeviceTensor) else x, out)

    DeviceTensor.__name__ = DeviceTensor.__qualname__ = f"{device_type.capitalize()}Tensor"
    return DeviceTensor


def host(t: Any) -> Any:
    """The CPU tensor under a simulated device tensor; anything else as it is."""
    return getattr(t, "cpu_data", t) if isinstance(t, torch.Tensor) else t
