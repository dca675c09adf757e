"""Issue 38's twelfth frozen set (round 17): 71 real failure logs nothing in the project cites, scored blind.

tests/fixtures/explain/frozen12/logs.json (see its README) was drawn during round 17 by collectors who never ran
explain, and scored once, after it was complete, at the three commits below: with the code before round 17
(60a57b8), with round 17 (64d907b) and with round 17 and the eleventh set folded in (1132e0c). Its sources are
GitHub threads (issues and pull requests with a pasted log whose later comments state the cause), troubleshooting,
FAQ and user-guide documents in GitHub repositories (a blob URL pinned to a commit, one case per fragment) and a few
other public pages. All must be cited nowhere else: no catalog signature, no other fixture (the earlier frozen sets
included), nothing in preflight/, docs/ or bench/. The set holds more than the 60 logs the issue asks for but fewer
than its 20 Ascend ones: the size check asks for 70 logs and 15 Ascend ones. Only the score is printed, never which
logs fail: the set stays SEALED. Rounds 18 (f79bbc8) and 19 (six Ascend known cases, and speed) measured on it: 38
of 71, no change each; it is the "before" of round 20.
"""

from __future__ import annotations

import json
from pathlib import Path

from sealed_sources import SIGNATURE_DOCUMENTS, document_keys, is_page, page_key, thread_keys
from spent_sets import answer, texts_outside

from preflight.explain.catalog import CATEGORIES

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
FROZEN12_DIR = FIXTURES / "frozen12"
FROZEN12: list[dict[str, object]] = json.loads((FROZEN12_DIR / "logs.json").read_text(encoding="utf-8"))

# 37 of 71 (52.1%) with the code before round 17 (60a57b8), rounded down; Ascend 8 of 16 (50.0%). With round 17
# (64d907b) and with the eleventh set folded in (1132e0c): 38 of 71 (53.5%), Ascend 8 of 16 (50.0%). The engineers
# changing the catalog raise the floor with their change: round 17 did (0.53); rounds 18 and 19 kept 38 of 71.
FLOOR_ALL = 0.53
FLOOR_ASCEND = 0.50


def test_frozen12_logs_are_real_and_labelled() -> None:
    assert len(FROZEN12) >= 70
    assert sum(bool(log["ascend"]) for log in FROZEN12) >= 15
    for log in FROZEN12:
        source = str(log["source"])
        assert set(log) == {"source", "category", "ascend", "why", "excerpt"}, source
        assert source.startswith("https://"), source
        assert log["category"] in CATEGORIES, source
        assert isinstance(log["ascend"], bool), source
        assert str(log["why"]).strip() and str(log["excerpt"]).strip(), source
        if source.startswith("https://github.com/"):
            assert len(thread_keys(source) | document_keys(source)) == 1, source
            fragment = source.partition("#")[2]
            assert not (document_keys(source) and fragment[:1].isdigit()), source
        else:
            assert is_page(source) and "/" in page_key(source), source
    sources = [str(log["source"]) for log in FROZEN12]
    assert len(set(sources)) == len(sources), "one case per source"
    threads = [k for s in sources for k in thread_keys(s)]
    assert len(set(threads)) == len(threads), "one excerpt per thread"
    by_key: dict[str, list[str]] = {}
    for source in sources:
        for key in document_keys(source) | ({page_key(source)} if is_page(source) else set()):
            by_key.setdefault(key, []).append(source)
    shared = [s for cases in by_key.values() if len(cases) > 1 for s in cases]
    assert all("#" in s for s in shared), "a document's or page's cases are told apart by their fragment"


def test_frozen12_sources_are_cited_nowhere_else() -> None:
    texts = texts_outside(FROZEN12_DIR)
    cited_threads = set().union(*(thread_keys(t) for t in texts))
    cited_documents = set().union(*(document_keys(t) for t in texts))
    threads = set().union(*(thread_keys(str(log["source"])) for log in FROZEN12))
    documents = set().union(*(document_keys(str(log["source"])) for log in FROZEN12))
    pages = {page_key(str(log["source"])) for log in FROZEN12 if is_page(str(log["source"]))}
    assert not threads & cited_threads, "a frozen12 thread is cited by a signature, a fixture, the code or the docs"
    assert not documents & cited_documents, "a frozen12 document is cited elsewhere in the project"
    lowered = [t.lower() for t in texts]
    assert not [p for p in pages if any(p in t for t in lowered)], "a frozen12 page is cited elsewhere in the project"
    assert not [d for d in documents | pages if any(word in d for word in SIGNATURE_DOCUMENTS)]


def test_frozen12_score_is_at_least_the_floor() -> None:
    right = [answer(str(log["excerpt"])) == log["category"] for log in FROZEN12]
    ascend = [ok for ok, log in zip(right, FROZEN12, strict=True) if log["ascend"]]
    overall = sum(right) / len(right)
    on_ascend = f"Ascend {sum(ascend)} of {len(ascend)} ({sum(ascend) / len(ascend):.1%})" if ascend else "Ascend: none"
    print(f"frozen12 set: {sum(right)} of {len(right)} ({overall:.1%}) right first; {on_ascend}")
    assert overall >= FLOOR_ALL, f"frozen12 set {overall:.1%} < {FLOOR_ALL:.0%}"
    if ascend:
        assert sum(ascend) / len(ascend) >= FLOOR_ASCEND, f"frozen12 set on Ascend < {FLOOR_ASCEND:.0%}"
