"""Round 38 (from the spent eighteenth set's misses): each rule generalizes a missed log to the tool's own message -
a launch script's broken continuation, a script path that does not exist, a compiler without the chip, ps-lite's
bind check, an HCA out of resources, torchelastic's etcd, Ray Client's start-up, a CANN operator's tiling, a host
buffer that cannot be pinned, an aclnn operator's unimplemented dtype, UCX's loopback and address version, the
Ascend driver's unsupported call and TGI's signalled download. The logs themselves are in the corpus, which holds
each to its answer."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("text", "category", "ident"), [
    ("tests/0day/qwen3/pretrain_qwen3_1point7b_4K_ptd.sh: line 124: --save: command not found", "launch-args",
     "an_option_run_as_a_command"),
    ("/usr/bin/python3: can't open file '/work/FSDP/./train.py': [Errno 2] No such file or directory", "launch-args",
     "launched_script_not_found"),
    ("bishengir-compile: for the --target option: Cannot find option named 'Ascend910B4-1'!", "version-mismatch",
     "compiler_without_this_chip"),
    ("[09:28:39] src/van.cc:291: Check failed: (my_node_.port) != (-1) bind failed", "port-in-use",
     "ps_lite_could_not_bind"),
    ("[1608298882.555115] [b2294:54275:0]   ib_md.c:1678 UCX  ERROR ibv_open_device(mlx5_0) failed: Cannot allocate "
     "memory", "rdma", "hca_out_of_resources"),
    ("[ERROR] 2020-03-23 00:47:29,754 client: Failed to get list of machines from http://etcd-service:2379/v2: "
     "MaxRetryError(...)", "rendezvous", "etcd_rendezvous_server_unreachable"),
    ("ConnectionAbortedError: Initialization failure from server:", "version-mismatch",
     "ray_client_refused_by_the_cluster"),
    ("E89999: [PID: 491533] op[GridSampler3D75], runParams is null.[FUNC:Tiling4GridSampler3D][FILE:grid_sampler_3d.cc]"
     "[LINE:157]", "app-fault", "operator_tiling_rejected_the_inputs"),
    ("RuntimeError: Unable to pin host memory with error code: -1", "memlock", "host_memory_could_not_be_pinned"),
    ("aclnnSWhereGetWorkspaceSize: Tensor condition not implemented for DT_FLOAT", "app-fault",
     "operator_rejected_its_arguments"),
])
def test_the_tools_own_wordings_are_read(text: str, category: str, ident: str) -> None:
    got = _best(text)
    assert got[0] == category and got[1].endswith(ident), got


def test_the_hca_resources_win_over_the_memory_words() -> None:
    """ENOMEM from ibv_open_device is the HCA's contexts (UAR pages), not the locked-memory limit."""
    log = ("[1608298882.555115] [b2294:54275:0] ib_md.c:1678 UCX  ERROR ibv_open_device(mlx5_0) failed: Cannot "
           "allocate memory\n[2605244.823409] mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 53945): ALLOC_UAR(0x802) "
           "op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x5a7939)")
    assert _best(log)[0] == "rdma"


@pytest.mark.parametrize(("text", "category", "ident"), [
    ("[1619044902.015564] [host:33810:0] sock.c:261 UCX ERROR connect(fd=23, dest_addr=127.0.0.1:47793) failed: "
     "Connection refused", "wrong-interface",
     "code.ucx.connect fd {} dest addr 127 0 0 1 {} failed connection refused"),
    ("[1618778295.702469] [jedi063:22469:0] address.c:917 UCX ERROR address version mismatch: expected 0, actual 12\n"
     "[jedi063:22469:0:22472] Caught signal 11 (Segmentation fault: invalid permissions for mapped object)",
     "version-mismatch", "code.ucx.address version mismatch expected {} actual {}"),
    ("Unable to halHostRegister: 65534\nRuntimeError: register ptr failed", "driver", "code.ascend_drv.65534"),
    ("Error: Download process was signaled to shutdown with signal 7", "shm", "code.exit_signal.-7"),
])
def test_codes_read_in_new_places(text: str, category: str, ident: str) -> None:
    assert _best(text) == (category, ident)


@pytest.mark.parametrize("text", [
    "bash: nvidia-smi: command not found",  # a missing tool is not a broken launch line
    "[dep_gen_collector.cpp:66] DepGenCollector: halHostRegister for dep_gen SHM failed: 8",  # no HAL call's code
    "INFO: tiling cache enabled for 12 operators",
    "RuntimeError: Destination is unreachable",
])
def test_lines_that_are_not_these_failures(text: str) -> None:
    assert _best(text)[1] not in {"family.any.an_option_run_as_a_command", "code.ascend_drv.8",
                                  "family.any.operator_tiling_rejected_the_inputs"} and not _best(text)[1].startswith(
        "code.ucx")


def test_a_remote_peer_on_127_0_1_1_is_the_hostnames_loopback() -> None:
    line = ("[1619044902.015564] [host:33810:0]  sock.c:261  UCX  ERROR connect(fd=23, dest_addr=127.0.1.1:47793) "
            "failed: Connection timed out")
    assert _best(line)[0] == "hostname-loopback"
