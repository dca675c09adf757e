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
The shipped ``MIN_SHARE`` is 0.5, the largest right minus wrong on both.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from preflight.explain.known_cases import MIN_SIMILARITY, MIN_WORDS, NEIGHBOURS, Index, case_words, index  # noqa: E402
from preflight.explain.matcher import explain_texts  # noqa: E402

SHARES = (0.0, 0.4, 0.5, 0.6)
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "explain"
SILENT_FROM = ("corpus.json", "dev_ascend.json", "dev_nvidia.json", "known_extra/logs.json", "heldout/logs.json",
               "frozen/logs.json", *(f"frozen{n}/logs.json" for n in range(2, 21)))


def _vote(cases: Index, query: dict[str, float], source: str, share: float) -> str | None:
    """The category the nearest cases (not of ``source``) vote for, or None when the layer says nothing."""
    if len(query) < MIN_WORDS:
        return None
    scored = sorted(((sum(x * vec.get(w, 0.0) for w, x in query.items()), i)
                     for i, vec in enumerate(cases.vectors) if cases.cases[i].source != source),
                    reverse=True)[:NEIGHBOURS]
    if not scored or scored[0][0] < MIN_SIMILARITY:
        return None
    votes: dict[str, float] = {}
    for alike, at in scored:
        votes[cases.cases[at].category] = votes.get(cases.cases[at].category, 0.0) + alike
    category = max(votes, key=lambda c: votes[c])
    return category if votes[category] >= share * sum(votes.values()) else None


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
        answers = [(category, _vote(cases, cases.vector(words), source, share)) for category, source, words in silent]
        right = sum(got == category != "unknown" for category, got in answers)
        wrong = sum(got is not None and category not in {"unknown", got} for category, got in answers)
        bugs = sum(got is not None and category == "unknown" for category, got in answers)
        print(f"silent logs, share {share:.1f}: {right} right, {wrong} wrong, {bugs} application bugs blamed of "
              f"{len(silent)} ({sum(c == 'unknown' for c, _, _ in silent)} bugs)", flush=True)
    for share in SHARES:
        votes = [(case.category, _vote(cases, cases.vectors[at], case.source, share))
                 for at, case in enumerate(cases.cases)]
        right = sum(got == category for category, got in votes)
        wrong = sum(got is not None and got != category for category, got in votes)
        print(f"share {share:.1f}: {right} right, {wrong} wrong, {len(votes) - right - wrong} silent of "
              f"{len(votes)}", flush=True)

if __name__ == "__main__":
    main()
