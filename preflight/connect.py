"""TCP reachability between nodes: the listener and connector programs, their probe commands and their output.

Shared by net.reachability and diagnose. Both programs use only the standard library and run under
``python -S`` (no site start-up); a single target is tried with bash's /dev/tcp instead when it can.

>>> parse_results('{"results": [{"target": "n1", "port": 29500, "result": "ok", "ms": 0.4}]}')
[{'target': 'n1', 'port': 29500, 'result': 'ok', 'ms': 0.4}]
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from preflight.node import source

# The programs: preflight/node/listener.py and connector.py (their docstrings say what they take and print).
LISTENER_READY = '{"ready": true}'  # the listener's first line, once every port is bound (or failed to bind)
LISTENER = source("listener")


CONNECTOR = source("connector")


# One target (beyond all_pairs_max_hosts every CPU/GPU host only connects to the master): bash's
# /dev/tcp under timeout(1), ~3 ms a host instead of ~15 ms for the python connector, with the same
# JSON line and the same words (ok, refused, unreachable; else unresolved or error). When timeout(1)
# ends it, that says nothing about the connect (bash itself may not have started in time on a loaded
# host): the python connector then runs, which times the connect call itself and retries it, and only
# it reports "timeout". Where bash or timeout is missing, the python connector runs instead. ``--norc``: a
# bash started under sshd (SSH_CLIENT set) reads /etc/bash.bashrc and ~/.bashrc even for ``-c``, and a
# training node's login environment there (conda's hook, CANN's set_env.sh) would cost every connect.
_BASH_CONNECT = r"""i=0
while :; do
  e=$(LC_ALL=C timeout {timeout} bash --norc --noprofile -c 'exec 3<>"/dev/tcp/$0/$1"' {address} {port} 2>&1); rc=$?
  case "$rc:$e" in
    0:*) r=ok ;;
    124:*) r=timeout ;;
    *refused*) r=refused ;;
    *"No route"*|*nreachable*) r=unreachable ;;
    *"not known"*|*"name resolution"*|*"No address"*) r=unresolved ;;
    *) r=error ;;
  esac
  [ "$r" = refused ] && [ "$i" -lt {tries} ] || break
  i=$((i + 1))
  sleep 0.2
done
"""
_BASH_RESULT = ('''printf '{{"results": [{{"target": %s, "address": %s, "port": {port}, "result": "%s", '''
                '''"tries": %s}}]}}\\n' {name} {address_json} "$r" "$((i + 1))"''')


def connector_seconds(timeout: float, retry: float) -> float:
    """The longest a connect probe runs: bash's attempt, then the python connector's refused retries and
    its two connects (``timeout``, then twice that).

    >>> connector_seconds(3.0, 2.0)
    14.0
    """
    return timeout + retry + 3 * timeout


@dataclass(frozen=True)
class Target:
    host: str
    address: str
    port: int
    what: str  # "master port" or "HCCL base port"


def connect_command(python: str, timeout: float, retry: float, targets: Sequence[Target]) -> str:
    """The probe that connects to ``targets`` and prints one JSON line (results named by target host).

    >>> one = Target("n1", "10.0.0.1", 29500, "master port")
    >>> "bash --norc --noprofile -c" in connect_command("python3", 3.0, 2.0, [one])
    True
    >>> "bash -c" in connect_command("python3", 3.0, 2.0, [one, Target("n2", "fe80::2", 60000, "HCCL base port")])
    False
    """
    specs = [f"{t.host}=[{t.address}]:{t.port}" if ":" in t.address else f"{t.host}={t.address}:{t.port}"
             for t in targets]
    fallback = shlex.join([python, "-S", "-c", CONNECTOR, str(timeout), str(retry), *specs])
    if len(targets) != 1:
        return fallback
    [target] = targets
    fast = _BASH_CONNECT.format(timeout=timeout, address=shlex.quote(target.address), port=target.port,
                                tries=max(0, int(retry / 0.2)))
    result = _BASH_RESULT.format(port=target.port, name=shlex.quote(json.dumps(target.host)),
                                 address_json=shlex.quote(json.dumps(target.address)))
    return ("r=\nif command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then\n"
            f"{fast}fi\nif [ -n \"$r\" ] && [ \"$r\" != timeout ]; then\n  {result}\nelse exec {fallback}\nfi")


def last_json_list(text: str, key: str) -> list[dict[str, Any]]:
    """The dict entries of ``key`` in the last JSON line that has it as a list; [] for anything else."""
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get(key), list):
            return [entry for entry in data[key] if isinstance(entry, dict)]
    return []


def parse_results(text: str) -> list[dict[str, Any]]:
    """The connector's result list."""
    return last_json_list(text, "results")


def parse_listeners(text: str) -> list[dict[str, Any]]:
    """The listener's per-port report."""
    return last_json_list(text, "listeners")


def connect_meaning(result: str) -> str:
    """What a connector's result says about the path, e.g. ``timeout`` -> packets dropped (DROP rule)."""
    if "timeout" in result:
        return ("packets dropped: no answer to a connect, nor to a second one with twice the timeout: a firewall "
                "DROP rule or a black-holed route")
    if "refused" in result:
        return "actively refused: a firewall REJECT rule, or nothing listening"
    if "unreachable" in result:
        return "no route to the host"
    return "see the result code"
