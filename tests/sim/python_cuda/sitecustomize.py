"""Simulated CUDA + NCCL for the namespace test cluster (tests/sim/python_cuda/pf_cuda_sim.py does the work).

On a node's PYTHONPATH (hosts.yaml ``env``, like a venv whose torch is the CUDA build), this file makes
``import torch`` load the simulation right after torch itself, so ``torch.cuda`` and the ``nccl`` backend behave
as on a GPU node whose devices are the simulated nvidia-smi's (/usr/local/nvidia/sim_state.json). A python
that never imports torch pays nothing.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Finds ``torch`` the normal way, then runs pf_cuda_sim.install() once torch's module has executed."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original(module)
            import pf_cuda_sim

            pf_cuda_sim.install()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _AfterTorch())
