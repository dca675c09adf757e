"""Security on the real namespace cluster: hostile values stay inert, runs are read-only, secrets are masked, --sudo.

Hostile strings from hosts.yaml and the environment try to ``touch`` marker files; none may appear. A full run
(every check, reachability and all_reduce included) must leave each node's sysctls, firewall rules, listening
sockets and files as they were. Reports never show a secret. ``--sudo`` never waits for a password.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_runner import preflight
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

from preflight.checks import all_checks

pytestmark = pytest.mark.cluster

SUDO_USER = "pfsudo"
SUDOERS = Path(f"/etc/sudoers.d/{SUDO_USER}-preflight-test")
SECRET = "pfsecSecretValue42"
PASSWORD = "hunter2hunter2"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfsec", subnet=41)


def run_json(hosts: Path, tmp_path: Path, *extra: str, env: dict[str, str] | None = None
             ) -> tuple[int, dict[str, Any], float]:
    start = time.monotonic()
    proc = preflight("run", "--hosts", hosts, "--json", "--report-dir", tmp_path / "report", *extra, env=env)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout), time.monotonic() - start


def statuses(report: dict[str, Any], check: str) -> dict[str | None, str]:
    return {f["host"]: f["status"] for f in report["findings"] if f["check"] == check}


# --- hostile values ---------------------------------------------------------------------------------------------


def hostile(marker: str) -> list[str]:
    """Strings that would create ``marker-<i>`` if any shell evaluated them unquoted."""
    return [f"eth0; touch {marker}-1", f"$(touch {marker}-2)", f"`touch {marker}-3`",
            f"'\"; touch {marker}-4 #", f"eth0\ntouch {marker}-5", f"eth0 && touch {marker}-6 &",
            f"$(touch {marker}-7)'$(touch {marker}-8)'"]


def test_hostile_values_are_never_executed(cluster: NetnsCluster, tmp_path: Path) -> None:
    marker = f"/tmp/pfsec-pwned-{os.getpid()}"
    values = hostile(marker)
    names = ["NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "RANK_TABLE_FILE",
             "CUDA_VISIBLE_DEVICES", "MY_VAR"]
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"master_port": 29500},
                                     extra_defaults={"env": dict(zip(names, values, strict=True))})
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][1]["python"] = f"python3; touch {marker}-9"
    doc["hosts"][2]["env"] = {"NCCL_SOCKET_IFNAME": f"$(touch {marker}-10)", "HCCL_IF_IP": f"`touch {marker}-11`"}
    hosts.write_text(yaml.safe_dump(doc))
    local_env = dict(zip(names, reversed(values), strict=True))
    try:
        code, report, _ = run_json(hosts, tmp_path, env=local_env)
        code_npu, report_npu, _ = run_json(hosts, tmp_path, "--checks", "hccn,npu,net,nccl", env=local_env)
        bad_pattern = preflight("run", "--hosts", hosts, "--rank-table", f"{marker}-12; touch {marker}-13",
                                env=local_env)
    finally:
        found = sorted(str(p) for p in Path("/tmp").glob(f"pfsec-pwned-{os.getpid()}-*"))
        for path in found:
            Path(path).unlink()
    assert found == [], "a hostile value was executed"
    assert code in (0, 1, 4) and code_npu in (0, 1, 4)
    assert [h["name"] for h in report["hosts"] if h["reachable"]] == ["node1", "node2", "node3"]
    assert statuses(report, "sysctl.somaxconn") == dict.fromkeys(["node1", "node2", "node3"], "pass")
    assert statuses(report, "versions.python")["node2"] == "error", "the hostile python path is just a bad path"
    assert report_npu["hosts"] and all(h["reachable"] for h in report_npu["hosts"])
    assert bad_pattern.returncode == 2 and "cannot read the rank table" in bad_pattern.stderr


# --- read-only ------------------------------------------------------------------------------------------------------

_VOLATILE = re.compile(r"conntrack_count|\.random\.|_stat|\bnr\b|dentry|inode-|file-nr|ns_last_pid")
_TEMP_NAME = re.compile(r"^(tmp\.|preflight)")


def node_snapshot(cluster: NetnsCluster, node: str) -> dict[str, Any]:
    """net.* sysctls (the node's own; the rest are machine-wide), firewall rules, listeners, Ascend files."""
    sysctls = [line for line in cluster.exec(node, ["sysctl", "-a"], check=False).stdout.splitlines()
               if line.startswith("net.") and not _VOLATILE.search(line)]
    rules = [re.sub(r"\[\d+:\d+\]", "", line) for line in cluster.exec(node, ["iptables-save"]).stdout.splitlines()
             if not line.startswith("#")]
    nft = cluster.exec(node, ["nft", "list", "ruleset"], check=False).stdout
    sockets = cluster.exec(node, ["ss", "-Hltnu"]).stdout.splitlines()  # netid state recv-q send-q local peer
    listening = sorted(f"{fields[0]} {fields[4]}" for fields in map(str.split, sockets) if len(fields) > 4)
    return {"sysctls": sysctls, "iptables": rules, "nft": nft, "listening": listening,
            "ascend": tree_hash(cluster.ascend_root(node))}


def tree_hash(root: Path) -> dict[str, str]:
    """path -> sha256 of content and mode, for every file and directory under ``root``."""
    out = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path.relative_to(root))] = hashlib.sha256(data + oct(stat.st_mode).encode()).hexdigest()
    return out


def temp_leftovers(before: set[str]) -> set[str]:
    """Entries of /tmp that look like a probe's scratch folder and were not there before.

    /tmp is shared with everything else on the machine (other test runs): an entry only counts as left over
    when it is still there 30 s later; a leak never goes away.
    """
    deadline = time.monotonic() + 30
    while True:
        new = {p.name for p in Path("/tmp").iterdir() if _TEMP_NAME.match(p.name)} - before
        if not new or time.monotonic() > deadline:
            return new
        time.sleep(0.5)


def test_full_run_changes_nothing_on_the_nodes(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"master_port": 29500})
    doc = yaml.safe_load(hosts.read_text())
    doc["checks"] = {"allreduce": {"sizes_mib": [1], "warmup": 1, "iters": 1, "trials": 1, "budget_s": 2.0}}
    hosts.write_text(yaml.safe_dump(doc))
    every = ",".join(c.ident for c in all_checks())
    before = {n.name: node_snapshot(cluster, n.name) for n in cluster.nodes}
    temp_before = {p.name for p in Path("/tmp").iterdir() if _TEMP_NAME.match(p.name)}
    code, report, seconds = run_json(hosts, tmp_path, "--checks", every)
    after = {n.name: node_snapshot(cluster, n.name) for n in cluster.nodes}
    assert before["node1"]["sysctls"] and "net.core.somaxconn = 65535" in before["node1"]["sysctls"]
    assert any(address.endswith(":22") for address in before["node1"]["listening"]), "the snapshot sees sshd"
    assert code in (0, 1, 4) and seconds < 120
    assert {"net.reachability", "allreduce"} <= set(report["checks"])
    assert statuses(report, "net.reachability") == dict.fromkeys(["node1", "node2", "node3"], "pass")
    assert any(f["check"].startswith("allreduce.") and f["status"] == "pass" for f in report["findings"])
    for node in before:
        for key in before[node]:
            assert after[node][key] == before[node][key], f"{node}: {key} changed by the run"
    assert temp_leftovers(temp_before) == set(), "scratch files left in /tmp"


# --- redaction ------------------------------------------------------------------------------------------------------


def test_secrets_are_redacted_in_every_output(cluster: NetnsCluster, tmp_path: Path) -> None:
    leaky = tmp_path / "leaky-python"
    leaky.write_text(f"#!/bin/sh\necho \"boom: DB_PASSWORD={PASSWORD} token {SECRET}\" >&2\nexit 1\n")
    leaky.chmod(0o755)
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml",
                                     extra_defaults={"env": {"HF_TOKEN": SECRET, "NCCL_SOCKET_IFNAME": "eth0"}})
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][0]["python"] = str(leaky)
    hosts.write_text(yaml.safe_dump(doc))
    code, report, _ = run_json(hosts, tmp_path, "--checks", "versions,net")
    terminal = preflight("run", "--hosts", hosts, "--checks", "versions,net", "--report-dir", tmp_path / "term")
    leak = next(f for f in report["findings"] if f["check"] == "versions.python" and f["host"] == "node1")
    assert leak["status"] == "error" and "DB_PASSWORD=***" in leak["message"] and "token ***" in leak["message"]
    texts = {"json": json.dumps(report), "terminal": terminal.stdout + terminal.stderr}
    for directory in (tmp_path / "report", tmp_path / "term"):
        texts.update({str(p): p.read_text(errors="replace") for p in directory.rglob("*") if p.is_file()})
    for name, text in texts.items():
        assert SECRET not in text and PASSWORD not in text, f"secret in {name}"
    assert code == 4 and terminal.returncode == 4


# --- sudo -----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sudo_user(cluster: NetnsCluster) -> Iterator[str]:
    """A machine-wide user ``pfsudo`` who logs in with the cluster key (password `*`: no password, not locked)."""
    if not Path("/usr/bin/sudo").exists():
        pytest.skip("sudo is not installed (apt-get install -y sudo)")
    # sshd reads authorized_keys as the user: let others traverse to it (pytest's folders are 0700), then undo.
    paths = [*reversed(cluster.authorized_keys.parents[:-2]), cluster.authorized_keys]
    modes = {path: path.stat().st_mode & 0o7777 for path in paths}
    subprocess.run(["userdel", "-f", SUDO_USER], check=False, capture_output=True)  # left by a crashed run
    subprocess.run(["useradd", "-M", "-p", "*", "-s", "/bin/sh", SUDO_USER], check=True, capture_output=True)
    try:
        for path, mode in modes.items():
            path.chmod(mode | (0o004 if path == cluster.authorized_keys else 0o001))
        yield SUDO_USER
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
        SUDOERS.unlink(missing_ok=True)
        subprocess.run(["userdel", "-f", SUDO_USER], check=False, capture_output=True)  # -f: sessions may linger


def sudo_hosts(cluster: NetnsCluster, tmp_path: Path) -> Path:
    return cluster.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=cluster.nodes[:2],
                                    extra_defaults={"user": SUDO_USER, "python": "python3"})


def test_sudo_password_prompt_is_a_fast_error(cluster: NetnsCluster, sudo_user: str, tmp_path: Path) -> None:
    SUDOERS.write_text(f"{sudo_user} ALL=(ALL) ALL\n")
    SUDOERS.chmod(0o440)
    try:
        code, report, seconds = run_json(sudo_hosts(cluster, tmp_path), tmp_path, "--checks", "firewall", "--sudo")
    finally:
        SUDOERS.unlink()
    assert seconds < 20, "never waits for a password"
    assert code == 4
    assert statuses(report, "ssh.sudo") == {"node1": "error", "node2": "error"}
    error = next(f for f in report["findings"] if f["check"] == "ssh.sudo")
    assert "password" in error["message"] and "NOPASSWD: ALL" in error["remedy"]
    assert statuses(report, "ssh.connect") == {"node1": "pass", "node2": "pass"}


def test_sudo_without_password_runs_root_probes(cluster: NetnsCluster, sudo_user: str, tmp_path: Path) -> None:
    hosts = sudo_hosts(cluster, tmp_path)
    rule = ["INPUT", "-p", "tcp", "--dport", "29500", "-j", "DROP"]
    cluster.exec("node1", ["iptables", "-I", *rule])  # the master's port, dropped on the master
    SUDOERS.write_text(f"{sudo_user} ALL=(root) NOPASSWD: ALL\n")
    SUDOERS.chmod(0o440)
    try:
        _, plain, _ = run_json(hosts, tmp_path, "--checks", "firewall")
        _, with_sudo, seconds = run_json(hosts, tmp_path, "--checks", "firewall", "--sudo")
        _, as_root, _ = run_json(cluster.write_hosts_yaml(tmp_path / "root.yaml", nodes=cluster.nodes[:2]),
                                 tmp_path, "--checks", "firewall", "--sudo")
    finally:
        SUDOERS.unlink()
        cluster.exec("node1", ["iptables", "-D", *rule])
    assert seconds < 30
    assert statuses(plain, "ssh.sudo") == {}, "no sudo unless asked"
    assert statuses(with_sudo, "ssh.sudo") == {"node1": "pass", "node2": "pass"}, with_sudo["findings"]
    assert {f["observed"] for f in with_sudo["findings"] if f["check"] == "ssh.sudo"} == {"sudo"}
    assert {f["observed"] for f in as_root["findings"] if f["check"] == "ssh.sudo"} == {"root"}
    dropped = {(f["check"], f["host"]) for f in with_sudo["findings"] if f["status"] == "fail"}
    assert {host for _, host in dropped} == {"node1"}, with_sudo["findings"]
    assert dropped == {(f["check"], f["host"]) for f in as_root["findings"] if f["status"] == "fail"}
    assert not any(f["status"] == "fail" for f in plain["findings"]), "without root the rules are not visible"


# --- no secret reaches any output, whichever command writes it --------------------------------------------------

HOSTS_SECRET = "hostsYamlSecret77"  # hosts.yaml env
LAUNCH_SECRETS = ("launchTokenSecret11", "wandbKeySecret22", "argApiKeySecret33", "argHfTokenSecret44")
NODE_SECRET = "nodeOutputSecret55"  # printed by a node's probe
PROCESS_SECRET = "processEnvSecret66"  # the caller's own environment (a prolog's HF_TOKEN, say)
LOG_SECRET = "logLineSecret88"  # a failed run's log, given to explain
URL_SECRETS = ("hostsUrlPass99", "launchUrlPass77", "logUrlPass66")  # scheme://user:PASSWORD@host (issue 35)
DB_PASS_SECRET = "dbPassSecret44"  # MY_DB_PASS on the launch line
ALL_SECRETS = (HOSTS_SECRET, *LAUNCH_SECRETS, NODE_SECRET, PROCESS_SECRET, LOG_SECRET, *URL_SECRETS, DB_PASS_SECRET)


def outputs_of(procs: dict[str, subprocess.CompletedProcess[str]], folder: Path) -> dict[str, str]:
    """Every stream and every file written under ``folder``: name -> text."""
    texts = {f"{name} {stream}": getattr(proc, stream) for name, proc in procs.items()
             for stream in ("stdout", "stderr")}
    texts.update({str(p): p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()})
    return texts


def test_no_command_writes_a_secret(cluster: NetnsCluster, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    leaky = tmp_path / "leaky-python"
    leaky.write_text(f"#!/bin/sh\necho \"boom: DB_PASSWORD={NODE_SECRET}\" >&2\nexit 1\n")
    leaky.chmod(0o755)
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=cluster.nodes[:2],
                                     extra_defaults={"env": {"HF_TOKEN": HOSTS_SECRET, "DATABASE_URL":
                                                             f"postgres://ml:{URL_SECRETS[0]}@db:5432/runs"}})
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][1]["python"] = str(leaky)
    hosts.write_text(yaml.safe_dump(doc))
    env = {"WANDB_API_KEY": PROCESS_SECRET}
    given = tmp_path / "given"  # the test's own inputs: their secrets must not come back in any output
    given.mkdir()
    log = given / "rank0.log"
    log.write_text("socketPollConnect: connect to 10.0.0.1<29500> returned Connection refused, exceeded error retry "
                   f"count after 35 attempts [HF_TOKEN={LOG_SECRET}] https://bob:{URL_SECRETS[2]}@data.example/x\n")
    launch = ["env", f"HF_TOKEN={LAUNCH_SECRETS[0]}", f"WANDB_API_KEY={LAUNCH_SECRETS[1]}",
              f"MY_DB_PASS={DB_PASS_SECRET}", "torchrun", "--nnodes=2", "--nproc-per-node=1", "--master-port=29531",
              "train.py", f"--api-key={LAUNCH_SECRETS[2]}", "--hf-token", LAUNCH_SECRETS[3], "--data",
              f"https://alice:{URL_SECRETS[1]}@data.example/shard"]
    run_dir, term_dir = out / "run", out / "term"
    procs = {
        "run --json": preflight("run", "--hosts", hosts, "--checks", "versions,net", "--json", "--report-dir",
                                run_dir, "--junit", out / "j.xml", "--prometheus", out / "p.prom", "--markdown",
                                out / "m.md", "--record", out / "record", env=env),
        "run": preflight("run", "--hosts", hosts, "--checks", "versions,net", "--report-dir", term_dir, env=env),
        "node --json": preflight("node", "--checks", "sysctl", "--json", "--report-dir", out / "node", env=env),
        "node": preflight("node", "--checks", "sysctl", env=env),
        "diagnose --json": preflight("diagnose", "--hosts", hosts, "--json", "--timeout", "3", "--report-dir",
                                     out / "diag", "--", *launch, env=env),
        "diagnose": preflight("diagnose", "--hosts", hosts, "--timeout", "3", "--report-dir", out / "diag2", "--",
                              *launch, env=env),
        "explain": preflight("explain", log, env=env),
        "explain --json --hosts": preflight("explain", log, "--json", "--hosts", hosts, "--report-dir",
                                            out / "explain", env=env),
    }
    saved = run_dir / "report.json"
    assert procs["run --json"].returncode == 4, procs["run --json"].stderr
    # An older or hand-edited report that still holds secrets is redacted when shown again.
    old = json.loads(saved.read_text())
    old["findings"][0]["message"] = f"HF_TOKEN={HOSTS_SECRET} seen"
    (given / "old.json").write_text(json.dumps(old))
    procs.update({
        "report": preflight("report", given / "old.json", "--terminal", "--html", out / "r.html", "--markdown",
                            out / "r.md", "--junit", out / "r.xml", "--prometheus", out / "r.prom", env=env),
        "diff": preflight("diff", given / "old.json", saved, env=env),
        "diff --json": preflight("diff", given / "old.json", saved, "--json", env=env),
        "baseline save": preflight("baseline", "save", given / "old.json", "--force", "--baseline",
                                   out / "baseline.json", env=env),
        "baseline show": preflight("baseline", "show", "--baseline", out / "baseline.json", env=env),
    })
    texts = outputs_of(procs, out)
    for name, text in texts.items():
        for secret in ALL_SECRETS:
            assert secret not in text, f"{secret} in {name}"
    # The outputs were really written, with the secrets masked where they stood.
    diag = json.loads(procs["diagnose --json"].stdout)["diagnose"]["launch"]["argv"]
    assert "HF_TOKEN=***" in diag and "--api-key=***" in diag and diag[diag.index("--hf-token") + 1] == "***", diag
    assert "MY_DB_PASS=***" in diag and diag[-1] == "https://***@data.example/shard", diag
    versions = next(f for f in json.loads(procs["run --json"].stdout)["findings"]
                    if f["check"] == "versions.python" and f["host"] == "node2")
    assert "DB_PASSWORD=***" in versions["message"]
    assert "nccl.connect_refused" in procs["explain"].stdout and "HF_TOKEN=***" in procs["explain"].stdout
    assert json.loads(procs["explain --json --hosts"].stdout)["report"]["schema"] == "preflight.report/1"
    assert any((out / "record").rglob("*.json")) and (out / "r.html").is_file() and (out / "baseline.json").is_file()
    assert all(procs[name].returncode in (0, 1, 4) for name in procs), {n: p.stderr[-300:] for n, p in procs.items()}
