"""What a run is given (RunOptions), what one host's gather gives back (HostGather), and hosts gathered
elsewhere for the engine to judge (Replay).

>>> RunOptions().host_timeout
60.0
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

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
    # True: gather and judge only, no active phase (no listeners during the gather, no steps after it), and
    # the active checks are not judged: `node --facts` (one host's outputs for `judge`) and `judge` itself.
    passive: bool = False


@dataclass
class HostGather:
    """What came back from one host."""

    host: Host
    result: HostResult
    outputs: dict[str, dict[str, ProbeOutput]] = field(default_factory=dict)  # check ident -> probe key -> output
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class Replay:
    """Hosts gathered elsewhere, for ``Engine.replay`` to judge as its own gather (``preflight judge``: the facts
    files of ``node --facts``)."""

    gathered: Sequence[HostGather]  # every host of the inventory, as the gather would have given it
    started: str  # when the first of them was gathered: the report's start
    since: datetime  # when judging began: the report's duration runs from here
    # Findings about the inputs themselves (a file unreadable, missing, of another run): kept whatever --checks
    # and --skip say, like the hosts' own gather findings.
    inputs: Sequence[Finding] = ()
    # Findings standing in for what the outputs cannot support (os.clock needs the controller's own times, an
    # active check its live connections): each replaces the findings of its id, where its check is judged.
    stand_ins: Sequence[Finding] = ()


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
