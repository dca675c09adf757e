"""``preflight explain``: user signatures (override, add, bad files with their line), ``--list``, empty and
binary logs, no log on a terminal, and the root cause over its symptoms within one log."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from preflight.explain.catalog import CATALOG, SIGNATURES
from preflight.explain.matcher import explain_texts
from preflight.explain.user import SignatureFileError, merge, parse_signatures

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
EXCERPTS: dict[str, dict[str, str]] = json.loads((FIXTURES / "excerpts.json").read_text(encoding="utf-8"))
OOM = EXCERPTS["cuda.out_of_memory"]["excerpt"]
RESET = EXCERPTS["nccl.socket_reset_by_peer"]["excerpt"]
# A real line the catalog has no entry for (https://github.com/NVIDIA/nccl-tests/issues/188).
UNKNOWN = "misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3\n"

ADD = """signatures:
  - id: site.nccl_wrong_type
    category: version-mismatch
    pattern: 'socketFinalizeAccept: wrong type \\d+ != \\d+'
    meaning: A peer speaking another NCCL version (or another program) connected to NCCL's socket.
    remedy: Use one NCCL build on every node.
    verify: [versions.nccl]
"""
OVERRIDE = """signatures:
  - id: cuda.out_of_memory
    category: oom
    patterns:
      - 'CUDA out of memory'
    meaning: Our site's note on GPU OOM.
    remedy: Use the 80 GB partition (--partition=a100-80g).
    verify: gpu.devices
"""


def _cli(*args: str, config: Path, stdin: bytes | None = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    return subprocess.run([sys.executable, "-m", "preflight", "explain", *args], input=stdin, env=env,
                          capture_output=True, timeout=60, check=False)


def test_add_a_signature_from_a_file(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text(UNKNOWN)
    assert explain_texts({"r": UNKNOWN}).best is None  # the built-in catalog does not know it
    (tmp_path / "mine.yaml").write_text(ADD)
    done = _cli(str(log), "--signatures", str(tmp_path / "mine.yaml"), "--json", config=tmp_path / "none")
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)["matches"][0]
    assert (first["id"], first["category"], first["checks"]) == (
        "site.nccl_wrong_type", "version-mismatch", ["versions.nccl"])
    assert first["fix"] == "Use one NCCL build on every node."


def test_override_a_builtin_from_the_config_directory(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "preflight").mkdir(parents=True)
    (config / "preflight" / "signatures.yaml").write_text(OVERRIDE)
    log = tmp_path / "rank0.log"
    log.write_text(OOM)
    done = _cli(str(log), config=config)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "root cause: oom (cuda.out_of_memory)" in out
    assert "Use the 80 GB partition" in out and "Our site's note" in out
    assert f"source: {config / 'preflight' / 'signatures.yaml'}:2" in out
    merged = merge(CATALOG, parse_signatures(OVERRIDE, "s.yaml"))
    assert len(merged) == len(CATALOG)  # replaced in place, not added
    assert [s.id for s in merged] == [s.id for s in CATALOG]


@pytest.mark.parametrize(("text", "line", "message"), [
    (ADD.replace("version-mismatch", "versions-mismatch"), 3, "unknown category 'versions-mismatch'"),
    (ADD.replace("'socketFinalizeAccept", "'(socketFinalizeAccept"), 4, "bad regex"),
    (ADD.replace("    verify:", "    verfiy:"), 7, "unknown key 'verfiy'"),
    (ADD.replace("versions.nccl", "versions.nope"), 7, "unknown check 'versions.nope'"),
    (ADD.replace("    pattern:", "    patterns: [x]\n    pattern:"), 2, "give exactly one of 'pattern'"),
    (ADD.replace("    meaning:", "    remedy: twice\n    meaning:"), 7, "duplicate key 'remedy'"),
    (ADD + ADD.replace("signatures:\n", ""), 8, "duplicate id 'site.nccl_wrong_type' (first at line 2)"),
    (ADD.replace("pattern: 'socket", "pattern: '.*|socket"), 4, "matches an empty line"),
    ("signatures:\n  - id: x\n    category: [oom\n", 4, "invalid YAML"),
    ("- id: x\n", 1, "expected one key, 'signatures:'"),
])
def test_a_bad_file_names_its_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    done = _cli(str(FIXTURES / "multirank" / "loopback_one_rank" / "rank1.log"), "--signatures", str(path),
                config=tmp_path / "none")
    err = done.stderr.decode()
    assert done.returncode == 2 and not done.stdout
    assert err.startswith(f"preflight: {path}:{line}: ") and message in err, err


def test_bad_file_error_without_cli() -> None:
    with pytest.raises(SignatureFileError, match=r"^s\.yaml:3: unknown category"):
        parse_signatures(ADD.replace("version-mismatch", "nope"), "s.yaml", lambda ident: True)
    assert parse_signatures("", "s.yaml") == []


def test_list_prints_the_catalog_with_user_entries(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(ADD)
    done = _cli("--list", "--signatures", str(tmp_path / "mine.yaml"), config=tmp_path / "none")
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 0
    assert lines[0].split() == ["id", "category", "kind", "source"]
    assert lines[-1] == f"{len(CATALOG) + 1} signatures"
    rows = {line.split()[0]: line for line in lines[1:-2]}
    assert set(rows) == set(SIGNATURES) | {"site.nccl_wrong_type"}
    assert rows["nccl.socket_reset_by_peer"].split()[2] == "symptom"
    assert rows["site.nccl_wrong_type"].endswith(f"{tmp_path / 'mine.yaml'}:2")


def test_empty_and_binary_logs_say_why_nothing_matched(tmp_path: Path) -> None:
    empty = tmp_path / "rank0.log"
    empty.write_bytes(b"")
    binary = tmp_path / "rank1.log"
    binary.write_bytes(bytes(range(256)) * 64)  # NULs, control and undecodable bytes: not a log
    done = _cli(str(empty), str(binary), config=tmp_path / "none")
    out = done.stdout.decode()
    assert done.returncode == 0
    assert f"{empty}: the file is empty" in out
    assert f"{binary}: it looks binary:" in out
    data = json.loads(_cli(str(empty), str(binary), "--json", config=tmp_path / "none").stdout)
    assert data["notes"][str(empty)] == "the file is empty" and "binary" in data["notes"][str(binary)]
    assert "notes" not in explain_texts({"r": OOM}).to_dict()


def test_no_log_on_a_terminal_prints_usage(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "preflight", "explain"], stdin=terminal,
                              env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}, capture_output=True,
                              timeout=60, check=False)
    finally:
        os.close(controller)
        os.close(terminal)
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.decode().startswith("usage: preflight explain LOG")


@pytest.mark.parametrize("order", ["oom first", "reset first"])
def test_root_cause_over_symptom_within_one_log(order: str) -> None:
    """A peer's `Connection reset by peer` next to a CUDA OOM in the same log: the OOM is the cause."""
    text = OOM + RESET if order == "oom first" else RESET + OOM
    result = explain_texts({"rank0.log": text})
    assert [m.signature.id for m in result.matches] == ["cuda.out_of_memory", "nccl.socket_reset_by_peer"]
