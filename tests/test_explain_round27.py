"""Issue 38's round 27, written from the spent fifteenth set's misses: the tools' own wordings of failures no rule
read (each line is the tool's string, the file it is printed from in the comment; the folded logs that showed them
are in corpus.json).
"""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts


def _category(text: str) -> str:
    best = explain_texts({"log.txt": text}).best
    return best.signature.category if best else "unknown"


@pytest.mark.parametrize(("line", "category"), [
    # Slurm src/plugins/task/affinity/dist_tasks.c and src/common/slurm_errno.c (ESLURMD_CPU_BIND_ERROR)
    ("srun: error: CPU binding outside of job step allocation, allocated CPUs are: 0x01FFFE.", "launch-args"),
    ("srun: error: Task launch for StepId=77.2 failed on node n12: Unable to satisfy cpu bind request",
     "launch-args"),
    # Open MPI opal/mca/btl/tcp/btl_tcp_endpoint.c (4.x and 5.x wordings)
    ("[n2][[2215,1],4][btl_tcp_endpoint.c:626:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process "
     "identifier [[2215,1],7]", "wrong-interface"),
    ("[n2][[2215,1],4][btl_tcp_endpoint.c:676:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process "
     "identifier: got [[2215,1],7] expected [[2215,1],5]", "wrong-interface"),
    # PMIx's PMIX_ERROR_LOG of PMIx_Init's PMIX_ERR_NOT_FOUND
    ("[node140:12429] PMIX ERROR: NOT-FOUND in file client/pmix_client.c at line 562", "launch-args"),
    # OpenSSH sshd-auth.c / session.c: fatal("chroot(\"%s\"): %s", ...)
    ('chroot("/run/sshd"): Operation not permitted [preauth]', "ssh"),
    # NGC containers' entrypoint driver check
    ("ERROR: This container was built for NVIDIA Driver Release 550.54 or later, but", "driver"),
    # Transformer Engine transformer_engine/pytorch/quantization.py and utils.py
    ("AssertionError: Device compute capability 8.9 or higher required for FP8 execution.", "app-fault"),
    ("AssertionError: Device compute capability 10.0 or higher required for MXFP8 execution.", "app-fault"),
    ("ValueError: FP8 execution requires the product of all dimensions except the last to be divisible by 8 and "
     "the last dimension to be divisible by 16, but got tensor with dims=[3, 100]", "app-fault"),
    ("AssertionError: Cuda version 12.1 or higher required for FP8 execution on Ada.", "version-mismatch"),
    # Triton triton/runtime/_allocation.py
    ("RuntimeError: Kernel requires a runtime memory allocation, but no allocator was set. Use triton.set_allocator "
     "to specify an allocator.", "app-fault"),
    # torch/cuda/__init__.py _lazy_init; TensorFlow's visible_device_list check
    ("torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: device >= 0 && device "
     "< num_gpus INTERNAL ASSERT FAILED at \"../aten/src/ATen/cuda/CUDAContext.cpp\":50", "device-mapping"),
    ("E tensorflow/core/common_runtime/direct_session.cc:138] Invalid argument: 'visible_device_list' listed an "
     "invalid GPU id '3' but visible device count is 1", "device-mapping"),
    # MLIR's emitOpError layout, op-plugin's shape check
    ("error: 'tt.load' op operand #0 must be ptr or ranked tensor of ptr values", "app-fault"),
    ("RuntimeError: CrossShapeVerify failed, shape N of query must be one of the {64, 128}, but the value of "
     "query[2] is (16)", "app-fault"),
    # NCCL src/init.cc ncclGetErrorString's default
    ("Failed, NCCL error /src/plugins/ncclPlugin/allreducePlugin.cpp:183 'unknown result code'", "version-mismatch"),
    # sglang's assert_pkg_version; a library API called with another release's arguments
    ("Exception: sgl-kernel is installed with version 0.0.9, which is less than the minimum required version "
     "0.1.0. Please reinstall the latest version", "version-mismatch"),
    ("TypeError: torch.is_autocast_enabled() takes no arguments (1 given)", "version-mismatch"),
    # gpt-neox megatron/neox_arguments/arguments.py calculate_derived
    ("AssertionError: NeoXArgs.calculate_derived() (global_num_gpus / pp_size) / mp_size [(8 / 4) / 4] must be a "
     "whole number", "launch-args"),
    # a server binding a port under 1024 (TGI's router)
    ("thread 'main' panicked at 'error binding to 0.0.0.0:443: error creating server listener", "privileged-port"),
])
def test_the_tools_own_wordings_are_read(line: str, category: str) -> None:
    assert _category(line) == category


@pytest.mark.parametrize("line", [
    "INFO text_generation_router: Connected; listening on 0.0.0.0:80",
    "error binding to 0.0.0.0:8080: Address already in use",
    "TypeError: forward() takes 2 positional arguments but 3 were given",
    "Device compute capability 9.0 detected; FP8 execution enabled",
])
def test_their_neighbours_are_not(line: str) -> None:
    """A healthy listener, a high port already taken, the user's own function, a capability report: not these."""
    assert _category(line) in {"unknown", "port-in-use"}
    if "in use" in line:
        assert _category(line) == "port-in-use"
