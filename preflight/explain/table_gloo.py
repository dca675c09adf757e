"""Gloo's TCP transport errors as a code table, keyed by normalized template (``table_templates``).

Gloo (torch's CPU backend, and the ``gloo`` process group DeepSpeed / torchrun use for barriers and object
collectives) reports through ``GLOO_ENFORCE`` / ``signalException``: ``[.../gloo/transport/tcp/pair.cc:598]
Connection closed by peer [10.0.0.2]:5612``. Its wording changed in 2023 (``connect [addr]: Connection refused``
became ``connect: Connection refused, remote=[addr]``) and 2025 (the preamble size check); both are kept.

Source: pytorch/gloo's ``gloo/transport/tcp`` (``pair.cc``, ``device.cc``, ``socket.cc``, ``error.cc``,
``helpers.h``, ``unbound_buffer.cc``), ``gloo/rendezvous``, ``gloo/allgather.cc`` and ``gloo/transport/uv``,
read at main (70dc360, 2026-04-21) and through its history back to 2017.

>>> [d.code.name for d in TABLE.decode("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:724] "
...     "connect [127.0.1.1]:3210: Connection refused")]
['connect: loopback address', 'connect: refused']
>>> [d.code.root_cause for d in TABLE.decode("[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] "
...     "Connection closed by peer [10.1.0.8]:64775")]
[False]
"""

from __future__ import annotations

from preflight.explain.table_templates import ASCEND_MODULE_LINE, Row, build

SOURCE = "https://github.com/pytorch/gloo/tree/70dc360272dfc57e3617184c78ff9b06f8cd4757/gloo/transport/tcp"
VERSION = "gloo main 70dc360 (2026-04-21), wordings since 2017"

_IFNAME = ("Set GLOO_SOCKET_IFNAME to the interface that connects the nodes (the same name on every node, "
           "`ip -br addr`), and make each node's host name resolve to that interface's address.")
_PEER = ("The other rank's process went away or stopped answering: read that rank's log (the address names its "
         "host) for the earliest error.")
_IFNAME_CHECKS = ("net.interface", "net.hostname", "net.reachability")

ROWS: tuple[Row, ...] = (
    Row("connect: loopback address", "hostname-loopback",
        "A peer advertised a loopback address (127.0.1.1 / 127.0.0.1): its host name resolves to loopback "
        "(Debian's /etc/hosts default, or a container's), so the others connect to themselves.",
        "Map each node's host name to its real address in /etc/hosts (remove the 127.0.1.1 line) or set "
        "GLOO_SOCKET_IFNAME to the training interface.",
        ("connect [127.0.1.1]:{}", "connect [127.0.0.1]:{}", "Connection refused, remote=[127.0.1.1]",
         "Connection refused, remote=[127.0.0.1]"),
        checks=("net.hostname", "net.interface")),
    Row("connect: refused", "wrong-interface",
        "Gloo's full-mesh connect to a peer was refused: the address the peer advertised is not where it "
        "listens (another interface, a NAT / container address), or the peer already exited.", _IFNAME,
        ("connect: Connection refused, remote=[{addr}]:{addr}", "SO_ERROR: Connection refused, remote=[{addr}]",
         "connect [{addr}]:{addr}: Connection refused"), checks=_IFNAME_CHECKS),
    Row("connect: timed out", "firewall",
        "Gloo could not connect to a peer before the timeout: a firewall drops the connection, or the advertised "
        "address is not reachable from this node.",
        "Allow TCP between the nodes (gloo listens on ephemeral ports) and set GLOO_SOCKET_IFNAME to an "
        "interface the nodes reach each other on.",
        ("timed out connecting: {}", "Connect timeout [{addr}]", "connect: Connection timed out, remote=[{addr}]",
         "connect [{addr}]:{addr}: Connection timed out"),
        checks=("firewall.rules", "net.interface", "net.reachability")),
    Row("connect: no route to host", "firewall",
        "The peer's address is unreachable (a firewall rejecting with icmp-host-prohibited, or no route).",
        "Allow TCP between the nodes and check the routes to the advertised address.",
        ("connect: No route to host, remote=[{addr}]", "connect [{addr}]:{addr}: No route to host")),
    Row("connect: network unreachable", "wrong-interface",
        "No route to the peer's network: it advertised an address of an interface this node cannot reach.",
        _IFNAME, ("connect: Network is unreachable, remote=[{addr}]",
                  "connect [{addr}]:{addr}: Network is unreachable"),
        checks=_IFNAME_CHECKS),
    Row("connect: to self", "hostname-loopback",
        "Two ranks advertised the same address and port, so a rank would connect to itself (host names that "
        "resolve to the same loopback address on several nodes).",
        "Make every node's host name resolve to its own address, or set GLOO_SOCKET_IFNAME.",
        ("Cannot connect to self", "cannot connect to self"), checks=("net.hostname", "net.interface")),
    Row("no address for interface", "wrong-interface",
        "Gloo found no address for the interface in GLOO_SOCKET_IFNAME (no such interface on this node, or it "
        "has no address of that family); without `ifa != nullptr` it may be a host name instead.", _IFNAME,
        ("ifa != nullptr. Unable to find address for: {}", "Unable to find address for: {}"),
        checks=_IFNAME_CHECKS),
    Row("host name not resolved", "name-resolution",
        "Gloo could not resolve the host name it binds to (the node's own name, or the one it was given).",
        "Make the node's host name resolve on that node (/etc/hosts or DNS), or set GLOO_SOCKET_IFNAME.",
        ("rp != nullptr. Unable to find address for: {}",), checks=("net.hostname", "net.master_resolution")),
    Row("host name not bindable", "name-resolution",
        "The node's host name resolves to addresses none of which is on this node, so Gloo cannot bind to it.",
        "Make the host name resolve to this node's own address (/etc/hosts) or set GLOO_SOCKET_IFNAME.",
        ("Unable to find address for {}; bind(2) for {} failed with: {}",)),
    Row("unknown address family", "address-family", "An address of a family Gloo cannot use.",
        "Use IPv4 (or IPv6) consistently: GLOO_SOCKET_IFNAME on an interface with an address of that family.",
        ("Unknown address family: {}", "Unknown ai_family: {}")),
    Row("address families differ", "address-family",
        "Two ranks' addresses are of different families (device.cc's check when a pair connects: 2 is IPv4, 10 "
        "IPv6): one rank bound an IPv4 address and its peer an IPv6 one - a host name or MASTER_ADDR (0.0.0.0, "
        "a name with an AAAA record) that resolves to another family on another node.",
        "Use one family on every node: an IPv4 (or IPv6) literal as MASTER_ADDR, GLOO_SOCKET_IFNAME on an "
        "interface with an address of that family, host names that resolve to it.",
        ("ss1.ss_family == ss2.ss_family. {} vs {}",)),
    Row("connection closed by peer", "fabric",
        "The peer closed the connection: its process crashed or exited (the address names its host).", _PEER,
        ("Connection closed by peer [{addr}]",), root_cause=False),
    Row("read error", "fabric",
        "Reading from a peer failed (`Connection reset by peer`: its process died).", _PEER,
        ("Read error [{addr}]:{addr}: {}",), root_cause=False),
    Row("read / write timeout", "fabric",
        "A read or write to a peer did not complete within the timeout: the peer hangs or the network stalls.",
        _PEER, ("Read timeout [{addr}]", "Write timeout [{addr}]"), root_cause=False),
    Row("socket closed", "fabric", "The connection to a peer was closed while this rank still used it.", _PEER,
        ("Socket unexpectedly closed [{addr}]", "Socket closed [{addr}]", "Pair is not connected ({} <--> {})"),
        root_cause=False),
    Row("short read / write", "fabric", "A peer's connection ended in the middle of a message.", _PEER,
        ("short read: got {} bytes while expecting to read {} bytes, remote={}",
         "short write: wrote {} bytes while expecting to write {} bytes, remote={}"), root_cause=False),
    Row("operation timed out", "fabric",
        "A send or receive did not complete within the process-group timeout: the peer never entered the "
        "collective (it crashed, hangs or runs other code) or the network stalls.",
        "Find the rank that is not in the collective (its log has the first error); test the links with "
        "`preflight run --checks allreduce`.",
        ("Timed out waiting {}ms for recv operation to complete", "Timed out waiting {}ms for send operation to "
         "complete", "Application timeout caused pair closure"), root_cause=False),
    Row("collective size mismatch", "collective-mismatch",
        "A rank received more bytes than it posted: the ranks are in different collectives, or the same one "
        "with tensors of different sizes.",
        "Make every rank call the same collectives in the same order with tensors of the same shape; "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL names the mismatch.",
        ("Received data size doesn't match expected size. Is there a distributed collective mismatch in your "
         "code?", "op.preamble.length <= op.nbytes. {} vs {}"), checks=()),
    Row("rendezvous store wait timeout", "store-timeout",
        "Gloo's rendezvous waited for keys other ranks never wrote (they did not start or failed first).",
        "Read the other ranks' logs for the first error; check every rank reaches the store.",
        ("Wait timeout for key(s): {}",), root_cause=False),
    Row("context not fully connected", "fabric",
        "Gloo's context is missing connections between ranks (an earlier connect failed).", _IFNAME,
        ("Backing context not fully connected", "missing connection between rank {} (this process) and rank {}"),
        root_cause=False, checks=_IFNAME_CHECKS),
)

TABLE = build("gloo", SOURCE, VERSION, ROWS, foreign=ASCEND_MODULE_LINE)
