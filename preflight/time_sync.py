"""What a node's own time-sync daemon says (os.time): pure parsers of ``timedatectl status``, ``chronyc tracking``
and ``timedatectl timesync-status``.

Every parser returns ``unread``: the first line of a non-empty output in which it found nothing it knows (a new
format, a localised or garbled output), so the check says "could not read" instead of judging nothing. Tool
missing, daemon not running, no systemd: known states, never ``unread``.

Offsets are the local clock minus NTP time, in seconds (+: the clock is fast), as chrony prints them ("slow of NTP
time": -). ``timedatectl timesync-status`` prints the other sign: its Offset is ((T2 - T1) + (T3 - T4)) / 2 of the
last NTP exchange (systemd's ``print_ntp_status_info``), the server's time minus the client's, which timesyncd then
adds to the clock; parse_timesync turns it round.

>>> parse_chrony("System time     : 7.810536861 seconds slow of NTP time\\nFrequency       : 31244.098 ppm slow\\n"
...              "Leap status     : Normal\\n")["offset_s"]
-7.810536861
>>> parse_timesync("       Offset: +316us\\n Packet count: 1\\n    Frequency: -8.802ppm\\n")["offset_s"]
-0.000316
"""

from __future__ import annotations

import re
from typing import Any

# timedatectl status labels, by systemd release: the kernel's sync flag, and the NTP service's state.
_SYNCED = ("System clock synchronized", "NTP synchronized")
_SERVICE = ("NTP service", "systemd-timesyncd.service active", "Network time on", "NTP enabled")
_TIMEDATECTL_LABELS = ("Local time", "Universal time", "RTC time", "Time zone", "RTC in local TZ", "DST active",
                       "Last DST change", "Next DST change")
_CHRONY_LABELS = ("Reference ID", "Stratum", "Ref time (UTC)", "System time", "Last offset", "RMS offset",
                  "Frequency", "Residual freq", "Skew", "Root delay", "Root dispersion", "Update interval",
                  "Leap status")
_TIMESYNC_LABELS = ("Server", "Poll interval", "Leap", "Version", "Stratum", "Reference", "Precision",
                    "Root distance", "Offset", "Delay", "Jitter", "Packet count", "Frequency")
# Known messages with no reading in them: the tool or systemd absent, preflight's own guard lines.
_ABSENT = re.compile(r"^# preflight: |command not found|: not found$|No such file or directory|"
                     r"System has not been booted with systemd|Failed to connect to bus|"
                     r"Failed to create bus connection|Unknown operation|Unknown command verb|Unknown verb")
# timesyncd is not running: the bus name is not there (systemd 239+ words it one of these two ways).
_TIMESYNCD_DOWN = re.compile(r"^# preflight: systemd-timesyncd is not running|^Command requires systemd-timesyncd|"
                             r"^Failed to query server")
_TIME = re.compile(r"^([0-9.]+) seconds (fast|slow) of NTP time$")
_CHRONY_FREQ = re.compile(r"^([0-9.]+) ppm (fast|slow)$")
_PPM = re.compile(r"^([+-]?[0-9.]+) ppm$")
_TIMESYNC_PPM = re.compile(r"^([+-]?\d+(?:[.,]\d+)?)ppm$")  # "%+.3fppm"; a comma: printed in a non-C locale
# systemd's format_timespan units (src/basic/time-util.c), in seconds; "us" was "µs" in some releases.
_UNITS = {"y": 31557600.0, "month": 2629800.0, "w": 604800.0, "d": 86400.0, "h": 3600.0, "min": 60.0, "s": 1.0,
          "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}
_SPAN = re.compile(r"^(\d+(?:[.,]\d+)?)(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")$")


def _first_line(text: str) -> str | None:
    """The first non-empty line, cut to 200 characters (what an ``unread`` quotes)."""
    return next((line.strip()[:200] for line in text.splitlines() if line.strip()), None)


def _fields(text: str, labels: tuple[str, ...]) -> dict[str, str]:
    """``Label : value`` lines whose label is one of ``labels`` (first occurrence wins)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if sep and label.strip() in labels:
            found.setdefault(label.strip(), value.strip())
    return found


def timespan(text: str) -> float | None:
    """A systemd time span (``format_timespan``) in seconds, signed; None when it is not one.

    >>> timespan("+316us"), timespan("-1.087495s"), timespan("1min 4s"), timespan("0"), timespan("-0")
    (0.000316, -1.087495, 64.0, 0.0, -0.0)
    >>> timespan("10month 2w 1d 13h 28min 23.169258s") > 2.7e7, timespan("soon"), timespan("")
    (True, None, None)
    """
    value = text.strip()
    sign = -1.0 if value.startswith("-") else 1.0
    value = value.lstrip("+-")
    if value == "0":
        return sign * 0.0
    parts = value.split()
    total = 0.0
    for part in parts:
        match = _SPAN.match(part)
        if match is None:
            return None
        total += float(match[1].replace(",", ".")) * _UNITS[match[2]]
    return sign * total if parts else None


def parse_timedatectl(text: str) -> dict[str, Any]:
    """``timedatectl status`` -> synced (True/False, None when not said), the NTP service's state, and ``unread``.

    >>> parse_timedatectl("NTP enabled: yes\\nNTP synchronized: no\\n")
    {'synced': False, 'service': 'yes', 'unread': None}
    >>> parse_timedatectl("System has not been booted with systemd as init system (PID 1). Can't operate.\\n")
    {'synced': None, 'service': None, 'unread': None}
    >>> parse_timedatectl("Systemuhr synchronisiert: ja\\n")["unread"]
    'Systemuhr synchronisiert: ja'
    """
    fields = _fields(text, _SYNCED + _SERVICE + _TIMEDATECTL_LABELS)
    synced: bool | None = None
    service: str | None = None
    for label, value in fields.items():
        if label in _SYNCED and value in ("yes", "no"):
            synced = value == "yes"
        elif label in _SERVICE and value:
            service = value
    known = bool(fields) or any(_ABSENT.search(line) for line in text.splitlines())
    return {"synced": synced, "service": service, "unread": None if known else _first_line(text)}


def parse_chrony(text: str) -> dict[str, Any]:
    """``chronyc tracking`` -> leap status, stratum, the system clock's offset from NTP time (s, fast: +), its
    frequency error (ppm, fast: +; the rate it would drift at if chronyd stopped correcting it), the residual
    frequency and skew (ppm), whether chronyd answered (``506 Cannot talk to daemon``: False; no chronyc: None),
    and ``unread``.

    >>> parse_chrony("506 Cannot talk to daemon\\n")["daemon"], parse_chrony("bash: chronyc: command not found\\n")
    (False, {'leap': None, 'stratum': None, 'offset_s': None, 'frequency_ppm': None, 'residual_ppm': None, \
'skew_ppm': None, 'daemon': None, 'unread': None})
    >>> parse_chrony("Frequency       : 3.225 ppm slow\\nSkew            : 0.129 ppm\\n")["frequency_ppm"]
    -3.225
    """
    fields = _fields(text, _CHRONY_LABELS)
    lines = [line.strip() for line in text.splitlines()]
    refused = any(line.startswith(("506 Cannot talk to daemon", "501 Not authorised")) for line in lines)
    daemon: bool | None = True if fields else (False if refused else None)
    leap = fields.get("Leap status") or None
    stratum = int(fields["Stratum"]) if fields.get("Stratum", "").isdigit() else None
    offset = frequency = None
    if (match := _TIME.match(fields.get("System time", ""))) is not None:
        offset = float(match[1]) * (1 if match[2] == "fast" else -1)
    if (match := _CHRONY_FREQ.match(fields.get("Frequency", ""))) is not None:
        frequency = float(match[1]) * (1 if match[2] == "fast" else -1)
    residual = float(m[1]) if (m := _PPM.match(fields.get("Residual freq", ""))) else None
    skew = float(m[1]) if (m := _PPM.match(fields.get("Skew", ""))) else None
    known = bool(fields) or daemon is False or any(_ABSENT.search(line) for line in lines)
    return {"leap": leap, "stratum": stratum, "offset_s": offset, "frequency_ppm": frequency,
            "residual_ppm": residual, "skew_ppm": skew, "daemon": daemon,
            "unread": None if known else _first_line(text)}


def parse_timesync(text: str) -> dict[str, Any]:
    """``timedatectl timesync-status`` -> the server, its leap indicator, the packets timesyncd has had, the last
    exchange's offset (s, local clock minus server: fast +), the kernel frequency correction timesyncd set (ppm, as
    printed: timex.freq / 65536; absent after a sample it ignored as a spike), whether timesyncd runs (False: not
    running; None: no systemd or a timedatectl without the verb, before systemd 239), and ``unread``.

    >>> parse_timesync("       Server: n/a (n/a)\\nPoll interval: 0 (min: 32s; max 34min 8s)\\n Packet count: 0\\n")
    {'server': 'n/a (n/a)', 'leap': None, 'packets': 0, 'offset_s': None, 'frequency_ppm': None, 'daemon': True, \
'unread': None}
    >>> parse_timesync("# preflight: systemd-timesyncd is not running\\n")["daemon"]
    False
    """
    fields = _fields(text, _TIMESYNC_LABELS)
    lines = [line.strip() for line in text.splitlines()]
    down = any(_TIMESYNCD_DOWN.search(line) for line in lines)
    daemon: bool | None = True if fields else (False if down else None)
    packets = int(fields["Packet count"]) if fields.get("Packet count", "").isdigit() else None
    offset = timespan(fields["Offset"]) if "Offset" in fields else None
    frequency = None
    if (match := _TIMESYNC_PPM.match(fields.get("Frequency", ""))) is not None:
        frequency = float(match[1].replace(",", "."))
    known = bool(fields) or daemon is False or any(_ABSENT.search(line) for line in lines)
    return {"server": fields.get("Server") or None, "leap": fields.get("Leap") or None, "packets": packets,
            "offset_s": None if offset is None else -offset + 0.0, "frequency_ppm": frequency, "daemon": daemon,
            "unread": None if known else _first_line(text)}
