"""hccn.rank_table: a rank table (RANK_TABLE_FILE / --rank-table) agrees with the live device IPs.

HCCL started from a rank table connects device ``device_id`` of server ``server_id`` at
``device_ip``; when that is not the address the device really has (``hccn_tool -i N -ip -g``, from
the hccn.ip facts), link setup times out (EI0006). The table comes from ``--rank-table FILE`` (read
by the CLI into ``checks.hccn.rank_table``) or from ``RANK_TABLE_FILE`` in a host's ``env:``, which is
read on that host.

Two formats: version "1.0" (``server_count``/``server_list``/``device`` with ``rank_id``) and the legacy
``group_list`` one (``group_count``/``group_list``/``instance_list``/``devices``; real sample:
Ascend/modelzoo ResNext50_for_TensorFlow/hccl.json, one instance per device with its ``rank_id``; an instance
without ``rank_id`` numbers its devices in listing order, as in the modelzoo READMEs' one-instance-per-server
form). A ``server_id`` names a host when it is the host's hosts.yaml address or name, or one of its own
addresses the net check gathered (its interfaces' addresses, what its own name resolves to, its hostname),
as long as no other host has that address.

>>> table = {"status": "completed", "version": "1.0", "server_count": "1", "server_list": [
...     {"server_id": "10.0.0.1", "device": [{"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"}]}]}
>>> problems(table, {"n1": {0: "192.168.1.9"}}, {"10.0.0.1": "n1"})
[('n1', 0, 'device 0 of n1 is 192.168.1.8 in the rank table but 192.168.1.9 on the device')]
"""

from __future__ import annotations

import ipaddress
import json
import shlex
from collections.abc import Mapping
from typing import Any, ClassVar

from preflight.checks.base import *

Problem = tuple[str | None, int | None, str]  # host (None: the table itself), device, what is wrong


def problems(table: Any, live: Mapping[str, Mapping[int, str | None]],
             server_to_host: Mapping[str, str]) -> list[Problem]:
    """Everything wrong with ``table`` against the live device IPs (host -> device id -> ip)."""
    if not isinstance(table, dict) or not (isinstance(table.get("server_list"), list)
                                           or isinstance(table.get("group_list"), list)):
        return [(None, None, "not a rank table: no server_list (version 1.0) or group_list (legacy format)")]
    found: list[Problem] = []
    if table.get("status") != "completed":
        found.append((None, None, f"status is {table.get('status')!r}, not 'completed'"))
    servers = _servers(table)
    if isinstance(table.get("server_list"), list):
        if str(table.get("server_count", len(servers))) != str(len(servers)):
            found.append((None, None, f"server_count {table.get('server_count')} but {len(servers)} servers listed"))
    else:
        found += _group_counts(table)
    ranks: list[int] = []
    for server in servers:
        server_id = str(server.get("server_id"))
        host = server_to_host.get(server_id)
        devices = [d for d in server.get("device") or [] if isinstance(d, dict)] \
            if isinstance(server.get("device"), list) else []
        if host is None:
            found.append((None, None, f"server {server_id} is not one of the hosts in hosts.yaml"))
        for device in devices:
            try:
                device_id, rank = int(str(device.get("device_id"))), int(str(device.get("rank_id")))
            except ValueError:
                found.append((host, None, f"server {server_id}: device entry without numeric device_id/rank_id"))
                continue
            ranks.append(rank)
            if host is None:
                continue
            actual = live.get(host, {}).get(device_id)
            listed = device.get("device_ip")
            if host in live and device_id not in live[host]:
                found.append((host, device_id, f"device {device_id} of {host} is in the rank table but "
                                               "hccn_tool does not report it"))
            elif host in live and actual != listed:
                found.append((host, device_id, f"device {device_id} of {host} is {listed} in the rank table but "
                                               f"{actual or 'unset'} on the device"))
    if sorted(ranks) != list(range(len(ranks))):
        duplicates = sorted({r for r in ranks if ranks.count(r) > 1})
        found.append((None, None, "rank_id values are not 0..N-1 once each"
                      + (f" (repeated: {', '.join(map(str, duplicates))})" if duplicates else "")))
    return found


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
            listed = {server_to_host.get(str(s.get("server_id"))) for s in _servers(table)}
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


def _servers(table: Any) -> list[dict[str, Any]]:
    """The table's servers as version 1.0 ``server_list`` entries ({server_id, device: [{device_id, device_ip,
    rank_id}]}), the legacy ``group_list`` format's instances merged per server_id.

    >>> legacy = {"group_list": [{"instance_list": [
    ...     {"devices": [{"device_id": "0", "device_ip": "192.168.10.64"}], "rank_id": "0", "server_id": "10.0.0.1"},
    ...     {"devices": [{"device_id": "1", "device_ip": "192.168.20.64"}], "rank_id": "1", "server_id": "10.0.0.1"}]}]}
    >>> _servers(legacy)  # doctest: +NORMALIZE_WHITESPACE
    [{'server_id': '10.0.0.1', 'device': [{'device_id': '0', 'device_ip': '192.168.10.64', 'rank_id': '0'},
                                         {'device_id': '1', 'device_ip': '192.168.20.64', 'rank_id': '1'}]}]
    """
    if not isinstance(table, dict):
        return []
    servers = table.get("server_list")
    if isinstance(servers, list):
        return [s for s in servers if isinstance(s, dict)]
    merged: dict[str, dict[str, Any]] = {}
    rank = 0
    for group in _dicts(table.get("group_list")):
        for instance in _dicts(group.get("instance_list")):
            server = merged.setdefault(str(instance.get("server_id")), {"server_id": instance.get("server_id"),
                                                                        "device": []})
            devices = _dicts(instance.get("devices"))
            for device in devices:
                given = instance.get("rank_id") if len(devices) == 1 else None
                server["device"].append({"device_id": device.get("device_id"), "device_ip": device.get("device_ip"),
                                         "rank_id": given if given is not None else str(rank)})
                rank += 1
    return list(merged.values())


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _group_counts(table: dict[str, Any]) -> list[Problem]:
    """The legacy format's own counts: group_count groups, instance_count instances in each group."""
    found: list[Problem] = []
    groups = _dicts(table.get("group_list"))
    if str(table.get("group_count", len(groups))) != str(len(groups)):
        found.append((None, None, f"group_count {table.get('group_count')} but {len(groups)} groups listed"))
    for group in groups:
        instances = _dicts(group.get("instance_list"))
        if str(group.get("instance_count", len(instances))) != str(len(instances)):
            found.append((None, None, f"group {group.get('group_name')!r}: instance_count "
                                      f"{group.get('instance_count')} but {len(instances)} instances listed"))
    return found


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
