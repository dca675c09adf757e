"""delivery.write_atomic: the one atomic file write (report.json, report.html, the extra outputs, facts files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.delivery import write_atomic


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "report.json").mkdir()  # the rename onto a folder fails
    with pytest.raises(OSError):
        write_atomic(tmp_path / "report.json", "{}\n")
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_reader_sees_the_old_file_or_the_new_one(tmp_path: Path) -> None:
    target = write_atomic(tmp_path / "metrics.prom", "old\n")
    assert write_atomic(target, "new\n").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.prom"]
