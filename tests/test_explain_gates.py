"""The code tables' gates (issue 38): a gate may only reject lines its table cannot answer, so ``explain`` gives the
same answer with them, faster.

Checked on every line of every log sample under tests/fixtures/explain (the sealed sets left out unread) and on lines
made from each table's own entries (its codes, names and message templates), for every table in DECODERS.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.explain import gates
from preflight.explain.decode import CodeTable
from preflight.explain.gates import GATES, GatePlan, gate_of
from preflight.explain.matcher import explain_texts
from preflight.explain.table_templates import normalize
from preflight.explain.tables import DECODERS

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
SEALED = {"frozen21"}  # the sealed evaluation sets: not read


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _sample_lines() -> list[str]:
    lines: list[str] = []
    for top, dirs, files in os.walk(FIXTURES):
        dirs[:] = sorted(d for d in dirs if not (Path(top) == FIXTURES and d in SEALED))
        for name in sorted(files):
            text = (Path(top) / name).read_text(encoding="utf-8", errors="replace")
            texts = _strings(json.loads(text)) if name.endswith(".json") else iter((text,))
            lines += [line for chunk in texts for line in chunk.splitlines()]
    return lines


SAMPLES = _sample_lines()


def _own_lines(table: CodeTable) -> list[str]:
    """Lines made from the table's entries: each code, name and meaning, and the key with values filled in, alone
    and after the wrappers logs print them in."""
    out: list[str] = []
    for code in table.entries.values():
        filled = re.sub(r"\{\}", "x1", code.code)
        for text in (code.code, code.name, code.meaning, filled):
            out += [text, f"error code is {text}", f"RuntimeError: CUDA error: {text}",
                    f"NCCL error in: x.cpp:1, {text}", f"Test NCCL failure common.cu:1 '{text}'", f"Xid {text}",
                    f"  exitcode  : {text} (pid: 1)"]
    return out


@pytest.mark.parametrize("table", [t for t in DECODERS if gate_of(t) is not None], ids=lambda t: t.name)
def test_a_gate_never_rejects_a_line_its_table_answers(table: CodeTable) -> None:
    plan = GatePlan((table,))
    missed = [line for line in SAMPLES + _own_lines(table) if table.find(line) and table not in plan.asked(line)]
    assert not missed, missed[:5]


def test_most_tables_are_gated_and_noise_asks_none() -> None:
    ungated = [t.name for t in DECODERS if gate_of(t) is None]
    assert ungated == ["nccl_warn"]  # its find already tests the line's words against its templates' in one set
    plan = GatePlan(tuple(DECODERS))
    for noise in ("node1:1234:1250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
                  "{'loss': 1.23, 'learning_rate': 2e-05, 'epoch': 0.5}",
                  '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl'):
        assert len(plan.asked(noise)) <= 2, noise  # nccl_warn, and gloo's word "read" in the first


def test_every_named_gate_belongs_to_a_table() -> None:
    assert set(GATES) <= {t.name for t in DECODERS}


def test_gates_change_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """explain with and without the gates gives the same --json on real logs (the gates only save time)."""
    logs = [json.loads((FIXTURES / name).read_text(encoding="utf-8")) for name in ("corpus.json", "dev_nvidia.json")]
    excerpts = [entry["excerpt"] for entries in logs for entry in entries]
    with_gates = [explain_texts({"log.txt": text}).to_dict() for text in excerpts]
    monkeypatch.setattr(gates, "GATES", {})
    plain = tuple(CodeTable(t.name, t.source, t.version, t.entries, t.find) for t in DECODERS)
    assert all(gate_of(t) is None for t in plain)
    assert [explain_texts({"log.txt": text}, tables=plain).to_dict() for text in excerpts] == with_gates


def test_the_union_of_the_gates_rejects_only_what_every_gate_rejects() -> None:
    """GatePlan's one-search shortcut (every gate's markers as a trie, shapes and words) answers as the gates do."""
    plan = GatePlan(tuple(DECODERS))
    for line in SAMPLES:
        low, norm = " ".join(line.lower().split()), normalize(line)
        tokens = set(norm.split())
        any_gate = any(g.admits(norm, tokens) if g.normalized else g.admits(low) for g in plan.gates)
        assert (plan.asked(line) != plan.ungated) == any_gate, line


def test_family_anchors_never_reject_a_line_the_family_matches() -> None:
    """Every failure family's anchors (tolerant.anchors_of, with the trie of all of them) are in every sample line
    its pattern matches, so the prefilter only saves time."""
    from preflight.explain.families import FAMILIES, _any_anchor, _family_anchors

    anchored = dict((fam.name, words) for fam, words in _family_anchors())
    assert sum(words is None for words in anchored.values()) == 0, "every family has anchors"
    for line in SAMPLES:
        low = line.lower()
        for fam in FAMILIES:
            if fam.pattern.search(line):
                words = anchored[fam.name] or ()
                assert _any_anchor().search(low) and any(w in low for w in words), (fam.name, line)


def test_signature_prefilter_never_skips_a_signature_that_matches() -> None:
    """The catalog's anchors (a trie regex, then each anchor's signatures) offer every signature that matches a
    sample line."""
    from preflight.explain.catalog import CATALOG
    from preflight.explain.prefilter import prefilter_of

    prefilter = prefilter_of(tuple(CATALOG))
    for line in SAMPLES:
        offered = {sig.id for sig in prefilter.candidates(line.lower())}
        missed = [sig.id for sig in CATALOG if sig.id not in offered and sig.search(line)]
        assert not missed, (missed, line)
