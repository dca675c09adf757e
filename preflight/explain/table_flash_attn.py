"""FlashAttention's own checks as a code table, keyed by normalized template (``table_templates``): what the
``flash_attn`` kernels raise (``TORCH_CHECK``) before they run, mined from Dao-AILab/flash-attention's
``csrc/flash_attn/flash_api.cpp`` (FlashAttention 2) and ``hopper/flash_api.cpp`` (FlashAttention 3) at 0251105
(2026-08-15), with the wordings of 2.6 (59594f2a: ``bfloat16 is only supported on Ampere GPUs or newer``) and
``setup.py``'s CUDA check.

Categories: a GPU older than the kernels need (sm_80 and later; Hopper for some options) ``launch-args``, as vLLM's
bfloat16 check is: the job asked for an attention implementation or dtype the node's GPUs cannot run (the fix is
another attention backend or another node); a wheel built without a feature the job uses (``This flash attention build
does not support ...``) or a CUDA older than the build needs ``version-mismatch``; the job's tensors rejected (dtype,
head dimension, heads that do not divide, layout, index dtypes) ``app-fault``.

>>> [d.code.category for d in TABLE.decode("RuntimeError: FlashAttention only supports Ampere GPUs or newer.")]
['launch-args']
>>> [d.code.name for d in TABLE.decode("RuntimeError: This flash attention build does not support softcap.")]
['build without the feature']
>>> TABLE.decode("INFO: FlashAttention-2 enabled; head dimension 128")
[]
"""

from __future__ import annotations

from preflight.explain.table_templates import Row, build

COMMIT = "0251105a2fb19d2957484b7f023cd8c115286ced"
SOURCE = f"https://github.com/Dao-AILab/flash-attention/blob/{COMMIT}/csrc/flash_attn/flash_api.cpp"
VERSION = "flash-attention 0251105 (FlashAttention 2 and 3 sources; 2.6's wordings)"

_GPU = ("Run this job on GPUs of compute capability 8.0 or later (A100, A10, L40, H100...), or choose another "
        "attention implementation (attn_implementation='sdpa' / 'eager', xformers; vLLM's --attention-backend), or "
        "float16 instead of bfloat16.")
_BUILD = ("Install a flash-attn build with the feature (the release wheel for your torch and CUDA, or build it without "
          "the FLASH_ATTENTION_DISABLE_* switches), or turn the feature off in the job.")
_ARGS = ("Fix what the job hands the kernel: fp16/bf16 tensors of one dtype, contiguous last dimension, a head "
         "dimension the build supports, key/value heads that divide the query heads, int32 index tensors.")

ROWS: tuple[Row, ...] = (
    Row("GPU older than FlashAttention supports", "launch-args",
        "The FlashAttention kernels need an Ampere (sm_80) or newer GPU and this one is older (V100, T4, RTX 20xx): "
        "the job asked for an attention implementation the node's GPUs cannot run.", _GPU,
        ("FlashAttention only supports Ampere GPUs or newer.",
         "bfloat16 is only supported on Ampere GPUs or newer",
         "Attention combine function only supports Ampere GPUs or newer.",
         "FlashAttention only supports Turing GPUs or newer."), checks=("gpu.devices.smi",)),
    Row("Hopper-only option", "launch-args",
        "The job asked for a FlashAttention 3 option only Hopper GPUs (sm_90) run.", _GPU,
        ("q_v is only supported for Hopper GPUs", "Only Hopper supports different V headdim",
         "FlashAttention on Ampere/Ada cards only supports fp16 and bf16 data type"), checks=("gpu.devices.smi",)),
    Row("build without the feature", "version-mismatch",
        "The installed flash-attn was built without a feature the job uses (a wheel built with FLASH_ATTENTION_DISABLE_"
        "... or for another release of the calling library).", _BUILD,
        ("This flash attention build does not support {}.",), checks=("versions",)),
    Row("CUDA older than FlashAttention needs", "version-mismatch",
        "flash-attn was built or installed against a CUDA older than it supports (11.6 and later).", _BUILD,
        ("FlashAttention is only supported on CUDA 11.6 and above.",), checks=("versions.cuda",)),
    Row("tensors of a dtype the kernels reject", "app-fault",
        "The job handed FlashAttention tensors of a dtype it does not run (float32) or of mixed dtypes.", _ARGS,
        ("FlashAttention only support fp16 and bf16 data type",
         "FlashAttention only supports fp16, bf16, and fp8_e4m3 data type",
         "query and key must have the same dtype", "query and value must have the same dtype",
         "Output must have the same dtype as inputs", "Attention combine function only support fp32 data type"),
        checks=()),
    Row("head dimension the kernels reject", "app-fault",
        "The model's head dimension is larger than (or not a multiple the build needs of) what FlashAttention "
        "supports.", _ARGS,
        ("FlashAttention forward only supports head dimension at most {}",
         "FlashAttention backward only supports head dimension at most {}",
         "head_size should be a multiple of 8",
         "query, key, value, and out_ must have a head_size that is a multiple of 8",
         "Deterministic backward not supported for hdim 256."), checks=()),
    Row("heads or layout the kernels reject", "app-fault",
        "The job's query/key/value layout does not fit the kernel: key/value heads that do not divide the query "
        "heads, a non-contiguous last dimension, index tensors of another dtype, a paged KV block size it cannot "
        "take.", _ARGS,
        ("Number of heads in key/value must divide number of heads in query",
         "Input tensor must have contiguous last dimension",
         "Paged KV cache block size must be divisible by 256",
         "Only rotary dimensions divisible by 16 are currently supported",
         "Softcapping does not support dropout for now"), checks=()),
)

TABLE = build("flash_attn", SOURCE, VERSION, ROWS)
