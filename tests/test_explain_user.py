"""``preflight explain`` user signatures (override, add, bad file), ``--list`` and the edge cases (empty or
binary log, no argument on a terminal). Runs the real CLI in a subprocess."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from preflight import exit_codes
from preflight.explain.catalog import CATALOG

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB.\n"  # MGFN #35, see corpus.json
SITE = "slurmstepd: error: *** JOB 1234 ON node7 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***\n"


def _cli(tmp: Path, *args: str, stdin: bytes | None = b"", config: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "config")}
    if config is not None:
        (tmp / "config" / "preflight").mkdir(parents=True, exist_ok=True)
        (tmp / "config" / "preflight" / "signatures.yaml").write_text(config, encoding="utf-8")
    return _run(env, args, stdin)


def _run(env: dict[str, str], args: tuple[str, ...], stdin: bytes | None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "preflight", "explain", *args], input=stdin, env=env,
                          capture_output=True, timeout=60, check=False)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_user_signature_overrides_a_builtin_one(tmp_path: Path) -> None:
    config = ("- id: cuda.oom\n  category: oom\n  pattern: 'CUDA out of memory'\n"
              "  meaning: Our site's note on GPU OOM.\n  remedy: Use the big-memory partition.\n")
    done = _cli(tmp_path, "--json", "-", stdin=OOM.encode(), config=config)
    assert done.returncode == exit_codes.OK, done.stderr
    assert '"id": "cuda.oom"' in done.stdout and "Our site's note on GPU OOM." in done.stdout
    listed = _cli(tmp_path, "--list", config=config).stdout
    assert listed.count("cuda.oom ") == 1 and f"{len(CATALOG)} signatures" in listed
    assert "user signature" in listed


def test_user_signature_adds_an_entry_from_signatures_file(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text("signatures:\n  - id: slurm.time_limit\n    category: launch-args\n"
                     "    pattern: ['CANCELLED AT \\S+ DUE TO TIME LIMIT']\n    meaning: Slurm killed the job.\n"
                     "    remedy: Ask for a longer --time.\n    verify: [os]\n", encoding="utf-8")
    before = _cli(tmp_path, "-", stdin=SITE.encode())
    assert "slurm.time_limit" not in before.stdout
    done = _cli(tmp_path, "--signatures", str(extra), "-", stdin=SITE.encode())
    assert done.returncode == exit_codes.OK, done.stderr
    assert "root cause: launch-args (slurm.time_limit)" in done.stdout and "--time" in done.stdout
    listed = _cli(tmp_path, "--signatures", str(extra), "--list").stdout
    assert f"{len(CATALOG) + 1} signatures" in listed


def test_bad_signature_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- id: a\n  category: oom\n  pattern: 'ok'\n  meaning: m\n  remedy: r\n"
                   "- id: b\n  category: oom\n  pattern: '(unclosed'\n  meaning: m\n  remedy: r\n", encoding="utf-8")
    done = _cli(tmp_path, "--signatures", str(bad), "-", stdin=OOM.encode())
    assert done.returncode == exit_codes.USAGE
    assert f"{bad}:8: bad regex" in done.stderr
    bad.write_text("- id: a\n  category: nonsense\n  pattern: x\n  meaning: m\n  remedy: r\n", encoding="utf-8")
    assert f"{bad}:2: category 'nonsense'" in _cli(tmp_path, "--signatures", str(bad), "--list").stderr
    bad.write_text("- id: a\n  category: oom\n  pattern: x\n  meaning: m\n  remedy: r\n  verify: [no.such]\n",
                   encoding="utf-8")
    assert f"{bad}:6: no check 'no.such'" in _cli(tmp_path, "--signatures", str(bad), "--list").stderr
    bad.write_text("- id: a\n  colour: red\n", encoding="utf-8")
    assert f"{bad}:2: unknown key 'colour'" in _cli(tmp_path, "--signatures", str(bad), "--list").stderr
    bad.write_text("- id: a\n  pattern: [x\n", encoding="utf-8")
    assert "not valid YAML" in _cli(tmp_path, "--signatures", str(bad), "--list").stderr
    # a broken default file is reported too, not silently ignored
    done = _cli(tmp_path, "--list", config="- id: a\n  category: oom\n")
    assert done.returncode == exit_codes.USAGE and "signatures.yaml:1: missing 'pattern'" in done.stderr


def test_empty_and_binary_logs_say_why_nothing_matched(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    done = _cli(tmp_path, str(empty))
    assert done.returncode == exit_codes.OK
    assert f"{empty}: the file is empty" in done.stderr and "unknown" in done.stdout
    binary = tmp_path / "core.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    done = _cli(tmp_path, str(binary))
    assert f"{binary}: the file looks binary (not a text log)" in done.stderr


def test_no_argument_on_a_terminal_prints_usage(tmp_path: Path) -> None:
    main, child = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "preflight", "explain"], stdin=child, capture_output=True,
                              env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}, timeout=60, check=False)
    finally:
        os.close(child)
        os.close(main)
    assert done.returncode == exit_codes.USAGE
    assert b"usage: preflight explain LOG" in done.stderr
