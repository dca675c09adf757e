"""hccn.rank_table: a rank table (RANK_TABLE_FILE / --rank-table) agrees with the live device IPs.

HCCL started from a rank table connects device ``device_id`` of server ``server_id`` at
``device_ip``; when that is not the address the device really has (``hccn_tool -i N -ip -g``, from
the hccn.ip facts), link setup times out (EI0006). The table comes from ``--rank-table FILE`` (read
by the CLI into ``checks.hccn.rank_table``) or from ``RANK_TABLE_FILE`` in a host's ``env:``, which is
read on that host.

The table's two formats and what is wrong with one: ``preflight.ascend.rank_table``. A ``server_id`` names a
host when it is the host's hosts.yaml address or name, or one of its own addresses the net check gathered (its
interfaces' addresses, what its own name resolves to, its hostname), as long as no other host has that address.
"""

from __future__ import annotations

import ipaddress
import json
import shlex
from collections.abc import Mapping
from typing import Any, ClassVar

from preflight.ascend.rank_table import problems, servers
from preflight.checks.base import *


class RankTableCheck(Check):
    ids = ("hccn.rank_table",)
    accelerators = frozenset({"npu"})
    # no not_applicable: off NPU clusters it says nothing at all (as before)
    order = 73
    needs = ("hccn.ip", "net")
    summary = "a rank table (RANK_TABLE_FILE or --rank-table) matches the live NPU device IPs"
    params: ClassVar[Mapping[str, Any]] = {"rank_table": {}}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        path = host.env.get("RANK_TABLE_FILE")
        if not path:
            return []
        return [Probe("table", f"cat -- {shlex.quote(path)}", timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        table = outputs.get("table")
        if table is None:
            return {"table": None}
        if not table.ok:
            return {"table": None, "error": (table.stderr.strip() or f"exit status {table.exit_status}")[-300:]}
        try:
            return {"table": json.loads(table.stdout)}
        except ValueError as exc:
            return {"table": None, "error": f"not JSON: {exc}"}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        check = self.name
        live: dict[str, dict[int, str | None]] = {}
        for host, host_facts in ctx.other_facts.get("hccn.ip", {}).items():
            live[host] = {int(d["id"]): d.get("ip") for d in host_facts.get("devices") or []
                          if isinstance(d, dict) and str(d.get("id", "")).isdigit()}
        server_to_host = _own_addresses(ctx.other_facts.get("net", {})) | {h.address: h.name for h in ctx.hosts} \
            | {h.name: h.name for h in ctx.hosts}
        tables: list[tuple[str, Any]] = []
        given = ctx.params["rank_table"]
        if given:
            tables.append(("--rank-table", given))
        findings: list[Finding] = []
        for host, host_facts in sorted(facts.items()):
            if host_facts.get("error"):
                findings.append(finding(check, host, Status.FAIL, f"RANK_TABLE_FILE on {host} cannot be "
                                        f"read: {host_facts['error']}", observed=str(host_facts["error"]),
                                        expected="a readable JSON rank table"))
            elif host_facts.get("table") is not None:
                tables.append((f"RANK_TABLE_FILE on {host}", host_facts["table"]))
        if not tables:
            return findings + [finding(check, None, Status.SKIP, "no rank table given "
                                       "(RANK_TABLE_FILE in env: or --rank-table)")]
        bad_hosts: set[str] = set()
        for source, table in tables:
            listed = {server_to_host.get(str(s.get("server_id"))) for s in servers(table)}
            for absent in sorted(set(live) - {h for h in listed if h}):
                bad_hosts.add(absent)
                findings.append(finding(check, absent, Status.WARN, f"{source}: {absent} is not in the rank "
                                        "table, so its devices take no part in the job",
                                        observed="absent", expected="listed"))
            for where, device, what in problems(table, live, server_to_host):
                if where:
                    bad_hosts.add(where)
                findings.append(finding(check, where, Status.FAIL, f"{source}: {what}", device=device,
                                        observed=what, expected="the rank table matches the devices",
                                        remedy="regenerate the rank table from `hccn_tool -i N -ip -g` on each "
                                               "server (or fix the device IP)"))
        for host in sorted(set(live) - bad_hosts):
            findings.append(finding(check, host, Status.PASS, f"{host}'s devices match the rank table"))
        return findings


def _own_addresses(net_facts: Mapping[str, Facts]) -> dict[str, str]:
    """Address (or hostname) -> host, from the net check's facts: each host's interface addresses (loopback
    left out), what its own name resolves to and its hostname; an address two hosts claim names neither.

    >>> docker = {"docker0": {"addrs": ["172.17.0.1/16"]}}
    >>> _own_addresses({"a": {"hostname": "a1", "self": {"addrs": ["10.0.0.1"]},
    ...                       "interfaces": {"eth0": {"addrs": ["10.0.0.1/24"]}, **docker}},
    ...                 "b": {"interfaces": docker}})
    {'10.0.0.1': 'a', 'a1': 'a'}
    """
    claims: dict[str, set[str]] = {}
    for host, facts in net_facts.items():
        if not isinstance(facts, dict):
            continue
        own: set[str] = set()
        resolved = facts.get("self")
        if isinstance(resolved, dict) and isinstance(resolved.get("addrs"), list):
            own.update(str(a) for a in resolved["addrs"])
        interfaces = facts.get("interfaces")
        for entry in interfaces.values() if isinstance(interfaces, dict) else []:
            addrs = entry.get("addrs") if isinstance(entry, dict) else None
            own.update(str(a).split("/")[0] for a in addrs if isinstance(a, str)) if isinstance(addrs, list) else None
        if isinstance(facts.get("hostname"), str):
            own.add(facts["hostname"])
        for name in own:
            if not _loopback(name):
                claims.setdefault(name, set()).add(host)
    return {name: next(iter(hosts)) for name, hosts in sorted(claims.items()) if len(hosts) == 1}


def _loopback(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False
