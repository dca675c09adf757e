"""Issue 38's third frozen set, spent and folded (round 5): what is left of it guards against false alarms.

tests/fixtures/explain/frozen3/logs.json held 61 real failure logs scored blind in round 4 (29 of 61 before the
round, 31 after; Ascend 8 and 10 of 22: docs/explain.md "Third frozen set"). Round 5 read it, once the fourth
frozen set was sealed: the 44 logs ``explain`` now names right (every category but ``unknown``) moved into
``corpus.json``, where ``test_explain_coverage.py`` requires each to stay right. The 17 left here are the ones the
corpus cannot hold: 5 labelled ``unknown`` (an application bug: the right answer is no cluster fault) and 12 still
missed, whose logs do not say what their sources found (docs/explain.md "Round 5" names the classes). None of the
17 may be blamed on a cluster category it is not: the 5 claim nothing (or ``app-fault``) but for the one listed in
``KNOWN_WRONG``, the 12 answer their own category, nothing, or the one wrong answer listed there (a change there
must be looked at).
"""

from __future__ import annotations

import json
from pathlib import Path

from preflight.explain.catalog import CATEGORIES
from preflight.explain.matcher import explain_texts

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "explain"
FROZEN3_DIR = FIXTURES / "frozen3"
FROZEN3: list[dict[str, object]] = json.loads((FROZEN3_DIR / "logs.json").read_text(encoding="utf-8"))
CORPUS: list[dict[str, str]] = json.loads((FIXTURES / "corpus.json").read_text(encoding="utf-8"))
FOLDED = 44  # of the 61: moved into corpus.json in round 5 (explained right there)
NOT_A_CLUSTER_FAULT = {"unknown", "app-fault"}
# Left logs whose text reads as a class of its own while the source found another cause: a bare 'Torch not compiled
# with CUDA enabled' (a CPU build by every other thread; here an integer device the NPU code passed), NCCL's
# 'Address family not supported' in a container without IPv6 (the maintainer: no usable interface at all), a
# DeepSpeed 'remote process exited or there was a network error' (fixed by NCCL_SOCKET_IFNAME), and 'Distributed
# package doesn't have NCCL built in' on Windows (the fix: the gloo backend).
KNOWN_WRONG = {
    "https://github.com/wangshuai09/Notebook/blob/1dde65b641956f59535106ab12f2e63d8ccfde94/QA/Error.md"
    "#assertionerror-torch-not-compiled-with-cuda-enabled": "version-mismatch",
    "https://github.com/NVIDIA/nccl-tests/issues/14": "address-family",
    "https://github.com/deepspeedai/DeepSpeedExamples/issues/845": "fabric",
    "https://github.com/fishaudio/fish-diffusion/issues/2": "version-mismatch",
}


def answer(text: str) -> str:
    """The best match's category, ``unknown`` when nothing (or only a generic code) matched.

    >>> answer("KeyError: 'train'")
    'unknown'
    """
    best = explain_texts({"log.txt": text}).best
    return best.signature.category if best else "unknown"


def _texts_outside_frozen3() -> list[str]:
    texts = []
    for top in ("tests/fixtures", "preflight", "docs", "bench"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and FROZEN3_DIR not in path.parents and path.suffix not in {".pyc", ".png", ".gz"}:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


def test_left_logs_are_real_and_labelled() -> None:
    assert len(FROZEN3) == 61 - FOLDED
    for log in FROZEN3:
        assert set(log) == {"source", "category", "ascend", "why", "excerpt"}, log["source"]
        assert str(log["source"]).startswith("https://github.com/"), log["source"]
        assert log["category"] in CATEGORIES, log["source"]
        assert str(log["why"]).strip() and str(log["excerpt"]).strip(), log["source"]
    assert len({log["source"] for log in FROZEN3}) == len(FROZEN3), "one case per source"


def test_left_logs_are_cited_nowhere_else() -> None:
    """The folded 44 live in corpus.json now (some are new signatures' samples); the 17 left are nowhere else, by
    their whole address (a document's other cases, fragment and all, may be folded)."""
    texts = _texts_outside_frozen3()
    cited = [str(log["source"]) for log in FROZEN3 if any(str(log["source"]) in text for text in texts)]
    assert not cited, cited
    assert len({log["source"] for log in CORPUS}) == len(CORPUS)
    assert KNOWN_WRONG.keys() <= {log["source"] for log in FROZEN3}


def test_no_cluster_fault_is_claimed_for_an_application_bug() -> None:
    """A false alarm is as bad as a miss: none of the 5 ``unknown``-labelled logs may be blamed on the cluster."""
    bugs = [log for log in FROZEN3 if log["category"] == "unknown"]
    assert len(bugs) == 5
    claimed = [(log["source"], got) for log in bugs if (got := answer(str(log["excerpt"])))
               not in {*NOT_A_CLUSTER_FAULT, KNOWN_WRONG.get(str(log["source"]))}]
    assert not claimed, claimed


def test_left_misses_claim_no_new_wrong_category() -> None:
    misses = [log for log in FROZEN3 if log["category"] != "unknown"]
    assert len(misses) == 12
    wrong = [(log["source"], got) for log in misses if (got := answer(str(log["excerpt"])))
             not in {log["category"], *NOT_A_CLUSTER_FAULT, KNOWN_WRONG.get(str(log["source"]))}]
    assert not wrong, wrong
