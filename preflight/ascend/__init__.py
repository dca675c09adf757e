"""Helpers shared by the Ascend (NPU) checks: locating and reading ``hccn_tool`` and ``npu-smi``."""
