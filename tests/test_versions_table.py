"""The torch_npu <-> PyTorch <-> CANN table against Ascend/pytorch's published file (saved whole as a fixture).

Every row of the saved COMPATIBILITY.en.md must be accepted by the checker, and the checker's table must hold
no pairing the file does not: so the table cannot drift from its source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from preflight.checks.versions import VersionsCheck, torch_npu_problem
from preflight.context import EvalContext
from preflight.inventory import ClusterSpec, Host
from preflight.model import Status

SAVED = Path(__file__).parent / "fixtures" / "versions" / "compatibility" / "Ascend_pytorch_COMPATIBILITY.en.md"
Row = tuple[str, str, str]  # (torch_npu, torch, CANN)


def published_rows() -> list[Row]:
    """(torch_npu, PyTorch, CANN) from every row of the saved file's mapping tables (active and historical)."""
    rows: list[Row] = []
    for line in SAVED.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not re.fullmatch(r"CANN \d.*", cells[3]):
            continue
        package = re.sub(r"\s*\(beta\)$", "", cells[0])
        rows.append((package, cells[2], cells[3].removeprefix("CANN ").strip()))
    return rows


ROWS = published_rows()


def test_the_saved_file_has_both_tables() -> None:
    assert len(ROWS) == 62, "26 active rows and 36 historical ones in the saved file"
    assert ("2.9.0", "2.9.0", "8.5.0") in ROWS and ("1.5.0.post2", "1.5.0", "5.0.2") in ROWS


@pytest.mark.parametrize(("torch_npu", "torch", "cann"), ROWS, ids=["/".join(r) for r in ROWS])
def test_every_published_row_passes(torch_npu: str, torch: str, cann: str) -> None:
    assert torch_npu_problem(torch, torch_npu, cann) is None
    facts = {"n1": {"python": "3.10.12", "torch": torch, "torch_npu": torch_npu, "cann": cann}}
    ctx = EvalContext(ClusterSpec(accelerator="npu"), [Host("n1", "n1")], params=VersionsCheck.params)
    compat = [f for f in VersionsCheck().evaluate(facts, ctx) if f.check == "versions.torch_npu_compat"]
    assert [(f.status, f.message) for f in compat] == [
        (Status.PASS, f"versions.torch_npu_compat: torch {torch}, torch_npu {torch_npu}, CANN {cann}")]


def test_the_issue_pairs_pass() -> None:
    """Issue 18: CANN 8.5.0 with 2.9.0, 2.8.0.post2, 2.6.0.post5 and CANN 8.3.RC1 were failed."""
    for torch_npu, torch, cann in (("2.9.0", "2.9.0", "8.5.0"), ("2.8.0.post2", "2.8.0", "8.5.0"),
                                   ("2.6.0.post5", "2.6.0", "8.5.0"), ("2.8.0", "2.8.0+cpu", "8.3.RC1")):
        assert torch_npu_problem(torch, torch_npu, cann) is None


def test_a_pair_the_file_does_not_list_still_fails() -> None:
    assert torch_npu_problem("2.7.1", "2.7.1.post2", "8.3.RC1") == (
        "torch_npu 2.7.1.post2 is not built for CANN 8.3.RC1 (it supports 2.8.0, 2.7.1, 2.6.0.post3, 2.1.0.post17)")
    assert torch_npu_problem("2.4.0", "2.5.1", "8.1.RC1") == "torch_npu 2.5.1 needs torch 2.5.1, found 2.4.0"


def test_the_package_names_its_torch_from_the_table() -> None:
    """torch_npu 1.5.0.post3 was built for PyTorch 1.8.1 (per the table), not 1.5.0 as its name suggests."""
    assert torch_npu_problem("1.8.1", "1.5.0.post3", "5.0.3") is None
    assert torch_npu_problem("2.1.0", "2.1.0.rc1", "7.0.RC1") is None
