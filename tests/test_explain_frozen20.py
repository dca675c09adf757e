"""Issue 38's twentieth frozen set, still drawing: real failure logs nothing in the project cites, scored blind.

tests/fixtures/explain/frozen20/logs.json (see its README) was drawn after round 38 by collectors who never ran
explain, and scored once with the code the session started from (43f5e49) and with rounds 36 to 38 (7f1d2ea). It
holds 40 of the 60 logs (18 of the 20 Ascend) a set must hold before it replaces the nineteenth: the next session
draws the rest into it, blind, and raises ``SIZE``. Its sources must be cited nowhere else: no catalog signature, no
other fixture (the earlier frozen sets included), nothing in preflight/, docs/ or bench/. Only the score is printed,
never which logs fail: the set stays SEALED.
"""

from __future__ import annotations

import json
from pathlib import Path

from sealed_sets import check_cited_nowhere_else, check_real_and_labelled, check_score

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
FROZEN20_DIR = FIXTURES / "frozen20"
FROZEN20: list[dict[str, object]] = json.loads((FROZEN20_DIR / "logs.json").read_text(encoding="utf-8"))

# 21 of 40 (52.5%) with the session's starting code (43f5e49), Ascend 9 of 18 (50.0%); the same with rounds 36 to 38
# (7f1d2ea). The engineers changing the catalog raise the floor with their change.
FLOOR_ALL = 0.52
FLOOR_ASCEND = 0.50
SIZE, SIZE_ASCEND = 40, 18  # drawn so far; a set replaces the nineteenth at 60 and 20


def test_frozen20_logs_are_real_and_labelled() -> None:
    check_real_and_labelled(FROZEN20, SIZE, SIZE_ASCEND)


def test_frozen20_sources_are_cited_nowhere_else() -> None:
    check_cited_nowhere_else(FROZEN20, FROZEN20_DIR)


def test_frozen20_score_is_at_least_the_floor() -> None:
    check_score(FROZEN20, "frozen20", FLOOR_ALL, FLOOR_ASCEND)
