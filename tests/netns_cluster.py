"""A real multi-node SSH test cluster on one Linux machine.

Every node is a network namespace attached to a bridge in the root namespace and runs its own
OpenSSH ``sshd`` in a private UTS namespace (own hostname) and a private mount namespace
(``/etc/netns/<ns>/*`` bound over ``/etc/*`` by ``ip netns exec``, ``workdir/<node>/ascend``
bound over ``/usr/local/Ascend``, and ``workdir/<node>/nvidia`` over ``/usr/local/nvidia``).
Needs root, iproute2, util-linux and openssh-server.

Library use (e.g. from a pytest fixture)::

    with NetnsCluster(4) as cluster:
        hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")

Script use::

    python tests/netns_cluster.py up --size 4 --name demo
    python tests/netns_cluster.py down --name demo
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeAlias

__all__ = ["NetnsCluster", "Node", "cluster_support_problem"]

ASCEND_MOUNTPOINT = Path("/usr/local/Ascend")
_SHELL_STARTUP_FILES = ("/root/.bashrc", "/root/.profile", "/root/.bash_profile", "/root/.bash_login")
# Present while /usr/local/Ascend exists only because a cluster created it (removed again by down()).
_ASCEND_MARKER = Path("/run/preflight-netns-cluster-created-usr-local-ascend")
# Optional: each node's own /usr/local/nvidia (NVIDIA container toolkit layout: bin/nvidia-smi) for GPU simulators.
NVIDIA_MOUNTPOINT = Path("/usr/local/nvidia")
_NVIDIA_MARKER = Path("/run/preflight-netns-cluster-created-usr-local-nvidia")
_NETNS_ETC = Path("/etc/netns")
_PRIVSEP_DIR = Path("/run/sshd")
_SSH_PORT = 22
_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,9}$")  # no "-": keeps "<name>-..." patterns unambiguous
_MAX_SIZE = 244  # node i gets .(10+i) in a /24
_NODE_SYSCTLS = {"net.core.somaxconn": "65535", "net.ipv4.tcp_max_syn_backlog": "65535"}
_START_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Node:
    """One cluster node: ``name`` (also its hostname), network namespace and IPv4 address."""

    name: str
    netns: str
    address: str


NodeRef: TypeAlias = "Node | str"


def _sshd_binary() -> str | None:
    """Path of the sshd binary, or None."""
    if os.access("/usr/sbin/sshd", os.X_OK):
        return "/usr/sbin/sshd"
    return shutil.which("sshd")


def cluster_support_problem() -> str | None:
    """Why a cluster cannot be built on this machine, or None when it can."""
    if sys.platform != "linux":
        return "network-namespace cluster needs Linux"
    if os.geteuid() != 0:
        return "network-namespace cluster needs root"
    for tool in ("ip", "unshare", "mount", "hostname", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"`{tool}` not found"
    if _sshd_binary() is None:
        return "sshd binary not found (apt-get install openssh-server)"
    probe = subprocess.run(["ip", "netns", "list"], check=False, capture_output=True, text=True)
    if probe.returncode != 0:
        return f"`ip netns` unusable: {probe.stderr.strip()}"
    return None


def _run(argv: list[str], *, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command with captured text output; on failure raise with its stderr."""
    proc = subprocess.run(argv, check=False, input=input, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}): {shlex.join(argv)}\n{proc.stderr.strip()}")
    return proc


def _run_parallel(jobs: list[tuple[list[str], str | None]]) -> None:
    """Run (argv, stdin) jobs concurrently; raise if any fails."""
    procs = [
        (argv, stdin, subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True))
        for argv, stdin in jobs
    ]
    errors = []
    for argv, stdin, proc in procs:
        _, err = proc.communicate(stdin)
        if proc.returncode != 0:
            errors.append(f"{shlex.join(argv)} ({proc.returncode}): {err.strip()}")
    if errors:
        raise RuntimeError("commands failed:\n" + "\n".join(errors))


def _keygen_argv(path: Path) -> list[str]:
    """ssh-keygen command for a new passphrase-less ed25519 key at ``path``."""
    return ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "preflight-netns-cluster", "-f", str(path)]


def _cmdline(pid: int) -> str:
    """A process's command line with NULs as spaces ("" if gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _pid_running(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


class NetnsCluster:
    """Builds, manipulates and tears down a namespace cluster of ``size`` SSH nodes."""

    def __init__(self, size: int, name: str = "pf", subnet: int = 1, workdir: Path | None = None) -> None:
        if not _NAME_RE.match(name):
            raise ValueError(f"cluster name {name!r} must match {_NAME_RE.pattern} (interface names <= 15 chars)")
        if not 1 <= size <= _MAX_SIZE:
            raise ValueError(f"size must be in 1..{_MAX_SIZE}, got {size}")
        if not 0 <= subnet <= 255:
            raise ValueError(f"subnet must be in 0..255, got {subnet}")
        self.size = size
        self.name = name
        self.subnet = subnet
        self.network = ipaddress.IPv4Network(f"10.213.{subnet}.0/24")
        self.bridge = f"{name}-br"
        self.bridge_address = f"10.213.{subnet}.1"
        self.workdir = Path(workdir) if workdir is not None else Path(f"/tmp/preflight-cluster-{name}")
        self.nodes = [
            Node(name=f"node{i}", netns=f"{name}-node{i}", address=f"10.213.{subnet}.{10 + i}")
            for i in range(1, size + 1)
        ]
        self.client_key = self.workdir / "id_ed25519"
        self.known_hosts = self.workdir / "known_hosts"
        self.authorized_keys = self.workdir / "authorized_keys"
        self.state_file = self.workdir / "state.json"
        self._pids: dict[str, int] = {}
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._load_state()

    # ----------------------------------------------------------------- naming helpers

    def _veth(self, node: Node) -> str:
        """Root-side veth name of ``node`` (e.g. ``pf-3h``)."""
        return f"{self.name}-{node.name.removeprefix('node')}h"

    def node(self, name: str) -> Node:
        """The node called ``name``."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node {name!r} in cluster {self.name!r}")

    def _resolve(self, node: NodeRef) -> Node:
        return self.node(node) if isinstance(node, str) else node

    def _node_dir(self, node: Node) -> Path:
        return self.workdir / node.name

    def _host_key(self, node: Node) -> Path:
        return self._node_dir(node) / "ssh_host_ed25519_key"

    def _sshd_config(self, node: Node) -> Path:
        return self._node_dir(node) / "sshd_config"

    def ascend_root(self, node: NodeRef) -> Path:
        """Directory bind-mounted over /usr/local/Ascend for the node's sshd and its sessions."""
        return self._node_dir(self._resolve(node)) / "ascend"

    def nvidia_root(self, node: NodeRef) -> Path:
        """Directory bind-mounted over /usr/local/nvidia for the node's sshd and its sessions (when it exists)."""
        return self._node_dir(self._resolve(node)) / "nvidia"

    # ----------------------------------------------------------------- lifecycle

    def __enter__(self) -> NetnsCluster:  # noqa: PYI034 (typing.Self needs 3.11)
        return self.up()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.down()

    def up(self) -> NetnsCluster:
        """Build the cluster (after removing leftovers of an earlier run with this name)."""
        problem = cluster_support_problem()
        if problem:
            raise RuntimeError(f"cannot build netns cluster: {problem}")
        self.down()
        self._check_subnet_free()
        try:
            self._prepare_files()
            self._save_state()
            self._create_network()
            for node in self.nodes:
                self._spawn_sshd(node)
            self._save_state()
            self._wait_listening(self.nodes, timeout=max(10.0, 0.25 * self.size))
        except BaseException:
            self.down()
            raise
        return self

    def down(self) -> None:
        """Kill sshds and remove namespaces, bridge, veths and /etc/netns dirs. Idempotent."""
        netns = self._existing_netns()
        pids = set(self._our_sshd_pids())
        pids.update(pid for pid in self._pids.values() if self._is_our_sshd(pid))
        for ns in netns:
            out = _run(["ip", "netns", "pids", ns], check=False).stdout
            pids.update(int(p) for p in out.split() if p.isdigit())
        pids.discard(os.getpid())
        self._kill(pids)
        self._pids.clear()

        links = self._existing_links()
        batch = [f"link del {link}" for link in links if link != self.bridge]
        batch += [f"link del {self.bridge}"] if self.bridge in links else []
        batch += [f"netns del {ns}" for ns in netns]
        if batch:
            _run(["ip", "-force", "-batch", "-"], input="\n".join(batch) + "\n", check=False)

        if _NETNS_ETC.is_dir():
            pattern = re.compile(rf"^{re.escape(self.name)}-node\d+$")
            for entry in _NETNS_ETC.iterdir():
                if pattern.match(entry.name):
                    shutil.rmtree(entry, ignore_errors=True)
            try:
                _NETNS_ETC.rmdir()  # only succeeds when empty
            except OSError:
                pass
        self._maybe_remove_ascend_mountpoint()
        _remove_created_mountpoint(NVIDIA_MOUNTPOINT, _NVIDIA_MARKER)
        self.state_file.unlink(missing_ok=True)

    # ----------------------------------------------------------------- node operations

    def exec(self, node: NodeRef, argv: list[str], check: bool = True,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` in the node's network namespace (not its UTS/Ascend view; use ssh for that)."""
        node = self._resolve(node)
        return _run(["ip", "netns", "exec", node.netns, *argv], input=input, check=check)

    def sysctl(self, node: NodeRef, key: str, value: str) -> None:
        """``sysctl -w key=value`` inside the node's network namespace."""
        self.exec(node, ["sysctl", "-q", "-w", f"{key}={value}"])

    def stop_sshd(self, node: NodeRef) -> None:
        """Stop the node's sshd listener (existing sessions survive); port 22 then refuses."""
        node = self._resolve(node)
        pid = self._pids.pop(node.name, None)
        pids = {p for p in self._our_sshd_pids(node) if p != os.getpid()}
        if pid is not None and self._is_our_sshd(pid, node):
            pids.add(pid)
        self._kill(pids)
        self._save_state()

    def start_sshd(self, node: NodeRef) -> None:
        """Start the node's sshd (no-op if running) and wait until port 22 accepts."""
        node = self._resolve(node)
        pid = self._pids.get(node.name)
        if pid is None or not self._is_our_sshd(pid, node):
            self._spawn_sshd(node)
            self._save_state()
        self._wait_listening([node], timeout=_START_TIMEOUT_S)

    def rotate_host_key(self, node: NodeRef) -> None:
        """Give the node a fresh host key and restart sshd; known_hosts is left stale on purpose."""
        node = self._resolve(node)
        key = self._host_key(node)
        key.unlink(missing_ok=True)
        key.with_suffix(".pub").unlink(missing_ok=True)
        _run(_keygen_argv(key))
        self.stop_sshd(node)
        self.start_sshd(node)

    def restore_host_key(self, node: NodeRef) -> None:
        """Put the node's original host key back and restart sshd."""
        node = self._resolve(node)
        key = self._host_key(node)
        shutil.copy2(f"{key}.orig", key)
        shutil.copy2(f"{key}.orig.pub", f"{key}.pub")
        self.stop_sshd(node)
        self.start_sshd(node)

    def hide_binary(self, node: NodeRef, path: str) -> None:
        """Make ``path`` (e.g. /usr/bin/ss) an empty non-executable file for the node's SSH sessions only.

        Bind-mounts over it inside the node's private mount namespace (its sshd's); undo with ``unhide_binary``.
        """
        node = self._resolve(node)
        empty = self._node_dir(node) / "hidden-binary"
        empty.write_text("")
        empty.chmod(0o644)
        _run(["nsenter", "-t", str(self._pids[node.name]), "-m", "--", "mount", "--bind", str(empty), path])

    def bind_over(self, node: NodeRef, source: Path, path: str) -> None:
        """Show ``source`` at ``path`` (e.g. a simulator over /usr/bin/dmesg) to the node's SSH sessions only.

        Like ``hide_binary``, a bind mount inside the node's private mount namespace; undo with ``unhide_binary``.
        """
        node = self._resolve(node)
        _run(["nsenter", "-t", str(self._pids[node.name]), "-m", "--", "mount", "--bind", str(source), path])

    def read_only_proc_sys(self, node: NodeRef) -> None:
        """Mount /proc/sys read-only for the node's SSH sessions, as runc does in a container (moby/moby#5529):
        a read-only bind of itself in the node's private mount namespace; undo with ``unhide_binary("/proc/sys")``."""
        node = self._resolve(node)
        enter = ["nsenter", "-t", str(self._pids[node.name]), "-m", "--"]
        _run([*enter, "mount", "--bind", "/proc/sys", "/proc/sys"])
        _run([*enter, "mount", "-o", "remount,bind,ro", "/proc/sys"])

    def unhide_binary(self, node: NodeRef, path: str) -> None:
        """Undo ``hide_binary`` (no error if it was not hidden)."""
        node = self._resolve(node)
        _run(["nsenter", "-t", str(self._pids[node.name]), "-m", "--", "umount", path], check=False)

    def set_etc_file(self, node: NodeRef, filename: str, content: str) -> None:
        """Write /etc/netns/<ns>/<filename>, seen as /etc/<filename> by later sessions on the node.

        An existing file is rewritten in place (same inode), so the bind mount that ``ip netns exec``
        made when sshd started shows the new content.  A file that did not exist yet is only bound at
        sshd start, so sshd is restarted in that case (and /etc/<filename> must exist on the host).
        """
        node = self._resolve(node)
        if "/" in filename or filename in ("", ".", ".."):
            raise ValueError(f"invalid /etc file name {filename!r}")
        path = _NETNS_ETC / node.netns / filename
        is_new = not path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:  # truncate in place: never replace the inode
            f.write(content)
        if is_new and node.name in self._pids:
            self.stop_sshd(node)
            self.start_sshd(node)

    def write_hosts_yaml(self, path: Path, *, nodes: list[Node] | None = None,
                         cluster: dict[str, Any] | None = None,
                         extra_defaults: dict[str, Any] | None = None) -> Path:
        """Write a preflight hosts file for ``nodes`` (default: all) and return its path."""
        import yaml

        defaults: dict[str, Any] = {
            "user": "root",
            "port": _SSH_PORT,
            "identity_file": str(self.client_key),
            "known_hosts": str(self.known_hosts),
            "python": sys.executable,
        }
        defaults.update(extra_defaults or {})
        cluster_section: dict[str, Any] = {"accelerator": "cpu", "devices_per_host": 1}
        cluster_section.update(cluster or {})
        doc = {
            "defaults": defaults,
            "cluster": cluster_section,
            "hosts": [{"name": n.name, "address": n.address} for n in (self.nodes if nodes is None else nodes)],
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path

    # ----------------------------------------------------------------- building blocks

    def _check_subnet_free(self) -> None:
        """Refuse to build if an interface already has an address in, or a network inside, our /24."""
        out = _run(["ip", "-o", "-4", "addr", "show"]).stdout
        for line in out.splitlines():
            fields = line.split()
            if "inet" not in fields:
                continue
            iface = ipaddress.IPv4Interface(fields[fields.index("inet") + 1])
            if iface.ip in self.network or iface.network.subnet_of(self.network):
                raise RuntimeError(f"{self.network} is already in use on {fields[1]} ({iface}); "
                                   "pick another subnet (or run down for the cluster using it)")

    def _prepare_files(self) -> None:
        """Fresh keys, sshd configs, known_hosts, authorized_keys and /etc/netns files."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        for entry in self.workdir.iterdir():
            if entry.is_dir() and re.fullmatch(r"node\d+", entry.name):
                shutil.rmtree(entry)
        for path in (self.client_key, self.client_key.with_suffix(".pub"), self.known_hosts,
                     self.authorized_keys):
            path.unlink(missing_ok=True)
        for node in self.nodes:
            self.ascend_root(node).mkdir(parents=True)
            self.nvidia_root(node).mkdir(parents=True)

        keys = [self.client_key] + [self._host_key(n) for n in self.nodes]
        _run_parallel([(_keygen_argv(k), None) for k in keys])
        shutil.copy2(self.client_key.with_suffix(".pub"), self.authorized_keys)

        known = []
        for node in self.nodes:
            key = self._host_key(node)
            shutil.copy2(key, f"{key}.orig")
            shutil.copy2(f"{key}.pub", f"{key}.orig.pub")
            keytype, blob = key.with_suffix(".pub").read_text().split()[:2]
            known.append(f"{node.address} {keytype} {blob}\n")
            self._sshd_config(node).write_text(self._sshd_config_text(node))
        self.known_hosts.write_text("".join(known))

        hosts = "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n" + "".join(
            f"{n.address} {n.name}\n" for n in self.nodes)
        for node in self.nodes:
            etc = _NETNS_ETC / node.netns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text(hosts)
            (etc / "hostname").write_text(f"{node.name}\n")

        _PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
        if not ASCEND_MOUNTPOINT.exists():
            ASCEND_MOUNTPOINT.mkdir(parents=True)
            _ASCEND_MARKER.touch()
        if not NVIDIA_MOUNTPOINT.exists():
            try:
                NVIDIA_MOUNTPOINT.mkdir(parents=True)
                _NVIDIA_MARKER.touch()
            except OSError:
                pass  # optional: the nodes then see the machine's /usr/local (no GPU simulators)

    def _sshd_config_text(self, node: Node) -> str:
        d = self._node_dir(node)
        return "\n".join([
            f"ListenAddress {node.address}:{_SSH_PORT}",
            f"HostKey {self._host_key(node)}",
            f"PidFile {d / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "LogLevel ERROR",
            "MaxStartups 200",
            "MaxSessions 50",
            "UseDNS no",
            "Subsystem sftp internal-sftp",
            "",
        ])

    def _create_network(self) -> None:
        """Namespaces, bridge and veths in one ``ip -batch``; per-node addresses and sysctls."""
        batch = [f"netns add {n.netns}" for n in self.nodes]
        batch += [f"link add name {self.bridge} type bridge",
                  f"addr add {self.bridge_address}/24 dev {self.bridge}",
                  f"link set {self.bridge} up"]
        for n in self.nodes:
            batch += [f"link add {self._veth(n)} type veth peer name eth0 netns {n.netns}",
                      f"link set {self._veth(n)} master {self.bridge} up"]
        _run(["ip", "-batch", "-"], input="\n".join(batch) + "\n")

        sysctls = [f"{k}={v}" for k, v in _NODE_SYSCTLS.items()]
        jobs: list[tuple[list[str], str | None]] = []
        for n in self.nodes:
            jobs.append((["ip", "-n", n.netns, "-batch", "-"],
                         f"link set lo up\naddr add {n.address}/24 dev eth0\nlink set eth0 up\n"))
            jobs.append((["ip", "netns", "exec", n.netns, "sysctl", "-q", "-w", *sysctls], None))
        _run_parallel(jobs)

    def _spawn_sshd(self, node: Node) -> None:
        """Start the node's sshd in its netns with its own hostname and Ascend bind mount."""
        sshd = _sshd_binary() or "/usr/sbin/sshd"
        # A node is a clean machine: it does not run this box's shell start-up files (pyenv's init
        # there rehashes under a global lock on every login, which stalls parallel SSH sessions).
        rc = self._node_dir(node) / "shellrc"
        rc.write_text("# test node: no shell start-up of the machine hosting the cluster\n")
        hide_rc = "".join(f" && {{ [ ! -f {f} ] || mount --bind {shlex.quote(str(rc))} {f}; }}"
                          for f in _SHELL_STARTUP_FILES)
        script = (f"hostname {shlex.quote(node.name)}"
                  f" && mount --bind {shlex.quote(str(self.ascend_root(node)))} {ASCEND_MOUNTPOINT}"
                  f" && {{ [ ! -d {NVIDIA_MOUNTPOINT} ] || mount --bind {shlex.quote(str(self.nvidia_root(node)))}"
                  f" {NVIDIA_MOUNTPOINT} || true; }}"
                  f"{hide_rc}"
                  f" && exec {sshd} -D -e -f {shlex.quote(str(self._sshd_config(node)))}")
        with open(self._node_dir(node) / "sshd.log", "ab") as log:
            proc = subprocess.Popen(["ip", "netns", "exec", node.netns, "unshare", "--uts", "--", "sh", "-c", script],
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        self._procs[proc.pid] = proc
        self._pids[node.name] = proc.pid

    def _wait_listening(self, nodes: list[Node], timeout: float) -> None:
        """Wait until every node's port 22 accepts TCP; raise with sshd.log on timeout or death."""
        deadline = time.monotonic() + timeout
        pending = list(nodes)
        while pending:
            for node in list(pending):
                try:
                    socket.create_connection((node.address, _SSH_PORT), timeout=0.5).close()
                    pending.remove(node)
                    continue
                except OSError:
                    pass
                pid = self._pids.get(node.name)
                if pid is None or not _pid_running(pid):
                    raise RuntimeError(f"sshd on {node.name} ({node.netns}) exited:\n{self._sshd_log(node)}")
            if pending:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"sshd not accepting on port {_SSH_PORT} within {timeout:.0f}s: "
                        + "; ".join(f"{n.name} ({n.address}): {self._sshd_log(n)!r}" for n in pending))
                time.sleep(0.02)

    def _sshd_log(self, node: Node) -> str:
        try:
            return (self._node_dir(node) / "sshd.log").read_text(errors="replace").strip()[-2000:]
        except OSError:
            return ""

    # ----------------------------------------------------------------- process and state bookkeeping

    def _is_our_sshd(self, pid: int, node: Node | None = None) -> bool:
        """True if ``pid`` is alive and is a listener sshd of this cluster (of ``node`` if given)."""
        if not _pid_running(pid):
            return False
        cmd = _cmdline(pid)
        if node is not None:
            return f"-f {self._sshd_config(node)} " in f"{cmd} "
        return f"-f {self.workdir}/node" in cmd and "sshd_config" in cmd

    def _our_sshd_pids(self, node: Node | None = None) -> list[int]:
        """Listener sshds of this cluster found in /proc (also those of a crashed earlier run)."""
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and "sshd" in _cmdline(int(entry)) and self._is_our_sshd(int(entry), node):
                pids.append(int(entry))
        return pids

    def _kill(self, pids: set[int]) -> None:
        """SIGTERM ``pids``, SIGKILL what is left after 2 s, and reap those that are our children."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = {p for p in pids if self._poll_alive(p)}
            for pid in alive:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 2.0
            while alive and time.monotonic() < deadline:
                time.sleep(0.01)
                alive = {p for p in alive if self._poll_alive(p)}
            if not alive:
                break
        for pid in pids & self._procs.keys():
            self._procs.pop(pid).wait()

    def _poll_alive(self, pid: int) -> bool:
        """True if ``pid`` still runs (reaping it first if it is our child)."""
        proc = self._procs.get(pid)
        if proc is not None:
            return proc.poll() is None
        return _pid_running(pid)

    def _existing_netns(self) -> list[str]:
        pattern = re.compile(rf"^{re.escape(self.name)}-node\d+$")
        out = _run(["ip", "netns", "list"], check=False).stdout
        return [line.split()[0] for line in out.splitlines() if line.split() and pattern.match(line.split()[0])]

    def _existing_links(self) -> list[str]:
        pattern = re.compile(rf"^{re.escape(self.name)}-(\d+h|br)$")
        out = _run(["ip", "-o", "link", "show"], check=False).stdout
        names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines() if ":" in line]
        return [n for n in names if pattern.match(n)]

    def _maybe_remove_ascend_mountpoint(self) -> None:
        """Remove /usr/local/Ascend if a cluster created it, it is empty, and nothing mounts on it."""
        if not _ASCEND_MARKER.exists():
            return
        try:
            if any(ASCEND_MOUNTPOINT.iterdir()) or _mounted_anywhere(ASCEND_MOUNTPOINT):
                return
            ASCEND_MOUNTPOINT.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            return
        _ASCEND_MARKER.unlink(missing_ok=True)

    def _save_state(self) -> None:
        state = {
            "name": self.name, "size": self.size, "subnet": self.subnet, "workdir": str(self.workdir),
            "nodes": [{"name": n.name, "netns": n.netns, "address": n.address, "pid": self._pids.get(n.name)}
                      for n in self.nodes],
        }
        self.state_file.write_text(json.dumps(state, indent=2) + "\n")

    def _load_state(self) -> None:
        try:
            state = json.loads(self.state_file.read_text())
            self._pids = {n["name"]: int(n["pid"]) for n in state.get("nodes", []) if n.get("pid")}
        except (OSError, ValueError, KeyError, TypeError):
            self._pids = {}

    @classmethod
    def from_state(cls, name: str = "pf", workdir: Path | None = None) -> NetnsCluster:
        """The cluster described by ``workdir/state.json`` (defaults if there is none)."""
        probe = cls(1, name=name, workdir=workdir)
        try:
            state = json.loads(probe.state_file.read_text())
            return cls(int(state["size"]), name=name, subnet=int(state["subnet"]), workdir=probe.workdir)
        except (OSError, ValueError, KeyError, TypeError):
            return probe


def _mounted_anywhere(path: Path) -> bool:
    """True if ``path`` is a mount point in any mount namespace on the machine."""
    seen: set[str] = set()
    target = str(path)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ns = os.readlink(f"/proc/{entry}/ns/mnt")
            if ns in seen:
                continue
            seen.add(ns)
            with open(f"/proc/{entry}/mountinfo") as f:
                if any(line.split()[4] == target for line in f):
                    return True
        except OSError:
            continue
    return False


def _remove_created_mountpoint(mountpoint: Path, marker: Path) -> None:
    """Remove ``mountpoint`` if a cluster created it (``marker``), it is empty, and nothing mounts on it."""
    if not marker.exists():
        return
    try:
        if any(mountpoint.iterdir()) or _mounted_anywhere(mountpoint):
            return
        mountpoint.rmdir()
    except FileNotFoundError:
        pass
    except OSError:
        return
    marker.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``up`` / ``down`` a cluster by hand."""
    parser = argparse.ArgumentParser(description="Network-namespace SSH test cluster for preflight.")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="bring a cluster up (replacing one with the same name)")
    up.add_argument("--size", type=int, default=4)
    up.add_argument("--subnet", type=int, default=1, help="use 10.213.<subnet>.0/24")
    down = sub.add_parser("down", help="tear a cluster down")
    for p in (up, down):
        p.add_argument("--name", default="pf", help="short cluster name (namespace/interface prefix)")
        p.add_argument("--workdir", type=Path, default=None, help="default /tmp/preflight-cluster-<name>")
    args = parser.parse_args(argv)

    if args.command == "down":
        NetnsCluster.from_state(args.name, args.workdir).down()
        print(f"cluster {args.name!r} is down")
        return 0

    problem = cluster_support_problem()
    if problem:
        print(f"cannot build cluster: {problem}", file=sys.stderr)
        return 1
    cluster = NetnsCluster(args.size, name=args.name, subnet=args.subnet, workdir=args.workdir)
    started = time.monotonic()
    try:
        cluster.up()
    except RuntimeError as exc:
        print(f"cannot build cluster: {exc}", file=sys.stderr)
        return 1
    hosts = cluster.write_hosts_yaml(cluster.workdir / "hosts.yaml")
    first = cluster.nodes[0]
    print(f"cluster {cluster.name!r} up in {time.monotonic() - started:.1f}s: "
          + ", ".join(f"{n.name}={n.address}" for n in cluster.nodes))
    print(f"hosts file: {hosts}")
    print(f"  preflight run --hosts {hosts}")
    print(f"  ssh -i {cluster.client_key} -o UserKnownHostsFile={cluster.known_hosts} root@{first.address} hostname")
    print(f"tear down:  {sys.executable} {Path(__file__).resolve()} down --name {cluster.name}"
          + (f" --workdir {args.workdir}" if args.workdir else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
