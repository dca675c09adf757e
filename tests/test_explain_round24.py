"""Issue 38's round 24, written blind to the sealed fourteenth set: torch_npu's and op-plugin's own version checks,
an operator the chip (SoC) lacks, and the known-case layer's thresholds measured on spent sets as they were sealed.

Each wording below is the vendor's own string (the file it is printed from in the comment); none is a sealed log.
"""

from __future__ import annotations

import pytest

from preflight.explain import matcher
from preflight.explain.known_cases import MIN_SIMILARITY, MIN_WORDS, QUIET_MIN_SIMILARITY
from preflight.explain.matcher import explain_texts, shows_failure


def _category(text: str) -> str:
    best = explain_texts({"log.txt": text}).best
    return best.signature.category if best else "unknown"


@pytest.mark.parametrize("line", [
    # op-plugin (Ascend/op-plugin 517f2e7): op_plugin/ops/opapi/QuantMatmulKernelNpuOpApi.cpp,
    # MatmulAllReduceBaseKernelNpuOpApi.cpp and the flash-attention kernels' TORCH_CHECK texts
    "RuntimeError: aclnnQuantMatmulV5 support A8W4, please upgrade CANN.",
    "RuntimeError: The param sink is not supported in this CANN version, aclnnFlashAttentionScoreV3 is not available",
    "RuntimeError: In this CANN Version, comm_mode is not supported, please upgrade CANN Version.",
    # torch_npu (Ascend/pytorch 9e73e70): HcclInterface.cpp, _inductor/runtime/triton_heuristics.py,
    # core/npu/NPUAllocatorConfig.cpp
    "[W] Failed to find this HcclSetConfig function, get real hccl config, need to upgrade hccl version!",
    "RuntimeError: Installed triton version too old, please upgrade",
    "RuntimeError: To use this feature, you need to upgrade to cann version 8.5.0 or higher and driver version "
    "26.0.rc1 or higher.",
])
def test_the_vendors_own_version_checks_are_versions(line: str) -> None:
    assert _category(line) == "version-mismatch"


@pytest.mark.parametrize("line", [
    # op-plugin's op_plugin/ops/aclops/MlaPrologKernelNpu.cpp
    "RuntimeError: npu_mla_prolog not support on this soc version, please use npu_mla_prolog_v3",
])
def test_an_operator_the_chip_does_not_have_is_the_jobs_call(line: str) -> None:
    assert _category(line) == "app-fault"


def test_a_torch_npu_without_the_chip_is_a_version() -> None:
    """Round 40 reconsidered torch_npu's SoC map at device start-up (core/npu/NpuVariables.cpp): no operator was
    called; the release does not know the chip (the twentieth set's Ascend950PR on torch-npu 2.6.0)."""
    assert _category("RuntimeError: Unsupported soc version: Ascend910A") == "version-mismatch"


def test_words_that_only_look_like_a_version_check_claim_nothing() -> None:
    assert _category("INFO: please update the config file before the next epoch") == "unknown"
    assert _category("epoch 3: the torch version of the model card is 2.4") == "unknown"


def test_a_log_without_a_failure_line_must_resemble_a_case_more_closely(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[float] = []

    def spy(lines: list[str], min_similarity: float = MIN_SIMILARITY) -> None:
        asked.append(min_similarity)

    monkeypatch.setattr(matcher, "resemblance", spy)
    quiet = "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1\nProcessed prompts:   0%|          | 0/16"
    failing = quiet + "\nRuntimeError: something went wrong in the step"
    assert not shows_failure(explain_texts({"a.log": quiet}, resemble=False))
    assert shows_failure(explain_texts({"a.log": failing}, resemble=False))
    explain_texts({"a.log": quiet})
    explain_texts({"a.log": failing})
    assert asked == [QUIET_MIN_SIMILARITY, MIN_SIMILARITY]
    assert (MIN_WORDS, MIN_SIMILARITY, QUIET_MIN_SIMILARITY) == (12, 0.5, 0.6)  # bench/explain_fallback_unseen.py
