"""Round 40 (from the spent twentieth set's misses): each rule generalizes a missed log to the tool's own message -
Slurm's refusals of a request, NCCL and torch_npu older than the chip, a linker without a library, a launch command
the remote shell cannot parse (in English and in its zh_CN text), a node reporting 127.0.1.1 or docker0's address as
its own, vLLM's driver without a GPU and an unknown executor backend, package pins nothing satisfies, NumPy / protobuf
builds of another release, the GPU Operator's driver not loaded yet; and a commit message wrapped at 72 columns is
read whole. The logs themselves are in the corpus, which holds each to its answer."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.paste import joins


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("text", "category", "ident"), [
    ("sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",
     "launch-args", "scheduler_refused_the_request"),
    ("NCCL INFO cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856", "version-mismatch",
     "nccl_older_than_the_gpu"),
    ("RuntimeError: Unsupported soc version: Ascend910_9391", "version-mismatch", "torch_npu_without_this_chip"),
    ("ld: cannot find -lnccl: No such file or directory", "version-mismatch", "a_build_without_a_library_it_links"),
    ("node3: bash: -c: line 0: syntax error near unexpected token `('", "launch-args",
     "launch_command_the_shell_cannot_parse"),
    ("ValueError: '127.0.1.1' is not in list", "hostname-loopback", "own_address_is_the_host_name_s_loopback"),
    ("RuntimeError: IP address 172.17.0.1 not found in cluster IPs: ['10.1.0.4', '10.1.0.5']", "wrong-interface",
     "own_address_is_docker_s_bridge"),
    ("ValueError: Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group or "
     "running the driver on a GPU node.", "device-mapping", "no_gpu_for_the_driver_on_its_node"),
    ("ValueError: Unrecognized distributed executor backend torchrun. Supported values are 'ray', 'mp' or custom "
     "ExecutorBase subclass.", "launch-args", "unknown_executor_backend"),
    ("ERROR: Could not find a version that satisfies the requirement torch-npu==2.1.0.post99", "version-mismatch",
     "no_release_satisfies_the_pins"),
    ("ImportError: numpy.core._multiarray_umath failed to import", "version-mismatch",
     "a_package_built_for_another_release"),
    ('time="2026-01-01T00:00:00Z" level=info msg="nvidia driver modules are not yet loaded, invoking runc"', "driver",
     "nvidia_driver_not_loaded_yet"),
])
def test_the_tools_own_wordings_are_read(text: str, category: str, ident: str) -> None:
    got = _best(text)
    assert got[0] == category and got[1].endswith(ident), got


@pytest.mark.parametrize("text", [
    "sbatch: Submitted batch job 15219016",
    "NCCL INFO ncclMaxSharedMem 65536 for cudaArch 900",
    "Using soc version: Ascend910B3",
    "ld: warning: creating DT_TEXTREL in a PIE",
    "Successfully installed numpy-1.26.4 protobuf-3.20.3",
    "INFO: node 10.0.0.2 is not in the list of draining nodes",
    "ValueError: 'x' is not in list",
])
def test_lines_that_are_not_these_failures(text: str) -> None:
    assert _best(text)[0] in {"unknown", "app-fault"}, _best(text)


def test_a_commit_message_wrapped_at_72_columns_is_read_whole() -> None:
    """git wraps a message at 72 columns: a line shorter than WRAP_MIN ends where the next word did not fit."""
    log = ("traceback: AssertionError: Using tensor model parallelism or context\n"
           "parallelism require setting the environment variable\n"
           "CUDA_DEVICE_MAX_CONNECTIONS to 1")
    assert _best(log)[0] == "launch-args"
    short = ["a short line", "and another one"]  # neither is wrapped: no joined view
    assert not list(joins(short))
