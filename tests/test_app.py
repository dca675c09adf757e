"""The application layer: check selection (one place, transitive needs) and usage errors before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import preflight

from preflight.app import RunRequest, UsageError, known_items, prepare, select_checks
from preflight.checks import all_checks
from preflight.checks.base import finding_ids
from preflight.explain.catalog import CATALOG


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
    with pytest.raises(UsageError, match="unknown check 'sysctlx'"):
        select_checks(["sysctlx"], [])


@pytest.mark.parametrize("scope", [None, "node"])
def test_a_typo_in_an_id_is_a_usage_error_with_a_did_you_mean(scope: str | None) -> None:
    """Only the family part was validated: `--checks sysctl.somaxcon` selected nothing and passed."""
    with pytest.raises(UsageError) as raised:
        select_checks(["sysctl.somaxcon"], [], scope)
    assert str(raised.value) == "unknown check 'sysctl.somaxcon' (did you mean sysctl.somaxconn?)"
    with pytest.raises(UsageError, match="unknown check 'os.shmm' \\(did you mean os.shm\\?\\)"):
        select_checks([], ["os.shmm"], scope)  # --skip too
    with pytest.raises(UsageError, match="'zzz' \\(see `preflight list-checks`\\)"):
        select_checks(["zzz"], [], scope)


def test_skipping_a_finding_id_keeps_its_check_and_drops_only_that_id() -> None:
    chosen = select_checks(["sysctl"], ["sysctl.somaxconn"])
    assert [c.ident for c in chosen.checks] == ["versions", "sysctl"]
    assert chosen.only == ("sysctl",) and chosen.dropped == ("sysctl.somaxconn",)
    everything = select_checks([], ["sysctl.somaxconn"])  # the default set, sysctl in it
    assert "sysctl" in [c.ident for c in everything.checks] and everything.dropped == ("sysctl.somaxconn",)


def test_skipping_a_family_or_a_check_drops_the_check() -> None:
    assert "firewall" not in idents([], ["firewall"])
    skipped = select_checks([], ["sysctl"])  # still gathered for ports (its ephemeral range), never reported
    assert "sysctl" in [c.ident for c in skipped.checks] and "sysctl" not in skipped.only and skipped.only
    assert {"gpu.fabric"} & set(idents(["gpu"], ["gpu.fabric"])) == set()
    assert "gpu.devices" in idents(["gpu"], ["gpu.fabric"])
    assert select_checks([], ["gpu.fabric"]).dropped == ()


def test_selecting_a_finding_id_reports_only_that_id() -> None:
    chosen = select_checks(["gpu.devices.ecc"], [])
    assert [c.ident for c in chosen.checks] == ["gpu.devices"] and chosen.only == ("gpu.devices.ecc",)
    assert "npu" in idents(["npu.devices"], [])  # the accelerator skip id is an id of its check


def test_a_selection_that_leaves_nothing_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no check left to run"):
        select_checks(["sysctl"], ["sysctl"])


def test_every_declared_id_selects_its_own_check() -> None:
    for check in all_checks():
        for item in finding_ids(check):
            assert item.split(".")[0] == check.family, item
            assert check.ident in idents([item], []), item


def test_explain_verifies_with_known_checks() -> None:
    """`explain --hosts` runs `--checks` from its catalog: every id there must be one select_checks accepts."""
    known = known_items(all_checks())
    for signature in CATALOG:
        assert set(signature.checks) <= known, (signature.id, set(signature.checks) - known)


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


@pytest.mark.parametrize("command", [["run"], ["node"]])
def test_cli_typo_exits_2_with_a_did_you_mean(command: list[str], tmp_path: Path) -> None:
    """`--checks sysctl.somaxcon` printed "No problems found" and exited 0; `node` would check nothing."""
    for option in ("--checks", "--skip"):
        proc = preflight(*command, option, "sysctl.somaxcon", "--report-dir", tmp_path / "r") \
            if command == ["run"] else preflight(*command, option, "sysctl.somaxcon")
        assert proc.returncode == 2, proc.stdout
        assert "preflight: unknown check 'sysctl.somaxcon' (did you mean sysctl.somaxconn?)" in proc.stderr
    assert not (tmp_path / "r").exists(), "nothing ran"


@pytest.mark.parametrize("command", [["run"], ["node"]])
def test_cli_skip_of_an_id_keeps_the_rest_of_its_check(command: list[str], tmp_path: Path) -> None:
    """`--skip sysctl.somaxconn` dropped the whole sysctl family; now only that id (on this machine, no SSH)."""
    extra = ["--report-dir", str(tmp_path / "r")] if command == ["run"] else []
    proc = preflight(*command, "--checks", "sysctl", "--skip", "sysctl.somaxconn", "--json", *extra)
    assert proc.returncode in (0, 1, 4), proc.stderr
    reported = {f["check"] for f in json.loads(proc.stdout)["findings"]}
    assert {"sysctl.tcp_max_syn_backlog", "sysctl.port_range"} <= reported
    assert "sysctl.somaxconn" not in reported


def test_cli_node_takes_the_rank_count_from_ranks_or_slurm() -> None:
    def somaxconn(*args: str, env: dict[str, str] | None = None) -> dict[str, str]:
        proc = preflight("node", "--checks", "sysctl.somaxconn", "--json", "--devices-per-host", "8", *args,
                         env={"SLURM_JOB_NUM_NODES": "", "SLURM_NTASKS": "", "SLURM_JOB_NODELIST": "", **(env or {})})
        assert proc.returncode in (0, 1, 4), proc.stderr
        found = [f for f in json.loads(proc.stdout)["findings"] if f["check"] == "sysctl.somaxconn"]
        assert len(found) == 1
        return dict(found[0])

    assert "rank count is unknown" in somaxconn()["message"]
    big = somaxconn("--ranks", "100000")
    assert big["expected"] == ">= 200000" and "2 x 100000 ranks (--ranks 100000)" in big["message"]
    slurm = somaxconn(env={"SLURM_JOB_NUM_NODES": "64"})
    assert slurm["expected"] == ">= 1024" and "SLURM_JOB_NUM_NODES=64 x 8 devices" in slurm["message"]


def test_an_id_of_a_check_off_the_accelerator_says_why_nothing_ran(tmp_path: Path) -> None:
    proc = preflight("run", "--checks", "gpu.devices.smi", "--accelerator", "cpu", "--json", "--report-dir",
                     tmp_path / "r")
    skips = [f for f in json.loads(proc.stdout)["findings"] if f["check"] == "gpu.devices"]
    assert proc.returncode == 0 and [f["status"] for f in skips] == ["skip"], proc.stdout
    assert "not a gpu cluster" in skips[0]["message"]


def test_cli_builds_only_the_named_command_and_keeps_help_and_errors() -> None:
    """`for_argv` gives typer only the command argv names (~12 ms less start-up per prolog run); everything
    else still sees the whole app: top-level help lists every command, a mistyped one is still refused."""
    from preflight import cli

    every = {cli.command_name(c) for c in cli.app.registered_commands}
    assert [c.callback for c in cli.for_argv(["run", "--json"]).registered_commands] == [cli.run]
    assert cli.for_argv(["baseline", "save"]).registered_groups[0].name == "baseline"
    assert len(cli.app.registered_commands) == len(every) > 5, "the module's app is never trimmed"
    help_text = preflight("--help").stdout
    assert every | {"bench", "baseline"} <= {word.strip("│ ") for line in help_text.splitlines()
                                            for word in line.split()[:2]}
    typo = preflight("runn")
    assert typo.returncode == 2 and "No such command 'runn'" in typo.stderr
    assert preflight("run", "--help").returncode == 0
