"""gpu.pcie: every GPU's PCIe link trained at the generation and width it and the host support (``nvidia-smi -q``).

A GPU whose link trained at x8 instead of x16, or that a riser, slot or BIOS setting holds at gen3 when GPU and
host do gen4/gen5, moves host-device data (NCCL's transfers through the NIC, data loading) at half the rate or
less, and the whole job runs at the slowest rank's pace.

``nvidia-smi -q`` prints, per GPU, under ``PCI / GPU Link Info``::

    PCIe Generation
        Max                       : 4      the most the link can do: min(Device Max, Host Max)
        Current                   : 1      drops when the GPU is idle (power saving): never judged
        Device Current            : 1
        Device Max                : 4      what the GPU supports
        Host Max                  : 4      what the root port / slot supports
    Link Width
        Max                       : 16x    what the GPU supports
        Current                   : 16x    what the link trained at

Judged: ``Max`` generation (what the link can reach) below both ``Device Max`` and ``Host Max`` fails: the link
trained below what the GPU and the slot both support (a riser, a lane fault, a BIOS setting). A slot older than the
GPU (``Host Max`` 4 under a gen5 GPU) is the platform, not a fault: it passes, saying so. Without ``Host Max``
(older drivers) the generation is not judged. ``Current`` width below ``Max`` width warns: a link trained narrower
is the classic reseat-the-card fault, but nvidia-smi's own help says the width "may be reduced when the GPU is not
in use", and no public sample settles that, so it is not a fail. The current generation is never judged: an idle
GPU drops it (gen1 at idle is normal; the real idle 8x RTX 4090 sample shows gen 1 with a gen 4 maximum).

Finding id: gpu.pcie.link (per host; skip without nvidia-smi, GPUs or a working nvidia-smi -q: gpu.devices
reports those, once).

>>> _problems({"bus_id": "00000000:01:00.0", "gen_max": 3, "gen_device_max": 4, "gen_host_max": 4,
...            "width_max": 16, "width_current": 8})
(['00000000:01:00.0: gen3 max (GPU and slot support gen4)'], ['00000000:01:00.0: x8 (GPU supports x16)'])
>>> _problems({"bus_id": "b", "gen_max": 4, "gen_device_max": 5, "gen_host_max": 4, "width_max": 16,
...            "width_current": 16})  # a gen4 slot under a gen5 GPU: the platform
([], [])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.nvsmi_query import cut_short, number, parse_query, value
from preflight.tools.common import error_text
from preflight.tools.nvidia import NVIDIA_SMI

LINK = "PCI/GPU Link Info"


def parse_links(text: str) -> list[dict[str, Any]]:
    """``nvidia-smi -q`` -> [{bus_id, name, gen_max, gen_current, gen_device_max, gen_host_max, width_max,
    width_current}] (None where the driver prints N/A or nothing)."""
    links = []
    for gpu in parse_query(text):
        fields = gpu["fields"]
        links.append({
            "bus_id": gpu["bus_id"], "name": value(fields, "Product Name"),
            "gen_max": number(fields, f"{LINK}/PCIe Generation/Max"),
            "gen_current": number(fields, f"{LINK}/PCIe Generation/Current"),
            "gen_device_max": number(fields, f"{LINK}/PCIe Generation/Device Max"),
            "gen_host_max": number(fields, f"{LINK}/PCIe Generation/Host Max"),
            "width_max": number(fields, f"{LINK}/Link Width/Max"),
            "width_current": number(fields, f"{LINK}/Link Width/Current"),
        })
    return links


def _problems(link: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(faults, doubts) of one GPU's link: a generation trained below what GPU and slot support; a narrower width."""
    faults, doubts = [], []
    bus = link.get("bus_id")
    gen_max, device_max, host_max = link.get("gen_max"), link.get("gen_device_max"), link.get("gen_host_max")
    if gen_max is not None and device_max is not None and host_max is not None and gen_max < min(device_max,
                                                                                                host_max):
        faults.append(f"{bus}: gen{gen_max} max (GPU and slot support gen{min(device_max, host_max)})")
    width_max, width = link.get("width_max"), link.get("width_current")
    if width_max is not None and width is not None and width < width_max:
        doubts.append(f"{bus}: x{width} (GPU supports x{width_max})")
    return faults, doubts


def _describe(link: Mapping[str, Any]) -> str:
    gen = f"gen{link.get('gen_max')}" if link.get("gen_max") is not None else "gen ?"
    width = f"x{link.get('width_current')}" if link.get("width_current") is not None else "x?"
    return f"{link.get('bus_id')}: {gen} {width}"


class GpuPcieCheck(Check):
    ids = ("gpu.pcie.link",)
    accelerators = frozenset({"gpu"})
    not_applicable = "no NVIDIA GPUs to check"
    order = 58
    summary = ("PCIe link of every GPU (nvidia-smi -q): trained at the width the GPU supports, max generation not "
               "held below the GPU's by the host (an idle GPU's lower current generation is not judged)")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [NVIDIA_SMI.lookup(), Probe("query", NVIDIA_SMI.command("-q"), timeout=60)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        path = NVIDIA_SMI.found(outputs)
        facts: Facts = {"tool": path, "error": None, "links": []}
        if path is None:
            return facts
        query = outputs.get("query", ProbeOutput("", "not run", None))
        facts["links"] = parse_links(query.stdout)
        if not facts["links"] and "no devices were found" not in (query.stdout + query.stderr).lower():
            facts["error"] = f"nvidia-smi -q failed: {error_text(query)}"
        elif short := cut_short(query.stdout):
            facts["unread"] = short
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        check = "gpu.pcie.link"
        findings = []
        for host in sorted(facts):
            host_facts = facts[host]
            links: list[dict[str, Any]] = host_facts.get("links") or []
            if not host_facts.get("tool"):
                findings.append(tool_skip(check, host, NVIDIA_SMI, "gpu.devices.smi"))
            elif host_facts.get("unread"):  # part of the report is missing: no verdict on the part that came
                findings.append(finding(check, host, Status.ERROR, f"could not read {host}'s links: "
                                        f"{host_facts['unread']}", observed=str(host_facts["unread"]),
                                        expected="a whole nvidia-smi -q report"))
            elif host_facts.get("error"):
                findings.append(finding(check, host, Status.SKIP, f"{host_facts['error']} on {host} "
                                        "(reported once, by gpu.devices.smi)", observed=str(host_facts["error"])))
            elif not links:
                findings.append(finding(check, host, Status.SKIP, f"no GPU on {host}"))
            else:
                findings.append(_judge(host, links))
        return findings


def _judge(host: str, links: list[dict[str, Any]]) -> Finding:
    check = "gpu.pcie.link"
    observed = ", ".join(_describe(link) for link in links)
    faults = [text for link in links for text in _problems(link)[0]]
    doubts = [text for link in links for text in _problems(link)[1]]
    remedy = ("nvidia-smi -q -d PCI; lspci -vv -s <bus id> | grep -E 'LnkCap|LnkSta'  # reseat the GPU / riser, "
              "check the slot's lanes and the BIOS PCIe speed setting")
    if faults:
        return finding(check, host, Status.FAIL,
                       f"PCIe links trained below what the GPU and its slot support on {host} "
                       f"({'; '.join(faults + doubts)}): host-device transfers (NCCL through the NIC, data loading) "
                       "run at half the rate or less", observed="; ".join(faults + doubts),
                       expected="every GPU's link at the generation GPU and slot support", remedy=remedy)
    if doubts:
        return finding(check, host, Status.WARN,
                       f"PCIe links narrower than the GPU supports on {host} ({'; '.join(doubts)}): a link "
                       "trained at x8 halves host-device bandwidth; nvidia-smi may also report a narrower width "
                       "while the GPU idles, so check it under load (lspci LnkSta) before reseating",
                       observed="; ".join(doubts), expected="every GPU at its full width", remedy=remedy)
    platform = sorted({f"gen{link['gen_host_max']} slots under gen{link['gen_device_max']} GPUs" for link in links
                       if link.get("gen_host_max") is not None and link.get("gen_device_max") is not None
                       and link["gen_host_max"] < link["gen_device_max"]})
    return finding(check, host, Status.PASS, "every GPU's PCIe link at full width and generation on "
                   f"{host}" + (f" ({', '.join(platform)}: the platform's limit)" if platform else ""),
                   observed=observed, expected="width = max width, max gen = what GPU and slot support")
