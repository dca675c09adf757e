"""net.names: every host resolves every other host's name, and to the same address as the other hosts do.

DeepSpeed's and MPI's launchers, Slurm hostlists and gloo's peers use host names, not addresses: a node whose
/etc/hosts or DNS view is stale connects to the wrong machine or to nothing, and init hangs. ``net`` covers the
master's name; this covers the rest. After the gather every host runs one ``getent ahosts`` per name in
hosts.yaml (names that are IP literals are left out); per name, the first address (what getaddrinfo gives a
connect) is compared across the hosts that resolve it, the host itself aside (its own name is ``net.hostname``'s).

>>> parse_names("name node2\\n10.0.0.12       STREAM node2\\n10.0.0.12       DGRAM\\nexit 0\\nname node3\\nexit 2\\n")
{'node2': {'addrs': ['10.0.0.12'], 'exit': 0}, 'node3': {'addrs': [], 'exit': 2}}
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import ActiveCheck, DerivedCheck, EvalContext, Facts, Step, StepOutcome, finding, majority
from preflight.interfaces import parse_getent
from preflight.model import Finding, Status

REMEDY = ("make the name resolve alike on every host: one /etc/hosts for the cluster (or fix the DNS view of "
          "{host}): getent ahosts {name}")


def is_ip(name: str) -> bool:
    """Whether a hosts.yaml name is an address (nothing to resolve).

    >>> is_ip("10.0.0.1"), is_ip("fe80::1%eth0"), is_ip("node1")
    (True, True, False)
    """
    try:
        ipaddress.ip_address(name.split("%")[0])
    except ValueError:
        return False
    return True


def resolve_command(names: Sequence[str]) -> str:
    """One ``getent ahosts`` per name, each after a ``name N`` line and followed by its exit status.

    >>> resolve_command(["a", "b c"])
    'for n in a \\'b c\\'; do printf \\'name %s\\\\n\\' "$n"; getent ahosts "$n"; printf \\'exit %s\\\\n\\' $?; done'
    """
    quoted = " ".join(shlex.quote(n) for n in names)
    return f"for n in {quoted}; do printf 'name %s\\n' \"$n\"; getent ahosts \"$n\"; printf 'exit %s\\n' $?; done"


def parse_names(text: str) -> dict[str, dict[str, Any]]:
    """name -> the addresses ``getent ahosts`` printed (in order) and its exit status (2: not found)."""
    found: dict[str, dict[str, Any]] = {}
    current: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("name "):
            current, lines = line[5:].strip(), []
        elif current is not None and line.startswith("exit "):
            status = line[5:].strip()
            found[current] = {"addrs": parse_getent("\n".join(lines)),
                              "exit": int(status) if status.isdigit() else None}
            current = None
        elif current is not None:
            lines.append(line)
    return found


def _loopback(address: str) -> bool:
    return ipaddress.ip_address(address).is_loopback


class NetNamesCheck(DerivedCheck, ActiveCheck):
    family = "net"
    name = "net.names"
    ids = ("net.names",)
    order = 31
    summary = "every host resolves every other host's name (getent ahosts) to the address the other hosts see"

    @staticmethod
    def names(ctx: EvalContext) -> list[str]:
        return [h.name for h in ctx.hosts if not is_ip(h.name)]

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        names = self.names(ctx)
        if len(facts) < 2 or not names:
            return []
        probe = Probe("names", resolve_command(names), timeout=10 + 2 * len(names))
        return [Step(background={}, foreground={h: [probe] for h in facts}, timeout=20 + 2 * len(names))]

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        check = self.name
        if not outcomes:
            return [finding(check, None, Status.SKIP, f"{check}: nothing to resolve (fewer than 2 hosts, or every "
                            "name in hosts.yaml is an address)")]
        seen: dict[str, dict[str, dict[str, Any]]] = {}  # resolver -> name -> result
        for outcome in outcomes:
            for host, outs in outcome.foreground.items():
                seen[host] = parse_names(outs.get("names", ProbeOutput("")).stdout)
        return judge_names(seen, self.names(ctx), {h.name: h.address for h in ctx.hosts})


def judge_names(seen: Mapping[str, Mapping[str, Mapping[str, Any]]], names: Sequence[str],
                addresses: Mapping[str, str]) -> list[Finding]:
    """Per resolving host: pass, or fail naming each other host's name it cannot resolve, resolves to loopback,
    or resolves elsewhere than most hosts (no majority: the hosts.yaml address decides, if it is one of them)."""
    check = "net.names"
    problems: dict[str, list[tuple[str, str]]] = {host: [] for host in seen}  # resolver -> (name, what)
    for name in names:
        firsts: dict[str, str] = {}
        for resolver, results in seen.items():
            if resolver == name:
                continue
            result = results.get(name)
            if result is None:
                problems[resolver].append((name, f"{name}: not reported"))
            elif not result.get("addrs"):
                problems[resolver].append((name, f"{name}: does not resolve (getent exit {result.get('exit')})"))
            elif _loopback(result["addrs"][0]):
                problems[resolver].append((name, f"{name} -> {result['addrs'][0]} (loopback)"))
            else:
                firsts[resolver] = result["addrs"][0]
        common, strict = majority(firsts)
        if not strict:
            common = addresses.get(name) if addresses.get(name) in firsts.values() else None
        for resolver, address in firsts.items():
            if common is None and len(set(firsts.values())) > 1:
                disagree = ", ".join(sorted(set(firsts.values())))
                problems[resolver].append((name, f"{name} -> {address} (the hosts disagree: {disagree})"))
            elif common is not None and address != common:
                problems[resolver].append((name, f"{name} -> {address}, the other hosts -> {common}"))
    findings = []
    for resolver in sorted(seen):
        others = [n for n in names if n != resolver]
        said = "; ".join(what for _, what in problems[resolver])
        if problems[resolver]:
            findings.append(finding(
                check, resolver, Status.FAIL,
                f"{check}: {resolver} resolves other hosts' names differently: {said}: "
                "launchers that use names (DeepSpeed, MPI, Slurm) reach the wrong host or none",
                observed=said, expected="every name resolved, as on the other hosts",
                remedy=REMEDY.format(host=resolver, name=problems[resolver][0][0])))
        else:
            findings.append(finding(check, resolver, Status.PASS,
                                    f"{check}: {resolver} resolves the {len(others)} other hosts' names as they do",
                                    observed=f"{len(others)} names resolved alike"))
    return findings
