"""Sysctl changes: one file, ``/etc/sysctl.d/90-preflight.conf``, loaded alone with ``sysctl -p``.

What the plan reads besides the checks' facts is the host's sysctl configuration (:data:`STATE_PROBE`, read-only):
the file the change edits (its exact contents, for the diff and for the executor's compare-before-write) and every
other file that sets the same key, because at boot the lexicographically latest file wins (sysctl.d(5),
https://kernel.org/doc/man-pages/online/pages/man5/sysctl.d.5.html: files sorted by name whatever their
directory, a name in /etc hiding the same name in /run and /usr/lib; procps' ``sysctl --system`` reads
/etc/sysctl.conf last, https://gitlab.com/procps-ng/procps/commit/100959274c9d9fa66a570099d4d4a3d6c257fb1f).

The change loads its own file with ``sysctl -p FILE``, never ``sysctl --system``: that re-applies every file and
resets whatever was set at runtime since boot (docker's and kubelet's forwarding settings among them).

>>> change = setting_change("n1", ("sysctl.somaxconn",), "net.core.somaxconn", "128", "4096", None, {})
>>> change.commands, change.expect, change.undo.values
((('sysctl', '-p', '/etc/sysctl.d/90-preflight.conf'),), (('net.core.somaxconn', '4096'),), \
(('net.core.somaxconn', '128'),))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from preflight.fix.model import Change, FileEdit, Undo
from preflight.ports import SYSCTL_CONF

STATE_KEY = "fix.state"  # the facts key (EvalContext.other_facts) of STATE_PROBE's parsed output
# Where sysctl.d files live, highest preference first (a name found earlier hides the same name later), then
# procps' last file.
DIRS = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d")
LAST = "/etc/sysctl.conf"
HEADER = ("# Written by `preflight fix` (docs/fix.md): the values the preflight checks need, loaded with\n"
          "# `sysctl -p` of this file. `preflight fix --undo` restores what was here before.\n")

# Every sysctl configuration file: "== <bytes> <path>", its contents, a newline; "== ? <path>" when unreadable.
STATE_PROBE = ("for f in " + " ".join(f"{d}/*.conf" for d in DIRS) + f" {LAST}; do [ -f \"$f\" ] || continue; "
               "if [ -r \"$f\" ]; then printf '== %s %s\\n' \"$(wc -c < \"$f\" | tr -d ' ')\" \"$f\"; cat \"$f\"; "
               "echo; else printf '== ? %s\\n' \"$f\"; fi; done")


def parse_state(text: str) -> dict[str, Any]:
    """:data:`STATE_PROBE`'s output -> ``{"files": {path: contents, or None when unreadable}}``; a section whose
    length does not match is left out and named in ``"unread"``. Never raises.

    >>> parse_state("== 22 /etc/sysctl.d/90-preflight.conf\\nnet.core.somaxconn=1\\n\\n\\n== ? /etc/sysctl.conf\\n")
    {'files': {'/etc/sysctl.d/90-preflight.conf': 'net.core.somaxconn=1\\n\\n', '/etc/sysctl.conf': None}, \
'unread': []}
    >>> parse_state("junk\\n== 999 /etc/x.conf\\nshort\\n")
    {'files': {}, 'unread': ['/etc/x.conf']}
    """
    data = text.encode("utf-8", "surrogateescape")
    files: dict[str, str | None] = {}
    unread: list[str] = []
    pos = 0
    while True:
        if not data.startswith(b"== ", pos):  # junk before a header: skip to the next one
            nxt = data.find(b"\n== ", pos)
            if nxt == -1:
                break
            pos = nxt + 1
        end = data.find(b"\n", pos)
        if end == -1:
            break
        size, _, path = data[pos + 3:end].decode("utf-8", "replace").partition(" ")
        n = int(size) if size.isdecimal() else -1
        body = data[end + 1:end + 1 + n] if n >= 0 else b""
        if size == "?":
            files[path] = None
            pos = end + 1
        elif n >= 0 and len(body) == n and data[end + 1 + n:end + 2 + n] == b"\n":
            files[path] = body.decode("utf-8", "replace")
            pos = end + 2 + n
        else:
            unread.append(path)
            pos = end + 1
    return {"files": files, "unread": unread}


def settings(text: str) -> dict[str, str]:
    """A sysctl.d file's assignments, key -> value (the last one of a key wins), keys with dots; comments (# ;),
    blank lines and the ignore-failure dash dropped.

    >>> settings("# c\\n; c\\nnet/core/somaxconn = 4096\\n-net.ipv4.tcp_max_syn_backlog=8192\\nbad line\\n")
    {'net.core.somaxconn': '4096', 'net.ipv4.tcp_max_syn_backlog': '8192'}
    """
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().lstrip("-").strip()
        if "/" in key and key.find("/") < (key.find(".") if "." in key else len(key)):
            key = key.translate(str.maketrans("/.", "./"))
        found[key] = " ".join(value.split())
    return found


def boot_order(paths: list[str]) -> list[str]:
    """The files as they are applied at boot: by name, the first directory of :data:`DIRS` winning a name, then
    /etc/sysctl.conf.

    >>> boot_order(["/usr/lib/sysctl.d/99-x.conf", "/etc/sysctl.conf", "/etc/sysctl.d/99-x.conf",
    ...             "/etc/sysctl.d/90-preflight.conf", "/usr/lib/sysctl.d/50-default.conf"])
    ['/usr/lib/sysctl.d/50-default.conf', '/etc/sysctl.d/90-preflight.conf', '/etc/sysctl.d/99-x.conf', \
'/etc/sysctl.conf']
    """
    chosen: dict[str, tuple[int, str]] = {}
    for path in paths:
        folder, name = str(PurePosixPath(path).parent), PurePosixPath(path).name
        if folder in DIRS and (name not in chosen or DIRS.index(folder) < chosen[name][0]):
            chosen[name] = (DIRS.index(folder), path)
    return [chosen[name][1] for name in sorted(chosen)] + ([LAST] if LAST in paths else [])


def overrides(files: Mapping[str, str | None], key: str, ours: str = SYSCTL_CONF) -> list[tuple[str, str]]:
    """The files applied after ``ours`` at boot that set ``key``, with their values (the last one wins).

    >>> overrides({"/etc/sysctl.d/99-net.conf": "net.core.somaxconn = 128\\n", "/etc/sysctl.conf": "",
    ...            "/usr/lib/sysctl.d/50-default.conf": "net.core.somaxconn = 64\\n"}, "net.core.somaxconn")
    [('/etc/sysctl.d/99-net.conf', '128')]
    """
    order = boot_order([*files, ours] if ours not in files else list(files))
    later = order[order.index(ours) + 1:]
    return [(path, settings(text)[key]) for path in later
            if (text := files.get(path)) is not None and key in settings(text)]


def edit_conf(before: str | None, key: str, value: str) -> str:
    """Our file with ``key = value``: its line replaced where it has one (every other line kept), else added.

    >>> edit_conf("# mine\\nnet.core.somaxconn = 128\\nvm.x = 1\\n", "net.core.somaxconn", "4096")
    '# mine\\nnet.core.somaxconn = 4096\\nvm.x = 1\\n'
    >>> edit_conf(None, "net.core.somaxconn", "4096").endswith("net.core.somaxconn = 4096\\n")
    True
    """
    lines = (before if before is not None else HEADER).splitlines()
    out, done = [], False
    for line in lines:
        if (set_here := settings(line)) and key in set_here:
            if not done:
                out.append(f"{key} = {value}")
                done = True
            continue
        out.append(line)
    if not done:
        out.append(f"{key} = {value}")
    return "\n".join(out) + "\n"


def remedy_value(remedy: str | None, key: str) -> str | None:
    """The value a check's remedy sets ``key`` to with ``sysctl -w`` at its start; None for any other remedy (a
    container's, a setting in hosts.yaml): the checks decide the value, fix never invents one.

    >>> remedy_value("sysctl -w net.core.somaxconn=4096 && echo ... >> /etc/sysctl.d/90-preflight.conf",
    ...              "net.core.somaxconn")
    '4096'
    >>> remedy_value("this host is a container (docker): ... sysctl -w net.core.somaxconn=4096",
    ...              "net.core.somaxconn") is None
    True
    """
    match = re.match(rf"sysctl -w {re.escape(key)}=(\S+)(?:\s|$)", remedy or "")
    return match[1] if match else None


def setting_change(host: str, fixes: tuple[str, ...], key: str, current: str | None, value: str,
                   conf: str | None, files: Mapping[str, str | None], summary: str = "",
                   kind: str = "sysctl") -> Change:
    """``key = value`` written into our file (``conf``: its contents now, None: absent) and loaded; undone by
    putting the file back and ``current`` back in force. ``files``: every sysctl file's contents (the notes name
    a later file that sets ``key`` at boot)."""
    after = edit_conf(conf, key, value)
    notes = tuple(f"{path} sets {key} = {theirs} and is read after {SYSCTL_CONF} at boot: the value set now holds "
                  f"until the next boot, then {theirs} is back (change it in {path})"
                  for path, theirs in overrides(files, key) if theirs != value)
    return Change(
        host, fixes, kind, summary or f"{key} {current if current is not None else '(unread)'} -> {value}",
        files=(FileEdit(SYSCTL_CONF, conf, after),),
        commands=(("sysctl", "-p", SYSCTL_CONF),),
        verify=fixes, expect=((key, value),),
        undo=Undo(files=((SYSCTL_CONF, conf),), values=((key, current),) if current is not None else ()),
        notes=notes)


def state_files(state: Mapping[str, Any] | None) -> dict[str, str | None] | None:
    """The files of a host's :data:`STATE_KEY` facts; None when the probe's output could not be read."""
    files = (state or {}).get("files")
    if not isinstance(files, Mapping):
        return None
    return {str(k): (v if isinstance(v, str) else None) for k, v in files.items()}
