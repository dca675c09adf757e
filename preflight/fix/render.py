"""The plan in the terminal: per host, the changes with their commands, each file as one unified diff, and the
remedies fix only prints; hosts whose plans read the same (their own names aside) in one block, ``sv[1-60]``.

Plain text (the command prints it as it is): the plan is a thing to read and to paste from.

>>> from preflight.fix.model import Change, FileEdit, HostPlan, Plan
>>> def host(name):
...     edit = FileEdit("/etc/sysctl.d/90-preflight.conf", None, "net.core.somaxconn = 4096\\n")
...     return HostPlan(name, (Change(name, ("sysctl.somaxconn",), "sysctl", "net.core.somaxconn 128 -> 4096",
...                                   files=(edit,), commands=(("sysctl", "-p", edit.path),)),))
>>> print(render_plan(Plan("r1", "2025-01-01T00:00:00+00:00", "1", (host("sv1"), host("sv2")))))
preflight fix plan r1 (policy 1): 2 hosts to change
<BLANKLINE>
== sv[1-2] (2 hosts)
  1. sysctl: net.core.somaxconn 128 -> 4096  [sysctl.somaxconn]
     $ sysctl -p /etc/sysctl.d/90-preflight.conf
  --- /dev/null
  +++ b/etc/sysctl.d/90-preflight.conf
  @@ -0,0 +1 @@
  +net.core.somaxconn = 4096
<BLANKLINE>
Nothing was changed. Apply with --apply (or save with --plan-out FILE, then --apply FILE).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from ClusterShell.NodeSet import NodeSet

from preflight.fix.model import FileEdit, HostPlan, Plan


def fold(names: Sequence[str]) -> str:
    """Host names as ClusterShell ranges (as ``preflight.render.summary.fold``, a renderer this layer does not
    import).

    >>> fold(["sv1", "sv2", "sv3", "gpu7"])
    'gpu7,sv[1-3]'
    """
    try:
        return str(NodeSet.fromlist(list(names)))
    except Exception:
        return ",".join(names)


def _count(n: int) -> str:
    return f"{n} host{'' if n == 1 else 's'}"


def groups(plan: Plan) -> list[list[HostPlan]]:
    """The hosts with something to show, those with the same plan together, in the plan's order."""
    found: dict[str, list[HostPlan]] = {}
    for host in plan.hosts:
        if host.changes or host.notes:
            found.setdefault(host.shape() if host.host else "", []).append(host)
    return list(found.values())


def merged_files(host: HostPlan) -> list[FileEdit]:
    """One edit per file: the file before the host's first change to it, after its last."""
    edits: dict[str, FileEdit] = {}
    for change in host.applicable:
        for edit in change.files:
            first = edits.get(edit.path)
            edits[edit.path] = FileEdit(edit.path, first.before if first else edit.before, edit.after)
    return list(edits.values())


def render_host(host: HostPlan) -> list[str]:
    """One block's lines below its header."""
    lines: list[str] = []
    for number, change in enumerate(host.applicable, 1):
        lines.append(f"  {number}. {change.kind}: {change.summary}  [{', '.join(change.fixes)}]")
        lines += [f"     $ {shlex.join(argv)}" for argv in change.commands]
        lines += [f"     note: {note}" for note in change.notes]
    for edit in merged_files(host):
        lines += ["  " + line for line in edit.diff().splitlines()]
    printed = [c for c in host.changes if not c.applicable]
    if printed:
        lines.append("  fix does not change these (docs/fix.md); by hand:")
        for change in printed:
            lines.append(f"  - {', '.join(change.fixes)}: {change.summary}")
            lines.append(f"      {change.remedy}")
    lines += [f"  note: {note}" for note in host.notes]
    return lines


def render_plan(plan: Plan, applying: bool = False) -> str:
    """The whole plan, header to footer (``applying``: no footer saying how to apply it)."""
    to_change = len(plan.applicable)
    hosts = [h for h in plan.hosts if h.host]
    quiet = sum(1 for h in hosts if not h.changes and not h.notes)
    head = f"preflight fix plan {plan.run_id} (policy {plan.policy}): {_count(to_change)} to change"
    head += f", {_count(quiet)} with nothing to do" if quiet else ""
    head += f" (--include {','.join(plan.include)})" if plan.include else ""
    lines = [head]
    for group in groups(plan):
        names = [h.host for h in group]
        title = f"{fold(names)} ({_count(len(names))})" if names[0] else "cluster-wide"
        body = render_host(group[0])
        if len(group) > 1:  # the first host's lines stand for every host of the block: its own name made neutral
            name = re.escape(names[0])
            body = [re.sub(rf"(?<![\w.-]){name}(?![\w-]|\.\w)", "<host>", line) for line in body]
        lines += ["", f"== {title}", *body]
    if applying:
        return "\n".join(lines)
    lines.append("")
    if to_change:
        lines.append("Nothing was changed. Apply with --apply (or save with --plan-out FILE, then --apply FILE).")
    else:
        lines.append("Nothing to apply." + (" The remedies above are for a person to run." if len(lines) > 2 else ""))
    return "\n".join(lines)
