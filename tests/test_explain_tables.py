"""The vendor code tables ``explain`` decodes with (``preflight.explain.tables.DECODERS``).

Every table names an https source and a version, and decodes a code that no log sample under
tests/fixtures/explain carries (``UNSEEN``: one case per table; a table joining ``DECODERS`` adds its own).
The lines of those cases are written from the vendor's own message text for the code, not copied from a log:
they test that a code is decoded from its table alone. The sealed ``frozen21/`` set is never opened
here.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.checks import all_checks
from preflight.explain import table_nccl_warn_rows
from preflight.explain.decode import CodeTable
from preflight.explain.signature import CATEGORIES
from preflight.explain.table_acl import ACL, ACLNN
from preflight.explain.table_c10d import TABLE as C10D
from preflight.explain.table_c10d_rows import ROWS as C10D_ROWS
from preflight.explain.table_cann import CANN, CANN_INNER, HCOMM
from preflight.explain.table_cann_ops import TABLE as CANN_OPS
from preflight.explain.table_cuda_error import TABLE as CUDA_ERROR
from preflight.explain.table_cuda_libs import TABLE as CUDA_LIBS
from preflight.explain.table_elastic import ROWS as ELASTIC_ROWS
from preflight.explain.table_elastic import TABLE as ELASTIC
from preflight.explain.table_exit import TABLE as EXIT
from preflight.explain.table_flash_attn import ROWS as FLASH_ATTN_ROWS
from preflight.explain.table_flash_attn import TABLE as FLASH_ATTN
from preflight.explain.table_gloo import ROWS as GLOO_ROWS
from preflight.explain.table_gloo import TABLE as GLOO
from preflight.explain.table_hccl import HCCL_RESULT, HCCL_RESULTS
from preflight.explain.table_launchers import (
    ACCELERATE,
    ACCELERATE_ROWS,
    DEEPSPEED,
    DEEPSPEED_ROWS,
    LIGHTNING,
    LIGHTNING_ROWS,
    REMOTE_SHELL,
    REMOTE_SHELL_ROWS,
)
from preflight.explain.table_mpi_slurm import OPENMPI, OPENMPI_ROWS, SLURM, SLURM_ROWS
from preflight.explain.table_nccl_result import TABLE as NCCL_RESULT
from preflight.explain.table_nccl_warn import TABLE as NCCL_WARN
from preflight.explain.table_nccl_warn import normalize
from preflight.explain.table_templates import key as template_key
from preflight.explain.table_torch_npu import TABLE as TORCH_NPU_ERR
from preflight.explain.table_ucx import ROWS as UCX_ROWS
from preflight.explain.table_ucx import TABLE as UCX
from preflight.explain.table_vllm import ROWS as VLLM_ROWS
from preflight.explain.table_vllm import TABLE as VLLM
from preflight.explain.table_xid import TABLE as XID
from preflight.explain.tables import DECODERS

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
SEALED = {"frozen21"}  # the sealed evaluation sets: not read, not listed

# table name -> (a line carrying a code, that code); the code must appear in no log sample
UNSEEN: dict[str, tuple[str, str]] = {
    # round 37: the EFA provider's own "RX entries exhausted", written from libfabric's efa_errno.h
    "efa": ("NCCL WARN NET/OFI Request 0x7f01 (recv) completed with error: err: 5, flags: 0, prov_errno: 4108, "
            "strerror: RX entries exhausted, len: 0", "4108"),
    # round 36: UCX's UCS_ERR_MESSAGE_TRUNCATED, written from UCX's status.c (round 38 folded a log of its
    # "Destination is unreachable" into the corpus)
    "ucx": ("[1712.1] [n1:77:0] tag_recv.c:102 UCX  ERROR ucp_tag_recv_nbx failed: Message truncated",
            "message truncated"),
    # round 34: FlashAttention 3's Hopper-only option, written from hopper/flash_api.cpp's TORCH_CHECK
    "flash_attn": ("RuntimeError: q_v is only supported for Hopper GPUs", "q v is only supported for hopper gpus"),
    "torch_npu_dist": ("RuntimeError: Unable to fetch master IP addr, environment variable is null.",
                       "unable to fetch master ip addr environment variable is null"),
    "ascend_drv": ("[drv api] drvGetDevNum failed: drvRetCode=34!", "34"),
    "dcmi": ("dcmi_get_device_health failed, ret = -8012", "-8012"),
    "cann_text": ("Config device_ip is missing in the ranktable file.", "EI0017"),
    "megatron": ("ValueError: num_query_groups (8) must be a multiple or divisor of tensor_model_parallel_size (3).",
                 "num query groups {} must be a multiple or divisor of tensor model parallel size {}"),
    # round 30: the spent sixteenth set's folded logs brought ATB's error 13 into the corpus
    "atb": ("[error] [4021] [operation_base.cpp:647] LinearOperation invalid param, setup check fail, error code: 6",
            "6"),
    "hip_error": ("RuntimeError: HIP error: too many resources requested for launch", "hipErrorLaunchOutOfResources"),
    "ge": ("E13024: Value [x] for environment variable [GE_USE_STATIC_MEMORY] is invalid. Reason: not a number.",
           "E13024"),
    "cann": ("EL0015: The device access is invalid.", "EL0015"),
    "hcomm": ("Communication_Error_Bind_IP_Port(EI0020): Failed to enable listening for the NPU network adapter "
              "socket. Reason: %s", "EI0020"),
    "cann_inner": ("E29999: Inner Error!", "E29999"),
    "horovodrun": ("Exception: Unable to find a set of common task-to-task communication interfaces: [(0, {'eth0': "
                   "[('10.0.0.2', 12345)]}), (1, {'ib0': [('10.1.0.3', 23456)]})]",
                   "unable to find a set of common task to task communication interfaces {}"),
    "ibv_wc_status": ("error polling HP CQ with status REMOTE ACCESS ERROR status number 10 for wr_id 2a8f0 opcode 1",
                      "10"),
    "cann_ops": ("E40002: Unsupported Python version: 3.7.5. Expected: 3.9 or later.", "E40002"),
    "hccl_result": ("HCCL function error: HcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, "
                    "&(comm->hcclComm_)), error code is 24", "24"),
    "acl": ("RuntimeError: ACL stream synchronize failed, error code:507054", "507054"),
    "aclnn": ("call aclnnMatmul failed, error code is 561112", "561112"),
    # written from torch_npu's deviceErrorMap (NPUQueue.cpp): "<name> happened."
    "torch_npu_device": ("RuntimeError: HCCL OP RETRY FAILED happened.", "HCCL OP RETRY FAILED"),
    "torch_npu_err": ("[ERROR] 2025-01-02-03:04:05 (PID:77, Device:3, RankID:3) ERR03003 GRAPH invalid value",
                      "ERR03003"),
    "nccl_warn": ("node-1:4242:4301 [3] bootstrap.cc:1014 NCCL WARN Bootstrap Root : rank 3 of 8 ranks has already "
                  "checked in", "bootstrap root: rank %d of %d ranks has already checked in"),
    # round 30: written from opbase's log.cpp message (a dtype check of aclnnAdd with the dtype it should be)
    "cann_opbase": ("EZ0019: Parameter self of Add has incorrect dtype DT_INT8. It should be DT_FLOAT16.", "EZ0019"),
    "cuda_error": ("torch.AcceleratorError: CUDA error: misaligned address", "716"),
    "cuda_libs": ("RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
                  "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"),
    "xid": ("kernel: NVRM: Xid (PCI:0000:3b:00): 94, pid=2154, name=python3, Contained ECC error.", "94"),
    # round 31: pynvml's class for NVML_ERROR_CORRUPTED_INFOROM (string.capwords of the name), nvmlErrorString's text
    "nvml": ("pynvml.nvml.NVMLError_CorruptedInforom: Corrupted infoROM", "14"),
    "nccl_result": ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                    "ProcessGroupNCCL.cpp:3356, NCCL operation in progress, NCCL version 2.21.5", "7"),
    # torch.distributed, the launchers, exit codes: template tables are keyed by the normalized template
    "c10d": ("[rank2]:[E ProcessGroupNCCL.cpp:1300] [PG 0 Rank 2] Heartbeat monitor timed out! Process will be "
             "terminated after dumping debug info.", "processgroupnccls watchdog got stuck for {} seconds without "
             "making progress in monitoring enqueued collectives"),
    "torch_elastic": ("RuntimeError: The rendezvous backend 'c10d' does not match the requested backend 'etcd'.",
                      "the rendezvous backend {} does not match the requested backend {}"),
    "exit_signal": ("  exitcode  : -8 (pid: 31337)", "-8"),  # SIGFPE (SIGBUS, SIGILL: carried by samples, rounds 5, 11)
    "gloo": ("what():  [../third_party/gloo/gloo/transport/tcp/pair.cc:1067] Read timeout [10.128.0.7]:17055",
             "read timeout {}"),
    "deepspeed_launcher": ("ValueError: Hostfile contains multiple entries for worker-1, unable to proceed with "
                           "launching", "hostfile contains multiple entries for {} unable to proceed with launching"),
    "accelerate_launcher": ("ValueError: You need to use at least 2 processes to use `--multi_gpu`.",
                            "you can only use one of cpu multi gpu tpu use deepspeed use fsdp at a time"),
    # pdsh pipecmd.c's message (round 17: the spent eleventh set brought ssh's host-key line into the corpus)
    "remote_shell": ("pdsh@head: node3: exec cmd ssh failed for host node3", "exec cmd {} failed for host {}"),
    # written from lightning 2.6.6's fabric/plugins/environments/slurm.py f-string (devices=4, 8 tasks per node)
    "lightning": ("ValueError: You set `devices=4` in Lightning, but the number of tasks per node configured in SLURM "
                  "`--ntasks-per-node=8` does not match. HINT: Set `devices=8`.",
                  "you set devices {} in lightning but the number of tasks per node configured in slurm ntasks per "
                  "node {} does not match"),
    # round 25: the fourteenth set's folded logs brought ORTE's lost-daemon line into the corpus
    "openmpi": ("An MPI communication peer process has unexpectedly disconnected.",
                "an mpi communication peer process has unexpectedly disconnected"),
    "slurm": ("slurmstepd: error: Exceeded step memory limit at some point.", "exceeded job memory limit"),
    # written from vllm/config's f-string (a 40-head model on 3 GPUs); round 40: the placement group's "number of
    # required GPUs exceeds" came into the corpus with the twentieth set's folded logs
    "vllm": ("ValueError: Total number of attention heads (40) must be divisible by tensor parallel size (3).",
             "total number of attention heads {} must be divisible by tensor parallel size {}"),
}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _sample_lines() -> list[str]:
    """Every line of every log sample under tests/fixtures/explain, the sealed set left out unlisted."""
    lines: list[str] = []
    for top, dirs, files in os.walk(FIXTURES):
        dirs[:] = sorted(d for d in dirs if not (Path(top) == FIXTURES and d in SEALED))
        for name in sorted(files):
            text = (Path(top) / name).read_text(encoding="utf-8", errors="replace")
            texts = _strings(json.loads(text)) if name.endswith(".json") else iter((text,))
            lines += [line for chunk in texts for line in chunk.splitlines()]
    return lines


SAMPLE_LINES = _sample_lines()


def test_samples_were_read() -> None:
    assert len(SAMPLE_LINES) > 500


@pytest.mark.parametrize("table", DECODERS, ids=lambda t: t.name)
def test_table_has_source_version_and_valid_entries(table: CodeTable) -> None:
    assert table.source.startswith("https://") and table.version
    assert table.entries
    for key, code in table.entries.items():
        assert key == code.code and code.name and code.meaning and code.fix, key
        assert code.category in CATEGORIES, (key, code.category)


def test_every_check_a_code_names_is_one_run_accepts() -> None:
    checks = all_checks()
    for table in DECODERS:
        for code in table.entries.values():
            for ident in code.checks:
                assert any(c.selected_by(ident) for c in checks), (table.name, code.code, ident)


def test_every_table_has_an_unseen_case() -> None:
    assert {t.name for t in DECODERS} <= set(UNSEEN), "add a case to UNSEEN for each table"
    assert len({t.name for t in DECODERS}) == len(DECODERS)


@pytest.mark.parametrize("table", DECODERS, ids=lambda t: t.name)
def test_decodes_a_code_no_sample_carries(table: CodeTable) -> None:
    line, code = UNSEEN[table.name]
    assert not any(d.code.code == code for sample in SAMPLE_LINES for d in table.decode(sample)), code
    decoded = table.decode(line)
    assert [d.code.code for d in decoded] == [code]
    assert code in decoded[0].describe() and table.source in decoded[0].describe()


# --- the Ascend tables ------------------------------------------------------------------------------


def test_ascend_table_sizes() -> None:
    # error_code.json's EE/EH/EI/EJ/EK/EL/EZ entries; hcomm's extra EI codes; the X9999 inner codes and the
    # runtime's E29999 / E39999 / EE8888;
    # hccl_types.h without HCCL_SUCCESS; aclError's non-zero codes; aclnnStatus's non-zero codes
    assert [len(t.entries) for t in (CANN, HCOMM, CANN_INNER, HCCL_RESULTS, ACL, ACLNN)] == [101, 4, 7, 25, 251, 26]
    assert {c[:2] for c in CANN.entries} == {"EE", "EH", "EI", "EJ", "EK", "EL", "EZ"}
    # the same error_code.json's operator / compiler / AI CPU / deployment / dump families, warnings left out
    assert len(CANN_OPS.entries) == 300
    assert {c[:2] for c in CANN_OPS.entries} == {"E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "EA", "EB", "EF",
                                                "EM", "EO", "EP"}


@pytest.mark.parametrize(("line", "code", "category"), [
    ("[rank0]: E90003: [PID: 9038] Compile operator failed, cause: Template constraint, detailed information: x",
     "E90003", "app-fault"),
    ("[PID: 1876100] 2026-01-21-17:28:55.945.983 Failure_to_Compile_Op(E40021): Failed to compile Op [x]",
     "E40021", "app-fault"),
    ("E30006: 2025-11-19-11:14:58.516.606 Failed to verify the OPP", "E30006", "version-mismatch"),
    ("[e39009] Failed to connect the device.", "E39009", "driver"),
    ("EP0002: Value x for configuration item dump_mode in configuration file acl.json is invalid.", "EP0002",
     "launch-args"),
])
def test_cann_ops_find_and_categories(line: str, code: str, category: str) -> None:
    decoded = CANN_OPS.decode(line)
    assert [(d.code.code, d.code.category) for d in decoded] == [(code, category)]


@pytest.mark.parametrize("line", ["E0813 06:19:49.809000 161210 site-packages/torch", "0xE40021 E600001 XE90003",
                                  "W40011: Failed to create disk cache directory", "EE1001 EI0006"])
def test_cann_ops_ignores_other_codes(line: str) -> None:
    assert CANN_OPS.find(line) == []


@pytest.mark.parametrize(("line", "codes"), [
    ("EI0006: Getting socket times out.", ["EI0006"]),
    ("[ERROR] ... [EI0006] get socket timeout", ["EI0006"]),
    ("Communication_Error_Get_Socket(ei0006): ...", ["EI0006"]),
    ("EZ9999[PID: 41421] 2026-07-12-17:20:56 In NO_QUANT situation, block_size should aligned to 16", ["EZ9999"]),
    ("EE9999: Inner Error!  EJ0001 after it", ["EE9999", "EJ0001"]),
    ("XEI0006 EI00061 0xEE1001", []),
])
def test_cann_find_tolerates_format(line: str, codes: list[str]) -> None:
    assert CANN.find(line) == codes


@pytest.mark.parametrize(("line", "code"), [
    ("aclrtSetDevice failed, ret = 507033", "507033"),
    ("SetDevice failed.ret=507033", "507033"),
    ("RuntimeError: ACL stream synchronize failed, error code:507035", "507035"),
    ("NPU function error: AclrtSynchronizeDeviceWithTimeout, ERROR CODE IS 507049", "507049"),
    ("wait for compute device to finish failed, runtime result = 507049", "507049"),
    ("[ERROR] RUNTIME(3132,python):2025-10-15-16:32:16 [stream.cc:1] error code 507015", "507015"),
    ("AclNN_Runtime_Error(EZ9903): aclrtLaunchKernelWithHostArgs failed: 507015", "507015"),
    ("launch err=507015 msg=EZ9999: Inner Error!", "507015"),
    ("returned acl_error_rt_aicore_exception", "507015"),
    ("OSError: (External) ACL error, the error code is : 500002", "500002"),  # Paddle's NPU plugin
    ("OSError:(External)ACL error,the error code is:500002", "500002"),
])
def test_acl_find_tolerates_format(line: str, code: str) -> None:
    assert [d.code.code for d in ACL.decode(line)] == [code]


@pytest.mark.parametrize("line", ["pid=507033 started", "copied 507033 bytes", "secret=507033", "ret=5070331"])
def test_acl_find_ignores_other_numbers(line: str) -> None:
    assert ACL.find(line) == []


@pytest.mark.parametrize(("line", "code"), [
    ("HCCL function error: HcclGetRootInfo(&hcclID), error code is 7", "7"),
    ("hccl function error :HcclGetRootInfo(&hcclID), Error code is 11", "11"),
    ("[ERROR] HCCL(17528,python3):... [AllReduce][Result]errNo[0x0000000005010009] hcclComm AllReduce error", "9"),
    ("[ERROR] HCCL(60570,):2025-12-04-14:46:07.911.325 [hccl_comm.cc:115] [Init]call trace: hcclRet -> 7", "7"),
])
def test_hccl_find_tolerates_format(line: str, code: str) -> None:
    assert [d.code.code for d in HCCL_RESULTS.decode(line)] == [code]


@pytest.mark.parametrize("line", ["error code is 9", "call trace: ret -> 7", "errNo[0x0000000000000009]"])
def test_hccl_find_needs_hccl_context(line: str) -> None:
    assert HCCL_RESULTS.find(line) == []


def test_categories_and_symptoms() -> None:
    assert ACL.entries["507033"].category == "driver"
    assert ACL.entries["207018"].category == CANN.entries["EI0011"].category == "oom"
    assert CANN.entries["EJ0003"].category == HCOMM.entries["EI0020"].category == "hccl-port"
    assert CANN.entries["EI0004"].category == "launch-args"
    assert CANN.entries["EZ9999"].category == ACL.entries["507015"].category == "app-fault"
    # codes that only report another rank's or layer's failure
    assert not any(c.root_cause for c in (CANN.entries["EI0002"], CANN.entries["EI0006"], ACL.entries["507046"],
                                          ACL.entries["507057"], HCCL_RESULTS.entries["9"]))
    assert CANN.entries["EJ0001"].root_cause and ACL.entries["507054"].root_cause


def test_hccl_result_keeps_the_catalog_view() -> None:
    assert HCCL_RESULT[7] == "HCCL_E_UNAVAIL (resource/port in use)" and HCCL_RESULT[24] == "HCCL_E_OOM"
    assert set(HCCL_RESULT) == {0, 1041, *range(1, 25)}


# --- the NVIDIA tables ------------------------------------------------------------------------------


def test_nvidia_table_sizes() -> None:
    # ncclResult_t 0-8 of nccl.h 2.30; NCCL WARN families (their templates: 2.3-2.30 wordings); cudaError_t of
    # CUDA 13.0 with cudaSuccess; the Xid catalog's rows
    # (round 31: + CUresult 202 and 916, which the runtime enum lacks)
    assert [len(t.entries) for t in (NCCL_RESULT, NCCL_WARN, CUDA_ERROR, XID)] == [9, 59, 135, 172]
    assert sum(len(row[6]) for row in table_nccl_warn_rows.ROWS) == 239


@pytest.mark.parametrize(("line", "codes"), [
    ("RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:514, unhandled system error, "
     "NCCL version 2.7.8", ["2"]),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
     "internal error - please report this issue to the NCCL developers, NCCL version 2.18.1", ["3"]),
    ("[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog thread terminated with exception: NCCL error: remote "
     "process exited or there was a network error, NCCL version 2.19.3", ["6"]),
    ("Test NCCL failure common.cu:958 'invalid usage (run with NCCL_DEBUG=WARN for details) / '", ["5"]),
    ("cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_UNHANDLED_CUDA_ERROR: unhandled cuda error", ["1"]),
    ("[rank0]: ncclsystemerror:  System call (e.g. socket, malloc) or external library call failed", ["2"]),
    ("node1:4242:4242 [0] NCCL INFO transport/net.cc:684 -> 2 [Async thread]", ["2"]),
    ("node1:4242:4242 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC", []),
    ("OSError: [Errno 22] Invalid argument", []),
    ("NCCL WARN Cuda failure 'invalid argument'", []),
])
def test_nccl_result_find_tolerates_format(line: str, codes: list[str]) -> None:
    assert NCCL_RESULT.find(line) == codes


@pytest.mark.parametrize(("line", "code"), [
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "700"),
    ("Search for `cudaErrorAssert' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for "
     "more information.", "710"),
    ("RuntimeError: cuda runtime error (59) : device-side assert triggered at /pytorch/aten/src/THC/generic/"
     "THCTensorMath.cu:26", "710"),  # CUDA 10.0's numbering: decoded by the text
    ("THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=66 error=46 : all CUDA-capable "
     "devices are busy or unavailable", "46"),
    ("misc/strongstream.cc:395 NCCL WARN Cuda failure 'operation not permitted when stream is capturing'", "900"),
    ("[rank3]: Cuda failure 222 'the provided PTX was compiled with an unsupported toolchain.'", "222"),
    ("Failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non "
     "supported HW", "804"),
    ("CUDA error at simpleP2P.cu:120 code=217(cudaErrorPeerAccessUnsupported) \"cudaDeviceEnablePeerAccess\"", "217"),
    ("cudaError_t 35", "35"),
    ("CUDA Error 802", "802"),
    ("RuntimeError: CUDA ERROR:  Out  Of Memory", "2"),
])
def test_cuda_error_find_tolerates_format(line: str, code: str) -> None:
    assert CUDA_ERROR.find(line) == [code]


@pytest.mark.parametrize("line", ["OSError: [Errno 22] Invalid argument", "the job ran out of memory",
                                  "unknown error in the parser", "error code 2", "cuda runtime error (59)"])
def test_cuda_error_needs_cuda_context(line: str) -> None:
    assert CUDA_ERROR.find(line) == []


@pytest.mark.parametrize(("line", "codes"), [
    ("[Tue Mar  4 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
     "off the bus.", ["79"]),
    ("kernel: NVRM: Xid (0000:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0)", ["13"]),
    ("NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
     ["45", "149"]),
    ("GPU 0000:3b:00.0 reported XID error 48", ["48"]),
    ("event: xid=119 on node-7", ["119"]),
    ("pid=79 xidx 5", []),
])
def test_xid_find_tolerates_format(line: str, codes: list[str]) -> None:
    assert XID.find(line) == codes


def test_xid_categories_follow_the_catalog() -> None:
    assert XID.entries["79"].category == XID.entries["48"].category == "driver"  # fatal: reset, reboot, RMA
    assert XID.entries["13"].category == XID.entries["31"].category == "app-fault"  # RESTART_APP
    assert XID.entries["79"].root_cause and not XID.entries["45"].root_cause and not XID.entries["63"].root_cause


_WARN = "NCCL WARN "


@pytest.mark.parametrize(("line", "name"), [
    # the same failure in the wordings of NCCL 2.10-2.19, 2.20-2.23 and 2.29+, and as torch's "Last error:" quotes it
    ("h:1:2 [0] transport/net_ib.cc:1295 " + _WARN + "NET/IB : Got completion from peer 10.0.0.2<46532> with error "
     "12, opcode 0, len 0, vendor err 129", "NET/IB: completion error"),
    ("h:1:2 [0] transport/net_ib.cc:1396 " + _WARN + "NET/IB : Got completion from peer 10.0.0.2<46532> with "
     "status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2",
     "NET/IB: completion error"),
    ("h:1:2 [0] transport/net_ib/p2p.cc:1033 " + _WARN + "NET/IB: Got completion from peer 10.0.0.2<46532> with "
     "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 localGid ::ffff:10.0.0.1 hca mlx5_0",
     "NET/IB: completion error"),
    ("net/ib :  GOT COMPLETION FROM PEER 10.42.0.2<47534> WITH ERROR 5, opcode 48, len 32764, vendor err 244",
     "NET/IB: completion error"),
    ("h:1:2 [0] misc/socket.cc:484 " + _WARN + "Net : Connect to 10.0.0.2<45763> failed : Connection refused",
     "NET/Socket: connect failed"),
    ("h:1:2 [0] misc/socket.cc:484 " + _WARN + "socketStartConnect: Connect to 10.0.0.2<45763> failed : No route "
     "to host", "NET/Socket: connect failed"),
    ("h:1:2 [0] os/linux.cc:302 " + _WARN + "ncclSocketConnect: connect to 10.0.0.2<45763> failed : Connection "
     "timed out", "NET/Socket: connect failed"),
    ("h:1:2 [0] misc/shmutils.cc:95 " + _WARN + "Error while creating shared memory segment /dev/shm/nccl-AbC123 "
     "(size 9637888), error: No space left on device (28)", "SHM: segment not created"),
    ("h:1:2 [0] misc/ipcsocket.cc:152 " + _WARN + "UDS: Sending data over socket /tmp/nccl-socket-1-2 failed : "
     "Connection refused (111)", "P2P: handle exchange failed"),
    ("h:1:2 [0] ras/ras.cc:1050 " + _WARN + "NCCL version mismatch with remote peer 10.0.0.2<28028> (local: 22602, "
     "remote 22503)", "RAS: version mismatch"),
    # NCCL 2.3-2.9 wordings (before the peer's address was printed; include/core.h's SYSCHECK "Call to <call> ...")
    ("h:1:2 [0] transport/net_ib.cc:788 " + _WARN + "NET/IB : Got completion with error 12, opcode 1, len 0, vendor "
     "err 129", "NET/IB: completion error"),
    ("h:1:2 [0] include/socket.h:390 " + _WARN + "Connect to 10.0.0.2<39615> failed : No route to host",
     "NET/Socket: connect failed"),
    ("h:1:2 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out", "NET/Socket: connect failed"),
    ("h:1:2 [0] include/socket.h:403 " + _WARN + "Net : Connection closed by remote peer",
     "NET/Socket: connection closed by peer"),
    ("h:1:2 [0] include/shm.h:26 " + _WARN + "Unable to allocate shared memory (9637888 bytes) : No space left on "
     "device", "SHM: segment not created"),
    ("h:1:2 [0] misc/nvmlwrap.cc:62 " + _WARN + "nvmlInit_v2() failed: Driver/library version mismatch",
     "NVML: NVML unusable"),
])
def test_nccl_warn_find_tolerates_format(line: str, name: str) -> None:
    assert [d.code.name for d in NCCL_WARN.decode(line)] == [name]


@pytest.mark.parametrize("line", ["ssh: connect to host 10.0.0.2 port 22: Connection refused", "Duplicate key detected",
                                  "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1"])
def test_nccl_warn_ignores_other_lines(line: str) -> None:
    assert NCCL_WARN.find(line) == []


def _instance(template: str) -> str:
    """A template with sample values in its fields, as NCCL would print it."""
    values = {"s": "mlx5_0", "m": "Cannot allocate memory", "d": "12", "i": "12", "u": "7", "x": "1f", "X": "1F",
              "p": "0x55d0c8a0", "f": "1.5", "g": "1.5", "c": "x", "%": "%"}
    return re.sub(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?([sdiuxXpmfgc%])", lambda m: values[m[1]], template)


def test_nccl_warn_rows_find_their_own_templates() -> None:
    for *_, templates in table_nccl_warn_rows.ROWS:
        assert templates and all(re.fullmatch(r"2\.\d+(?:-2\.\d+)?", versions) for _, versions in templates)
        key = normalize(templates[0][0])
        for template, _ in templates:
            assert key in NCCL_WARN.find("h:1:2 [0] x.cc:1 NCCL WARN " + _instance(template)), template
    entry = NCCL_WARN.entries
    assert entry[normalize("Call to ibv_reg_mr failed")].category == "memlock"
    assert not entry[normalize("socketProgress: Connection closed by remote peer %s")].root_cause


# --- torch.distributed, torchrun, gloo, the launchers, exit codes and signals -----------------------


TEMPLATE_TABLES = ((C10D, C10D_ROWS), (ELASTIC, ELASTIC_ROWS), (GLOO, GLOO_ROWS), (DEEPSPEED, DEEPSPEED_ROWS),
                   (ACCELERATE, ACCELERATE_ROWS), (REMOTE_SHELL, REMOTE_SHELL_ROWS), (OPENMPI, OPENMPI_ROWS),
                   (SLURM, SLURM_ROWS), (VLLM, VLLM_ROWS), (LIGHTNING, LIGHTNING_ROWS),
                   (FLASH_ATTN, FLASH_ATTN_ROWS), (UCX, UCX_ROWS))


def test_launcher_table_sizes() -> None:
    assert [len(t.entries) for t, _ in TEMPLATE_TABLES] == [61, 22, 20, 14, 9, 7, 21, 18, 23, 7, 7, 15]
    # + 46: c10d's torch 1.x wordings (round 10); + 5: Open MPI's hostfile and srun help texts (round 14)
    # - 1: c10d's debug "Remote peer closed the connection." is no failure (recorded_h200_3, a clean exit prints it)
    # + 17: Lightning's device and launcher checks (recorded_h200_4 showed the first)
    # + 7 + 2 (round 21): OpenSSH's key and directory permission texts; Open MPI's refusal to run as root
    # + 1 (round 23): Open MPI's "No nodes are available" (DeepSpeed's "No slot" moved to a row of its own)
    # + 3 (round 25): OpenSSH's changed host key under strict checking (2), Slurm's plugin that cannot load
    # + 3 rows, 5 templates (round 27): Open MPI's TCP BTL reaching another process (2), PMIx without a server;
    # Slurm's CPU binding outside the step (2); + 6 templates (round 29): the rest of rendezvous.py's checks
    # + 1 (round 33): Open MPI's check of its processes' versions; + 7 rows, 25 templates (round 34): FlashAttention
    # + 12 rows, 40 templates (round 36): UCX's status texts, mlx5 syndromes and transport messages; + 3 rows, 5
    # templates (round 38): UCX dialling a loopback address, its address version
    assert sum(len(row.templates) for _, rows in TEMPLATE_TABLES for row in rows) == \
        259 + 36 + 46 + 5 - 1 + 17 + 9 + 1 + 3 + 5 + 6 + 1 + 25 + 40 + 5
    assert len(EXIT.entries) == 67  # signals 1-31 as -N and 128+N, exit 1, 2, 126, 127, 255


def _filled(template: str) -> str:
    """A template with sample values where the log has them."""
    return re.sub(r"\{addr\}", "10.0.0.2", re.sub(r"\{\}|%l?[sdu]", "x1", template))


@pytest.mark.parametrize(("table", "rows"), TEMPLATE_TABLES, ids=lambda v: getattr(v, "name", ""))
def test_every_template_finds_its_row(table: CodeTable, rows: Any) -> None:
    for row in rows:
        assert table.entries[template_key(row.templates[0])].name == row.name
        for template in row.templates:  # a UCX line names UCX (the table's required markers)
            found = table.find(("UCX  ERROR " if table is UCX else "prefix: ") + _filled(template) + " :suffix")
            assert template_key(row.templates[0]) in found, template


@pytest.mark.parametrize(("table", "line", "name"), [
    # the same failure in several torch versions' wordings, cases, spacings and punctuation
    (C10D, "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/3 clients joined.",
     "store: waiting for clients timed out"),  # 2.4+
    (C10D, "RuntimeError: timed out after 6 SECONDS waiting for workers -- 1/2 workers joined",
     "store: waiting for clients timed out"),  # 2.2's wording
    (C10D, "[W socket.cpp:426] [c10d] The server socket has failed to listen on [::]:29500 (errno: 98 - Address "
           "already in use).", "store: server cannot listen"),  # 1.13 - 2.3
    (C10D, "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
           "address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
     "store: server cannot listen"),  # 2.4+ (libuv)
    (C10D, "[E ProcessGroupNCCL.cpp:467] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] "
           "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=1800000) "
           "ran for 1800683 milliseconds before timing out.", "NCCL watchdog: collective timeout"),  # 1.13 - 2.1
    (C10D, "[rank0]:[E1218 ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) Rank 0] Process group watchdog thread "
           "terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
           "OpType=BROADCAST) ran for 600081 milliseconds before timing out.",
     "NCCL watchdog: collective timeout"),  # 2.4+
    (C10D, "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d "
           "key-value store by key '0', but store->get('0') got error: Socket Timeout",
     "NCCL unique id not received"),  # 1.13's spelling
    (C10D, "TORCH.DISTRIBUTED.DISTNETWORKERROR:   the client socket has timed out after 60S while trying to connect "
           "to (MASTER-0, 29500)", "store: client connect timed out"),
    (C10D, "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the "
           "remote server shutdown or crash?", "store: server closed the connection"),
    (GLOO, "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [10.0.0.3]:3210: "
           "Connection timed out", "connect: timed out"),  # before 2023
    (GLOO, "RuntimeError: [gloo/transport/tcp/pair.cc:144] connect: Connection timed out, remote=[10.0.0.3]:3210",
     "connect: timed out"),  # after
    (GLOO, "gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 8773632 vs 8386560",
     "collective size mismatch"),  # before 2025
    (GLOO, "Received data size doesn't match expected size. Is there a distributed collective mismatch in your "
           "code?", "collective size mismatch"),  # after
    (ELASTIC, "[INFO] Rendezvous timeout occured in EtcdRendezvousHandler", "rendezvous: etcd timeout"),  # 1.13
    (ELASTIC, "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "RendezvousTimeoutError"),
    (DEEPSPEED, "Hostfile is not formatted correctly, unable to proceed with training.",
     "hostfile malformed"),  # 0.6
    (DEEPSPEED, "ValueError: Hostfile is empty or not formatted correctly, unable to proceed with launching.",
     "hostfile malformed"),  # 0.9+
    (OPENMPI, "PRTE was unable to reliably start one or more daemons.", "daemons not started"),  # Open MPI 5
    (OPENMPI, "While the primary job  terminated normally, 2 processes returned", "a rank returned non-zero"),  # 4.1
    (OPENMPI, "Primary job  terminated normally, but 1 process returned", "a rank returned non-zero"),  # 3.1 / 4.0
    (SLURM, "slurmstepd: error: Detected 1 oom-kill event(s) in step 4242.batch cgroup. Some of your processes may "
            "have been killed by the cgroup out-of-memory handler.", "oom-kill event"),  # 22.05
    (REMOTE_SHELL, "pdsh@node0: node1: ssh exited with exit code 255", "pdsh: remote command failed"),
    # vLLM: V0's and V1's wordings of the same check
    (VLLM, "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
           "stored in KV cache (21584). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
           "initializing the engine.", "max model len larger than the KV cache"),  # V0 worker
    (VLLM, "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache "
           "is needed, which is larger than the available KV cache memory (9.84 GiB). Based on the available "
           "memory, the estimated maximum model length is 80560.", "max model len larger than the KV cache"),  # V1
    (VLLM, "AssertionError: please set tensor_parallel_size to less than max local gpu count",
     "more workers than local GPUs"),  # 0.4's multiproc executor
    (VLLM, "RuntimeError: please set tensor_parallel_size (8) to less than max local gpu count (4)",
     "more workers than local GPUs"),  # 0.6+
    (VLLM, "(VllmWorker rank=0 pid=4242) AssertionError: local_world_size (8) must be less than or equal to the "
           "number of visible devices (2).", "more workers than local GPUs"),  # V1 worker
    (VLLM, "ValueError: Cannot provide a placement group of placement_group_specs=[{'GPU': 1.0, 'node:10.0.0.5': "
           "0.001}, {'GPU': 1.0}] within 1800 seconds. See `ray status` and `ray list nodes` to make sure the "
           "cluster has enough resources.", "Ray: placement group not ready"),
    (VLLM, "ValueError: Cannot provide a placement group requiring 8.0 GPUs (placement_group_specs=[...]) within "
           "1800 seconds.", "Ray: placement group not ready"),
    (VLLM, "ERROR 11-21 23:27:12 [ray_executor_v2.py:464] RayWorkerProc rank=[3] died unexpectedly, shutting down "
           "executor.", "worker process died"),
    (VLLM, "ERROR 08-01 10:00:00 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 3141 died, exit code: "
           "-9", "worker process died"),  # V0
])
def test_template_tables_tolerate_versions_and_format(table: CodeTable, line: str, name: str) -> None:
    assert table.entries[table.find(line)[0]].name == name


@pytest.mark.parametrize(("table", "line"), [
    (GLOO, "ssh: connect to host 10.0.0.5 port 2222: Connection refused"),
    (GLOO, "worker:1:2 [0] NCCL INFO Call to connect returned Connection timed out, retrying"),
    (GLOO, "recvValue failed on SocketImpl(fd=3, addr=[127.0.0.1]:5000, remote=[127.0.0.1]:29500)"),
    (C10D, "node:1:2 [5] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to send to 10.0.0.2<52905> failed : "
           "Connection reset by peer"),
    (C10D, "ssh: Could not resolve hostname worker-9: Name or service not known"),
    (SLURM, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
    (OPENMPI, "the client socket has failed to connect"),
    (EXIT, "Epoch 3: exit early at step 137"),
    (VLLM, "INFO 05-06 16:54:40 [gpu_worker.py:276] Available KV cache memory: 9.84 GiB"),
    (VLLM, "INFO 05-06 16:54:40 [utils.py:120] Port 8000 is already in use, trying port 8001"),
    (VLLM, "ValueError: 12 is not divisible by 8"),
])
def test_template_tables_ignore_other_lines(table: CodeTable, line: str) -> None:
    assert table.find(line) == []


# torch 1.x c10d (torch/lib/c10d at f64e8238, torch 1.0-1.12's distributed_c10d.py / rendezvous.py): one line per
# wording, as the source prints it (a RuntimeError / ValueError through pybind11, or `what():` from a C++ thread)
C10D_1X = [
    ("RuntimeError: connect() timed out.", "store: connect() timed out"),  # Utils.hpp kConnectTimeoutMsg
    ("terminate called after throwing an instance of 'std::runtime_error'   what():  connect() timed out.",
     "store: connect() timed out"),
    ("RuntimeError: waiting for processes to connect has timed out", "store: waiting for clients timed out"),
    ("ValueError: cannot find host to listen on: Servname not supported for ai_socktype",
     "store: server socket init failed"),  # tcputil::listen
    ("ValueError: host not found: Name or service not known", "errno: name resolution"),  # tcputil::connect
    ("ValueError: host not found: No address associated with hostname", "errno: name resolution"),
    ("host not found: Temporary failure in name resolution", "errno: name resolution"),
    ("RuntimeError: Timed out initializing process group in store based barrier on rank: 3, for key: "
     "store_based_barrier_key:1 (world_size=8, worker_count=5, timeout=0:30:00)",
     "store: store-based barrier timed out"),  # distributed_c10d._store_based_barrier, 1.8-1.12
    ("RuntimeError: Stop_waiting response is expected", "store: reply out of step"),  # TCPStore::doWait
    ("RuntimeError: ready or not_ready response expected", "store: reply out of step"),  # TCPStore::check
    ("  what():  Unexpected poll revent on the master's listening socket: 25: Software caused connection abort",
     "store: daemon socket error"),  # TCPStoreMasterDaemon::run
    ("  what():  Unexpected poll revent on the control pipe's reading fd: 17: Software caused connection abort",
     "store: daemon socket error"),
    ("RuntimeError: Failed to create the control pipe to start the BackgroundThread run",
     "store: control pipe not created"),
    ("RuntimeError: flock: No locks available", "FileStore: file cannot be locked"),  # FileStore's Lock
    ("RuntimeError: flock: Function not implemented", "FileStore: file cannot be locked"),
    ("RuntimeError: Number of workers for FileStore should be greater than zero", "init_method incomplete"),
    ("RuntimeError: NCCL communicator was aborted.", "NCCL: communicator aborted"),  # NCCLUtils.hpp
    ("I0312 ProcessGroupNCCL.cpp:519] [Rank 0] Found key in store: NCCLABORTEDCOMM:3a9f1c, from rank: 1, aborting "
     "appropriate communicators", "NCCL: communicator aborted"),
    ("I0312 ProcessGroupNCCL.cpp:505] [Rank 1] Watchdog wrote aborted communicator id to store: NCCLABORTEDCOMM:3a9f1c",
     "NCCL: communicator aborted"),
    ("I0312 ProcessGroupNCCL.cpp:320] [Rank 1] Wrote aborted communicator id to store: NCCLABORTEDCOMM:3a9f1c",
     "NCCL: communicator aborted"),
    ("I0312 ProcessGroupNCCL.cpp:470] [Rank 2] Received NCCL errors for communicators in the cache: ",
     "NCCL: work failed in watchdog"),
    ("RuntimeError: NCCL error: unhandled system error, NCCL version 2.7.8", "NCCL error (wrapped)"),  # watchdog
    ("E0312 ProcessGroupNCCL.cpp:238] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
     "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this "
     "inconsistency, we are taking the entire process down.", "NCCL: operations failed or timed out"),
    ("W0312 ProcessGroupNCCL.cpp:1569] Rank 3 using best-guess GPU 3 to perform barrier as devices used by this "
     "process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect."
     "Specify device_ids in barrier() to force use of a particular device.", "NCCL: device guessed from rank"),
    ("RuntimeError: ProcessGroupNCCL only supports send for NCCL lib version >= 2.7.0",
     "NCCL process group lacks the operation"),
    ("RuntimeError: ProcessGroupNCCL only supports alltoall* for NCCL lib version >= 2.7.0",
     "NCCL process group lacks the operation"),
    ("RuntimeError: allreduce_coalesced is currently not supported with NCCL",
     "NCCL process group lacks the operation"),
    ("RuntimeError: no support for allgather_coalesced in this process group",
     "NCCL process group lacks the operation"),  # ProcessGroup.cpp
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
     "NCCL: no GPU for the process group"),
    ("RuntimeError: Not able to create/get the NCCL Communicator since the GPU devices are not known",
     "NCCL: no GPU for the process group"),
    ("RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build PyTorch from "
     "source on a host that has MPI installed.", "MPI not built in"),
    ("RuntimeError: Used MPI implementation doesn't have the minimum level of threading support: "
     "MPI_THREAD_SERIALIZED. This is required by c10d package", "MPI lacks what c10d needs"),
    ("RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
     "MPI lacks what c10d needs"),
    ("RuntimeError: More than one process group created, this is not supported due to the used MPI implementation "
     "doesn't provide the full support of multi-threading", "MPI lacks what c10d needs"),
    ("RuntimeError: MPI error in: /pytorch/torch/lib/c10d/ProcessGroupMPI.cpp:127, with error code: 15", "MPI error"),
    ("RuntimeError: Cannot resolve node-7 to a (local) address", "Gloo: host name not bindable"),
    ("RuntimeError: makeDeviceForInterface(): unsupported gloo device", "Gloo: unsupported device transport"),
    ("RuntimeError: makeDeviceForHostname(): unsupported gloo device", "Gloo: unsupported device transport"),
    ("No ranks successfully processed in monitoredBarrier.", "monitoredBarrier: rank missing"),
    ("AssertionError: Default process group is not initialized", "process group not initialized"),
    ("RuntimeError: trying to initialize the default process group twice!", "process group initialized twice"),
    ("ValueError: Error initializing torch.distributed using tcp:// rendezvous: port number missing",
     "init_method incomplete"),  # rendezvous.py
    ("ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
     "init_method incomplete"),
    ("ValueError: Error initializing torch.distributed using file:// rendezvous: world size parameter missing",
     "init_method incomplete"),
    ("ValueError: Error initializing torch.distributed using file:// rendezvous: path missing",
     "init_method incomplete"),
    ("RuntimeError: No rendezvous handler for localhost://", "init_method incomplete"),
]


@pytest.mark.parametrize(("line", "name"), C10D_1X)
def test_c10d_decodes_torch_1x_wordings(line: str, name: str) -> None:
    assert C10D.entries[C10D.find(line)[0]].name == name


@pytest.mark.parametrize("line", [
    "java.net.SocketTimeoutException: connect timed out",
    "nginx: [emerg] host not found in upstream \"backend:8080\" in /etc/nginx/conf.d/app.conf:3",
    "flock: failed to get lock",
    "curl: (28) Operation timed out after 30001 milliseconds with 0 bytes received",
    "RuntimeError: Operation timed out!",  # torch 1.x Work::wait: too generic a wording to be a template
])
def test_c10d_torch_1x_wordings_stay_specific(line: str) -> None:
    assert C10D.find(line) == []


def test_c10d_init_method_row_leaves_env_to_its_own() -> None:
    line = ("Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
            "but not set")
    assert [C10D.entries[k].name for k in C10D.find(line)] == ["env:// variable not set"]


@pytest.mark.parametrize(("line", "code"), [
    ("  exitcode  : -9 (pid: 2412)", "-9"),  # torchrun's failure summary
    ("failed (exitcode: -6) local_rank: 0 (pid: 12) of binary: /usr/bin/python3", "-6"),  # its agent
    ("  traceback : Signal 11 (SIGSEGV) received by PID 2413", "-11"),
    ("[launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exits with return code = -15", "-15"),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGBUS", "-7"),
    ("mpirun noticed that process rank 3 with PID 0 on node gpu-2 exited on signal 9 (Killed).", "-9"),
    ("prterun noticed that process rank 0 with PID 77 on node n1 exited on\nsignal 6 (Aborted).", "-6"),
    ("pdsh@n0: n1: ssh killed by signal 13", "-13"),
    ("subprocess.CalledProcessError: Command '['python', 'x.py']' died with <Signals.SIGKILL: 9>.", "-9"),
    ("subprocess.CalledProcessError: Command 'ssh n1 hostname' returned non-zero exit status 255.", "255"),
    ("srun: error: gpu-7: tasks 0-3: Segmentation fault (core dumped)", "-11"),
    ("/opt/job/run.sh: line 12: 31337 Killed                  python train.py", "-9"),
    ("Bus error (core dumped)", "-7"),
    ("    Exit Code:    137", "137"),  # kubectl describe pod
    ("Last State: Terminated  Reason: Error  Exit Code: 139", "139"),
    ("srun: error: gpu-7: task 1: Exited with exit code 127", "127"),
])
def test_exit_find_reads_each_launchers_form(line: str, code: str) -> None:
    assert EXIT.find(line) == [code]


def test_exit_signals_are_linux_numbers_and_texts() -> None:
    import signal

    for n in range(1, 32):
        code = EXIT.entries[f"-{n}"]
        assert EXIT.entries[str(128 + n)].category == code.category
        if hasattr(signal, code.name) and signal.Signals[code.name] == n and hasattr(signal, "strsignal"):
            assert signal.strsignal(n) is None or f"'{signal.strsignal(n)}'" in code.meaning, n


def test_launcher_categories_and_symptoms() -> None:
    assert EXIT.entries["-9"].category == EXIT.entries["137"].category == "oom" and EXIT.entries["-9"].root_cause
    assert EXIT.entries["-7"].category == "shm" and EXIT.entries["-15"].category == "launch-args"
    # a bare SIGABRT names nothing by itself (issue 38, round 2): the watchdog's or the C++ exception's line does
    assert EXIT.entries["-6"].category == "unknown" and EXIT.entries["-11"].category == "app-fault"
    # pure symptoms: a peer's exit echo, a watchdog timeout another rank caused, torchrun's summary
    for table, name in [(C10D, "NCCL watchdog: collective timeout"), (C10D, "store: server closed the connection"),
                        (ELASTIC, "ChildFailedError"), (ELASTIC, "agent: closing the other workers"),
                        (GLOO, "connection closed by peer"), (OPENMPI, "rank killed by a signal"),
                        (SLURM, "cancelled: task failure"), (DEEPSPEED, "worker exited"),
                        (VLLM, "worker process died"), (VLLM, "engine core failed to start"),
                        (VLLM, "front-end handshake timed out")]:
        assert not next(c for c in table.entries.values() if c.name == name).root_cause, name
    assert not EXIT.entries["-6"].root_cause and not EXIT.entries["-15"].root_cause


def test_torch_npu_err_codes_claim_only_what_they_say() -> None:
    """torch_npu's ERRxxyyy (NPUException.h): 5 submodules x 15 codes and ERR99999; an operator's rejection is the
    job's (app-fault), a memory error oom, a failed ACL/HCCL/GE call or an internal error claims nothing. Lines from
    vllm-project/vllm-ascend#3378 (ERR01001, ERR99999), Ascend/pytorch#66 (ERR00100), vllm-project/vllm-ascend#405
    (ERR02200); ERR01007 as torch_npu's own test_contiguous expects it (channels_last on an NPU tensor)."""
    assert len(TORCH_NPU_ERR.entries) == 5 * 15 + 1
    for line, category in (
            ("(PID:33724, Device:0, RankID:-1) ERR01001 OPS invalid parameter", "app-fault"),
            ("[ERROR] ERR01007 OPS feature not supported", "app-fault"),
            ("(PID:1, Device:0, RankID:-1) ERR00006 PTA memory error", "oom"),
            ("(PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed", "unknown"),
            ("(PID:159, Device:0, RankID:-1) ERR02200 DIST call hccl api failed.", "unknown"),
            ("(PID:32188, Device:-1, RankID:-1) ERR99999 UNKNOWN applicaiton exception", "unknown")):
        assert [d.code.category for d in TORCH_NPU_ERR.decode(line)] == [category], line
    assert TORCH_NPU_ERR.decode("ERR0100 OPS") == [] and TORCH_NPU_ERR.decode("XERR01001") == []


def test_cuda_libs_statuses_claim_only_what_they_say() -> None:
    """cuBLAS / cuDNN statuses by name (cuDNN 9's sub-codes by their class). Lines from QwenLM/Qwen3#873 (ALLOC_FAILED,
    solved with a GPU that had the memory), clovaai/bros#14 (EXECUTION_FAILED: names no cause)."""
    for line, code, category in (
            ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
             "CUBLAS_STATUS_ALLOC_FAILED", "oom"),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, "
             "m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, "
             "CUBLAS_GEMM_DFALT_TENSOR_OP)`", "CUBLAS_STATUS_EXECUTION_FAILED", "unknown"),
            ("cuDNN error: CUDNN_STATUS_BAD_PARAM_NULL_POINTER", "CUDNN_STATUS_BAD_PARAM", "app-fault"),
            ("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED",
             "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "oom"),
            ("RuntimeError: cuDNN version incompatibility: CUDNN_STATUS_VERSION_MISMATCH",
             "CUDNN_STATUS_VERSION_MISMATCH", "version-mismatch")):
        assert [(d.code.code, d.code.category) for d in CUDA_LIBS.decode(line)] == [(code, category)], line
    assert CUDA_LIBS.decode("CUBLAS_GEMM_DFALT_TENSOR_OP") == [] and CUDA_LIBS.decode("CUDNN_STATUS_SUCCESS") == []


@pytest.mark.parametrize(("table", "line", "code"), [
    # round 21: a name a glog CHECK compares with is not the error; MXNet's "CUDA: <text>"; the "(N vs. 0)" values
    (CUDA_ERROR, "src/storage/storage.cc:59: Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: "
     "invalid device ordinal", "101"),
    (CUDA_ERROR, "Check failed: error == cudaSuccess (2 vs. 0)  out of memory", "2"),
    (NCCL_RESULT, "Check failed: result == ncclSuccess (1 vs. 0)  unhandled cuda error", "1"),
])
def test_a_checks_comparison_is_not_the_error_it_reports(table: CodeTable, line: str, code: str) -> None:
    assert [d.code.code for d in table.decode(line)] == [code]


@pytest.mark.parametrize(("table", "line", "category"), [
    # round 21: OpenSSH's permission refusals (openssh-portable authfile.c, sshd.c, readconf.c), orterun's root check
    (REMOTE_SHELL, "Permissions 0644 for '/root/.ssh/id_rsa' are too open.", "ssh"),
    (REMOTE_SHELL, "sshd: no hostkeys available -- exiting.", "ssh"),
    (REMOTE_SHELL, "Bad owner or permissions on /home/u/.ssh/config", "ssh"),
    (OPENMPI, "prterun has detected an attempt to run as root.", "launch-args"),
])
def test_round_21_launcher_wordings_decode(table: CodeTable, line: str, category: str) -> None:
    assert [d.code.category for d in table.decode(line)] == [category]
