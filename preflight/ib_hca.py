"""``NCCL_IB_HCA``: which RDMA device ports NCCL's IB transport may use, read as NCCL reads it.

``^`` in front excludes what the list matches, ``=`` (after any ``^``) makes the names exact (else each is a
prefix: ``mlx5_1`` also matches ``mlx5_10``); then comma-separated ``device[:port]`` entries, an entry without a
port (or with an empty one) covering every port of its device. NCCL's own reading, which this follows where its
documentation is silent (https://github.com/NVIDIA/nccl/blob/5067397c2676d5aed50042fc39e5c8ee96eb0027/src/misc/utils.cc#L189-L241,
used by src/transport/net_ib/init.cc#L318-L370; the documentation:
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-hca):

- nothing is stripped: ``mlx5_0, mlx5_1`` names ``mlx5_0`` and `` mlx5_1`` (which matches no device);
- empty entries and entries with no name (``,``, ``:1``) are dropped, and a list left empty matches every port:
  all of them are used (``NCCL_IB_HCA=``), or none with ``^``;
- a port is read with C's ``atoi``: ``1x`` is port 1, ``x`` is port 0, which no device has (ports start at 1);
  fields after a second ``:`` (rail, plane) do not select.

>>> ports = [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1), ("mlx5_10", 1)]
>>> selected_ports("=mlx5_0:1,mlx5_1:1", ports)
[('mlx5_0', 1), ('mlx5_1', 1)]
>>> selected_ports("mlx5_1", ports), selected_ports("^=mlx5_0:2", ports)
([('mlx5_1', 1), ('mlx5_10', 1)], [('mlx5_0', 1), ('mlx5_1', 1), ('mlx5_10', 1)])
>>> parse("^=mlx5_1").devices(["mlx5_0", "mlx5_1", "mlx5_10"])
['mlx5_0', 'mlx5_10']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

Port = tuple[str, int]  # (device, port number)


@dataclass(frozen=True)
class Entry:
    """One ``device[:port]`` entry: ``name`` as written, ``port`` None for every port, ``text`` the entry."""

    name: str
    port: int | None
    text: str

    def names(self, device: str, exact: bool) -> bool:
        return device == self.name if exact else device.startswith(self.name)


@dataclass(frozen=True)
class HcaFilter:
    exclude: bool  # ^
    exact: bool  # =
    entries: tuple[Entry, ...]

    def matches(self, device: str, port: int | None = None) -> bool:
        """Whether NCCL may use this port of the device (``None``: any port, the device's name alone)."""
        listed = not self.entries or any(e.names(device, self.exact) and (None in (port, e.port) or e.port == port)
                                         for e in self.entries)
        return listed != self.exclude

    def ports(self, ports: Sequence[Port]) -> list[Port]:
        return [(device, number) for device, number in ports if self.matches(device, number)]

    def devices(self, names: Sequence[str]) -> list[str]:
        """The devices whose names the filter selects, ports aside, in the given order."""
        return [name for name in names if self.matches(name)]


def parse(spec: str) -> HcaFilter:
    """An ``NCCL_IB_HCA`` value as NCCL parses it (never fails: junk matches what NCCL's reading matches).

    >>> parse("^=mlx5_0:1,,mlx5_1:,:2,mlx5_2:x")
    HcaFilter(exclude=True, exact=True, entries=(Entry(name='mlx5_0', port=1, text='mlx5_0:1'), \
Entry(name='mlx5_1', port=None, text='mlx5_1:'), Entry(name='mlx5_2', port=0, text='mlx5_2:x')))
    """
    exclude = spec.startswith("^")
    spec = spec[1:] if exclude else spec
    exact = spec.startswith("=")
    spec = spec[1:] if exact else spec
    entries = []
    for item in spec.split(","):
        name, _, rest = item.partition(":")
        if name:
            port = rest.partition(":")[0]
            number = _atoi(port) if port else -1
            entries.append(Entry(name, None if number == -1 else number, item))
    return HcaFilter(exclude, exact, tuple(entries))


def _atoi(text: str) -> int:
    """C's ``atoi``: leading blanks, a sign and digits; anything else reads as 0.

    >>> _atoi("1"), _atoi(" 2x"), _atoi("x"), _atoi("-1")
    (1, 2, 0, -1)
    """
    found = re.match(r"[ \t\n\v\f\r]*([+-]?\d+)", text)
    return int(found.group(1)) if found else 0


def selected_ports(spec: str, ports: Sequence[Port]) -> list[Port]:
    """The ``ports`` an ``NCCL_IB_HCA`` value lets NCCL use, in the given order.

    >>> selected_ports("mlx5_0:x,", [("mlx5_0", 1)]), selected_ports("mlx5_0:", [("mlx5_0", 1)])
    ([], [('mlx5_0', 1)])
    >>> selected_ports("", [("mlx5_0", 1)]), selected_ports("^", [("mlx5_0", 1)])
    ([('mlx5_0', 1)], [])
    """
    return parse(spec).ports(ports)
