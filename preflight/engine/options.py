"""What a run is given (RunOptions) and what one host's gather gives back (HostGather).

>>> RunOptions().host_timeout
60.0
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from preflight.batch import ProbeOutput
from preflight.inventory import Host
from preflight.model import Finding, HostResult
from preflight.transport.base import Transport

TransportFactory = Callable[[Host], Transport]


@dataclass(frozen=True)
class RunOptions:
    parallel: int = 64
    connect_timeout: float = 10.0
    command_timeout: float | None = None  # caps every probe's own timeout
    host_timeout: float = 60.0  # bounds one host's whole gather, connect included
    accept_new_host_keys: bool = False
    only: Sequence[str] = ()  # finding-id prefixes to keep (families or dotted ids)
    drop: Sequence[str] = ()  # finding ids to leave out (`--skip ID`: the check runs, these findings do not show)
    sudo: bool = False  # run probes marked root=True under `sudo -n` (never waits for a password)
    # False: a host's raw outputs are dropped once parsed into facts (a run keeps them only for --record):
    # at 10,000 hosts that is ~10 KiB a host less to hold and for the garbage collector to walk.
    keep_outputs: bool = True


@dataclass
class HostGather:
    """What came back from one host."""

    host: Host
    result: HostResult
    outputs: dict[str, dict[str, ProbeOutput]] = field(default_factory=dict)  # check ident -> probe key -> output
    findings: list[Finding] = field(default_factory=list)


def ssh_transport_factory(options: RunOptions) -> TransportFactory:
    """SSH to every host, except ``localhost``/``local`` with no SSH settings, which runs here directly; over the
    system ssh client (preflight.transport.openssh) for a host with an ``openssh_reason``, when ssh is installed."""
    # paramiko (~85 ms of imports) only when a run may use SSH: `preflight node` never does. Imported here, once,
    # not in the worker threads that call make().
    from preflight.transport.local import LocalTransport
    from preflight.transport.openssh import ControlDir, OpenSSHTransport
    from preflight.transport.ssh import SSHTransport, jump_pool

    jumps = jump_pool(options.connect_timeout, options.accept_new_host_keys)  # one connection per jump host
    control: list[ControlDir] = []  # made on first use only
    ssh = shutil.which("ssh")

    def make(host: Host) -> Transport:
        if host.address in ("localhost", "local") and host.proxy_jump is None and host.port == 22 \
                and host.identity_file is None and host.proxy_command is None:
            return LocalTransport()
        if host.openssh_reason and ssh:
            if not control:
                control.append(ControlDir())
            return OpenSSHTransport(host, control[0], options.connect_timeout, options.accept_new_host_keys, ssh)
        return SSHTransport(host, options.connect_timeout, options.accept_new_host_keys, jumps)
    return make
