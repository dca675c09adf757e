"""Round 34 (blind to the eighteenth set): FlashAttention's own checks as a code table (a GPU older than the kernels
need, a build without a feature, tensors the kernels reject) and a library's import-time requirement check."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.table_flash_attn import ROWS, TABLE


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("line", "category"), [
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "launch-args"),
    ("RuntimeError: bfloat16 is only supported on Ampere GPUs or newer", "launch-args"),
    ("RuntimeError: This flash attention build does not support backward.", "version-mismatch"),
    ("RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported "
     "version by running nvcc -V.", "version-mismatch"),
    ("RuntimeError: FlashAttention only support fp16 and bf16 data type", "app-fault"),
    ("RuntimeError: FlashAttention forward only supports head dimension at most 256", "app-fault"),
    ("RuntimeError: Number of heads in key/value must divide number of heads in query", "app-fault"),
])
def test_flash_attention_checks_are_decoded(line: str, category: str) -> None:
    assert _best(line) == (category, f"code.flash_attn.{TABLE.decode(line)[0].code.code}")


def test_every_row_names_a_category_and_a_fix() -> None:
    assert len(ROWS) == len(TABLE.entries) == 7
    assert all(row.fix and row.meaning for row in ROWS)


@pytest.mark.parametrize("line", [
    "INFO: FlashAttention-2 enabled; head dimension 128, dtype bfloat16",
    "Using flash attention backend on NVIDIA H100 80GB HBM3 (Hopper)",
    "WARNING: FlashAttention-2 is not installed; falling back to sdpa",
])
def test_healthy_flash_attention_lines_are_not_decoded(line: str) -> None:
    assert TABLE.decode(line) == []


def test_a_requirement_check_raised_by_a_library_is_a_version_mismatch() -> None:
    line = ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run `pip install "
            "transformers[torch]` or `pip install 'accelerate>=0.26.0'`")
    assert _best(line) == ("version-mismatch", "family.any.requirement_check_of_a_library")


def test_the_requirement_family_reads_only_an_exceptions_line() -> None:
    """Prose that names a requirement is not this family's (an older keyword family may still read it)."""
    assert _best("This example requires torch>=2.1 and a GPU; see the README.")[1] != \
        "family.any.requirement_check_of_a_library"
