"""Reading what the diagnose check's probes and steps printed: device nodes, the dry run's stages, own addresses."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from preflight.checks.base import Facts, StepOutcome
from preflight.diagnose.plan import Plan
from preflight.interfaces import parse_interface, parse_ip

STAGE_TEXT = {
    "import": "importing torch",
    "store": "connecting to the rendezvous store at {where}",
    "init": "init_process_group (gloo connects every pair of ranks)",
    "all_reduce": "the 1-element all_reduce",
    "barrier": "the barrier",
    "backend": "the job's backend ({backend})",
    "done": "done",
}

def parse_devices(text: str) -> dict[str, int]:
    """Device nodes listed by the devices probe, counted by kind.

    >>> parse_devices("/dev/nvidia0\\n/dev/nvidia1\\n/dev/nvidiactl\\n/dev/davinci0\\n")
    {'gpu': 2, 'npu': 1}
    """
    counts = {"gpu": 0, "npu": 0}
    for line in text.splitlines():
        if re.fullmatch(r"/dev/nvidia\d+", line.strip()):
            counts["gpu"] += 1
        elif re.fullmatch(r"/dev/davinci\d+", line.strip()):
            counts["npu"] += 1
    return counts


def parse_dryrun(text: str) -> dict[str, Any]:
    """A rank's output: the result line, or the last stage it reached when it was killed; ``times``: the
    seconds since the rank's start at which it reached each stage.

    >>> parse_dryrun('{"event": "stage", "stage": "import", "t": 0}\\n{"event": "stage", "stage": "store"}\\n')
    {'stage': 'store', 'error': None, 'finished': False, 'times': {'import': 0.0}}
    >>> parse_dryrun("garbage")
    {'stage': None, 'error': None, 'finished': False, 'times': {}}
    """
    stage: str | None = None
    times: dict[str, float] = {}
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        if data.get("event") == "result":
            return {**{k: v for k, v in data.items() if k != "event"}, "finished": True, "times": times}
        if data.get("event") == "stage" and isinstance(data.get("stage"), str):
            stage = data["stage"]
            if isinstance(data.get("t"), (int, float)) and not isinstance(data.get("t"), bool):
                times[data["stage"]] = float(data["t"])
    return {"stage": stage, "error": None, "finished": False, "times": times}


def own_addresses(net_facts: Facts | None) -> set[str] | None:
    """Every non-loopback address of a host, from the net check's facts (None when unknown)."""
    if not isinstance(net_facts, dict) or not isinstance(net_facts.get("interfaces"), dict):
        return None
    found: set[str] = set()
    for entry in net_facts["interfaces"].values():
        for text in (entry or {}).get("addrs") or [] if isinstance(entry, dict) else []:
            iface = parse_interface(str(text))
            if iface is not None and not iface.ip.is_loopback and not iface.ip.is_link_local:
                found.add(str(iface.ip))
    return found


def loopback(address: str) -> bool:
    ip = parse_ip(address)
    return ip is not None and ip.is_loopback


def dryrun_results(outcomes: Sequence[StepOutcome]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for outcome in outcomes:
        for host, outs in outcome.foreground.items():
            if "dryrun" in outs:
                found[host] = {**parse_dryrun(outs["dryrun"].stdout), "exit_status": outs["dryrun"].exit_status}
    return found


def stage_text(stage: object, plan: Plan) -> str:
    text = STAGE_TEXT.get(str(stage), "starting python")
    return text.format(where=f"{plan.master_addr}:{plan.port_text}", backend=plan.backend)
