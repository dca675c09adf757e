"""Whether a host is a container (read-only evidence), and the sysctl remedies for one (os.container's facts).

A node reached over SSH may be a container (a training image with sshd, a Kubernetes pod). Its ``net.*``
sysctls (somaxconn, tcp_max_syn_backlog, the port ranges) belong to its own network namespace: a value set on
the machine underneath does not reach it, and ``sysctl -w`` inside fails where /proc/sys is read-only
(Docker and Kubernetes mount it so, moby/moby#5529). They are set when the container starts: ``docker run
--sysctl``, the pod's ``securityContext.sysctls``. The sysctl and ports checks read these facts and say so in
their remedies (:func:`container_sysctl_remedy`).

Evidence, read-only: ``/.dockerenv`` (Docker), ``/run/.containerenv`` (Podman, CRI-O), systemd's
``/run/systemd/container`` (its name of the manager), and the cgroup path of process 1 (``/docker/<id>``,
``kubepods``, ``libpod``, ``lxc``; under cgroup v2 a private cgroup namespace shows only ``0::/``, so the
files decide there). The /proc/sys mount line says whether it is read-only.

>>> parse_container(PROBE_SAMPLE)["engine"], parse_container(PROBE_SAMPLE)["proc_sys_ro"]
('docker', True)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.batch import print_file

MARKERS = {"/.dockerenv": "docker", "/run/.containerenv": "podman"}
# Read-only: marker files, systemd's container name, process 1's cgroups (the session's when /proc/1 is
# hidden: hidepid; read with builtins, no exec), and the /proc/sys mount line.
COMMAND = ("for f in /.dockerenv /run/.containerenv; do [ -e \"$f\" ] && echo \"marker $f\"; done; "
           "[ -r /run/systemd/container ] && echo \"systemd $(head -c 64 /run/systemd/container)\"; "
           f"echo '== cgroup'; {{ {print_file('/proc/1/cgroup')}; }} 2>/dev/null || "
           f"{{ {print_file('/proc/self/cgroup')}; }} 2>/dev/null; "
           "echo '== mounts'; grep -E '^[^ ]+ /proc/sys ' /proc/self/mounts 2>/dev/null; true")
# cgroup path pieces -> the engine, most specific first (a pod's cgroup also names its runtime).
# "/docker/<id>", "docker-<id>.scope" (not the host's "docker.service"), "kubepods.slice", "/kubepods/burstable",
# "libpod-<id>.scope", ":cri-containerd:<id>", "/lxc/<name>", "/lxc.payload.<name>".
_CGROUP = ((re.compile(r"(^|[/:])kubepods"), "kubernetes"), (re.compile(r"(^|[/:])libpod"), "podman"),
           (re.compile(r"(^|[/:])docker[-/]"), "docker"), (re.compile(r"cri-containerd"), "containerd"),
           (re.compile(r"(^|/)lxc[./]"), "lxc"))
_SYSTEMD_NAMES = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
PROBE_SAMPLE = ("marker /.dockerenv\n== cgroup\n12:pids:/docker/2403ccfe427f\n0::/system.slice/containerd.service\n"
                "== mounts\nproc /proc/sys proc ro,nosuid,nodev,noexec,relatime 0 0\n")


def parse_container(text: str) -> dict[str, Any]:
    """``{"engine": name or None, "evidence": [...], "proc_sys_ro": bool or None}``. Never raises.

    >>> parse_container("== cgroup\\n0::/init.scope\\n== mounts\\n")
    {'engine': None, 'evidence': [], 'proc_sys_ro': None}
    >>> parse_container("== cgroup\\n11:memory:/kubepods/burstable/pod1f/ab12\\n")["engine"]
    'kubernetes'
    """
    evidence: list[str] = []
    engines: list[str] = []
    proc_sys_ro: bool | None = None
    cgroup_seen = False
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("== "):
            section = line[3:]
            continue
        if not section and line.startswith("marker ") and line[7:] in MARKERS:
            evidence.append(line[7:])
            engines.append(MARKERS[line[7:]])
        elif not section and line.startswith("systemd ") and _SYSTEMD_NAMES.match(line[8:].strip()):
            name = line[8:].strip()
            evidence.append(f"/run/systemd/container: {name}")
            engines.append("podman" if name.startswith("podman") else name)
        elif section == "cgroup" and line.count(":") >= 2:
            path = line.split(":", 2)[2]
            found = next((engine for pattern, engine in _CGROUP if pattern.search(path)), None)
            if found:
                if not cgroup_seen:  # one path is evidence enough: the others name the same container
                    evidence.append(f"cgroup {path[:120]}")
                    cgroup_seen = True
                engines.append(found)
        elif section == "mounts":
            fields = line.split()
            if len(fields) >= 4 and fields[1] == "/proc/sys":
                proc_sys_ro = "ro" in fields[3].split(",")
    engine: str | None = next((e for _, e in _CGROUP if e in engines), engines[0] if engines else None)
    return {"engine": engine, "evidence": evidence, "proc_sys_ro": proc_sys_ro}


def container_sysctl_remedy(container: Mapping[str, Any] | None, key: str, value: str, on_host: str) -> str:
    """The remedy for a ``net.*`` sysctl: ``on_host`` (the sysctl -w line) on a machine, the container's own
    settings on a container (its network namespace), with ``on_host`` kept for host networking.

    >>> container_sysctl_remedy({"engine": None}, "net.core.somaxconn", "4096", "sysctl -w ...")
    'sysctl -w ...'
    >>> print(container_sysctl_remedy({"engine": "docker", "proc_sys_ro": True}, "net.core.somaxconn", "4096",
    ...                               "sysctl -w net.core.somaxconn=4096"))  # doctest: +NORMALIZE_WHITESPACE
    this host is a container (docker): net.* sysctls belong to its network namespace, set when it starts
    (sysctl -w inside fails: /proc/sys is read-only): docker run --sysctl net.core.somaxconn=4096; Kubernetes:
    the pod's securityContext.sysctls [{name: net.core.somaxconn, value: "4096"}] (an unsafe sysctl: the
    kubelet must allow it with --allowed-unsafe-sysctls=net.core.somaxconn); with host networking
    (--network host, hostNetwork: true) set it on the machine instead: sysctl -w net.core.somaxconn=4096
    """
    engine = (container or {}).get("engine")
    if not engine:
        return on_host
    read_only = " (sysctl -w inside fails: /proc/sys is read-only)" if (container or {}).get("proc_sys_ro") else ""
    unsafe = "" if key in K8S_SAFE_SYSCTLS else \
        f" (an unsafe sysctl: the kubelet must allow it with --allowed-unsafe-sysctls={key})"
    return (f"this host is a container ({engine}): net.* sysctls belong to its network namespace, set when it "
            f"starts{read_only}: docker run --sysctl {key}={value}; Kubernetes: the pod's securityContext.sysctls "
            f"[{{name: {key}, value: \"{value}\"}}]{unsafe}; with host networking (--network host, hostNetwork: "
            f"true) set it on the machine instead: {on_host}")


# Kubernetes' safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go, v1.29: ip_local_reserved_ports on kernels >= 3.16):
# a pod may set these without the kubelet's --allowed-unsafe-sysctls.
K8S_SAFE_SYSCTLS = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                              "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
                              "net.ipv4.ip_local_reserved_ports"})


def container_of(other_facts: Mapping[str, Mapping[str, Any]], host: str) -> Mapping[str, Any] | None:
    """os.container's facts of ``host`` from an EvalContext's ``other_facts``; None when it did not run.

    >>> container_of({"os.container": {"n1": {"engine": "docker"}}}, "n1"), container_of({}, "n1")
    ({'engine': 'docker'}, None)
    """
    found: Mapping[str, Any] | None = other_facts.get("os.container", {}).get(host)
    return found
