"""net: host names, the master's address and the interfaces the collectives will use.

Multi-node init breaks in quiet ways when names and interfaces disagree across hosts:

- ``net.hostname``: gloo (and torch's default device choice) binds the address the host's own name
  resolves to. Debian maps the hostname to 127.0.1.1 in /etc/hosts, so gloo binds loopback and
  peers wait forever. We mimic gloo: the first resolved address that is local to the host wins.
- ``net.master_resolution``: the master's name (``cluster.master``) resolves to the same address on
  every host, and that address is one of the master's own.
- ``net.address_family``: every host's own address has the family (IPv4/IPv6) of the master's.
- ``net.interface``: interfaces named by ``NCCL_SOCKET_IFNAME`` / ``HCCL_SOCKET_IFNAME`` (prefix
  lists, ``^`` excludes, ``=`` exact), ``GLOO_SOCKET_IFNAME`` (exact names, comma separated) and
  ``HCCL_IF_IP`` exist, are running, have an address, and sit on the master's network. Values come
  from hosts.yaml ``env`` first, then the host's login environment, then /etc/nccl.conf. Without a
  variable, NCCL (gpu) and HCCL (npu) pick an interface on their own: that pick must share a
  network with the master's pick.
- ``net.mtu``: the training interface has the same MTU on every host (the majority decides).

Parsers and interface selection live in preflight.interfaces, the findings in preflight.net_view (both
shared with diagnose).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any, ClassVar

from preflight.batch import print_line, read_line
from preflight.checks.base import *
from preflight.interfaces import (
    ADDRS_COMMAND,
    IFACE_VARS,
    parse_env,
    parse_getent,
    parse_ip_addr,
    parse_links,
    parse_route,
)
from preflight.net_view import ClusterView

_HOSTNAME = print_line("/proc/sys/kernel/hostname") + " || hostname"
_SELF = read_line("/proc/sys/kernel/hostname", "h") + ' || h=$(hostname) && getent ahosts "$h"'
# One line per interface from sysfs (works without iproute2; builtins only): name key=value ...
_LINKS = ("cd /sys/class/net || exit 1; for n in *; do printf '%s' \"$n\"; "
          "for k in ifindex mtu operstate flags carrier; do "
          "{ v=; read -r v <\"$n/$k\"; } 2>/dev/null; printf ' %s=%s' $k \"$v\"; done; echo; done")
_LOGIN_ENV = "; ".join(f'[ -z "${{{v}+x}}" ] || printf \'login %s\\n\' "{v}=${v}"' for v in IFACE_VARS)
_NCCL_CONF = (r"[ ! -r /etc/nccl.conf ] || sed -n 's/^[[:space:]]*\(NCCL_SOCKET_IFNAME=.*\)$/conf \1/p' "
              "/etc/nccl.conf 2>/dev/null")  # no sed started where there is no file


class NetCheck(Check):
    ids = ("net.hostname", "net.master_resolution", "net.address_family", "net.interface", "net.mtu")
    order = 35
    summary = ("host names resolve to non-loopback addresses, the master resolves alike everywhere, "
               "NCCL/GLOO/HCCL interfaces exist, are up and share the master's network, equal MTU")
    params: ClassVar[Mapping[str, Any]] = {}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        master = shlex.quote(cluster.master or "")
        return [
            Probe("hostname", _HOSTNAME, timeout=5),
            Probe("self", _SELF, timeout=10),
            Probe("master", _master_command(master), timeout=10),
            Probe("links", _LINKS, timeout=5),
            Probe("addrs", ADDRS_COMMAND, timeout=5),
            Probe("env", _env_command(host), timeout=5),
        ]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        empty = ProbeOutput("", "not run", None)
        hostname = outputs.get("hostname", empty)
        name_lines = hostname.stdout.split()
        master, route = _split_route(outputs.get("master", empty))
        master_lines = master.stdout.splitlines()
        master_name = master_lines[0][5:].strip() if master_lines and master_lines[0].startswith("name ") else None
        links = outputs.get("links", empty)
        addrs = outputs.get("addrs", empty)
        interfaces = parse_links(links.stdout)
        addr_map = parse_ip_addr(addrs.stdout)
        for name, entry in interfaces.items():
            entry["addrs"] = addr_map.get(name, [])
        return {
            "hostname": name_lines[0] if hostname.ok and name_lines else None,
            "self": _resolution(outputs.get("self", empty)),
            "master": {"name": master_name or None, **_resolution(master)},
            "route": parse_route(route),
            "interfaces": interfaces or None,
            "interfaces_error": None if interfaces else _failure(links, "cannot list /sys/class/net"),
            "addrs_error": None if addrs.ok and addr_map else _failure(addrs, "no addresses listed"),
            "env": parse_env(outputs.get("env", empty).stdout),
        }

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        view = ClusterView(facts, ctx)
        findings: list[Finding] = []
        for host in facts:
            findings.append(view.hostname_finding(host))
            findings.append(view.master_finding(host))
            findings.append(view.family_finding(host))
            findings.append(view.interface_finding(host))
        findings += view.mtu_findings()
        return findings


# --- probes and parsers -----------------------------------------------------------------------------


ROUTE_MARK = "== route"  # between the master's addresses and the route to the first one (not an address line)


def _master_command(master: str) -> str:
    """The master's name, its addresses (``getent ahosts``, once) and the route to the first of them.

    One probe and one resolver start per host (they were two of each: ~1.5 ms of a node's CPU). getent's own
    exit status ends the probe when the name does not resolve (2: not found), before any route line.

    >>> import subprocess
    >>> subprocess.run(["sh", "-c", _master_command("localhost")], capture_output=True, text=True).stdout[:15]
    'name localhost\\n'
    """
    return (f"printf 'name %s\\n' {master}; pf_a=$(getent ahosts {master}); pf_rc=$?; "
            '[ -z "$pf_a" ] || printf \'%s\\n\' "$pf_a"; [ "$pf_rc" -eq 0 ] || exit "$pf_rc"; '
            f'set -- $pf_a; [ $# -gt 0 ] || exit 2; echo {shlex.quote(ROUTE_MARK)}; ip -o route get "$1"')


def _split_route(output: ProbeOutput) -> tuple[ProbeOutput, str]:
    """The master probe's output as getent's (its exit status 0 once the route part began) and the route text.

    >>> master, route = _split_route(ProbeOutput("name m\\n10.0.0.1 STREAM m\\n== route\\n10.0.0.1 dev lo\\n", "", 1))
    >>> master.stdout, master.exit_status, route
    ('name m\\n10.0.0.1 STREAM m\\n', 0, '10.0.0.1 dev lo\\n')
    """
    head, marked, route = output.stdout.partition(f"\n{ROUTE_MARK}\n")  # after the name line, never first
    if not marked:
        return output, ""
    return ProbeOutput(head + "\n", output.stderr, 0, output.truncated), route


def _env_command(host: Host) -> str:
    """Print the interface variables: hosts.yaml values (quoted here), the login shell's, /etc/nccl.conf's."""
    parts = [f"printf 'yaml %s\\n' {shlex.quote(name + '=' + host.env[name].replace(chr(10), ' '))}"
             for name in IFACE_VARS if name in host.env]
    return "; ".join([*parts, _LOGIN_ENV, _NCCL_CONF, "true"])


def _failure(output: ProbeOutput, default: str) -> str:
    """Why a probe gave nothing usable, in a few words."""
    text = (output.stderr.strip() or output.stdout.strip()).splitlines()
    if output.timed_out:
        return "timed out"
    if output.exit_status == 127 or (text and "not found" in text[-1]):
        return "command not found: " + (text[-1][:200] if text else "")
    if output.ok or not text:
        return default
    return text[-1][:200]


def _resolution(output: ProbeOutput) -> dict[str, Any]:
    """``{"addrs": [...], "error": None | "not found" | why}`` from a getent probe."""
    addrs = parse_getent(output.stdout)
    if addrs:
        return {"addrs": addrs, "error": None}
    if output.exit_status == 2 or (output.ok and not output.stderr.strip()):
        return {"addrs": [], "error": "not found"}
    return {"addrs": [], "error": _failure(output, "not found")}
