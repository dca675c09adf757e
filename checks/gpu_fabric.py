"""gpu.fabric: the InfiniBand / RoCE ports NCCL's IB transport will use, from ``ibstat`` and ``ibv_devinfo``.

NCCL picks its RDMA devices itself (or from ``NCCL_IB_HCA``). A port that is not Active (no cable, no
subnet manager), a host whose link layer differs (InfiniBand vs Ethernet/RoCE cannot talk to each other),
a slower port (the ring runs at the slowest link), missing ``/dev/infiniband/uverbs*`` device files (a
container started without ``--device=/dev/infiniband``) or a locked-memory limit that is not unlimited
(``ibv_reg_mr`` fails) make NCCL fall back to TCP sockets or fail at init.

``ibstat`` (infiniband-diags) is read when present, ``ibv_devinfo`` (ibverbs-utils) otherwise or in
addition; both are looked up on PATH, /usr/local/nvidia/bin, /usr/bin and /usr/sbin.
``/sys/class/infiniband`` tells whether there are RDMA devices even when neither tool is installed.
The locked-memory limit comes from the ``os`` check's facts.

Finding ids: gpu.fabric.ports (every port the job uses Active: see ``_used_down``), gpu.fabric.link_layer
(same on every host: fail), gpu.fabric.rate (same on every host: warn), gpu.fabric.devices
(/dev/infiniband/uverbs* present: fail), gpu.fabric.memlock (unlimited on hosts with RDMA devices: fail).

>>> parse_ibstat("CA 'mlx5_0'\\n\\tCA type: MT4129\\n\\tPort 1:\\n\\t\\tState: Active\\n\\t\\tRate: 400\\n"
...              "\\t\\tLink layer: InfiniBand\\n")
[{'name': 'mlx5_0', 'type': 'MT4129', 'ports': [{'port': 1, 'state': 'Active', 'rate': 400, 'link_layer': \
'InfiniBand'}]}]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from preflight.checks.base import *
from preflight.ib_hca import selected_ports
from preflight.tools.common import error_text
from preflight.tools.nvidia import FOLDERS, IBSTAT, IBV_DEVINFO

DEVINFO_STATES = {"PORT_DOWN": "Down", "PORT_INIT": "Initializing", "PORT_ARMED": "Armed", "PORT_ACTIVE": "Active",
                  "PORT_ACTIVE_DEFER": "Active"}
_LIST = "ls -1 {0} 2>&1 || exit 2"


def parse_ibstat(text: str) -> list[dict[str, Any]]:
    """``ibstat`` (all CAs, or ``ibstat CA``) -> [{name, type, ports: [{port, state, rate, link_layer}]}]."""
    cas: list[dict[str, Any]] = []
    port: dict[str, Any] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        ca = re.fullmatch(r"CA:? '([^']+)'", line)
        if ca:
            cas.append({"name": ca[1], "type": None, "ports": []})
            port = None
            continue
        if not cas:
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        number = re.fullmatch(r"port (\d+)", key)
        if number and not value:
            port = {"port": int(number[1]), "state": None, "rate": None, "link_layer": None}
            cas[-1]["ports"].append(port)
        elif not sep:
            continue
        elif key == "ca type":
            cas[-1]["type"] = value or None
        elif port is not None and key == "state":
            port["state"] = value or None
        elif port is not None and key == "rate":
            rate = re.match(r"\d+(?:\.\d+)?", value)
            port["rate"] = (float(rate[0]) if "." in rate[0] else int(rate[0])) if rate else None
        elif port is not None and key == "link layer":
            port["link_layer"] = value or None
    return cas


def parse_devinfo(text: str) -> list[dict[str, Any]]:
    """``ibv_devinfo`` -> [{name, type: None, ports: [{port, state, rate: None, link_layer}]}].

    >>> parse_devinfo("hca_id:\\tmlx5_1\\n\\t\\tport:\\t1\\n\\t\\t\\tstate:\\t\\t\\tPORT_DOWN (1)\\n"
    ...               "\\t\\t\\tlink_layer:\\t\\tEthernet\\n")[0]["ports"]
    [{'port': 1, 'state': 'Down', 'rate': None, 'link_layer': 'Ethernet'}]
    """
    hcas: list[dict[str, Any]] = []
    port: dict[str, Any] | None = None
    for raw in text.splitlines():
        key, sep, value = raw.strip().partition(":")
        key, value = key.strip().lower(), value.strip()
        if not sep:
            continue
        if key == "hca_id" and value:
            hcas.append({"name": value, "type": None, "ports": []})
            port = None
        elif not hcas:
            continue
        elif key == "port" and value.isdecimal():
            port = {"port": int(value), "state": None, "rate": None, "link_layer": None}
            hcas[-1]["ports"].append(port)
        elif port is not None and key == "state":
            word = value.split()[0] if value.split() else ""
            port["state"] = DEVINFO_STATES.get(word, word or None)
        elif port is not None and key == "link_layer":
            port["link_layer"] = value or None
    return hcas


def unread(text: str) -> str:
    """The error of a non-empty output in which no port was read: its first line that is not a CA or port header
    and not a field ibstat / ibv_devinfo print.

    >>> unread("CA 'mlx5_0'\\n\\tCA type: MT4129\\n\\tmlx5_0 state=ACTIVE rate=400\\n")
    "unrecognized output: 'mlx5_0 state=ACTIVE rate=400'"
    """
    for raw in text.splitlines():
        line = raw.strip()
        key = line.partition(":")[0].strip().lower()
        if line and not re.fullmatch(r"CA:? '[^']+'", line) and not re.fullmatch(r"port:?\s*\d*:?", key) \
                and (":" not in line or key not in _FIELDS):
            return f"unrecognized output: {line[:200]!r}"
    return f"unrecognized output: {text.strip().splitlines()[0].strip()[:200] if text.strip() else ''!r}"


# The fields of ``ibstat`` (rdma-core ibstat.c) and ``ibv_devinfo``: lines that are read or known to be ignored.
_FIELDS = frozenset({
    "ca type", "switch type", "number of ports", "firmware version", "hardware version", "node guid",
    "system image guid", "state", "physical state", "rate", "base lid", "lmc", "sm lid", "capability mask",
    "port guid", "link layer", "hca_id", "transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id",
    "vendor_part_id", "hw_ver", "board_id", "phys_port_cnt", "max_mtu", "active_mtu", "sm_lid", "port_lid",
    "port_lmc", "link_layer"})


def parse_listing(output: ProbeOutput) -> list[str] | None:
    """``ls -1 DIR`` -> the names, or None when the folder is missing or unreadable."""
    if not output.ok:
        return None
    return sorted(line.strip() for line in output.stdout.splitlines() if line.strip() and "/" not in line)


def _merge(ibstat: list[dict[str, Any]], devinfo: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ibstat's view (it has the rate), with ibv_devinfo filling what ibstat lacks or did not list."""
    merged = {ca["name"]: ca for ca in ibstat}
    for hca in devinfo:
        ca = merged.setdefault(hca["name"], hca)
        if ca is hca:
            continue
        ports = {p["port"]: p for p in ca["ports"]}
        for port in hca["ports"]:
            mine = ports.get(port["port"])
            if mine is None:
                ca["ports"].append(port)
            else:
                for key in ("state", "link_layer"):
                    mine[key] = mine[key] or port[key]
    return [merged[name] for name in sorted(merged)]


class GpuFabricCheck(Check):
    ids = ("gpu.fabric.ports", "gpu.fabric.link_layer", "gpu.fabric.rate", "gpu.fabric.devices", "gpu.fabric.memlock")
    accelerators = frozenset({"gpu"})
    not_applicable = "NCCL's RDMA fabric is not used"
    order = 57
    needs = ("os",)  # the locked-memory limit
    summary = ("InfiniBand/RoCE for NCCL (ibstat, ibv_devinfo): ports Active, same link layer and rate on every "
               "host, /dev/infiniband present, memlock unlimited")
    params: ClassVar[Mapping[str, Any]] = {}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [IBSTAT.lookup("ibstat_tool"), Probe("ibstat", IBSTAT.command(), timeout=15),
                IBV_DEVINFO.lookup("devinfo_tool"), Probe("devinfo", IBV_DEVINFO.command(), timeout=15),
                Probe("dev", _LIST.format("/dev/infiniband"), timeout=5),
                Probe("sys", _LIST.format("/sys/class/infiniband"), timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        empty = ProbeOutput("", "not run", None)
        facts: Facts = {"tools": {}, "errors": {}, "cas": [], "dev_files": None, "sys_devices": None}
        parsed: dict[str, list[dict[str, Any]]] = {}
        for tool, parser, lookup in (("ibstat", parse_ibstat, IBSTAT), ("devinfo", parse_devinfo, IBV_DEVINFO)):
            path = lookup.found(outputs, f"{tool}_tool")
            facts["tools"][tool] = path
            if path is None:
                continue
            out = outputs.get(tool, empty)
            parsed[tool] = parser(out.stdout)
            no_devices = "no ib devices found" in (out.stdout + out.stderr).lower()
            if any(ca["ports"] for ca in parsed[tool]) or no_devices or (out.ok and not out.stdout.strip()):
                continue
            # Nothing read: a failed call says why; an output in an unknown layout is quoted, never judged.
            facts["errors"][tool] = unread(out.stdout) if out.ok else error_text(out)
        facts["cas"] = _merge(parsed.get("ibstat", []), parsed.get("devinfo", []))
        facts["dev_files"] = parse_listing(outputs.get("dev", empty))
        facts["sys_devices"] = parse_listing(outputs.get("sys", empty))
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        os_facts = ctx.other_facts.get("os", {})
        usage = _usage(facts, ctx)
        with_rdma = sorted(h for h, f in facts.items() if _has_rdma(f))
        layers = {h: _profile(facts[h], "link_layer") for h in facts if _ports(facts[h])}
        rates = {h: _profile(facts[h], "rate") for h in facts if _ports(facts[h])}
        findings: list[Finding] = []
        for host in sorted(facts):
            host_facts = facts[host]
            findings.append(_judge_ports(host, host_facts, with_rdma, usage[host], alone=len(ctx.hosts) == 1))
            if not _ports(host_facts):  # none read (no device, or an output it could not read): nothing to compare
                for check in ("gpu.fabric.link_layer", "gpu.fabric.rate"):
                    findings.append(finding(check, host, Status.SKIP, f"no RDMA port read on {host}"))
            else:
                findings.append(_judge_same(host, "gpu.fabric.link_layer", layers, Status.FAIL,
                                            "InfiniBand and Ethernet (RoCE) ports cannot talk to each other: "
                                            "NCCL's IB transport fails between these hosts"))
                findings.append(_judge_same(host, "gpu.fabric.rate", rates, Status.WARN,
                                            "a ring runs at its slowest link, so every collective slows to it"))
            findings.append(_judge_dev(host, host_facts))
            findings.append(_judge_memlock(host, host_facts, os_facts.get(host)))
        return findings


def _has_rdma(host_facts: Facts) -> bool:
    return bool(host_facts.get("cas") or host_facts.get("sys_devices"))


def _ports(host_facts: Facts) -> list[tuple[str, dict[str, Any]]]:
    return [(str(ca["name"]), port) for ca in host_facts.get("cas") or [] for port in ca.get("ports") or []]


def _profile(host_facts: Facts, key: str) -> str:
    """The host's sorted set of ``key`` values over its Active ports (all ports when none is Active)."""
    ports = [p for _, p in _ports(host_facts)]
    active = [p for p in ports if p.get("state") == "Active"] or ports
    values = sorted({str(p.get(key)) for p in active if p.get(key) is not None})
    return ", ".join(values) or "unknown"


def _judge_ports(host: str, host_facts: Facts, with_rdma: Sequence[str], usage: PortUsage,
                 alone: bool = False) -> Finding:
    """``alone``: the cluster is this one host (``preflight node``, a one-host hosts.yaml)."""
    check = "gpu.fabric.ports"
    tools = host_facts.get("tools") or {}
    errors = host_facts.get("errors") or {}
    ports = _ports(host_facts)
    if not ports and errors:
        listing = "; ".join(f"{tool}: {why}" for tool, why in sorted(errors.items()))
        return finding(check, host, Status.ERROR, f"could not read the RDMA ports on {host}: {listing}",
                       observed=listing, expected="ibstat lists every HCA")
    if not ports and host_facts.get("sys_devices"):
        devices = ", ".join(host_facts["sys_devices"])
        if not any(tools.values()):
            return finding(check, host, Status.ERROR,
                           f"{host} has RDMA devices ({devices}) but neither ibstat nor ibv_devinfo "
                           f"(looked on {FOLDERS}): cannot read their ports", observed=f"devices {devices}",
                           expected="ibstat or ibv_devinfo installed",
                           remedy="apt-get install infiniband-diags ibverbs-utils  # or dnf install "
                                  "infiniband-diags libibverbs-utils")
    if not ports:
        if alone:  # seen on a one-GPU cloud VM: no HCA, and none needed
            return finding(check, host, Status.SKIP,
                           f"no InfiniBand/RoCE device on {host}, and none needed: with one host NCCL "
                           "keeps the job's traffic inside it (NVLink, PCIe, shared memory)",
                           observed="no RDMA device", expected="none needed on one host")
        if with_rdma:
            return finding(check, host, Status.FAIL,
                           f"{host} has no InfiniBand/RoCE device, unlike {', '.join(with_rdma)}: NCCL "
                           "falls back to TCP sockets on it and slows every collective of the job",
                           observed="no RDMA device", expected="the HCAs the other hosts have",
                           remedy="ls /sys/class/infiniband; lsmod | grep -E 'mlx5_ib|ib_uverbs'  # load mlx5_ib / "
                                  "install the OFED or rdma-core driver")
        return finding(check, host, Status.WARN,
                       f"no InfiniBand/RoCE device on {host} (nor on any host): NCCL uses TCP sockets, "
                       "far slower than RDMA for multi-node training", observed="no RDMA device",
                       expected="InfiniBand or RoCE HCAs", remedy="ls /sys/class/infiniband  # expected empty "
                       "only on a cluster without an RDMA fabric")
    down = [(ca, p) for ca, p in ports if p.get("state") != "Active"]
    listing = ", ".join(f"{ca} port {p['port']}: {p.get('state') or 'unknown'}" for ca, p in ports)
    if not down:
        return finding(check, host, Status.PASS, f"every RDMA port is Active on {host}", observed=listing,
                       expected="Active")
    used, unused, why = _used_down(host, down, ports, usage)
    notes = f" ({why}: {', '.join(_name(ca, p) for ca, p in unused)})" if unused else ""
    if used:
        bad = ", ".join(_name(ca, p) for ca, p in used)
        reason = (f"named by NCCL_IB_HCA={usage.spec}" if usage.spec is not None
                  else f"Active on most other hosts: {', '.join(_active_on(used, usage))}")
        return finding(check, host, Status.FAIL,
                       f"RDMA ports the job would use are not Active on {host} ({bad}; {reason}): NCCL "
                       f"cannot use them (Down: no link; Initializing: no subnet manager){notes}",
                       observed=bad, expected="State: Active on every port NCCL uses",
                       remedy=f"ibstat {used[0][0]} {used[0][1]['port']}  # check the cable / switch port; "
                              "Initializing: start opensm (systemctl start opensm) on the fabric")
    if not any(p.get("state") == "Active" for _, p in ports) and usage.spec is None:
        return finding(check, host, Status.WARN,
                       f"no RDMA port is Active on {host} (nor on any host): NCCL falls back to TCP "
                       f"sockets, far slower than RDMA ({listing})", observed=listing, expected="Active ports",
                       remedy=f"ibstat {down[0][0]} {down[0][1]['port']}  # check the cables / switch ports")
    return finding(check, host, Status.PASS, f"every RDMA port NCCL would use is Active on {host}{notes}",
                   observed=listing, expected="Active on every port NCCL uses")


@dataclass(frozen=True)
class PortUsage:
    """Which ports the job uses: NCCL_IB_HCA from a host's env, else how many hosts have each port Active."""

    spec: str | None  # NCCL_IB_HCA (hosts.yaml env); None: unset
    active: Mapping[tuple[str, int], Sequence[str]]  # (device, port) -> the hosts where it is Active
    hosts: int  # hosts whose ports were read


def _usage(facts: Mapping[str, Facts], ctx: EvalContext) -> dict[str, PortUsage]:
    active: dict[tuple[str, int], list[str]] = {}
    read = [h for h in facts if _ports(facts[h])]
    for host in read:
        for ca, port in _ports(facts[host]):
            if port.get("state") == "Active" and isinstance(port.get("port"), int):
                active.setdefault((ca, port["port"]), []).append(host)
    envs = {h.name: h.env for h in ctx.hosts}
    usage = {}
    for host in facts:
        spec = envs.get(host, {}).get("NCCL_IB_HCA")
        usage[host] = PortUsage(spec if spec and spec.strip() else None, active, len(read))
    return usage


def _used_down(host: str, down: list[tuple[str, dict[str, Any]]], ports: list[tuple[str, dict[str, Any]]],
               usage: PortUsage) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, dict[str, Any]]], str]:
    """The down ports the job would use, the ones it would not, and why those are unused.

    With NCCL_IB_HCA set, the ports it selects are used. Unset, NCCL uses every Active port: a port down here
    but Active on most of the other hosts is a port this host lacks; one down on most hosts is unused (a spare
    second port, a storage NIC without a cable): not this host's fault, not a fail.
    """
    if usage.spec is not None:
        chosen = set(selected_ports(usage.spec, [(ca, int(p["port"])) for ca, p in ports]))
        used = [(ca, p) for ca, p in down if (ca, p["port"]) in chosen]
        return used, [item for item in down if item not in used], f"not in NCCL_IB_HCA={usage.spec}"
    used = [(ca, p) for ca, p in down if 2 * len(usage.active.get((ca, p["port"]), ())) > usage.hosts - 1]
    unused = [item for item in down if item not in used]
    nowhere = all(not usage.active.get((ca, p["port"])) for ca, p in unused)
    return used, unused, ("down on every host: unused" if nowhere
                          else "down on most hosts: unused")


def _active_on(used: list[tuple[str, dict[str, Any]]], usage: PortUsage) -> list[str]:
    return [f"{ca} port {p['port']} on {len(usage.active.get((ca, p['port']), ()))} of the {usage.hosts - 1} others"
            for ca, p in used]


def _name(ca: str, port: Mapping[str, Any]) -> str:
    return f"{ca} port {port['port']}: {port.get('state') or 'unknown'}"


def _judge_same(host: str, check: str, values: Mapping[str, str], status: Status, effect: str) -> Finding:
    mine = values[host]
    top, strict = majority(dict(values))
    what = "link layer" if check.endswith("link_layer") else "rate (Gb/s)"
    if mine != top or (not strict and len(set(values.values())) > 1):
        others = ", ".join(f"{h}: {v}" for h, v in sorted(values.items()) if v != mine)
        return finding(check, host, status, f"{host} has RDMA {what} {mine}, unlike the cluster "
                       f"({others}): {effect}", observed=mine,
                       expected=str(top) if strict else f"one {what} on every host",
                       remedy="ibstat | grep -E \"CA '|Rate|Link layer\"  # put the hosts on the same fabric and "
                              "port speed (or leave the odd port out with NCCL_IB_HCA)")
    return finding(check, host, Status.PASS, f"{what} {mine} on {host}", observed=mine)


def _judge_dev(host: str, host_facts: Facts) -> Finding:
    check = "gpu.fabric.devices"
    if not _has_rdma(host_facts):
        return finding(check, host, Status.SKIP, f"no RDMA device on {host}")
    files = host_facts.get("dev_files") or []
    verbs = [f for f in files if f.startswith("uverbs")]
    if not verbs:
        observed = "no /dev/infiniband" if host_facts.get("dev_files") is None else \
            f"/dev/infiniband has {', '.join(files) or 'nothing'}"
        return finding(check, host, Status.FAIL,
                       f"{host} has RDMA devices but {observed}: ibverbs cannot open them, NCCL falls "
                       "back to TCP sockets", observed=observed, expected="/dev/infiniband/uverbs*",
                       remedy="modprobe ib_uverbs  # in a container: docker run --device=/dev/infiniband "
                              "--cap-add=IPC_LOCK (or the rdma device plugin on Kubernetes)")
    return finding(check, host, Status.PASS, f"/dev/infiniband has {', '.join(verbs)} on {host}",
                   observed=", ".join(verbs), expected="/dev/infiniband/uverbs*")


def _judge_memlock(host: str, host_facts: Facts, os_facts: Facts | None) -> Finding:
    check = "gpu.fabric.memlock"
    if not _has_rdma(host_facts):
        return finding(check, host, Status.SKIP, f"no RDMA device on {host}")
    limits = (os_facts or {}).get("memlock") or {}
    soft, hard = limits.get("soft"), limits.get("hard")
    if soft is None:
        return finding(check, host, Status.ERROR, f"the locked-memory limit of {host} was not read "
                       "(os facts missing)", observed="unknown", expected="unlimited")
    if soft != "unlimited":
        observed = f"{soft} bytes (hard {hard})"
        return finding(check, host, Status.FAIL,
                       f"max locked memory is {observed} on {host}, which has RDMA devices: NCCL cannot "
                       "pin its buffers (ibv_reg_mr fails, 'NET/IB : Unable to register memory')",
                       observed=observed, expected="unlimited",
                       remedy="echo '* - memlock unlimited' > /etc/security/limits.d/90-memlock.conf  # log in "
                              "again; in a container: docker run --ulimit memlock=-1")
    return finding(check, host, Status.PASS, f"max locked memory unlimited on {host}",
                   observed="unlimited", expected="unlimited")
