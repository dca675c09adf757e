"""The first screen a user sees: ``--help`` of every command at 80 and 100 columns (option names whole), the
run header (checks named compactly), the hosts x checks matrix (families that did not apply left out) and the
problems (one cause on many hosts printed once, with the hosts as a range)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from preflight import cli
from preflight.app import select_checks
from preflight.engine import host_findings
from preflight.inventory import Host
from preflight.model import Finding, HostResult, Report, Status
from preflight.render import html, terminal
from preflight.render.summary import problems


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command and group of the CLI (typer's own click commands) with the words that reach it."""
    found = [(path, command)]
    if hasattr(command, "commands"):  # a group
        for name, sub in sorted(command.commands.items()):
            found += _commands(sub, (*path, name))
    return found


@pytest.mark.parametrize("columns", [80, 100])
def test_help_never_cuts_an_option_name(columns: int) -> None:
    every = _commands(typer.main.get_command(cli.app))
    assert len(every) > 12, [p for p, _ in every]
    runner = CliRunner()
    for path, command in every:
        result = runner.invoke(cli.app, [*path, "--help"], env={"COLUMNS": str(columns), "TERMINAL_WIDTH": None})
        assert result.exit_code == 0, (path, result.output)
        lines = result.output.splitlines()
        assert "…" not in result.output, (path, result.output)
        assert all(len(line) <= columns for line in lines), (path, result.output)
        words = {word.strip(",/[]") for line in lines for word in line.split()}
        for param in command.params:
            for name in [*param.opts, *param.secondary_opts]:
                if name.startswith("-"):
                    assert name in words, (path, name, result.output)


# --- the run's terminal report -----------------------------------------------------------------------------

NPU_FAMILIES = ("ssh.connect", "os.shm", "versions.torch", "sysctl.somaxconn", "ports.hccl", "net.mtu",
                "firewall.rules", "npu.health", "hccl.env", "hccn.link")
GPU_CHECKS = ("gpu.devices", "gpu.fabric", "gpu.pcie", "gpu.xid", "gpu.fabricmanager", "nccl")


def _npu_report(hosts: int = 4, accelerator: str = "npu") -> Report:
    """A clean run of the default checks on an NPU cluster: the GPU checks skip once each, cluster-wide."""
    names = [f"node{i}" for i in range(1, hosts + 1)]
    findings = [Finding(check, n, Status.PASS, f"{check}: ok") for n in names for check in NPU_FAMILIES]
    findings += [Finding(check, None, Status.SKIP, f"{check}: not a gpu cluster (accelerator: {accelerator})")
                 for check in GPU_CHECKS]
    checks = [c.ident for c in select_checks([], []).checks]
    return Report([HostResult(n, f"10.0.0.{i}", True) for i, n in enumerate(names, 1)], findings, checks,
                  "", 3.64, tool_version="0.1.0", extra={"cluster": {"accelerator": accelerator}})


def _text(report: Report, width: int = 80) -> str:
    console = Console(record=True, width=width, force_terminal=False, color_system=None)
    terminal.render(report.redacted(), console)
    return console.export_text()


def _columns(text: str) -> set[str]:
    return {cell.strip() for line in text.splitlines() if "┃" in line for cell in line.split("┃")}


def test_the_header_names_every_default_check_in_two_lines_at_80_columns() -> None:
    report = _npu_report()
    assert len(report.checks) > 20
    text = _text(report)
    header = text[:text.index("\npass ")].splitlines()
    assert len(header) <= 2, header
    assert header[0].startswith(f"preflight 0.1.0: 4 hosts, {len(report.checks)} checks (os, versions, sysctl,")
    assert "gpu" in " ".join(header) and "hccn" in " ".join(header) and "gpu.devices" not in " ".join(header)


def test_families_that_do_not_apply_are_left_out_of_the_matrix_and_named_once() -> None:
    text = _text(_npu_report())
    columns = _columns(text)
    assert {"ssh", "os", "npu", "hccl", "hccn"} < columns and not {"gpu", "nccl"} & columns, columns
    assert "hosts x checks (3/" not in text  # two tables at 80 columns, not three
    assert "left out of the table: gpu, nccl (not applicable to this npu cluster)" in text
    # a CPU machine: neither the NPU nor the GPU families
    names = ["cpu1"]
    findings = [Finding(c, "cpu1", Status.PASS, "ok") for c in ("ssh.connect", "os.shm", "sysctl.somaxconn")]
    findings += [Finding(c, None, Status.SKIP, "not applicable") for c in ("npu", "hccn.link", "gpu.xid", "nccl")]
    findings.append(Finding("firewall.rules", "cpu1", Status.SKIP, "no firewall tool"))  # skipped, on the host
    cpu = Report([HostResult(n, n, True) for n in names], findings, ["os", "sysctl", "firewall", "npu"], "", 1.0,
                 extra={"cluster": {"accelerator": "cpu"}})
    text = _text(cpu)
    assert _columns(text) == {"hosts", "ssh", "os", "sysctl"}
    assert ("left out of the table: npu, hccn, gpu, nccl (not applicable to this cpu cluster), firewall (skipped "
            "on every host)") in " ".join(text.split())


def test_the_html_matrix_leaves_out_the_same_families() -> None:
    page = html.render(_npu_report().redacted())
    matrix = page[page.index('<table id="matrix">'):]
    heads = re.findall(r"<th>([^<]+)</th>", matrix[:matrix.index("</tr>")])
    assert {"ssh", "os", "npu", "hccl", "hccn"} <= set(heads) and not {"gpu", "nccl"} & set(heads), heads
    assert "left out of the table: gpu, nccl (not applicable to this npu cluster)" in page


def test_a_missing_identity_file_on_sixteen_hosts_is_one_problem_naming_the_range() -> None:
    hosts = [Host(f"node{i}", f"10.0.0.{i}", identity_file="/home/u/.ssh/id_gone") for i in range(1, 17)]
    findings = [host_findings.unreachable(h, "identity", "identity file /home/u/.ssh/id_gone does not exist", 0.0)
                for h in hosts]
    report = Report([HostResult(h.name, h.address, False) for h in hosts], findings, ["ssh"], "", 1.0)
    text = _text(report, 200)
    assert "Problems (1):" in text and "[error] ssh.connect node[1-16]" in text, text
    assert text.count("remedy:") == 1 and text.count("ssh-keygen") == 1


def test_one_cause_on_many_hosts_whose_remedies_name_each_host_is_one_problem() -> None:
    hosts = [Host(f"node{i}", f"10.0.0.{i}") for i in range(1, 4)]
    findings = [host_findings.unreachable(h, "hostkey-unknown", f"host key of {h.address} unknown", 0.0)
                for h in hosts]
    findings.append(host_findings.unreachable(Host("node9", "10.0.0.9", port=2222), "hostkey-unknown", "x", 0.0))
    report = Report([HostResult(h.name, h.address, False) for h in [*hosts, Host("node9", "10.0.0.9")]],
                    findings, ["ssh"], "", 1.0)
    found = problems(report)
    assert [hosts for _, hosts in found] == [["node1", "node2", "node3"], ["node9"]]  # port 2222: another fix
    assert found[0][0].remedy is not None and "10.0.0.1" in found[0][0].remedy
    assert found[0][0].message.endswith("(shown for node1: the other hosts' differ only in their own name or "
                                        "address)")
    assert "[error] ssh.connect node[1-3]" in _text(report, 200)
