"""The cluster a command runs on: hosts.yaml (or this machine) with ``--accelerator``, ``--rank-table`` and the
job's interpreter folded in, and this machine's entry in it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from preflight.accelerator import CHOICES, Choice, detect_here
from preflight.app.selection import UsageError
from preflight.checks import known_params
from preflight.interpreter import with_interpreter
from preflight.inventory import Host, Inventory, InventoryError, load_inventory, local_inventory


@dataclass(frozen=True)
class Interpreter:
    """The job's interpreter as the command line names it: ``--python``, ``--setup`` lines, and the
    environment they fall back to (``PREFLIGHT_PYTHON`` / ``PREFLIGHT_SETUP``)."""

    python: str | None = None
    setup: Sequence[str] = ()
    environ: Mapping[str, str] = field(default_factory=dict)


def load_cluster(hosts: Path | None, rank_table: Path | None = None, accelerator: str = "auto",
                 interpreter: Interpreter | None = None) -> Inventory:
    """hosts.yaml (None: this machine) with ``--accelerator``, ``--rank-table`` and the job's interpreter folded in.

    ``accelerator``: npu | gpu | cpu overrides hosts.yaml; ``auto`` keeps hosts.yaml's, and on this machine
    (no hosts file) asks npu-smi / nvidia-smi (``preflight.accelerator``). The report says which and why.
    ``interpreter``: ``--python`` / ``--setup`` and the environment they fall back to
    (``preflight.interpreter``: flag over environment over hosts.yaml), for every host.
    """
    try:
        inventory = load_inventory(hosts, known_params()) if hosts else local_inventory()
    except InventoryError as exc:
        raise UsageError(str(exc)) from None
    if interpreter is not None:
        inventory = replace(inventory, hosts=[with_interpreter(h, interpreter.python, interpreter.setup,
                                                               interpreter.environ) for h in inventory.hosts])
    check_accelerator(accelerator)
    if accelerator != "auto":
        choice = Choice(accelerator, f"--accelerator {accelerator}")
    elif hosts is None:
        choice = detect_here()
    else:
        choice = Choice(inventory.cluster.accelerator, inventory.cluster.accelerator_reason)
    cluster = replace(inventory.cluster, accelerator=choice.accelerator, accelerator_reason=choice.reason)
    if hosts is None and choice.devices:  # this machine: expect what the tool counted (--devices-per-host: node)
        cluster = replace(cluster, devices_per_host=choice.devices)
    inventory = replace(inventory, cluster=cluster)
    if rank_table is None:
        return inventory
    try:
        table = json.loads(rank_table.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{rank_table}: cannot read the rank table: {exc}") from None
    hccn = {**inventory.params.get("hccn", {}), "rank_table": table}
    return replace(inventory, params={**inventory.params, "hccn": hccn})


def check_accelerator(accelerator: str) -> None:
    """A usage error unless ``accelerator`` is one ``--accelerator`` takes.

    >>> check_accelerator("tpu")
    Traceback (most recent call last):
    ...
    preflight.app.selection.UsageError: --accelerator must be one of auto, npu, gpu, cpu, not 'tpu'
    """
    if accelerator not in CHOICES:
        raise UsageError(f"--accelerator must be one of {', '.join(CHOICES)}, not {accelerator!r}")


def node_name(environ: Mapping[str, str], name: str | None = None) -> str:
    """This machine's name: ``name`` (``--name``), else Slurm's for it (``SLURMD_NODENAME``, in a prolog), else
    the host name.

    >>> node_name({"SLURMD_NODENAME": "gpu07"}), node_name({"SLURMD_NODENAME": "gpu07"}, "n1")
    ('gpu07', 'n1')
    """
    return name or environ.get("SLURMD_NODENAME") or os.uname().nodename


def this_host(inventory: Inventory, name: str, hosts: Path) -> Host:
    """This machine's entry in hosts.yaml (``node --hosts``): by name or address, else by short name.

    >>> from preflight.inventory import ClusterSpec, Host
    >>> this_host(Inventory([Host("gpu01.example", "10.0.0.1")], ClusterSpec()), "gpu01", Path("h.yaml")).address
    '10.0.0.1'
    """
    for host in inventory.hosts:
        if name in (host.name, host.address):
            return host
    short = name.split(".")[0]
    for host in inventory.hosts:
        if short == host.name.split(".")[0]:
            return host
    raise UsageError(f"{name!r} is not a host of {hosts} (give this node's name there with --name)")
