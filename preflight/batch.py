"""Pack many probe commands into one shell script (one round trip per host) and unpack the output.

Each probe runs as ``( eval CMD ) </dev/null &`` in a subshell of the script: no ``sh -c``, no
``timeout``, no temporary file per probe (a fork costs ~0.3 ms, the old wrapper ~5 ms, and on a
cluster of shared cores that is most of a run). Its stdout and stderr go straight to the script's
own streams, each framed by marker lines that carry a per-run random nonce, so no probe output
can forge a marker; the 1 MiB cap per probe and stream is applied when the output is parsed.

One watchdog per script does the timing: once a second it looks at the running probe and, when
that probe has run past its timeout, sends TERM to its whole process tree (read from
``/proc/PID/task/*/children`` before anything dies), KILL two seconds later, and the probe's exit
status becomes 124 as with ``timeout(1)``. So a probe gets between its timeout and one second
more. The time is the node's clock since boot (``/proc/uptime``), not a count of the watchdog's
``sleep 1`` turns, which on a node at load 100 take several seconds each, so that a probe could run
minutes past its timeout; without ``/proc/uptime`` the turns are counted.
The same watchdog ends the script (and the running probe's tree) when its parent (the SSH
session) goes away, so an interrupted run leaves nothing on a node.
A probe with ``root=True`` runs under ``sudo -n`` when the run asks for it (``as_root``).

>>> script = build_script([Probe("hi", "echo hello; echo oops >&2")], nonce="N")
>>> run = subprocess.run(["sh", "-s"], input=script.encode(), capture_output=True)
>>> out = parse_output(run.stdout, ["hi"], nonce="N", stderr=run.stderr)["hi"]
>>> out.stdout, out.stderr, out.exit_status
('hello\\n', 'oops\\n', 0)
"""

from __future__ import annotations

import os
import re
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

    @property
    def seconds(self) -> int:
        """The timeout the node-side watchdog enforces: whole seconds, at least 1."""
        return max(1, int(round(self.timeout)))


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
PF_K=
pf_tree() {
  local pf_f pf_k
  PF_K="$PF_K $1"
  for pf_f in /proc/"$1"/task/*/children; do
    [ -r "$pf_f" ] || continue
    pf_k=
    read -r pf_k <"$pf_f" 2>/dev/null
    for pf_k in $pf_k; do pf_tree "$pf_k"; done
  done
}
pf_kill() {
  PF_K=
  pf_tree "$2"
  kill -"$1" $PF_K 2>/dev/null
}
(
  pf_last= pf_n=0 pf_t0= pf_s=0 pf_hit=
  while kill -0 "$PF_P" 2>/dev/null; do
    sleep 1
    pf_c= pf_l= pf_now=
    read -r pf_c pf_l <"$PF_T/c" 2>/dev/null
    read -r pf_now pf_u </proc/uptime 2>/dev/null
    pf_now=${pf_now%%.*}
    if [ -z "$pf_c" ] || [ "$pf_c" != "$pf_last" ]; then pf_last=$pf_c pf_n=0 pf_t0=$pf_now pf_s=0; continue; fi
    if [ -n "$pf_now" ] && [ -n "$pf_t0" ]; then pf_n=$((pf_now - pf_t0)); else pf_n=$((pf_n + 1)); fi
    if [ "$pf_s" -eq 0 ] && [ "$pf_n" -ge "$pf_l" ]; then
      : >"$PF_T/k$pf_c"; pf_kill TERM "$pf_c"; pf_hit=$PF_K pf_s=1
    elif [ "$pf_s" -eq 1 ] && [ "$pf_n" -ge $((pf_l + 2)) ]; then
      kill -KILL $pf_hit 2>/dev/null; pf_s=2
    fi
  done
  kill -TERM $$ 2>/dev/null
) </dev/null >/dev/null 2>&1 &
PF_W=$!
trap 'kill "$PF_W" 2>/dev/null; rm -rf "$PF_T"' EXIT
trap '[ -z "$PF_C" ] || pf_kill TERM "$PF_C"; exit 130' INT TERM HUP
pf_run() {
  printf '%s BEGIN %s\n' "$PF_M" "$1"
  printf '%s BEGIN %s\n' "$PF_M" "$1" >&2
  ( pf_cmd=$3; set --; eval "$pf_cmd" ) </dev/null &
  PF_C=$!
  echo "$PF_C $2" >"$PF_T/c"
  wait "$PF_C"
  pf_rc=$?
  [ ! -e "$PF_T/k$PF_C" ] || pf_rc=124
  PF_C=
  printf '\n%s END %s %s\n' "$PF_M" "$1" "$pf_rc"
  printf '\n%s END %s\n' "$PF_M" "$1" >&2
}
"""


def new_nonce() -> str:
    return os.urandom(8).hex()  # what secrets.token_hex(8) returns, without importing secrets (~3 ms)


def as_root(command: str) -> str:
    """``command`` run as root: directly when already root, else through ``sudo -n`` (never a password prompt).

    >>> subprocess.run(["sh", "-c", as_root("echo hi")], capture_output=True).returncode in (0, 1)
    True
    """
    quoted = shlex.quote(command)
    return f'if [ "$(id -u)" = 0 ]; then exec sh -c {quoted}; else exec sudo -n sh -c {quoted}; fi'


def read_line(path: str, var: str = "pf_v") -> str:
    """Shell that sets ``var`` to the first line of ``path`` with builtins only (no fork); false when unreadable.

    A fork and exec of ``cat`` costs ~0.7 ms a file; on 64 hosts sharing two cores that adds up.
    Only for files that can be read at an offset (sysfs, string sysctls such as the hostname): dash
    reads one byte at a time, and numeric /proc/sys files (``proc_dointvec``) answer any read past
    offset 0 with end-of-file, so ``read`` would see "4" of "4096". Use ``cat`` for those.

    >>> subprocess.run(["sh", "-c", read_line("/proc/sys/kernel/ostype") + ' && echo "$pf_v"'],
    ...                capture_output=True, text=True).stdout
    'Linux\\n'
    """
    return f'{{ {var}=; IFS= read -r {var} <{shlex.quote(path)} || [ -n "${var}" ]; }} 2>/dev/null'


def print_line(path: str) -> str:
    """Shell that prints the first line of ``path`` like ``head -n 1`` (builtins only); false when unreadable."""
    return read_line(path) + " && printf '%s\\n' \"$pf_v\""


def print_file(path: str) -> str:
    """Shell that prints ``path`` like ``cat`` with builtins only (no fork or exec); false when unreadable.

    Only for small files that can be read at any offset (see :func:`read_line`), such as /proc/meminfo or
    /proc/1/cgroup: dash reads one byte per system call, so a large file costs more than ``cat``'s exec.

    >>> subprocess.run(["sh", "-c", print_file("/proc/sys/kernel/ostype")], capture_output=True, text=True).stdout
    'Linux\\n'
    """
    return f'while IFS= read -r pf_l || [ -n "$pf_l" ]; do printf \'%s\\n\' "$pf_l"; done <{shlex.quote(path)}'


SUDO_CHECK = 'if [ "$(id -u)" = 0 ]; then echo root; else sudo -n true && echo sudo; fi'


# The controller's wall-clock time when it sent the script (epoch seconds), for probes that compare clocks.
SENT_AT = "PF_SENT"
# The output key under which the engine hands a ``stamped`` check the controller's wall-clock time when the
# host's script output came back (stdout: epoch seconds): no command prints it, the engine adds it.
RECEIVED = "pf.received"
RECEIVED_COMMAND = "# added by the engine: the controller's time when the host's output came back"


def received_output(received_at: float) -> ProbeOutput:
    """The engine-added output that carries the controller's receive time.

    >>> received_output(1700000000.25).stdout
    '1700000000.250000\\n'
    """
    return ProbeOutput(f"{received_at:.6f}\n")


def build_script(probes: Sequence[Probe], nonce: str, sent_at: float | None = None) -> str:
    """Return a POSIX sh script that runs every probe in order.

    ``sent_at``: the controller's time as it sends the script, stamped in as ``$PF_SENT`` (probes stay constant).

    >>> "PF_SENT=1.500000" in build_script([], "N", sent_at=1.5)
    True
    """
    lines = [f"PF_M={shlex.quote('@@PF-' + nonce)}", _PRELUDE]
    if sent_at is not None:
        lines.insert(1, f"{SENT_AT}={sent_at:.6f}")
    for probe in probes:
        lines.append(f"pf_run {shlex.quote(probe.key)} {probe.seconds} {shlex.quote(probe.command)}")
    return "\n".join(lines) + "\n"


def _sections(text: str, nonce: str) -> dict[str, tuple[str, int | None]]:
    """key -> (text between its BEGIN and END lines, exit status or None) for every complete section.

    >>> _sections("@@PF-n BEGIN a\\nx\\n\\n@@PF-n END a 3\\n", "n")
    {'a': ('x\\n', 3)}
    """
    marker = re.compile(rf"^@@PF-{re.escape(nonce)} (BEGIN|END) (\S+)(?: (\d+))?$", re.MULTILINE)
    found: dict[str, tuple[str, int | None]] = {}
    opened: tuple[str, int] | None = None
    for match in marker.finditer(text):
        kind, key = match.group(1), match.group(2)
        if kind == "BEGIN":
            opened = (key, match.end() + 1)
        elif opened is not None and opened[0] == key:
            body = text[opened[1]:max(opened[1], match.start() - 1)]
            found[key] = (body, int(match.group(3)) if match.group(3) else None)
            opened = None
    return found


def _capped(text: str) -> tuple[str, bool]:
    """``text`` cut to ``MAX_OUTPUT_BYTES`` of UTF-8, and whether it was cut."""
    if len(text) <= MAX_OUTPUT_BYTES // 4:  # a character is at most 4 bytes: surely under the cap
        return text, False
    data = text.encode("utf-8")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text, False
    return data[:MAX_OUTPUT_BYTES].decode("utf-8", errors="ignore"), True


def parse_output(raw: bytes, keys: Sequence[str], nonce: str, stderr: bytes = b"") -> dict[str, ProbeOutput]:
    """Split the script's stdout (and stderr) back into per-probe outputs; probes that never ended get NOT_RUN.

    Each probe's stdout and stderr are cut at ``MAX_OUTPUT_BYTES`` (``truncated`` says so).
    """
    outs = _sections(raw.decode("utf-8", errors="replace"), nonce)
    errs = _sections(stderr.decode("utf-8", errors="replace"), nonce)
    results: dict[str, ProbeOutput] = {}
    for key in keys:
        if key not in outs or outs[key][1] is None:
            results[key] = NOT_RUN
            continue
        out, cut_out = _capped(outs[key][0])
        err, cut_err = _capped(errs.get(key, ("", None))[0])
        results[key] = ProbeOutput(out, err, outs[key][1], cut_out or cut_err)
    return results
