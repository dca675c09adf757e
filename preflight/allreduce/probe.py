"""What the allreduce check (and diagnose) ask a node before any rank runs, and which backend each accelerator uses."""

from __future__ import annotations

BACKENDS = {"npu": "hccl", "gpu": "nccl", "cpu": "gloo"}
# Finds torch without importing it (an import costs seconds).
TORCH_PROBE = ("import importlib.util as u, json; "
               "print(json.dumps({'torch': u.find_spec('torch') is not None, "
               "'torch_npu': u.find_spec('torch_npu') is not None}))")
