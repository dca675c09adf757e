"""The application layer: check selection (one place, transitive needs) and usage errors before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.app import RunRequest, UsageError, prepare, select_checks


def idents(selected: list[str], skipped: list[str], scope: str | None = None) -> list[str]:
    return [c.ident for c in select_checks(selected, skipped, scope).checks]


def test_needed_checks_are_gathered_but_not_reported() -> None:
    chosen = select_checks(["hccn.rank_table"], [])
    assert [c.ident for c in chosen.checks] == ["net", "hccn.ip", "hccn.rank_table"]  # net: the hosts' own addresses
    assert chosen.only == ("hccn.rank_table",)


def test_needs_are_followed_transitively() -> None:
    # nccl needs gpu.fabric, which needs os: all three are gathered, nccl alone is reported.
    chosen = select_checks(["nccl"], [])
    assert {"nccl", "gpu.fabric", "gpu.devices", "os", "net"} <= {c.ident for c in chosen.checks}
    assert chosen.only == ("nccl",)


def test_unknown_family_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown check sysctlx"):
        select_checks(["sysctlx"], [])


def test_node_scope_refuses_a_cluster_check() -> None:
    with pytest.raises(UsageError, match="not a node check"):
        select_checks(["net.reachability"], [], scope="node")
    assert "net.reachability" not in idents([], [], scope="node")


def test_bad_hosts_file_and_limit_are_usage_errors_before_anything_runs(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("hosts:\n  - name: n1\n    adress: 10.0.0.1\n")
    with pytest.raises(UsageError, match="hosts.yaml:3"):
        prepare(RunRequest(hosts=hosts))
    hosts.write_text("hosts:\n  - n1\n")
    with pytest.raises(UsageError, match="max-unhealthy"):
        prepare(RunRequest(hosts=hosts, max_unhealthy="lots"))
