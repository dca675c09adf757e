"""hosts.yaml parsing: accepted shapes, and errors that name the line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from preflight.checks import known_params
from preflight.inventory import InventoryError, parse_inventory
from preflight.ssh_config import SSHConfigLookup

FULL = """\
defaults:
  user: root
  port: 22
  identity_file: ~/.ssh/id_ed25519
  known_hosts: ~/.ssh/known_hosts
  python: python3
cluster:
  accelerator: npu
  devices_per_host: 8
  master: node2
  master_port: 29500
hosts:
  - name: node1
    address: 10.0.0.11
  - name: node2
    address: 10.0.0.12
    python: /opt/venv/bin/python
checks:
  sysctl:
    min_somaxconn: 4096
"""


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_inventory(text, Path("hosts.yaml"), known_params())


def test_full_example_from_the_issue() -> None:
    inv = parse(FULL)
    assert [h.name for h in inv.hosts] == ["node1", "node2"]
    assert inv.hosts[0].address == "10.0.0.11" and inv.hosts[0].python == "python3"
    assert inv.hosts[1].python == "/opt/venv/bin/python"
    assert inv.hosts[0].identity_file and not inv.hosts[0].identity_file.startswith("~")
    assert inv.cluster.accelerator == "npu" and inv.cluster.devices_per_host == 8
    assert inv.cluster.master == "node2" and inv.cluster.master_port == 29500
    assert inv.params == {"sysctl": {"min_somaxconn": 4096}}


def test_ranges_and_bare_names() -> None:
    inv = parse("hosts:\n  - gpu[01-03]\n  - name: login\n    port: 2222\n")
    assert [h.name for h in inv.hosts] == ["gpu01", "gpu02", "gpu03", "login"]
    assert inv.hosts[0].address == "gpu01" and inv.hosts[3].port == 2222
    assert inv.cluster.master == "gpu01"


def test_check_params_accept_an_int_for_a_float() -> None:
    inv = parse("hosts:\n  - a\nchecks:\n  net:\n    connect_timeout: 2\n")
    assert inv.params == {"net": {"connect_timeout": 2.0}}


def test_bare_list_file() -> None:
    assert [h.name for h in parse("- a\n- b\n").hosts] == ["a", "b"]


def test_ssh_config_is_honoured(tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host n*\n  HostName 10.9.9.9\n  User alice\n  Port 2200\n  ProxyJump bastion\n")
    inv = parse(f"defaults:\n  ssh_config: {config}\n  user: root\nhosts:\n  - n1\n  - name: n2\n    user: bob\n")
    assert (inv.hosts[0].address, inv.hosts[0].user, inv.hosts[0].port) == ("10.9.9.9", "alice", 2200)
    assert inv.hosts[0].proxy_jump == "bastion"
    assert inv.hosts[1].user == "bob", "the host's own entry beats ssh_config"


def test_ssh_config_match_exec_runs_through_the_deferred_invoke(tmp_path: Path) -> None:
    """paramiko runs ``Match exec`` with invoke, which preflight.transport imports only on first use (in a
    child process: invoke reads stdin, which pytest's capture refuses)."""
    config = tmp_path / "ssh_config"
    config.write_text('Match exec "test %h = n1"\n  HostName 10.7.7.1\nMatch exec "false"\n  User nobody\n')
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(f"defaults:\n  ssh_config: {config}\n  user: root\nhosts:\n  - n1\n  - n2\n")
    code = ("import sys; from pathlib import Path; from preflight.inventory import load_inventory; "
            "print([(h.address, h.user) for h in load_inventory(Path(sys.argv[1])).hosts])")
    done = subprocess.run([sys.executable, "-c", code, str(hosts)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.stdout.strip() == "[('10.7.7.1', 'root'), ('n2', 'root')]", done.stderr


def test_paramiko_ssh_config_lookup_leaves_invoke_unimported(tmp_path: Path) -> None:
    """Reading ssh_config with paramiko (no `ssh` client) imports paramiko, but not invoke (~50 ms of start-up)
    until a ``Match exec`` needs it (in a child process: a fresh interpreter's imports)."""
    config = tmp_path / "ssh_config"
    config.write_text("Host n1\n  HostName 10.7.7.1\n")
    code = ("import sys; from pathlib import Path; from preflight.ssh_config import SSHConfigLookup; "
            "lookup = SSHConfigLookup(Path(sys.argv[1])); lookup.ssh = False; "
            "print(lookup('n1'), 'paramiko' in sys.modules, type(sys.modules.get('invoke')).__name__)")
    done = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.stdout.strip() == "{'address': '10.7.7.1'} True _Deferred", done.stderr


@pytest.mark.parametrize("text, line, words", [
    ("hosts:\n  - name: a\n    adress: 1.2.3.4\n", 3, "unknown key 'adress'"),
    ("hosts:\n  - name: a\n    port: ssh\n", 3, "must be an integer"),
    ("hosts:\n  - name: a\n    port: 70000\n", 2, "out of range"),
    ("hosts:\n  - a\n  - b\n  - a\n", 4, "duplicate host 'a' (first on line 2)"),
    ("hosts:\n  - a\ncluster:\n  accelerator: tpu\n", 4, "accelerator must be one of"),
    ("hosts:\n  - a\ncluster:\n  master: z\n", 4, "not one of the hosts"),
    ("hosts:\n  - a\ncluster:\n  master_port: yes\n", 4, "must be an integer"),
    ("hosts: []\n", 1, "non-empty list"),
    ("defaults:\n  user: root\n", 1, "missing 'hosts:'"),
    ("hosts:\n  - name: a\n   address: x\n", 3, "invalid YAML"),
    ("hosts:\n  - node[3-1]\n", 2, "bad host name or range"),
    ("hosts:\n  - name: n[1-2]\n    address: 1.1.1.1\n", 2, "cannot be given for a range"),
    ("hosts:\n  - a\nchecks:\n  sysctl:\n    min_somaxcon: 5\n", 5, "unknown key 'min_somaxcon'"),
    ("hosts:\n  - a\nchecks:\n  sysctl:\n    min_somaxconn: lots\n", 5, "must be int"),
    ("hosts:\n  - a\nchecks:\n  nosuch: {}\n", 4, "unknown key 'nosuch'"),
    ("hosts:\n  - {user: x}\n", 2, "needs 'name'"),
    ("", 1, "empty"),
    ("hosts:\n  - &x a\n  - *x\n", 3, "aliases are not supported"),
    ("hosts:\n  - name: [a, b]\n", 2, "must be a single value"),
])
def test_malformed_files_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(InventoryError) as info:
        parse(text)
    message = str(info.value)
    assert message.startswith(f"hosts.yaml:{line}: "), message
    assert words in message, message


def test_yaml_bomb_is_rejected_quickly() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)) + "hosts: *j\n"
    with pytest.raises(InventoryError):
        parse(bomb)


def test_huge_range_is_refused() -> None:
    with pytest.raises(InventoryError, match="more than"):
        parse("hosts:\n  - n[1-99999999]\n")


# --- the user's OpenSSH setup (preflight.ssh_config) -------------------------------------------------------------

needs_ssh = pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client")


@needs_ssh
def test_ssh_g_resolves_include_and_match_and_keeps_precedence(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "cluster.conf").write_text(
        "Host gpu*\n  HostName %h.cluster.example\n  User trainer\n"
        "Match originalhost gpu2\n  Port 2202\n  ProxyJump jumper\n"
        "Host jumper\n  HostName 10.1.2.3\n  User ops\n")
    config = tmp_path / "config"
    config.write_text(f"Include {tmp_path}/conf.d/*.conf\n")
    inv = parse(f"defaults:\n  ssh_config: {config}\n  user: root\n  port: 2222\n"
                "hosts:\n  - gpu1\n  - name: gpu2\n    user: bob\n  - other\n")
    gpu1, gpu2, other = inv.hosts
    assert (gpu1.address, gpu1.user, gpu1.port) == ("gpu1.cluster.example", "trainer", 2222), \
        "OpenSSH's default port 22 does not override defaults.port"
    assert (gpu2.address, gpu2.user, gpu2.port) == ("gpu2.cluster.example", "bob", 2202)
    assert gpu2.proxy_jump == "ops@10.1.2.3" and gpu1.proxy_jump is None
    assert (other.address, other.user, other.port) == ("other", "root", 2222)
    assert inv.ssh_source.startswith("ssh -G")


@needs_ssh
def test_openssh_only_settings_and_cert_authority_are_noticed(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("@cert-authority *.ca.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QER"
                     "ITFBUWFxgZGhscHR4f\n")
    config = tmp_path / "config"
    config.write_text(f"Host k1\n  GSSAPIAuthentication yes\nHost *\n  UserKnownHostsFile {known}\n")
    inv = parse(f"defaults:\n  ssh_config: {config}\nhosts:\n  - k1\n  - n1.ca.example\n  - plain\n")
    assert [h.openssh_reason for h in inv.hosts] == ["GSSAPIAuthentication yes", f"@cert-authority in {known}", None]
    assert inv.hosts[2].known_hosts == str(known)


def test_without_an_ssh_client_paramiko_reads_the_config_and_says_so(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("Host n1\n  HostName 10.9.9.1\n  ProxyCommand nc %h %p\n")
    lookup = SSHConfigLookup(str(config), ssh="")
    assert lookup("n1") == {"address": "10.9.9.1", "proxy_command": "nc 10.9.9.1 22"}
    assert "paramiko" in lookup.source and "Include" in lookup.source


def test_proxy_command_tokens_are_expanded(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("Host n1\n  HostName 10.9.9.1\n  ProxyCommand ssh -W %h:%p -l %r gw\n")
    inv = parse(f"defaults:\n  ssh_config: {config}\n  user: alice\n  port: 2200\nhosts:\n  - n1\n")
    assert inv.hosts[0].proxy_command == "ssh -W 10.9.9.1:2200 -l alice gw"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_default_user_is_the_local_user_as_in_openssh() -> None:
    """As a non-root user (``nobody``, after the imports), a hosts.yaml without ``user:`` logs in as that user."""
    code = ("import os; from preflight.inventory import parse_inventory; os.setgroups([]); os.setgid(65534); "
            "os.setuid(65534); print(parse_inventory('hosts:\\n  - n1\\n').hosts[0].user)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60, cwd=Path(__file__).resolve().parents[1],
                          env={**os.environ, "HOME": "/nonexistent", "USER": "root", "LOGNAME": "root"})
    assert done.stdout.strip() == "nobody", done.stderr


def test_a_revoked_key_line_sends_its_host_to_openssh(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("@revoked 10.0.0.7 ssh-ed25519 "
                     "AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f\n")
    inv = parse(f"defaults:\n  known_hosts: {known}\nhosts:\n  - name: a\n    address: 10.0.0.7\n  - b\n")
    assert [h.openssh_reason for h in inv.hosts] == [f"@revoked in {known}", None]


def test_hosts_files_are_parsed_by_libyaml_when_pyyaml_has_it() -> None:
    """The pure-Python loader took 3.6 ms for 16 hosts (twice per file: events, then nodes), seconds at
    10,000; errors still name their line (the cases above run through whichever loader is there)."""
    import yaml

    from preflight.inventory import SAFE_LOADER

    assert SAFE_LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


def test_plain_names_skip_clustershell_and_expand_as_it_would() -> None:
    """A name without range, set operator, group or glob is taken as is (NodeSet cost ~50 us a name); for any
    such name ClusterShell gives the same single name back, and everything else still goes through it."""
    import random
    import string

    from ClusterShell.NodeSet import NodeSet

    from preflight.inventory import PLAIN_NAME

    rng = random.Random(19)
    alphabet = string.ascii_letters + string.digits + "._:-"
    names = ["node1", "gpu-01.example.com", "10.0.0.1", "fe80::1", "n_1"] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16))) for _ in range(2000)]
    for name in names:
        assert PLAIN_NAME.fullmatch(name)
        assert list(NodeSet(name)) == [name], name
    for pattern in ("node[1-2]", "a,b", "a!b", "a&b", "a^b", "@grp", "x*", "x?", "a b", ""):
        assert not PLAIN_NAME.fullmatch(pattern), pattern
    inventory = parse_inventory("hosts:\n  - name: gpu[01-02]\n  - name: 'a,b'\n  - name: c-3.lan\n")
    assert [h.name for h in inventory.hosts] == ["gpu01", "gpu02", "a", "b", "c-3.lan"]
