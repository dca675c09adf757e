"""``preflight explain`` coverage on real logs (issue 21): the frozen held-out set and the training corpus.

tests/fixtures/explain/heldout/logs.json: 40 real failure logs drawn at random (seed 21) before the new
signatures were written, never used to write them (see its README). corpus.json: the other collected logs, from
which the signatures come. Each entry is ``{"source": URL, "category": expected, "excerpt": text}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from preflight.explain.catalog import CATALOG, CATEGORIES
from preflight.explain.matcher import explain_texts

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
HELDOUT: list[dict[str, str]] = json.loads((FIXTURES / "heldout" / "logs.json").read_text(encoding="utf-8"))
CORPUS: list[dict[str, str]] = json.loads((FIXTURES / "corpus.json").read_text(encoding="utf-8"))
EXCERPTS: dict[str, dict[str, str]] = json.loads((FIXTURES / "excerpts.json").read_text(encoding="utf-8"))


def _first_category(text: str) -> str | None:
    best = explain_texts({"log.txt": text}).best
    return best.signature.category if best else None


def accuracy(logs: list[dict[str, str]]) -> float:
    """Share of logs whose first explanation has the expected category.

    >>> accuracy([{"excerpt": "OSError: [Errno 24] Too many open files", "category": "open-files"}])
    1.0
    """
    right = sum(_first_category(log["excerpt"]) == log["category"] for log in logs)
    return right / len(logs)


def test_logs_are_real_and_labelled() -> None:
    for log in HELDOUT + CORPUS:
        assert log["source"].startswith("https://"), log  # a thread, a document or (from frozen4 on) a vendor's page
        assert log["category"] in CATEGORIES and log["category"] != "unknown", log
        assert log["excerpt"].strip(), log
    sources = [log["source"] for log in HELDOUT + CORPUS]
    assert len(sources) == len(set(sources)), "one excerpt per URL, held-out and training disjoint"
    assert len(HELDOUT) >= 40


def test_heldout_accuracy_is_at_least_95_percent() -> None:
    score = accuracy(HELDOUT)
    assert score >= 0.95, f"held-out accuracy {score:.1%}"


def test_training_corpus_is_explained() -> None:
    wrong = [(log["source"], _first_category(log["excerpt"]), log["category"]) for log in CORPUS
             if _first_category(log["excerpt"]) != log["category"]]
    assert not wrong


def test_no_signature_comes_from_a_heldout_log() -> None:
    held = {log["source"] for log in HELDOUT}
    assert not {sig.source for sig in CATALOG} & held
    assert not {e["source"] for e in EXCERPTS.values()} & held


def test_symptom_after_root_cause_in_one_log_names_the_root_cause() -> None:
    """A reset connection printed after another failure in the same log is the consequence, not the cause."""
    oom = next(log for log in CORPUS if log["source"] == "https://github.com/NVIDIA/nccl/issues/1235")
    best = explain_texts({"rank3.log": oom["excerpt"]}).best
    assert best is not None and best.signature.id == "nccl.cuda_oom"
    reset = next(log for log in CORPUS if log["source"] == "https://github.com/pytorch/pytorch/issues/131781")
    mixed = reset["excerpt"] + next(log for log in CORPUS if "MGFN" in log["source"])["excerpt"]
    best = explain_texts({"rank15.log": mixed}).best
    assert best is not None and best.signature.category == "oom"


def test_docs_carry_the_generated_coverage_tables() -> None:
    from preflight.explain.coverage import by_category, by_library

    docs = (Path(__file__).parent.parent / "docs" / "explain.md").read_text(encoding="utf-8")
    assert by_library() in docs and by_category() in docs
    right = round(accuracy(HELDOUT) * len(HELDOUT))
    assert f"{right} of {len(HELDOUT)} ({right / len(HELDOUT):.1%})" in docs
