"""os.clock through the engine: the controller's send and receive times bracket the host's clock reading.

Real framed scripts run by ``sh`` here behind a fake transport. A host whose script waits before it runs
(a loaded node: sshd, sh and the probes queue for CPU) reads its clock late, but its output also comes
back late: the offset interval holds 0 and the host passes. A host whose clock is ahead by more than the
whole interval fails, however short its round trip.
"""

from __future__ import annotations

import time

from preflight.batch import RECEIVED
from preflight.checks.os_limits import OsLimitsCheck
from preflight.engine import Engine, RunOptions
from preflight.inventory import ClusterSpec, Host, Inventory
from preflight.transport.base import Execution, OutputWatcher
from preflight.transport.local import LocalTransport

WAIT_S = 1.0  # how long the slow host's script queues before it runs: 5x the warn threshold below


class QueuedTransport:
    """Runs the script here after ``wait`` seconds; ``ahead``: seconds the host's ``date`` reads ahead."""

    def __init__(self, wait: float = 0.0, ahead: int = 0) -> None:
        self.wait, self.ahead = wait, ahead

    def connect(self) -> None:
        pass

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        time.sleep(self.wait)
        if self.ahead:
            script = script.replace("date +%s.%N", f"echo $(( $(date +%s) + {self.ahead} )).$(date +%N)")
        return LocalTransport().run_script(script, timeout, on_stdout)

    def close(self) -> None:
        pass


def test_a_host_whose_script_waited_is_not_skewed_and_a_skewed_one_fails() -> None:
    hosts = {"on-time": QueuedTransport(), "queued": QueuedTransport(wait=WAIT_S), "ahead": QueuedTransport(ahead=30)}
    inventory = Inventory(hosts=[Host(n, n) for n in hosts], cluster=ClusterSpec(master="on-time"),
                          params={"os": {"warn_clock_offset_s": 0.2, "max_clock_offset_s": 10}})
    engine = Engine(inventory, [OsLimitsCheck()], RunOptions(), transport_factory=lambda h: hosts[h.name])
    report = engine.run()
    clock = {f.host: f for f in report.findings if f.check == "os.clock"}
    assert {h: f.status.value for h, f in clock.items()} == {"on-time": "pass", "queued": "pass", "ahead": "fail"}
    # The queued host's interval spans its wait: reported, with the round trip, and it holds 0.
    queued = engine.gathered["queued"].outputs["os"]
    assert float(queued[RECEIVED].stdout) > 0
    assert "round trip" in (clock["queued"].observed or "")
    low, high = (float(v) for v in (clock["queued"].observed or "").split("offset ")[1].split(" s")[0].split(".."))
    assert low <= 0.0 <= high and high - low >= WAIT_S
    assert 29.0 <= float((clock["ahead"].observed or "").split()[0]) <= 30.0
