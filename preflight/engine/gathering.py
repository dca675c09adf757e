"""Gathering one host: connect, run every planned probe as one framed script, split the output per check.

A host that cannot be reached, or whose transport fails, becomes an ``ssh.connect`` error; one that runs
past ``--host-timeout`` keeps what it finished and gets an ``ssh.session`` error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from preflight.batch import RECEIVED, SUDO_CHECK, Probe, build_script, new_nonce, parse_output, received_output
from preflight.checks.base import Check
from preflight.engine.host_findings import connected, timed_out, unreachable
from preflight.engine.host_findings import sudo as sudo_finding
from preflight.engine.options import HostGather, RunOptions
from preflight.engine.overlaps import Overlaps, go_file
from preflight.engine.planning import SUDO_KEY, dedupe, plan
from preflight.engine.sessions import Sessions
from preflight.inventory import Host, Inventory
from preflight.model import HostResult
from preflight.transport.base import TransportError


@dataclass(frozen=True)
class Gatherer:
    """Everything a host's gather needs; ``gather(host)`` is safe to call from many threads at once."""

    checks: Sequence[Check]
    inventory: Inventory
    options: RunOptions
    sessions: Sessions
    overlaps: Overlaps
    keep_open: bool  # an active phase follows: sessions stay open for it

    def gather(self, host: Host) -> HostGather:
        return self._gather(host)

    def _gather(self, host: Host) -> HostGather:
        start = time.monotonic()
        transport = self.sessions.start(host)
        try:
            transport.connect()
            clients = self.overlaps.client_probes(host.name)
            planned = plan(self.checks, host, self.inventory.cluster, self.options)
            first = self.overlaps.first_checks(host.name)
            planned.sort(key=lambda item: item[0].ident not in first)  # stable: the server's first probes lead
            nonce = new_nonce()
            remaining = max(1.0, self.options.host_timeout - (time.monotonic() - start))
            sudo = [Probe(SUDO_KEY, SUDO_CHECK, 5.0)] if self.options.sudo else []
            unique, same_as = dedupe([p for _, p in planned] + [p for _, p in clients])
            go_path = go_file(nonce)
            go = self.overlaps.go_probe(host.name, go_path) if first else None
            if go is not None:  # right after the last of the first probes (at the start when none is planned)
                ran_first = {same_as.get(p.key, p.key) for c, p in planned if c.ident in first}
                at = max((i + 1 for i, p in enumerate(unique) if p.key in ran_first), default=0)
                unique.insert(at, go)
            if host.name in self.overlaps.servers:  # at once: they hold back until the go file exists
                self.overlaps.start_servers(host.name, transport, go_path if go is not None else None)
            script = build_script(sudo + unique, nonce, sent_at=time.time())  # os.clock's reference
            execution = transport.run_script(script, remaining)
            received = time.time()  # with sent_at, brackets every clock the host read (stamped checks)
            outputs = parse_output(execution.stdout, [p.key for p in sudo + unique], nonce, execution.stderr)
            outputs.update({key: outputs[first] for key, first in same_as.items()})
            self.overlaps.keep(host.name, clients, outputs)
        except TransportError as exc:
            self.sessions.settle(host, transport, keep=False)
            self.overlaps.lost(host.name)
            return _unreachable(host, start, exc.kind, exc.message)
        except Exception as exc:  # a transport bug or a dropped connection must not end the run
            self.sessions.settle(host, transport, keep=False)
            self.overlaps.lost(host.name)
            return _unreachable(host, start, "ssh", f"{type(exc).__name__}: {exc}")
        except BaseException:
            self.sessions.settle(host, transport, keep=False)
            raise
        keep = self.keep_open and not execution.timed_out
        self.sessions.settle(host, transport, keep=keep)
        seconds = time.monotonic() - start
        gather = HostGather(host, HostResult(host.name, host.address, True, seconds),
                            outputs={check.ident: {} for check in self.checks})
        for check, probe in planned:
            gather.outputs.setdefault(check.ident, {})[probe.key.split("/", 1)[1]] = outputs[probe.key]
        for check in self.checks:
            if check.stamped and gather.outputs[check.ident]:
                gather.outputs[check.ident][RECEIVED] = received_output(received)
        if execution.timed_out:
            unfinished = sorted({c.ident for c, p in planned if outputs[p.key].exit_status is None})
            gather.findings.append(timed_out(host, self.options.host_timeout, seconds, unfinished))
        else:
            gather.findings.append(connected(host, len(planned), seconds))
        if self.options.sudo:
            gather.findings.append(sudo_finding(host, outputs[SUDO_KEY]))
        return gather


def _unreachable(host: Host, start: float, kind: str, message: str) -> HostGather:
    seconds = time.monotonic() - start
    return HostGather(host, HostResult(host.name, host.address, False, seconds, error=kind),
                      findings=[unreachable(host, kind, message, seconds)])
