"""How much must explain's last layer's neighbours agree? Measured on the shipped known cases (issue 38, round 39).

The last layer (``preflight.explain.known_cases.Index.nearest``) answers with the category its 5 nearest known cases
vote for, weighted by similarity. A text whose neighbours disagree (NCCL's bare ``unhandled system error`` is the
nearest case of shm, oom, interface and version threads alike) tells no cause apart, so the layer should then say
nothing. This script asks the layer about each known case with the case's own source left out, under the shipped
word and similarity thresholds, and prints for a grid of the share of the votes the winner must hold how many it
names right, names wrong, and leaves silent.

    python3 bench/explain_fallback_consensus.py

Round 39 (1,370 cases): share 0: 284 right, 68 wrong; 0.4: 277, 56; 0.5: 266, 38; 0.6: 249, 24. The shipped
``MIN_SHARE`` is 0.5, the largest right minus wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from preflight.explain.known_cases import MIN_SIMILARITY, MIN_WORDS, NEIGHBOURS, index  # noqa: E402

SHARES = (0.0, 0.4, 0.5, 0.6)


def main() -> None:
    cases = index()
    for share in SHARES:
        right = wrong = silent = 0
        for asked, case in enumerate(cases.cases):
            query = cases.vectors[asked]
            if len(query) < MIN_WORDS:
                silent += 1
                continue
            scored = sorted(((sum(x * vec.get(w, 0.0) for w, x in query.items()), i)
                             for i, vec in enumerate(cases.vectors) if cases.cases[i].source != case.source),
                            reverse=True)[:NEIGHBOURS]
            if not scored or scored[0][0] < MIN_SIMILARITY:
                silent += 1
                continue
            votes: dict[str, float] = {}
            for alike, at in scored:
                votes[cases.cases[at].category] = votes.get(cases.cases[at].category, 0.0) + alike
            category = max(votes, key=lambda c: votes[c])
            if votes[category] < share * sum(votes.values()):
                silent += 1
            elif category == case.category:
                right += 1
            else:
                wrong += 1
        print(f"share {share:.1f}: {right} right, {wrong} wrong, {silent} silent of {len(cases.cases)}", flush=True)


if __name__ == "__main__":
    main()
