"""Builds ``preflight/explain/known_cases.json`` (explain's last layer, round 17 of issue 38) from the labelled real
logs in the tests' fixtures: the explain corpus, the signatures' excerpts, the two dev sets, the logs gathered for the
known cases alone (``known_extra/``, round 18) and the labelled logs left in the spent frozen sets (frozen, frozen2
... frozen20). Never a sealed set (``frozen21`` and any later one), nor the held-out set, nor the logs
recorded on the namespace cluster (their tests score explain on them).

    python3 tests/known_cases_build.py          # rewrite the file
    python3 tests/known_cases_build.py --check  # exit 1 when the file is not what the fixtures build

``test_explain_known_cases.py`` checks the shipped file is what this builds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from preflight.explain.known_cases import DATA, case_words  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "explain"
SPENT = ("frozen", *(f"frozen{n}" for n in range(2, 21)))


def _read(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def labelled() -> list[tuple[str, str, str]]:
    """(category, source, log text) of every labelled log the known cases are built from; ``unknown`` left out."""
    from preflight.explain.catalog import SIGNATURES

    logs: list[tuple[str, str, str]] = []
    corpus = _read(FIXTURES / "corpus.json")
    assert isinstance(corpus, list)
    logs += [(e["category"], e["source"], e["excerpt"]) for e in corpus]
    excerpts = _read(FIXTURES / "excerpts.json")
    assert isinstance(excerpts, dict)
    logs += [(SIGNATURES[sig_id].category, e["source"], e["excerpt"]) for sig_id, e in sorted(excerpts.items())]
    for name in ("dev_ascend.json", "dev_nvidia.json", *(f"{s}/logs.json" for s in SPENT), "known_extra/logs.json"):
        found = _read(FIXTURES / name)
        assert isinstance(found, list)
        logs += [(e["category"], e["source"], e["excerpt"]) for e in found]
    return [log for log in logs if log[0] != "unknown"]


def build() -> dict[str, object]:
    """The file's content: where it comes from, and one ``[category, source, words]`` per distinct case."""
    cases: list[list[str]] = []
    seen: set[tuple[str, str]] = set()
    for category, source, text in labelled():
        found = " ".join(sorted(case_words(text)))
        if found and (category, found) not in seen:
            seen.add((category, found))
            cases.append([category, source, found])
    return {"about": "explain's known cases (preflight/explain/known_cases.py): the words of each labelled real log "
                     "of tests/fixtures/explain (corpus, signature excerpts, dev sets, spent frozen sets 1-11, "
                     "known_extra), built by tests/known_cases_build.py",
            "cases": cases}


def text() -> str:
    return json.dumps(build(), ensure_ascii=False, indent=0) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if DATA.read_text(encoding="utf-8") == text() else 1)
    DATA.write_text(text(), encoding="utf-8")
    print(f"{DATA}: {len(build()['cases'])} cases")  # type: ignore[arg-type]
