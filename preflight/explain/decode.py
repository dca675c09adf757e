"""Decoded codes: the second layer of ``explain`` (after an exact signature, before keyword families).

A vendor's code seen in a log (CANN ``EI0006``, ACL ``507033``, HcclResult ``error code is 9``,
``ncclResult_t`` 6, ``cudaError_t`` 2, ``Xid 79``, a torchrun exit ``-9``...) is decoded from the vendor's own
table even when no log sample of that code exists. Each table is a module of ``preflight.explain`` (or the
neutral ``preflight.xid_catalog``) exposing a :class:`CodeTable`: where the table comes from (source URL and
version), its entries, and ``find(line)``, the codes of that table a line carries. ``DECODERS`` (in
``preflight.explain.tables``) lists them in the order they are tried.

>>> t = CodeTable("demo", "https://example.org/codes", "1.0",
...               {"E1": Code("E1", "E_ONE", "the first failure", "driver", "restart it")},
...               lambda line: [m.group(0) for m in __import__("re").finditer(r"\\bE\\d\\b", line)])
>>> [d.code.name for d in t.decode("boom: E1 and E7")]
['E_ONE']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Code:
    """One entry of a vendor's code table.

    ``category`` is one of ``preflight.explain.signature.CATEGORIES``; ``root_cause`` False for codes that
    only say some other rank or layer failed (a timeout, a remote abort), as for signatures.
    """

    code: str  # as the table writes it: "EI0006", "507033", "6", "cudaErrorMemoryAllocation" ...
    name: str  # the symbolic name: "ACL_ERROR_RT_...", "ncclRemoteError", "HCCL_E_TIMEOUT"
    meaning: str  # the table's own description, short
    category: str
    fix: str
    checks: tuple[str, ...] = ()  # the preflight checks that verify it on the hosts
    root_cause: bool = True


@dataclass(frozen=True)
class Gate:
    """What every line carrying one of a table's codes contains: one of ``markers`` (lower-case literals), a match
    of ``shape`` or one of ``words`` as a whole word, in the line lower-cased with runs of blanks as one space
    (``normalized``: in ``table_templates.normalize(line)``). A line without them cannot carry a code of the table,
    so ``explain`` does not ask the table about it (``gates.GatePlan``). A gate must never reject a line its table's
    ``find`` answers (``tests/test_explain_tables.py`` checks it on every sample line).

    >>> g = Gate(("cuda error",), re.compile("xid [0-9]"), frozenset({"nvrm"}))
    >>> g.admits("runtimeerror: cuda error: out of memory"), g.admits("xid 79"), g.admits("nvrm gpu")
    (True, True, True)
    >>> g.admits("loss=0.3 nvrmx")
    False
    """

    markers: tuple[str, ...] = ()
    shape: re.Pattern[str] | None = None
    words: frozenset[str] = frozenset()
    normalized: bool = False
    scan: re.Pattern[str] | None = field(init=False, repr=False, compare=False)  # markers and shape as one regex

    def __post_init__(self) -> None:
        parts = [re.escape(m) for m in self.markers] + ([f"(?:{self.shape.pattern})"] if self.shape else [])
        object.__setattr__(self, "scan", re.compile("|".join(parts)) if parts else None)

    def admits(self, text: str, tokens: set[str] | None = None) -> bool:
        """Whether ``text`` (the line in this gate's form; ``tokens``: its words, when the caller has them) may
        carry a code of the table."""
        if self.scan is not None and self.scan.search(text):
            return True
        return bool(self.words) and not self.words.isdisjoint(tokens if tokens is not None else text.split())


@dataclass(frozen=True)
class CodeTable:
    """A vendor's code table: its source (URL) and version, its entries, and how to find its codes in a line."""

    name: str  # "cann", "hccl_result", "nccl_result", "cuda_error", "xid", "torchrun_exit", ...
    source: str
    version: str
    entries: Mapping[str, Code]
    find: Callable[[str], list[str]] = field(repr=False, compare=False)  # line -> codes of this table in it
    gate: Gate | None = field(default=None, repr=False, compare=False)  # None: every line is asked

    def decode(self, line: str) -> list[Decoded]:
        """Every code of this table the line carries, decoded (unknown codes of its shape are left out)."""
        return [Decoded(self, self.entries[c], line) for c in self.find(line) if c in self.entries]


@dataclass(frozen=True)
class Decoded:
    """A code found on a line, with the table it was decoded from."""

    table: CodeTable
    code: Code
    line: str

    def describe(self) -> str:
        """``EI0006 (HCCL socket timeout) from CANN error codes 8.0.0``-style: what and from where."""
        return (f"{self.code.code} {self.code.name}: {self.code.meaning} "
                f"({self.table.name} {self.table.version}, {self.table.source})")


# glog's CHECK macros print the expression and both values: ``Check failed: e == cudaSuccess || e ==
# cudaErrorCudartUnloading CUDA: invalid device ordinal``, ``Check failed: result == ncclSuccess (1 vs. 0)``.
_COMPARED = re.compile(r"[=!]=\s*$")
_VERSUS = re.compile(r"\((\d+) vs\.? (\d+)\)")


def compared_with(line: str, start: int) -> bool:
    """Whether the name at ``start`` is what a check compares with (after ``==`` / ``!=``), not what it reports.

    >>> line = "Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: invalid device ordinal"
    >>> compared_with(line, line.index("cudaErrorCudartUnloading")), compared_with(line, line.index("CUDA:"))
    (True, False)
    """
    return bool(_COMPARED.search(line[:start]))


def check_values(line: str) -> list[tuple[int, str]]:
    """The non-zero value a glog check reports beside a zero one, with its position: ``(2 vs. 0)`` gives 2.

    >>> check_values("Check failed: error == cudaSuccess (2 vs. 0)  out of memory")
    [(35, '2')]
    """
    return [(m.start(), n) for m in _VERSUS.finditer(line) for n in m.groups() if n != "0" and "0" in m.groups()]

