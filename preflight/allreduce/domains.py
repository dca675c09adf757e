"""Switches (or racks) for ``--bisect`` (pure): hosts in switch order, halves cut at a switch boundary, and what a
group spans.

A host's switch is hosts.yaml's ``switch:`` (``labels``: host name -> switch). Without labels every function here
gives what ``--bisect`` did before switches were known: the hosts in their order, the cut in the middle.

>>> labels = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "b3": "B"}
>>> order(["b1", "a1", "b2", "a2", "b3"], labels)
['b1', 'b2', 'b3', 'a1', 'a2']
>>> cut(["a1", "a2", "b1", "b2", "b3"], labels), cut(["a1", "a2", "b1", "b2", "b3"], {})
(2, 2)
>>> spanned(["a1", "b1", "b2"], labels), spanned(["a1", "b1"], {})
(('A', 'B'), ())
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def order(hosts: Sequence[str], labels: Mapping[str, str]) -> list[str]:
    """The hosts grouped by switch, switches in the order they first appear, hosts in their order within one.

    >>> order(["x", "y"], {})
    ['x', 'y']
    """
    if not labels:
        return list(hosts)
    first: dict[str, int] = {}
    for host in hosts:
        first.setdefault(labels.get(host, ""), len(first))
    return sorted(hosts, key=lambda h: first[labels.get(h, "")])  # sorted() is stable: position within a switch


def cut(hosts: Sequence[str], labels: Mapping[str, str]) -> int:
    """Where a group is split: at the switch boundary nearest its middle (the earlier of two as near), or in the
    middle when it lies within one switch (the second half the larger when the count is odd).

    >>> cut(["a1", "b1", "b2", "b3", "b4", "b5"], {"a1": "A", "b1": "B", "b2": "B", "b3": "B", "b4": "B",
    ...     "b5": "B"})
    1
    >>> cut(["a", "b", "c", "d", "e"], {})
    2
    """
    bounds = [i for i in range(1, len(hosts)) if labels.get(hosts[i], "") != labels.get(hosts[i - 1], "")]
    if not labels or not bounds:
        return len(hosts) // 2
    return min(bounds, key=lambda i: (abs(2 * i - len(hosts)), i))


def spanned(hosts: Sequence[str], labels: Mapping[str, str]) -> tuple[str, ...]:
    """The switches of a group, in order; ``()`` without labels."""
    if not labels:
        return ()
    return tuple(dict.fromkeys(labels.get(h, "?") for h in hosts))


def describe(hosts: Sequence[str], labels: Mapping[str, str]) -> str:
    """``switch A`` or ``switches A, B`` for a report line; ``""`` without labels.

    >>> describe(["a1", "b1"], {"a1": "A", "b1": "B"}), describe(["a1"], {"a1": "A"}), describe(["a1"], {})
    ('switches A, B', 'switch A', '')
    """
    names = spanned(hosts, labels)
    if not names:
        return ""
    return ("switch " if len(names) == 1 else "switches ") + ", ".join(names)


def path(side: Sequence[str], other: Sequence[str], labels: Mapping[str, str]) -> str:
    """The inter-switch path between two halves of a group, as the report names it.

    >>> path(["a1", "a2"], ["b1"], {"a1": "A", "a2": "A", "b1": "B"})
    'A <-> B'
    """
    return f"{', '.join(spanned(side, labels))} <-> {', '.join(spanned(other, labels))}"
