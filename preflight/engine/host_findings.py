"""The findings about reaching a host: ``ssh.connect`` (pass, or error with a remedy), ``ssh.session`` (the
host did not finish in time) and ``ssh.sudo`` (whether root probes can run). Pure.

>>> unreachable(Host("n1", "10.0.0.1"), "refused", "connection refused", 0.1).remedy
'systemctl start sshd  (on the node)'
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from preflight.batch import ProbeOutput
from preflight.inventory import Host
from preflight.model import Finding, Status


def connected(host: Host, probes: int, seconds: float) -> Finding:
    over = f" over the system ssh client ({host.openssh_reason})" if host.openssh_reason else ""
    return Finding("ssh.connect", host.name, Status.PASS,
                   f"ssh.connect: ran {probes} probes in {seconds:.2f} s{over}", observed=f"{seconds:.2f} s")


def timed_out(host: Host, host_timeout: float, seconds: float, unfinished: Sequence[str]) -> Finding:
    return Finding("ssh.session", host.name, Status.ERROR,
                   f"ssh.session: {host.name} did not finish within {host_timeout:g} s; "
                   f"checks not completed: {', '.join(unfinished) or 'none'}",
                   observed=f"{seconds:.1f} s", expected=f"< {host_timeout:g} s")


def unreachable(host: Host, kind: str, message: str, seconds: float) -> Finding:
    """``ssh.connect`` error for a host that could not be reached (``kind``: TransportError's word)."""
    known = shlex.quote(host.known_hosts) if host.known_hosts else "~/.ssh/known_hosts"  # the file the run used
    name = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
    key = host.identity_file or "~/.ssh/id_ed25519"
    remedy = {
        "hostkey-unknown": f"ssh-keyscan -p {host.port} {host.address} >> {known} "
                           "(after checking the fingerprint)",
        "hostkey-changed": f"ssh-keygen -R {shlex.quote(name)} -f {known}  # only if the node was really reinstalled",
        "refused": "systemctl start sshd  (on the node)",
        "auth": f"ssh-copy-id -p {host.port} {host.user}@{host.address}",
        # the same on every host that names this file: the problems fold into one block (node[1-16])
        "identity": f"ssh-keygen -t ed25519 -f {shlex.quote(key)}  # once, then to every node: ssh-copy-id -i "
                    f"{shlex.quote(key)}.pub -p {host.port} {host.user}@NODE; or fix identity_file in hosts.yaml",
    }.get(kind)
    return Finding("ssh.connect", host.name, Status.ERROR, f"ssh.connect: {message}", observed=kind,
                   expected="connected", remedy=remedy)


def sudo(host: Host, output: ProbeOutput) -> Finding:
    """``ssh.sudo``: pass when root probes can run (already root, or passwordless ``sudo -n``), else error.

    >>> sudo(Host("n1", "n1", user="bob"), ProbeOutput("", "sudo: a password is required", 1)).status.value
    'error'
    """
    how = output.stdout.strip().splitlines()[-1:] if output.ok else []
    if how in (["root"], ["sudo"]):
        return Finding("ssh.sudo", host.name, Status.PASS,
                       f"ssh.sudo: root probes run {'as root' if how == ['root'] else 'under sudo -n'}",
                       observed=how[0])
    reason = " ".join(output.stderr.split())[:200] or f"exit status {output.exit_status}"
    if "password" in output.stderr.lower():
        reason = f"sudo asks {host.user} for a password ({reason}); preflight never types one"
    elif output.exit_status == 127 or "not found" in output.stderr:
        reason = f"sudo is not installed ({reason})"
    elif output.timed_out:
        reason = "sudo -n did not answer in time"
    return Finding("ssh.sudo", host.name, Status.ERROR,
                   f"ssh.sudo: cannot run root probes on {host.name}: {reason}; those checks see what "
                   f"{host.user} may see",
                   observed=reason, expected="passwordless sudo -n (or user root)",
                   remedy=f"echo '{host.user} ALL=(root) NOPASSWD: ALL' | sudo tee /etc/sudoers.d/preflight "
                          "&& sudo chmod 440 /etc/sudoers.d/preflight  # or narrower: the probe commands only")
