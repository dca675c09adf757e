"""What ``--checks`` / ``--skip`` select: the checks to run (with the families they need, transitively), the
finding ids to report and those to leave out; an unknown item is a usage error with a did-you-mean.

>>> chosen = select_checks(["sysctl"], [])
>>> [c.ident for c in chosen.checks], chosen.only
(['versions', 'sysctl'], ('sysctl',))
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from preflight.checks import all_checks
from preflight.checks.base import Check, finding_ids


class UsageError(Exception):
    """Bad input found before anything ran (exit_codes.USAGE); the message names what and where."""


@dataclass(frozen=True)
class Selection:
    """The checks to run, the finding-id prefixes to report (empty: report all) and the finding ids to drop."""

    checks: list[Check]
    only: tuple[str, ...]
    dropped: tuple[str, ...] = ()  # `--skip ID` of a finding id: its check runs, these findings are left out


def known_items(checks: Sequence[Check]) -> set[str]:
    """Everything ``--checks``/``--skip`` accept: families, check idents and every declared finding id.

    >>> {"sysctl", "gpu.devices", "sysctl.somaxconn", "hccn.link.up"} <= known_items(all_checks())
    True
    """
    return {item for c in checks for item in (c.family, c.ident, *finding_ids(c))}


def unknown_item(item: str, known: Sequence[str] | set[str]) -> str:
    """The usage error for an item no check knows, with the closest known one.

    >>> unknown_item("sysctl.somaxcon", {"sysctl.somaxconn", "sysctl.port_range", "os"})
    "unknown check 'sysctl.somaxcon' (did you mean sysctl.somaxconn?)"
    >>> unknown_item("zzz", {"os"})
    "unknown check 'zzz' (see `preflight list-checks`)"
    """
    close = difflib.get_close_matches(item, sorted(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else "see `preflight list-checks`"
    return f"unknown check {item!r} ({hint})"


def _asks_for(check: Check, item: str) -> bool:
    """Whether ``--checks item`` runs ``check``: a family runs its default checks only (``--checks npu`` is not the
    slow torch_npu import); a check named by its ident or one of its finding ids runs whatever its default.

    >>> from preflight.checks import all_checks
    >>> torch = next(c for c in all_checks() if c.ident == "npu.torch")
    >>> _asks_for(torch, "npu"), _asks_for(torch, "npu.torch")
    (False, True)
    """
    return check.selected_by(item) and (check.by_default or item != check.family or item == check.ident)


def select_checks(selected: Sequence[str], skipped: Sequence[str], scope: str | None = None) -> Selection:
    """``--checks`` / ``--skip`` items -> the checks to run, with every family they need (transitively), what to
    report and what to leave out. ``scope="node"``: only checks judged from one host.

    An item is a family, a check ident or a finding id (what the checks declare, ``finding_ids``); anything
    else is a UsageError with a did-you-mean, so a typo never silently selects nothing. ``--skip`` of a
    family or check ident drops the check; of a finding id, only that id's findings (the check still runs).

    >>> [c.ident for c in select_checks(["sysctl.somaxconn"], ["versions"]).checks]  # sysctl needs versions
    ['versions', 'sysctl']
    >>> chosen = select_checks(["sysctl"], ["sysctl.somaxconn"])
    >>> [c.ident for c in chosen.checks], chosen.dropped
    (['versions', 'sysctl'], ('sysctl.somaxconn',))
    """
    everything = all_checks()
    known = known_items(everything)
    unknown = [s for s in dict.fromkeys([*selected, *skipped]) if s not in known]
    if unknown:
        raise UsageError("; ".join(unknown_item(s, known) for s in unknown))
    pool = [c for c in everything if scope is None or c.scope == scope]
    if scope is not None:
        elsewhere = [s for s in selected if not any(c.selected_by(s) for c in pool)]
        if elsewhere:
            raise UsageError(f"{', '.join(elsewhere)}: not a node check (it needs the other hosts: "
                             "use `preflight run`)")
    whole = {c.family for c in everything} | {c.ident for c in everything}
    skip_checks = [s for s in skipped if s in whole]
    dropped = tuple(s for s in skipped if s not in whole)
    wanted = {c.ident for c in pool if not any(c.selected_by(s) for s in skip_checks)
              and ((not selected and c.by_default) or any(_asks_for(c, s) for s in selected))}
    if not wanted:
        asked = f"--checks {','.join(selected)} " if selected else ""
        raise UsageError(f"{asked}--skip {','.join(skipped)}: no check left to run")
    by_ident = {c.ident: c for c in pool}
    needed: set[str] = set()
    todo = [n for c in pool if c.ident in wanted for n in c.needs]
    while todo:  # transitive: what a needed check needs is gathered too
        ident = todo.pop()
        if ident in by_ident and ident not in needed | wanted:
            needed.add(ident)
            todo.extend(by_ident[ident].needs)
    chosen = [c for c in pool if c.ident in wanted | needed]
    # Families gathered only because another check needs their facts are not reported.
    only = tuple(selected) or (tuple(sorted(wanted)) if needed - wanted else ())
    return Selection(chosen, only, dropped)
