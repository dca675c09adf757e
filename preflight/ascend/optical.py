"""The optical module's readings in ``hccn_tool -i N -optical -g``: per-lane Tx/Rx power, temperature, and the
module's own alarm thresholds.

Real output (Ascend/mind-cluster, component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_before.txt),
in part::

    temperature          : 47 C
    Tx Power0            : 4.4035 mW
    Rx Power1            : 0.0054 mW
    Temp High Thres      : 70 C
    TxPower High Thres   : 3.5481 mW
    TxPower Low Thres    : 0.2818 mW
    RxPower High Thres   : 3.5481 mW
    RxPower Low Thres    : 0.1445 mW

Judged only against the thresholds the module itself reports (vendors differ; none is assumed).

>>> power = parse_optical("temperature : 47 C\\nTx Power0 : 4.4035 mW\\nRx Power0 : 1.0189 mW\\n"
...                       "Rx Power1 : 0.0054 mW\\nTxPower High Thres : 3.5481 mW\\nTxPower Low Thres : 0.2818 mW\\n"
...                       "RxPower High Thres : 3.5481 mW\\nRxPower Low Thres : 0.1445 mW\\nTemp High Thres : 70 C\\n")
>>> for problem in optical_problems(power):
...     print(problem)
Tx power on lane 0 is 4.4035 mW, above the module's high threshold 3.5481 mW
Rx power on lane 1 is 0.0054 mW, below the module's low threshold 0.1445 mW
>>> parse_optical("optical info:\\npresent : not present\\n") is None
True
>>> parse_optical("present : not present\\nTx Power : 4.4035 mW\\nRx Power : 1.0189 mW\\n")["rx"]
{'0': 1.0189}
"""

from __future__ import annotations

import re
from typing import Any

# "Tx Power0 : 4.4035 mW"; MindCluster's fault-diag guide shows a module's single "Tx Power : 4.4035 mW" (lane 0);
# lanes the module lacks read "NA" (hicann/driver, hccn_tool/tool.c) and are left out.
_LANE = re.compile(r"^\s*(Tx|Rx) Power(\d*)\s*:\s*([0-9.]+)\s*mW\s*$", re.I | re.M)
_THRESHOLD = re.compile(r"^\s*(TxPower|RxPower|Temp) (High|Low) Thres\s*:\s*(-?[0-9.]+)\s*(mW|C)\s*$", re.I | re.M)
_TEMPERATURE = re.compile(r"^\s*temperature\s*:\s*(-?[0-9.]+)\s*C\s*$", re.I | re.M)


def parse_optical(text: str) -> dict[str, Any] | None:
    """{tx: {lane: mW}, rx: {lane: mW}, temperature: C or None, thresholds: {"rx_low": mW, "temp_high": C, ...}};
    None when the output has no lane reading. Never raises."""
    lanes: dict[str, dict[str, float]] = {"tx": {}, "rx": {}}
    for kind, lane, value in _LANE.findall(text):
        lanes[kind.lower()][lane or "0"] = float(value)
    if not lanes["tx"] and not lanes["rx"]:
        return None
    thresholds = {f"{what.lower().removesuffix('power')}_{side.lower()}": float(value)
                  for what, side, value, _ in _THRESHOLD.findall(text)}
    temperature = _TEMPERATURE.search(text)
    return {**lanes, "temperature": float(temperature[1]) if temperature else None, "thresholds": thresholds}


def optical_problems(power: dict[str, Any] | None) -> list[str]:
    """Each reading outside the module's own thresholds, in words; none when the module reports no thresholds."""
    if not power:
        return []
    limits = power.get("thresholds") or {}
    found: list[str] = []
    for kind in ("tx", "rx"):
        low, high = limits.get(f"{kind}_low"), limits.get(f"{kind}_high")
        for lane, value in sorted((power.get(kind) or {}).items(), key=lambda item: int(item[0])):
            name = f"{kind.capitalize()} power on lane {lane} is {value:g} mW"
            if high is not None and value > high:
                found.append(f"{name}, above the module's high threshold {high:g} mW")
            elif low is not None and value < low:
                found.append(f"{name}, below the module's low threshold {low:g} mW")
    temperature, hot = power.get("temperature"), limits.get("temp_high")
    if temperature is not None and hot is not None and temperature > hot:
        found.append(f"temperature {temperature:g} C, above the module's high threshold {hot:g} C")
    return found
