"""What a host is now, read just before applying or undoing (read-only probes), and from it, per change, what
to do: apply it, nothing (it is in force already), refuse it (the host is not as planned), or print the
container's remedy (/proc/sys read-only). For ``--undo`` (and a rollback): per file, value and rule, put it back
or leave it (changed again since the fix). Pure but for the probes' text.

>>> from preflight.fix.model import Change, FileEdit, Undo
>>> edit = FileEdit("/etc/sysctl.d/90-preflight.conf", None, "net.core.somaxconn = 4096\\n")
>>> change = Change("n1", ("sysctl.somaxconn",), "sysctl", "s", files=(edit,), expect=(("net.core.somaxconn", "4096"),),
...                 undo=Undo(files=((edit.path, None),), values=(("net.core.somaxconn", "128"),)))
>>> now = Inspection(files={edit.path: None}, values={"net.core.somaxconn": ("128", True)})
>>> [(d.action, d.write) for d in apply_decisions([change], now)]
[('apply', (0,))]
>>> done = Inspection(files={edit.path: sha(edit.after)}, values={"net.core.somaxconn": ("4096", True)})
>>> [d.action for d in apply_decisions([change], done)]
['already']
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.ascend.hccn_tool import parse_ip
from preflight.ascend.npu_smi import parse_info
from preflight.batch import Probe, ProbeOutput
from preflight.container import COMMAND as CONTAINER_COMMAND
from preflight.container import container_sysctl_remedy, parse_container
from preflight.fix import device_ip
from preflight.fix.firewall_commands import comment, find_handles, handle_lookup, resolve_undo
from preflight.fix.journal import Journal, host_path
from preflight.fix.model import Argv, Change

LOCK = "/run/lock/preflight-fix.lock"
IPTABLES = ("iptables", "ip6tables", "iptables-legacy", "ip6tables-legacy", "iptables-nft", "ip6tables-nft")
ABSENT = "absent"
UNREADABLE = "unreadable"


def sha(text: str | None) -> str | None:
    """sha256 of a file's contents as ``sha256sum`` prints it (None: no file).

    >>> sha("")
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def proc_path(key: str) -> str:
    """/proc/sys path of a sysctl key.

    >>> proc_path("net.core.somaxconn")
    '/proc/sys/net/core/somaxconn'
    """
    return "/proc/sys/" + key.replace(".", "/")


def same_value(a: str | None, b: str | None) -> bool:
    """Two sysctl values alike, whitespace aside ("32768\\t60999" is "32768 60999").

    >>> same_value("32768\\t60999\\n", "32768 60999"), same_value(None, "1")
    (True, False)
    """
    return a is not None and b is not None and a.split() == b.split()


def check_argv(undo: Argv) -> Argv | None:
    """``iptables -C`` of an ``iptables -D`` undo (exit 0: the rule is there); None for any other command.

    >>> check_argv(("iptables", "-D", "INPUT", "-p", "tcp", "-j", "ACCEPT"))
    ('iptables', '-C', 'INPUT', '-p', 'tcp', '-j', 'ACCEPT')
    """
    if len(undo) > 2 and undo[0] in IPTABLES and undo[1] == "-D":
        return (undo[0], "-C", *undo[2:])
    return None


@dataclass(frozen=True)
class Inspection:
    """The host now: file path -> sha256 (None absent, ``UNREADABLE``), sysctl key -> (value or None, writable),
    rule checks (argv -> present), nft listings (lookup argv -> text), the container facts, the user id, who holds
    the lock, and the run's journal on the host (undo: its text, None when there is none)."""

    files: Mapping[str, str | None] = field(default_factory=dict)
    values: Mapping[str, tuple[str | None, bool]] = field(default_factory=dict)
    present: Mapping[Argv, bool] = field(default_factory=dict)
    listings: Mapping[Argv, str] = field(default_factory=dict)
    container: Mapping[str, Any] = field(default_factory=dict)
    uid: str = "0"
    lock: str = "ours"  # "ours", or "busy <the holder's line>"
    journal: str | None = None
    problems: tuple[str, ...] = ()  # probes that could not run (their output said why)
    device_ips: Mapping[tuple[str, int], tuple[str, str] | None | str] = field(default_factory=dict)
    held: Mapping[int, str] | None = None  # device -> the processes holding it (npu-smi info); None: untold


@dataclass(frozen=True)
class Asked:
    """The probes of one inspection and what each one reads (probe key -> file path, sysctl key or rule argv)."""

    probes: tuple[Probe, ...]
    files: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)
    rules: Mapping[str, Argv] = field(default_factory=dict)
    devices: Mapping[str, tuple[str, int]] = field(default_factory=dict)  # probe key -> (hccn_tool, device)


def probes(changes: Sequence[Change], run: str, journal: bool = False) -> Asked:
    """The read-only probes for ``changes`` (every file, value and rule they touch), the lock's holder, the user id,
    the container facts; ``journal``: the run's journal on the host too (undo).

    >>> from preflight.fix.model import Change, Undo
    >>> rule = Undo(commands=(("iptables", "-D", "INPUT", "-j", "X"),))
    >>> asked = probes([Change("h", (), "firewall", "s", undo=rule)], "r")
    >>> [p.key for p in asked.probes], asked.rules
    (['lock', 'id', 'container', 'rule:0'], {'rule:0': ('iptables', '-C', 'INPUT', '-j', 'X')})
    """
    found = [Probe("lock", _lock_check(run), 10), Probe("id", "id -u", 5), Probe("container", CONTAINER_COMMAND, 5)]
    files: dict[str, str] = {}
    paths = sorted({e.path for c in changes for e in c.files} | {p for c in changes for p, _ in c.undo.files})
    for path in paths:
        q = shlex.quote(path)
        files[key := f"file:{len(files)}"] = path
        found.append(Probe(key, f"if [ ! -e {q} ]; then echo {ABSENT}; elif [ -r {q} ]; then "
                                f"sha256sum < {q}; else echo {UNREADABLE}; fi", 10))
    values: dict[str, str] = {}
    for name in sorted({k for c in changes for k, _ in c.expect} | {k for c in changes for k, _ in c.undo.values}):
        q = shlex.quote(proc_path(name))
        values[key := f"value:{len(values)}"] = name
        found.append(Probe(key, f"if [ -w {q} ]; then echo rw; else echo ro; fi; cat {q}", 5))
    rules: dict[str, Argv] = {}
    for change in changes:
        for undo in change.undo.commands:
            for argv in (check_argv(undo), handle_lookup(undo)):
                if argv is not None and argv not in rules.values():
                    rules[key := f"rule:{len(rules)}"] = argv
                    found.append(Probe(key, shlex.join(argv) + " 2>&1", 10))
    devices: dict[str, tuple[str, int]] = {}
    for change in changes:
        ip = change.device_ip
        if ip is not None and (ip.tool, ip.device) not in devices.values():
            devices[key := f"device:{len(devices)}"] = (ip.tool, ip.device)
            found.append(Probe(key, shlex.join([ip.tool, "-i", str(ip.device), "-ip", "-g"]), 15))
    smi = next((c.device_ip.smi for c in changes if c.device_ip is not None), None)
    if smi is not None:
        found.append(Probe("npu-smi", shlex.join([smi, "info"]), 30))
    if journal:
        found.append(Probe("journal", f"cat {shlex.quote(host_path(run))} 2>/dev/null || echo {ABSENT}", 10))
    return Asked(tuple(found), files, values, rules, devices)


def _lock_check(run: str) -> str:
    """Wait up to 5 s for the lock file to name ``run`` (our holder writes it once it holds the lock): "ours", or
    "busy" and the line of whoever holds it."""
    want = shlex.quote(f"run={run} ")
    busy = shlex.quote(f"/run/lock/preflight-fix.{run}.busy")  # scripts.busy_file: our holder found it taken
    return (f'pf_i=0; while :; do pf_o=; IFS= read -r pf_o < {LOCK} 2>/dev/null; case "$pf_o" in {want}*) '
            f'echo ours; exit 0;; esac; if [ -e {busy} ]; then IFS= read -r pf_o < {busy}; rm -f {busy}; break; fi; '
            'pf_i=$((pf_i + 1)); [ "$pf_i" -ge 50 ] && break; sleep 0.1; done; echo "busy $pf_o"')


def parse(asked: Asked, outputs: Mapping[str, ProbeOutput]) -> Inspection:
    """The probes' outputs -> an Inspection; a probe that did not run is a problem, never a guess.

    >>> asked = probes([], "r", journal=True)
    >>> now = parse(asked, {"lock": ProbeOutput("ours\\n"), "id": ProbeOutput("0\\n"), "container": ProbeOutput(""),
    ...                     "journal": ProbeOutput("absent\\n")})
    >>> now.lock, now.uid, now.journal, now.problems
    ('ours', '0', None, ())
    """
    files: dict[str, str | None] = {}
    values: dict[str, tuple[str | None, bool]] = {}
    present: dict[Argv, bool] = {}
    listings: dict[Argv, str] = {}
    problems: list[str] = []
    lock, uid, journal = "busy (no answer)", "", None
    container: Mapping[str, Any] = {}
    ips: dict[tuple[str, int], tuple[str, str] | None | str] = {}
    held: Mapping[int, str] | None = None
    for probe in asked.probes:
        out = outputs.get(probe.key, ProbeOutput("", "no output", None))
        text = out.stdout
        if out.exit_status is None:
            problems.append(f"{probe.key}: {out.stderr.strip() or 'did not finish'}")
            continue
        if probe.key == "lock":
            lock = text.strip() or "busy (no answer)"
        elif probe.key == "id":
            uid = text.strip() if out.ok else ""
            if not out.ok:
                problems.append(f"id: {out.stderr.strip() or f'exit status {out.exit_status}'}")
        elif probe.key == "container":
            container = parse_container(text)
        elif probe.key == "journal":
            journal = None if text.strip() == ABSENT else text
        elif probe.key in asked.devices:
            ips[asked.devices[probe.key]] = device_ip.live_ip(parse_ip(out))
        elif probe.key == "npu-smi":
            held = device_ip.held_devices(parse_info(text)) if out.ok else None
        elif probe.key in asked.files:
            word = (text.split() or [UNREADABLE])[0]
            files[asked.files[probe.key]] = None if word == ABSENT else word
        elif probe.key in asked.values:
            lines = text.splitlines()
            value = "\n".join(lines[1:]) if out.ok and len(lines) > 1 else None
            values[asked.values[probe.key]] = (value, bool(lines) and lines[0] == "rw")
        elif probe.key in asked.rules:
            argv = asked.rules[probe.key]
            if argv[:2] == ("nft", "-a"):
                listings[argv] = text if out.ok else ""
            else:
                present[argv] = out.ok
    return Inspection(files, values, present, listings, container, uid, lock, journal, tuple(problems), ips, held)


# --- apply ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    """What to do with one change: ``action`` apply | already | refused | container; ``write``: the indexes of its
    files to write (those not already as planned); ``note``: why (refused), or the remedy (container)."""

    action: str
    write: tuple[int, ...] = ()
    note: str = ""


def rules_present(change: Change, now: Inspection, run: str) -> bool | None:
    """Whether every rule ``change`` adds is there (its undo finds each one); None when that cannot be told."""
    if not change.undo.commands:
        return None
    for undo in change.undo.commands:
        check, lookup = check_argv(undo), handle_lookup(undo)
        if check is not None and check in now.present:
            if not now.present[check]:
                return False
        elif lookup is not None and lookup in now.listings:
            if not find_handles(now.listings[lookup], comment(run)):
                return False
        else:
            return None
    return True


def apply_decisions(changes: Sequence[Change], now: Inspection, run: str = "") -> list[Decision]:
    """Per change, in order: apply (the files not yet as planned), already (files as planned and values in force,
    or every rule there), refused (a file neither as planned before nor after: the host changed since the plan),
    container (a value to set in a read-only /proc/sys)."""
    virtual: dict[str, str | None] = dict(now.files)
    decisions = []
    for index, change in enumerate(changes):
        if change.device_ip is not None:
            ip = change.device_ip
            action, note = device_ip.decide(change, now.device_ips.get((ip.tool, ip.device), "not read"), now.held)
            decisions.append(Decision(action, note=note))
            continue
        stuck = [(k, v) for k, v in change.expect
                 if not now.values.get(k, (None, True))[1] and not same_value(now.values.get(k, (None, False))[0], v)]
        if stuck:  # before the files: a later change's edit builds on this one's, as planned
            remedies = [container_sysctl_remedy(now.container or {"engine": "a container"}, key, value,
                                                f"sysctl -w {key}={value}") for key, value in stuck]
            note = (f"{', '.join(proc_path(k) for k, _ in stuck)} is read-only here (a container?): nothing was "
                    "changed; " + " | ".join(remedies))
            decisions.append(Decision("container", note=note))
            for edit in change.files:
                virtual[edit.path] = sha(edit.after)
            continue
        write: list[int] = []
        conflicts: list[str] = []
        for number, edit in enumerate(change.files):
            current = virtual.get(edit.path, UNREADABLE)
            later = [sha(e.after) for c in changes[index + 1:] for e in c.files if e.path == edit.path]
            if current == sha(edit.after) or current in later:
                continue
            if current == sha(edit.before):
                write.append(number)
            else:
                state = "unreadable" if current == UNREADABLE else "absent" if current is None else "different"
                conflicts.append(f"{edit.path} is not as planned ({state} now): the host changed since the plan")
        in_force = all(same_value(now.values.get(k, (None, False))[0], v) for k, v in change.expect)
        rules = rules_present(change, now, run)
        if conflicts:
            decisions.append(Decision("refused", note="; ".join(conflicts)))
            continue
        if not write and ((change.expect and in_force) or (not change.expect and rules is True)
                          or (not change.expect and not change.commands and change.files)):
            decisions.append(Decision("already"))
            continue
        for number in write:  # an edit skipped as already made (or made by a later one) leaves the file as it is
            virtual[change.files[number].path] = sha(change.files[number].after)
        decisions.append(Decision("apply", tuple(write)))
    return decisions


# --- undo -----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UndoStep:
    """What undo does for one journal entry: files to put back (path -> contents, None: remove), values to write
    back, commands to run, and what it leaves alone and why."""

    index: int
    files: tuple[tuple[str, str | None], ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    commands: tuple[Argv, ...] = ()
    refused: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()  # already as before (nothing to put back): said, not refused

    @property
    def acts(self) -> bool:
        return bool(self.files or self.values or self.commands)


def undo_steps(journal: Journal, now: Inspection, only: Sequence[int] | None = None) -> list[UndoStep]:
    """Per change that may be in force (done, or cut short), last first: what to put back; a file or value that
    is no longer what the fix made it is refused (changed again since), one already as before is left as it is.
    ``only``: those entries (a rollback of one failed change)."""
    virtual: dict[str, str | None] = dict(now.files)
    values = {k: v for k, (v, _) in now.values.items()}
    steps = []
    for index in reversed(range(len(journal.entries))):
        entry = journal.entries[index]
        if not entry.in_force or (only is not None and index not in only):
            continue
        change = entry.change
        if change.device_ip is not None:
            steps.append(_device_undo(index, change, now))
            continue
        after = {e.path: e.after for e in change.files}
        files, refused, gone = [], [], []
        for path, contents in change.undo.files:
            current = virtual.get(path, UNREADABLE)
            if current == sha(contents):
                gone.append(f"{path}: already as before")
            elif path in after and current == sha(after[path]):
                files.append((path, contents))
                virtual[path] = sha(contents)
            else:
                refused.append(f"{path}: changed since the fix (not what it wrote): left as it is")
        fixed = dict(change.expect)
        restore = []
        for key, previous in change.undo.values:
            current = values.get(key)
            if same_value(current, previous):
                gone.append(f"{key}: already {previous}")
            elif key in fixed and same_value(current, fixed[key]):
                restore.append((key, previous))
                values[key] = previous
            else:
                refused.append(f"{key} is {' '.join((current or '(unread)').split())} now, not the fixed "
                               f"{fixed.get(key, '?')}: changed since the fix, left as it is")
        commands, missing = resolve_undo(change.undo.commands, now.listings, journal.run)
        kept = []
        for argv in commands:
            check = check_argv(argv)
            if check is not None and now.present.get(check) is False:
                gone.append(f"rule gone already: {shlex.join(check[2:])}")
            else:
                kept.append(argv)
        gone += missing
        steps.append(UndoStep(index, tuple(files), tuple(restore), tuple(kept), tuple(refused), tuple(gone)))
    return steps


def _device_undo(index: int, change: Change, now: Inspection) -> UndoStep:
    """A device-IP change's undo: its previous address set again, or why not (device_ip.undo_decision)."""
    ip = change.device_ip
    assert ip is not None
    action, why = device_ip.undo_decision(change, now.device_ips.get((ip.tool, ip.device), "not read"))
    if action == "restore":
        return UndoStep(index, commands=change.undo.commands)
    return UndoStep(index, gone=(why,)) if action == "gone" else UndoStep(index, refused=(why,))
