"""Pack many probe commands into one shell script (one round trip per host) and unpack the output.

Each probe runs under ``timeout`` in its own process group with stdin closed, its stdout and
stderr captured to files and then printed between marker lines that carry a per-run random nonce,
so no probe output can forge a marker. A watchdog ends the script (and the running probe's process
group) when its parent (the SSH session) goes away, so an interrupted run leaves nothing on a node.
A probe with ``root=True`` runs under ``sudo -n`` when the run asks for it (``as_root``).

>>> script = build_script([Probe("hi", "echo hello")], nonce="N")
>>> run = subprocess.run(["sh", "-s"], input=script.encode(), capture_output=True)
>>> parse_output(run.stdout, ["hi"], nonce="N")["hi"].stdout
'hello\\n'
"""

from __future__ import annotations

import re
import secrets
import shlex
import subprocess  # noqa: F401  (used by the doctest)
from collections.abc import Sequence
from dataclasses import dataclass

MAX_OUTPUT_BYTES = 1 << 20  # per probe and stream; more is cut and flagged
TIMEOUT_EXIT = 124


@dataclass(frozen=True)
class Probe:
    """A named read-only shell command a check wants run on a host.

    ``command`` is a complete shell command; build it with ``shlex.join`` / ``shlex.quote`` from
    any value that is not a constant of the check.
    """

    key: str
    command: str
    timeout: float = 10.0
    root: bool = False  # needs root to see everything (iptables, nft...): run under `sudo -n` with --sudo


@dataclass(frozen=True)
class ProbeOutput:
    """What one probe printed; ``exit_status`` None means it never finished (host timeout)."""

    stdout: str
    stderr: str = ""
    exit_status: int | None = 0
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    @property
    def timed_out(self) -> bool:
        return self.exit_status in (None, TIMEOUT_EXIT, 137)


NOT_RUN = ProbeOutput(stdout="", stderr="not run: the host did not finish in time", exit_status=None)

_PRELUDE = r"""
PF_T=$(mktemp -d 2>/dev/null) || { PF_T=/tmp/preflight.$$; mkdir -m 700 "$PF_T" || exit 97; }
PF_P=$PPID
PF_C=
( while kill -0 "$PF_P" 2>/dev/null; do sleep 1; done; kill -TERM $$ 2>/dev/null ) </dev/null >/dev/null 2>&1 &
PF_W=$!
trap 'kill "$PF_W" 2>/dev/null; rm -rf "$PF_T"' EXIT
trap '[ -z "$PF_C" ] || kill -TERM "$PF_C" 2>/dev/null; exit 130' INT TERM HUP
if command -v timeout >/dev/null 2>&1; then PF_TO=1; else PF_TO=; fi
pf_run() {
  printf '%s BEGIN %s\n' "$PF_M" "$1"
  ( if [ -n "$PF_TO" ]; then exec timeout -k 2 "$2" sh -c "$3"; else exec sh -c "$3"; fi ) \
    >"$PF_T/o" 2>"$PF_T/e" </dev/null &
  PF_C=$!
  wait "$PF_C"
  pf_rc=$?
  PF_C=
  head -c {limit} "$PF_T/o"
  printf '\n%s STDERR %s\n' "$PF_M" "$1"
  head -c {limit} "$PF_T/e"
  printf '\n%s END %s %s %s %s\n' "$PF_M" "$1" "$pf_rc" "$(wc -c <"$PF_T/o")" "$(wc -c <"$PF_T/e")"
}
"""


def new_nonce() -> str:
    return secrets.token_hex(8)


def as_root(command: str) -> str:
    """``command`` run as root: directly when already root, else through ``sudo -n`` (never a password prompt).

    >>> subprocess.run(["sh", "-c", as_root("echo hi")], capture_output=True).returncode in (0, 1)
    True
    """
    quoted = shlex.quote(command)
    return f'if [ "$(id -u)" = 0 ]; then exec sh -c {quoted}; else exec sudo -n sh -c {quoted}; fi'


SUDO_CHECK = 'if [ "$(id -u)" = 0 ]; then echo root; else sudo -n true && echo sudo; fi'


def build_script(probes: Sequence[Probe], nonce: str) -> str:
    """Return a POSIX sh script that runs every probe in order."""
    lines = [f"PF_M={shlex.quote('@@PF-' + nonce)}", _PRELUDE.replace("{limit}", str(MAX_OUTPUT_BYTES))]
    for probe in probes:
        seconds = max(1, int(round(probe.timeout)))
        lines.append(f"pf_run {shlex.quote(probe.key)} {seconds} {shlex.quote(probe.command)}")
    return "\n".join(lines) + "\n"


def parse_output(raw: bytes, keys: Sequence[str], nonce: str) -> dict[str, ProbeOutput]:
    """Split the script's stdout back into per-probe outputs; probes that never ended get NOT_RUN."""
    text = raw.decode("utf-8", errors="replace")
    marker = re.escape("@@PF-" + nonce)
    pattern = re.compile(
        rf"^{marker} BEGIN (?P<key>\S+)\n(?P<out>.*?)\n{marker} STDERR (?P=key)\n(?P<err>.*?)\n"
        rf"{marker} END (?P=key) (?P<rc>\d+) (?P<olen>\d+) (?P<elen>\d+)$",
        re.DOTALL | re.MULTILINE,
    )
    results: dict[str, ProbeOutput] = {}
    for match in pattern.finditer(text):
        truncated = int(match["olen"]) > MAX_OUTPUT_BYTES or int(match["elen"]) > MAX_OUTPUT_BYTES
        results[match["key"]] = ProbeOutput(match["out"], match["err"], int(match["rc"]), truncated)
    return {key: results.get(key, NOT_RUN) for key in keys}
