"""Host lists from schedulers and launchers: ``--hosts slurm``, MPI/DeepSpeed hostfiles, bare ranges.

``--hosts`` accepts, besides a hosts.yaml:

* ``slurm``: the nodes of the current allocation (``SLURM_JOB_NODELIST``, ClusterShell syntax);
* ``hostfile:PATH``: an MPI / DeepSpeed hostfile (``node1 slots=8``; ``#`` comments, blank lines;
  MPICH's ``node1:8`` too). A file whose every line looks like that is recognised without the prefix;
* ``nodes:RANGE``: a ClusterShell node set, e.g. ``nodes:gpu[001-128]``.

Hosts from these lists get SSH settings from ``~/.ssh/config``, as bare names in hosts.yaml do. The
slots of a hostfile become ``cluster.devices_per_host`` when every host has the same count.

This is the lower layer: it expands names (ClusterShell node sets, hostfiles, Slurm's variables) into a
``HostList``; ``preflight.inventory`` turns that into an Inventory (same validation as hosts.yaml) and is never
called back from here.

>>> found = read_hostfile("# workers\\nworker-1 slots=4\\n\\nworker-2 slots=4\\n", None)
>>> found.names, found.cluster
(['worker-1', 'worker-2'], {'devices_per_host': 4})
"""

from __future__ import annotations

import getpass
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ClusterShell.NodeSet import NodeSet, NodeSetParseError

MAX_HOSTS = 100_000

SLURM = "slurm"
HOSTFILE_PREFIX = "hostfile:"
NODES_PREFIX = "nodes:"
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-\[\],]*"
_LINE = re.compile(rf"^(?P<name>{_NAME})(?::(?P<colon>\d+))?(?P<rest>(?:\s+[A-Za-z_\-]+=\S*)*)\s*$")
_SLOT_KEYS = ("slots", "max_slots", "max-slots")


class InventoryError(Exception):
    """A hosts file problem, formatted as ``FILE:LINE: message``."""

    def __init__(self, path: Path | None, line: int | None, message: str) -> None:
        where = str(path) if path else "<hosts>"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class HostList:
    """Host names from a scheduler or launcher list, with what the list says besides the names.

    ``defaults`` and ``cluster`` are hosts.yaml's sections of the same name (e.g. ``{"devices_per_host": 8}``).
    """

    names: list[str]
    defaults: dict[str, Any] = field(default_factory=dict)
    cluster: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None


def is_special(spec: str) -> bool:
    """Whether ``--hosts`` names a scheduler list rather than a file path.

    >>> is_special("slurm"), is_special("hostfile:/tmp/h"), is_special("hosts.yaml")
    (True, True, False)
    """
    return spec == SLURM or spec.startswith((HOSTFILE_PREFIX, NODES_PREFIX))


def special_hosts(spec: str, environ: Mapping[str, str] | None = None) -> HostList:
    """The hosts of ``slurm``, ``hostfile:PATH`` or ``nodes:RANGE``; InventoryError on problems."""
    env = os.environ if environ is None else environ
    if spec == SLURM:
        return slurm_hosts(env)
    if spec.startswith(NODES_PREFIX):
        return HostList(_expand(spec[len(NODES_PREFIX):], None, None))
    path = Path(spec[len(HOSTFILE_PREFIX):])
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InventoryError(path, None, f"cannot read: {exc}") from exc
    return read_hostfile(text, path)


def slurm_hosts(environ: Mapping[str, str]) -> HostList:
    """The nodes of the current Slurm allocation, in Slurm's order.

    >>> slurm_hosts({"SLURM_JOB_NODELIST": "gpu[01-02],cpu7"}).names
    ['cpu7', 'gpu01', 'gpu02']
    """
    nodelist = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist:
        raise InventoryError(None, None, "--hosts slurm: SLURM_JOB_NODELIST is not set (run inside an allocation: "
                                         "salloc, sbatch or srun)")
    names = _expand(nodelist, None, None, what="SLURM_JOB_NODELIST")
    return HostList(names, defaults={"user": getpass.getuser()})


def looks_like_hostfile(text: str) -> bool:
    """Whether every meaningful line is ``host [slots=N ...]`` (so not YAML).

    >>> looks_like_hostfile("n1 slots=8\\nn2 slots=8\\n"), looks_like_hostfile("hosts:\\n  - n1\\n")
    (True, False)
    """
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    return bool(lines) and all(_LINE.match(line) for line in lines)


def read_hostfile(text: str, path: Path | None) -> HostList:
    """An MPI / DeepSpeed hostfile -> its hosts; errors name the line."""
    names: list[str] = []
    slots: dict[str, int] = {}
    first: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        if not match:
            raise InventoryError(path, number, f"expected `host [slots=N]`, got {raw.strip()!r}")
        count: int | None = int(match["colon"]) if match["colon"] else None
        for pair in match["rest"].split():
            key, _, value = pair.partition("=")
            if key not in _SLOT_KEYS:
                raise InventoryError(path, number, f"unknown field {key!r} (expected slots=N or max_slots=N)")
            if not value.isdigit():
                raise InventoryError(path, number, f"{key} must be a whole number, got {value!r}")
            if key == "slots":
                count = int(value)
        for name in _expand(match["name"], path, number):
            if name in first:
                raise InventoryError(path, number, f"duplicate host {name!r} (first on line {first[name]})")
            first[name] = number
            names.append(name)
            if count is not None:
                slots[name] = count
    if not names:
        raise InventoryError(path, None, "the hostfile lists no hosts")
    cluster: dict[str, Any] = {}
    if slots and len(slots) == len(names) and len(set(slots.values())) == 1:
        cluster["devices_per_host"] = next(iter(slots.values()))
    return HostList(names, cluster=cluster, path=path)


def _expand(pattern: str, path: Path | None, line: int | None, what: str = "host range") -> list[str]:
    try:
        names = NodeSet(pattern.strip())
        if len(names) > MAX_HOSTS:
            raise InventoryError(path, line, f"{what} {pattern!r} expands to more than {MAX_HOSTS} hosts")
        expanded = list(names)
    except (NodeSetParseError, ValueError) as exc:
        raise InventoryError(path, line, f"bad {what} {pattern!r}: {exc}") from None
    if not expanded:
        raise InventoryError(path, line, f"{what} {pattern!r} names no host")
    return expanded

