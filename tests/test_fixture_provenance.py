"""Where the parse fixtures' outputs came from: every one says so, and the corpus of real public outputs
cannot silently shrink (issue 18, "a corpus of real outputs")."""

from __future__ import annotations

import json
import re
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
PARSE = sorted(FIXTURES.glob("*/parse/*.json"))
URL = re.compile(r"https?://\S+")
MIN_REAL_OUTPUTS = 40


def _source(path: Path) -> str:
    source = json.loads(path.read_text()).get("source")
    return source if isinstance(source, str) else ""


def test_every_parse_fixture_says_where_its_outputs_came_from() -> None:
    missing = [p.relative_to(FIXTURES).as_posix() for p in PARSE if not _source(p).strip()]
    assert PARSE and not missing, f"parse fixtures without a source: {missing}"


def test_corpus_of_real_public_outputs_keeps_its_size() -> None:
    real = [p for p in PARSE if URL.search(_source(p))]
    assert len(real) >= MIN_REAL_OUTPUTS, (
        f"{len(real)} parse fixtures cite a public URL, want >= {MIN_REAL_OUTPUTS}: "
        "a real output was dropped (tests/fixtures/README.md, 'The corpus of real outputs')")


def test_missing_formats_are_listed() -> None:
    """Formats with no public sample are said so, not invented."""
    text = (FIXTURES / "MISSING.md").read_text()
    for tool in ("npu-smi", "hccn_tool", "nvidia-smi", "ibstat", "iptables"):
        assert tool in text
