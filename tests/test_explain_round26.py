"""Issue 38's round 26, written blind to the sealed fifteenth set: an operator's own C++ check that failed
(``preflight.explain.op_checks``) is the job's fault when nothing else explains the log.

The layout is c10's (``c10/util/Exception.cpp``: the message, then ``Exception raised from FUNC at FILE:N (most
recent call first):`` and the frames) and libstdc++'s (``terminate called after throwing an instance of``, then
``what():``); the messages are aten's own TORCH_CHECK texts (``aten/src/ATen/native/Convolution.cpp``,
``Embedding.cpp``); none is a sealed log.
"""
# ruff: noqa: E501 (real log lines are long)

from __future__ import annotations

from preflight.explain.matcher import explain_texts
from preflight.explain.op_checks import check_failure

_CONV = """Traceback (most recent call last):
  File "train.py", line 88, in <module>
    out = model(batch)
RuntimeError: weight should have at least three dimensions
Exception raised from check_shape_forward at ../aten/src/ATen/native/Convolution.cpp:658 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f3a1c2b3047 in /opt/conda/lib/python3.10/site-packages/torch/lib/libc10.so)
frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64 (0x7f3a1c26e23d in /opt/conda/lib/python3.10/site-packages/torch/lib/libc10.so)
"""

_TERMINATE = """[rank3]: step 120 loss 2.113
terminate called after throwing an instance of 'c10::Error'
  what():  Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)
"""

_STORE = """RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer
Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:672 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f in /x/libc10.so)
"""


def test_an_operator_check_with_no_other_reading_is_the_jobs_fault() -> None:
    for text, line in ((_CONV, 4), (_TERMINATE, 3)):
        best = explain_texts({"rank3.log": text}).best
        assert best is not None
        assert (best.signature.id, best.signature.category, best.line_number) == \
            ("family.operator.check_failed", "app-fault", line)


def test_checks_of_the_distributed_layer_and_python_errors_are_not_an_operators() -> None:
    assert check_failure([_STORE.splitlines()]) is None
    assert check_failure([["Traceback (most recent call last):", '  File "train.py", line 3', "KeyError: 'model'"]]) \
        is None
    # a check whose message names memory, a device or a version is left to those readings
    assert check_failure([["RuntimeError: CUDA driver version is insufficient for CUDA runtime version",
                           "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44",
                           "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57"]]) is None
    best = explain_texts({"log.txt": _STORE}).best
    assert best is None or best.signature.id != "family.operator.check_failed"


def test_another_reading_comes_first() -> None:
    """A signature or a family that names the cause is kept: the operator layer runs only when nothing did."""
    text = "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<52311> with error 12, opcode 0, len 0, vendor err 129\n" \
        + _CONV
    best = explain_texts({"log.txt": text}).best
    assert best is not None and best.signature.category == "fabric"
