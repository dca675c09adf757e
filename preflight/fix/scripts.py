"""The host side of ``fix --apply`` / ``--undo``: shell run as probes of the framed script (preflight.batch), every
word from the plan quoted with ``shlex.quote``, file contents sent as base64 (never a shell built from unquoted
input).

- :func:`holder`: takes ``flock -n`` on /run/lock/preflight-fix.lock and holds it, on its own channel, until the
  controller releases it (:func:`release`) or the session goes away (the batch watchdog ends it); a second fix on
  the host is refused at once and told who holds it (the lock file's line: run, controller, user, since);
- :func:`apply_program`: per change the journal (intent), the files, the commands, the values read back from
  /proc/sys, the journal (done or failed) and a syslog line; progress lines on stdout; the journal at the end;
- :func:`undo_program`: per change the files, values and rules put back, the journal and a syslog line.

>>> "flock -n 9" in holder("r1", "run=r1 controller=c")
True
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Sequence

from preflight.batch import as_root
from preflight.fix.journal import HOST_DIR, STEP, Journal, host_path, shell_writer, slot, step_line, syslog_argv
from preflight.fix.model import Argv
from preflight.fix.state import LOCK, Decision, UndoStep, proc_path

JOURNAL_MARK = "pf-journal"  # + the nonce: the journal's text follows on stdout
JOURNAL_FAILED = "pf-journal-failed"
FRESH = "pf-fresh-ok"


def wrap(command: str, sudo: bool) -> str:
    """``command`` as root through ``sudo -n`` (``--sudo``), else as it is."""
    return as_root(command) if sudo else command


def release_file(run: str) -> str:
    return f"/run/lock/preflight-fix.{run}.release"


def busy_file(run: str) -> str:
    """Where a holder that found the lock taken leaves the holder's line (the lock check answers at once)."""
    return f"/run/lock/preflight-fix.{run}.busy"


def owner_line(run: str, controller: str, user: str) -> str:
    """What the lock file says while a run holds it (its first word names the run).

    >>> owner_line("r1", "ctl", "alice")
    'run=r1 controller=ctl user=alice'
    """
    return " ".join(f"run={run} controller={controller or '?'} user={user or '?'}".split())


def holder(run: str, owner: str) -> str:
    """Hold the host's fix lock until released: prints ``held``, or ``busy`` and the holder's line (exit 75)."""
    done = shlex.quote(release_file(run))
    return (f"mkdir -p /run/lock 2>/dev/null; exec 9>>{LOCK} || {{ echo 'error cannot open {LOCK}'; exit 1; }}; "
            "command -v flock >/dev/null 2>&1 || { echo 'error flock(1) is not installed'; exit 1; }; "
            f"if ! flock -n 9; then pf_o=; IFS= read -r pf_o < {LOCK}; echo \"busy $pf_o\"; "
            f"printf '%s\\n' \"$pf_o\" > {shlex.quote(busy_file(run))}; exit 75; fi; "
            f"rm -f {done} {shlex.quote(busy_file(run))}; "
            f"printf '%s since=%s\\n' {shlex.quote(owner)} \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" > {LOCK}; "
            f"echo held; while [ ! -e {done} ]; do sleep 0.2; done; rm -f {done}; : > {LOCK}; echo released")


def release(run: str) -> str:
    """Tell the holder of ``run`` to let the lock go."""
    return f": > {shlex.quote(release_file(run))}"


_PRELUDE = r"""set -f
pf_now() { pf_t=$(date -u +%Y-%m-%dT%H:%M:%SZ); }
pf_write() {
  mkdir -p -- "$(dirname -- "$1")" && printf '%s' "$2" | base64 -d > "$1.pf-new" && chmod 644 "$1.pf-new" &&
    mv -f -- "$1.pf-new" "$1"
}
pf_expect() {
  pf_p=$1; pf_w=$2; pf_v=$(cat "$pf_p") || return 90; set -- $pf_v; [ "$*" = "$pf_w" ] && return 0
  echo "$pf_p is $* after the change, not $pf_w" >&2; return 91
}
pf_put() { printf '%s\n' "$2" > "$1"; }
pf_ip() {
  pf_o=$("$1" -i "$2" -ip -g 2>&1) || { printf '%s\n' "$pf_o" >&2; return 92; }
  printf '%s\n' "$pf_o" | awk -F: -v a="$3" -v m="$4" '{ k = $1; v = $2; gsub(/[ \t\r]/, "", k);
    gsub(/[ \t\r]/, "", v); if (k == "ipaddr" && v == a) fa = 1; if (k == "netmask" && v == m) fm = 1 }
    END { exit !(fa && fm) }' && return 0
  echo "device $2 reads '$(printf '%s' "$pf_o" | tr '\n' ' ')' after the change, not $3 netmask $4" >&2; return 93
}
pf_log() { "$@" 2>/dev/null || :; }
"""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _run(argv: Argv) -> str:
    return f"{shlex.join(argv)} || return $?"


def _begin(journal: Journal, nonce: str, undo: bool) -> list[str]:
    q = shlex.quote(host_path(journal.run))
    return [_PRELUDE, shell_writer(journal, host_path(journal.run), undo=undo),
            f"mkdir -p {HOST_DIR} && pf_journal || {{ echo {JOURNAL_FAILED} {nonce}; exit 3; }}",
            "pf_fin() { pf_now; pf_finished=\"\\\"$pf_t\\\"\"; pf_outcome=$1; pf_journal; "
            f"echo {JOURNAL_MARK} {nonce}; cat {q}; }}"]


def apply_program(journal: Journal, decisions: Sequence[Decision], nonce: str) -> str:
    """The apply probe: each change marked "apply" in order, the journal around it; the first that fails ends the
    run (the rest stay "planned"). ``journal``: the entries' states already set for the changes not applied
    (already, refused, container); ``started`` and ``outcome`` are set here."""
    lines = _begin(journal, nonce, undo=False)
    lines.insert(2, "pf_now; pf_started=\"\\\"$pf_t\\\"\"; pf_outcome='\"applying\"'")
    for index, decision in enumerate(decisions):
        if decision.action != "apply":
            continue
        change = journal.entries[index].change
        body = [f"pf_write {shlex.quote(change.files[n].path)} {_b64(change.files[n].after)} || return $?"
                for n in decision.write]
        body += [_run(argv) for argv in change.commands]
        body += [f"pf_expect {shlex.quote(proc_path(k))} {shlex.quote(' '.join(v.split()))} || return $?"
                 for k, v in change.expect]
        if change.device_ip is not None:  # the address the device reads back
            ip = change.device_ip
            body.append(f"pf_ip {shlex.join([ip.tool, str(ip.device), ip.address, ip.netmask])} || return $?")
        state, intent, at, status = (slot(k, index) for k in ("state", "intent_at", "done_at", "exit_status"))
        lines += [
            f"pf_change_{index}() {{ :; " + "; ".join(body) + (";" if body else "") + " }",
            f"pf_now; {state}='\"intent\"'; {intent}=\"\\\"$pf_t\\\"\"; "
            f"pf_journal || {{ echo {JOURNAL_FAILED} {nonce}; exit 3; }}",
            step_line(nonce, index, "intent"),
            f"pf_change_{index} </dev/null >&2; pf_rc=$?; pf_now; {at}=\"\\\"$pf_t\\\"\"; {status}=$pf_rc",
            f"if [ \"$pf_rc\" = 0 ]; then {state}='\"done\"'; pf_journal; "
            f"pf_log {shlex.join(syslog_argv(journal, index, 'done'))}; "
            f"{step_line(nonce, index, 'done', status_var='0')}",
            f"else {state}='\"failed\"'; pf_journal; pf_log {shlex.join(syslog_argv(journal, index, 'failed'))}; "
            f"{step_line(nonce, index, 'failed', status_var='$pf_rc')}; pf_fin '\"failed\"'; exit 0; fi",
        ]
    lines.append("pf_fin '\"applied\"'")
    return "\n".join(lines) + "\n"


def undo_program(journal: Journal, steps: Sequence[UndoStep], nonce: str, outcome: str) -> str:
    """The undo probe: for each step (last change first) the files, values and rules put back; a step that fails
    does not stop the others. ``journal``: each stepped entry's ``undo`` record set (by, refused); its state and
    time are filled in here. ``outcome``: the journal's outcome when every step went through."""
    lines = _begin(journal, nonce, undo=True)
    lines.append("pf_bad=")
    for step in steps:
        index = step.index
        state, at = slot("undo_state", index), slot("undo_at", index)
        if not step.acts:
            lines.append(f"pf_now; {at}=\"\\\"$pf_t\\\"\"")
            continue
        body = [f"pf_write {shlex.quote(path)} {_b64(text)} || return $?" if text is not None
                else f"rm -f -- {shlex.quote(path)} || return $?" for path, text in step.files]
        body += [f"pf_put {shlex.quote(proc_path(k))} {shlex.quote(v)} || return $?" for k, v in step.values]
        body += [_run(argv) for argv in step.commands]
        done = "partly" if step.refused else "undone"
        what = f"undo by {journal.entries[index].change.summary}"
        lines += [
            f"pf_undo_{index}() {{ " + "; ".join(body) + "; }",
            f"pf_undo_{index} </dev/null >&2; pf_rc=$?; pf_now; {at}=\"\\\"$pf_t\\\"\"",
            f"if [ \"$pf_rc\" = 0 ]; then {state}='\"{done}\"'; "
            f"pf_log {shlex.join(syslog_argv(journal, index, done, what))}; "
            f"else {state}='\"failed\"'; pf_bad=1; "
            f"pf_log {shlex.join(syslog_argv(journal, index, 'undo-failed', what))}; fi",
            f"pf_journal; {step_line(nonce, index, 'undo', status_var='$pf_rc')}",
        ]
    partly = "partly undone" if outcome == "undone" else "rollback incomplete"
    final = partly if any(s.refused for s in steps) else outcome
    lines.append(f"if [ -n \"$pf_bad\" ]; then pf_fin {shlex.quote(_json(partly))}; "
                 f"else pf_fin {shlex.quote(_json(final))}; fi")
    return "\n".join(lines) + "\n"


def _json(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def journal_text(stdout: str, nonce: str) -> str | None:
    """The journal the script printed at its end, None when it did not get there.

    >>> journal_text("pf-step N 0 intent T\\npf-journal N\\n{}\\n", "N")
    '{}\\n'
    """
    mark = f"{JOURNAL_MARK} {nonce}\n"
    at = stdout.find(mark)
    return None if at < 0 else stdout[at + len(mark):]


__all__ = ["FRESH", "JOURNAL_FAILED", "STEP", "apply_program", "holder", "journal_text", "owner_line", "release",
           "undo_program", "wrap"]
