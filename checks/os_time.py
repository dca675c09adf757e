"""os.time: the host's clock is kept in sync by NTP (chrony, ntpd, systemd-timesyncd), not just close right now.

``os.clock`` measures the offset between hosts at this moment; a clock nobody disciplines drifts (a few to tens
of ppm: seconds a day) and is off days into a long job: torchrun's rendezvous heartbeats, TLS and log
correlation break then. Two readers, either one enough to pass:

- ``timedatectl status`` (systemd): "System clock synchronized: yes" (systemd >= 235; "NTP synchronized" before),
  the kernel's own "synchronised" flag, set by whichever NTP daemon runs;
- ``chronyc -n tracking``: "Leap status : Normal" (synchronised) or "Not synchronised".

A host warns when a reader says it is not synchronised and none says it is; it skips when neither can tell
(no systemd, as in most containers, whose clock is the host's, and no chronyd answering).

>>> parse_timedatectl("System clock synchronized: yes\\n              NTP service: active\\n")
{'synced': True, 'service': 'active'}
>>> parse_chrony("Stratum : 2\\nSystem time : 0.000022151 seconds slow of NTP time\\nLeap status : Normal\\n")
{'leap': 'Normal', 'stratum': 2, 'offset_s': -2.2151e-05, 'daemon': True}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import Check, EvalContext, Facts, finding
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

# timedatectl status labels, by systemd release: the kernel's sync flag, and the NTP service's state.
_SYNCED = ("System clock synchronized", "NTP synchronized")
_SERVICE = ("NTP service", "systemd-timesyncd.service active", "Network time on", "NTP enabled")
_SYNCED_LEAPS = ("Normal", "Insert second", "Delete second")
_TIME = re.compile(r"^System time\s*:\s*([0-9.]+) seconds (fast|slow) of NTP time")
# sd_booted()'s test first: without systemd as init (most containers) timedatectl can only fail, after loading
# libsystemd-shared (~5 ms a host).
TIMEDATECTL = ('[ -d /run/systemd/system ] || { echo "# preflight: not booted with systemd (no /run/systemd/system)"; '
               "exit 1; }; LC_ALL=C timedatectl status")
REMEDY = ("systemctl enable --now chronyd  # or: timedatectl set-ntp true; then check: chronyc tracking "
          "(Leap status: Normal)")


def parse_timedatectl(text: str) -> dict[str, Any]:
    """``timedatectl status`` -> synced (True/False, None when not said) and the NTP service's state.

    >>> parse_timedatectl("NTP enabled: yes\\nNTP synchronized: no\\n")
    {'synced': False, 'service': 'yes'}
    >>> parse_timedatectl("System has not been booted with systemd as init system (PID 1). Can't operate.\\n")
    {'synced': None, 'service': None}
    """
    synced: bool | None = None
    service: str | None = None
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        label, value = label.strip(), value.strip()
        if not sep:
            continue
        if label in _SYNCED and value in ("yes", "no"):
            synced = value == "yes"
        elif label in _SERVICE and value:
            service = value
    return {"synced": synced, "service": service}


def parse_chrony(text: str) -> dict[str, Any]:
    """``chronyc tracking`` -> leap status, stratum, the system clock's offset from NTP time (fast: +), and
    whether chronyd answered at all (``506 Cannot talk to daemon``: False; no chronyc: None).

    >>> parse_chrony("506 Cannot talk to daemon\\n")["daemon"], parse_chrony("bash: chronyc: command not found\\n")
    (False, {'leap': None, 'stratum': None, 'offset_s': None, 'daemon': None})
    """
    leap = stratum = offset = None
    daemon: bool | None = None
    for raw in text.splitlines():
        line = raw.strip()
        label, sep, value = line.partition(":")
        if line.startswith("506 Cannot talk to daemon"):
            daemon = False
        elif sep and label.strip() == "Leap status":
            leap, daemon = value.strip(), True
        elif sep and label.strip() == "Stratum" and value.strip().isdigit():
            stratum = int(value.strip())
        elif (match := _TIME.match(line)) is not None:
            offset = float(match[1]) * (1 if match[2] == "fast" else -1)
    return {"leap": leap, "stratum": stratum, "offset_s": offset, "daemon": daemon}


class OsTimeCheck(Check):
    family = "os"
    name = "os.time"
    ids = ("os.time",)
    order = 7
    summary = "the clock is NTP-synchronised (timedatectl, chronyc tracking), not only close to the others now"

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("timedatectl", TIMEDATECTL, timeout=10),
                Probe("chrony", "LC_ALL=C chronyc -n tracking", timeout=10)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        empty = ProbeOutput("", "", None)
        timedatectl, chrony = outputs.get("timedatectl", empty), outputs.get("chrony", empty)
        return {"timedatectl": parse_timedatectl(timedatectl.stdout + "\n" + timedatectl.stderr),
                "chrony": parse_chrony(chrony.stdout + "\n" + chrony.stderr)}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return [_judge(host, host_facts) for host, host_facts in facts.items()]


def _judge(host: str, facts: Facts) -> Finding:
    check = "os.time"
    timedatectl = facts.get("timedatectl") or {}
    chrony = facts.get("chrony") or {}
    said: list[str] = []
    if timedatectl.get("synced") is not None:
        said.append(f"timedatectl: synchronized {'yes' if timedatectl['synced'] else 'no'}"
                    + (f", NTP service {timedatectl['service']}" if timedatectl.get("service") else ""))
    if chrony.get("leap"):
        offset = chrony.get("offset_s")
        said.append(f"chronyc: {chrony['leap']}" + (f", stratum {chrony['stratum']}" if chrony.get("stratum") else "")
                    + (f", {offset:+.6f} s from NTP time" if isinstance(offset, (int, float)) else ""))
    elif chrony.get("daemon") is False:
        said.append("chronyc: chronyd not running (506 Cannot talk to daemon)")
    observed = "; ".join(said) or "neither timedatectl nor chronyc could tell"
    synced = timedatectl.get("synced") is True or chrony.get("leap") in _SYNCED_LEAPS
    unsynced = timedatectl.get("synced") is False or (chrony.get("leap") or "").startswith("Not synchron")
    if synced:
        return finding(check, host, Status.PASS, f"{check}: {observed}", observed=observed, expected="synchronised")
    if unsynced:
        return finding(
            check, host, Status.WARN,
            f"{check}: {host}'s clock is not NTP-synchronised ({observed}): it drifts (seconds a day), so a clock "
            "close to the others now (os.clock) is not days into a job: rendezvous heartbeats, TLS and logs break",
            observed=observed, expected="synchronised", remedy=REMEDY)
    return finding(check, host, Status.SKIP,
                   f"{check}: cannot tell whether {host}'s clock is synchronised ({observed}: no systemd, as in most "
                   "containers, whose clock is the host's, and no chronyd answering)", observed=observed)
