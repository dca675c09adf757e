"""``preflight explain``: every catalog entry against its real excerpt, multi-rank sets, timeouts, the CLI.

Excerpts (tests/fixtures/explain/excerpts.json) are log lines as users posted them publicly; each entry
names its source, which must be the catalog entry's ``source``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from preflight.checks import all_checks
from preflight.explain.catalog import CATALOG, CATEGORIES, SIGNATURES
from preflight.explain.matcher import MAX_BYTES, explain_texts, rank_of, read_file, timestamp
from preflight.explain.paste import normalize
from preflight.explain.timeouts import decode

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
EXCERPTS: dict[str, dict[str, str]] = json.loads((FIXTURES / "excerpts.json").read_text(encoding="utf-8"))
MULTIRANK = sorted(p for p in (FIXTURES / "multirank").iterdir() if p.is_dir())
JSON_KEYS = {"id", "category", "layer", "line", "line_number", "file", "rank", "host", "cause", "fix", "checks",
             "source", "code", "component", "family"}

# the causes issue 7 asks the catalog to cover, by category
REQUIRED = {"port-in-use", "privileged-port", "master-unreachable", "name-resolution", "hostname-loopback",
            "wrong-interface", "address-family", "firewall", "rendezvous", "store-timeout", "launch-args",
            "version-mismatch", "shm", "memlock", "rdma", "fabric", "mtu", "p2p", "device-mapping", "oom",
            "hccl-timeout", "hccl-port", "hccl-stale-process", "hccl-link", "ssh", "hostfile"}


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "preflight", "explain", *args], input=stdin,
                          capture_output=True, timeout=60, check=False)


def test_catalog_is_complete_and_consistent() -> None:
    assert len(CATALOG) >= 45
    assert len(SIGNATURES) == len(CATALOG), "ids are unique"
    assert REQUIRED <= {s.category for s in CATALOG}
    checks = all_checks()
    for sig in CATALOG:
        assert sig.category in CATEGORIES and sig.category != "unknown", sig.id
        assert sig.cause and sig.fix and sig.source.startswith("https://"), sig.id
        for ident in sig.checks:  # every named check is one `preflight run --checks` accepts
            assert any(c.selected_by(ident) for c in checks), (sig.id, ident)
    assert set(EXCERPTS) == set(SIGNATURES), "every entry has its real excerpt and no excerpt is orphaned"


@pytest.mark.parametrize("ident", sorted(EXCERPTS))
def test_entry_matches_its_own_excerpt_best(ident: str) -> None:
    excerpt = EXCERPTS[ident]
    sig = SIGNATURES[ident]
    assert excerpt["source"] == sig.source
    result = explain_texts({"excerpt.log": excerpt["excerpt"]})
    assert result.best is not None, ident
    assert (result.best.signature.id, result.best.signature.category) == (ident, sig.category)
    assert {m.signature.id for m in result.matches}.isdisjoint({ident} - {result.best.signature.id})
    entry = result.to_dict()["matches"][0]
    assert set(entry) == JSON_KEYS
    # the line as explain read it: colours, entities and full-width punctuation normalized (preflight.explain.paste)
    assert entry["line"] in normalize(excerpt["excerpt"]) and entry["checks"] == list(sig.checks)


@pytest.mark.parametrize("folder", MULTIRANK, ids=[p.name for p in MULTIRANK])
def test_multirank_names_the_rank_with_the_cause(folder: Path) -> None:
    expected = json.loads((folder / "expected.json").read_text())
    logs = {p.name: read_file(p) for p in sorted(folder.glob("*.log"))}
    result = explain_texts(logs)
    best = result.best
    assert best is not None
    assert (best.signature.id, best.file, best.rank) == (expected["id"], expected["file"], expected["rank"])
    # the other ranks' lines are still listed, after the root cause
    assert {m.file for m in result.matches} >= {expected["file"]}
    assert len(result.matches) >= 2


def test_multirank_order_does_not_depend_on_file_order() -> None:
    folder = FIXTURES / "multirank" / "hccl_stale_rank3"
    logs = {p.name: read_file(p) for p in sorted(folder.glob("*.log"), reverse=True)}
    best = explain_texts(logs).best
    assert best is not None and (best.signature.id, best.file) == ("hccl.ej0001", "rank3.log")


@pytest.mark.parametrize(("line", "seconds", "layer"), [
    ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/3 clients joined.",
     901, "static store"),
    ("Timed out after 1801 seconds waiting for clients. 1/3 clients joined.", 1801, "default process-group"),
    ("(world_size=2, worker_count=1, timeout=0:30:00)", 1800, "default process-group"),
    ("WorkNCCL(SeqNum=808, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
     600, "NCCL watchdog"),
    ("RuntimeError: connect() timed out. Original timeout was 60000 ms.", 60, "c10d store"),
    ("[c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234", 60,
     "c10d store"),
    ("[Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]", 120,
     "HCCL_CONNECT_TIMEOUT"),
    ("wait socket establish timeout, role[0] rank[0] timeout[120 s]", 120, "HCCL_CONNECT_TIMEOUT"),
    ("[c10d] The client socket has timed out after 300000ms while trying to connect to (mo.sy.cn, 40613).", 300,
     "set by the job"),
])
def test_timeouts_are_decoded_into_their_layer(line: str, seconds: float, layer: str) -> None:
    found = decode(line)
    assert [t.seconds for t in found] == [seconds]
    assert layer in found[0].layer


def test_timeout_appears_in_the_explanation() -> None:
    result = explain_texts({"r0.log": EXCERPTS["nccl.watchdog_timeout"]["excerpt"]})
    assert result.best is not None
    assert "600 s" in result.best.explanation() and "NCCL watchdog" in result.best.explanation()
    assert "NCCL watchdog" in result.to_dict()["matches"][0]["cause"]


def test_timestamps_and_ranks() -> None:
    assert timestamp("E0813 06:19:49.809000 161210 site-packages/torch") == (8, 13, 22789.809)
    assert timestamp("[ERROR] HCCL(1,p):2025-07-23-03:49:57.177.194 [x]") == (7, 23, 13797.177)
    assert timestamp("05/10/2023 23:07:45 - INFO - torch.distributed") == (5, 10, 83265.0)
    assert rank_of("[1,3]<stdout>:smc-gpu-03 NCCL WARN", "x.log") == 3
    assert rank_of("(PID:927000, Device:3, RankID:3) ERR02200", "y.log") == 3


def test_unknown_log_lists_the_suspicious_lines() -> None:
    text = ("step 1 loss 2.3\nstep 2 loss 2.1\nWARNING: something odd\n"
            "ValueError: expected 3 got 4\nTraceback (most recent call last): boom error\nall done\n")
    result = explain_texts({"job.log": text})
    assert result.best is None
    entries = result.to_dict()["matches"]
    assert entries and all(e["category"] == "unknown" and set(e) == JSON_KEYS for e in entries)
    assert entries[0]["line"].startswith("Traceback")
    assert "step 1 loss 2.3" not in {e["line"] for e in entries}


def test_binary_and_huge_input_never_crash(tmp_path: Path) -> None:
    log = tmp_path / "huge.log"
    with log.open("wb") as handle:
        handle.write(os.urandom(2 * 1024 * 1024))  # binary garbage, dropped: only the tail is read
        handle.write(b"x" * MAX_BYTES)  # one enormous line
        handle.write(b"\n\xff\xfe\x00 [rank5]: EJ0003: Failed to bind the IP port. Reason: The IP address "
                     b"and port have been bound already.\n")
    started = time.monotonic()
    result = explain_texts({"huge.log": read_file(log)})
    assert time.monotonic() - started < 20
    assert result.best is not None and result.best.signature.id == "hccl.ej0003" and result.best.rank == 5
    assert explain_texts({"empty": ""}).to_dict() == {"matches": []}
    assert explain_texts({"junk": "\x00\x01\x02\ufffd" * 1000}).best is None


def test_cli_json_from_files_and_stdin(tmp_path: Path) -> None:
    folder = FIXTURES / "multirank" / "loopback_one_rank"
    logs = [str(p) for p in sorted(folder.glob("*.log"))]
    done = _cli(*logs, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    assert list(data) == ["matches"]
    first = data["matches"][0]
    assert set(first) == JSON_KEYS
    assert (first["id"], first["category"], Path(first["file"]).name) == (
        "gloo.connect_loopback", "hostname-loopback", "rank1.log")
    assert first["checks"] == ["net.hostname"]
    piped = _cli("--json", stdin=EXCERPTS["hccl.ej0001"]["excerpt"].encode())
    assert json.loads(piped.stdout)["matches"][0]["file"] == "<stdin>"
    dash = _cli("-", stdin=b"RuntimeError: CUDA error: invalid device ordinal\n")
    assert dash.returncode == 0 and b"root cause: device-mapping (cuda.invalid_device_ordinal)" in dash.stdout
    missing = _cli(str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and b"cannot read the log" in missing.stderr


def test_cli_text_names_rank_and_timeout() -> None:
    folder = FIXTURES / "multirank" / "watchdog_after_oom"
    done = _cli(*[str(p) for p in sorted(folder.glob("*.log"))])
    out = done.stdout.decode()
    assert done.returncode == 0
    assert "root cause: oom (elastic.exit_sigkill)" in out and "rank2.log:1, rank 2" in out
    assert "timeout 600 s: the NCCL watchdog" in out


def test_cli_hosts_runs_the_checks_of_the_best_match(tmp_path: Path) -> None:
    """--hosts goes through `preflight run`'s own code path; a host whose sshd is down gives ssh.connect."""
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("defaults:\n  user: root\n  port: 1\nhosts:\n  - name: deadnode\n    address: 127.0.0.1\n")
    log = tmp_path / "rank3.log"
    log.write_text(EXCERPTS["hccl.ej0001"]["excerpt"])
    done = _cli(str(log), "--hosts", str(hosts), "--json", "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 4, done.stderr  # the run's verdict: the host could not be checked
    data = json.loads(done.stdout)
    assert data["matches"][0]["id"] == "hccl.ej0001"
    report = data["report"]
    assert report["findings"] and {f["check"] for f in report["findings"]} == {"ssh.connect"}
    assert (tmp_path / "r" / "report.json").is_file()
    text = _cli(str(log), "--hosts", str(hosts), "--report-dir", str(tmp_path / "t"))
    assert b"running: preflight run --checks npu.processes" in text.stdout and text.returncode == 4


@pytest.mark.parametrize(("line", "not_id"), [
    ("PermissionError: [Errno 13] Permission denied: '/data/ckpt/model.pt'", "c10d.privileged_port"),
    ("Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 "
     "(world_size=4, worker_count=4, timeout=0:30:00)", "launch.more_workers_than_world"),
    ("Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 "
     "(world_size=2, worker_count=4, timeout=0:30:00)", "store.barrier_timeout"),
    ("[c10d] The client socket has failed to connect to [::ffff:10.0.0.1]:29500 (errno: 111 - Connection refused).",
     "c10d.connect_timed_out"),
    ("epoch 3 step 100 loss=0.12 lr=1e-4", "nccl.watchdog_timeout"),
])
def test_no_false_match(line: str, not_id: str) -> None:
    assert not_id not in {m.signature.id for m in explain_texts({"x.log": line}).matches}


def test_symptom_alone_is_still_reported_but_after_a_root_cause() -> None:
    symptom = EXCERPTS["store.socket_timeout"]["excerpt"]
    alone = explain_texts({"r0.log": symptom})
    assert alone.best is not None and alone.best.signature.id == "store.socket_timeout"
    both = explain_texts({"r0.log": symptom, "r1.log": EXCERPTS["nccl.p2p_not_supported"]["excerpt"]})
    assert [m.signature.id for m in both.matches] == ["nccl.p2p_not_supported", "store.socket_timeout"]


H200_LOGS = Path(__file__).parent / "fixtures" / "explain" / "recorded_h200"


@pytest.mark.parametrize(("log", "expected"), [
    ("nccl_socket_ifname_no_such_interface.log", "nccl.no_socket_interface"),
    ("cuda_invalid_device_ordinal.log", "cuda.invalid_device_ordinal"),
    ("cuda_no_visible_devices.log", "cuda.no_gpus_available"),
    ("master_addr_unresolvable.log", "c10d.name_resolution"),
    ("store_client_timeout.log", "c10d.client_timed_out"),
    ("master_port_in_use.log", "c10d.port_in_use_libuv"),
    ("torchrun_two_ranks_one_gpu.log", "nccl.duplicate_gpu"),
    ("torchrun_nproc_beyond_gpus.log", "cuda.invalid_device_ordinal"),
])
def test_logs_recorded_on_a_real_gpu_node_are_explained(log: str, expected: str) -> None:
    """Real torch 2.11 / NCCL 2.28.9 logs from an H200 (recorded_h200/SOURCE.md): the root cause comes first."""
    result = explain_texts({log: (H200_LOGS / log).read_text(encoding="utf-8")})
    assert result.best is not None and result.best.signature.id == expected, [m.signature.id for m in result.matches]


H100_LOGS = Path(__file__).parent / "fixtures" / "explain" / "recorded_h100"


@pytest.mark.parametrize(("log", "category"), [
    ("cuda_oom_in_job.log", "oom"),
    ("cuda_device_side_assert.log", "app-fault"),
    ("nccl_net_ib_forced_no_ib.log", "rdma"),
    ("nccl_ib_hca_no_such_device.log", "rdma"),
    ("torchrun_rank_exception.log", "unknown"),  # the job's own ValueError: no cluster cause
    ("torchrun_rank_sigsegv.log", "app-fault"),
    ("torchrun_rank_sigkill.log", "oom"),
    ("torchrun_rank_sigabrt.log", "unknown"),  # a lone SIGABRT names no cause (table_exit)
    ("torchrun_rendezvous_second_node_missing.log", "rendezvous"),
])
def test_second_batch_of_real_gpu_logs_is_explained(log: str, category: str) -> None:
    """Real torch 2.11 / NCCL 2.28.9 logs from an H100 (recorded_h100/SOURCE.md), recorded before any signature
    was written for them: the first cause's category (the healthy log: tests/test_explain_clean.py)."""
    result = explain_texts({log: (H100_LOGS / log).read_text(encoding="utf-8")})
    assert result.best is not None and result.best.signature.category == category, \
        [(m.signature.id, m.signature.category) for m in result.matches]


H200_THIRD = Path(__file__).parent / "fixtures" / "explain" / "recorded_h200_3"


@pytest.mark.parametrize(("log", "expected"), [
    ("nccl_watchdog_timeout_busy_gpu.log", "nccl.watchdog_timeout"),
    ("nccl_init_gpu_memory_full.log", "cuda.oom"),
    ("cuda_illegal_address_torchrun.log", "code.cuda_error.700"),
    ("nccl_net_aws_libfabric_missing.log", "nccl.no_net_plugin"),
])
def test_third_batch_of_real_gpu_logs_is_explained(log: str, expected: str) -> None:
    """Real torch 2.11 / NCCL 2.28.9 logs from an H200 (recorded_h200_3/SOURCE.md), recorded before any rule was
    written for them: the first cause (the healthy ones: tests/test_explain_clean.py)."""
    result = explain_texts({log: (H200_THIRD / log).read_text(encoding="utf-8")})
    assert result.best is not None and result.best.signature.id == expected, [m.signature.id for m in result.matches]


@pytest.mark.parametrize("log", ["nccl_socket_family_inet6.log", "nccl_algo_bogus.log"])
def test_runs_that_succeeded_despite_their_settings_name_no_cause(log: str) -> None:
    """NCCL_SOCKET_FAMILY=AF_INET6 on a node with IPv6 and a bogus NCCL_ALGO: both jobs reduced and exited 0."""
    result = explain_texts({log: (H200_THIRD / log).read_text(encoding="utf-8")})
    assert result.best is None and result.matches == []


H200_FOURTH = Path(__file__).parent / "fixtures" / "explain" / "recorded_h200_4"


@pytest.mark.parametrize(("log", "category"), [
    ("nccl_comm_init_gpu_full.log", "oom"),
    ("accelerate_one_process_no_rank_env.log", "launch-args"),
    ("accelerate_two_processes_one_gpu.log", "device-mapping"),
    ("ddp_unused_parameter.log", "unknown"),  # the job's own bug: no cluster cause
    ("lightning_devices_beyond_gpus.log", "device-mapping"),
])
def test_fourth_batch_of_real_gpu_logs_the_launchers_is_explained(log: str, category: str) -> None:
    """Real logs of accelerate, Lightning and DDP from an H200 (recorded_h200_4/SOURCE.md): the first cause."""
    result = explain_texts({log: (H200_FOURTH / log).read_text(encoding="utf-8")})
    got = result.best.signature.category if result.best is not None else "unknown"
    assert got == category, [(m.signature.id, m.signature.category) for m in result.matches]


def test_a_healthy_lightning_ddp_run_names_no_cause() -> None:
    log = (H200_FOURTH / "lightning_ddp_healthy.log").read_text(encoding="utf-8")
    result = explain_texts({"lightning.log": log})
    assert result.best is None and result.matches == []
