"""Issue 21's held-out accuracy: the share of held-out real logs whose best match has the right category.

The logs in tests/fixtures/explain/heldout/ were set aside at random before any new signature was written
(see its README); this test only measures them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.explain.matcher import explain_texts

FOLDER = Path(__file__).parent / "fixtures" / "explain" / "heldout"
HELDOUT: list[dict[str, str]] = [log for name in ("logs.json", "logs2.json", "logs3.json", "logs4.json")
                                 for log in json.loads((FOLDER / name).read_text(encoding="utf-8"))]
THRESHOLD = 0.95  # issue 21's target
MEASURED = 0.87  # 27 of 31 (18/20 + 3/5 + 4/4 + 2/2) as measured (docs/explain.md); must not drop


def accuracy() -> tuple[float, list[tuple[str, str, str]]]:
    """(share right, [(source, expected, got) for each miss])."""
    misses = []
    for log in HELDOUT:
        best = explain_texts({"log": log["excerpt"]}).best
        got = best.signature.category if best else "unknown"
        if got != log["category"]:
            misses.append((log["source"], log["category"], got))
    return 1 - len(misses) / len(HELDOUT), misses


def test_heldout_set_is_real_and_frozen() -> None:
    assert len(HELDOUT) == 31
    assert all(h["source"].startswith("https://github.com/") and h["excerpt"] and h["category"] for h in HELDOUT)


def test_heldout_accuracy_does_not_drop() -> None:
    share, misses = accuracy()
    assert round(share, 2) >= MEASURED, misses


@pytest.mark.xfail(strict=True, reason="issue 21's 95% target is not met: 27/31 held-out logs right; the four "
                   "misses have no signature because no training log carried their wording")
def test_heldout_accuracy_at_least_95_percent() -> None:
    share, misses = accuracy()
    assert share >= THRESHOLD, misses
