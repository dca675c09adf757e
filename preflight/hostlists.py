"""Host lists from schedulers and launchers: ``--hosts slurm``, MPI/DeepSpeed hostfiles, bare ranges.

``--hosts`` accepts, besides a hosts.yaml:

* ``slurm``: the nodes of the current allocation (``SLURM_JOB_NODELIST``, ClusterShell syntax);
* ``hostfile:PATH``: an MPI / DeepSpeed hostfile (``node1 slots=8``; ``#`` comments, blank lines;
  MPICH's ``node1:8`` too). A file whose every line looks like that is recognised without the prefix;
* ``nodes:RANGE``: a ClusterShell node set, e.g. ``nodes:gpu[001-128]``.

Hosts from these lists get SSH settings from ``~/.ssh/config``, as bare names in hosts.yaml do. The
slots of a hostfile become ``cluster.devices_per_host`` when every host has the same count.

>>> inv = parse_hostfile("# workers\\nworker-1 slots=4\\n\\nworker-2 slots=4\\n", None)
>>> [h.name for h in inv.hosts], inv.cluster.devices_per_host
(['worker-1', 'worker-2'], 4)
"""

from __future__ import annotations

import getpass
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from preflight.inventory import MAX_HOSTS, Inventory, InventoryError, parse_inventory

SLURM = "slurm"
HOSTFILE_PREFIX = "hostfile:"
NODES_PREFIX = "nodes:"
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-\[\],]*"
_LINE = re.compile(rf"^(?P<name>{_NAME})(?::(?P<colon>\d+))?(?P<rest>(?:\s+[A-Za-z_\-]+=\S*)*)\s*$")
_SLOT_KEYS = ("slots", "max_slots", "max-slots")


def is_special(spec: str) -> bool:
    """Whether ``--hosts`` names a scheduler list rather than a file path.

    >>> is_special("slurm"), is_special("hostfile:/tmp/h"), is_special("hosts.yaml")
    (True, True, False)
    """
    return spec == SLURM or spec.startswith((HOSTFILE_PREFIX, NODES_PREFIX))


def load_special(spec: str, known_params: Mapping[str, Mapping[str, Any]] | None = None,
                 environ: Mapping[str, str] | None = None) -> Inventory:
    """The inventory for ``slurm``, ``hostfile:PATH`` or ``nodes:RANGE``; InventoryError on problems."""
    env = os.environ if environ is None else environ
    if spec == SLURM:
        return slurm_inventory(env, known_params)
    if spec.startswith(NODES_PREFIX):
        return _names_inventory(_expand(spec[len(NODES_PREFIX):], None, None), {}, None, known_params)
    path = Path(spec[len(HOSTFILE_PREFIX):])
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InventoryError(path, None, f"cannot read: {exc}") from exc
    return parse_hostfile(text, path, known_params)


def slurm_inventory(environ: Mapping[str, str], known_params: Mapping[str, Mapping[str, Any]] | None = None
                    ) -> Inventory:
    """The nodes of the current Slurm allocation, in Slurm's order.

    >>> [h.name for h in slurm_inventory({"SLURM_JOB_NODELIST": "gpu[01-02],cpu7"}).hosts]
    ['cpu7', 'gpu01', 'gpu02']
    """
    nodelist = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist:
        raise InventoryError(None, None, "--hosts slurm: SLURM_JOB_NODELIST is not set (run inside an allocation: "
                                         "salloc, sbatch or srun)")
    names = _expand(nodelist, None, None, what="SLURM_JOB_NODELIST")
    return _names_inventory(names, {"user": getpass.getuser()}, None, known_params)


def looks_like_hostfile(text: str) -> bool:
    """Whether every meaningful line is ``host [slots=N ...]`` (so not YAML).

    >>> looks_like_hostfile("n1 slots=8\\nn2 slots=8\\n"), looks_like_hostfile("hosts:\\n  - n1\\n")
    (True, False)
    """
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    return bool(lines) and all(_LINE.match(line) for line in lines)


def parse_hostfile(text: str, path: Path | None, known_params: Mapping[str, Mapping[str, Any]] | None = None
                   ) -> Inventory:
    """An MPI / DeepSpeed hostfile -> Inventory; errors name the line."""
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
    return _names_inventory(names, {}, cluster, known_params, path)


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


def _names_inventory(names: list[str], defaults: dict[str, Any], cluster: dict[str, Any] | None,
                     known_params: Mapping[str, Mapping[str, Any]] | None, path: Path | None = None) -> Inventory:
    """Build through parse_inventory (same validation, ~/.ssh/config lookup) from a generated document."""
    import yaml

    doc: dict[str, Any] = {"hosts": names}
    if defaults:
        doc["defaults"] = defaults
    if cluster:
        doc["cluster"] = cluster
    inventory = parse_inventory(yaml.safe_dump(doc, sort_keys=False), path, known_params)
    return inventory
