"""``hccn_tool -i N -link_stat -g``: a RoCE port's link history, newest record first.

Real outputs, three layouts:

- ``[devid N]`` lines (Ascend/mind-cluster faultdiag test data; hicann/hccl's troubleshooting guide, whose driver
  adds ``link down count``; ``link change records : NA`` when there is none, per hicann/driver's tool.c)::

    [devid 0]current time        : Tue Oct 28 21:46:46 2025
    [devid 0]link up count       : 2
    [devid 0]link down count     : 1
    [devid 0]link change records :
    [devid 0]    Sun Oct  5 10:13:51 2025    LINK UP
    [devid 0]    Sun Oct  5 10:13:50 2025    LINK DOWN

- ``[device N]`` lines (MindCluster's fault-diag user guide), otherwise the same;
- Ascend 950 (hicann/driver's HCCN Tool manual): counts without a prefix and a table, with no ``current time``::

    link up count :    2
    link down count :  2
    |  0  |  0   |  4   |  LINK_DOWN  | Mon Feb 9 21:45:47 2026 |

Times are the device's clock, so each record's age is taken against the ``current time`` line of the same output
(no such line: ages unknown, ``downs`` None).

>>> stat = parse_link_stat("[devid 0]current time        : Wed Aug  2 03:36:43 2022\\n"
...                        "[devid 0]link up count       : 2\\n[devid 0]link change records :\\n"
...                        "[devid 0]    Tue Aug  1 14:44:40 2022    LINK DOWN\\n"
...                        "[devid 0]    Tue Aug  1 14:43:26 2022    LINK UP\\n")
>>> stat["up_count"], stat["down_count"], stat["downs"], stat["last_down"]
(2, None, [46323], 'Tue Aug  1 14:44:40 2022')
>>> parse_link_stat("link up count :    2\\n|  0  |  0   |  4   |  LINK_DOWN  | Mon Feb 9 21:45:47 2026 |\\n")
{'up_count': 2, 'down_count': None, 'downs': None, 'last_down': 'Mon Feb 9 21:45:47 2026'}
>>> parse_link_stat("garbage") is None
True
"""

from __future__ import annotations

import calendar
import re
import time
from typing import Any

_PREFIX = r"^[ \t]*(?:\[dev(?:id|ice)\s*\d+\])?[ \t]*"
_STAMP = r"\w{3}\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2}\s+\d{4}"
_NOW = re.compile(_PREFIX + r"current time\s*:\s*(.+?)\s*$", re.M)
_COUNT = re.compile(_PREFIX + r"link (up|down) count\s*:\s*(\d+)\s*$", re.M)
_RECORD = re.compile(_PREFIX + rf"({_STAMP})\s+LINK\s+(UP|DOWN)\s*$", re.M)
# Ascend 950's table row: | NPU | UDie | Port | Link_Status | Time_Stamp |
_ROW = re.compile(rf"^\s*\|(?:[^|\n]*\|){{3}}\s*LINK_(UP|DOWN)\s*\|\s*({_STAMP})\s*\|\s*$", re.M)


def _epoch(text: str) -> int | None:
    """'Tue Aug  1 14:44:40 2022' -> seconds (the clock's own zone does not matter: only differences are used)."""
    try:
        return calendar.timegm(time.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y"))
    except ValueError:
        return None


def parse_link_stat(text: str) -> dict[str, Any] | None:
    """{up_count, down_count (None when not printed), downs: ages in seconds of each LINK DOWN record before
    ``current time`` (None when that line is missing), last_down: the newest one as printed}; None when the
    output has neither counts nor records (nothing read). Never raises."""
    counts = {kind: int(n) for kind, n in _COUNT.findall(text)}
    records = _RECORD.findall(text) + [(stamp, kind) for kind, stamp in _ROW.findall(text)]
    if not counts and not records:
        return None
    now_match = _NOW.search(text)
    now = _epoch(now_match[1]) if now_match else None
    downs: list[int] | None = None
    if now is not None:
        downs = sorted(now - at for stamp, kind in records if kind == "DOWN" and (at := _epoch(stamp)) is not None)
    last = next((stamp for stamp, kind in records if kind == "DOWN"), None)  # records are newest first
    return {"up_count": counts.get("up"), "down_count": counts.get("down"), "downs": downs, "last_down": last}
