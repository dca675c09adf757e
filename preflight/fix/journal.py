"""The journal of ``preflight fix``: per run and host, what was changed and what it was before, so that a host
that dies mid-apply still says what was and was not applied, and ``fix --undo`` can put it back.

One JSON document per run and host, written on the host (``/var/lib/preflight/journal/<run>.json``) by the
script that makes the changes: before each change (its ``state`` "intent") and after it ("done", "failed"),
always whole and by rename, so it is never half written. The controller keeps a copy
(``$XDG_STATE_HOME/preflight/fix/<run>/<host>.json``): the host's own text when the script came back, else what
the controller saw of it, marked ``"complete": false`` (the host's is then the true one). Each change also
leaves one syslog line on the host (``logger -t preflight-fix``).

The controller renders the document; the host fills in only what it alone knows (each change's state, times and
exit status) from shell variables (:func:`shell_writer`), so the host never builds JSON from its own text.

A change's ``state``: ``planned`` (not reached), ``intent`` (started and not finished: the host or the
connection died in it), ``done``, ``already`` (in force before: nothing written), ``failed`` (its command failed
or its value is not in force; what it wrote was put back), ``refused`` (the host is not as planned: ``note``
says how), ``container`` (/proc/sys is read-only: the container's remedy is printed instead). ``undo`` (null
until ``--undo`` or a rollback): ``{"by": "undo" | "rollback", "state": "undone" | "partly" | "refused" |
"failed", "at": TIME, "refused": [what was left alone and why]}``.

>>> from preflight.fix.model import Change, FileEdit, Undo
>>> change = Change("n1", ("sysctl.somaxconn",), "sysctl", "net.core.somaxconn 128 -> 4096",
...                 files=(FileEdit("/etc/sysctl.d/90-preflight.conf", None, "net.core.somaxconn = 4096\\n"),),
...                 expect=(("net.core.somaxconn", "4096"),), undo=Undo(values=(("net.core.somaxconn", "128"),)))
>>> journal = new_journal("r1", "n1", [change], controller="ctl", user="root", policy="1", created="t0")
>>> journal.entries[0].state, journal.entries[0].previous()
('planned', {'files': {'/etc/sysctl.d/90-preflight.conf': None}, 'values': {'net.core.somaxconn': '128'}})
>>> read_journal(journal.dumps()) == journal
True
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from preflight.fix.model import Change

FORMAT = "preflight.fix-journal/1"
HOST_DIR = "/var/lib/preflight/journal"
SYSLOG_TAG = "preflight-fix"
STATES = ("planned", "intent", "done", "already", "failed", "refused", "container")
UNDO_STATES = ("undone", "partly", "refused", "failed")
APPLIED = ("done", "intent", "failed")  # may be in force, wholly or in part (cut short, or failed halfway)
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+@-]{0,127}$")


def valid_run(run: str) -> bool:
    """Whether ``run`` can name a journal file (no slash, no space, nothing a shell would read).

    >>> valid_run("20260101T000000Z-ab12"), valid_run("../x"), valid_run("")
    (True, False, False)
    """
    return bool(_RUN_ID.match(run))


def host_path(run: str) -> str:
    """The journal's path on the host.

    >>> host_path("r1")
    '/var/lib/preflight/journal/r1.json'
    """
    if not valid_run(run):
        raise ValueError(f"not a run id: {run!r}")
    return f"{HOST_DIR}/{run}.json"


def controller_root(environ: Mapping[str, str]) -> Path:
    """Where the controller keeps its copies: ``$XDG_STATE_HOME/preflight/fix`` (default ``~/.local/state``).

    >>> str(controller_root({"XDG_STATE_HOME": "/s", "HOME": "/h"})), str(controller_root({"HOME": "/h"}))
    ('/s/preflight/fix', '/h/.local/state/preflight/fix')
    """
    state = environ.get("XDG_STATE_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"),
                                                          ".local", "state")
    return Path(state) / "preflight" / "fix"


@dataclass(frozen=True)
class UndoRecord:
    """What ``--undo`` (or a rollback) did to one change."""

    by: str  # "undo" | "rollback"
    state: str | None = None  # one of UNDO_STATES; None until the host says
    at: str | None = None
    refused: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"by": self.by, "state": self.state, "at": self.at, "refused": list(self.refused)}


@dataclass(frozen=True)
class Entry:
    """One change of the run on the host and what became of it."""

    change: Change
    state: str = "planned"
    intent_at: str | None = None
    done_at: str | None = None
    exit_status: int | None = None
    note: str = ""
    undo: UndoRecord | None = None

    def previous(self) -> dict[str, Any]:
        """What was there before the change: file contents (None: absent) and values in force."""
        files = {edit.path: edit.before for edit in self.change.files}
        return {"files": files, "values": dict(self.change.undo.values)}

    @property
    def in_force(self) -> bool:
        """Whether the change may still be in force: applied (or cut short) and not undone."""
        return self.state in APPLIED and (self.undo is None or self.undo.state not in ("undone",))

    def to_dict(self, index: int) -> dict[str, Any]:
        return {"index": index, "state": self.state, "intent_at": self.intent_at, "done_at": self.done_at,
                "exit_status": self.exit_status, "note": self.note, "previous": self.previous(),
                "change": self.change.to_dict(), "undo": None if self.undo is None else self.undo.to_dict()}


@dataclass(frozen=True)
class Journal:
    """One run's journal on one host."""

    run: str
    host: str
    entries: tuple[Entry, ...]
    controller: str = ""
    user: str = ""
    policy: str = ""
    created: str = ""  # when the plan was made
    started: str | None = None  # host time when the apply began
    finished: str | None = None
    outcome: str = "planned"  # planned, applying, applied, nothing to do, failed, rolled back, undone, partly undone
    complete: bool = True  # False: the controller's view of a host it lost (the host's journal is the true one)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "run": self.run, "host": self.host, "controller": self.controller,
                "user": self.user, "policy": self.policy, "created": self.created, "started": self.started,
                "finished": self.finished, "outcome": self.outcome, "complete": self.complete,
                "entries": [e.to_dict(i) for i, e in enumerate(self.entries)], **dict(self.extra)}

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=True) + "\n"

    def with_entry(self, index: int, **changes: Any) -> Journal:
        entries = list(self.entries)
        entries[index] = replace(entries[index], **changes)
        return replace(self, entries=tuple(entries))

    def counts(self) -> dict[str, int]:
        """state -> how many changes are in it.

        >>> from preflight.fix.model import Change
        >>> entries = (Entry(Change("h", (), "sysctl", "s"), "done"), Entry(Change("h", (), "sysctl", "t")))
        >>> j = Journal("r", "h", entries)
        >>> j.counts()
        {'done': 1, 'planned': 1}
        """
        found: dict[str, int] = {}
        for entry in self.entries:
            found[entry.state] = found.get(entry.state, 0) + 1
        return found


def new_journal(run: str, host: str, changes: Sequence[Change], *, controller: str, user: str, policy: str,
                created: str) -> Journal:
    """A journal with every change ``planned``."""
    return Journal(run, host, tuple(Entry(c) for c in changes), controller, user, policy, created)


def read_journal(text: str) -> Journal:
    """A journal back from its JSON; ValueError (never another exception) on anything else.

    >>> read_journal('{"format": "preflight.fix-plan/1"}')
    Traceback (most recent call last):
    ValueError: not a preflight fix journal (format 'preflight.fix-plan/1')
    >>> read_journal("garbage")
    Traceback (most recent call last):
    ValueError: not a preflight fix journal: not JSON
    """
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError("not a preflight fix journal: not JSON") from None
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise ValueError(f"not a preflight fix journal (format {found!r})")
    try:
        entries = tuple(_entry(e) for e in data["entries"])
        known = {"format", "run", "host", "controller", "user", "policy", "created", "started", "finished",
                 "outcome", "complete", "entries"}
        return Journal(_s(data["run"]), _s(data["host"]), entries, _s(data.get("controller", "")),
                       _s(data.get("user", "")), _s(data.get("policy", "")), _s(data.get("created", "")),
                       _opt(data.get("started")), _opt(data.get("finished")), _s(data.get("outcome", "")),
                       data.get("complete", True) is not False, {k: v for k, v in data.items() if k not in known})
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"not a readable preflight fix journal: {type(exc).__name__}: {exc}") from None


def _entry(data: Mapping[str, Any]) -> Entry:
    state = _s(data["state"])
    if state not in STATES:
        raise ValueError(f"unknown state {state!r}")
    undo = data.get("undo")
    record = None if undo is None else UndoRecord(_s(undo["by"]), _opt(undo.get("state")), _opt(undo.get("at")),
                                                  tuple(_s(r) for r in undo.get("refused", ())))
    status = data.get("exit_status")
    if status is not None and not isinstance(status, int):
        raise TypeError("exit_status is not a number")
    return Entry(Change.from_dict(data["change"]), state, _opt(data.get("intent_at")), _opt(data.get("done_at")),
                 status, _s(data.get("note", "")), record)


def _s(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _opt(value: Any) -> str | None:
    return None if value is None else _s(value)


# --- the journal written by the host's script ---------------------------------------------------------------------

def slot(kind: str, index: int | None = None) -> str:
    """The shell variable holding one value only the host knows, as a JSON literal (``"done"``, ``null``, ``0``).

    >>> slot("state", 2), slot("finished")
    ('pf_state_2', 'pf_finished')
    """
    return f"pf_{kind}" if index is None else f"pf_{kind}_{index}"


_MARK = "\x00"
_SLOTTED = re.compile(r'"\\u0000(pf_[a-z_0-9]+)\\u0000"')
ENTRY_SLOTS = ("state", "intent_at", "done_at", "exit_status")


def _literal(value: Any) -> str:
    return json.dumps(value)


def shell_writer(journal: Journal, path: str, undo: bool = False) -> str:
    """Shell that sets every slot variable to the journal's value now and defines ``pf_journal``: write the
    journal, with the slots' current values, to ``path`` (whole, by rename). ``undo``: the entries' undo state and
    time are slots too (``undo_state_N``, ``undo_at_N``), instead of their states and times.

    >>> import subprocess, tempfile
    >>> from preflight.fix.model import Change
    >>> j = Journal("r1", "n1", (Entry(Change("n1", ("x",), "sysctl", "it's 100% \\\\ $HOME")),))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     script = shell_writer(j, d + "/j.json") + "\\npf_state_0='\\"done\\"'; pf_exit_status_0=0; pf_journal\\n"
    ...     _ = subprocess.run(["sh", "-c", script], check=True)
    ...     back = read_journal(open(d + "/j.json").read())
    >>> back.entries[0].state, back.entries[0].exit_status, back.entries[0].change.summary
    ('done', 0, "it's 100% \\\\ $HOME")
    """
    data = journal.to_dict()
    values: dict[str, Any] = {}

    def mark(holder: dict[str, Any], key: str, name: str) -> None:
        values[name] = holder[key]
        holder[key] = f"{_MARK}{name}{_MARK}"

    for name in ("started", "finished", "outcome"):
        mark(data, name, slot(name))
    for index, entry in enumerate(data["entries"]):
        if undo:
            if entry["undo"] is not None:
                mark(entry["undo"], "state", slot("undo_state", index))
                mark(entry["undo"], "at", slot("undo_at", index))
        else:
            for name in ENTRY_SLOTS:
                mark(entry, name, slot(name, index))
    text = json.dumps(data, indent=1, ensure_ascii=True) + "\n"
    pieces = _SLOTTED.split(text)  # literal, slot, literal, slot, ..., literal
    words = [shlex.quote(p) if i % 2 == 0 else f'"${p}"' for i, p in enumerate(pieces)]
    target = shlex.quote(path)
    lines = [f"{name}={shlex.quote(_literal(value))}" for name, value in values.items()]
    lines.append(f"pf_journal() {{ printf '%s' {' '.join(words)} >{target}.tmp && mv -f {target}.tmp {target}; }}")
    return "\n".join(lines)


def syslog_argv(journal: Journal, index: int, state: str, what: str = "") -> tuple[str, ...]:
    """The ``logger`` command of one change's line (run id, host, which change, its state, the summary).

    >>> from preflight.fix.model import Change
    >>> j = Journal("r1", "n1", (Entry(Change("n1", ("sysctl.somaxconn",), "sysctl", "somaxconn 128 -> 4096")),))
    >>> syslog_argv(j, 0, "done")
    ('logger', '-t', 'preflight-fix', '--', 'run=r1 change=1/1 fixes=sysctl.somaxconn kind=sysctl state=done: \
somaxconn 128 -> 4096')
    """
    change = journal.entries[index].change
    text = (f"run={journal.run} change={index + 1}/{len(journal.entries)} fixes={','.join(change.fixes) or '-'} "
            f"kind={change.kind} state={state}: {what or change.summary}")
    return ("logger", "-t", SYSLOG_TAG, "--", " ".join(text.split())[:900])


# --- what the controller saw of a host it lost ---------------------------------------------------------------------

STEP = "pf-step"  # progress lines of the apply script: "pf-step <nonce> <index> <state> <time> [<exit status>]"


def step_line(nonce: str, index: int, state: str, time_var: str = "$pf_t", status_var: str = "") -> str:
    """The shell ``echo`` of one progress line (stdout of the apply script)."""
    status = f" {status_var}" if status_var else ""
    return f'echo "{STEP} {nonce} {index} {state} {time_var}{status}"'


def seen(journal: Journal, stdout: str, nonce: str) -> Journal:
    """The journal as the progress lines in ``stdout`` tell it (the controller's copy of a host whose script did not
    come back): ``complete`` False.

    >>> from preflight.fix.model import Change
    >>> j = Journal("r", "h", (Entry(Change("h", (), "sysctl", "a")), Entry(Change("h", (), "sysctl", "b"))))
    >>> lost = seen(j, "pf-step N 0 intent T1\\npf-step N 0 done T2 0\\npf-step N 1 intent T3\\n", "N")
    >>> [(e.state, e.intent_at, e.done_at) for e in lost.entries], lost.complete
    ([('done', 'T1', 'T2'), ('intent', 'T3', None)], False)
    """
    for line in stdout.splitlines():
        words = line.split()
        if len(words) < 5 or words[0] != STEP or words[1] != nonce or not words[2].isdigit():
            continue
        index, state, at = int(words[2]), words[3], words[4]
        if index >= len(journal.entries) or state not in STATES:
            continue
        if state == "intent":
            journal = journal.with_entry(index, state=state, intent_at=at)
        else:
            status = int(words[5]) if len(words) > 5 and words[5].lstrip("-").isdigit() else None
            journal = journal.with_entry(index, state=state, done_at=at, exit_status=status)
    return replace(journal, complete=False)


RUN_FILE = "run.json"  # in the run's folder on the controller: when it was applied, and the plan it applied
