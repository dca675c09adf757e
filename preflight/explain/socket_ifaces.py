"""NCCL's socket interfaces as its INFO lines list them, and whether it picked a virtual one (round 10).

NCCL prints the interfaces its bootstrap and its socket transport use, ``Bootstrap : Using [0]ens5:172.31.0.137<0>
[1]veth75fa783:fe80::14ad...<0>`` and ``NET/Socket : Using [0]...``. Without ``NCCL_SOCKET_IFNAME`` it takes every
interface that is up but ``docker*`` and ``lo`` (NCCL's environment-variable guide); on a host that runs containers
that includes Docker's user bridges (``br-<12 hex>``), their ``veth*`` ends and the overlay networks of Kubernetes
(``cni0``, ``flannel.1``, ``cali*``, ``vxlan*``, ``tunl0``...), whose addresses exist on that host alone. A peer
told such an address cannot reach it, and the job fails with a generic system error or hangs in the connection
setup; the fix is ``NCCL_SOCKET_IFNAME`` naming the interface the hosts share. NCCL's troubleshooting guide says
the same of Docker (use the host network or pick the interface).

So when a failing log names no cause and NCCL listed a virtual interface (or a ``docker*`` / ``lo`` one, which
only a user's ``NCCL_SOCKET_IFNAME`` selects), that listing is the evidence: ``wrong-interface``.

>>> virtual_choice(["h1:1:1 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.137<0> "
...                 "[1]veth75fa783:fe80::1%veth75fa783<0>"])
(0, 'veth75fa783')
>>> virtual_choice(["INFO NET/Socket : Using", "[0]bond0:192.168.1.161<0>", "[1]br-05ab815fa14e:172.19.0.1<0>"])
(2, 'br-05ab815fa14e')
>>> virtual_choice(["h1:1:1 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.2<0> [1]ib0:10.1.0.2<0>"]) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# ``[index]name:address<port>`` as NCCL's ncclSocketGetAddrs listing prints each interface
_IFACE = re.compile(r"\[(?P<i>\d+)\](?P<name>[A-Za-z][\w.@-]{0,31}):(?P<addr>[0-9A-Fa-f:.%\w-]+)<\d+>")
_LISTING = re.compile(r"\b(?:Bootstrap|NET/Socket)\s*:\s*Using\b")
_VIRTUAL = re.compile(r"^(?:veth\w*|br-[0-9a-f]{12}|docker\d*|virbr\d+|cni\d*|flannel\.\d+|cali\w+|tunl\d+|vxlan\w*|"
                      r"weave|kube-\w+|lxcbr\d+|lxdbr\d+|podman\d+|cilium_\w+|genev_sys_\w+|lo)$")
FOLLOW_LINES = 40  # a listing an issue pasted one interface per line: its entries follow within this many lines


def virtual_choice(lines: Sequence[str]) -> tuple[int, str] | None:
    """``(0-based line index, interface)`` of the first virtual interface an NCCL ``Using`` listing names, or None."""
    listing_at = -FOLLOW_LINES - 1
    for index, line in enumerate(lines):
        if _LISTING.search(line):
            listing_at = index
        if index - listing_at > FOLLOW_LINES:
            continue
        for found in _IFACE.finditer(line):
            if _VIRTUAL.match(found["name"]):
                return index, found["name"]
    return None


def stalls_across_hosts(lines: Sequence[str]) -> bool:
    """Whether the log stops in NCCL's setup (its last non-blank line is one of NCCL's own) after NCCL connected
    ranks through the network (a ``via NET/...`` channel): a hang between hosts, where the socket's address matters.
    A log that stops after NCCL's interface listing alone says nothing (a healthy job prints it, too).

    >>> stalls_across_hosts(["h1:1:9 [0] NCCL INFO Channel 00 : 1[1e0] -> 0[1e0] [receive] via NET/Socket/0", ""])
    True
    >>> stalls_across_hosts(["h1:1:9 [0] NCCL INFO NET/Socket : Using [0]docker0:172.17.0.1<0>"])
    False
    >>> stalls_across_hosts(["h1:1:9 [0] NCCL INFO Channel 00 : 1 -> 0 via NET/Socket/0", "epoch 1 loss 0.3"])
    False
    """
    last = next((line for line in reversed(lines) if line.strip()), "")
    return bool(_NCCL_LINE.search(last)) and any(_VIA_NET.search(line) for line in lines)


_NCCL_LINE = re.compile(r"\bNCCL (?:INFO|WARN)\b")
_VIA_NET = re.compile(r"\bvia NET/\w+")
