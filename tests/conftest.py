"""Shared test plumbing: tests/ on sys.path, and the rule that cluster tests may not silently skip."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import paramiko
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The suite's runs record their verdicts in a history store of their own, never the user's (docs/history.md).
os.environ.setdefault("PREFLIGHT_HISTORY", str(Path(tempfile.mkdtemp(prefix="preflight-history-")) / "h.sqlite"))

from netns_cluster import NetnsCluster, cluster_support_problem

from preflight.inventory import Host
from preflight.transport.ssh import SSHTransport


@contextmanager
def hostname_session(host: Host) -> Iterator[tuple[SSHTransport, paramiko.Transport]]:
    """An SSH transport to ``host`` that has run ``hostname`` and got ``host.name`` back, with its paramiko
    Transport; closed on exit."""
    transport = SSHTransport(host, connect_timeout=5)
    try:
        execution = transport.run_script("hostname\n", timeout=10)
        assert execution.exit_status == 0 and execution.stdout.decode().strip() == host.name
        assert transport.client is not None
        ssh = transport.client.get_transport()
        assert ssh is not None
        yield transport, ssh
    finally:
        transport.close()


def require_cluster_support() -> None:
    """Skip when the namespace cluster cannot be built, or fail when PREFLIGHT_REQUIRE_CLUSTER is set (CI)."""
    problem = cluster_support_problem()
    if problem is None:
        return
    if os.environ.get("PREFLIGHT_REQUIRE_CLUSTER"):
        pytest.fail(f"the cluster tests cannot run here: {problem}")
    pytest.skip(problem)


def cluster_fixture(tmp_path_factory: pytest.TempPathFactory, size: int, name: str,
                    subnet: int) -> Iterator[NetnsCluster]:
    """Bring a cluster up for a test module and always tear it down."""
    require_cluster_support()
    cluster = NetnsCluster(size, name=name, subnet=subnet, workdir=tmp_path_factory.mktemp(name))
    cluster.up()
    try:
        yield cluster
    finally:
        cluster.down()


@pytest.fixture(scope="session", autouse=True)
def every_report_validates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every report.json the suite's runs wrote (under pytest's temporary directory) matches the shipped JSON
    Schema (preflight/schemas/report.schema.json): checked once, when the session ends."""
    yield
    from schema_check import invalid_reports

    problems = invalid_reports(tmp_path_factory.getbasetemp())
    assert not problems, "report.json files that do not match report.schema.json:\n" + "\n".join(problems)
