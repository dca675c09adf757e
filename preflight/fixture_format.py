"""The parse fixture format, shared by ``preflight run --record`` and the fixture tests.

A parse fixture is one host's outputs for one check, with the commands that printed them::

    {"source": "...",                      # optional: where the outputs came from (URL, run, simulator)
     "context": {"host": {"name", "python", "env"},
                 "cluster": {"accelerator", "devices_per_host", "master", "master_port"}},
     "commands": {key: the exact command check.probes(host, cluster) built for that key},
     "outputs": {key: {"stdout", "stderr", "exit_status"}},
     "facts": check.parse(outputs)}

``context`` is what ``probes()`` is given, in a small explicit form: the host's name and Python, only
the env variables that change a command, and the cluster. Fields left out take their defaults.
Commands are compared after ``normalise``: a documented rule per (check ident, probe key) for a value
that differs on every build (today only os.clock's controller time stamp), never a skipped key.

>>> from preflight.checks.sysctl import SysctlCheck
>>> context_of(SysctlCheck(), Host("n1", "n1", env={"TOKEN": "x"}), ClusterSpec(master="n1"))["host"]
{'name': 'n1', 'python': 'python3', 'env': {}}
>>> normalise("os", "clock", "printf 'ref %s\\\\n' 1795309404.557464; date +%s.%N")
"printf 'ref %s\\\\n' <controller time>; date +%s.%N"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, replace
from typing import Any

from preflight.checks.base import Check
from preflight.inventory import ClusterSpec, Host

# (check ident, probe key) -> (pattern, replacement): the values a command may differ by between two builds.
VOLATILE: Mapping[tuple[str, str], tuple[re.Pattern[str], str]] = {
    # os.clock carries the controller's time.time() at the moment probes() ran, for the skew measurement.
    ("os", "clock"): (re.compile(r"(printf 'ref %s\\n' )[0-9]+(?:\.[0-9]+)?"), r"\1<controller time>"),
}


def normalise(ident: str, key: str, command: str) -> str:
    """``command`` with the values listed in VOLATILE for this check and key replaced by a placeholder."""
    rule = VOLATILE.get((ident, key))
    return rule[0].sub(rule[1], command) if rule else command


def commands(check: Check, host: Host, cluster: ClusterSpec) -> dict[str, str]:
    """Probe key -> command, as ``check.probes`` builds them for ``host`` in ``cluster``."""
    return {p.key: p.command for p in check.probes(host, cluster)}


def same_commands(ident: str, one: Mapping[str, str], other: Mapping[str, str]) -> bool:
    return one.keys() == other.keys() and all(
        normalise(ident, key, one[key]) == normalise(ident, key, other[key]) for key in one)


def host_and_cluster(context: Mapping[str, Any]) -> tuple[Host, ClusterSpec]:
    """The Host and ClusterSpec a fixture's ``context`` describes (the address is the name)."""
    host = {"name": "n1", **context.get("host", {})}
    host.setdefault("address", host["name"])
    return Host(**host), ClusterSpec(**context.get("cluster", {}))


def context_of(check: Check, host: Host, cluster: ClusterSpec) -> dict[str, Any]:
    """The context to store for ``host``: its env cut to the variables that change one of ``check``'s commands."""
    want = commands(check, host, cluster)
    env = dict(host.env)
    if same_commands(check.ident, commands(check, replace(host, env={}), cluster), want):
        env = {}
    for name in sorted(env):  # one at a time: what is left always rebuilds the same commands
        fewer = {k: v for k, v in env.items() if k != name}
        if same_commands(check.ident, commands(check, replace(host, env=fewer), cluster), want):
            env = fewer
    return {"host": {"name": host.name, "python": host.python, "env": env}, "cluster": asdict(cluster)}
