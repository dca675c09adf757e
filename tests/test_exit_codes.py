"""The scheduler contract (preflight.exit_codes, docs/exit-codes.md): each exit code, produced for real.

No namespace cluster is needed: an unreachable host is a closed port here, a hung one a local socket that
accepts and never speaks SSH; ``preflight node`` judges this machine.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import closed_port, interruptible

from preflight import __version__, cli, exit_codes
from preflight import app as application

PF = [sys.executable, "-m", "preflight"]


def preflight(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PF, *args], capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, **(env or {})})


def hosts_file(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text(f"defaults:\n  known_hosts: {tmp_path / 'known_hosts'}\n"
                    f"hosts:\n  - name: n1\n    address: 127.0.0.1\n    port: {port}\n")
    (tmp_path / "known_hosts").write_text("")
    return path


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that accepts and never says a word (a host whose sshd hangs)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    server.close()


def test_could_not_tell_is_4_not_1(tmp_path: Path) -> None:
    done = preflight("run", "--hosts", str(hosts_file(tmp_path, closed_port())), "--json",
                     "--report-dir", str(tmp_path / "r"))
    assert done.returncode == exit_codes.COULD_NOT_TELL == 4, done.stdout[-2000:] + done.stderr
    assert '"status": "error"' in done.stdout and '"status": "fail"' not in done.stdout


def test_a_json_run_never_loads_rich(tmp_path: Path) -> None:
    """`run --json` (a prolog's or a script's) draws nothing: rich's ~25 ms of imports are not paid before the
    first host is contacted, and report.json and report.html are still written."""
    hosts = hosts_file(tmp_path, closed_port())
    code = ("import sys\nfrom preflight.cli import main\n"
            f"sys.argv = ['preflight', 'run', '--hosts', {str(hosts)!r}, '--json', '--report-dir', "
            f"{str(tmp_path / 'r')!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('rich loaded:', any(m.split('.')[0] == 'rich' for m in sys.modules), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert "rich loaded: False" in done.stderr, done.stderr
    assert json.loads(done.stdout)["verdict"] == "error"
    assert (tmp_path / "r" / "report.json").is_file() and (tmp_path / "r" / "report.html").is_file()


def test_a_fail_is_1_and_usage_is_2(tmp_path: Path) -> None:
    failed = preflight("node", "--checks", "sysctl", "--set", "sysctl.min_somaxconn=2147483647")
    assert failed.returncode == exit_codes.PROBLEMS == 1, failed.stdout + failed.stderr
    usage = preflight("run", "--checks", "sysctl.somaxconm", "--hosts", str(hosts_file(tmp_path, 22)))
    assert usage.returncode == exit_codes.USAGE == 2 and "did you mean" in usage.stderr


def test_a_crash_is_one_line_and_70_with_the_traceback_in_a_log(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    def boom(request: object) -> None:
        raise RuntimeError("engine exploded, HF_TOKEN=hf_secretvalue")

    monkeypatch.setattr(application, "prepare", boom)
    monkeypatch.setenv("PREFLIGHT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setattr(sys, "argv", ["preflight", "run", "--hosts", str(hosts_file(tmp_path, 22)), "--json"])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == exit_codes.INTERNAL == 70
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("preflight: internal error: RuntimeError: engine exploded")
    assert "hf_secretvalue" not in err[0] and "Traceback" not in err[0]
    [log] = list((tmp_path / "logs").glob("crash-*.log"))
    assert str(log) in err[0]
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "in boom" in text and "hf_secretvalue" not in text


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signals_exit_143_and_130_with_a_partial_report(silent_server: int, tmp_path: Path, sig: int,
                                                        code: int) -> None:
    proc = subprocess.Popen([*PF, "run", "--hosts", str(hosts_file(tmp_path, silent_server)), "--json",
                             "--connect-timeout", "60", "--host-timeout", "90", "--report-dir", str(tmp_path / "r")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    time.sleep(4.0)  # past start-up: it waits for the banner the silent host never sends
    assert proc.poll() is None, "still waiting on the silent host"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, out[-1000:] + err
    written = tmp_path / "r" / "report.json"
    assert written.exists() and '"complete": false' in written.read_text()


def test_a_host_that_never_speaks_ssh_is_one_finding_not_a_traceback(silent_server: int, tmp_path: Path) -> None:
    done = preflight("run", "--hosts", str(hosts_file(tmp_path, silent_server)), "--json", "--connect-timeout", "1",
                     "--report-dir", str(tmp_path / "r"))
    assert done.returncode == exit_codes.COULD_NOT_TELL, done.stderr
    assert "Traceback" not in done.stderr and "Exception (client)" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2, done.stderr
    assert "banner" in done.stdout.lower(), "the ssh.connect finding says what happened"


def test_a_read_only_directory_still_gets_its_report(tmp_path: Path) -> None:
    hosts = hosts_file(tmp_path, closed_port())
    done = subprocess.run([*PF, "run", "--hosts", str(hosts)], capture_output=True, text=True, timeout=120,
                          check=False, cwd="/proc", env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"),
                                                         "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert done.returncode == exit_codes.COULD_NOT_TELL, done.stdout + done.stderr
    written = list((tmp_path / "state" / "preflight" / "reports").glob("*/report.json"))
    assert len(written) == 1 and str(written[0].parent) in done.stdout + done.stderr


def test_version_flag() -> None:
    done = preflight("--version")
    assert done.returncode == 0 and done.stdout.strip() == __version__


def test_a_missing_identity_file_says_so_with_a_remedy(tmp_path: Path) -> None:
    hosts = hosts_file(tmp_path, closed_port())
    hosts.write_text(hosts.read_text().replace("defaults:\n", f"defaults:\n  identity_file: {tmp_path / 'nokey'}\n"))
    done = preflight("run", "--hosts", str(hosts), "--json", "--report-dir", str(tmp_path / "r"))
    assert done.returncode == exit_codes.COULD_NOT_TELL
    [connect] = [f for f in json.loads(done.stdout)["findings"] if f["check"] == "ssh.connect"]
    assert f"identity file {tmp_path / 'nokey'} does not exist" in connect["message"]
    assert connect["remedy"].startswith(f"ssh-keygen -t ed25519 -f {tmp_path / 'nokey'}  # once, then to every "
                                        "node: ssh-copy-id")


def test_the_known_hosts_remedy_names_the_configured_file(tmp_path: Path) -> None:
    from preflight.engine.host_findings import unreachable
    from preflight.inventory import Host

    host = Host("n1", "10.0.0.1", port=2222, known_hosts="/etc/pf/known hosts")
    assert unreachable(host, "hostkey-unknown", "x", 0.1).remedy == \
        "ssh-keyscan -p 2222 10.0.0.1 >> '/etc/pf/known hosts' (after checking the fingerprint)"
    assert (unreachable(host, "hostkey-changed", "x", 0.1).remedy or "").startswith(
        "ssh-keygen -R '[10.0.0.1]:2222' -f '/etc/pf/known hosts'")


def test_node_writes_a_prometheus_textfile_atomically_with_runs_metric_names(tmp_path: Path) -> None:
    target = tmp_path / "textfile" / "preflight.prom"
    done = preflight("node", "--checks", "sysctl", "--set", "sysctl.min_somaxconn=2147483647",
                     "--prometheus", str(target))
    assert done.returncode == exit_codes.PROBLEMS, done.stdout + done.stderr
    text = target.read_text()
    assert '# TYPE preflight_check_status gauge' in text
    assert 'preflight_check_status{check="sysctl.somaxconn",host="' in text and "} 3\n" in text  # 3 = fail
    assert "\npreflight_verdict 3\n" in text and "\npreflight_exit_code 1\n" in text
    assert "\npreflight_complete 1\n" in text
    assert [p.name for p in target.parent.iterdir()] == ["preflight.prom"], "no temporary file left behind"


def test_bench_allreduce_with_nothing_measured_says_why_not_an_empty_table(tmp_path: Path) -> None:
    done = preflight("bench", "allreduce", "--report-dir", str(tmp_path / "r"))  # this machine alone: no pair
    assert "all_reduce pairs" not in done.stdout
    assert "no all_reduce pair was measured: allreduce.run: nothing to test" in done.stderr, done.stderr
