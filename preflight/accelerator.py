"""``--accelerator auto``: which accelerator this machine has, from its vendor tools, and why.

npu when ``npu-smi info -l`` works and counts at least one NPU; else gpu when ``nvidia-smi -L`` works and
lists at least one GPU; else cpu. A tool that is present but fails (no driver loaded, no device) does not
count: the reason says so, so a GPU node without a working driver is not silently judged as a CPU node
without the report telling why.

>>> from preflight.batch import ProbeOutput
>>> decide({"npu": ProbeOutput("", "", 127), "gpu": ProbeOutput("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\\n")})
Choice(accelerator='gpu', reason='auto: nvidia-smi -L lists 1 GPU', devices=1)
>>> decide({"npu": ProbeOutput("", "", 127), "gpu": ProbeOutput("", "NVIDIA-SMI has failed", 9)}).reason
'auto: no npu-smi; nvidia-smi -L failed (exit 9: NVIDIA-SMI has failed): judged as a cpu machine'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from preflight.batch import Probe, ProbeOutput, build_script, new_nonce, parse_output
from preflight.tools.ascend import NPU_SMI
from preflight.tools.nvidia import NVIDIA_SMI

ACCELERATORS = ("npu", "gpu", "cpu")
CHOICES = ("auto", *ACCELERATORS)
_TOTAL = re.compile(r"^\s*Total Count\s*:\s*(\d+)", re.MULTILINE)  # npu-smi info -l
_GPU_LINE = re.compile(r"^GPU \d+:", re.MULTILINE)  # nvidia-smi -L (MIG devices are indented lines below)


@dataclass(frozen=True)
class Choice:
    accelerator: str
    reason: str
    devices: int = 0  # how many the tool counted (0: not counted)


def probes() -> list[Probe]:
    """The two read-only commands ``auto`` runs."""
    return [Probe("npu", NPU_SMI.command("info", "-l"), timeout=10), Probe("gpu", NVIDIA_SMI.command("-L"), timeout=10)]


def decide(outputs: Mapping[str, ProbeOutput]) -> Choice:
    """The choice from the two tools' outputs (pure)."""
    npu, gpu = outputs.get("npu"), outputs.get("gpu")
    npus = _count(_TOTAL.findall(npu.stdout)) if npu and npu.ok else 0
    if npus:
        return Choice("npu", f"auto: npu-smi info -l counts {npus} NPU{'s' if npus > 1 else ''}", npus)
    gpus = len(_GPU_LINE.findall(gpu.stdout)) if gpu and gpu.ok else 0
    if gpus:
        return Choice("gpu", f"auto: nvidia-smi -L lists {gpus} GPU{'s' if gpus > 1 else ''}", gpus)
    why = [_why("npu-smi", "info -l", npu, "no NPU"), _why("nvidia-smi", "-L", gpu, "no GPU")]
    return Choice("cpu", f"auto: {'; '.join(why)}: judged as a cpu machine")


def detect_here(timeout: float = 10.0) -> Choice:
    """Run the probes on this machine (no SSH) and decide."""
    from preflight.transport.local import LocalTransport

    nonce = new_nonce()
    found = probes()
    execution = LocalTransport().run_script(build_script(found, nonce), timeout)
    return decide(parse_output(execution.stdout, [p.key for p in found], nonce, execution.stderr))


def _count(values: list[str]) -> int:
    return int(values[0]) if values else 0


def _why(tool: str, args: str, output: ProbeOutput | None, none: str) -> str:
    if output is None or output.exit_status == 127:
        return f"no {tool}"
    if not output.ok:
        detail = " ".join((output.stderr or output.stdout).split())[:120]
        return f"{tool} {args} failed (exit {output.exit_status}{': ' + detail if detail else ''})"
    return f"{tool} {args} shows {none}"
