"""``NCCL_IB_HCA``: which RDMA device ports NCCL's IB transport may use.

The value is a comma-separated list of ``device[:port]`` entries; ``^`` in front excludes what the list
matches, ``=`` (after any ``^``) makes the names exact (else each is a prefix: ``mlx5_1`` also matches
``mlx5_10``). An entry without ``:port`` covers every port of its device. (NCCL's environment variable
documentation: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-hca)

>>> ports = [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1), ("mlx5_10", 1)]
>>> selected_ports("=mlx5_0:1,mlx5_1:1", ports)
[('mlx5_0', 1), ('mlx5_1', 1)]
>>> selected_ports("mlx5_1", ports), selected_ports("^=mlx5_0:2", ports)
([('mlx5_1', 1), ('mlx5_10', 1)], [('mlx5_0', 1), ('mlx5_1', 1), ('mlx5_10', 1)])
"""

from __future__ import annotations

from collections.abc import Sequence

Port = tuple[str, int]  # (device, port number)


def selected_ports(spec: str, ports: Sequence[Port]) -> list[Port]:
    """The ``ports`` an ``NCCL_IB_HCA`` value lets NCCL use, in the given order (junk entries match nothing).

    >>> selected_ports("mlx5_0:x,", [("mlx5_0", 1)]), selected_ports("", [("mlx5_0", 1)])
    ([], [])
    """
    text = spec.strip()
    exclude = text.startswith("^")
    text = text[1:] if exclude else text
    exact = text.startswith("=")
    text = text[1:] if exact else text
    entries: list[tuple[str, int | None]] = []
    for item in text.split(","):
        name, sep, port = item.strip().partition(":")
        if not name.strip() or (sep and not port.strip().isdecimal()):
            continue
        entries.append((name.strip(), int(port) if sep else None))

    def matches(device: str, number: int) -> bool:
        return any((device == name if exact else device.startswith(name)) and port in (None, number)
                   for name, port in entries)

    if not entries:
        return []
    return [(device, number) for device, number in ports if matches(device, number) != exclude]
