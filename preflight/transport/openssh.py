"""Run scripts over the system ``ssh`` client, one ControlMaster per host (``--transport openssh``).

For what paramiko cannot do: host certificates (``@cert-authority``), ``RevokedHostKeys``, GSSAPI/Kerberos,
FIDO and PKCS#11 keys. The master connects and authenticates once (``connect``); each script is one more session
multiplexed over it. Control sockets live in a private temporary directory (mode 700). hosts.yaml's settings go on
the command line (``-o``), where they beat the config, as hosts.yaml's entry does for the paramiko transport.

>>> classify("root@10.0.0.1: Permission denied (publickey).").kind
'auth'
>>> classify("Host key verification failed.").kind
'hostkey-unknown'
"""

from __future__ import annotations

import atexit
import math
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from preflight.inventory import Host
from preflight.transport.base import Execution, OutputWatcher, TransportError

_ERRORS = (  # (words in ssh's stderr, TransportError kind), first match wins
    ("REMOTE HOST IDENTIFICATION HAS CHANGED", "hostkey-changed"),
    ("Host key verification failed", "hostkey-unknown"),
    ("Permission denied", "auth"),
    ("Connection refused", "refused"),
    ("Could not resolve hostname", "resolve"),
    ("timed out", "timeout"),
    ("No route to host", "unreachable"),
    ("Network is unreachable", "unreachable"),
    ("banner exchange", "banner"),
)


def classify(stderr: str) -> TransportError:
    """ssh's own error message (exit status 255) -> TransportError."""
    lines = [line for line in stderr.strip().splitlines() if line.strip() and not line.startswith("Warning:")]
    message = lines[-1] if lines else "ssh exited with status 255"
    for words, kind in _ERRORS:
        if words in stderr:
            return TransportError(kind, f"ssh: {message}")
    return TransportError("ssh", f"ssh: {message}")


class ControlDir:
    """The run's private directory of ControlMaster sockets, removed at exit."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="pf-ssh-"))  # short: a socket path has ~104 bytes
        atexit.register(shutil.rmtree, self.path, True)


class OpenSSHTransport:
    """One host over the system ssh client, its sessions multiplexed over one master connection."""

    def __init__(self, host: Host, control: ControlDir, connect_timeout: float = 10.0,
                 accept_new_host_keys: bool = False, ssh: str = "ssh") -> None:
        self.host = host
        self.control = control
        self.connect_timeout = connect_timeout
        self.accept_new_host_keys = accept_new_host_keys
        self.ssh = ssh
        self.master = False

    def argv(self, *extra: str) -> list[str]:
        """The ssh command line for this host (``extra`` options before the destination)."""
        host = self.host
        argv = [self.ssh] + (["-F", host.ssh_config] if host.ssh_config else [])
        options = {
            "BatchMode": "yes", "ConnectTimeout": str(max(1, math.ceil(self.connect_timeout))),
            "ControlPath": f"{self.control.path}/%C", "HostName": host.address, "User": host.user,
            "Port": str(host.port), "StrictHostKeyChecking": "accept-new" if self.accept_new_host_keys else "yes",
            "LogLevel": "ERROR",
        }
        if host.identity_file:
            options["IdentityFile"] = host.identity_file
        if host.known_hosts:
            options["UserKnownHostsFile"] = host.known_hosts
        if host.proxy_command:
            options["ProxyCommand"] = host.proxy_command
        elif host.proxy_jump:
            options["ProxyJump"] = host.proxy_jump
        for key, value in options.items():
            argv += ["-o", f"{key}={value}"]
        return [*argv, *extra, "--", host.name]

    def connect(self) -> None:
        """Start the master: it authenticates (host key verified), then stays in the background."""
        if self.master:
            return
        with tempfile.TemporaryFile() as err:  # not a pipe: the backgrounded master would hold it open
            try:
                done = subprocess.run(self.argv("-o", "ControlMaster=yes", "-o", "ControlPersist=300", "-f", "-N"),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                      timeout=3 * self.connect_timeout + 5, check=False)
            except subprocess.TimeoutExpired as exc:
                raise TransportError("timeout", f"ssh did not connect to {self.host.name} within "
                                                f"{3 * self.connect_timeout + 5:g} s") from exc
            except OSError as exc:
                raise TransportError("ssh", f"cannot run {self.ssh}: {exc}") from exc
            if done.returncode != 0:
                err.seek(0)
                raise classify(err.read().decode(errors="replace"))
        self.master = True

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        """``sh -s`` over the master; stdout is handed to ``on_stdout`` once, at the end."""
        self.connect()
        start = time.monotonic()
        proc = subprocess.Popen(self.argv("-o", "ControlMaster=no", "-T") + ["sh -s"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(script.encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            return Execution(out, err, None, True, time.monotonic() - start)
        if proc.returncode == 255 and not out:
            raise classify(err.decode(errors="replace"))
        if on_stdout is not None and out:
            on_stdout(out)
        return Execution(out, err, proc.returncode, False, time.monotonic() - start)

    def close(self) -> None:
        if self.master:
            subprocess.run(self.argv("-O", "exit"), stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
                           check=False)
            self.master = False
