"""Round 35 (blind to the eighteenth set): torch's own words for a CUDA driver unusable at initialization and for a
GPU its build has no kernels for. torch prints them as warnings; they state the cause, so they are not harmless, and
the "No CUDA GPUs are available" that follows such a warning is its consequence."""

from __future__ import annotations

import pytest

from preflight.explain.lines import harmless
from preflight.explain.matcher import explain_texts

_UNKNOWN = ("/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA initialization: "
            "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable "
            "CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero. (Triggered internally "
            "at ../c10/cuda/CUDAFunctions.cpp:108.)\n  return torch._C._cuda_getDeviceCount() > 0\n")


def _best(text: str) -> tuple[str, str, int]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id, best.line_number) if best else ("unknown", "", 0)


def test_the_initialization_warning_is_the_cause_of_no_gpus() -> None:
    text = _UNKNOWN + "Traceback (most recent call last):\nRuntimeError: No CUDA GPUs are available\n"
    assert _best(text) == ("driver", "torch.cuda_unknown_error", 1)


def test_no_gpus_without_the_warning_stays_a_device_mapping() -> None:
    assert _best("RuntimeError: No CUDA GPUs are available")[:2] == ("device-mapping", "cuda.no_gpus_available")


@pytest.mark.parametrize("text", [
    "/x/torch/cuda/__init__.py:146: UserWarning: \nNVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible "
    "with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 "
    "sm_75 sm_80 sm_86.\n",
    "/x/torch/cuda/__init__.py:83: UserWarning: \n    Found GPU0 Tesla K40m which is of cuda capability 3.5.\n    "
    "PyTorch no longer supports this GPU because it is too old.\n    The minimum cuda capability supported by this "
    "library is 3.7.\n",
])
def test_a_gpu_the_build_has_no_kernels_for_is_a_version_mismatch(text: str) -> None:
    assert _best(text)[:2] == ("version-mismatch", "torch.gpu_arch_not_in_build")


def test_only_the_initialization_warning_stops_being_harmless() -> None:
    assert not harmless(_UNKNOWN.splitlines()[0])
    assert harmless("/x/torch/cuda/__init__.py:61: UserWarning: The given NumPy array is not writable")
    assert harmless("UserWarning: TypedStorage is deprecated. It will be removed in the future.")
