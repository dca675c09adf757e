"""How often would explain's last layer (the known case a log resembles) be right on logs nobody had read? Measured on
the spent frozen sets as they were while sealed (issue 38, round 24).

``bench/explain_learned_fallback.py`` measures the layer on the logs left in the spent sets, one set left out at a
time; those are the hardest logs (the ones the rules written from their set still miss). This script asks the layer
the question it meets in use instead: each spent set is scored with the code and the known cases of the commit at
which the set was still sealed (so neither its rules nor its logs were in them), and the layer is asked about the logs
explain was silent on there, for a grid of its two thresholds (``MIN_WORDS``: the log's words the cases know;
``MIN_SIMILARITY``: how alike the nearest case must be).

    python3 bench/explain_fallback_unseen.py

A log that shows no failure line (no decoded code, no suspicious line: a hang) is held to at least 0.6 in every
cell, as explain does (``QUIET_MIN_SIMILARITY``). Each cell prints ``right/wrong/bugs``: silent logs labelled with a
cause that the layer names right, names wrong, and application bugs (labelled ``unknown``: silence is right) it would
blame. Every commit is checked out in a temporary git worktree; nothing of this tree is changed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (set, a commit at which it was sealed and the known-case layer existed)
SEALED_AT = (("frozen11", "64d907b"), ("frozen12", "4756090"), ("frozen13", "fab75f7"))
MIN_WORDS = (6, 9, 12)
MIN_SIMILARITY = (0.4, 0.5, 0.6)

_CHILD = r"""
import json, sys
root, name, grid = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path.insert(0, root)
from preflight.explain.matcher import explain_texts
from preflight.explain import known_cases as kc
logs = json.load(open(f"{root}/tests/fixtures/explain/{name}/logs.json", encoding="utf-8"))
silent = []
for e in logs:
    r = explain_texts({"log.txt": str(e["excerpt"])}, resemble=False)
    best = r.best
    # round 24's rule, applied to the old code: a log without a line that shows a failure must be 0.6 alike
    shows = any(not m.harmless for m in r.matches) or any(not s.harmless for s in r.suspects)
    if (best is None or best.signature.category == "unknown") and r.clean is None:
        silent.append((e["category"], kc.case_words(str(e["excerpt"])), shows))
cells = {}
for words, alike in grid:
    counts = [0, 0, 0]
    for label, found, shows in silent:
        near = kc.index().nearest(found, alike if shows else max(alike, 0.6), words)
        if near is not None:
            counts[2 if label == "unknown" else 0 if near.category == label else 1] += 1
    cells[f"{words} {alike}"] = counts
print(json.dumps({"logs": len(logs), "silent": len(silent), "bugs": sum(c == "unknown" for c, _, _ in silent),
                  "cells": cells}))
"""


def measure(name: str, commit: str, grid: list[tuple[int, float]]) -> dict[str, object]:
    """The layer's counts on ``name`` with the code of ``commit`` (a temporary worktree)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), commit], check=True)
        try:
            out = subprocess.run([sys.executable, "-c", _CHILD, str(tree), name, json.dumps(grid)], check=True,
                                 capture_output=True, text=True, cwd=tmp).stdout
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    grid = [(w, s) for w in MIN_WORDS for s in MIN_SIMILARITY]
    totals = {f"{w} {s}": [0, 0, 0] for w, s in grid}
    for name, commit in SEALED_AT:
        found = measure(name, commit, grid)
        print(f"{name} at {commit}: {found['logs']} logs, explain silent on {found['silent']} "
              f"({found['bugs']} of them application bugs)")
        cells: dict[str, list[int]] = found["cells"]  # type: ignore[assignment]
        for key, counts in cells.items():
            totals[key] = [a + b for a, b in zip(totals[key], counts, strict=True)]
        for w in MIN_WORDS:
            print(f"  min_words {w:2d}  " + "  ".join(f"sim {s:.1f}: {'/'.join(map(str, cells[f'{w} {s}']))}"
                                                     for s in MIN_SIMILARITY))
    print("all three (right/wrong/bugs blamed):")
    for w in MIN_WORDS:
        print(f"  min_words {w:2d}  " + "  ".join(f"sim {s:.1f}: {'/'.join(map(str, totals[f'{w} {s}']))}"
                                                 for s in MIN_SIMILARITY))


if __name__ == "__main__":
    main()
