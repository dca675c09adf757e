"""A real Slurm on the namespace test cluster: slurmctld here, one slurmd per node namespace.

Every daemon reads a config written into a private folder (``SLURM_CONF`` points srun, salloc and
scontrol at it), authenticates through a private munged (own key and socket), and is stopped by
``down()``. Each node's slurmd runs in the node's network namespace (``nsenter --net``) under its
own NodeName, host name (UTS namespace) and ``/etc/hosts`` (a private mount namespace), so one
machine holds a multi-node Slurm without ``--enable-multiple-slurmd`` and node names resolve on
every node, as on a real cluster.

    with SlurmCluster(netns_cluster, workdir) as slurm:
        subprocess.run(["srun", "-N3", "hostname"], env=slurm.env())
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from netns_cluster import NetnsCluster

__all__ = ["SlurmCluster", "slurm_support_problem"]


def slurm_support_problem() -> str | None:
    """Why a Slurm cannot be started here (missing packages), or None."""
    for tool in ("slurmctld", "slurmd", "srun", "salloc", "scontrol", "munged", "nsenter", "unshare"):
        if shutil.which(tool) is None and not os.access(f"/usr/sbin/{tool}", os.X_OK):
            return f"`{tool}` not found (apt-get install slurm-wlm munge)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        return int(sock.getsockname()[1])


class SlurmCluster:
    """slurmctld + munged in the root namespace, slurmd in every node of ``cluster``."""

    def __init__(self, cluster: NetnsCluster, workdir: Path, prolog: Path | None = None) -> None:
        self.cluster = cluster
        self.dir = Path(workdir)
        self.conf = self.dir / "slurm.conf"
        self.prolog = prolog
        self.pids: list[int] = []

    def env(self, **extra: str) -> dict[str, str]:
        """The environment for srun/salloc/scontrol against this Slurm."""
        return {**os.environ, "SLURM_CONF": str(self.conf), **extra}

    def __enter__(self) -> SlurmCluster:  # noqa: PYI034
        return self.up()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.down()

    def up(self) -> SlurmCluster:
        try:
            self._write_files()
            self._daemon(["munged", "-f", "-S", str(self.dir / "munge.sock"), f"--key-file={self.dir / 'munge.key'}",
                          f"--log-file={self.dir / 'munged.log'}", f"--pid-file={self.dir / 'munged.pid'}",
                          f"--seed-file={self.dir / 'munged.seed'}"], self.dir / "munged.pid")
            self._daemon(["slurmctld", "-c", "-i"], self.dir / "slurmctld.pid")
            for node in self.cluster.nodes:
                # The node's own host name and /etc/hosts (its peers' names resolve, as DNS does on a real
                # cluster) in private UTS and mount namespaces; not `ip netns exec`, whose fresh /sys has no
                # cgroup fs for slurmd.
                script = 'mount --bind "$1" /etc/hosts && hostname "$3" && exec nsenter --net="$2" slurmd -c -N "$3"'
                self._daemon(["unshare", "--mount", "--uts", "--propagation", "private", "sh", "-c", script, "sh",
                              f"/etc/netns/{node.netns}/hosts", f"/run/netns/{node.netns}", node.name],
                             self.dir / f"slurmd-{node.name}.pid")
            self.wait_idle()
        except BaseException:
            self.down()
            raise
        return self

    def _write_files(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        for sub in ("state", "spool"):
            (self.dir / sub).mkdir(exist_ok=True)
        key = self.dir / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        d = self.dir
        lines = [
            "ClusterName=pfslm",
            f"SlurmctldHost={socket.gethostname()}({self.cluster.bridge_address})",
            f"SlurmctldPort={_free_port()}",
            "SlurmdPort=6818",  # each slurmd has its own network namespace
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={d / 'munge.sock'}",
            f"StateSaveLocation={d / 'state'}", f"SlurmdSpoolDir={d / 'spool'}/%n",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}", f"SlurmdPidFile={d / 'slurmd-%n.pid'}",
            f"SlurmctldLogFile={d / 'slurmctld.log'}", f"SlurmdLogFile={d / 'slurmd-%n.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
            "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "ReturnToService=2", "MpiDefault=none", "SlurmUser=root", "SlurmdUser=root",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
        ]
        if self.prolog:
            lines += [f"Prolog={self.prolog}", "PrologFlags=Alloc"]
        lines += [f"NodeName={n.name} NodeAddr={n.address} CPUs=1 State=UNKNOWN" for n in self.cluster.nodes]
        lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")

    def _daemon(self, argv: list[str], pidfile: Path) -> None:
        proc = subprocess.run(argv, env=self.env(), capture_output=True, text=True, timeout=30, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
        deadline = time.monotonic() + 10
        while not pidfile.exists() or not pidfile.read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv[0]}: no pid file {pidfile}")
            time.sleep(0.05)
        self.pids.append(int(pidfile.read_text().split()[0]))

    def scontrol(self, *args: str) -> str:
        return subprocess.run(["scontrol", *args], env=self.env(), capture_output=True, text=True, timeout=30,
                              check=True).stdout

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Until every node is idle (drained nodes resumed first)."""
        deadline = time.monotonic() + timeout
        while True:
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.env(), capture_output=True,
                                 text=True, timeout=30, check=False).stdout
            states = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
            if len(states) == len(self.cluster.nodes) and all(s == "idle" for s in states.values()):
                return
            for node, state in states.items():
                if state.startswith("drain") or state == "down":
                    subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], env=self.env(),
                                   capture_output=True, timeout=30, check=False)
            if time.monotonic() > deadline:
                log = (self.dir / "slurmctld.log").read_text(errors="replace")[-2000:] \
                    if (self.dir / "slurmctld.log").exists() else ""
                raise RuntimeError(f"slurm nodes not idle within {timeout:.0f} s: {states}\n{log}")
            time.sleep(0.2)

    def down(self) -> None:
        """Cancel jobs and stop every daemon we started (by pid)."""
        subprocess.run(["scancel", "--full", "-u", "root"], env=self.env(), capture_output=True, timeout=30,
                       check=False)
        for pid in reversed(self.pids):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + 10
        for pid in self.pids:
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.pids.clear()
