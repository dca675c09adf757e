"""gpu.devices: the NVIDIA GPUs themselves, from ``nvidia-smi`` csv queries (and ``nvidia-smi topo -m``).

NCCL needs every rank's GPU present and healthy. One ``--query-gpu`` call reads, per GPU: index, name,
uuid, bus id, driver version, persistence mode, ECC mode and uncorrected ECC counts (volatile: since the
driver loaded; aggregate: lifetime), pending retired pages (pre-Ampere) and pending / failed row remaps
(Ampere and later). ``--query-compute-apps`` lists processes still holding a GPU; ``topo -m`` (the
GPU/NIC affinity matrix) is recorded in the facts for the report (and the allreduce check's link classes), not
judged; ``nvlink -s`` (preflight.nvlink: each GPU's links, up or ``<inactive>``, and their speed) is judged
against what the GPU's board must have (an SXM / HGX board wires every link: a GPU with some links down, or with
none up while another GPU of the host has some, is a fault even on a one-node cluster), then against the other
GPUs of the same model in the cluster, and gives the allreduce check its NVLink floor. An output of topo -m or
nvlink -s with nothing this module can read is an error quoting its first line (``topo_error``,
``nvlink_error``), never a verdict on nothing.

``nvidia-smi`` is looked up on PATH, then in /usr/local/nvidia/bin (where NVIDIA's container toolkit
mounts the driver's tools; an SSH session into a container does not get the image's PATH), /usr/bin.
On an old driver that rejects a field (exit status 2) the probe repeats with the basic fields only.

Finding ids: gpu.devices.smi (nvidia-smi present and answering), gpu.devices.count (= devices_per_host),
gpu.devices.driver (one driver version across the cluster: drift warns), gpu.devices.ecc (volatile
uncorrected errors fail, lifetime ones warn), gpu.devices.rows (a pending retirement / remap or a failed
remap fails), gpu.devices.persistence (Disabled warns), gpu.devices.processes (a process on a GPU fails),
gpu.devices.nvlink (an SXM / HGX GPU with a link down fails, so does one with none up beside a GPU with some;
fewer NVLinks up, or slower ones, than most GPUs of the same model fails; a whole SXM node with none up where
most have some warns: NVLink disabled or not set up; a PCIe card without a bridge passes).

>>> parse_csv("index, name, memory.total [MiB]\\n0, NVIDIA H100 80GB HBM3, 81559\\n")
[{'index': '0', 'name': 'NVIDIA H100 80GB HBM3', 'memory.total': '81559'}]
>>> parse_topology("\\x1b[4m\\tGPU0\\tGPU1\\tCPU Affinity\\x1b[0m\\n"
...                "GPU0\\t X \\tNV18\\t0-47\\nGPU1\\tNV18\\t X \\t0-47\\n")
... # doctest: +NORMALIZE_WHITESPACE
{'columns': ['GPU0', 'GPU1', 'CPU Affinity'], 'rows': {'GPU0': {'GPU0': 'X', 'GPU1': 'NV18', 'CPU Affinity': '0-47'},
 'GPU1': {'GPU0': 'NV18', 'GPU1': 'X', 'CPU Affinity': '0-47'}}, 'nics': {}}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.checks.base import *
from preflight.nvlink import active_links, against_board, board, down_links, link_speed, parse_nvlink, state
from preflight.tools.common import error_text
from preflight.tools.nvidia import NVIDIA_SMI

FULL_FIELDS = ("index,name,uuid,pci.bus_id,driver_version,persistence_mode,ecc.mode.current,"
               "ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,"
               "retired_pages.pending,remapped_rows.pending,remapped_rows.failure,memory.total")
BASIC_FIELDS = "index,name,uuid,pci.bus_id,driver_version,persistence_mode,memory.total"
APPS_FIELDS = "pid,process_name,gpu_uuid,used_memory"
_QUERY = (f'{NVIDIA_SMI.command(f"--query-gpu={FULL_FIELDS}", "--format=csv,nounits")} '
          f'|| {{ rc=$?; [ "$rc" -eq 2 ] || exit "$rc"; "$t" --query-gpu={BASIC_FIELDS} --format=csv,nounits; }}')
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_UNSET = ("", "[n/a]", "n/a", "[not supported]", "[unknown error]", "[insufficient permissions]")


def parse_csv(text: str, first: str = "index") -> list[dict[str, str]]:
    """nvidia-smi ``--format=csv`` output -> one dict per row, keyed by the header's names without units.

    Lines before the last header that starts with ``first`` (an error line, a first failed query) are ignored.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    start = max((i for i, line in enumerate(lines) if line.split(",")[0].strip() == first), default=None)
    if start is None:
        return []
    names = [re.sub(r"\s*\[[^]]*\]$", "", name.strip()) for name in lines[start].split(",")]
    rows = []
    for line in lines[start + 1:]:
        values = [value.strip() for value in line.split(",")]
        if len(values) == len(names):
            rows.append(dict(zip(names, values, strict=True)))
    return rows


def _value(text: str | None) -> str | None:
    return None if text is None or text.strip().lower() in _UNSET else text.strip()


def _int(text: str | None) -> int | None:
    value = _value(text)
    return int(value) if value is not None and value.isdecimal() else None


def _yes(text: str | None) -> bool | None:
    value = (_value(text) or "").lower()
    return True if value == "yes" else False if value == "no" else None


def parse_gpus(text: str) -> list[dict[str, Any]]:
    """The ``--query-gpu`` table -> [{index, name, uuid, bus_id, driver, persistence, ecc_mode, ...}]."""
    gpus = []
    for row in parse_csv(text):
        index = _int(row.get("index"))
        if index is None:
            continue
        gpus.append({
            "index": index, "name": _value(row.get("name")), "uuid": _value(row.get("uuid")),
            "bus_id": _value(row.get("pci.bus_id")), "driver": _value(row.get("driver_version")),
            "persistence": _value(row.get("persistence_mode")), "ecc_mode": _value(row.get("ecc.mode.current")),
            "ecc_volatile": _int(row.get("ecc.errors.uncorrected.volatile.total")),
            "ecc_aggregate": _int(row.get("ecc.errors.uncorrected.aggregate.total")),
            "retired_pending": _yes(row.get("retired_pages.pending")),
            "remap_pending": _yes(row.get("remapped_rows.pending")),
            "remap_failure": _yes(row.get("remapped_rows.failure")),
            "memory_mib": _int(row.get("memory.total")),
        })
    return gpus


def parse_apps(text: str) -> list[dict[str, Any]]:
    """``--query-compute-apps=pid,process_name,gpu_uuid,used_memory`` -> [{pid, name, gpu_uuid, memory_mib}].

    >>> parse_apps("pid, process_name, gpu_uuid, used_gpu_memory [MiB]\\n11345, ./gpu_burn, GPU-b4, 15690\\n")
    [{'pid': 11345, 'name': './gpu_burn', 'gpu_uuid': 'GPU-b4', 'memory_mib': 15690}]
    """
    apps = []
    for row in parse_csv(text, first="pid"):
        pid = _int(row.get("pid"))
        if pid is not None:
            apps.append({"pid": pid, "name": _value(row.get("process_name")), "gpu_uuid": _value(row.get("gpu_uuid")),
                         "memory_mib": _int(row.get("used_gpu_memory") or row.get("used_memory"))})
    return apps


def parse_topology(text: str) -> dict[str, Any] | None:
    """``nvidia-smi topo -m`` -> {columns, rows: {GPU0: {column: cell}}, nics: {NIC0: mlx5_0}}; None if no matrix."""
    lines = [_ANSI.sub("", line).rstrip("\n") for line in text.splitlines()]
    header = next((i for i, line in enumerate(lines) if line.startswith("\t") and "GPU0" in line), None)
    if header is None:
        return None
    columns = [c.strip() for c in lines[header].split("\t")[1:] if c.strip()]
    rows: dict[str, dict[str, str]] = {}
    nics: dict[str, str] = {}
    for line in lines[header + 1:]:
        cells = line.split("\t")
        if re.fullmatch(r"(GPU|NIC)\d+", cells[0].strip()):
            row = zip(columns, cells[1:] + [""] * (len(columns) + 1 - len(cells)), strict=False)
            rows[cells[0].strip()] = {column: cell.strip() for column, cell in row}
        legend = re.fullmatch(r"\s*(NIC\d+):\s*(\S+)\s*", line)
        if legend:
            nics[legend[1]] = legend[2]
    return {"columns": columns, "rows": rows, "nics": nics}


class GpuDevicesCheck(Check):
    ids = ("gpu.devices.smi", "gpu.devices.count", "gpu.devices.driver", "gpu.devices.ecc", "gpu.devices.rows",
           "gpu.devices.persistence", "gpu.devices.processes", "gpu.devices.nvlink")
    accelerators = frozenset({"gpu"})
    not_applicable = "no NVIDIA GPUs to check"
    order = 56
    summary = ("NVIDIA GPUs (nvidia-smi): count = devices_per_host, one driver version, no uncorrected ECC "
               "errors or pending row remaps, persistence mode on, no process holding a GPU, every NVLink of an "
               "SXM/HGX GPU up, others as on the other GPUs of the model; topo -m recorded")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [NVIDIA_SMI.lookup(),
                Probe("query", _QUERY, timeout=30),
                Probe("apps", NVIDIA_SMI.command(f"--query-compute-apps={APPS_FIELDS}", "--format=csv,nounits"),
                      timeout=30),
                Probe("topo", NVIDIA_SMI.command("topo", "-m"), timeout=30),
                Probe("nvlink", NVIDIA_SMI.command("nvlink", "-s"), timeout=30)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        path = NVIDIA_SMI.found(outputs)
        facts: Facts = {"tool": path, "error": None, "gpus": [], "driver": None, "processes": [],
                        "apps_error": None, "topology": None, "topo_error": None, "nvlink": None, "nvlink_error": None}
        if path is None:
            return facts
        query = outputs.get("query", ProbeOutput("", "not run", None))
        gpus = parse_gpus(query.stdout)
        if gpus:
            facts["gpus"] = gpus
        elif "no devices were found" in (query.stdout + query.stderr).lower():
            facts["gpus"] = []
        else:
            facts["error"] = f"nvidia-smi --query-gpu failed: {error_text(query)}"
        drivers = sorted({g["driver"] for g in gpus if g["driver"]})
        facts["driver"] = drivers[0] if len(drivers) == 1 else ", ".join(drivers) or None
        apps = outputs.get("apps", ProbeOutput("", "not run", None))
        facts["processes"] = parse_apps(apps.stdout)
        if not apps.ok and not facts["processes"]:
            facts["apps_error"] = error_text(apps)
        topo = outputs.get("topo", ProbeOutput("")).stdout
        facts["topology"] = parse_topology(topo)
        if facts["topology"] is None and topo.strip():
            first = next(line.strip() for line in _ANSI.sub("", topo).splitlines() if line.strip())
            facts["topo_error"] = f"nvidia-smi topo -m printed no GPU matrix: first line {first[:200]!r}"
        facts["nvlink"], facts["nvlink_error"] = parse_nvlink(outputs.get("nvlink", ProbeOutput("")).stdout)
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        usable = {host: f for host, f in facts.items() if f.get("tool") and not f.get("error")}
        drivers = {host: str(f["driver"]) for host, f in usable.items() if f.get("driver")}
        models = _nvlink_models({host: f for host, f in facts.items() if f.get("tool")})
        for host in sorted(facts):
            host_facts = facts[host]
            if host not in usable:
                findings.append(_smi_problem(host, host_facts))
                if host_facts.get("tool") and host_facts.get("nvlink"):  # nvlink -s answered where the query did not
                    findings.append(_judge_nvlink(host, host_facts, models))
                continue
            gpus: list[dict[str, Any]] = host_facts.get("gpus") or []
            findings.append(finding("gpu.devices.smi", host, Status.PASS,
                                    f"{host_facts['tool']} answers", observed=host_facts["tool"]))
            findings.append(_judge_count(host, gpus, int(ctx.cluster.devices_per_host)))
            findings.append(_judge_driver(host, host_facts.get("driver"), drivers))
            findings.append(_judge_ecc(host, gpus))
            findings.append(_judge_rows(host, gpus))
            findings.append(_judge_persistence(host, gpus))
            findings.append(_judge_processes(host, host_facts, gpus))
            findings.append(_judge_nvlink(host, host_facts, models))
        return findings


def _smi_problem(host: str, host_facts: Facts) -> Finding:
    check = "gpu.devices.smi"
    if not host_facts.get("tool"):
        return tool_missing(check, host, NVIDIA_SMI)
    error = str(host_facts.get("error"))
    lower = error.lower()
    why = ("the driver is not loaded" if "couldn't communicate" in lower or "exit status 9)" in lower else
           "the driver was updated but the old kernel module is still loaded: reboot (or reload nvidia modules)"
           if "mismatch" in lower else "the driver or a GPU is in a bad state")
    return finding(check, host, Status.ERROR, f"{error} on {host}: {why}",
                   observed=error, expected="nvidia-smi lists every GPU",
                   remedy="nvidia-smi; lsmod | grep nvidia; dmesg | grep -i -E 'nvrm|xid' | tail")


def _judge_count(host: str, gpus: Sequence[dict[str, Any]], wanted: int) -> Finding:
    check = "gpu.devices.count"
    indexes = sorted(g["index"] for g in gpus)
    observed = f"{len(indexes)} GPUs (indexes {', '.join(map(str, indexes)) or 'none'})"
    expected = f"{wanted} GPUs (devices_per_host)"
    if len(indexes) != wanted:
        return finding(check, host, Status.FAIL,
                       f"{host} has {len(indexes)} GPUs, devices_per_host is {wanted}: a rank would have "
                       "no GPU (or devices_per_host is wrong)", observed=observed, expected=expected,
                       remedy="nvidia-smi -L; lspci | grep -i nvidia; dmesg | grep -i -E 'nvrm|xid|fallen off' | tail"
                              "  # find the lost GPU, or fix devices_per_host in hosts.yaml")
    return finding(check, host, Status.PASS, f"{host} has {wanted} GPUs", observed=observed,
                   expected=expected)


def _judge_driver(host: str, driver: str | None, drivers: Mapping[str, str]) -> Finding:
    check = "gpu.devices.driver"
    if driver is None:
        return finding(check, host, Status.SKIP, f"no GPU on {host} reports a driver version")
    top, strict = majority(dict(drivers))
    if driver != top or (not strict and len(set(drivers.values())) > 1):
        others = ", ".join(f"{h}: {d}" for h, d in sorted(drivers.items()) if d != driver)
        return finding(check, host, Status.WARN,
                       f"{host} runs NVIDIA driver {driver}, unlike the cluster ({others}): mixed "
                       "drivers give different CUDA/NCCL behaviour per node and are a known source of hangs",
                       observed=driver, expected=str(top) if strict else "one driver version on every host",
                       remedy="nvidia-smi --query-gpu=driver_version --format=csv,noheader  # install the same "
                              "driver on every node")
    return finding(check, host, Status.PASS, f"NVIDIA driver {driver}", observed=driver)


def _listing(gpus: Sequence[dict[str, Any]], what: str) -> str:
    return ", ".join(f"GPU {g['index']}: {what.format(**g)}" for g in gpus)


def _one_device(gpus: Sequence[dict[str, Any]]) -> int | None:
    return int(gpus[0]["index"]) if len(gpus) == 1 else None


def _judge_ecc(host: str, gpus: Sequence[dict[str, Any]]) -> Finding:
    check = "gpu.devices.ecc"
    volatile = [g for g in gpus if (g.get("ecc_volatile") or 0) > 0]
    lifetime = [g for g in gpus if (g.get("ecc_aggregate") or 0) > 0]
    if volatile:
        listing = _listing(volatile, "{ecc_volatile} uncorrected")
        return finding(check, host, Status.FAIL,
                       f"uncorrected ECC errors since the driver loaded on {host} ({listing}): the GPU's "
                       "memory returned bad data; jobs crash (Xid 48/63) or compute wrong results",
                       observed=listing, expected="0 uncorrected ECC errors", device=_one_device(volatile),
                       remedy=f"nvidia-smi -q -d ECC,ROW_REMAPPER -i {volatile[0]['index']}  # drain the node, "
                              "reset the GPU (nvidia-smi -r) or reboot; replace it if errors come back")
    if lifetime:
        listing = _listing(lifetime, "{ecc_aggregate} uncorrected (lifetime)")
        return finding(check, host, Status.WARN,
                       f"GPUs on {host} had uncorrected ECC errors in the past ({listing}): watch them, "
                       "they may be failing", observed=listing, expected="0 uncorrected ECC errors",
                       device=_one_device(lifetime),
                       remedy=f"nvidia-smi -q -d ECC,ROW_REMAPPER -i {lifetime[0]['index']}")
    modes = sorted({str(g.get("ecc_mode")) for g in gpus if g.get("ecc_mode")}) or ["not reported"]
    return finding(check, host, Status.PASS, f"no uncorrected ECC errors on {host}",
                   observed=f"0 uncorrected; ECC mode {', '.join(modes)}", expected="0 uncorrected ECC errors")


def _judge_rows(host: str, gpus: Sequence[dict[str, Any]]) -> Finding:
    check = "gpu.devices.rows"
    failed = [g for g in gpus if g.get("remap_failure")]
    pending = [g for g in gpus if g.get("remap_pending") or g.get("retired_pending")]
    if failed:
        listing = _listing(failed, "row remapping failed")
        return finding(check, host, Status.FAIL,
                       f"{host} has GPUs whose row remapping failed ({listing}): the GPU cannot hide its "
                       "bad memory any more and must be replaced", observed=listing, expected="no remap failure",
                       device=_one_device(failed),
                       remedy=f"nvidia-smi -q -d ROW_REMAPPER -i {failed[0]['index']}  # RMA the GPU")
    if pending:
        listing = _listing(pending, "retirement/remap pending")
        return finding(check, host, Status.FAIL,
                       f"{host} has GPUs with pending page retirement / row remapping ({listing}): the "
                       "bad memory stays in use until the GPU is reset", observed=listing,
                       expected="nothing pending", device=_one_device(pending),
                       remedy=f"nvidia-smi -r -i {pending[0]['index']}  # with no process on it; or reboot the node")
    return finding(check, host, Status.PASS, f"no pending page retirement or row remap on {host}",
                   observed="nothing pending", expected="nothing pending")


def _judge_persistence(host: str, gpus: Sequence[dict[str, Any]]) -> Finding:
    check = "gpu.devices.persistence"
    off = [g for g in gpus if str(g.get("persistence") or "").lower() == "disabled"]
    if off:
        listing = ", ".join(str(g["index"]) for g in off)
        return finding(check, host, Status.WARN,
                       f"persistence mode is off on {host} (GPUs {listing}): the driver tears the GPUs "
                       "down between jobs, so every start pays seconds of init and may see different clocks",
                       observed=f"Disabled on GPUs {listing}", expected="Enabled", device=_one_device(off),
                       remedy="systemctl enable --now nvidia-persistenced  # or: nvidia-smi -pm 1")
    return finding(check, host, Status.PASS, f"persistence mode on (or not reported) on {host}",
                   observed="Enabled", expected="Enabled")


def _judge_processes(host: str, host_facts: Facts, gpus: Sequence[dict[str, Any]]) -> Finding:
    check = "gpu.devices.processes"
    procs: list[dict[str, Any]] = host_facts.get("processes") or []
    if procs:
        index = {g.get("uuid"): g["index"] for g in gpus}
        listing = "; ".join(f"pid {p['pid']} ({p['name']}, {p['memory_mib']} MiB) on GPU "
                            f"{index.get(p['gpu_uuid'], p['gpu_uuid'])}" for p in procs)
        pids = sorted({p["pid"] for p in procs})
        devices = sorted({index[p["gpu_uuid"]] for p in procs if p["gpu_uuid"] in index})
        return finding(check, host, Status.FAIL,
                       f"processes still hold GPUs on {host}: {listing}: a leftover job takes GPU memory "
                       "and compute, the next job runs out of memory or runs slow",
                       observed=listing, expected="no process on any GPU",
                       device=devices[0] if len(devices) == 1 else None,
                       remedy=f"ps -o pid,user,etime,args -p {','.join(map(str, pids))}  # if it is a stale job: "
                              f"kill {' '.join(map(str, pids))}")
    if not gpus:
        return finding(check, host, Status.SKIP, f"no GPU on {host} to hold")
    if host_facts.get("apps_error"):
        return finding(check, host, Status.ERROR,
                       f"could not list GPU processes on {host}: {host_facts['apps_error']}",
                       observed=str(host_facts["apps_error"]), expected="nvidia-smi --query-compute-apps answers")
    return finding(check, host, Status.PASS, f"no process holds a GPU on {host}",
                   observed="none", expected="no process on any GPU")


def _nvlink_models(facts: Mapping[str, Facts]) -> dict[str, tuple[tuple[int, bool], tuple[float | None, bool]]]:
    """GPU model -> ((most common count of NVLinks up, strict majority?), (most common link speed, strict?)) over
    every GPU of that model in the cluster whose links were read."""
    counts: dict[str, dict[str, int]] = {}
    speeds: dict[str, dict[str, float | None]] = {}
    for host, host_facts in facts.items():
        for index, gpu in (host_facts.get("nvlink") or {}).items():
            if state(gpu) == "unread":
                continue
            key = f"{host}:{index}"
            counts.setdefault(str(gpu.get("name")), {})[key] = active_links(gpu)
            speed = link_speed(gpu)
            speeds.setdefault(str(gpu.get("name")), {})[key] = round(speed, 3) if speed else None
    return {name: (majority(counts[name]), majority({k: v for k, v in speeds[name].items() if v})) for name in counts}


def _judge_nvlink(host: str, host_facts: Facts,
                  models: Mapping[str, tuple[tuple[int, bool], tuple[float | None, bool]]]) -> Finding:
    """Each GPU against its board (an SXM / HGX board wires every link: preflight.nvlink.board), then against the
    other GPUs of its model in the cluster (PCIe cards: a bridge's links, or none)."""
    check = "gpu.devices.nvlink"
    nvlink: Mapping[str, Any] = host_facts.get("nvlink") or {}
    if not nvlink:
        if host_facts.get("nvlink_error"):
            return finding(check, host, Status.ERROR, f"could not read the NVLinks on {host}: "
                           f"{host_facts['nvlink_error']}", observed=str(host_facts["nvlink_error"]),
                           expected="nvidia-smi nvlink -s lists every GPU")
        return finding(check, host, Status.SKIP, f"nvidia-smi nvlink -s listed no GPU on {host}")
    down: list[str] = []
    none_up: list[str] = []
    slow: list[str] = []
    unread: list[str] = []
    for index, gpu in sorted(nvlink.items(), key=lambda item: int(item[0])):
        name = str(gpu.get("name"))
        if state(gpu) == "unread":
            unread.append(f"GPU {index}: {gpu.get('note')}")
            continue
        (count, count_sure), (speed, speed_sure) = models[name]
        up, mine, known = active_links(gpu), link_speed(gpu), board(name)
        peers = max((active_links(g) for i, g in nvlink.items() if i != index and g.get("name") == name), default=0)
        wrong = against_board(index, gpu, peers)
        if wrong:
            down.append(wrong)
        elif up == 0 and count > 0 and count_sure and known:
            none_up.append(f"GPU {index}: no NVLink up (most {name} have {count})")
        elif 0 < up < count and count_sure and not known:
            down.append(f"GPU {index}: {up} NVLinks up, most {name} have {count} "
                        f"(down: {', '.join(down_links(gpu)) or 'none listed'})")
        elif mine and speed and speed_sure and mine < 0.9 * speed:
            slow.append(f"GPU {index}: NVLinks at {mine:g} GB/s (most {name} run {speed:g})")
    first = next(iter(down or slow or none_up), "GPU 0").split(":")[0].removeprefix("GPU ")
    remedy = (f"nvidia-smi nvlink -s -i {first}; nvidia-smi nvlink -e -i {first}  # error counters; drain the node "
              "and have the GPU/baseboard (or its NVLink bridge) checked; on NVSwitch systems also "
              "systemctl status nvidia-fabricmanager")
    expected = ("every NVLink up on SXM/HGX GPUs (their board wires them all); elsewhere as many, at the same "
                "speed, as on the other GPUs of the model")
    if down or slow:
        listing = "; ".join(down + slow)
        return finding(check, host, Status.FAIL,
                       f"{host} has NVLinks down or slow ({listing}): NCCL's traffic between these GPUs "
                       "runs at a fraction of the board's speed, or falls back to PCIe",
                       observed=listing, expected=expected, device=int(first), remedy=remedy)
    if none_up:
        listing = "; ".join(none_up)
        return finding(check, host, Status.WARN,
                       f"{host} has GPUs with no NVLink up ({listing}): NVLink disabled or not set up "
                       "on this node; their traffic goes over PCIe", observed=listing,
                       expected=expected, device=int(first), remedy=remedy)
    read = [g for g in nvlink.values() if state(g) != "unread"]
    if not read:
        return finding(check, host, Status.SKIP, f"no GPU's NVLinks readable on {host} ({'; '.join(unread)})",
                       observed="; ".join(unread))
    return finding(check, host, Status.PASS, f"{len(read)} GPUs on {host}: {_nvlink_summary(read)}"
                   + (f" ({'; '.join(unread)}: not judged)" if unread else ""),
                   observed=_nvlink_summary(read), expected=expected)


def _nvlink_summary(gpus: Sequence[Mapping[str, Any]]) -> str:
    """``12 NVLinks up per GPU at 25 GB/s (A100 SXM4: 12 wired)`` or ``no NVLink``."""
    ups = sorted({active_links(g) for g in gpus})
    speeds = sorted({s for g in gpus if (s := link_speed(g))})
    boards = sorted({f"{b.what}: {b.links} wired" for g in gpus if (b := board(str(g.get("name")))) and b.links})
    if ups == [0]:
        return "no NVLink"
    return (f"{'/'.join(map(str, ups))} NVLinks up per GPU" + (f" at {'/'.join(f'{s:g}' for s in speeds)} GB/s"
                                                              if speeds else "")
            + (f" ({', '.join(boards)})" if boards else ""))
