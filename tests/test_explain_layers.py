"""``preflight explain`` (issue 38): tolerant matching, the layers (signature, code, family, unknown), the first
cause before the loudest symptom, and a directory of rank logs.

Every log line here is a real one from the public thread named next to it (or a catalog excerpt of
tests/fixtures/explain/excerpts.json); a line changed by hand (case, spacing, another time) says so. Lines
written from a library's own format string cite the source file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from preflight.explain.catalog import CATALOG, SIGNATURES
from preflight.explain.decode import Code, CodeTable
from preflight.explain.matcher import explain_texts
from preflight.explain.signature import Signature

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
EXCERPTS: dict[str, dict[str, str]] = json.loads((FIXTURES / "excerpts.json").read_text(encoding="utf-8"))

# https://github.com/XPixelGroup/BasicSR/issues/737 (the nccl.watchdog_timeout excerpt)
WATCHDOG = EXCERPTS["nccl.watchdog_timeout"]["excerpt"]
# https://github.com/NVIDIA/nccl/issues/1235 (corpus.json)
NCCL_OOM = ("ng30903:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
            "ng30903-ib.narval.calcul.quebec<51159>\n"
            "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
            "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n")
# c10's deprecation notice with a glog time: https://github.com/goodfire-ai/spd/pull/250
DEPRECATED = ("[rank0]:[W1111 11:55:57.148815586 Utils.hpp:112] Warning: Environment variable "
              "NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function "
              "operator())")
# https://github.com/NVIDIA/nccl/issues/230 (Open MPI's [1,12]<stdout> prefix, then NCCL's host:pid:tid prefix)
ASYNC_EVENT = ("2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] "
               "transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error")
# https://github.com/lzhxmu/CPPO/issues/6: torchrun's failure summary
SUMMARY = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n\
============================================================
src/open_r1/grpo_gsm.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-05-21_15:43:03
  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker
  rank      : 0 (local_rank: 0)
  exitcode  : -9 (pid: 14750)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 14750
============================================================
"""


def _best(text: str, **kw: Any) -> Any:
    best = explain_texts({"rank.log": text}, **kw).best
    assert best is not None, text
    return best


# --- tolerant matching --------------------------------------------------------------------------------------------

def _case_space_variants(text: str) -> list[str]:
    """Hand-made variants of a real excerpt: lower case, upper case, doubled spaces, a tab, no space before ':'."""
    return [text.lower(), text.upper(), text.replace(" ", "  "), text.replace(" ", "\t", 3),
            text.replace(" : ", ": ").replace(" :", ":")]


@pytest.mark.parametrize("ident", ["nccl.socket_closed_by_peer", "nccl.net_closed_by_peer", "cuda.oom",
                                   "c10d.port_in_use", "hccl.ej0003", "nccl.ib_completion_error",
                                   "store.wait_clients_timeout", "c10d.name_resolution", "nccl.cuda_oom"])
def test_case_and_spacing_variants_match_the_same_signature(ident: str) -> None:
    for variant in _case_space_variants(EXCERPTS[ident]["excerpt"]):
        assert _best(variant).signature.id == ident, variant


def test_quote_and_punctuation_variants_match() -> None:
    # NCCL's "Cuda failure 'out of memory'" (nccl#1235) with double quotes and a backtick (hand-made)
    assert _best('gpu1:1:1 [3] NCCL WARN Cuda failure "out of memory"').signature.id == "nccl.cuda_oom"
    assert _best("gpu1:1:1 [3] NCCL WARN Cuda failure `out of memory`").signature.id == "nccl.cuda_oom"
    # c10d's "errno: 98 - Address already in use" (the c10d.port_in_use excerpt) without the colon (hand-made)
    line = EXCERPTS["c10d.port_in_use"]["excerpt"].replace("errno: 98", "errno 98")
    assert _best(line).signature.id == "c10d.port_in_use"
    # torch.distributed.launch's --local-rank=0 written --local_rank=0 (the launch.local_rank_arg excerpt, hand-made)
    line = EXCERPTS["launch.local_rank_arg"]["excerpt"].replace("--local-rank", "--local_rank")
    assert _best(line).signature.id == "launch.local_rank_arg"


@pytest.mark.parametrize(("line", "not_id"), [
    # another errno, another port state, another word: tolerance adds no match (hand-made from the excerpts)
    ("The server socket has failed to bind to [::]:29500 (errno: 99 - Cannot assign requested address).",
     "c10d.port_in_use"),
    ("NCCL WARN Cuda failure 'invalid argument'", "nccl.cuda_oom"),
    ("socketProgress: Connection opened by remote peer 10.0.0.1<4242>", "nccl.socket_closed_by_peer"),
    ("Timed out after 901 seconds waiting for workers to finish", "store.wait_clients_timeout"),
    ("NET/IB : Got completion from peer 10.0.0.2<4242> with success", "nccl.ib_completion_error"),
])
def test_tolerance_adds_no_false_match(line: str, not_id: str) -> None:
    assert not_id not in {m.signature.id for m in explain_texts({"x.log": line}).matches}


@pytest.mark.parametrize(("line", "ident"), [
    # torch 2.5+ TCPStore (pytorch/pytorch#131808): https://github.com/NVIDIA-NeMo/Speech/issues/14399
    ("[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId "
     "from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms, "
     "keys: /default_pg/0//cuda//0", "nccl.unique_id_timeout"),
    # https://github.com/modelscope/ms-swift/issues/4906
    ("[rank0]: torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /broadcast_from/0/75465",
     "store.socket_timeout"),
    # NCCL 2.19+ CUCHECK prints the error number: "Cuda failure %d '%s'" (src/include/cudawrap.h,
    # https://github.com/NVIDIA/nccl/blob/v2.19.3-1/src/include/cudawrap.h); host and numbers made up
    ("gpu1:77:90 [0] include/alloc.h:320 NCCL WARN Cuda failure 2 'out of memory'", "nccl.cuda_oom"),
    # NCCL 2.28's "NET/IB: Got completion from peer %s with status=%s(%d) opcode=%s(%d) ..."
    # (https://github.com/NVIDIA/nccl/blob/v2.28.9-1/src/transport/net_ib.cc); address and numbers made up
    ("gpu1:77:90 [1] transport/net_ib.cc:2543 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<40554> with "
     "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) reqSize=0 vendor_err=129 req_type=Recv "
     "hca mlx5_1", "nccl.ib_completion_error"),
])
def test_wordings_of_other_versions(line: str, ident: str) -> None:
    assert _best(line).signature.id == ident


def test_npu_wordings_share_the_categories_of_their_cuda_counterparts() -> None:
    oom = _best(EXCERPTS["torch_npu.oom"]["excerpt"])  # https://github.com/vllm-project/vllm-omni/issues/6400
    assert (oom.signature.id, oom.signature.category) == ("torch_npu.oom", SIGNATURES["cuda.oom"].category)
    dog = _best(EXCERPTS["torch_npu.watchdog_timeout"]["excerpt"])  # vllm-project/vllm-ascend#382
    nccl = SIGNATURES["nccl.watchdog_timeout"]
    assert (dog.signature.category, dog.signature.root_cause) == (nccl.category, nccl.root_cause)
    assert dog.rank == 1 and "3600 s" in dog.explanation()


# --- layers -------------------------------------------------------------------------------------------------------

def _demo_table() -> CodeTable:
    """A small table of our own, entries invented for the test: torch_npu's ERRxxxxx codes (the shape of ERR02200 in
    hccl_stale_rank3/rank3.log from hiyouga/LlamaFactory#3839) and CANN's EJ0001."""
    import re

    entries = {"ERR02200": Code("ERR02200", "DIST_HCCL_API", "a call into HCCL failed", "hccl-link",
                                "Read the HCCL error under it.", ("hccn.link",)),
               "EJ0001": Code("EJ0001", "HCCP_INIT", "HCCP could not start", "hccl-stale-process", "Kill the rest.")}
    return CodeTable("demo", "https://example.org/demo-codes", "1.0", entries,
                     lambda line: re.findall(r"\bERR\d{5}\b|\bE[IJ]\d{4}\b", line))


# hccl_stale_rank3/rank3.log (hiyouga/LlamaFactory#3839)
ERR_HCCL = "[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed."


def test_a_decoded_code_answers_when_no_signature_does() -> None:
    result = explain_texts({"node.log": "step 1 loss 2.3\n" + ERR_HCCL}, tables=(_demo_table(),))
    best = result.best
    assert best is not None and best.layer == "code" and best.signature.category == "hccl-link"
    entry = result.to_dict()["matches"][0]
    assert (entry["layer"], entry["code"], entry["source"], entry["rank"], entry["line_number"]) == (
        "code", "ERR02200", "https://example.org/demo-codes", 3, 2)
    assert entry["checks"] == ["hccn.link"] and "a call into HCCL failed" in entry["cause"]
    assert explain_texts({"node.log": ERR_HCCL}, tables=()).best is None  # without the table: unknown


def test_a_signature_beats_the_codes_of_its_error_and_names_its_own() -> None:
    text = (FIXTURES / "multirank" / "hccl_stale_rank3" / "rank3.log").read_text(encoding="utf-8")
    result = explain_texts({"rank3.log": text}, tables=(_demo_table(),))
    best = result.best
    assert best is not None and (best.signature.id, best.layer, best.code) == ("hccl.ej0001", "signature", "EJ0001")
    assert [m.signature.id for m in result.matches] == ["hccl.ej0001"]  # ERR02200 a line above is its wrapper
    far = explain_texts({"rank3.log": "\n" * 10 + text}, tables=(_demo_table(),))
    assert [m.layer for m in far.matches] == ["signature"]
    apart = explain_texts({"rank3.log": ERR_HCCL + "\n" * 10 + text.split("\n", 2)[2]}, tables=(_demo_table(),))
    assert {m.layer for m in apart.matches} == {"signature", "code"}  # a code outside the block is its own candidate


def test_a_symptom_signature_does_not_hide_the_cause_beside_it() -> None:
    # mpirun's summary (a symptom signature) two lines under ssh's own error: the ssh line (a code) is the cause;
    # hand-made from OpenSSH's sshconnect.c and ORTE's help-plm-base.txt wordings
    text = ("ssh: Could not resolve hostname worker-5.job: Name or service not known\n"
            "--------------------------------------------------------------------------\n"
            "ORTE was unable to reliably start one or more daemons.\n")
    result = explain_texts({"launcher.log": text})
    assert [(m.layer, m.signature.category) for m in result.matches][:1] == [("code", "name-resolution")]
    alone = explain_texts({"launcher.log": text.split("\n", 2)[2]}).best
    assert alone is not None and (alone.signature.id, alone.signature.category) == ("mpirun.orte_daemons", "ssh")


@pytest.mark.parametrize("line", [
    "nslookup: can't resolve 'train-master-0': Name does not resolve",  # musl's gai_strerror (busybox, Alpine)
    "socket.gaierror: [Errno -5] No address associated with hostname",  # glibc EAI_NODATA
    "dial tcp: lookup etcd-0.etcd on 10.96.0.10:53: no such host",  # Go's resolver
])
def test_name_resolution_in_other_libcs_wordings_by_keywords(line: str) -> None:
    best = _best(line, tables=())
    assert (best.layer, best.signature.category) == ("family", "name-resolution")


def test_keywords_give_the_component_and_family_when_nothing_else_knows_the_line() -> None:
    result = explain_texts({"rank12.log": ASYNC_EVENT}, tables=())
    best = result.best
    assert best is not None and best.layer == "family"
    entry = result.to_dict()["matches"][0]
    assert (entry["category"], entry["component"], entry["family"]) == ("fabric", "NET/IB",
                                                                      "link down / transport error")
    assert (entry["rank"], entry["host"]) == (12, "container-e275-1553839402050-12124-01-000057")
    assert entry["line"] == ASYNC_EVENT and entry["checks"]


def test_npu_out_of_memory_in_an_unknown_wording_still_gives_oom_by_keywords() -> None:
    # torch_npu's workspace allocator wording (torch_npu/csrc/core/npu/NPUWorkspaceAllocator.cpp) hand-shortened
    # to words no signature has: the family layer still says oom
    best = _best("RuntimeError: NPU ran out of memory while allocating the workspace", tables=())
    assert (best.layer, best.signature.category, best.component) == ("family", "oom", "NPU")


def test_family_layer_waits_for_signatures_and_unknown_is_last() -> None:
    both = explain_texts({"a.log": ASYNC_EVENT, "b.log": NCCL_OOM}, tables=())
    assert {m.layer for m in both.matches} == {"signature"}
    unknown = explain_texts({"job.log": "step 1 loss 2.3\nValueError: expected 3 got 4\n"}, tables=())
    assert unknown.best is None and unknown.to_dict()["matches"][0]["layer"] == "unknown"


def test_every_layer_is_named_in_the_json() -> None:
    for text, layer in ((NCCL_OOM, "signature"), (ASYNC_EVENT, "family"), ("nothing to see", None)):
        entries = explain_texts({"r.log": text}, tables=()).to_dict()["matches"]
        assert [e["layer"] for e in entries][:1] == ([layer] if layer else [])


# --- the first cause, not the loudest symptom --------------------------------------------------------------------

def test_a_real_error_after_a_harmless_warning_wins() -> None:
    """A site signature matching c10's deprecation notice (timed, weight 95) against the real OOM printed after it
    (MGFN#35, untimed): the warning line never outranks it, whatever its weight or time."""
    site = Signature("site.async_error_handling", "launch-args", (r"NCCL_ASYNC_ERROR_HANDLING",), "c", "f", (),
                     "user signature test", weight=95)
    oom = EXCERPTS["cuda.oom"]["excerpt"]
    result = explain_texts({"rank0.log": DEPRECATED + "\n" + oom}, (*CATALOG, site))
    assert [m.signature.id for m in result.matches] == ["cuda.oom", "site.async_error_handling"]
    assert result.matches[1].harmless and not result.matches[0].harmless
    alone = explain_texts({"rank0.log": DEPRECATED}, (*CATALOG, site))
    assert alone.best is not None and alone.best.signature.id == "site.async_error_handling"  # still reported


def test_which_warnings_are_harmless() -> None:
    from preflight.explain.lines import harmless

    assert harmless(DEPRECATED)
    # https://github.com/pytorch/pytorch/pull/114432
    assert harmless("[rank1]:[W Utils.hpp:164] Warning: Environment variable NCCL_DESYNC_DEBUG is deprecated; use "
                    "TORCH_NCCL_DESYNC_DEBUG instead (function getCvarBool)")
    # c10d and gloo print real causes at warning level: not harmless (the c10d.no_route_to_host and
    # gloo.loopback_fallback excerpts)
    assert not harmless(EXCERPTS["c10d.no_route_to_host"]["excerpt"].splitlines()[1])
    loopback = next(line for line in EXCERPTS["gloo.loopback_fallback"]["excerpt"].splitlines() if "Gloo" in line)
    assert "[W ProcessGroupGloo.cpp" in loopback and not harmless(loopback)
    assert not harmless(NCCL_OOM.splitlines()[1])


def test_a_symptom_before_its_cause_is_ranked_after_it() -> None:
    # rank 0's watchdog timeout (BasicSR#737, 06:24:44) printed before rank 2's SIGKILL exit (time-r1#9, its time
    # moved by hand to 06:30:40, after the timeout): the exit is the cause
    kill = EXCERPTS["elastic.exit_sigkill"]["excerpt"].replace("E0813 06:19:49", "E0626 06:30:40")
    result = explain_texts({"rank0.log": WATCHDOG, "rank2.log": kill})
    assert [m.signature.id for m in result.matches][:2] == ["elastic.exit_sigkill", "nccl.watchdog_timeout"]
    assert result.matches[0].time is not None and result.matches[1].time is not None
    assert result.matches[0].time > result.matches[1].time


def test_among_causes_the_earliest_wins_and_names_rank_and_host() -> None:
    result = explain_texts({"node0.log": WATCHDOG, "node1.log": NCCL_OOM})
    best = result.best
    assert best is not None and (best.signature.id, best.file, best.host) == ("nccl.cuda_oom", "node1.log", "ng30903")


def test_torchrun_summary_names_the_first_failing_rank_and_host() -> None:
    best = _best(SUMMARY)
    assert (best.signature.id, best.rank, best.host) == (
        "elastic.signal9", 0, "mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker")


# --- a directory of rank logs --------------------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "preflight", "explain", *args], capture_output=True, timeout=60,
                          check=False)


def test_torchrun_log_dir_layout(tmp_path: Path) -> None:
    """torchrun --log-dir writes <dir>/<run id>/attempt_<n>/<local rank>/{stdout,stderr}.log."""
    run = tmp_path / "logs" / "3f2a_9kq1" / "attempt_0"
    for rank, text in ((0, WATCHDOG), (1, NCCL_OOM), (2, "")):
        (run / str(rank)).mkdir(parents=True)
        (run / str(rank) / "stderr.log").write_text(text, encoding="utf-8")
        (run / str(rank) / "stdout.log").write_text("step 1 loss 2.3\n", encoding="utf-8")
    (run / "1" / "error.json").write_text("{}", encoding="utf-8")
    done = _cli(str(tmp_path / "logs"), "--json")
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)["matches"][0]
    assert (first["id"], first["rank"], first["host"]) == ("nccl.cuda_oom", 1, "ng30903")
    assert first["file"].endswith("attempt_0/1/stderr.log") and first["layer"] == "signature"
    text = _cli(str(tmp_path / "logs")).stdout.decode()
    assert "root cause: oom (nccl.cuda_oom)" in text and "stderr.log:2, rank 1, host ng30903" in text


def test_slurm_and_kubectl_dump_layouts(tmp_path: Path) -> None:
    (tmp_path / "slurm-4411.out").write_text(WATCHDOG, encoding="utf-8")
    pod = tmp_path / "default" / "train-worker-1"  # kubectl cluster-info dump: <namespace>/<pod>/logs.txt
    pod.mkdir(parents=True)
    (pod / "logs.txt").write_text(EXCERPTS["cuda.oom"]["excerpt"], encoding="utf-8")
    (tmp_path / "default" / "pods.json").write_text("{}", encoding="utf-8")
    first = json.loads(_cli(str(tmp_path), "--json").stdout)["matches"][0]
    assert (first["id"], first["host"]) == ("cuda.oom", "train-worker-1")


def test_a_directory_without_logs_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text("{}", encoding="utf-8")
    done = _cli(str(tmp_path))
    assert done.returncode == 2 and b"no log files" in done.stderr


def test_round2_generic_codes_claim_nothing_and_let_the_text_speak() -> None:
    """Issue 38, round 2: an internal error or a bare report of another layer names no cause (a false alarm is as bad
    as a miss); the words after a CANN inner error still do."""
    for text in ("RuntimeError: NPU function error: aclrtSynchronizeStreamWithTimeout(s), error code is 507001",
                 "build op model failed, result = 500001", "Test NCCL failure common.cu:777 'unhandled cuda error'",
                 "ncclSystemError: System call (e.g. socket, malloc) or external library call failed",
                 "Aborted (core dumped)"):
        best = explain_texts({"r.log": text}).best
        assert best is None or best.signature.category == "unknown", (text, best.signature.id)
    inner = ("EI9999: Inner Error!\nEI9999: The error from device(chipId:0, dieId:0), serial number is 1, hccl "
             "fftsplus task timeout occurred during task execution, stream_id:4, sq_id:4, task_id:5, "
             "stuck notify num:7, timeout=30min(default).")
    assert _category(inner) == "hccl-timeout"


def test_round2_classes() -> None:
    """The driver older than the runtime in every CUDA wording; a link-local NCCL peer; a host:slots handed to ssh."""
    for text in ("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
                 "F1127 hl_cuda_device.cc:565] Check failed: cudaSuccess == cudaStat (0 vs. 35) Cuda Error: CUDA "
                 "driver version is insufficient for CUDA runtime version",
                 "CUDA error at bandwidthTest.cu:255 code=35(cudaErrorInsufficientDriver) \"cudaSetDevice(0)\""):
        assert _category(text) == "driver", text
    for text, category in (
            ("node1:9:9 [0] misc/socket.cc:456 NCCL WARN socketStartConnect: Connect to fe80::1%ib0<4321> failed : "
             "Connection timed out", "wrong-interface"),
            ("ssh: Could not resolve hostname node7:8: Name or service not known", "hostfile"),
            ("ssh: Could not resolve hostname node7: Name or service not known", "name-resolution"),
            ("ValueError: Your assigned backend nccl is not avaliable, please use hccl", "launch-args"),
            ("ray.exceptions.RayTaskError(OutOfMemoryError): ray::Worker.run()", "oom")):
        assert _category(text) == category, text


def test_round3_classes_in_every_wording_their_sources_print() -> None:
    """Issue 38, round 3 (from the spent frozen2 set, in the vendors' wordings): device memory in MindSpore's and
    vLLM's words, a request no device holds, npu-smi without DCMI, torch_npu lacking an API, vLLM's device and
    divisibility checks, horovodrun's slots, NCCL without a network plugin, Xid 79 as users quote it."""
    for text, category in (
            ("[ERROR] PRE_ACT(1,f,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/common/mem_reuse/"
             "mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : 293 plus "
             "alloc size : 30199 is more than total mem size : 2946.", "oom"),
            ("ValueError: Free memory on device cuda:0 (27.28/31.86 GiB) on startup is less than desired GPU memory "
             "utilization (0.97, 30.9 GiB).", "oom"),
            ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
             "initializing the engine.", "oom"),
            ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.", "app-fault"),
            ("RuntimeError: MLU out of memory. Tried to allocate more than 1EB memory.", "app-fault"),
            ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB", "oom"),
            ("EL0004: [PID: 1] 2024-01-01-00:00:00 Failed to allocate memory.", "oom"),
            ("aclrtMalloc failed, ret=207001", "oom"),
            ("dcmi module initialize failed. ret is -8005", "driver"),
            ("AttributeError: module 'torch_npu' has no attribute '_npu_flash_attention'", "version-mismatch"),
            ("AttributeError: module 'torch_npu.dynamo.torchair' has no attribute 'get_npu_backend'",
             "version-mismatch"),
            ("AssertionError: Torch not compiled with CUDA enabled", "version-mismatch"),
            ("AssertionError: local_world_size (8) must be less than or equal to the number\nof visible devices (0).",
             "device-mapping"),
            ("AssertionError: 12 is not divisible by 8", "launch-args"),
            ("ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8).",
             "launch-args"),
            ("ValueError: Process number should not be larger than total available slots.", "hostfile"),
            ("NCCL error: invalid usage\nnode1:1:1 [0] NCCL WARN Failed to initialize any NET plugin", "rdma"),
            ("GPU has fallen off of the bus", "driver")):
        assert _category(text) == category, text


def test_round3_adds_no_false_alarm() -> None:
    """Application bugs that share words with the new classes still claim nothing."""
    for text in ("AttributeError: 'DistributedDataParallel' object has no attribute 'self_cond'",
                 "AttributeError: module 'torch' has no attribute 'compiler'",
                 "ValueError: batch size 10 is not divisible by 4 in my_dataset.py",
                 "AssertionError: 12 is not divisible by 8 and the sampler drops the rest"):
        assert _category(text) == "unknown", text

def _category(text: str) -> str:
    best = explain_texts({"r.log": text}).best
    return best.signature.category if best else "unknown"


def test_round4_classes_in_the_vendors_generic_wordings() -> None:
    """Issue 38, round 4 (by class, no frozen3 log read): an NPU core exception with or without a code, a Triton
    kernel over the GPU's shared memory, host memory (std::bad_alloc, the shell's bare ``Killed``), vLLM's KV cache,
    a peer on Docker's bridge, DeepSpeed's batch sizes, argparse, and the installed packages by keywords. Lines
    from public threads (tests/fixtures/explain/corpus.json and excerpts.json keep their sources)."""
    for text, category in (
            ("Kernel task happen error, retCode=0x31, [vector core exception].[FUNC:PreCheckTaskErr]"
             "[FILE:davinci_kernel_task.cc][LINE:1729]", "app-fault"),
            ("Kernel task happen error, retCode=0x26, [aicore exception].[FUNC:PreCheckTaskErr]", "app-fault"),
            ("AICORE Kernel task happen error, retCode=0x26.[FUNC:GetError][FILE:stream.cc][LINE:1475]", "app-fault"),
            ("The error from device(chipId:5, dieId:0), serial number is 65, there is an exception of aivec error, "
             "core id is 44, error code = 0", "app-fault"),
            ("Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=1167, flip_num=0, "
             "fault kernel_name=ApplyTopKTopPWithSorted_fp32_high_performance_0,", "app-fault"),
            ("[Error]: The vector core execution is abnormal.", "app-fault"),
            ("rtDeviceSynchronize execute failed, reason=[vector core exception][FUNC:FuncErrorReason]", "app-fault"),
            ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 65538, Hardware limit: "
             "65536.", "app-fault"),
            ("terminate called after throwing an instance of 'std::bad_alloc'", "oom"),
            ("Killed", "oom"),
            ("ValueError: The model's max seq len (16000) is larger than the maximum number of tokens that can be "
             "stored in KV cache (96). Try increasing 'gpu_memory_utilization'", "oom"),
            ("node1:9:9 [0] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to 172.17.0.2<38847> failed : "
             "Software caused connection abort", "wrong-interface"),
            ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu "
             "* gradient_acc_step * world_size 64 != 4 *\n8 * 1", "launch-args"),
            ("train.py: error: the following arguments are required: --cfg", "launch-args"),
            ("ModuleNotFoundError: No module named 'torch_npu._C'", "version-mismatch"),
            ("ImportError: /lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /usr/local/lib64/"
             "python3.11/site-packages/torch/lib/libtorch_python.so)", "version-mismatch"),
            ("OSError: /lib64/libm.so.6: version `GLIBC_2.29' not found (required by torch_sparse/_metis_cuda.so)",
             "version-mismatch"),
            ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Cannot find a working "
             "triton installation. More information on installing Triton can be found at https://github.com/openai/"
             "triton", "version-mismatch"),
            ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nImportError: cannot import name "
             "'triton_key' from 'triton.compiler.compiler' (/opt/conda/lib/python3.10/site-packages/triton/compiler/"
             "compiler.py)", "version-mismatch"),
            # torch_npu's ERRxxyyy and the cuBLAS / cuDNN statuses (vendor tables, round 4)
            ("(Worker_DP0_TP0_EP0 pid=33724) ERROR [ERROR] 2025-10-11-11:37:35 (PID:33724, Device:0, RankID:-1) "
             "ERR01001 OPS invalid parameter", "app-fault"),
            ("RuntimeError: Format of weight in npu_grouped_matmul is FRACTAL_NZ, current CANN version do not support "
             "with this format. Please try to update the version of CANN.\n[ERROR] 2025-10-11-11:37:35 (PID:33724, "
             "Device:0, RankID:-1) ERR01001 OPS invalid parameter", "version-mismatch"),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "oom")):
        assert _category(text) == category, text


def test_round4_adds_no_false_alarm() -> None:
    """Application bugs and healthy lines that share words with the round-4 classes claim nothing, and a peer on a
    routable address is not blamed on the interface."""
    for text in ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
                 "npu:0 and cpu!",
                 "AttributeError: 'DistributedDataParallel' object has no attribute 'self_cond'",
                 "RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at dimension 1",
                 "epoch 3: Killed 2 stale workers, loss=0.12",
                 "node1:9:9 [0] NCCL INFO NET/Socket : Using [0]docker0:172.17.0.1<0>"):
        assert _category(text) == "unknown", text
    assert _category("connect() to 10.1.2.3 failed: Connection refused (111)") != "wrong-interface"
    for text in ("[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed",
                 "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, "
                 "opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`"):
        assert _category(text) == "unknown", text  # generic codes claim nothing


def test_a_fallback_the_log_shows_taken_is_moot() -> None:
    """NCCL's ``Failed to open libibverbs`` alone is a (weak) rdma clue; where the same log shows NCCL going on over
    sockets it was only the fallback, and names nothing (``Signature.unless``), in the code layer either."""
    warn = "node1:15833:15833 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"
    alone = explain_texts({"r0.log": warn}).best
    assert alone is not None and alone.signature.id == "nccl.no_libibverbs"
    went_on = warn + "\nnode1:15833:15833 [0] NCCL INFO NET/Socket : Using [0]eth0:10.2.3.32<0>\n"
    assert explain_texts({"r0.log": went_on}).best is None


# --- a silent hang in NCCL's setup on one node (round 8) ----------------------------------------------------------
# https://github.com/pytorch/pytorch/issues/73790 (corpus.json; two A6000s of one host, DDP hung after NCCL init)
HANG_ONE_NODE = [
    "john-trx40-designare:115664:115664 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "john-trx40-designare:115664:115664 [0] NCCL INFO NET/Socket : Using [0]enp68s0:99.153.71.9<0>",
    "john-trx40-designare:115664:115664 [0] NCCL INFO Using network Socket",
    "NCCL version 2.10.3+cuda11.3",
    "john-trx40-designare:115828:115828 [1] NCCL INFO Bootstrap : Using enp68s0:99.153.71.9<0>",
]


def test_a_log_that_stops_in_nccls_setup_on_one_node_reads_as_gpu_peer_to_peer() -> None:
    best = explain_texts({"rank0.log": "\n".join(HANG_ONE_NODE)}).best
    assert best is not None
    assert (best.signature.id, best.signature.category, best.layer) == ("family.nccl.silent_hang_one_node", "p2p",
                                                                       "family")
    assert best.line_number == 5 and "2 GPUs of one host (john-trx40-designare)" in best.signature.cause
    assert "NCCL_P2P_DISABLE=1" in best.signature.fix


def test_no_silent_hang_is_read_across_hosts_after_training_output_or_beside_an_error() -> None:
    # the second host's lines: the same log with its host renamed by hand
    two_hosts = [*HANG_ONE_NODE, HANG_ONE_NODE[4].replace("john-trx40-designare", "node2")]
    went_on = [*HANG_ONE_NODE, "epoch 0 step 10 loss 2.31", "epoch 0 step 20 loss 2.02", "epoch 0 step 30 loss 1.9"]
    one_gpu = [line for line in HANG_ONE_NODE if "[1]" not in line]
    for lines in (two_hosts, went_on, one_gpu):
        best = explain_texts({"rank0.log": "\n".join(lines)}).best
        assert best is None or best.signature.id != "family.nccl.silent_hang_one_node", lines
    failed = explain_texts({"rank0.log": "\n".join([*HANG_ONE_NODE, WATCHDOG])}).best
    assert failed is not None and failed.signature.id == "nccl.watchdog_timeout"


def test_a_reporters_word_that_disabling_p2p_helped_reads_as_p2p_and_a_negation_does_not() -> None:
    # https://github.com/NVIDIA/nccl/issues/667 (corpus.json): the reporter's sentence under the topology
    helped = "Setting NCCL_P2P_DISABLE=1 did workaround but got really low speed."
    best = explain_texts({"issue.txt": helped}).best
    assert best is not None and (best.signature.id, best.signature.category) == ("user.p2p_disable_works", "p2p")
    # the same sentence negated by hand
    for text in ("Setting NCCL_P2P_DISABLE=1 did not workaround it.", "NCCL_P2P_DISABLE=1 doesn't help either"):
        best = explain_texts({"issue.txt": text}).best
        assert best is None or best.signature.id != "user.p2p_disable_works", text
