"""os.time: the host's own time-sync daemon keeps its clock synchronised, close to NTP time and at a sane rate.

``os.clock`` measures the offset between hosts at this moment (the controller's view); os.time asks each node's
own daemon. A clock nobody disciplines drifts (a few to tens of ppm: seconds a day) and is off days into a long
job: torchrun's rendezvous heartbeats, TLS and log correlation break then. Three readers (parsers in
``preflight.time_sync``):

- ``timedatectl status`` (systemd): "System clock synchronized: yes" (systemd >= 235; "NTP synchronized" before),
  the kernel's own "synchronised" flag, set by whichever NTP daemon runs;
- ``chronyc -n tracking``: "Leap status" (Normal: synchronised), "System time" (the system clock's offset from
  chronyd's NTP time, still being slewed away) and "Frequency" (the rate error chronyd corrects);
- ``timedatectl timesync-status`` (systemd-timesyncd, only where it runs: the query would otherwise start it by
  bus activation): the last exchange's "Offset" and the kernel "Frequency" correction (plain ``timedatectl status``
  prints no offset).

Synchronisation: pass when a reader says synchronised, warn when one says not and none says it is, skip when
none can tell (no systemd, as in most containers, whose clock is the host's, and no daemon answering). The offset
is judged with os.clock's thresholds: warn over ``warn_clock_offset_s``, fail over ``max_clock_offset_s``
(timesyncd's only from its second exchange on: the first one is the start-up step). A frequency error at or
over ``warn_clock_frequency_ppm`` (500 ppm: the Linux kernel's adjtimex limit, MAXFREQ, and RFC 5905's
tolerance; a good oscillator is within tens of ppm) warns: the clock runs away as soon as the daemon stops or
loses its servers. The worst of the three decides. An output none of the readers could read, with no verdict
from another, is an ``error`` quoting its first line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from preflight.checks.base import *
from preflight.time_sync import parse_chrony, parse_timedatectl, parse_timesync

_SYNCED_LEAPS = ("Normal", "Insert second", "Delete second")
# sd_booted()'s test first: without systemd as init (most containers) timedatectl can only fail, after loading
# libsystemd-shared (~5 ms a host).
_BOOTED = ('[ -d /run/systemd/system ] || { echo "# preflight: not booted with systemd (no /run/systemd/system)"; '
           "exit 1; }; ")
TIMEDATECTL = _BOOTED + "LC_ALL=C timedatectl status"
# timesync-status only where timesyncd runs: asking its bus name otherwise may start it (bus activation).
TIMESYNC = (_BOOTED + "systemctl is-active --quiet systemd-timesyncd || "
            '{ echo "# preflight: systemd-timesyncd is not running"; exit 1; }; LC_ALL=C timedatectl timesync-status')
REMEDY = ("systemctl enable --now chronyd  # or: timedatectl set-ntp true; then check: chronyc tracking "
          "(Leap status: Normal)")
OFFSET_REMEDY = ("chronyc makestep  # steps the clock now (timesyncd: systemctl restart systemd-timesyncd); then find "
                 "why it drifted: chronyc sources -v, timedatectl timesync-status")
FREQUENCY_REMEDY = ("check the kernel clocksource (/sys/devices/system/clocksource/clocksource0/current_clocksource; "
                    "'clocksource' lines in dmesg) and the hypervisor's timekeeping; a rate this far off is hardware "
                    "or virtualisation, not NTP")


class OsTimeCheck(Check):
    ids = ("os.time",)
    order = 7
    summary = ("the node's own NTP daemon: synchronised (timedatectl, chronyc tracking), offset and frequency error "
               "within bounds (chronyc tracking, timedatectl timesync-status)")
    # The offset thresholds are os.clock's (checks/os_limits.py), shared through hosts.yaml `checks: os:`.
    params: ClassVar[Mapping[str, Any]] = {
        "warn_clock_offset_s": 2,
        "max_clock_offset_s": 10,
        "warn_clock_frequency_ppm": 500,
    }

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("timedatectl", TIMEDATECTL, timeout=10),
                Probe("chrony", "LC_ALL=C chronyc -n tracking", timeout=10),
                Probe("timesync", TIMESYNC, timeout=10)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        empty = ProbeOutput("", "", None)
        text = {key: outputs.get(key, empty).stdout + "\n" + outputs.get(key, empty).stderr
                for key in ("timedatectl", "chrony", "timesync")}
        return {"timedatectl": parse_timedatectl(text["timedatectl"]), "chrony": parse_chrony(text["chrony"]),
                "timesync": parse_timesync(text["timesync"])}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        limits = (float(ctx.params["warn_clock_offset_s"]), float(ctx.params["max_clock_offset_s"]),
                  float(ctx.params["warn_clock_frequency_ppm"]))
        return [_judge(host, host_facts, *limits) for host, host_facts in facts.items()]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _offset_text(offset: float) -> str:
    return f"{abs(offset):.6f} s {'fast' if offset >= 0 else 'slow'}"


def _said(timedatectl: Facts, chrony: Facts, timesync: Facts) -> list[str]:
    """What each reader said, in words (the finding's observed)."""
    said: list[str] = []
    if timedatectl.get("synced") is not None:
        said.append(f"timedatectl: synchronized {'yes' if timedatectl['synced'] else 'no'}"
                    + (f", NTP service {timedatectl['service']}" if timedatectl.get("service") else ""))
    offset, frequency = _number(chrony.get("offset_s")), _number(chrony.get("frequency_ppm"))
    if chrony.get("leap") or chrony.get("daemon"):
        said.append(f"chronyc: {chrony.get('leap') or 'no Leap status line'}"
                    + (f", stratum {chrony['stratum']}" if chrony.get("stratum") else "")
                    + (f", {_offset_text(offset)} of NTP time" if offset is not None else "")
                    + (f", frequency {abs(frequency):.3f} ppm {'fast' if frequency >= 0 else 'slow'}"
                       if frequency is not None else ""))
    elif chrony.get("daemon") is False:
        said.append("chronyc: chronyd not running (506 Cannot talk to daemon)")
    if timesync.get("daemon"):
        packets = timesync.get("packets")
        offset, frequency = _number(timesync.get("offset_s")), _number(timesync.get("frequency_ppm"))
        said.append(f"timesyncd: server {timesync.get('server') or '?'}, packet count {packets}"
                    + (" (no NTP answer yet)" if packets == 0 else "")
                    + (f", last exchange {_offset_text(offset)}" if offset is not None else "")
                    + (" (the first: the start-up step, not judged)" if packets == 1 and offset is not None else "")
                    + (f", frequency correction {frequency:+.3f} ppm" if frequency is not None else ""))
    elif timesync.get("daemon") is False:
        said.append("timesyncd: not running")
    return said


def _unread(timedatectl: Facts, chrony: Facts, timesync: Facts) -> list[str]:
    tools = (("timedatectl status", timedatectl), ("chronyc tracking", chrony),
             ("timedatectl timesync-status", timesync))
    return [f"{tool}: {facts['unread']!r}" for tool, facts in tools if facts.get("unread")]


def _judge(host: str, facts: Facts, warn_s: float, max_s: float, warn_ppm: float) -> Finding:
    check = "os.time"
    timedatectl, chrony = facts.get("timedatectl") or {}, facts.get("chrony") or {}
    timesync = facts.get("timesync") or {}
    said, unread = _said(timedatectl, chrony, timesync), _unread(timedatectl, chrony, timesync)
    observed = "; ".join(said + [f"could not read {u}" for u in unread]) or "no reader could tell"
    expected = f"synchronised, offset within {warn_s:g} s, frequency error under {warn_ppm:g} ppm"
    problems: list[tuple[Status, str, str]] = []  # (status, what, remedy)

    synced = timedatectl.get("synced") is True or chrony.get("leap") in _SYNCED_LEAPS
    if not synced and (timedatectl.get("synced") is False or (chrony.get("leap") or "").startswith("Not synchron")):
        problems.append((Status.WARN, "the clock is not NTP-synchronised: it drifts (seconds a day), so a clock "
                         "close to the others now (os.clock) is not days into a job", REMEDY))
    offsets = [(abs(v), f"chronyd's System time: {_offset_text(v)} of NTP time, still being slewed away")
               for v in [_number(chrony.get("offset_s"))] if v is not None]
    packets = timesync.get("packets")
    if isinstance(packets, int) and packets >= 2 and (v := _number(timesync.get("offset_s"))) is not None:
        offsets.append((abs(v), f"timesyncd's last exchange found the clock {_offset_text(v)} ({packets} packets)"))
    if offsets and (worst := max(offsets))[0] > warn_s:
        status = Status.FAIL if worst[0] > max_s else Status.WARN
        limit = max_s if status is Status.FAIL else warn_s
        problems.append((status, f"{worst[1]}, over {limit:g} s (torchrun drops nodes whose heartbeat looks older "
                         "than 15 s; logs stop lining up long before)", OFFSET_REMEDY))
    for tool, value in (("chronyd", _number(chrony.get("frequency_ppm"))),
                        ("timesyncd", _number(timesync.get("frequency_ppm")))):
        if value is not None and abs(value) >= warn_ppm:
            problems.append((Status.WARN, f"{tool} corrects a frequency error of {abs(value):g} ppm "
                             f"({abs(value) * 0.0864:.0f} s a day), at or over {warn_ppm:g} ppm: the clock runs "
                             "away as soon as the daemon stops or loses its servers", FREQUENCY_REMEDY))

    if problems:
        status = max((p[0] for p in problems), key=lambda s: s.rank)
        remedy = "; ".join(dict.fromkeys(p[2] for p in problems))
        return finding(check, host, status, f"{host}: " + "; ".join(p[1] for p in problems)
                       + f" ({observed})", observed=observed, expected=expected, remedy=remedy)
    if synced:
        return finding(check, host, Status.PASS, f"{observed}", observed=observed, expected=expected)
    if unread:
        return finding(check, host, Status.ERROR, f"could not read {host}'s time-sync state: "
                       + "; ".join(unread), observed=observed)
    return finding(check, host, Status.SKIP,
                   f"cannot tell whether {host}'s clock is synchronised ({observed}: no systemd, as in most "
                   "containers, whose clock is the host's, and no chronyd answering)", observed=observed)
