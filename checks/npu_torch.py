"""npu.torch: ``import torch, torch_npu`` and ``torch.npu.device_count()`` in the job's environment (login env,
``setup:``, ``env:``), against ``devices_per_host``. Only with ``--checks npu.torch`` (or ``--checks npu``):
importing torch and torch_npu takes seconds on a real node.

The import fails without CANN's environment (``ImportError: libhccl.so: cannot open shared object file ...
Please run 'source set_env.sh' in the CANN installation path.``; npu.env names what is missing), or without
torch_npu in the job's python (``No module named 'torch_npu'``).

>>> parse_smoke('noise\\n{"version": "2.1.0.post8", "count": 8}\\n')
{'version': '2.1.0.post8', 'count': 8}
>>> parse_smoke("Traceback ...") is None
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.job_env import CANN_ENV_REMEDY, job_command, parse_setup

SMOKE = ("import json\nout = {}\ntry:\n    import torch\n    import torch_npu\n"
         "    out['version'] = getattr(torch_npu, '__version__', None)\n"
         "    out['count'] = int(torch.npu.device_count())\n"
         "except BaseException as exc:\n    out['error'] = (type(exc).__name__ + ': ' + str(exc))[:400]\n"
         "print(json.dumps(out))")


def parse_smoke(text: str) -> dict[str, Any] | None:
    """The smoke import's JSON line (version, count, or error); None when it printed none. Never raises."""
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


class NpuTorchCheck(Check):
    ids = ("npu.torch",)
    order = 47
    by_default = False
    accelerators = frozenset({"npu"})
    not_applicable = "no NPUs: torch_npu is not used"
    summary = "import torch_npu in the job's environment and torch.npu.device_count() = devices_per_host"

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("smoke", job_command(host, cluster, [host.python, "-c", SMOKE]), timeout=120)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        smoke = outputs.get("smoke", ProbeOutput("", "not run", None))
        found = parse_smoke(smoke.stdout)
        if found is None:
            last = [line for line in smoke.stderr.strip().splitlines() if not line.startswith("preflight-setup:")]
            found = {"error": (last or [f"printed nothing (exit status {smoke.exit_status})"])[-1][:400]}
        return {"smoke": found, "setup": parse_setup(smoke.stderr)}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        devices = int(ctx.cluster.devices_per_host or 0)
        return [_judge(host, host_facts, devices) for host, host_facts in sorted(facts.items())]


def _judge(host: str, facts: Facts, devices: int) -> Finding:
    check = "npu.torch"
    smoke: dict[str, Any] = facts.get("smoke") or {"error": "not run"}
    if smoke.get("error"):
        error = str(smoke["error"])
        if "cannot open shared object file" in error or "set_env.sh" in error:
            remedy = CANN_ENV_REMEDY
        elif "No module named" in error:
            remedy = (f"on {host}: install torch_npu (matching torch and CANN) into the job's python "
                      "(hosts.yaml python:)")
        else:
            remedy = f"on {host}: run the import by hand in the job's shell to see the whole error"
        return finding(check, host, Status.FAIL,
                       f"import torch_npu fails in the job's environment on {host}: {error}",
                       observed=error, expected="torch_npu imports", remedy=remedy)
    count = smoke.get("count")
    if devices > 0 and count != devices:
        return finding(check, host, Status.FAIL,
                       f"torch.npu.device_count() is {count} on {host}, devices_per_host is {devices}: the "
                       "job would start fewer ranks, or map a rank to a device that is not there",
                       observed=f"device_count {count}", expected=str(devices),
                       remedy=f"on {host}: npu-smi info; echo $ASCEND_RT_VISIBLE_DEVICES  # in the job's shell")
    return finding(check, host, Status.PASS, f"torch_npu imports on {host}, {count} NPUs visible",
                   observed=f"device_count {count}")
