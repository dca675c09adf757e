"""The ports the job needs open on a host: the master port, HCCL's host ports (npu), the ephemeral range.

>>> parse_port_range("32768\\t60999\\n")
[32768, 60999]
>>> from preflight.context import EvalContext
>>> from preflight.inventory import ClusterSpec, Host
>>> ctx = EvalContext(ClusterSpec(master="n1", master_port=29500), [Host(name="n1", address="n1")])
>>> [(t.kind, t.ranges) for t in targets_for("n1", {"ephemeral": [32768, 60999]}, ctx)[0]]
[('master', ((29500, 29500),)), ('ephemeral', ((32768, 60999),))]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from preflight.context import EvalContext
from preflight.ports import Range, hccl_ports, uncovered

EPHEMERAL_DEFAULT: Range = (32768, 60999)  # the kernel's default net.ipv4.ip_local_port_range


@dataclass(frozen=True)
class Target:
    """Ports the job needs open on a host."""

    kind: str  # "master" | "hccl" | "ephemeral"
    label: str
    ranges: tuple[Range, ...]


def parse_port_range(text: str) -> list[int] | None:
    """``32768\\t60999`` -> [32768, 60999]; junk -> None."""
    numbers = text.split()
    if len(numbers) == 2 and all(n.isdigit() for n in numbers) and int(numbers[0]) <= int(numbers[1]) <= 65535:
        return [int(numbers[0]), int(numbers[1])]
    return None


def targets_for(name: str, facts: Mapping[str, Any], ctx: EvalContext) -> tuple[list[Target], list[str]]:
    """The ports to check on ``name`` and notes on how they were worked out."""
    cluster = ctx.cluster
    notes: list[str] = []
    targets: list[Target] = []
    is_master = cluster.master == name
    master = cluster.master_port
    label = "master port" if is_master else (f"master port; {cluster.master} is the master, so this matters only "
                                             "if the job's master moves here")
    targets.append(Target("master", label, ((master, master),)))
    taken: list[Range] = [(master, master)]
    if cluster.accelerator == "npu":
        hccl = hccl_ports(name, ctx)
        if hccl.auto:
            notes.append(f"{hccl.setting}: HCCL listens on ephemeral ports")
        elif hccl.ranges:
            targets.append(Target("hccl", f"HCCL host ports, {hccl.why}", hccl.ranges))
            taken += hccl.ranges
    ephemeral = facts.get("ephemeral")
    low, high = (ephemeral[0], ephemeral[1]) if isinstance(ephemeral, list) and len(ephemeral) == 2 \
        else EPHEMERAL_DEFAULT
    rest = [r for r in [(low, high)] for r in uncovered(r, taken)]
    targets.append(Target("ephemeral", f"ephemeral range {low}-{high}, where NCCL, gloo and torch workers listen",
                          tuple(rest)))
    return targets, notes
