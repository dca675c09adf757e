"""Round 39 (from the spent nineteenth set's misses): each rule generalizes a missed log to the tool's own message -
CANN's HCCL window check and its operator packages for another SoC, torch_npu's lookup of a CANN function, two
Triton back ends, a compiler without a toolkit's headers, a verbs provider for another kernel, GPU memory that cannot
be shared (IPC handles, IOMMU passthrough, dma-buf), vLLM's placement on Ray, a CUDA text quoted without its article;
and the last layer says nothing when the nearest known cases disagree, and never reads Ray's exception wrapper as a
cause. The logs themselves are in the corpus, which holds each to its answer."""

from __future__ import annotations

import pytest

from preflight.explain.known_cases import Case, Index
from preflight.explain.matcher import explain_texts


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("text", "category", "ident"), [
    ("RuntimeError: Failed to find function HcclCommInitRootInfoConfig", "version-mismatch",
     "cann_without_a_function_torch_npu_calls"),
    ("RuntimeError: 2 active drivers ([<class 'triton.backends.ascend.driver.NPUDriver'>, <class "
     "'triton.backends.nvidia.driver.CudaDriver'>]). There should only be one.", "version-mismatch",
     "two_triton_back_ends"),
    ("csrc/flash.cpp:3:10: fatal error: cuda_runtime.h: No such file or directory", "version-mismatch",
     "a_build_without_the_toolkit_s_headers"),
    ("libibverbs: Warning: Driver bnxt_re does not support the kernel ABI of 8 (supports 1 to 1) for device "
     "/sys/class/infiniband/rdma0", "rdma", "verbs_provider_for_another_kernel"),
    ("proxy.cc:1232 NCCL WARN cudaIpcOpenMemHandle failed : invalid argument", "p2p", "gpu_memory_handle_not_shared"),
    ('init.cc:180 NCCL WARN Missing "iommu=pt" from kernel command line which can lead to system instablity or hang!',
     "p2p", "iommu_not_in_passthrough"),
    ("[1700000000.1] [n1:42:0] ib_md.c:520 UCX ERROR ibv_reg_dmabuf_mr(address=0x7f00, length=4096, access=0xf) "
     "failed: Operation not supported", "rdma", "dma_buf_registration_refused"),
    ("WARNING 05-02 10:00:00 ray_utils.py:300] Tensor parallel size (8) exceeds available GPUs (4). This may result "
     "in Ray placement group allocation failures.", "launch-args", "more_ranks_than_gpus"),
    ("(autoscaler +12s) Error: No available node types can fulfill resource request {'node:10.1.2.3': 0.001, 'GPU': "
     "1.0}. Add suitable node types to this cluster to resolve this issue.", "wrong-interface",
     "placement_pinned_to_an_address_ray_does_not_know"),
    ("[rank3]: EZ9999: Inner Error! HCCL_BUFFSIZE is too SMALL, should larger than 512MB.", "launch-args",
     "cann.hccl_buffsize_too_small"),
    ("AclNN_Parameter_Error(EZ1001): Get regInfo failed, The bin of socVersion [ascend910_93] does not support opType "
     "[AddRmsNormBias].", "version-mismatch", "cann.op_binary_for_another_soc"),
])
def test_the_tools_own_wordings_are_read(text: str, category: str, ident: str) -> None:
    got = _best(text)
    assert got[0] == category and got[1].endswith(ident), got


def test_the_hccl_window_wins_over_the_operator_code_before_it() -> None:
    """aclnn's 561002 on the line before is the consequence of the window HCCL_BUFFSIZE sets."""
    log = ("RuntimeError: npu_moe_distribute_dispatch_v2: call aclnnMoeDistributeDispatchV3 failed, error code is "
           "561002\nEZ9999: Inner Error!\nEZ9999[PID: 1] (EZ9999):  HCCL_BUFFSIZE is too SMALL, maxBs = 256, "
           "NEEDED_HCCL_BUFFSIZE(...) = 320MB, HCCL_BUFFSIZE=200MB.[FUNC:MoeDistributeDispatchA3TilingFuncImpl]")
    assert _best(log) == ("launch-args", "cann.hccl_buffsize_too_small")


def test_too_many_gpus_asked_is_named_before_the_pinned_placement() -> None:
    """The placement the cluster cannot give is the consequence when the launch asked for more GPUs than it has."""
    log = ("WARNING [ray_utils.py:556] Tensor parallel size (2) exceeds available GPUs (1).\n"
           "[autoscaler] Error: No available node types can fulfill resource request {'GPU': 1.0, "
           "'node:192.168.50.192': 0.001}.")
    assert _best(log)[0] == "launch-args"


def test_a_cuda_text_is_read_without_its_article_and_full_stop() -> None:
    assert _best("provided PTX was compiled with an unsupported toolchain")[1] == "code.cuda_error.222"


@pytest.mark.parametrize("text", [
    "Failed to find function 'main'. The imported TensorFlow GraphDef is ill-formed.",  # not a CANN function
    "RuntimeError: 0 active drivers ([]). There should only be one.",  # no back end: no device, not two builds
    "warning: unused variable 'x' in flash.cpp",
    "(autoscaler +6s) Error: No available node types can fulfill resource request {'CPU': 1.0, 'GPU': 0.5}.",
    "NCCL INFO Setting affinity for GPU 0 to ffff, iommu group 12",
])
def test_lines_that_are_not_these_failures(text: str) -> None:
    assert not _best(text)[1].endswith(("cann_without_a_function_torch_npu_calls", "two_triton_back_ends",
                                        "a_build_without_the_toolkit_s_headers", "iommu_not_in_passthrough",
                                        "placement_pinned_to_an_address_ray_does_not_know"))


def test_the_last_layer_is_silent_when_the_nearest_cases_disagree() -> None:
    words = frozenset({"nccl", "unhandled", "system", "error", "processgroupnccl", "socket", "malloc"})
    split = Index([Case(cat, f"s{n}", words | {f"x{n}"}) for n, cat in enumerate(("shm", "oom", "rdma", "shm"))]
                  + [Case("fabric", "other", frozenset({"link", "flap"}))])
    assert split.nearest(set(words), min_words=3) is None  # shm holds half the votes at most: no majority
    agree = Index([Case("shm", f"s{n}", words | {f"x{n}"}) for n in range(3)] + [Case("oom", "o", words)]
                  + [Case("fabric", "other", frozenset({"link", "flap"}))])
    found = agree.nearest(set(words), min_words=3)
    assert found is not None and found.category == "shm"


def test_rays_wrapper_is_no_resemblance() -> None:
    """A failed Ray task's wrapper line is in every failed Ray job: a missing data file is not an OOM lead."""
    log = ("ray.exceptions.RayTaskError(FileNotFoundError): ray::TaskRunner.run() (pid=34827, ip=172.17.0.5, "
           "actor_id=6de3b5cdc4feb78723a1aa2901000000, repr=<main_ppo.TaskRunner object at 0xfffc17a22fe0>)\n"
           "FileNotFoundError: Unable to find '/root/data/gsm8k/train.parquet'")
    assert _best(log)[0] == "unknown"
