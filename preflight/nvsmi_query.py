"""Parse ``nvidia-smi -q`` (the same report as ``nvidia-smi -a``): one block per GPU, indented ``Key : value`` lines.

Shared by gpu.pcie (the ``PCI`` / ``GPU Link Info`` section) and gpu.fabricmanager (the ``Fabric`` section).
Section names nest by indentation; a key is read by its path, e.g. ``PCI/GPU Link Info/PCIe Generation/Max``.

>>> blocks = parse_query("Attached GPUs : 1\\nGPU 00000000:19:00.0\\n    Product Name : NVIDIA H100 80GB HBM3\\n"
...                      "    Fabric\\n        State : Completed\\n        Status : Success\\n")
>>> blocks[0]["bus_id"], blocks[0]["fields"]["Fabric/State"]
('00000000:19:00.0', 'Completed')
"""

from __future__ import annotations

import re
from typing import Any

_GPU = re.compile(r"GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_ATTACHED = re.compile(r"^Attached GPUs\s*:\s*(\d+)\s*$", re.MULTILINE)


def cut_short(text: str) -> str | None:
    """Why a ``-q`` report was not read whole, or None: it announces more GPUs (``Attached GPUs : N``) than it
    holds blocks for (a probe cut by its timeout, an output truncated on the way). Judging the GPUs that made
    it would pass the ones that did not.

    >>> cut_short("Attached GPUs : 8\\nGPU 00000000:19:00.0\\n    Product Name : NVIDIA H100 80GB HBM3\\n")
    'nvidia-smi -q announced 8 GPUs but printed 1 of them (the output was cut short)'
    >>> cut_short("Attached GPUs : 1\\nGPU 00000000:19:00.0\\n"), cut_short("garbage")
    (None, None)
    """
    announced = _ATTACHED.search(text)
    if announced is None:
        return None
    printed = sum(1 for line in text.splitlines() if not line.startswith(" ") and _GPU.fullmatch(line.strip()))
    expected = int(announced[1])
    if printed >= expected:
        return None
    return f"nvidia-smi -q announced {expected} GPUs but printed {printed} of them (the output was cut short)"


def parse_query(text: str) -> list[dict[str, Any]]:
    """``nvidia-smi -q`` -> [{bus_id, fields: {"Section/Sub/Key": value}}], one per ``GPU <bus id>`` block."""
    gpus: list[dict[str, Any]] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        match = _GPU.fullmatch(line.strip()) if not line.startswith(" ") else None
        if match:
            gpus.append({"bus_id": match[1], "fields": {}})
            stack = []
            continue
        if not gpus or not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        key, sep, value = line.strip().partition(":")
        key = key.strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([name for _, name in stack] + [key])
        if sep and value.strip():
            gpus[-1]["fields"][path] = value.strip()
        elif sep:
            gpus[-1]["fields"][path] = ""
        else:
            stack.append((indent, key))
    return gpus


def value(fields: dict[str, str], path: str) -> str | None:
    """The value at ``path``, None when absent or ``N/A`` / not supported."""
    text = fields.get(path)
    if text is None or text.strip().lower() in ("", "n/a", "[n/a]", "not supported", "unknown") \
            or "deprecated" in text.lower():
        return None
    return text.strip()


def number(fields: dict[str, str], path: str) -> int | None:
    """An integer at ``path`` (``16x`` -> 16), None when absent or not a number."""
    text = value(fields, path)
    match = re.fullmatch(r"(\d+)x?", text or "")
    return int(match[1]) if match else None
