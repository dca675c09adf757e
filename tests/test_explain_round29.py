"""Round 29 (blind to the sealed sixteenth set): the fifth batch of logs recorded on an H200 (gloo's failures, the first
cause behind a peer's symptom, the node's limits; recorded_h200_5/SOURCE.md), torch's rendezvous.py checks, Triton's
``[CUDA]:`` wrapper of the driver's error text, NCCL's "Too many open files" before the plugin failure it causes, and
torch's shared-memory and DataLoader wordings."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.table_c10d import TABLE as C10D
from preflight.explain.table_cuda_error import TABLE as CUDA

FIFTH = Path(__file__).parent / "fixtures" / "explain" / "recorded_h200_5"


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("log", "category"), [
    ("gloo_collective_mismatch_debug_detail.log", "collective-mismatch"),
    ("gloo_allreduce_shape_mismatch.log", "collective-mismatch"),
    ("gloo_socket_ifname_no_such_interface.log", "wrong-interface"),
    ("gloo_peer_late_timeout.log", "fabric"),  # gloo.op_timeout: a symptom, the late peer is in no line
    ("gloo_peer_cuda_oom_first.log", "oom"),  # rank 1's OOM, not rank 0's "Connection closed by peer"
    ("nccl_cpu_tensor.log", "app-fault"),
    ("master_port_out_of_range.log", "launch-args"),
    ("torchrun_rdzv_endpoint_unreachable.log", "master-unreachable"),
    ("nccl_few_file_descriptors.log", "open-files"),
    ("dataloader_tiny_dev_shm.log", "shm"),
])
def test_fifth_batch_of_real_gpu_logs_is_explained(log: str, category: str) -> None:
    got, ident = _best((FIFTH / log).read_text(encoding="utf-8"))
    assert got == category, ident


@pytest.mark.parametrize("log", ["healthy_gloo_torchrun_info.log", "healthy_fsdp2_one_gpu.log"])
def test_healthy_runs_of_the_fifth_batch_name_no_cause(log: str) -> None:
    result = explain_texts({log: (FIFTH / log).read_text(encoding="utf-8")})
    assert result.best is None and result.matches == []


def test_the_peer_that_failed_first_is_named_not_the_rank_that_saw_it_go() -> None:
    result = explain_texts({"job.log": (FIFTH / "gloo_peer_cuda_oom_first.log").read_text(encoding="utf-8")})
    assert result.best is not None and result.best.signature.id == "cuda.oom"
    assert "Tried to allocate 400.00 GiB" in result.best.line


@pytest.mark.parametrize(("line", "expected"), [
    ("ValueError: port must have value from 0 to 65535 but was 70000.", "launch-args"),
    ("RuntimeError: `world_size` must be an integer. None", "launch-args"),
    ("RuntimeError: `rank` must be an integer. None", "launch-args"),
    ("RuntimeError: Unable to perform re-rendezvous using env:// method", "launch-args"),
])
def test_torch_rendezvous_py_checks_are_launch_arguments(line: str, expected: str) -> None:
    assert [d.code.category for d in C10D.decode(line)] == [expected]
    assert _best(line)[0] == expected


@pytest.mark.parametrize(("line", "code", "category"), [
    ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid", "200", "version-mismatch"),
    ("Triton Error [CUDA]: out of memory", "2", "oom"),
    ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", "700", "app-fault"),
])
def test_tritons_cuda_wrapper_is_decoded(line: str, code: str, category: str) -> None:
    assert CUDA.find(line) == [code]
    assert _best(line) == (category, f"code.cuda_error.{code}")


def test_too_many_open_files_comes_before_the_net_plugin_failure_it_causes() -> None:
    log = ("vm:882:882 [0] misc/socket.cc:143 NCCL WARN Call to getifaddrs failed: Too many open files\n"
           "vm:882:882 [0] plugin/net.cc:379 NCCL WARN Failed to initialize any NET plugin\n")
    assert _best(log) == ("open-files", "os.too_many_open_files")
    alone = "vm:882:882 [0] plugin/net.cc:379 NCCL WARN Failed to initialize any NET plugin\n"
    assert _best(alone) == ("rdma", "nccl.no_net_plugin")  # without the cause before it, the plugin failure stands


def test_torch_shared_memory_allocation_wording_is_shm() -> None:
    line = ("RuntimeError: unable to allocate shared memory(shm) for file </torch_925_455410676_0>: "
            "Resource temporarily unavailable (11)")
    assert _best(line) == ("shm", "torch.shm_segment_nospace")


def test_a_dataloader_worker_that_exited_is_shm_unless_the_log_names_the_cause() -> None:
    line = "RuntimeError: DataLoader worker (pid(s) 1234) exited unexpectedly"
    assert _best(line) == ("shm", "torch.dataloader_worker_exited")
    killed = "Out of memory: Killed process 1234 (pt_data_worker) total-vm:123456kB\n" + line
    assert _best(killed)[0] == "oom"
