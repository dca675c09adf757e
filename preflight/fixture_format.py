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
Commands are compared exactly: ``probes()`` is pure and builds the same command every time (os.clock's
controller time travels in the script's ``PF_SENT`` line, not in the command). A ``stamped`` check's
outputs also hold ``pf.received``, the controller's receive time the engine adds; its "command" says so.

>>> from preflight.checks.sysctl import SysctlCheck
>>> context_of(SysctlCheck(), Host("n1", "n1", env={"TOKEN": "x"}), ClusterSpec(master="n1"))["host"]
{'name': 'n1', 'python': 'python3', 'env': {}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, replace
from typing import Any

from preflight.batch import RECEIVED, RECEIVED_COMMAND
from preflight.checks.base import Check, planned_probes
from preflight.inventory import ClusterSpec, Host


def commands(check: Check, host: Host, cluster: ClusterSpec) -> dict[str, str]:
    """Probe key -> command, as the engine plans them for ``host`` in ``cluster`` (none off the check's
    accelerators)."""
    found = {p.key: p.command for p in planned_probes(check, host, cluster)}
    if check.stamped and found:  # the engine adds the controller's receive time as one more output
        found[RECEIVED] = RECEIVED_COMMAND
    return found


def same_commands(ident: str, one: Mapping[str, str], other: Mapping[str, str]) -> bool:
    return dict(one) == dict(other)


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
