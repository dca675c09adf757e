"""explain reads a log as users paste it (issue 38, tolerant matching): cut by a terminal, wrapped by an editor,
coloured, HTML-escaped. Real logs of the training corpus, transformed the way bench/explain_perturb.py does."""

from __future__ import annotations

import html
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.paste import RECORD_MAX, normalize, terminal_width, uncut, unwrap

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "explain" / "corpus.json").read_text(encoding="utf-8"))


def _category(text: str) -> str:
    best = explain_texts({"log.txt": text}).best
    return best.signature.category if best else "unknown"


def _cut(text: str, width: int) -> str:
    return "\n".join(piece for line in text.splitlines()
                     for piece in ([line[i:i + width] for i in range(0, len(line), width)] or [""]))


def test_every_corpus_log_cut_at_80_columns_keeps_its_category() -> None:
    changed = [log["source"] for log in CORPUS
               if _category(_cut(log["excerpt"], 80)) != _category(log["excerpt"])]
    assert not changed, changed


def test_colours_and_html_entities_change_nothing() -> None:
    changed = [log["source"] for log in CORPUS
               if _category("\n".join(f"\x1b[31m{html.escape(line)}\x1b[0m" for line in log["excerpt"].splitlines()))
               != _category(log["excerpt"])]
    assert not changed, changed


def test_a_wrapped_code_is_decoded_and_reported_at_its_first_line() -> None:
    head = "[ERROR] 2025-01-02-10:11:12.123.456 HCCL(12345,python):"
    line = head.ljust(77, "x") + "EI0006: (see the plog for the details of this fault)"
    pieces = [line[i:i + 80] for i in range(0, len(line), 80)]
    assert pieces[0].endswith("EI0") and pieces[1].startswith("006")  # the code is cut in two
    for tail in (["[INFO] end"], []):  # a terminal's cut at 80 (joined whole) or a single cut line (joined views)
        best = explain_texts({"log.txt": "\n".join(["[INFO] start", *pieces, *tail])}).best
        assert best is not None and best.signature.category == "hccl-timeout"
        assert best.line_number == 2 and "EI0006" in best.line


def test_lines_of_their_own_length_are_not_joined() -> None:
    natural = ["a" * 70, "next record", "b" * 70, "another", "short"]  # two long lines: no terminal width
    assert terminal_width(natural) is None
    assert uncut(natural, 70) == ["a" * 70 + "next record", "", "b" * 70 + "another", "", "short"]
    assert unwrap(["x" * 59, "y"], "") == ["x" * 59, "y"]  # too short to have been wrapped
    assert normalize("plain & simple") == "plain & simple"  # no entity: nothing read


def test_an_application_bug_stays_unmatched_when_wrapped() -> None:
    bug = ("Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n"
           "    loss = model(batch)['loss'] / accumulation_steps_configured_for_this_particular_run\n"
           "KeyError: 'loss' (the model returned a tuple, not a dict, when return_dict was False)")
    assert explain_texts({"log.txt": bug}).best is None
    assert explain_texts({"log.txt": _cut(bug, 60)}).best is None


def test_a_healthy_log_stays_healthy_however_it_is_wrapped() -> None:
    """No false alarm from the joining: the healthy NCCL_DEBUG=INFO log recorded on an H100 (recorded_h100/), cut
    at 80 columns, soft-wrapped and kept inside a JSON string, still says "no failure"."""
    healthy = (Path(__file__).parent / "fixtures" / "explain" / "recorded_h100" / "healthy_nccl_debug_info.log"
               ).read_text(encoding="utf-8")
    soft = "\n".join(piece for line in healthy.splitlines()
                     for piece in (textwrap.wrap(line, 80, break_on_hyphens=False) or [""]))
    for text in (healthy, _cut(healthy, 80), soft, json.dumps({"message": healthy})):
        result = explain_texts({"rank0.log": text})
        assert result.clean is not None and result.best is None


def test_an_error_after_a_long_info_line_is_not_joined_into_it() -> None:
    """Reading an editor's wrap back must not hide a failure inside the NCCL INFO line before it."""
    healthy = (Path(__file__).parent / "fixtures" / "explain" / "recorded_h100" / "healthy_nccl_debug_info.log"
               ).read_text(encoding="utf-8")
    failed = healthy.rstrip("\n") + "\nKeyError: 'loss' (the job's own code, after the communicators were destroyed)\n"
    assert explain_texts({"rank0.log": failed}).clean is None


def test_a_long_file_of_long_lines_is_read_once_and_never_joined_into_one_line(monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    """A paste that names nothing is read again with its long lines unwrapped; a long file is not (it is no paste,
    and unwrapping a file whose every line is long joined it into one huge line that took minutes to search); a
    joined record stops at paste.RECORD_MAX characters."""
    from preflight.explain import matcher

    reads: list[int] = []
    real = matcher._explain

    def counting(*args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(matcher, "_explain", counting)
    quiet = [f"[2024-05-01 12:00:{k % 60:02d}] [INFO] step={k} loss=0.{k} lr=0.0001 throughput=1234 samples/s"
             for k in range(matcher.REWRAP_MAX_LINES + 1)]
    assert matcher.explain_texts({"big.log": "\n".join(quiet)}).best is None and len(reads) == 1
    reads.clear()
    assert matcher.explain_texts({"paste.log": "\n".join(quiet[:50])}).best is None and len(reads) == 3
    joined = unwrap(quiet, " ")
    assert max(len(line) for line in joined) < RECORD_MAX + 200 and len([line for line in joined if line]) > 1
