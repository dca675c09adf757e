"""``npu-smi info`` and ``npu-smi info -l``, read by their headers (pure parsers for the npu check).

``npu-smi info`` prints one box table with a row pair per chip: an NPU row (``NPU  Name | Health | ...``) and a
chip row whose first cell the second header line names. Three layouts exist (real samples: tests/fixtures/npu):

- ``Chip``: 910A / Atlas A2 (910B*): one chip per NPU, the chip row holds the chip index only;
- ``Chip  Phy-ID``: Atlas A3 (``Ascend910``): two chips per NPU, each with its physical id (hccn_tool's id);
- ``Chip  Device``: Atlas 300/800 inference (310: four chips per card), 300I Pro / 300I Duo (310P3: one or two
  chips per card), Atlas 200I DK A2 / Orange Pi AIpro (310B: Bus-Id ``NA``, no HBM): the chip index and the
  logical device id (what ACL and torch count). The NPU id is the card's (215, 2048, 32768, ...).

Every chip row is one device (one rank); each carries its own NPU row, so its health is its own. Rows are told
apart by the Bus-Id cell (a PCI address, or ``NA`` right after an NPU row), never by the chip name, which may be
all digits (``310``). ``npu-smi info -l`` counts NPUs: ``Total Count``, then ``NPU ID`` / ``Chip Count`` blocks.

>>> table = ("| NPU     Name      | Health          | Power(W)          Temp(C)              |\\n"
...          "| Chip    Device    | Bus-Id          | AICore(%)         Memory-Usage(MB)     |\\n"
...          "| 215     310       | OK              | 12.8              56                   |\\n"
...          "| 1       1         | 0000:DC:00.0    | 0                 2703 / 8192          |\\n")
>>> parse_info(table)["devices"]  # doctest: +NORMALIZE_WHITESPACE
[{'id': 215, 'chip': '310', 'health': 'OK', 'bus_id': '0000:DC:00.0', 'memory_mb': [2703, 8192],
  'chip_index': 1, 'device_id': 1}]
"""

from __future__ import annotations

import re
from typing import Any

LAYOUTS = {"chip": "chip", "chip phy-id": "phy_id", "chip device": "device"}
_BUS_ID = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]")
_HEALTH = re.compile(r"[A-Za-z][A-Za-z ]*")
_USAGE = re.compile(r"(\d+)\s*/\s*(\d+)")
_VERSION = re.compile(r"\bnpu-smi\s+(\d[\w.]*)", re.I)
_PROCESS_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s*\|\s*(\d+)\s*\|\s*([^|]*?)\s*\|\s*(\d+)\s*\|")
_NO_PROCESS = re.compile(r"No running processes found in NPU\s+\d+", re.I)
_BORDER = re.compile(r"^\+[-=+]*\+?$")


def _cells(line: str) -> list[str]:
    """The cells of a box-table row: ``| 0  310 | OK |`` -> ['0  310', 'OK']."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _memory(cell: str) -> list[int] | None:
    """[used, total] MB of the device memory: the last usage column (HBM-Usage where the table has one, else
    Memory-Usage).

    >>> _memory("0           0    / 0          41052/ 65536"), _memory("0            3628 / 15609"), _memory("0")
    ([41052, 65536], [3628, 15609], None)
    """
    pairs = _USAGE.findall(cell)
    return [int(pairs[-1][0]), int(pairs[-1][1])] if pairs else None


def _chip_row(first: list[str], layout: str | None) -> dict[str, int] | None:
    """The chip row's first cell by the layout its header named; None when it does not fit."""
    if not all(token.isdecimal() for token in first) or not first:
        return None
    if layout in (None, "chip") and len(first) == 1:
        return {}
    if layout == "phy_id" and len(first) == 2:
        return {"chip_index": int(first[0]), "phy_id": int(first[1])}
    if layout == "device" and len(first) == 2:
        return {"chip_index": int(first[0]), "device_id": int(first[1])}
    return None


def parse_info(text: str) -> dict[str, Any]:
    """``npu-smi info`` -> {devices, processes, process_table, version, layout, unread}.

    devices: one per chip row: {id (the NPU's), chip (Name), health, bus_id, memory_mb: [used, total] | None},
    plus chip_index and phy_id (``Chip Phy-ID``) or device_id (``Chip Device``). unread: the first table row under
    the column headers read as nothing (else the first line read as nothing), for the error a caller gives when no
    device was read.
    """
    devices: list[dict[str, Any]] = []
    processes: list[dict[str, Any]] = []
    in_processes = process_table = False
    layout: str | None = None
    version: str | None = None
    unread: dict[bool, str] = {}  # a table row after the column headers? -> the first such line read as nothing
    awaiting_chip = False  # the last data row was an NPU row: a Bus-Id of NA is its chip row's
    for raw in text.splitlines():
        line = raw.strip()
        if not line or _BORDER.match(line):
            continue
        cells = _cells(line) if line.startswith("|") else []
        head = " ".join(cells[0].split()).lower() if cells else ""
        found = _VERSION.search(line)
        if found and version is None and (not cells or "version" in line.lower()):
            version = found[1]
        elif head.startswith("npu") and "name" in head:
            in_processes, awaiting_chip = False, False
        elif head in LAYOUTS and len(cells) > 1 and cells[1].lower() == "bus-id":
            layout = LAYOUTS[head]
        elif "Process id" in line or "Process name" in line:
            in_processes = process_table = True
        elif in_processes and (_NO_PROCESS.search(line) or _PROCESS_ROW.match(line)):
            match = _PROCESS_ROW.match(line)
            if match:
                processes.append({"npu": int(match[1]), "chip": int(match[2]), "pid": int(match[3]),
                                  "name": match[4], "memory_mb": int(match[5])})
        elif not in_processes and len(cells) >= 3 and _read_row(cells, layout, devices, awaiting_chip):
            awaiting_chip = devices[-1]["bus_id"] is None
        else:
            unread.setdefault(bool(cells) and layout is not None, line)
    return {"devices": devices, "processes": processes, "process_table": process_table, "version": version,
            "layout": layout, "unread": unread.get(True, unread.get(False))}


def _read_row(cells: list[str], layout: str | None, devices: list[dict[str, Any]], awaiting_chip: bool) -> bool:
    """Reads one device-table row into ``devices`` (an NPU row adds a device, a chip row completes it)."""
    first, second = cells[0].split(), cells[1]
    if _BUS_ID.fullmatch(second) or (awaiting_chip and second.upper() == "NA"):
        chip = _chip_row(first, layout)
        if chip is None or not devices or devices[-1]["bus_id"] is not None:
            return False
        devices[-1].update({"bus_id": second, "memory_mb": _memory(cells[2]), **chip})
        return True
    if len(first) >= 2 and first[0].isdecimal() and _HEALTH.fullmatch(second):
        devices.append({"id": int(first[0]), "chip": " ".join(first[1:]), "health": second, "bus_id": None,
                        "memory_mb": None})
        return True
    return False


def parse_list(text: str) -> dict[str, Any]:
    """``npu-smi info -l`` -> {total (Total Count), ids (NPU IDs), chips (each Chip Count), unread}.

    unread: the first non-blank line when nothing was read (neither Total Count nor an NPU ID).

    >>> parse_list("\\tTotal Count                    : 2\\n\\n\\tNPU ID   : 0\\n\\tChip Count : 1\\n\\tNPU ID : 1\\n")
    {'total': 2, 'ids': [0, 1], 'chips': [1], 'unread': None}
    >>> parse_list("Segmentation fault\\n")["unread"]
    'Segmentation fault'
    """
    total: int | None = None
    ids: list[int] = []
    chips: list[int] = []
    first: str | None = None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = " ".join(key.split()).lower(), value.strip()
        if first is None and line.strip():
            first = line.strip()
        if not sep or not value.isdecimal():
            continue
        if key == "total count" and total is None:
            total = int(value)
        elif key == "npu id":
            ids.append(int(value))
        elif key == "chip count":
            chips.append(int(value))
    read = total is not None or ids
    return {"total": total, "ids": ids, "chips": chips, "unread": None if read else first}
