"""Round 33 (from the spent seventeenth set's misses): a library's own version guards, numpy 2's removed aliases, a CUDA
driver API missing from an older driver, Open MPI's version check, an unbracketed IPv6 rendezvous address, RDMA
registration and provider failures, operators rejecting their arguments, HCCL's two ends of a link disagreeing, a
device another process maps, ranks that never met at a store, and a device allocation that failed."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("text", "category"), [
    ("E  RuntimeError: Transformers version 4.57.3 exceeds version 4.43.4! After transformers version 4.43.4, BLOOM "
     "inference with DeepSpeed is no longer supported.", "version-mismatch"),
    ("RuntimeError: Dynamo is not supported on Python 3.12+", "version-mismatch"),
    ("    expected_size = np.product(local_shape)\nAttributeError: module 'numpy' has no attribute 'product'",
     "version-mismatch"),
    ("ImportError: /usr/lib/python3/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxDestroy", "driver"),
    ("ValueError: Port could not be cast to integer value as 'fd00:1::e1:52001'", "address-family"),
    ("Couldn't allocate MR with error=14\nfailed to create mr\nFailed to create MR", "rdma"),
    ("fi_getinfo: provider verbs returned -2 (No such file or directory)", "rdma"),
    ("RuntimeError: mat1 and mat2 must have the same dtype, but got Half and BFloat16", "app-fault"),
    ("RuntimeError: at::cuda::blas::bgemm<at::BFloat16> argument ldb must be positive and less than 2147483647 but "
     "got 2860646400", "app-fault"),
    ("ValueError: For 'Maximum', input1.shape=[0] and input2.shape=[8]", "app-fault"),
    ("RopeOperation_0 Wrong rotaryCoeff: 128", "app-fault"),
    ("HcomRecv failed, ret:4\nparameter tag, local end worldCommSendRecv_1_0, remote end worldCommSendRecv_0_1",
     "collective-mismatch"),
    ("Map reg addr fail, maybe others are using current device", "hccl-stale-process"),
    ("Unable to meet other processes at the rendezvous store", "rendezvous"),
    ("RuntimeError: Allocate memory failed.", "oom"),
])
def test_round33_causes_are_named(text: str, category: str) -> None:
    assert _best(text)[0] == category


def test_open_mpis_version_check_comes_before_the_daemon_it_loses() -> None:
    text = ("Open MPI detected a mismatch in versions between two processes.  This\ntypically means that you executed "
            "\"mpirun\" from one version and another process from another.\n\nORTE has lost communication with a "
            "remote daemon.\n")
    assert _best(text)[0] == "version-mismatch"


@pytest.mark.parametrize("text", [
    # a framework's own argument validation of a function (lowercase: not an operator) is the job's bug
    "RuntimeError: For 'load_param_into_net', adam_m.weight got its shape (1,) in 'net' and shape (256, 768)",
    # a healthy run's version banners
    "Transformers version 4.43.4, DeepSpeed 0.14.0, torch 2.3.1: BLOOM inference supported",
    "INFO: registering provider: verbs (1.0)",
])
def test_near_misses_are_not_claimed(text: str) -> None:
    assert _best(text)[0] not in {"driver", "app-fault", "version-mismatch", "rdma"}


@pytest.mark.parametrize("symbol", ["cudaGraphInstantiateWithFlags", "cutlass_gemm_kernel", "cublasLtMatmul"])
def test_the_runtimes_and_libraries_symbols_stay_versions(symbol: str) -> None:
    """cudart's ``cuda...`` and a library's own names are another release of a library, not the driver's API."""
    assert _best(f"ImportError: libfoo.so: undefined symbol: {symbol}")[0] == "version-mismatch"
