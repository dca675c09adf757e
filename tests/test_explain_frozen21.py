"""Issue 38's twenty-first frozen set (drawn during round 39): real failure logs nothing in the project cites, scored
blind.

tests/fixtures/explain/frozen21/logs.json (see its README) was drawn while round 39 was written, by collectors who
never ran explain, and scored once complete with the code the session started from (dee06cd) and with round 39. Its
sources are fix commits, GitHub threads, documents pinned to a commit and a vendor's page. All must be cited nowhere
else: no catalog signature, no other fixture (the earlier frozen sets included), nothing in preflight/, docs/ or
bench/. Only the score is printed, never which logs fail: the set stays SEALED. It holds the 60 logs (20 Ascend) the
issue asks for, and more.
"""

from __future__ import annotations

import json
from pathlib import Path

from sealed_sets import check_cited_nowhere_else, check_real_and_labelled, check_score

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
FROZEN21_DIR = FIXTURES / "frozen21"
FROZEN21: list[dict[str, object]] = json.loads((FROZEN21_DIR / "logs.json").read_text(encoding="utf-8"))

# 22 of 75 (29.3%) with the session's starting code (dee06cd), Ascend 6 of 25 (24.0%); 23 of 75 (30.7%), Ascend 6,
# with round 39 (b3ed945). The engineers changing the catalog raise the floor with their change.
FLOOR_ALL = 0.30
FLOOR_ASCEND = 0.24


def test_frozen21_logs_are_real_and_labelled() -> None:
    check_real_and_labelled(FROZEN21, 60, 20)


def test_frozen21_sources_are_cited_nowhere_else() -> None:
    check_cited_nowhere_else(FROZEN21, FROZEN21_DIR)


def test_frozen21_score_is_at_least_the_floor() -> None:
    check_score(FROZEN21, "frozen21", FLOOR_ALL, FLOOR_ASCEND)
