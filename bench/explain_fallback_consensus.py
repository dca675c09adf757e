"""How much must explain's last layer's neighbours agree? Measured on the shipped known cases (issue 38, round 39).

The last layer (``preflight.explain.known_cases.Index.nearest``) answers with the category its 5 nearest known cases
vote for, weighted by similarity. A text whose neighbours disagree (NCCL's bare ``unhandled system error`` is the
nearest case of shm, oom, interface and version threads alike) tells no cause apart, so the layer should then say
nothing. This script asks the layer about each known case with the case's own source left out, under the shipped
word and similarity thresholds, and prints for a grid of the share of the votes the winner must hold how many it
names right, names wrong, and leaves silent. Then it asks the same about the population the layer meets: the labelled
logs outside the sealed sets (application bugs included) on which the rules say nothing, each with its own source
left out; there a lead for an application bug is a false alarm.

    python3 bench/explain_fallback_consensus.py

Round 39 (1,370 cases): share 0: 284 right, 68 wrong; 0.4: 277, 56; 0.5: 266, 38; 0.6: 249, 24. On the 300 logs
the rules are silent on (121 application bugs): share 0: 9 right, 8 wrong, 2 bugs blamed; 0.5: 8, 3, 0; 0.6: 5, 2, 0.
The shipped ``MIN_SHARE`` is 0.5, the largest right minus wrong on both. After round 40 (1,430 cases; 323 silent
logs, 129 bugs): share 0: 290 right, 73 wrong; 0.5: 270, 40; silent logs 10, 7, 2 bugs and 8, 3, 0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from preflight.explain.known_cases import Index, case_words, index  # noqa: E402
from preflight.explain.matcher import explain_texts  # noqa: E402

SHARES = (0.0, 0.4, 0.5, 0.6)
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "explain"
SILENT_FROM = ("corpus.json", "dev_ascend.json", "dev_nvidia.json", "known_extra/logs.json", "heldout/logs.json",
               "frozen/logs.json", *(f"frozen{n}/logs.json" for n in range(2, 21)))


def _vote(cases: Index, words: set[str] | frozenset[str], source: str, share: float) -> str | None:
    """The category the nearest cases (not of ``source``) vote for, or None when the layer says nothing."""
    found = cases.nearest(words, min_share=share, leave_out=source)
    return found.category if found else None


def silent_logs() -> list[tuple[str, str, set[str]]]:
    """(category, source, words) of the labelled logs the rules name nothing for."""
    found: list[tuple[str, str, set[str]]] = []
    for name in SILENT_FROM:
        for log in json.loads((FIXTURES / name).read_text(encoding="utf-8")):
            result = explain_texts({"log.txt": log["excerpt"]}, resemble=False)
            if result.clean is None and all(m.signature.category == "unknown" for m in result.matches):
                found.append((log["category"], log["source"], case_words(log["excerpt"])))
    return found


def main() -> None:
    cases = index()
    silent = silent_logs()
    for share in SHARES:
        answers = [(category, _vote(cases, words, source, share)) for category, source, words in silent]
        right = sum(got == category != "unknown" for category, got in answers)
        wrong = sum(got is not None and category not in {"unknown", got} for category, got in answers)
        bugs = sum(got is not None and category == "unknown" for category, got in answers)
        print(f"silent logs, share {share:.1f}: {right} right, {wrong} wrong, {bugs} application bugs blamed of "
              f"{len(silent)} ({sum(c == 'unknown' for c, _, _ in silent)} bugs)", flush=True)
    for share in SHARES:
        votes = [(case.category, _vote(cases, case.words, case.source, share)) for case in cases.cases]
        right = sum(got == category for category, got in votes)
        wrong = sum(got is not None and got != category for category, got in votes)
        print(f"share {share:.1f}: {right} right, {wrong} wrong, {len(votes) - right - wrong} silent of "
              f"{len(votes)}", flush=True)

if __name__ == "__main__":
    main()
