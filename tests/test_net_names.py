"""net.names judged from getent output as the namespace cluster prints it (tests/fixtures/net/parse/recorded_netns_node2
.json's `getent ahosts node1`); the same over SSH: tests/test_net_cluster.py."""

from __future__ import annotations

from preflight.checks.net_names import judge_names, parse_names

NAMES = ["node1", "node2", "node3"]
ADDRESSES = {"node1": "10.213.6.11", "node2": "10.213.6.12", "node3": "10.213.6.13"}


def getent(name: str, address: str | None) -> str:
    """One section of the net.names probe: `getent ahosts` as recorded on the cluster, or not found (exit 2)."""
    if address is None:
        return f"name {name}\nexit 2\n"
    return f"name {name}\n{address}     STREAM {name}\n{address}     DGRAM  \n{address}     RAW    \nexit 0\n"


def seen(table: dict[str, dict[str, str | None]]) -> dict[str, dict[str, dict[str, object]]]:
    return {host: parse_names("".join(getent(n, a) for n, a in names.items())) for host, names in table.items()}


def statuses(table: dict[str, dict[str, str | None]]) -> dict[str, str]:
    return {f.host or "": f.status.value for f in judge_names(seen(table), NAMES, ADDRESSES)}


def test_alike_everywhere_passes_and_own_name_is_not_judged() -> None:
    table: dict[str, dict[str, str | None]] = {h: dict(ADDRESSES) for h in NAMES}
    table["node1"]["node1"] = "127.0.1.1"  # Debian's own-name line: net.hostname's business, not this check's
    assert statuses(table) == dict.fromkeys(NAMES, "pass")


def test_the_odd_resolver_is_named() -> None:
    table: dict[str, dict[str, str | None]] = {h: dict(ADDRESSES) for h in NAMES}
    table["node3"]["node1"] = "10.213.6.99"
    table["node2"]["node3"] = None
    findings = {f.host: f for f in judge_names(seen(table), NAMES, ADDRESSES)}
    assert {h: f.status.value for h, f in findings.items()} == {"node1": "pass", "node2": "fail", "node3": "fail"}
    assert findings["node3"].observed == "node1 -> 10.213.6.99, the other hosts -> 10.213.6.11"
    assert findings["node2"].observed == "node3: does not resolve (getent exit 2)"
    assert str(findings["node2"].remedy).endswith("getent ahosts node3")


def test_two_resolvers_that_disagree_are_settled_by_the_hosts_yaml_address() -> None:
    table: dict[str, dict[str, str | None]] = {h: dict(ADDRESSES) for h in NAMES}
    table["node2"]["node1"] = "10.213.6.99"  # node1's name: node2 and node3 resolve it, one each way
    assert statuses(table) == {"node1": "pass", "node2": "fail", "node3": "pass"}


def test_a_peer_resolved_to_loopback_fails() -> None:
    table: dict[str, dict[str, str | None]] = {h: dict(ADDRESSES) for h in NAMES}
    table["node3"]["node1"] = "127.0.0.1"
    assert statuses(table) == {"node1": "pass", "node2": "pass", "node3": "fail"}
