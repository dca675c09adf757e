"""``preflight node --facts``: gather every probe ``run`` would send this host, here (no SSH), as a facts file.

For engines that run one copy of preflight per node (a Kubernetes Job, ``srun``, clush, Ansible) and have no
controller that reaches every node: each node writes its facts file (:func:`write_facts`), something copies the
files to one place, and ``preflight judge`` (``preflight.app.judge``) evaluates every check across all of them.
The gather is the engine's (``RunOptions.passive``: no active phase; the active checks connect hosts live).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from preflight import facts_file
from preflight.app.cluster import Interpreter, load_cluster, node_name, this_host
from preflight.app.selection import select_checks
from preflight.delivery import write_atomic
from preflight.engine import Engine, RunOptions
from preflight.transport.local import LocalTransport


@dataclass(frozen=True)
class FactsRequest:
    """One ``preflight node --facts``: which host of hosts.yaml this is, which checks, how long at most."""

    hosts: Path | None = None
    name: str | None = None  # this node's name in hosts.yaml (default: the host name)
    checks: Sequence[str] = ()
    skip: Sequence[str] = ()
    accelerator: str = "auto"
    devices_per_host: int | None = None
    master_port: int | None = None  # without hosts.yaml: the job's port (hosts.yaml's cluster.master_port else)
    timeout: float = 60.0
    interpreter: Interpreter | None = None  # --python / --setup / PREFLIGHT_PYTHON / PREFLIGHT_SETUP
    run_id: str | None = None  # written into the file: `judge` takes only the files of its run


def gather_facts(request: FactsRequest) -> dict[str, object]:
    """Gather every probe ``run`` would send this host, here, as a facts document; UsageError first, RuntimeError
    when the gather itself failed."""
    inventory = load_cluster(request.hosts, accelerator=request.accelerator, interpreter=request.interpreter)
    name = node_name(os.environ, request.name)
    if request.hosts is not None:
        host = this_host(inventory, name, request.hosts)
    else:
        host = replace(inventory.hosts[0], name=name)
        cluster = replace(inventory.cluster, master=name, master_port=request.master_port or 29500)
        inventory = replace(inventory, hosts=[host], cluster=cluster)
    if request.devices_per_host is not None:
        inventory = replace(inventory, cluster=replace(inventory.cluster, devices_per_host=request.devices_per_host))
    selection = select_checks(request.checks, request.skip)
    started = datetime.now(timezone.utc)
    engine = Engine(replace(inventory, hosts=[host]), selection.checks,
                    RunOptions(parallel=1, host_timeout=request.timeout, passive=True),
                    transport_factory=lambda _: LocalTransport())
    try:
        engine.gather()
    finally:
        engine.close()
    gather = engine.gathered[host.name]
    if not gather.result.reachable:
        raise RuntimeError(" ".join(f.message for f in gather.findings) or "the gather failed")
    return facts_file.dump(selection.checks, host, inventory.cluster, gather.outputs,
                           started.isoformat(timespec="seconds"), gather.result.seconds,
                           (tuple(request.checks), tuple(request.skip)), request.run_id or None)


def write_facts(request: FactsRequest, target: str) -> None:
    """Gather (:func:`gather_facts`) and write the facts file to ``target`` ('-': stdout), atomically: a reader of
    a shared volume never sees half a file."""
    text = facts_file.to_text(gather_facts(request))
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomic(Path(target), text)
