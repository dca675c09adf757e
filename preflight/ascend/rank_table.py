"""HCCL rank tables (RANK_TABLE_FILE): the two formats and what is wrong with one against the live device IPs.

Two formats: version "1.0" (``server_count``/``server_list``/``device`` with ``rank_id``) and the legacy
``group_list`` one (``group_count``/``group_list``/``instance_list``/``devices``; real sample:
Ascend/modelzoo ResNext50_for_TensorFlow/hccl.json, one instance per device with its ``rank_id``; an instance
without ``rank_id`` numbers its devices in listing order, as in the modelzoo READMEs' one-instance-per-server
form).

>>> table = {"status": "completed", "version": "1.0", "server_count": "1", "server_list": [
...     {"server_id": "10.0.0.1", "device": [{"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"}]}]}
>>> problems(table, {"n1": {0: "192.168.1.9"}}, {"10.0.0.1": "n1"})
[('n1', 0, 'device 0 of n1 is 192.168.1.8 in the rank table but 192.168.1.9 on the device')]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    entries = servers(table)
    if isinstance(table.get("server_list"), list):
        if str(table.get("server_count", len(entries))) != str(len(entries)):
            found.append((None, None, f"server_count {table.get('server_count')} but {len(entries)} servers listed"))
    else:
        found += _group_counts(table)
    ranks: list[int] = []
    for server in entries:
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


def servers(table: Any) -> list[dict[str, Any]]:
    """The table's servers as version 1.0 ``server_list`` entries ({server_id, device: [{device_id, device_ip,
    rank_id}]}), the legacy ``group_list`` format's instances merged per server_id.

    >>> legacy = {"group_list": [{"instance_list": [
    ...     {"devices": [{"device_id": "0", "device_ip": "192.168.10.64"}], "rank_id": "0", "server_id": "10.0.0.1"},
    ...     {"devices": [{"device_id": "1", "device_ip": "192.168.20.64"}], "rank_id": "1", "server_id": "10.0.0.1"}]}]}
    >>> servers(legacy)  # doctest: +NORMALIZE_WHITESPACE
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
