"""Known failure signatures, round 39 (issue 38, from the spent nineteenth set's misses): two messages of CANN's
operators that name a setting or a build, not the operator, although an operator's error code comes with them.

- a MoE dispatch / combine operator's tiling that finds the HCCL window smaller than it needs (``HCCL_BUFFSIZE is
  too SMALL, ... NEEDED_HCCL_BUFFSIZE ... = 609MB, HCCL_BUFFSIZE=200MB``): ``launch-args``, the environment variable,
  even though ``aclnn...`` fails with an operator code (561002) on the line before;
- an operator package's ``binary_info_config.json`` without the chip the job runs on (``socVersion [ascend910b]
  does not support opType [DispatchLayout]``, EZ1001): ``version-mismatch``, a build for another SoC (the A3
  wheel on an A2), not arguments the job got wrong.

Each entry's ``source`` is the public page its excerpt comes from (tests/fixtures/explain/excerpts.json); the
wordings are those of the operators' sources in ``WORDING_SOURCES``.

>>> [(s.id, s.category) for s in BUILDS]
[('cann.hccl_buffsize_too_small', 'launch-args'), ('cann.op_binary_for_another_soc', 'version-mismatch')]
>>> BUILDS[1].search("socVersion [ascend910b] does not support opType [DispatchLayout].") is not None
True
"""

from __future__ import annotations

from preflight.explain.signature import Signature

WORDING_SOURCES: dict[str, str] = {
    # CANN ops-transformer's MoE dispatch / combine tilings (moe_distribute_dispatch(_v2) and notify_dispatch
    # op_host tiling): OP_LOGE(nodeName, "HCCL_BUFFSIZE is too SMALL, maxBs = %lu, ... NEEDED_HCCL_BUFFSIZE(...) =
    # %luMB, HCCL_BUFFSIZE=%luMB."), "HCCL_BUFFSIZE is too SMALL, should larger than %luMB", "TP HCCL_BUFFSIZE is ..."
    "cann.hccl_buffsize_too_small": "CANN ops-transformer, mc2 MoE dispatch / combine tiling (OP_LOGE)",
    # the aclnn op executor's kernel lookup: "AclNN_Parameter_Error(EZ1001): Get regInfo failed, The
    # binary_info_config.json of socVersion [ascend910b] does not support opType [AddRmsNormBias]." (also "The bin
    # of socVersion [...]")
    "cann.op_binary_for_another_soc": "CANN aclnn op executor, kernel registration lookup (EZ1001)",
}

BUILDS: tuple[Signature, ...] = (
    Signature(
        "cann.hccl_buffsize_too_small", "launch-args",
        (r"\bHCCL_BUFFSIZE is too SMALL\b", r"\bNEEDED_HCCL_BUFFSIZE\b"),
        "A communication operator (MoE dispatch / combine, an MC2 fused op) needs a larger HCCL window than "
        "HCCL_BUFFSIZE gives: the log states the size it needs (NEEDED_HCCL_BUFFSIZE) beside the one set. The "
        "operator's error code that follows is this setting's consequence.",
        "Export HCCL_BUFFSIZE (in MB) at least the size the log names, the same value on every rank, and relaunch; "
        "or lower the batch / tokens per rank the operator was sized for.",
        ("hccl.env", "hccl.env_consistency"),
        "https://github.com/hicann/cann-recipes-infer/blob/fbc225d2de3157a093a2e7dfc2b23086d23ed8f9/models/"
        "deepseek_v3_2_exp/README.md#case-hccl-buffsize-too-small", weight=82),
    Signature(
        "cann.op_binary_for_another_soc", "version-mismatch",
        (r"\bsocVersion \[[\w-]+\] does not support opType\b",),
        "The operator package (a custom op wheel, a kernels package) was built for another Ascend SoC than this "
        "one: its binary_info_config.json lists no kernel of that operator for this chip (an A3 build on an A2 "
        "node, or the reverse).",
        "Install the operator package built for this node's SoC (`npu-smi info` names the chip), or rebuild it with "
        "this SoC as the target; keep one build per chip type in mixed clusters.",
        ("npu.chip", "versions.cann"),
        "https://github.com/sgl-project/sgl-kernel-npu/commit/afe64f477b948ea02a337b79ff42858bfc147690", weight=80),
)
