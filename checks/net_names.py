"""net.names: every host resolves every other host's name, and to the same address as the others do.

DeepSpeed's and MPI's launchers (hostfiles), Slurm's node names and gloo's peers use host names: a stale
/etc/hosts line on one node sends its connections to the wrong machine, a missing one makes its launch fail.
``net.master_resolution`` covers the master only. After the gather, every host runs ``getent hosts NAME`` for
each other host of the inventory (one step, one script per host); the names are judged across the cluster.
It runs only when asked (``--checks net.names``): a default run keeps to one session per host.

Per resolver host: ``fail`` naming each name it does not resolve while other hosts do, resolves to loopback, or
resolves to another address than most hosts (or, with no majority, than the inventory's address for it). A
name no host resolves is a label, not a hostname the job uses (pass, said in the message).

>>> parse_names("== n2\\n10.0.0.2        n2\\nrc 0\\n== n3\\nrc 2\\n")
{'n2': '10.0.0.2', 'n3': None}
"""

from __future__ import annotations

import ipaddress
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence

from preflight.checks.base import *

CHECK = "net.names"


class NetNamesCheck(DerivedCheck, ActiveCheck):
    ids = (CHECK,)
    order = 36
    # Only when asked (--checks net.names): its lookups need every host's name list, so they run in a step after
    # the gather, a second session per host, where a default run keeps to one.
    by_default = False
    summary = "every host resolves every other host's name to the same address (getent hosts)"

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        hosts = [h.name for h in ctx.hosts if h.name in facts]
        if len(hosts) < 2:
            return []
        foreground = {host: [Probe("names", names_command([n for n in hosts if n != host]), timeout=20)]
                      for host in hosts}
        return [Step(background={}, foreground=foreground, timeout=30.0)]

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        resolved: dict[str, dict[str, str | None]] = {}
        for outcome in outcomes:
            for host, outs in outcome.foreground.items():
                if "names" in outs:
                    resolved[host] = parse_names(outs["names"].stdout)
        if not outcomes:
            return []
        inventory = {h.name: h.address for h in ctx.hosts}
        return judge_names(resolved, inventory, [h for h in facts if h not in resolved])


def names_command(names: Sequence[str]) -> str:
    """One ``getent hosts`` per name, all at once (a name DNS does not know can take seconds: 127 of them in a
    row would not end in time), each printed in one write with its exit status (2: not found).

    >>> print(names_command(["n2", "a b"]).replace("; ", ";\\n"))
    for pf_n in n2 'a b';
    do ( pf_o=$(getent hosts "$pf_n");
    pf_r=$?;
    printf '== %s\\n%s\\nrc %s\\n' "$pf_n" "$pf_o" "$pf_r" ) & done;
    wait
    """
    quoted = " ".join(shlex.quote(n) for n in names)
    return (f'for pf_n in {quoted}; do ( pf_o=$(getent hosts "$pf_n"); pf_r=$?; '
            'printf \'== %s\\n%s\\nrc %s\\n\' "$pf_n" "$pf_o" "$pf_r" ) & done; wait')


def parse_names(text: str) -> dict[str, str | None]:
    """name -> the first address ``getent hosts`` printed for it, None when it printed none."""
    found: dict[str, str | None] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("== "):
            current = line[3:].strip()
            found[current] = None
        elif current is not None and found[current] is None and line.strip() and not line.startswith("rc "):
            found[current] = line.split()[0]
    return found


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def judge_names(resolved: Mapping[str, Mapping[str, str | None]], inventory: Mapping[str, str],
                unanswered: Sequence[str] = ()) -> list[Finding]:
    """Findings per resolver host from ``resolved`` (host -> name -> address) and the inventory's addresses.

    >>> r = {"a": {"b": "10.0.0.2"}, "b": {"a": "10.0.0.1"}, "c": {"a": "10.0.0.1", "b": "10.0.0.9"}}
    >>> [(f.host, f.status.value) for f in judge_names(r, {"a": "10.0.0.1", "b": "10.0.0.2", "c": "10.0.0.3"})]
    [('a', 'pass'), ('b', 'pass'), ('c', 'fail')]
    """
    by_name: dict[str, dict[str, str | None]] = {}
    for host, names in resolved.items():
        for name, address in names.items():
            by_name.setdefault(name, {})[host] = address
    expected: dict[str, str] = {}
    labels: list[str] = []
    for name, answers in by_name.items():
        addresses = Counter(a for a in answers.values() if a is not None and not _loopback(a))
        if not any(a is not None for a in answers.values()):
            labels.append(name)
            continue
        top = addresses.most_common(2)
        if top and (len(top) == 1 or top[0][1] > top[1][1]) and 2 * top[0][1] > len(answers):
            expected[name] = top[0][0]
        else:
            expected[name] = inventory.get(name, "")  # no majority: the inventory's address decides
    findings: list[Finding] = []
    for host, names in resolved.items():
        problems: list[str] = []
        for name, address in sorted(names.items()):
            if name in labels:
                continue
            want = expected.get(name, "")
            if address is None:
                problems.append(f"{name} does not resolve (others: {want or '?'})")
            elif _loopback(address):
                problems.append(f"{name} -> {address} (loopback)")
            elif address != want:
                problems.append(f"{name} -> {address}, not {want or 'what the others say'}")
        observed = "; ".join(problems) or ", ".join(f"{n} -> {a}" for n, a in sorted(names.items()) if a)
        note = f" ({', '.join(sorted(labels))} resolve on no host: names used only as labels)" if labels else ""
        if problems:
            lines = " ".join(f"{expected[n]} {n}" for n in sorted(names) if n in expected and expected[n]
                             and any(p.startswith(f"{n} ") for p in problems))
            findings.append(finding(
                CHECK, host, Status.FAIL,
                f"{host} resolves other hosts' names differently from the cluster: {'; '.join(problems)}: "
                "launchers that use names (DeepSpeed/MPI hostfiles, Slurm) connect to the wrong machine or fail",
                observed=observed, expected="each name to the address the other hosts resolve it to",
                remedy=f"getent hosts {' '.join(sorted(names))}  # on {host}; fix its /etc/hosts or DNS"
                       + (f", e.g. the lines: {lines}" if lines else "")))
        else:
            findings.append(finding(CHECK, host, Status.PASS, f"{observed or 'nothing to resolve'}{note}",
                                    observed=observed, expected="each name to the address the other hosts do"))
    for host in unanswered:
        findings.append(finding(CHECK, host, Status.ERROR, f"{host} did not run getent hosts"))
    return findings

