"""net.reachability's listener, run on a node as ``python -S -c SOURCE tag window port:expected ...``.

With ``PREFLIGHT_GO`` set (the engine's go file, see preflight.engine.overlaps) it first waits, bounded by the
window, for that file to exist and removes it: started early, it binds only once the gather's own ``ports`` probes
have ended. Binds every port (IPv6 dual-stack, else IPv4), prints ``{"ready": true}`` once they are bound (or failed
to bind), accepts until each port saw its expected connections or the window ends, then prints one JSON line (also
when stopped by SIGTERM). Low-level modules only (_socket, _signal: no enum, json or threading): ~9 ms.
"""
import _signal
import _socket
import errno
import os
import select
import sys
import time

from preflight.node.json_writer import js  # JSON_WRITER: this line is replaced by js() itself when shipped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
class Stop(Exception):
    pass
def stop(signum, frame):  # type: (int, Any) -> None
    _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
    raise Stop()
_signal.signal(_signal.SIGTERM, stop)
window = float(sys.argv[2])
go = os.environ.get("PREFLIGHT_GO")
if go:
    give_up = time.time() + window
    watch_out = select.poll()
    watch_out.register(1, 0)  # our stdout: an error once the run has ended (nobody reads it)
    while not os.path.exists(go) and time.time() < give_up:
        if watch_out.poll(10):
            sys.exit(0)
    try:
        os.unlink(go)
    except OSError:
        pass
ports = [tuple(int(x) for x in item.split(":")) for item in sys.argv[3:]]
out, socks = {"listeners": []}, {}  # type: dict[str, Any], dict[Any, dict[str, Any]]
for port, expected in ports:
    entry = {"port": port, "expected": expected, "bound": False, "peers": []}  # type: dict[str, Any]
    out["listeners"].append(entry)
    try:
        try:
            s = _socket.socket(_socket.AF_INET6, _socket.SOCK_STREAM)  # type: Any
            s.setsockopt(_socket.IPPROTO_IPV6, _socket.IPV6_V6ONLY, 0)
            s.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            s.bind(("::", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise
            s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            s.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", port))
        s.listen(128)
        entry["bound"] = True
        socks[s] = entry
    except OSError as exc:
        entry["error"] = errno.errorcode.get(exc.errno or 0, str(exc))
print(js({"ready": True}), flush=True)
deadline = time.time() + window
# Our stdout is the SSH session: once nobody reads it (the run ended or was interrupted), poll reports
# an error on it and the listener ends at once instead of holding the port for the rest of its window.
poller = select.poll()
poller.register(1, 0)
by_fd = {}  # type: dict[int, Any]
for s, entry in socks.items():
    if entry["expected"] > 0:
        poller.register(s.fileno(), select.POLLIN)
        by_fd[s.fileno()] = s
try:
    while by_fd and time.time() < deadline:
        events = poller.poll(int(1000 * min(0.2, max(0.0, deadline - time.time()))))
        if any(fd == 1 for fd, _ in events):
            out["orphaned"] = True
            break
        for fd, _ in events:
            s = by_fd.get(fd)
            if s is None:
                continue
            conn, addr = s._accept()
            os.close(conn)
            peer = addr[0][7:] if addr[0].startswith("::ffff:") else addr[0]
            socks[s]["peers"].append(peer)
            if len(socks[s]["peers"]) >= socks[s]["expected"]:
                poller.unregister(fd)
                del by_fd[fd]
except Stop:
    out["stopped"] = True
for s in socks:
    s.close()
print(js(out))
