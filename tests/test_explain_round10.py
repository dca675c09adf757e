"""Issue 38, round 10 (written blind to the seventh frozen set): NCCL's socket on a container or overlay
interface read as ``wrong-interface`` when the log fails or stalls between hosts and names nothing else; a package's
submodule without an attribute, PEP 585 generics on an old Python, NumPy's ABI check and pip's Python requirement
read as ``version-mismatch``. The lines are real (tests/fixtures/explain/frozen5 and frozen6, spent; NCCL's and
Python's own wordings); the negative cases are healthy lines and application bugs that share the words."""

from __future__ import annotations

from preflight.explain.matcher import explain_texts

_LISTING = ("ip-172-31-0-137:14605:14673 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.137<0> "
            "[1]veth75fa783:fe80::14ad:64ff:fe64:b31e%veth75fa783<0>")


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"r.log": text}).best
    return (best.signature.id, best.signature.category) if best else ("", "unknown")


def test_a_generic_error_with_nccl_on_a_virtual_interface_is_the_interface() -> None:
    log = "\n".join([
        "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1229, "
        "unhandled system error, NCCL version 2.12.10",
        "ncclSystemError: System call (socket, malloc, munmap, etc) failed.",
        "INFO NET/Socket : Using", "[0]bond0:192.168.1.161<0>", "[1]br-05ab815fa14e:172.19.0.1<0>",
        "[2]veth6163fba:fe80::b878:6cff:fe52:abe2%veth6163fba<0>"])
    result = explain_texts({"r.log": log})
    assert result.best is not None
    assert (result.best.signature.id, result.best.signature.category) == (
        "family.nccl.virtual_socket_interface", "wrong-interface")
    assert "br-05ab815fa14e" in result.best.signature.cause and result.best.line_number == 5


def test_a_stall_between_hosts_with_nccl_on_a_virtual_interface_is_the_interface() -> None:
    log = "\n".join([
        "ip-172-31-0-137:14605:14673 [0] NCCL INFO Bootstrap : Using [0]ens5:172.31.0.137<0> "
        "[1]veth75fa783:fe80::14ad:64ff:fe64:b31e%veth75fa783<0>", _LISTING,
        "ip-172-31-0-137:14605:14688 [0] NCCL INFO Channel 00/04 :    0   1",
        "ip-172-31-0-137:14605:14688 [0] NCCL INFO Channel 00 : 1[1e0] -> 0[1e0] [receive] via NET/Socket/0"])
    assert _best(log) == ("family.nccl.virtual_socket_interface", "wrong-interface")


def test_a_virtual_interface_in_a_healthy_or_unrelated_log_claims_nothing() -> None:
    finished = "\n".join([
        _LISTING, "ip-172-31-0-137:14605:14688 [0] NCCL INFO Channel 00 : 1[1e0] -> 0[1e0] [receive] via NET/Socket/0",
        "ip-172-31-0-137:14605:14688 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1e0 - Init COMPLETE",
        "epoch 1 loss 0.31", "ip-172-31-0-137:14605:14605 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1e0 "
        "- Destroy COMPLETE"])
    assert _best(finished)[1] == "unknown"
    assert explain_texts({"r.log": finished}).clean is not None
    assert _best(_LISTING)[1] == "unknown"  # the listing alone: a healthy job prints it too
    assert _best(_LISTING + "\nepoch 1 step 20 loss 2.02")[1] == "unknown"
    # a named cause stays first: the shared memory of the container, not the interface
    named = _LISTING + "\nnode1:1:1 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment " \
        "/dev/shm/nccl-ABC (size 9637888)"
    assert _best(named)[1] == "shm"
    # only real interfaces listed: nothing to say about them
    plain = ("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1229, unhandled system error, NCCL version 2.12.10\n"
             "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0> [1]ib0:10.1.0.2<0>")
    assert _best(plain)[0] != "family.nccl.virtual_socket_interface"


def test_python_and_package_versions_by_their_own_wordings() -> None:
    for text in (
            "AttributeError: module 'megatron.mpu' has no attribute 'LinearWithGradAccumulationAndAsyncCommunication'",
            "TypeError: 'type' object is not subscriptable",
            "ValueError: numpy.ndarray size changed, may indicate binary incompatibility. Expected 96 from C header, "
            "got 88 from PyObject",
            "ERROR: Package 'vllm' requires a different Python: 3.8.10 not in '>=3.9'"):
        assert _best(text)[1] == "version-mismatch", text


def test_python_wordings_that_are_application_bugs_claim_nothing() -> None:
    for text in ("AttributeError: partially initialized module 'torch.distributed' has no attribute 'init' (most "
                 "likely due to a circular import)",
                 "AttributeError: module 'torch' has no attribute 'compiler'",  # a script named torch.py as often
                 "AttributeError: 'NoneType' object has no attribute 'shape'",
                 "TypeError: 'NoneType' object is not subscriptable"):
        assert _best(text)[1] == "unknown", text


def test_a_line_an_ascend_module_logged_is_not_read_by_torchs_tables() -> None:
    """HCCL's transport ``get socket timeout`` is its link setup timing out; c10d's store ``Socket Timeout`` template
    must not claim it (HCCL's log line format: ``[ERROR] HCCL(pid,process):timestamp [file:line] ...``)."""
    hccl = ("[ERROR] HCCL(2345,python):2024-01-01-10:00:00.000.000 [transport_manager.cc:100] [Get][Sockets]get "
            "socket timeout, socket timeout[120]s")
    assert _best(hccl)[1] == "hccl-timeout"
    assert _best("RuntimeError: Socket Timeout")[1] == "store-timeout"
