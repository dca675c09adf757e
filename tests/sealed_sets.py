"""What every sealed explain set's test checks (issue 38): its logs are real and labelled, one case per source; its
sources are cited nowhere else in the project; its score is at least the floor measured when it was sealed. Only
aggregates are printed, never which logs fail.
"""

from __future__ import annotations

import re
from pathlib import Path

from sealed_sources import SIGNATURE_DOCUMENTS, document_keys, is_page, page_key, thread_keys
from spent_sets import Log, answer, texts_outside

from preflight.explain.catalog import CATEGORIES

_COMMIT = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/commit/[0-9a-f]{7,40}$")


def check_real_and_labelled(logs: list[Log], size: int, size_ascend: int) -> None:
    """The five fields, a catalog category, an https source naming one thread, document, commit or page; one case
    per source and per thread; a document's or page's cases told apart by their fragment."""
    assert len(logs) >= size
    assert sum(bool(log["ascend"]) for log in logs) >= size_ascend
    for log in logs:
        source = str(log["source"])
        assert set(log) == {"source", "category", "ascend", "why", "excerpt"}, source
        assert source.startswith("https://"), source
        assert log["category"] in CATEGORIES, source
        assert isinstance(log["ascend"], bool), source
        assert str(log["why"]).strip() and str(log["excerpt"]).strip(), source
        if _COMMIT.match(source):  # a fix commit's page: keyed by its address
            assert is_page(source), source
        elif source.startswith("https://github.com/"):
            assert len(thread_keys(source) | document_keys(source)) == 1, source
            fragment = source.partition("#")[2]
            assert not (document_keys(source) and fragment[:1].isdigit()), source
        else:
            assert is_page(source) and "/" in page_key(source), source
    sources = [str(log["source"]) for log in logs]
    assert len(set(sources)) == len(sources), "one case per source"
    threads = [k for s in sources for k in thread_keys(s)]
    assert len(set(threads)) == len(threads), "one excerpt per thread"
    by_key: dict[str, list[str]] = {}
    for source in sources:
        for key in document_keys(source) | ({page_key(source)} if is_page(source) else set()):
            by_key.setdefault(key, []).append(source)
    shared = [s for cases in by_key.values() if len(cases) > 1 for s in cases]
    assert all("#" in s for s in shared), "a document's or page's cases are told apart by their fragment"


def check_cited_nowhere_else(logs: list[Log], folder: Path) -> None:
    """No thread, document or page of the set is cited by a signature, another fixture, the code, the docs or the
    benches; none is one of the documents the Ascend signatures were written from."""
    texts = texts_outside(folder)
    cited_threads = set().union(*(thread_keys(t) for t in texts))
    cited_documents = set().union(*(document_keys(t) for t in texts))
    threads = set().union(*(thread_keys(str(log["source"])) for log in logs))
    documents = set().union(*(document_keys(str(log["source"])) for log in logs))
    pages = {page_key(str(log["source"])) for log in logs if is_page(str(log["source"]))}
    assert not threads & cited_threads, f"a {folder.name} thread is cited by a signature, a fixture, the code or docs"
    assert not documents & cited_documents, f"a {folder.name} document is cited elsewhere in the project"
    lowered = [t.lower() for t in texts]
    assert not [p for p in pages if any(p in t for t in lowered)], f"a {folder.name} page is cited elsewhere"
    assert not [d for d in documents | pages if any(word in d for word in SIGNATURE_DOCUMENTS)]


def check_score(logs: list[Log], name: str, floor_all: float, floor_ascend: float) -> None:
    """The share of logs whose best answer is their category, overall and on Ascend, at least the floors; prints
    the aggregates only."""
    right = [answer(str(log["excerpt"])) == log["category"] for log in logs]
    ascend = [ok for ok, log in zip(right, logs, strict=True) if log["ascend"]]
    overall = sum(right) / len(right)
    on_ascend = f"Ascend {sum(ascend)} of {len(ascend)} ({sum(ascend) / len(ascend):.1%})" if ascend else "Ascend: none"
    print(f"{name} set: {sum(right)} of {len(right)} ({overall:.1%}) right first; {on_ascend}")
    assert overall >= floor_all, f"{name} set {overall:.1%} < {floor_all:.0%}"
    if ascend:
        assert sum(ascend) / len(ascend) >= floor_ascend, f"{name} set on Ascend < {floor_ascend:.0%}"
