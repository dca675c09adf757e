"""Planning one host's gather: every check's probes with unique keys, root probes under sudo, duplicates once.

>>> from preflight.batch import Probe
>>> unique, same_as = dedupe([Probe("a/x", "ip -o addr show", 5), Probe("b/y", "ip -o addr show", 5)])
>>> [p.key for p in unique], same_as
(['a/x'], {'b/y': 'a/x'})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from preflight.batch import Probe, as_root
from preflight.checks.base import Check, planned_probes
from preflight.engine.options import RunOptions
from preflight.inventory import ClusterSpec, Host

SUDO_KEY = "ssh/sudo"  # the probe that tells whether root probes can run (--sudo)
OVERLAP = "overlap"  # middle part of an overlap client probe's key: ident/overlap/key


def plan(checks: Sequence[Check], host: Host, cluster: ClusterSpec, options: RunOptions) -> list[tuple[Check, Probe]]:
    """Every probe of ``checks`` for ``host``, keyed ``ident/key``, capped by ``--command-timeout``."""
    cap = options.command_timeout
    planned = []
    for check in checks:
        for probe in planned_probes(check, host, cluster):  # none for a check off the cluster's accelerator
            timeout = min(probe.timeout, cap) if cap else probe.timeout
            command = as_root(probe.command) if options.sudo and probe.root else probe.command
            planned.append((check, Probe(f"{check.ident}/{probe.key}", command, timeout)))
    return planned


def dedupe(probes: Sequence[Probe]) -> tuple[list[Probe], dict[str, str]]:
    """Probes with the same command run once, under the longest of their timeouts: the unique ones, and
    key -> key that runs for it.

    >>> unique, same_as = dedupe([Probe("a/x", "cat /proc/self/limits", 5), Probe("b/y", "cat /proc/self/limits", 15)])
    >>> [(p.key, p.seconds) for p in unique], same_as
    ([('a/x', 15)], {'b/y': 'a/x'})
    """
    first: dict[str, Probe] = {}
    same_as: dict[str, str] = {}
    for probe in probes:
        kept = first.setdefault(probe.command, probe)
        if kept is not probe:
            same_as[probe.key] = kept.key
            if probe.timeout > kept.timeout:
                first[probe.command] = replace(kept, timeout=probe.timeout)
    return list(first.values()), same_as
