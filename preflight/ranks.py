"""How many ranks the job runs (its world size), and how we know: what the rendezvous thresholds follow.

``preflight run`` counts hosts x ``devices_per_host`` (one rank per device); ``preflight node`` sees one host
and takes the count from ``--ranks`` or from Slurm's variables (:func:`from_slurm`), and otherwise does not
know it (``ClusterSpec.ranks`` 0): then only absolute floors apply.

>>> from preflight.inventory import ClusterSpec, Host
>>> world(ClusterSpec(devices_per_host=8), [Host("a", "a"), Host("b", "b")])
Ranks(count=16, why='2 hosts x 8 devices')
>>> world(ClusterSpec(ranks=512, ranks_reason="--ranks 512"), [Host("a", "a")])
Ranks(count=512, why='--ranks 512')
>>> world(ClusterSpec(ranks=0), [Host("a", "a")]) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from preflight.hostlists import InventoryError, slurm_hosts
from preflight.inventory import ClusterSpec, Host


@dataclass(frozen=True)
class Ranks:
    count: int
    why: str  # how it was worked out, for the findings' messages


def world(cluster: ClusterSpec, hosts: Sequence[Host]) -> Ranks | None:
    """The job's rank count: ``cluster.ranks`` when set (0: unknown -> None), else hosts x devices per host."""
    if cluster.ranks is not None:
        return Ranks(cluster.ranks, cluster.ranks_reason or "given") if cluster.ranks > 0 else None
    devices = max(1, cluster.devices_per_host)
    plural = "s" if len(hosts) != 1 else ""
    return Ranks(len(hosts) * devices, f"{len(hosts)} host{plural} x {devices} device{'s' if devices != 1 else ''}")


def from_slurm(environ: Mapping[str, str], devices_per_host: int) -> Ranks | None:
    """The rank count of the Slurm job this runs in or for, from the variables Slurm sets; None outside one.

    The job's nodes come from ``SLURM_JOB_NUM_NODES`` (set in the job and its steps) or else the length of
    ``SLURM_JOB_NODELIST`` (also set in the Prolog's environment, where task counts are not); a job runs at
    least one rank per device on each of them. ``SLURM_NTASKS`` (one task per rank, as `srun` launches do)
    counts when it is larger: torchrun-style launches run one task per node and start the ranks themselves.

    >>> from_slurm({"SLURM_JOB_NUM_NODES": "64"}, 8)
    Ranks(count=512, why='SLURM_JOB_NUM_NODES=64 x 8 devices')
    >>> from_slurm({"SLURM_JOB_NODELIST": "gpu[01-02]", "SLURM_NTASKS": "32"}, 8)
    Ranks(count=32, why='SLURM_NTASKS=32')
    >>> from_slurm({"SLURM_NTASKS": "x"}, 8) is None, from_slurm({}, 8) is None
    (True, True)
    """
    devices = max(1, devices_per_host)
    found: list[Ranks] = []
    nodes = _count(environ.get("SLURM_JOB_NUM_NODES"))
    if nodes:
        found.append(Ranks(nodes * devices, f"SLURM_JOB_NUM_NODES={nodes} x {devices} devices"))
    elif environ.get("SLURM_JOB_NODELIST"):
        try:
            names = slurm_hosts(environ).names
        except InventoryError:
            names = []
        if names:
            found.append(Ranks(len(names) * devices, f"{len(names)} hosts in SLURM_JOB_NODELIST x {devices} devices"))
    tasks = _count(environ.get("SLURM_NTASKS"))
    if tasks:
        found.append(Ranks(tasks, f"SLURM_NTASKS={tasks}"))
    return max(found, key=lambda r: r.count) if found else None


def _count(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if value.isdecimal() and int(value) > 0 else None
