"""explain's last layer (round 17, issue 38): when nothing names a category, the known case a log resembles, as a lead
(preflight/explain/known_cases.py; measured by bench/explain_learned_fallback.py)."""

from __future__ import annotations

import json
from pathlib import Path

import known_cases_build
from sealed_sources import document_keys, thread_keys

from preflight.commands.explain import render
from preflight.explain.catalog import CATEGORIES
from preflight.explain.known_cases import DATA, MIN_WORDS, Case, Index, case_words, index, messages
from preflight.explain.matcher import explain_texts

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
# A spent set's left miss (frozen10): vLLM's peer-to-peer check failing on a PCIe box, its source's cause p2p; no
# signature, code or family names it.
P2P_SOURCE = "https://github.com/vllm-project/vllm/issues/9920"


def _left(source: str) -> dict[str, object]:
    logs: list[dict[str, object]] = json.loads((FIXTURES / "frozen10" / "logs.json").read_text(encoding="utf-8"))
    return next(log for log in logs if log["source"] == source)


def test_the_shipped_cases_are_what_the_labelled_fixtures_build() -> None:
    assert DATA.read_text(encoding="utf-8") == known_cases_build.text(), "run python3 tests/known_cases_build.py"
    assert len(index().cases) > 800
    assert all(case.category != "unknown" and case.source.startswith("https://") for case in index().cases)


def test_no_sealed_or_held_out_log_is_a_known_case() -> None:
    """The held-out set explain is scored on never teaches it (a sealed set's test checks its sources are cited
    nowhere, known_cases.json included)."""
    shipped = {case.source for case in index().cases}
    keys = set().union(*(thread_keys(s) | document_keys(s) for s in shipped))
    for folder in ("heldout",):
        logs = json.loads((FIXTURES / folder / "logs.json").read_text(encoding="utf-8"))
        sources = {str(log["source"]) for log in logs}
        assert not sources & shipped, folder
        assert not set().union(*(thread_keys(s) | document_keys(s) for s in sources)) & keys, folder


def test_a_log_nothing_names_gets_the_category_of_the_case_it_resembles_as_a_lead() -> None:
    text = str(_left(P2P_SOURCE)["excerpt"])
    assert explain_texts({"rank0.log": text}, resemble=False).best is None
    best = explain_texts({"rank0.log": text}).best
    assert best is not None and best.layer == "resembles"
    assert (best.signature.category, best.signature.id, best.signature.source) == ("p2p", "resembles.p2p", P2P_SOURCE)
    assert best.signature.checks, "the checks that confirm or rule out the lead on the hosts"
    assert "a lead, not a diagnosis" in best.explanation()
    shown = render(explain_texts({"rank0.log": text}))
    assert shown.startswith("a lead, not a diagnosis: resembles p2p (resembles.p2p)")
    assert f"resemblance: the known case {P2P_SOURCE}" in shown
    assert best.to_dict()["layer"] == "resembles"


def test_the_nearest_other_case_answers_when_the_log_itself_is_not_known() -> None:
    """Left out of the cases, the p2p log still finds the cases of its category that share its words, or nothing;
    never a case of another category alike enough to answer."""
    text = str(_left(P2P_SOURCE)["excerpt"])
    others = Index([case for case in index().cases if case.source != P2P_SOURCE])
    found = others.nearest(case_words(text))
    assert found is None or found.category == "p2p"


def test_a_one_line_application_bug_or_healthy_line_resembles_nothing() -> None:
    for line in ("TypeError: 'NoneType' object is not subscriptable",
                 "AssertionError: 12 is not divisible by 8 and the sampler drops the rest",
                 "INFO: using interface eth0 with IP 10.0.0.2",
                 "Test NCCL failure common.cu:777 'unhandled cuda error'"):
        assert len(case_words(line)) < MIN_WORDS
        assert explain_texts({"r.log": line}).best is None or \
            explain_texts({"r.log": line}).best.layer != "resembles", line  # type: ignore[union-attr]


def test_a_resemblance_goes_before_a_code_that_names_no_category() -> None:
    """ncclUnhandledCudaError names no cause (category unknown): the lead comes first, the code stays after it."""
    text = str(_left("https://github.com/xorbitsai/inference/blob/7ecec16b63383e18e4af790c4b522fb7d79f7e77/doc/"
                     "source/getting_started/troubleshooting.rst#case-vllm-torch-segfault")["excerpt"])
    result = explain_texts({"r.log": text})
    assert result.best is not None and result.best.layer == "resembles"
    assert result.best.signature.category == "version-mismatch"
    assert all(m.layer != "resembles" and m.signature.category == "unknown" for m in result.matches[1:])


def test_tracebacks_and_torchrun_summaries_are_not_compared() -> None:
    """They are in every failed job of their kind: a Python exception under torchrun resembled an OOM by them."""
    log = (FIXTURES / "recorded_h100" / "torchrun_rank_exception.log").read_text(encoding="utf-8")
    kept = "\n".join(messages(log))
    assert "ChildFailedError" in log and "ChildFailedError" not in kept
    assert 'File "' in log and 'File "' not in kept
    best = explain_texts({"r.log": log}).best
    assert best is None or best.signature.category == "unknown"


def test_index_votes_by_similarity_and_says_nothing_below_the_bar() -> None:
    cases = [Case("shm", "a", frozenset({"bus", "error", "shm", "dataloader"})),
             Case("shm", "b", frozenset({"bus", "shm", "worker"})),
             Case("oom", "c", frozenset({"cuda", "memory", "tried", "allocate"}))]
    found = Index(cases).nearest({"bus", "shm", "worker", "killed"}, min_words=2)
    assert found is not None and (found.category, found.case.source) == ("shm", "b")
    assert found.shared == ("worker", "bus", "shm")
    assert Index(cases).nearest({"bus", "shm", "worker"}, min_words=4) is None
    assert Index(cases).nearest({"epoch", "loss"}, min_words=0) is None


def test_the_logs_gathered_for_the_known_cases_are_labelled_and_built_in() -> None:
    """known_extra/ (round 18): real logs with the cause their source states, one per source, none ``unknown``."""
    gathered: list[dict[str, object]] = json.loads((FIXTURES / "known_extra" / "logs.json").read_text(encoding="utf-8"))
    assert len(gathered) >= 25
    for log in gathered:
        assert set(log) == {"source", "category", "ascend", "why", "excerpt"}, log["source"]
        assert str(log["source"]).startswith("https://") and str(log["why"]).strip(), log["source"]
        assert log["category"] in CATEGORIES and log["category"] != "unknown", log["source"]
    assert len({log["source"] for log in gathered}) == len(gathered), "one case per source"
    shipped = {(case.category, case.words) for case in index().cases}  # a log of another's words is that case
    found = [(log["category"], frozenset(case_words(str(log["excerpt"])))) for log in gathered]
    assert all(key in shipped for key in found if key[1]), "a log without compared words is no case"
