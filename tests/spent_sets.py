"""What the tests of a spent, folded frozen set check on the logs left in it (issue 38), and the two helpers a sealed
set's test shares with them (``answer``, ``texts_outside``): the logs explain names right moved into corpus.json; the
ones left (application bugs labelled ``unknown``, and misses whose text does not
name their source's cause) must never be blamed on a cluster category they are not, but for the known wrong
answers each test lists (a change there must be looked at).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from sealed_sources import document_keys, is_page, page_key, thread_keys

from preflight.explain.catalog import CATALOG, CATEGORIES
from preflight.explain.matcher import explain_texts

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "explain"
NOT_A_CLUSTER_FAULT = {"unknown", "app-fault"}
Log = dict[str, object]


def load(folder: Path) -> list[Log]:
    """The logs left in a spent set's ``logs.json``."""
    logs: list[Log] = json.loads((folder / "logs.json").read_text(encoding="utf-8"))
    return logs


def answer(text: str) -> str:
    """The best match's category, ``unknown`` when nothing matched.

    >>> answer("KeyError: 'train'")
    'unknown'
    """
    best = explain_texts({"log.txt": text}).best
    return best.signature.category if best else "unknown"


KNOWN_CASES = ROOT / "preflight" / "explain" / "known_cases.json"


def texts_outside(folder: Path, skip: tuple[Path, ...] = ()) -> list[str]:
    """Every catalog source and every text file of the project's fixtures, code, docs and benches but ``folder`` and
    the files in ``skip``."""
    texts = [sig.source for sig in CATALOG]
    for top in ("tests/fixtures", "preflight", "docs", "bench"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and folder not in path.parents and path.suffix not in {".pyc", ".png", ".gz"} \
                    and path not in skip:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


def check_real_and_labelled(logs: list[Log]) -> None:
    """Every left log has its five fields, an https source, a known category; one case per source."""
    for log in logs:
        source = str(log["source"])
        assert set(log) == {"source", "category", "ascend", "why", "excerpt"}, source
        assert source.startswith("https://"), source
        assert log["category"] in CATEGORIES, source
        assert str(log["why"]).strip() and str(log["excerpt"]).strip(), source
    assert len({log["source"] for log in logs}) == len(logs), "one case per source"


def check_cited_nowhere_else(logs: list[Log], folder: Path, known_wrong: Mapping[str, str]) -> None:
    """No left log's thread, page or whole document address is cited outside ``folder`` (a document's other cases,
    fragment and all, may be folded) but by explain's known cases (``preflight/explain/known_cases.json``, built from
    every labelled left log); the corpus holds each source once; the known wrong answers are left logs."""
    texts = texts_outside(folder, skip=(KNOWN_CASES,))
    cited_threads = set().union(*(thread_keys(t) for t in texts))
    left = [str(log["source"]) for log in logs]
    assert not [s for s in left if thread_keys(s) & cited_threads]
    lowered = [t.lower() for t in texts]
    assert not [s for s in left if is_page(s) and any(page_key(s) in t for t in lowered)]
    assert not [s for s in left if document_keys(s) and any(s in t for t in texts)]
    corpus = json.loads((FIXTURES / "corpus.json").read_text(encoding="utf-8"))
    assert len({log["source"] for log in corpus}) == len(corpus)
    assert set(known_wrong) <= set(left)


def blamed_bugs(logs: list[Log], known_wrong: Mapping[str, str]) -> list[tuple[object, str]]:
    """The ``unknown``-labelled logs (application bugs) answered with a cluster category not listed as known."""
    return [(log["source"], got) for log in logs if log["category"] == "unknown"
            and (got := answer(str(log["excerpt"]))) not in {*NOT_A_CLUSTER_FAULT, known_wrong.get(str(log["source"]))}]


def new_wrong(logs: list[Log], known_wrong: Mapping[str, str]) -> list[tuple[object, str]]:
    """The missed logs answered with a category that is neither theirs, nor none, nor the known wrong one."""
    return [(log["source"], got) for log in logs if log["category"] != "unknown"
            and (got := answer(str(log["excerpt"]))) not in {log["category"], *NOT_A_CLUSTER_FAULT,
                                                             known_wrong.get(str(log["source"]))}]
