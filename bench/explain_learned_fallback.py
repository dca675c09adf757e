"""Would a learned last layer help explain where it is silent? Measured, not assumed (issue 38).

explain is silent ("unknown") on most of the logs it misses on unseen sets. A classifier trained on every labelled
log could answer instead of silence. This script measures two such classifiers on the logs left in the spent frozen
sets (tests/fixtures/explain/frozen, frozen2 ... frozen10: the misses and the application bugs that were never folded).
It asks them only about the logs explain is silent on now, leaving out one set at a time: the classifier is
trained on the corpus, the signatures' excerpts, the dev sets and the other spent sets' labelled logs.

- ``knn``: explain's own last layer (``preflight.explain.known_cases.Index``): TF-IDF vectors of a log's words, the
  categories of its 5 nearest labelled logs weighted by similarity; it answers when the nearest log is at least
  ``min_sim`` alike and the log has ``min_words`` words they know (the shipped rule: ``MIN_WORDS``, ``MIN_SIMILARITY``).
- ``shingles``: runs of K words on the log's error lines (a line naming an error, a failure, a timeout...); a run
  seen in at least ``min_df`` labelled logs, with one category holding ``purity`` of them, votes for that category.

    python3 bench/explain_learned_fallback.py

For each setting it prints how many silent labelled logs the classifier gets right, how many it gets wrong, and how
many application bugs (labelled ``unknown``, where silence is the right answer) it would blame on a category. No
sealed set is read; the spent sets are those the rule was chosen on (frozen11 was spent after). Figures are in
docs/explain.md ("Round 17").
"""

from __future__ import annotations

import collections
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from preflight.explain.catalog import SIGNATURES  # noqa: E402
from preflight.explain.known_cases import MIN_SIMILARITY, MIN_WORDS, Case, Index, case_words  # noqa: E402
from preflight.explain.matcher import explain_texts  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "explain"
SPENT = ("frozen", *(f"frozen{n}" for n in range(2, 14)))
RUN_WORD = re.compile(r"[a-z][a-z_]+")
ERROR_LINE = re.compile(r"error|fail|exception|abort|fatal|warn|refused|timeout|timed out|denied|not found|invalid|"
                        r"cannot|unable|unhandled|killed|signal", re.IGNORECASE)
Labelled = list[tuple[str, str]]  # (category, log text)


def answer(text: str) -> str:
    best = explain_texts({"log.txt": text}, resemble=False).best
    return best.signature.category if best else "unknown"


def labelled_base() -> Labelled:
    """The corpus, the signatures' excerpts and the dev sets: every log the catalog was written from."""
    base = [(str(e["category"]), str(e["excerpt"]))
            for e in json.loads((FIXTURES / "corpus.json").read_text(encoding="utf-8"))]
    for sig_id, entry in json.loads((FIXTURES / "excerpts.json").read_text(encoding="utf-8")).items():
        base.append((SIGNATURES[sig_id].category, str(entry["excerpt"])))
    for name in ("dev_ascend", "dev_nvidia"):
        base += [(str(e["category"]), str(e["excerpt"]))
                 for e in json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))]
    return [(c, t) for c, t in base if c != "unknown"]  # as tests/known_cases_build.py: no case of no cause


def runs(text: str, size: int) -> set[str]:
    """>>> sorted(runs("ok\\nRuntimeError: NCCL error, unhandled system error", 4))[:2]
    ['error nccl error unhandled', 'nccl error unhandled system']"""
    found = set()
    for line in text.splitlines():
        if ERROR_LINE.search(line):
            ws = RUN_WORD.findall(line.lower())
            found |= {" ".join(ws[i:i + size]) for i in range(len(ws) - size + 1)}
    return found


class Shingles:
    def __init__(self, data: Labelled, size: int) -> None:
        self.size = size
        self.index: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for category, text in data:
            for run in runs(text, size):
                self.index[run][category] += 1

    def guess(self, text: str, min_df: int, purity: float) -> str:
        votes: collections.Counter[str] = collections.Counter()
        for run in runs(text, self.size):
            seen = self.index.get(run)
            if seen:
                category, n = seen.most_common(1)[0]
                if sum(seen.values()) >= min_df and n / sum(seen.values()) >= purity:
                    votes[category] += 1
        top = votes.most_common(2)
        if not top or (len(top) > 1 and top[0][1] == top[1][1]):
            return "unknown"
        return top[0][0]


def tally(pairs: Iterable[tuple[str, str]]) -> str:
    """(label, guess) of silent logs -> 'right R, wrong W, bugs blamed B'."""
    right = wrong = blamed = 0
    for label, guess in pairs:
        if guess == "unknown":
            continue
        if label == "unknown":
            blamed += 1
        elif guess == label:
            right += 1
        else:
            wrong += 1
    return f"right {right:3d}  wrong {wrong:3d}  bugs blamed {blamed:3d}"


def main() -> None:
    base = labelled_base()
    left = {name: json.loads((FIXTURES / name / "logs.json").read_text(encoding="utf-8")) for name in SPENT}
    silent = {name: [(str(e["category"]), str(e["excerpt"])) for e in logs if answer(str(e["excerpt"])) == "unknown"]
              for name, logs in left.items()}
    trained = {name: base + [(str(e["category"]), str(e["excerpt"])) for other in SPENT if other != name
                             for e in left[other] if e["category"] != "unknown"] for name in SPENT}
    all_silent = [log for logs in silent.values() for log in logs]
    print(f"left logs {sum(map(len, left.values()))}, explain silent on {len(all_silent)}: "
          f"{sum(1 for c, _ in all_silent if c != 'unknown')} labelled with a cause, "
          f"{sum(1 for c, _ in all_silent if c == 'unknown')} application bugs (silence is right)")
    knn = {name: Index([Case(c, "", frozenset(case_words(t))) for c, t in data]) for name, data in trained.items()}
    for min_words, min_sim in [*((0, x) for x in (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)),
                               *((n, x) for n in (6, 9, 12, 15) for x in (0.5, 0.6))]:
        pairs = [(c, found.category if (found := knn[name].nearest(case_words(t), min_sim, min_words)) else "unknown")
                 for name in SPENT for c, t in silent[name]]
        shipped = "  (the shipped rule)" if (min_words, min_sim) == (MIN_WORDS, MIN_SIMILARITY) else ""
        print(f"knn       min_words {min_words:2d} min_sim {min_sim:.1f}: {tally(pairs)}{shipped}")
    for size in (3, 4):
        shingles = {name: Shingles(data, size) for name, data in trained.items()}
        for min_df, purity in ((2, 0.7), (2, 0.9), (3, 0.7), (4, 0.75)):
            pairs = [(c, shingles[name].guess(t, min_df, purity)) for name in SPENT for c, t in silent[name]]
            print(f"shingles  K={size} min_df {min_df} purity {purity:.2f}: {tally(pairs)}")


if __name__ == "__main__":
    main()
