"""A healthy log is not a failure: explain says the run finished cleanly and keeps its hints as notes.

The logs are real: recorded on an NVIDIA H100 VM (tests/fixtures/explain/recorded_h100/SOURCE.md) and an H200 VM
(tests/fixtures/explain/recorded_h200_3/SOURCE.md).
"""

from __future__ import annotations

from pathlib import Path

from preflight.commands.explain import render
from preflight.explain.matcher import explain_texts
from preflight.explain.table_c10d import TABLE as C10D

H100 = Path(__file__).parent / "fixtures" / "explain" / "recorded_h100"
HEALTHY = (H100 / "healthy_nccl_debug_info.log").read_text(encoding="utf-8")


def test_a_healthy_nccl_info_log_is_clean_and_its_hints_are_notes() -> None:
    result = explain_texts({"rank0.log": HEALTHY})
    assert result.clean is not None and "(1) was initialised and closed" in result.clean
    assert result.best is None and result.matches == []
    assert "nccl.no_ib_device" in [m.signature.id for m in result.notes]
    doc = result.to_dict()
    assert doc["matches"] == [] and doc["clean"] == result.clean
    assert [n["id"] for n in doc["notes"]] == [m.signature.id for m in result.notes]
    text = render(result)
    assert text.startswith("no failure: ") and "root cause" not in text and "nccl.no_ib_device" in text


def test_a_communicator_never_destroyed_is_no_clean_finish() -> None:
    """Cut before ``Destroy COMPLETE`` (a hang, a kill): the hint is what there is, and it is shown as before."""
    cut = HEALTHY[:HEALTHY.index("all_reduce ok")]
    result = explain_texts({"rank0.log": cut})
    assert result.clean is None and result.best is not None
    assert result.best.signature.id == "nccl.no_ib_device"


def test_an_error_line_outside_nccl_info_is_no_clean_finish() -> None:
    result = explain_texts({"rank0.log": HEALTHY + "RuntimeError: the loss diverged\n"})
    assert result.clean is None


def test_a_root_cause_anywhere_is_no_clean_finish() -> None:
    """The healthy rank's log beside a rank that failed: the failure is the answer."""
    failed = (H100 / "cuda_oom_in_job.log").read_text(encoding="utf-8")
    result = explain_texts({"rank0.log": HEALTHY, "rank1.log": failed})
    assert result.clean is None and result.best is not None and result.best.signature.id == "cuda.oom"


def test_no_nccl_lines_no_verdict_of_health() -> None:
    """A log without NCCL's INFO lines is never called clean for lacking errors alone."""
    assert explain_texts({"r.log": "epoch 1 done\nall_reduce ok 1.0\n"}).clean is None


H200 = Path(__file__).parent / "fixtures" / "explain" / "recorded_h200_3"
DETAIL = (H200 / "healthy_torchrun_debug_detail.log").read_text(encoding="utf-8")


def test_a_healthy_torchrun_run_at_debug_detail_is_clean() -> None:
    """torch 2.11 under torchrun at TORCH_DISTRIBUTED_DEBUG=DETAIL, TORCH_CPP_LOG_LEVEL=INFO and NCCL_DEBUG=INFO: its
    settings dump, c10d's debug trace (``uv_loop_close failed``, ``Remote peer closed the connection.``) and the
    communicator aborted at shutdown ("No abort reason provided", ``Abort COMPLETE``) are no failure."""
    result = explain_texts({"rank0.log": DETAIL})
    assert result.clean is not None and result.best is None and result.matches == [], \
        [(m.signature.id, m.line) for m in result.matches]
    assert "nccl.no_ib_device" in [m.signature.id for m in result.notes]


def test_an_abort_with_a_reason_is_no_clean_finish() -> None:
    """The same log with the abort's reason a failure's, as torch gives it when the watchdog aborts."""
    failed = DETAIL.replace("with reason: No abort reason provided.", "with reason: Watchdog caught collective "
                            "operation timeout")
    assert failed != DETAIL and explain_texts({"rank0.log": failed}).clean is None


def test_an_environment_variable_name_is_not_read_as_a_failures_words() -> None:
    """torch's start-up settings line: ``TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC`` is no "wait timeout"."""
    line = next(line for line in DETAIL.splitlines() if "HeartbeatMonitor environments" in line)
    assert "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC" in line and C10D.find(line) == []
    assert C10D.find("RuntimeError: Wait timeout") != []  # the words themselves still decode
