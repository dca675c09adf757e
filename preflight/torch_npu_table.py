"""Ascend/pytorch's torch_npu <-> PyTorch <-> CANN table, as data: every row, the active and the historical one.

Source (copied row for row; the file is saved whole in tests/fixtures/versions/compatibility/, and
tests/test_versions_table.py checks every row of it against this table):
https://github.com/Ascend/pytorch/blob/b48e64812a56717e36110acd4f8f3cb748cbed9d/COMPATIBILITY.en.md
(COMPATIBILITY.en.md last changed 2026-08-20 in commit b48e64812a56).

A row is (torch_npu package version, the PyTorch version it is built for, the CANN release). The PyTorch
column is not always the package's name: torch_npu 1.5.0.post3 was built for PyTorch 1.8.1. "(beta)" marks
on two old rows are dropped from the package version.

>>> torch_for("2.9.0"), torch_for("1.5.0.post3"), torch_for("9.9.9") is None
('2.9.0', '1.8.1', True)
>>> TORCH_NPU_FOR_CANN["8.5.0"]
('2.9.0', '2.8.0.post2', '2.7.1.post2', '2.6.0.post5')
"""

from __future__ import annotations

SOURCE = "https://github.com/Ascend/pytorch/blob/b48e64812a56717e36110acd4f8f3cb748cbed9d/COMPATIBILITY.en.md"

# (torch_npu, PyTorch, CANN), in the file's order.
ROWS: tuple[tuple[str, str, str], ...] = (
    ("2.12.0", "2.12.0", "9.1.0"),
    ("2.11.0", "2.11.0", "9.1.0"),
    ("2.10.0.post4", "2.10.0", "9.1.0"),
    ("2.9.0.post6", "2.9.0", "9.1.0"),
    ("2.7.1.post8", "2.7.1", "9.1.0"),
    ("2.9.0.post2", "2.9.0", "9.0.0"),
    ("2.8.0.post4", "2.8.0", "9.0.0"),
    ("2.7.1.post4", "2.7.1", "9.0.0"),
    ("2.9.0", "2.9.0", "8.5.0"),
    ("2.8.0.post2", "2.8.0", "8.5.0"),
    ("2.7.1.post2", "2.7.1", "8.5.0"),
    ("2.6.0.post5", "2.6.0", "8.5.0"),
    ("2.8.0", "2.8.0", "8.3.RC1"),
    ("2.7.1", "2.7.1", "8.3.RC1"),
    ("2.6.0.post3", "2.6.0", "8.3.RC1"),
    ("2.1.0.post17", "2.1.0", "8.3.RC1"),
    ("2.6.0", "2.6.0", "8.2.RC1"),
    ("2.5.1.post1", "2.5.1", "8.2.RC1"),
    ("2.1.0.post13", "2.1.0", "8.2.RC1"),
    ("2.5.1", "2.5.1", "8.1.RC1"),
    ("2.4.0.post4", "2.4.0", "8.1.RC1"),
    ("2.3.1.post6", "2.3.1", "8.1.RC1"),
    ("2.1.0.post12", "2.1.0", "8.1.RC1"),
    ("2.4.0.post2", "2.4.0", "8.0.0"),
    ("2.3.1.post4", "2.3.1", "8.0.0"),
    ("2.1.0.post10", "2.1.0", "8.0.0"),
    ("2.4.0", "2.4.0", "8.0.RC3"),
    ("2.3.1.post2", "2.3.1", "8.0.RC3"),
    ("2.1.0.post8", "2.1.0", "8.0.RC3"),
    ("2.3.1", "2.3.1", "8.0.RC2"),
    ("2.2.0.post2", "2.2.0", "8.0.RC2"),
    ("2.1.0.post6", "2.1.0", "8.0.RC2"),
    ("1.11.0.post14", "1.11.0", "8.0.RC2"),
    ("2.2.0", "2.2.0", "8.0.RC1"),
    ("2.1.0.post4", "2.1.0", "8.0.RC1"),
    ("1.11.0.post11", "1.11.0", "8.0.RC1"),
    ("2.1.0", "2.1.0", "7.0.0"),
    ("2.0.1.post1", "2.0.1", "7.0.0"),
    ("1.11.0.post8", "1.11.0", "7.0.0"),
    ("2.1.0.rc1", "2.1.0", "7.0.RC1"),
    ("2.0.1", "2.0.1", "7.0.RC1"),
    ("1.11.0.post4", "1.11.0", "7.0.RC1"),
    ("1.11.0.post3", "1.11.0", "6.3.RC3.1"),
    ("1.11.0.post2", "1.11.0", "6.3.RC3"),
    ("2.0.1.rc1", "2.0.1", "6.3.RC2"),
    ("1.11.0.post1", "1.11.0", "6.3.RC2"),
    ("1.8.1.post2", "1.8.1", "6.3.RC2"),
    ("1.11.0", "1.11.0", "6.3.RC1"),
    ("1.8.1.post1", "1.8.1", "6.3.RC1"),
    ("1.5.0.post8", "1.5.0", "6.0.1"),
    ("1.8.1", "1.8.1", "6.0.1"),
    ("1.11.0.rc2", "1.11.0", "6.0.1"),
    ("1.5.0.post7", "1.5.0", "6.0.RC1"),
    ("1.8.1.rc3", "1.8.1", "6.0.RC1"),
    ("1.11.0.rc1", "1.11.0", "6.0.RC1"),
    ("1.5.0.post6", "1.5.0", "5.1.RC2"),
    ("1.8.1.rc2", "1.8.1", "5.1.RC2"),
    ("1.5.0.post5", "1.5.0", "5.1.RC1"),
    ("1.8.1.rc1", "1.8.1", "5.1.RC1"),
    ("1.5.0.post4", "1.5.0", "5.0.4"),
    ("1.5.0.post3", "1.8.1", "5.0.3"),
    ("1.5.0.post2", "1.5.0", "5.0.2"),
)

# CANN release -> the torch_npu releases built for it, in the file's order.
TORCH_NPU_FOR_CANN: dict[str, tuple[str, ...]] = {}
for _package, _torch, _cann in ROWS:
    TORCH_NPU_FOR_CANN[_cann] = (*TORCH_NPU_FOR_CANN.get(_cann, ()), _package)


def torch_for(torch_npu: str) -> str | None:
    """The PyTorch version a torch_npu release is built for, per the table; None when it is not listed."""
    return next((torch for package, torch, _ in ROWS if package == torch_npu), None)
