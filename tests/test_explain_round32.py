"""Round 32 (blind to the seventeenth set): causes the spent sets told in prose or through a generic code - a missing
Fabric Manager, a library's own driver-version check, a retyped "Too may open files", Paddle's DataLoader queue torn
down, torch_npu's device start-up failing with ACL's generic internal code."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("text", "expected"), [
    ("CUDA initialization fails with 802 system error owing to lack of nvidia-fabricmanager install",
     ("driver", "family.nvidia_driver.hardware_driver_fault")),
    ("ERROR: the job cannot start, fabric manager is not running on this node",
     ("driver", "family.any.hardware_driver_fault")),
    ("Update GPU drivers. The maximum supported version is 12040 but blitzar requires 12060",
     ("driver", "family.any.hardware_driver_fault")),
    ("Could not create logging file: Too may open files", ("open-files", "family.any.too_many_open_files")),
    ("SystemError: (Fatal) Blocking queue is killed because the data reader raises an exception",
     ("shm", "paddle.dataloader_queue_killed")),
    ("RuntimeError: Initialize:/root/pytorch/c10/npu/sys_ctrl/npu_sys_ctrl.cpp:44 NPU error, error code is 500000",
     ("driver", "torch_npu.init_internal_error")),
])
def test_round32_causes_are_named(text: str, expected: tuple[str, str]) -> None:
    assert _best(text) == expected


def test_a_specific_start_up_code_keeps_its_own_answer() -> None:
    """507033 at SetDevice has a signature of its own; a code other than ACL's generic 50000x is the table's."""
    line = ("RuntimeError: Initialize:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:127 NPU function error: "
            "c10_npu::SetDevice(device_id_), error code is 507033")
    assert _best(line)[1] == "torch_npu.set_device_507033"


def test_the_dataloader_queue_yields_to_the_cause_before_it() -> None:
    text = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
            "(shm).\nSystemError: (Fatal) Blocking queue is killed because the data reader raises an exception\n")
    best = explain_texts({"rank0.log": text}).best
    assert best is not None and best.signature.category == "shm" and best.line_number == 1


@pytest.mark.parametrize("text", [
    "nvidia-fabricmanager.service - NVIDIA fabric manager service\n   Active: active (running)",
    "Fabric Manager version 550.54.15 is running",
    "Please update your GPU driver for better performance.",
    "NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4",
])
def test_healthy_or_advisory_lines_name_no_driver_fault(text: str) -> None:
    assert _best(text)[0] != "driver"
