"""Issue 38's tenth frozen set (round 13): 63 real failure logs nothing in the project cites, scored blind.

tests/fixtures/explain/frozen10/logs.json (see its README) was drawn while round 13 was being written (blind to it)
and before round 13's commit was measured on anything, so it is scored twice: with the code before round 13
(f0ca5d9) and with round 13 (2466866). Its sources are GitHub threads (issues and pull requests with a pasted log
whose later comments state the cause), troubleshooting and FAQ documents in GitHub repositories (a blob URL pinned
to a commit, one case per fragment) and one vendor page. All must be cited nowhere else: no catalog signature, no
other fixture (the earlier frozen sets included), nothing in preflight/, docs/ or bench/. The set reaches the 60
logs (20 of them Ascend) the issue asks for (63 and 21), and the size check asks for those 60 and 20. Only the score
is printed, never which logs fail: the set stays SEALED as the "before" of round 14.
"""

from __future__ import annotations

import json
from pathlib import Path

from sealed_sources import SIGNATURE_DOCUMENTS, document_keys, is_page, page_key, thread_keys
from spent_sets import answer, texts_outside

from preflight.explain.catalog import CATEGORIES

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
FROZEN10_DIR = FIXTURES / "frozen10"
FROZEN10: list[dict[str, object]] = json.loads((FROZEN10_DIR / "logs.json").read_text(encoding="utf-8"))

# 36 of 63 (57.1%) and 13 of 21 (61.9%) with round 13 (2466866), rounded down; with the code before round 13
# (f0ca5d9) the same 36 of 63 and 13 of 21. The engineers changing the catalog raise them with their change.
FLOOR_ALL = 0.57
FLOOR_ASCEND = 0.61


def test_frozen10_logs_are_real_and_labelled() -> None:
    assert len(FROZEN10) >= 60 and sum(bool(log["ascend"]) for log in FROZEN10) >= 20
    for log in FROZEN10:
        source = str(log["source"])
        assert set(log) == {"source", "category", "ascend", "why", "excerpt"}, source
        assert source.startswith("https://"), source
        assert log["category"] in CATEGORIES, source
        assert isinstance(log["ascend"], bool), source
        assert str(log["why"]).strip() and str(log["excerpt"]).strip(), source
        if source.startswith("https://github.com/"):
            assert len(thread_keys(source) | document_keys(source)) == 1, source
        else:
            assert is_page(source) and "/" in page_key(source), source
    sources = [str(log["source"]) for log in FROZEN10]
    assert len(set(sources)) == len(sources), "one case per source"
    threads = [k for s in sources for k in thread_keys(s)]
    assert len(set(threads)) == len(threads), "one excerpt per thread"
    by_key: dict[str, list[str]] = {}
    for source in sources:
        for key in document_keys(source) | ({page_key(source)} if is_page(source) else set()):
            by_key.setdefault(key, []).append(source)
    shared = [s for cases in by_key.values() if len(cases) > 1 for s in cases]
    assert all("#" in s for s in shared), "a document's or page's cases are told apart by their fragment"


def test_frozen10_sources_are_cited_nowhere_else() -> None:
    texts = texts_outside(FROZEN10_DIR)
    cited_threads = set().union(*(thread_keys(t) for t in texts))
    cited_documents = set().union(*(document_keys(t) for t in texts))
    threads = set().union(*(thread_keys(str(log["source"])) for log in FROZEN10))
    documents = set().union(*(document_keys(str(log["source"])) for log in FROZEN10))
    pages = {page_key(str(log["source"])) for log in FROZEN10 if is_page(str(log["source"]))}
    assert not threads & cited_threads, "a frozen10 thread is cited by a signature, a fixture, the code or the docs"
    assert not documents & cited_documents, "a frozen10 document is cited elsewhere in the project"
    lowered = [t.lower() for t in texts]
    assert not [p for p in pages if any(p in t for t in lowered)], "a frozen10 page is cited elsewhere in the project"
    assert not [d for d in documents | pages if any(word in d for word in SIGNATURE_DOCUMENTS)]


def test_frozen10_score_is_at_least_the_floor() -> None:
    right = [answer(str(log["excerpt"])) == log["category"] for log in FROZEN10]
    ascend = [ok for ok, log in zip(right, FROZEN10, strict=True) if log["ascend"]]
    overall, on_ascend = sum(right) / len(right), sum(ascend) / len(ascend)
    print(f"frozen10 set: {sum(right)} of {len(right)} ({overall:.1%}) right first; "
          f"Ascend {sum(ascend)} of {len(ascend)} ({on_ascend:.1%})")
    assert overall >= FLOOR_ALL, f"frozen10 set {overall:.1%} < {FLOOR_ALL:.0%}"
    assert on_ascend >= FLOOR_ASCEND, f"frozen10 set on Ascend {on_ascend:.1%} < {FLOOR_ASCEND:.0%}"
