"""ports: the job's ports reserved for it and free: HCCL's host ports on NPU nodes, the master port.

HCCL (root-info communicator init) binds ``HCCL_IF_BASE_PORT`` (default 60000) and the next ports:
16 in all up to CANN 8.0, 32 from CANN 8.2.RC1 on (32 advised where the release leaves it in doubt), or
the ports ``HCCL_HOST_SOCKET_PORT_RANGE`` lists (CANN 8.1.RC1 on; ``auto``: the OS picks); worked out in
``preflight.ports.hccl_host_ports``, shared with the firewall check. Ascend asks for them in
``net.ipv4.ip_local_reserved_ports``, because the default ephemeral range (32768-60999) contains them
and any outgoing connection may be given one as its source port first. A port outside
``net.ipv4.ip_local_port_range`` is never handed out that way: it needs no reservation. And a port some
other process already listens on (a stale job, a forgotten rendezvous store) makes ``init_process_group``
fail with "address already in use".

Listening sockets come from ``ss -ltnpH`` (process names need root), or from ``/proc/net/tcp`` and
``/proc/net/tcp6`` (state 0A) when ss is missing or fails.

Port lists and HCCL's port range are worked out in ``preflight.ports``, below the registry.

>>> from preflight.ports import format_port_list, merge_ranges, parse_port_list
>>> parse_port_list("60000-60015,61000")
[(60000, 60015), (61000, 61000)]
>>> format_port_list(merge_ranges([(61000, 61000), (60000, 60015), (60016, 60031)]))
'60000-60031,61000'
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any

from preflight.checks.base import *
from preflight.container import container_of
from preflight.ports import (
    HCCL_BASE_DEFAULT,
    HCCL_BASE_ENV,
    HCCL_BASE_RANGE,
    HCCL_RANGE_ENV,
    RESERVED_KEY,
    HcclPorts,
    Range,
    format_port_list,
    hccl_host_ports,
    hccl_ports,
    intersect,
    parse_port_list,
    reserve_remedy,
    uncovered,
)

# ss when it works (its output verbatim); else a "== why" line and the LISTEN rows of /proc/net/tcp{,6}.
# ``ss -p`` reads every process's fds to name the holders (9 ms on a quiet node, far more on a busy
# one), so it runs only when a port the host is judged on is held; else the rows come without names.
_LISTENING = r"""
if command -v ss >/dev/null 2>&1; then
  if pf_o=$(ss -ltnH); then
    case "$pf_o" in
      PF_HELD) ss -ltnpH && exit 0; echo "== ss failed (exit $?)" ;;
      *) [ -z "$pf_o" ] || printf '%s\n' "$pf_o"; exit 0 ;;
    esac
  else
    echo "== ss failed (exit $?)"
  fi
else
  echo "== ss not installed"
fi
for f in /proc/net/tcp /proc/net/tcp6; do
  if [ -r "$f" ]; then echo "== $f"; grep ' 0A ' "$f"; else echo "== $f unreadable"; fi
done
exit 0
"""


def listening_command(ports: Iterable[int]) -> str:
    """The probe that lists listening TCP sockets, naming their processes when one of ``ports`` is held.

    >>> import subprocess; out = subprocess.run(["sh", "-c", listening_command([1])], capture_output=True, text=True)
    >>> out.returncode, "pid=" in out.stdout
    (0, False)
    """
    held = "|".join(f"*:{port}\\ *" for port in sorted(set(ports)))
    return _LISTENING.replace("PF_HELD", held or "PF_NONE")


_RESERVED = "cat /proc/sys/net/ipv4/ip_local_reserved_ports"  # numeric sysctl: not read_line
PORT_RANGE_KEY = "net.ipv4.ip_local_port_range"  # read by sysctl (needed): a port outside it needs no reservation


# --- listening sockets -----------------------------------------------------------------------

_USER = re.compile(r'\("(.*?)",pid=(\d+),fd=\d+\)')


def parse_ss(text: str) -> list[dict[str, Any]]:
    """Listeners from ``ss -ltnp[H]`` rows (a header line, a Netid column and junk are skipped).

    >>> parse_ss('LISTEN 0 128 0.0.0.0%lo:22 0.0.0.0:* users:(("sshd",pid=7,fd=3))\\n')
    [{'address': '0.0.0.0', 'port': 22, 'interface': 'lo', 'processes': [{'name': 'sshd', 'pid': 7}]}]
    """
    listeners = []
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] in ("tcp", "tcp6", "tcp4"):
            fields = fields[1:]
        if len(fields) < 5 or fields[0] != "LISTEN":
            continue
        local = _split_endpoint(fields[3])
        if local is None:
            continue
        address, interface, port = local
        processes = [{"name": name, "pid": int(pid)} for name, pid in _USER.findall(" ".join(fields[5:]))]
        listeners.append({"address": address, "port": port, "interface": interface, "processes": processes})
    return listeners


def _split_endpoint(text: str) -> tuple[str, str | None, int] | None:
    """``[::1]:8080`` / ``0.0.0.0%lo:22`` / ``*:60003`` -> (address, interface, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdecimal() or int(port) > 65535 or not host:
        return None
    interface = ""
    if "%" in host and not (host.startswith("[") and host.endswith("]")):  # ss puts the device after the address
        host, _, interface = host.rpartition("%")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, interface or None, int(port)


def parse_proc_net_tcp(text: str) -> list[dict[str, Any]]:
    """LISTEN (state 0A) rows of /proc/net/tcp and tcp6; addresses decoded as little-endian words.

    >>> parse_proc_net_tcp("   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000  0 0 1 1")
    [{'address': '127.0.0.1', 'port': 6379, 'interface': None, 'processes': []}]
    """
    listeners = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[0].endswith(":") or fields[3] != "0A":
            continue
        address_hex, sep, port_hex = fields[1].partition(":")
        try:
            port = int(port_hex, 16)
            raw = bytes.fromhex(address_hex)
        except ValueError:
            continue
        if not sep or len(raw) not in (4, 16) or port > 65535:
            continue
        # The kernel prints each 32-bit word of the address in host order (little-endian on x86 and arm64).
        swapped = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
        address = str(ipaddress.ip_address(swapped))
        listeners.append({"address": address, "port": port, "interface": None, "processes": []})
    return listeners


def job_ports(host: Host, cluster: ClusterSpec) -> list[int]:
    """The ports a job binds on ``host``: the master port on the master, HCCL's (the wider count) on npu.

    >>> job_ports(Host("n1", "n1"), ClusterSpec(master="n1", master_port=29500))
    [29500]
    >>> job_ports(Host("n2", "n2", env={"HCCL_IF_BASE_PORT": "50000"}), ClusterSpec(accelerator="npu"))[::31]
    [50000, 50031]
    >>> job_ports(Host("n2", "n2", env={"HCCL_HOST_SOCKET_PORT_RANGE": "61000-61001"}), ClusterSpec(accelerator="npu"))
    [61000, 61001]
    """
    ports = [cluster.master_port] if host.name == cluster.master else []
    if cluster.accelerator == "npu":
        for low, high in hccl_host_ports(host.env, None).advised:
            ports += range(low, high + 1)
    return ports


class PortsCheck(Check):
    ids = ("ports.reserved", "ports.listening")
    order = 30
    summary = "HCCL ports reserved in ip_local_reserved_ports (npu); master and HCCL ports not already listened on"
    # the CANN version (how many HCCL ports); the ephemeral range. os.container's facts, when gathered: the remedy
    needs = ("versions", "sysctl")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        """Only what this host is judged on: the reservation on npu, the sockets where a job port lives.

        >>> [p.key for p in PortsCheck().probes(Host("n2", "n2"), ClusterSpec(master="n1"))]
        []
        >>> [p.key for p in PortsCheck().probes(Host("n2", "n2"), ClusterSpec(master="n1", accelerator="npu"))]
        ['reserved', 'listening']
        """
        ports = job_ports(host, cluster)
        probes = [Probe("reserved", _RESERVED, timeout=5)] if cluster.accelerator == "npu" else []
        return probes + ([Probe("listening", listening_command(ports), timeout=10)] if ports else [])

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        facts: Facts = {}
        reserved = outputs.get("reserved")
        facts["reserved_ports"] = " ".join(reserved.stdout.split()) if reserved and reserved.ok else None
        listening = outputs.get("listening")
        if listening is None:  # no job port on this host: nothing was listed
            facts.update(source=None, ss=None, listeners=None, error="listening sockets not read: no job port here")
            return facts
        text = listening.stdout
        first = text.lstrip("\n").split("\n", 1)[0]
        if not listening.ok:
            why = listening.stderr.strip() or f"exit status {listening.exit_status}"
            facts.update(source=None, ss=None, listeners=None, error=f"listening sockets not read: {why}"[:300])
        elif not first.startswith("== "):
            facts.update(source="ss", ss="ok", listeners=parse_ss(text))
        else:
            facts.update(source="proc", ss=first[3:].strip(), listeners=[])
            readable = False
            for section in re.split(r"^== ", text, flags=re.M)[1:]:
                head, _, body = section.partition("\n")
                if head.strip() in ("/proc/net/tcp", "/proc/net/tcp6"):
                    readable = True
                    facts["listeners"] += parse_proc_net_tcp(body)
            if not readable:
                facts.update(source=None, listeners=None,
                             error=f"listening sockets not read: {facts['ss']} and /proc/net/tcp unreadable")
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        npu = ctx.cluster.accelerator == "npu"
        if not npu:
            findings.append(finding("ports.reserved", None, Status.SKIP,
                                    "HCCL port reservation applies to npu clusters "
                                    f"(accelerator is {ctx.cluster.accelerator})"))
        for host in sorted(facts):
            hccl = hccl_ports(host, ctx) if npu else None
            if hccl is not None:
                findings.append(_judge_reserved(host, facts[host], hccl, _window(host, ctx),
                                                container_of(ctx.other_facts, host)))
            findings.append(_judge_listening(host, facts[host], ctx, hccl))
        return findings


def _port_range(text: str) -> list[int] | None:
    """``32768\\t60999`` -> [32768, 60999]; junk -> None.

    >>> _port_range("32768\\t60999\\n"), _port_range("1 2 3")
    ([32768, 60999], None)
    """
    fields = text.split()
    if len(fields) == 2 and all(f.isdecimal() for f in fields) and int(fields[0]) <= int(fields[1]) <= 65535:
        return [int(fields[0]), int(fields[1])]
    return None


def _window(host: str, ctx: EvalContext) -> Range | None:
    """The host's ephemeral range from the sysctl check's facts; None when they hold none."""
    ports = ctx.other_facts.get("sysctl", {}).get(host, {}).get("ports")
    window = _port_range(str(ports.get(PORT_RANGE_KEY) or "")) if isinstance(ports, Mapping) else None
    return (window[0], window[1]) if window else None


def _judge_reserved(host: str, facts: Facts, hccl: HcclPorts, window: Range | None,
                    container: Mapping[str, Any] | None = None) -> Finding:
    check = "ports.reserved"
    low, high = HCCL_BASE_RANGE
    if hccl.auto:
        return finding(check, host, Status.PASS, f"{hccl.setting}: HCCL takes its host ports from the OS, "
                       "so there is nothing to reserve", observed=hccl.setting, expected="nothing to reserve")
    if not hccl.usable:
        if hccl.setting.startswith(HCCL_RANGE_ENV):
            wanted = f"{HCCL_RANGE_ENV} as ports and ranges in 1-65535, comma-separated, not overlapping, or auto"
            fix = f"set {HCCL_RANGE_ENV} under env: in hosts.yaml (and in the job) to e.g. 60000-60031, or auto"
        else:
            wanted = f"{HCCL_BASE_ENV} in {low}-{high}"
            fix = (f"set {HCCL_BASE_ENV} under env: in hosts.yaml (and in the job) to a port in {low}-{high}, "
                   f"or drop it for the default {HCCL_BASE_DEFAULT}")
        return finding(check, host, Status.FAIL,
                       f"{hccl.setting} in hosts.yaml is not usable ({wanted}): HCCL cannot use it",
                       observed=hccl.setting, expected=wanted, remedy=fix)
    raw = facts.get("reserved_ports")
    reserved = parse_port_list(raw if isinstance(raw, str) else None)
    if reserved is None:
        return finding(check, host, Status.ERROR, f"could not read {RESERVED_KEY}",
                       observed=None if raw is None else str(raw), expected=f"{hccl.text} reserved")
    observed = format_port_list(reserved) or "(none)"

    def exposed(ranges: tuple[Range, ...]) -> list[Range]:
        """The ports of ``ranges`` neither reserved nor outside the ephemeral range (unknown: all of it)."""
        missing = [r for wanted in ranges for r in uncovered(wanted, reserved)]
        return [r for m in missing for r in (intersect([m], window) if window else [m])]

    wide = hccl.widened()
    missing, wide_missing = exposed(hccl.ranges), exposed(wide.ranges)
    remedy = reserve_remedy(reserved, wide.ranges, container)
    if missing:
        return finding(
            check, host, Status.FAIL,
            f"HCCL ports {hccl.text} are not all in {RESERVED_KEY}: {format_port_list(missing)} missing "
            f"({hccl.why}); an outgoing connection can be given one of them as its source port first, and HCCL "
            "then fails to bind it during communicator init",
            observed=observed, expected=f"{wide.text} reserved", remedy=remedy)
    if wide_missing:
        return finding(
            check, host, Status.WARN,
            f"HCCL ports {hccl.text} are reserved, but HCCL may use {wide.count} ports here and "
            f"{format_port_list(wide_missing)} is not reserved ({hccl.why}); reserving {wide.text} is harmless",
            observed=observed, expected=f"{wide.text} reserved", remedy=remedy)
    notes = []
    outside = [r for wanted in hccl.ranges for r in uncovered(wanted, reserved)]
    if outside and window:
        notes.append(f"{format_port_list(outside)} not reserved but outside {PORT_RANGE_KEY} "
                     f"({window[0]}-{window[1]}): the kernel never hands those out as source ports")
    if hccl.count < 32 and hccl.cann and not hccl.cann.startswith("assumed"):
        notes.append("CANN 8.2.RC1 and later use 32: reserving 32 now is harmless")
    note = f"; {'; '.join(notes)}" if notes else ""
    state = "reserved" if not outside else "reserved where the kernel could hand them out"
    return finding(check, host, Status.PASS, f"HCCL ports {hccl.text} {state} ({hccl.why}){note}",
                   observed=observed, expected=f"{hccl.text} reserved")


def _judge_listening(host: str, facts: Facts, ctx: EvalContext, hccl: HcclPorts | None) -> Finding:
    check = "ports.listening"
    targets: list[tuple[str, Range, str]] = []  # (what, ports, the other way out)
    if host == ctx.cluster.master:
        port = ctx.cluster.master_port
        targets.append((f"master port {port}", (port, port), "or set cluster.master_port to a free port"))
    if hccl is not None:
        var = HCCL_RANGE_ENV if hccl.setting.startswith(HCCL_RANGE_ENV) else HCCL_BASE_ENV
        targets += [(f"HCCL ports {hccl.text}", r, f"or set {var} to a free range") for r in hccl.ranges]
    if not targets:
        return finding(check, host, Status.SKIP, f"no job port to check on {host} (not the master, and "
                       "HCCL ports are checked on npu clusters only)")
    expected = "; ".join(f"{what} free" for what, _, _ in targets)
    listeners = facts.get("listeners")
    if not isinstance(listeners, list):
        return finding(check, host, Status.ERROR, f"{facts.get('error') or 'listening sockets not read'}",
                       expected=expected)
    problems: list[str] = []
    pids: set[int] = set()
    unnamed: set[int] = set()
    hints: list[str] = []
    for what, (low, high), hint in targets:
        held = sorted((item for item in listeners if isinstance(item, dict) and isinstance(item.get("port"), int)
                       and low <= item["port"] <= high), key=lambda item: (item["port"], str(item.get("address"))))
        if held and hint not in hints:
            hints.append(hint)
        for item in held:
            procs = [p for p in item.get("processes") or [] if isinstance(p, dict)]
            who = ", ".join(f"{p.get('name')} (pid {p.get('pid')})" for p in procs)
            pids.update(p["pid"] for p in procs if isinstance(p.get("pid"), int))
            if not who:
                unnamed.add(item["port"])
                who = ("a process ss cannot name (run as root to see it)" if facts.get("source") == "ss"
                       else f"a process ({facts.get('ss') or 'no ss'}: read from /proc/net/tcp, no process names)")
            where = str(item.get("address") or "?") + (f"%{item['interface']}" if item.get("interface") else "")
            label = what if what.startswith("master") else f"HCCL port {item['port']}"
            problems.append(f"{label} is held by {who} on {where}")
    if problems:
        if unnamed or not pids:
            first, last = min(unnamed, default=0), max(unnamed, default=0)
            sport = f"sport = :{first}" if first == last else f"sport >= :{first} and sport <= :{last}"
            remedy = f"ss -ltnp '( {sport} )'  # as root, to find the holder; stop it, {'; '.join(hints)}"
        else:
            remedy = f"kill {' '.join(map(str, sorted(pids)))}  # stop the holder, {'; '.join(hints)}"
        return finding(check, host, Status.FAIL,
                       f"{'; '.join(problems)}: the job cannot bind it and fails at init with "
                       "'address already in use'",
                       observed="; ".join(problems), expected=expected, remedy=remedy)
    source = "ss" if facts.get("source") == "ss" else f"/proc/net/tcp, {facts.get('ss')}"
    return finding(check, host, Status.PASS, f"{expected} (read with {source})", observed="free",
                   expected=expected)
