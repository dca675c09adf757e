"""net.reachability's connector, run on a node as ``python -S -c SOURCE timeout retry name=address:port ...``.

Every target at once with non-blocking connects and one select loop (no threads). "refused" is retried
every 0.2 s for ``retry`` seconds (the listener may still be starting); a name is resolved with getaddrinfo
and its first address is used. "timeout" means the connect call itself got no answer: it is measured with
the monotonic clock from the connect to the select (interpreter start-up and the process around it do not
count), the socket is looked at once more before a timeout is declared (a process that was not scheduled
while the answer came is not a dropped packet), and a connect that timed out is tried again with twice the
timeout, bounded by the connector's deadline (``retry`` + 3 x ``timeout`` after it started), before it is
reported. Prints one JSON line: the result per target (``tries``: connects made).
"""
import _socket
import errno
import select
import sys
import time

from preflight.node.json_writer import js  # JSON_WRITER: this line is replaced by js() itself when shipped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
timeout, retry = float(sys.argv[1]), float(sys.argv[2])
clock = time.monotonic
started = clock()
deadline = started + retry + 3 * timeout  # refused retries, then a connect and its retry at twice the timeout
NAMES = {errno.EHOSTUNREACH: "unreachable", errno.ENETUNREACH: "unreachable", errno.ECONNREFUSED: "refused",
         errno.ETIMEDOUT: "timeout"}
jobs = []  # type: list[dict[str, Any]]
for spec in sys.argv[3:]:
    name, _, rest = spec.partition("=")
    address, _, port = rest.rpartition(":")
    jobs.append({"name": name, "address": address.strip("[]"), "port": int(port), "sock": None, "at": 0.0,
                 "wait": timeout, "again": 0.0, "tries": 0, "result": None})
def finish(job, result):  # type: (dict[str, Any], str) -> None
    if job["sock"] is not None:
        job["sock"].close()
        job["sock"] = None
    now = clock()
    if result == "refused" and now - started <= retry:
        job["again"] = now + 0.2
        return
    if result == "timeout" and job["wait"] <= timeout and deadline - now >= timeout:
        # Once more, longer (a SYN lost under load is resent after 1 s, then 3 s): only the second is reported.
        job["wait"] = max(timeout + 0.001, min(2 * timeout, deadline - now))
        job["again"] = now
        return
    job["result"] = result
    job["ms"] = round((now - started) * 1000, 1)
def resolve(address, port):  # type: (str, int) -> tuple[int, int, int, Any]
    # A literal address needs no getaddrinfo (glibc's costs ~8 ms even for one: NSS and gai.conf).
    for family, sockaddr in ((_socket.AF_INET, (address, port)), (_socket.AF_INET6, (address, port, 0, 0))):  # type: int, Any
        try:
            _socket.inet_pton(family, address)
            return family, _socket.SOCK_STREAM, 0, sockaddr
        except OSError:
            pass
    family, kind, proto, _, sockaddr = _socket.getaddrinfo(address, port, 0, _socket.SOCK_STREAM)[0]  # type: ignore[assignment]
    return family, kind, proto, sockaddr
def attempt(job):  # type: (dict[str, Any]) -> None
    try:
        family, kind, proto, sockaddr = resolve(job["address"], job["port"])
        job["sock"] = _socket.socket(family, kind, proto)
        job["sock"].setblocking(False)
        job["tries"] += 1
        job["at"] = clock()
        code = job["sock"].connect_ex(sockaddr)
    except OSError as exc:
        finish(job, errno.errorcode.get(exc.errno or 0, str(exc)))
        return
    if code not in (0, errno.EINPROGRESS, errno.EAGAIN):
        finish(job, NAMES.get(code, errno.errorcode.get(code, str(code))))
    elif code == 0:
        finish(job, "ok")
def answered(job):  # type: (dict[str, Any]) -> None
    code = job["sock"].getsockopt(_socket.SOL_SOCKET, _socket.SO_ERROR)
    finish(job, "ok" if code == 0 else NAMES.get(code, errno.errorcode.get(code, str(code))))
while True:
    open_jobs = [j for j in jobs if j["result"] is None]
    if not open_jobs:
        break
    now = clock()
    for job in open_jobs:
        if job["sock"] is None and now >= job["again"]:
            attempt(job)
    live = [j for j in open_jobs if j["sock"] is not None]
    now = clock()
    waits = [j["at"] + j["wait"] - now for j in live] + [j["again"] - now for j in open_jobs if j["sock"] is None]
    _, writable, _ = select.select(  # type: ignore[assignment]
        [], [j["sock"] for j in live], [], max(0.0, min(waits + [0.2])))
    now = clock()
    for job in live:
        if job["sock"] in writable:
            answered(job)
        elif now >= job["at"] + job["wait"]:
            # Its time is up by our clock; the kernel may still have the answer (we were not scheduled).
            late = select.select([], [job["sock"]], [], 0)[1]
            if late:
                answered(job)
            else:
                finish(job, "timeout")
print(js({"results": [{"target": j["name"], "address": j["address"], "port": j["port"], "result": j["result"],
                       "ms": j["ms"], "tries": j["tries"]} for j in jobs]}))
