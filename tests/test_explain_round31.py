"""Round 31 (blind to the seventeenth set, drawn meanwhile): the error texts the libraries of a real GPU node return
(tests/fixtures/code_tables/SOURCE.md) against explain's tables, and NVML's return codes as a table of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.table_cuda_error import ENTRIES as CUDA
from preflight.explain.table_nccl_result import TABLE as NCCL
from preflight.explain.table_nvml import ENTRIES as NVML
from preflight.explain.table_nvml import TABLE as NVML_TABLE

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "code_tables" / "gpu_error_strings_h200.json")
                      .read_text(encoding="utf-8"))


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


def test_every_cuda_driver_code_is_in_the_table_with_the_drivers_text() -> None:
    codes = RECORDED["cuda_driver"]["codes"]
    assert len(codes) == 101
    for code, seen in codes.items():
        assert code in CUDA, (code, seen["name"])
        assert CUDA[code].meaning == seen["text"], (code, CUDA[code].meaning, seen["text"])


def test_every_nvml_code_is_in_the_table_with_the_librarys_text() -> None:
    codes = RECORDED["nvml"]["codes"]
    assert set(codes) == set(NVML)
    assert all(NVML[code].meaning == text for code, text in codes.items())


def test_every_nccl_result_has_the_librarys_text() -> None:
    codes = RECORDED["nccl"]["codes"]
    assert set(codes) == {str(n) for n in range(8)} and RECORDED["nccl"]["version"] == 22809
    assert all(NCCL.entries[code].meaning == text for code, text in codes.items())


@pytest.mark.parametrize(("line", "expected"), [
    ("Failed to initialize NVML: Insufficient Permissions", ("driver", "code.nvml.4")),
    ("nvidia-container-cli: initialization error: nvml error: insufficient permissions: unknown",
     ("driver", "code.nvml.4")),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", ("driver", "code.nvml.12")),
    ("Failed to initialize NVML: GPU access blocked by the operating system", ("driver", "code.nvml.17")),
    ("pynvml.nvml.NVMLError_FunctionNotFound: Function Not Found", ("version-mismatch", "code.nvml.13")),
    ("RuntimeError: CUDA error: context already current", ("app-fault", "code.cuda_error.202")),
])
def test_nvml_and_driver_only_codes_are_decoded(line: str, expected: tuple[str, str]) -> None:
    assert _best(line) == expected


@pytest.mark.parametrize("line", [
    "    Power Draw                        : [Not Supported]",
    'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":1154',
    "NVML library version: 580.159",
])
def test_nvml_texts_alone_and_a_checks_comparison_are_no_code(line: str) -> None:
    assert NVML_TABLE.find(line) == []
