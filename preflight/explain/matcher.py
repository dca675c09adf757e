"""Match log files (one per rank) against the catalog and put the root cause first.

Ordering: root-cause signatures before generic symptoms (timeouts, reset connections); among them the
earliest line by timestamp when both lines carry one, else the more specific signature (higher
weight), then file order and line order. Input is read defensively: bytes decoded with
``errors="replace"``, only the last ``MAX_BYTES`` of a file, at most ``MAX_LINES`` lines, long lines
cut to ``MAX_LINE`` characters.

>>> r = explain_texts({"rank0.log": "Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
...                    "rank1.log": "connect [127.0.1.1]:3210: Connection refused"})
>>> (r.matches[0].signature.id, r.matches[0].file, r.matches[0].rank)
('gloo.connect_loopback', 'rank1.log', 1)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from preflight.explain.catalog import CATALOG, Signature
from preflight.explain.timeouts import Timeout, decode

MAX_BYTES = 8 * 1024 * 1024  # the end of a log holds the failure; only its last 8 MiB are read
MAX_LINES = 200_000
MAX_LINE = 4096
NEAR_LINES = 3
SUSPICIOUS = re.compile(r"error|exception|traceback|timed? ?out|times out|refused|fail|fatal|killed|abort|"
                        r"denied|unreachable|no route|reset by peer|sigkill|signal 9|\bE\d{4}\b|\bE[IJ]\d{4}\b",
                        re.IGNORECASE)

_ISO = re.compile(r"(\d{4})[-/](\d{2})[-/](\d{2})[ T-](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?")
_GLOG = re.compile(r"(?<![\w])[IWEF](\d{3,4}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?")
_US = re.compile(r"\b(\d{2})/(\d{2})/(\d{4}) (\d{2}):(\d{2}):(\d{2})")
_LINE_RANK = re.compile(r"\[rank ?(\d+)\]|\[Rank (\d+)\]|RankID:(\d+)|\brank: (\d+) \(local_rank|"
                        r"^\[\d+,(\d+)\]<std", re.IGNORECASE)
_FILE_RANK = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)


def timestamp(line: str) -> tuple[int, int, float] | None:
    """(month, day, seconds of the day) of the line's timestamp; None without one (years are ignored:
    glog lines have none).

    >>> timestamp("[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] x")
    (6, 26, 23084.903881913)
    >>> timestamp("EI0006: 2024-08-05-18:15:21.270.506 Getting socket times out")
    (8, 5, 65721.27)
    >>> timestamp("no time here") is None
    True
    """
    m = _ISO.search(line)
    if m:
        frac = float("0." + m.group(7)) if m.group(7) else 0.0
        return int(m.group(2)), int(m.group(3)), _secs(m.group(4), m.group(5), m.group(6)) + frac
    m = _GLOG.search(line)
    if m:
        md = m.group(1)
        frac = float("0." + m.group(5)) if m.group(5) else 0.0
        return int(md[:-2]), int(md[-2:]), _secs(m.group(2), m.group(3), m.group(4)) + frac
    m = _US.search(line)
    if m:
        return int(m.group(1)), int(m.group(2)), _secs(m.group(4), m.group(5), m.group(6))
    return None


def _secs(h: str, m: str, s: str) -> float:
    return float(int(h) * 3600 + int(m) * 60 + int(s))


def rank_of(line: str, file: str) -> int | None:
    """The rank named in the line (``[rank3]:``, ``RankID:3``, mpirun's ``[1,3]<stdout>``) or the file name.

    >>> rank_of("[rank1]: EI0006: ...", "x.log"), rank_of("boom", "logs/rank_7.log"), rank_of("boom", "a.log")
    (1, 7, None)
    """
    m = _LINE_RANK.search(line)
    if m:
        return int(next(g for g in m.groups() if g is not None))
    m = _FILE_RANK.search(Path(file).name)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Match:
    """A catalog signature found on one line of one file."""

    signature: Signature
    file: str
    file_index: int
    line_number: int  # 1-based, counted in the part of the file that was read
    line: str
    time: tuple[int, int, float] | None
    rank: int | None
    timeouts: tuple[Timeout, ...] = ()

    def explanation(self) -> str:
        """The cause, with the decoded timeout values when the line has any."""
        if not self.timeouts:
            return self.signature.cause
        decoded = "; ".join(t.describe() for t in self.timeouts)
        return f"{self.signature.cause} Timeout: {decoded}."

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: id, category, line, line_number, file, cause, fix, checks."""
        return {"id": self.signature.id, "category": self.signature.category, "line": self.line,
                "line_number": self.line_number, "file": self.file, "cause": self.explanation(),
                "fix": self.signature.fix, "checks": list(self.signature.checks)}


@dataclass(frozen=True)
class Suspect:
    """An unrecognised but suspicious line (error, exception, timeout, refused...)."""

    file: str
    line_number: int
    line: str
    score: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": "unknown", "category": "unknown", "line": self.line, "line_number": self.line_number,
                "file": self.file, "cause": "No known failure signature matched; this is one of the most "
                "suspicious lines.", "fix": "Read the lines around it; run `preflight run` to check the "
                "hosts.", "checks": []}


@dataclass
class Explanation:
    """All matches, root cause first, and the suspicious lines of an unrecognised log."""

    matches: list[Match] = field(default_factory=list)
    suspects: list[Suspect] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def best(self) -> Match | None:
        return self.matches[0] if self.matches else None

    def to_dict(self) -> dict[str, Any]:
        """``{"matches": [...]}``, best first; an unknown log gives its suspicious lines as ``unknown``."""
        if self.matches:
            return {"matches": [m.to_dict() for m in self.matches]}
        return {"matches": [s.to_dict() for s in self.suspects]}


def sort_key(m: Match) -> tuple[bool, bool, tuple[int, int, float], int, int, int]:
    """Root causes first; then by timestamp (lines without one after those with one), then specificity."""
    no_time = m.time is None
    return (not m.signature.root_cause, no_time, m.time or (0, 0, 0.0), -m.signature.weight, m.file_index,
            m.line_number)


def _order(matches: list[Match]) -> list[Match]:
    """Sort; when the root-cause lines cannot all be compared by time, specificity decides among them."""
    timed = [m for m in matches if m.signature.root_cause and m.time is not None]
    untimed = [m for m in matches if m.signature.root_cause and m.time is None]
    if timed and untimed:  # mixed: time cannot order them, fall back to weight for the root causes
        def key(m: Match) -> tuple[bool, int, tuple[int, int, float], int, int]:
            return (not m.signature.root_cause, -m.signature.weight, m.time or (99, 99, 0.0), m.file_index,
                    m.line_number)
        return sorted(matches, key=key)
    return sorted(matches, key=sort_key)


def _lines(text: str) -> list[str]:
    lines = text.replace("\x00", "").splitlines()
    if len(lines) > MAX_LINES:
        lines = lines[-MAX_LINES:]
    return [line[:MAX_LINE] for line in lines]


@functools.lru_cache(maxsize=8)
def _prefilter(signatures: tuple[Signature, ...]) -> re.Pattern[str]:
    """One alternation of every pattern: lines it does not match are skipped (5-10x faster on big logs)."""
    parts = [re.sub(r"\(\?P<\w+>", "(?:", p) for sig in signatures for p in sig.patterns]
    return re.compile("|".join(f"(?:{p})" for p in parts))


def match_lines(lines: list[str], file: str, file_index: int,
                signatures: Iterable[Signature] = CATALOG) -> list[Match]:
    """Every (signature, first line) match in one file; a signature counts once per file."""
    found: dict[str, Match] = {}
    sigs = tuple(signatures)
    anything = _prefilter(sigs)
    for number, line in enumerate(lines, start=1):
        if not anything.search(line):
            continue
        for sig in sigs:
            if sig.id in found:
                continue
            m = sig.search(line)
            if m is None:
                continue
            if sig.compiled_near:
                window = "\n".join(lines[max(0, number - 1 - NEAR_LINES):number])
                if not any(p.search(window) for p in sig.compiled_near):
                    continue
            found[sig.id] = Match(sig, file, file_index, number, line.strip(), timestamp(line),
                                  rank_of(line, file), tuple(decode(line)))
    # the same line matched by several signatures: keep only the most specific one
    best_per_line: dict[int, Match] = {}
    for match in found.values():
        held = best_per_line.get(match.line_number)
        if held is None or match.signature.weight > held.signature.weight:
            best_per_line[match.line_number] = match
    return list(best_per_line.values())


def suspicious(lines: list[str], file: str, limit: int = 5) -> list[Suspect]:
    """The most suspicious distinct lines of a file (most keyword hits first, then the latest)."""
    scored: dict[str, Suspect] = {}
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        hits = len(SUSPICIOUS.findall(text))
        if hits and (text not in scored or scored[text].score <= hits):
            scored[text] = Suspect(file, number, text, hits)
    ranked = sorted(scored.values(), key=lambda s: (-s.score, -s.line_number))
    return ranked[:limit]


def explain_texts(texts: Mapping[str, str], signatures: Iterable[Signature] = CATALOG) -> Explanation:
    """Explain already-read logs, ``{file name: text}`` (one file per rank), in the given order, against
    ``signatures`` (the built-in catalog unless user signatures were merged in)."""
    sigs = tuple(signatures)
    result = Explanation(files=list(texts))
    all_matches: list[Match] = []
    per_file_lines: list[tuple[str, list[str]]] = []
    for index, (name, text) in enumerate(texts.items()):
        lines = _lines(text)
        per_file_lines.append((name, lines))
        all_matches.extend(match_lines(lines, name, index, sigs))
    result.matches = _order(all_matches)
    if not result.matches:
        suspects = [s for name, lines in per_file_lines for s in suspicious(lines, name)]
        result.suspects = sorted(suspects, key=lambda s: -s.score)[:10]
    return result


def read_log(stream: IO[bytes], max_bytes: int = MAX_BYTES) -> str:
    """The last ``max_bytes`` of a binary stream as text (undecodable bytes replaced), never raising on
    content.

    >>> import io
    >>> read_log(io.BytesIO(b"ok\\xff\\x00line"), max_bytes=5)
    '\\x00line'
    """
    tail = b""
    while True:
        chunk = stream.read(1024 * 1024)
        if not chunk:
            break
        tail = (tail + chunk)[-max_bytes:]
    return tail.decode("utf-8", errors="replace")


def read_file(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The last ``max_bytes`` of a file as text (seeks instead of reading a huge file whole)."""
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - max_bytes))
        return read_log(handle, max_bytes)
