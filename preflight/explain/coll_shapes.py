"""Collectives that do not match across ranks, read from NCCL's own INFO lines (issue 38, round 25).

With ``NCCL_DEBUG=INFO`` (subsystem COLL) NCCL prints every collective a rank enqueues: ``Broadcast: opCount 0
sendbuff 0x.. recvbuff 0x.. count 25503912 datatype 6 op 0 root 0 comm 0x.. [nranks=8] stream 0x..``. The n-th
collective of a communicator (its ``opCount``) must be the same call on every rank; when the ranks' lines for one
``opCount`` disagree on the count, the datatype, the reduction or the root, the ranks called different collectives
(or one with different arguments) and the job hangs or corrupts data there.

>>> line = "h:1:1 [{r}] NCCL INFO Broadcast: opCount 0 sendbuff 0x1 recvbuff 0x1 count {c} datatype {d} op 0 root 0 " \\
...        "comm 0x{r} [nranks=2] stream 0x2"
>>> collective_mismatch([[line.format(r=0, c=25503912, d=6)], [line.format(r=1, c=53, d=4)]])[2]
'Broadcast opCount 0: count 25503912 datatype 6 op 0 root 0 on one rank, count 53 datatype 4 op 0 root 0 on another'
>>> collective_mismatch([[line.format(r=0, c=25503912, d=6)], [line.format(r=1, c=53, d=4)]])[:2]
(1, 1)
>>> collective_mismatch([[line.format(r=0, c=53, d=4)], [line.format(r=1, c=53, d=4)]]) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_COLL = re.compile(r"\bNCCL INFO (\w+): opCount ([0-9a-fA-F]+) sendbuff \S+ recvbuff \S+ count (\d+) datatype (\d+) "
                   r"op (\d+) root (-?\d+) comm \S+ \[nranks=(\d+)\]")


def collective_mismatch(files: Sequence[Sequence[str]]) -> tuple[int, int, str] | None:
    """``(file index, 1-based line, what differs)`` of the first collective whose ranks disagree, or None."""
    seen: dict[tuple[str, str, str], tuple[str, str, str, str]] = {}
    for index, lines in enumerate(files):
        for number, line in enumerate(lines, start=1):
            m = _COLL.search(line)
            if m is None:
                continue
            name, op_count, count, dtype, op, root, nranks = m.groups()
            key, call = (name, op_count, nranks), (count, dtype, op, root)
            first = seen.setdefault(key, call)
            if first != call:
                one = "count {} datatype {} op {} root {}".format(*first)
                return index, number, (f"{name} opCount {op_count}: {one} on one rank, count {count} datatype "
                                       f"{dtype} op {op} root {root} on another")
    return None
