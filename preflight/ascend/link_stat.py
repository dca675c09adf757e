"""``hccn_tool -i N -link_stat -g``: a RoCE port's link history, newest record first.

Real output (Ascend/mind-cluster, component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_after.txt;
newer drivers print ``[device 0]`` instead of ``[devid 0]`` and may add ``link down count``)::

    [devid 0]current time        : Wed Aug  2 03:36:43 2022
    [devid 0]link up count       : 2
    [devid 0]link change records :
    [devid 0]    Tue Aug  1 14:44:40 2022    LINK DOWN
    [devid 0]    Tue Aug  1 14:43:40 2022    LINK UP

Times are the device's clock, so each record's age is taken against the ``current time`` line of the same output.

>>> stat = parse_link_stat("[devid 0]current time        : Wed Aug  2 03:36:43 2022\\n"
...                        "[devid 0]link up count       : 2\\n[devid 0]link change records :\\n"
...                        "[devid 0]    Tue Aug  1 14:44:40 2022    LINK DOWN\\n"
...                        "[devid 0]    Tue Aug  1 14:43:26 2022    LINK UP\\n")
>>> stat["up_count"], stat["down_count"], stat["downs"], stat["last_down"]
(2, None, [46323], 'Tue Aug  1 14:44:40 2022')
>>> parse_link_stat("garbage") is None
True
"""

from __future__ import annotations

import calendar
import re
import time
from typing import Any

_PREFIX = r"^\s*\[dev(?:id|ice)\s+\d+\]\s*"
_NOW = re.compile(_PREFIX + r"current time\s*:\s*(.+?)\s*$", re.M)
_COUNT = re.compile(_PREFIX + r"link (up|down) count\s*:\s*(\d+)", re.M)
_RECORD = re.compile(_PREFIX + r"(\w{3}\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2}\s+\d{4})\s+LINK\s+(UP|DOWN)\s*$", re.M)


def _epoch(text: str) -> int | None:
    """'Tue Aug  1 14:44:40 2022' -> seconds (the clock's own zone does not matter: only differences are used)."""
    try:
        return calendar.timegm(time.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y"))
    except ValueError:
        return None


def parse_link_stat(text: str) -> dict[str, Any] | None:
    """{up_count, down_count (None when not printed), downs: ages in seconds of each LINK DOWN record before
    ``current time`` (None when that line is missing), last_down: the newest one as printed}; None when the
    output has neither counts nor records. Never raises."""
    counts = {kind: int(n) for kind, n in _COUNT.findall(text)}
    records = _RECORD.findall(text)
    if not counts and not records:
        return None
    now_match = _NOW.search(text)
    now = _epoch(now_match[1]) if now_match else None
    downs: list[int] | None = None
    if now is not None:
        downs = sorted(now - at for stamp, kind in records if kind == "DOWN" and (at := _epoch(stamp)) is not None)
    last = next((stamp for stamp, kind in records if kind == "DOWN"), None)  # records are newest first
    return {"up_count": counts.get("up"), "down_count": counts.get("down"), "downs": downs, "last_down": last}
