"""Match log files (one per rank) against the catalog, the code tables and the failure families, and put the
first cause first.

Layers, per line: an exact signature (``signature``: the catalog, tolerant of case, spacing and punctuation);
else a code decoded from a vendor's table (``code``: ``preflight.explain.tables.DECODERS``; not within
``BLOCK_LINES`` of a signature's line, whose error it belongs to); else, only when
neither recognised any real error in the logs, the component and failure family from its keywords
(``family``: ``preflight.explain.families``); ``unknown`` last, with the most suspicious lines.

Ordering: a match on a harmless warning line (deprecation notices, ``[W ...]``, CANN ``[WARNING]``, Python
warnings, informational ``NCCL WARN``) after every other; root causes before symptoms (timeouts, reset
connections); signatures and codes before keyword families; among them the earliest line by timestamp when
all carry one, else the more specific (higher weight), then file order and line order. Input is read
defensively: bytes decoded with ``errors="replace"``, only the last ``MAX_BYTES`` of a file, at most
``MAX_LINES`` lines, long lines cut to ``MAX_LINE`` characters.

>>> r = explain_texts({"rank0.log": "Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
...                    "rank1.log": "connect [127.0.1.1]:3210: Connection refused"})
>>> (r.matches[0].signature.id, r.matches[0].file, r.matches[0].rank, r.matches[0].layer)
('gloo.connect_loopback', 'rank1.log', 1, 'signature')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from preflight.explain.catalog import CATALOG, Signature
from preflight.explain.clean import SUSPICIOUS, finished_cleanly
from preflight.explain.decode import CodeTable, Decoded
from preflight.explain.evidence import (
    Evidence,
    collective_evidence,
    hang_evidence,
    interface_evidence,
    launch_evidence,
    operator_evidence,
)
from preflight.explain.families import FAMILY_WEIGHT, checks_by_category, family_of
from preflight.explain.gates import plan_for
from preflight.explain.known_cases import MIN_SIMILARITY, QUIET_MIN_SIMILARITY, reading, resemblance, words
from preflight.explain.lines import FileFacts, file_facts, line_rank, path_rank, timestamp
from preflight.explain.paste import WRAP_MIN, joins, normalize, terminal_width, uncut, unwrap
from preflight.explain.prefilter import prefilter_of
from preflight.explain.tables import DECODERS
from preflight.explain.timeouts import Timeout, decode

__all__ = ["MAX_BYTES", "Explanation", "Match", "Suspect", "explain_texts", "rank_of", "read_file", "read_log",
           "timestamp"]

MAX_BYTES = 8 * 1024 * 1024  # the end of a log holds the failure; only its last 8 MiB are read
MAX_LINES = 200_000
MAX_LINE = 4096
NEAR_LINES = 3
JOIN_MAX_LINES = 5_000  # a log this short (a paste) also has its long lines tried joined with the next ones
# a log this short that named nothing is read twice more with its long lines unwrapped (an editor's or a forum's
# wrap): the two labelled logs that need it have 3 and 22 lines; a long log is a file, not a paste, and each pass
# over it costs as much as the first
REWRAP_MAX_LINES = 1_000
BLOCK_LINES = 5  # a code within this many lines of a signature's line belongs to the error that signature explains
_NOT_FAMILY = re.compile(r"^\s*(?:File \"|frame #\d+)")  # traceback frames: paths, not failures
LAYERS = ("signature", "code", "family", "unknown")
CODE_WEIGHT = 45  # a symptom's weight is a third of it (FAMILY_WEIGHT: preflight.explain.families)


def rank_of(line: str, file: str) -> int | None:
    """The rank named in the line (``[rank3]:``, ``RankID:3``, mpirun's ``[1,3]<stdout>``) or the file's path
    (``rank_7.log``, torchrun's ``attempt_0/7/stderr.log``).

    >>> rank_of("[rank1]: EI0006: ...", "x.log"), rank_of("boom", "logs/rank_7.log"), rank_of("boom", "a.log")
    (1, 7, None)
    """
    found = line_rank(line)
    return found if found is not None else path_rank(file)


@dataclass(frozen=True)
class Match:
    """A cause found on one line of one file: a catalog signature, or (layers ``code`` and ``family``) one
    built from the code table entry or the failure family that recognised the line."""

    signature: Signature
    file: str
    file_index: int
    line_number: int  # 1-based, counted in the part of the file that was read
    line: str
    time: tuple[int, int, float] | None
    rank: int | None
    timeouts: tuple[Timeout, ...] = ()
    layer: str = "signature"
    host: str | None = None
    harmless: bool = False  # the line only warns
    decoded: tuple[Decoded, ...] = ()  # the codes of the line (the answer of a ``code`` match)
    component: str | None = None  # ``family`` matches: the component the line names
    family: str | None = None

    def explanation(self) -> str:
        """The cause, with the decoded timeout values when the line has any."""
        if not self.timeouts:
            return self.signature.cause
        decoded = "; ".join(t.describe() for t in self.timeouts)
        return f"{self.signature.cause} Timeout: {decoded}."

    @property
    def code(self) -> str | None:
        return self.decoded[0].code.code if self.decoded else None

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: id, category, layer, line, line_number, file, rank, host, cause, fix, checks,
        source, code, component, family."""
        return {"id": self.signature.id, "category": self.signature.category, "layer": self.layer,
                "line": self.line, "line_number": self.line_number, "file": self.file, "rank": self.rank,
                "host": self.host, "cause": self.explanation(), "fix": self.signature.fix,
                "checks": list(self.signature.checks), "source": self.signature.source or None, "code": self.code,
                "component": self.component, "family": self.family}


@dataclass(frozen=True)
class Suspect:
    """An unrecognised but suspicious line (error, exception, timeout, refused...)."""

    file: str
    line_number: int
    line: str
    score: int
    harmless: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"id": "unknown", "category": "unknown", "layer": "unknown", "line": self.line,
                "line_number": self.line_number, "file": self.file, "rank": None, "host": None,
                "cause": "No known failure signature, code or failure family matched; this is one of the most "
                "suspicious lines.", "fix": "Read the lines around it; run `preflight run` to check the "
                "hosts.", "checks": [], "source": None, "code": None, "component": None, "family": None}


@dataclass
class Explanation:
    """All matches, first cause first, and the suspicious lines of an unrecognised log."""

    matches: list[Match] = field(default_factory=list)
    suspects: list[Suspect] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    clean: str | None = None  # why the logs show a clean finish (``preflight.explain.clean``); then no cause
    notes: list[Match] = field(default_factory=list)  # a clean log's hints (symptoms, warnings), never a cause

    @property
    def best(self) -> Match | None:
        return self.matches[0] if self.matches else None

    def to_dict(self) -> dict[str, Any]:
        """``{"matches": [...]}``, best first; an unknown log gives its suspicious lines as ``unknown``; a clean
        one ``{"matches": [], "clean": why, "notes": [...]}``."""
        if self.clean is not None:
            return {"matches": [], "clean": self.clean, "notes": [m.to_dict() for m in self.notes]}
        if self.matches:
            return {"matches": [m.to_dict() for m in self.matches]}
        return {"matches": [s.to_dict() for s in self.suspects]}


def names_nothing(m: Match) -> bool:
    """A match that claims no category: a generic code (an internal error, ``unhandled cuda error``, a report that
    another layer failed) decoded and shown, but no evidence of a cause by itself."""
    return m.signature.category == "unknown"


def _group(m: Match) -> tuple[bool, bool, bool, bool]:
    return (m.harmless, names_nothing(m), not m.signature.root_cause, m.layer == "family")


def sort_key(m: Match) -> tuple[bool, bool, bool, bool, bool, tuple[int, int, float], int, int, int, int]:
    """Real errors before warnings, root causes before symptoms, signatures and codes before families; then by
    timestamp (lines without one after those with one), then layer (a signature before a code), then
    specificity."""
    return (*_group(m), m.time is None, m.time or (0, 0, 0.0), LAYERS.index(m.layer), -m.signature.weight,
            m.file_index, m.line_number)


def _by_weight(m: Match) -> tuple[bool, bool, bool, bool, int, int, tuple[int, int, float], int, int]:
    return (*_group(m), LAYERS.index(m.layer), -m.signature.weight, m.time or (99, 99, 0.0), m.file_index,
            m.line_number)


def _order(matches: list[Match]) -> list[Match]:
    """Sort; when the root causes of one group cannot all be compared by time, specificity decides among them."""
    ordered: list[Match] = []
    for group in sorted({_group(m) for m in matches}):
        members = [m for m in matches if _group(m) == group]
        mixed = any(m.time is None for m in members) and any(m.time is not None for m in members)
        ordered.extend(sorted(members, key=_by_weight if mixed and not group[2] else sort_key))
    return ordered


def _lines(text: str) -> list[str]:
    lines = normalize(text.replace("\x00", "")).splitlines()
    if len(lines) > MAX_LINES:
        lines = lines[-MAX_LINES:]
    return [line[:MAX_LINE] for line in lines]


def match_lines(lines: list[str], file: str, file_index: int, signatures: Iterable[Signature] = CATALOG,
                facts: FileFacts | None = None, tables: tuple[CodeTable, ...] = (),
                moot: set[int] | None = None) -> list[Match]:
    """Every (signature, first line) match in one file; a signature counts once per file. ``tables`` name the
    codes the matched lines carry; ``moot`` collects the numbers of lines a signature's ``unless`` made moot."""
    facts = facts or file_facts(lines, file)
    found: dict[str, Match] = {}
    sigs = tuple(signatures)
    prefilter = prefilter_of(sigs)
    for number, text, cuts in _views(lines):
        for sig in prefilter.candidates(text.lower()):
            if sig.id in found:
                continue
            m = sig.search(text)
            if m is None or (cuts and not any(m.start() < cut < m.end() for cut in cuts)):
                continue
            if sig.compiled_near:
                window = "\n".join([*lines[max(0, number - 1 - NEAR_LINES):number - 1], text])
                if not any(p.search(window) for p in sig.compiled_near):
                    continue
            found[sig.id] = _match(sig, file, file_index, number, text, facts, "signature",
                                   tuple(d for t in tables for d in t.decode(text)))
    # a signature whose ``unless`` another line of the log matches says nothing here (a fallback the log shows
    # was taken: NCCL going on over sockets after "Failed to open libibverbs")
    for key, match in list(found.items()):
        if match.signature.compiled_unless and any(p.search(line) for p in match.signature.compiled_unless
                                                   for line in lines):
            del found[key]
            if moot is not None:
                moot.add(match.line_number)
    # the same line matched by several signatures: keep only the most specific one
    best_per_line: dict[int, Match] = {}
    for match in found.values():
        held = best_per_line.get(match.line_number)
        if held is None or match.signature.weight > held.signature.weight:
            best_per_line[match.line_number] = match
    return list(best_per_line.values())


def _views(lines: list[str]) -> Iterator[tuple[int, str, tuple[int, ...]]]:
    """``(line number, text, cuts)``: every line (no cut), then, in a paste (``JOIN_MAX_LINES`` or fewer lines), the
    joined views of its long lines (``paste.joins``), where a match counts only if it crosses a cut."""
    yield from ((number, line, ()) for number, line in enumerate(lines, start=1))
    if len(lines) <= JOIN_MAX_LINES:
        yield from joins(lines)


def _match(sig: Signature, file: str, file_index: int, number: int, line: str, facts: FileFacts, layer: str,
           decoded: tuple[Decoded, ...] = (), component: str | None = None, family: str | None = None) -> Match:
    return Match(sig, file, file_index, number, line.strip(), timestamp(line), facts.rank_of(line),
                 tuple(decode(line)), layer, facts.host_of(line), number in facts.harmless_lines, decoded,
                 component, family)


def code_matches(lines: list[str], file: str, file_index: int, tables: Iterable[CodeTable],
                 taken: Mapping[int, str | None], facts: FileFacts) -> list[Match]:
    """The codes of the lines outside the error blocks a signature explains (``BLOCK_LINES`` around each line in
    ``taken``: the wrapper ``NCCL error in: ..., internal error`` above NCCL's ``Last error:``, the ``-> 6`` trace
    under a WARN), decoded; each code once per file. ``taken`` maps a signature's line to None (a root cause: its
    block is its own) or to the category of a symptom, whose block holds only codes of that category: a code of
    another category beside a symptom (ssh's own error above mpirun's ``unable to start daemons``) is a candidate."""
    found: dict[tuple[str, str], Match] = {}
    plan = plan_for(tuple(tables))  # the gates: most lines are asked of no table
    blocked: dict[int, set[str | None]] = {}
    for at, category in taken.items():
        for n in range(at - BLOCK_LINES, at + BLOCK_LINES + 1):
            blocked.setdefault(n, set()).add(category)
    for number, line in enumerate(lines, start=1):
        if None in blocked.get(number, ()):
            continue
        decoded = tuple(d for t in plan.asked(line) for d in t.decode(line))
        if not decoded:
            continue
        # several tables read the line (torch.multiprocessing's "terminated with signal SIGKILL": the elastic
        # template, which names nothing, and the signal): the code that names a cause speaks for it
        first = next((d for d in decoded if d.code.root_cause and d.code.category != "unknown"), decoded[0])
        if first.code.category in blocked.get(number, ()):
            continue
        key = (first.table.name, first.code.code)
        if key in found:
            continue
        code = first.code
        sig = Signature(
            f"code.{first.table.name}.{code.code}", code.category, (),
            f"{code.code} ({code.name}): {code.meaning} (decoded from {first.table.name} {first.table.version}; "
            "no signature matched this line)", code.fix, code.checks, first.table.source,
            weight=CODE_WEIGHT if code.root_cause else CODE_WEIGHT // 3, root_cause=code.root_cause)
        found[key] = _match(sig, file, file_index, number, line, facts, "code", decoded)
    return list(found.values())


def family_matches(lines: list[str], file: str, file_index: int, facts: FileFacts) -> list[Match]:
    """The (component, failure family) of the lines that carry one, each once per file; warnings and traceback
    frames are not read."""
    found: dict[tuple[str | None, str], Match] = {}
    for number, line in enumerate(lines, start=1):
        if number in facts.harmless_lines or _NOT_FAMILY.match(line):
            continue
        rec = family_of(line)
        if rec is None or (rec.component, rec.family) in found:
            continue
        who = rec.component or "The log"
        sig = Signature(
            f"family.{_slug(rec.component or 'any')}.{_slug(rec.family)}", rec.category, (),
            f"{who} reported {rec.family}: {rec.meaning}. No signature or code table knows this line; it was "
            "recognised by its keywords.", rec.fix, checks_by_category().get(rec.category, ()), "",
            weight=FAMILY_WEIGHT if rec.root_cause else FAMILY_WEIGHT // 3, root_cause=rec.root_cause)
        found[(rec.component, rec.family)] = _match(sig, file, file_index, number, line, facts, "family",
                                                    component=rec.component, family=rec.family)
    return list(found.values())


def _evidence_matches(per_file: list[tuple[str, list[str], FileFacts]], found: Evidence | None) -> list[Match]:
    """A cause the shape of the logs shows (``preflight.explain.evidence``) as a ``family`` match on its line."""
    if found is None:
        return []
    name, lines, facts = per_file[found.file_index]
    return [_match(found.signature, name, found.file_index, found.line_number, lines[found.line_number - 1], facts,
                   "family", component=found.component, family=found.family)]


def _slug(text: str) -> str:
    """``NET/IB`` -> ``net_ib``, ``link down / transport error`` -> ``link_down_transport_error``."""
    return "_".join(re.findall(r"[a-z0-9]+", text.lower()))


def suspicious(lines: list[str], file: str, limit: int = 5, facts: FileFacts | None = None) -> list[Suspect]:
    """The most suspicious distinct lines of a file (real errors before warnings, most keyword hits first, then
    the latest)."""
    warned = facts.harmless_lines if facts else frozenset()
    scored: dict[str, Suspect] = {}
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        hits = len(SUSPICIOUS.findall(text))
        if hits and (text not in scored or scored[text].score <= hits):
            scored[text] = Suspect(file, number, text, hits, number in warned)
    ranked = sorted(scored.values(), key=lambda s: (s.harmless, -s.score, -s.line_number))
    return ranked[:limit]


def explain_texts(texts: Mapping[str, str], signatures: Iterable[Signature] = CATALOG,
                  tables: Iterable[CodeTable] | None = None, resemble: bool = True) -> Explanation:
    """Explain already-read logs, ``{file name or path: text}`` (one file per rank), in the given order, against
    ``signatures`` (the built-in catalog unless user signatures were merged in) and the code ``tables``
    (``DECODERS`` unless given); ``resemble``: when nothing names a category, the known case the logs resemble."""
    sigs = tuple(signatures)
    decoders = tuple(DECODERS if tables is None else tables)
    files = {name: _uncut(_lines(text)) for name, text in texts.items()}
    result = _explain(files, sigs, decoders)
    if _by_keywords(result) and result.clean is None and sum(len(lines) for lines in files.values()) <= \
            REWRAP_MAX_LINES and any(len(line) >= WRAP_MIN for lines in files.values() for line in lines):
        for sep in ("", " "):  # nothing (or a keyword alone) named a cause: read long lines as cut by a terminal,
            # then by an editor; round 27: a signature or code on the rejoined line beats a keyword on its cut half
            rewrapped = _explain({name: unwrap(lines, sep) for name, lines in files.items()}, sigs, decoders,
                                 read_hang=False)
            if _named(rewrapped) and (not _named(result) or not _by_keywords(rewrapped)):
                return rewrapped
    if resemble and result.clean is None and all(m.signature.category == "unknown" for m in result.matches):
        anchors = [(s.file, s.line_number) for s in result.suspects] + [(m.file, m.line_number) for m in result.matches]
        result.matches = [*_resembling(files, anchors, shows_failure(result)), *result.matches]
        check = None if _named(result) else operator_evidence(list(files.values()))
        if check is not None:  # round 26: an operator's own check that failed (facts read only then)
            per_file = [(name, lines, file_facts(lines, name)) for name, lines in files.items()]
            result.matches, result.suspects = _order([*_evidence_matches(per_file, check), *result.matches]), []
    return result


def _resembling(files: Mapping[str, list[str]], anchors: list[tuple[str, int]], failing: bool) -> list[Match]:
    """Nothing named a category: the known case the logs' words resemble most (``preflight.explain.known_cases``;
    a long log read around the ``anchors``, its suspicious and matched lines), as a ``resembles`` match on the line
    that shares the case's rarest words, or nothing."""
    read: list[str] = []
    for name, lines in files.items():
        read += reading(lines, [number for file, number in anchors if file == name])
    found = resemblance(read, MIN_SIMILARITY if failing else QUIET_MIN_SIMILARITY)
    if found is None:
        return []
    shared = set(found.shared)
    index, name, number = max(((i, n, k) for i, (n, lines) in enumerate(files.items())
                               for k, line in enumerate(lines, start=1) if line.strip()),
                              key=lambda at: (len(shared & words(files[at[1]][at[2] - 1])), -at[0], -at[2]))
    case = found.case
    sig = Signature(
        f"resembles.{_slug(found.category)}", found.category, (),
        "Nothing named a cause (no signature, code or failure family with a category). The log's words are "
        f"closest ({found.similarity:.2f} alike; shared: {', '.join(found.shared)}) to a known case whose cause was "
        f"{found.category}: compare it with that thread before acting; this is a lead, not a diagnosis.",
        "Read the known case's thread and its fix; run the checks below to confirm or rule it out on the hosts.",
        checks_by_category().get(found.category, ()), case.source, weight=FAMILY_WEIGHT // 3)
    lines = files[name]
    return [_match(sig, name, index, number, lines[number - 1], file_facts(lines, name), "resembles")]


def _uncut(lines: list[str]) -> list[str]:
    """A log a terminal cut at its width (tmux, screen, a console capture), its lines whole again."""
    width = terminal_width(lines)
    return lines if width is None else uncut(lines, width)


def shows_failure(result: Explanation) -> bool:
    """Whether the logs show a failure at all: a line a table decoded or a suspicious line (error, exception, timeout,
    refused...) that is not a harmless warning. A log without one (a hang, or a healthy NCCL INFO listing, which shares
    words with known cases of its own) must resemble a case more closely (round 24: ``QUIET_MIN_SIMILARITY``)."""
    return any(not m.harmless for m in result.matches) or any(not s.harmless for s in result.suspects)


def _by_keywords(result: Explanation) -> bool:
    """Every real cause named is a keyword family's (no signature or code named one); true when none is named."""
    return all(m.layer == "family" for m in result.matches
               if m.signature.root_cause and not m.harmless and not names_nothing(m))


def _named(result: Explanation) -> bool:
    """A real cause came first: a root cause on a line that is not a harmless warning, that names something."""
    return any(m.signature.root_cause and not m.harmless and not names_nothing(m) for m in result.matches)


def _explain(files: Mapping[str, list[str]], sigs: tuple[Signature, ...], decoders: tuple[CodeTable, ...],
             read_hang: bool = True) -> Explanation:
    """The matches of the logs as given (``read_hang``: also the shape of a silent hang, which only the lines as
    printed show: a view with long lines joined has lost some)."""
    result = Explanation(files=list(files))
    found: list[Match] = []
    per_file: list[tuple[str, list[str], FileFacts]] = []
    for index, (name, lines) in enumerate(files.items()):
        facts = file_facts(lines, name)
        per_file.append((name, lines, facts))
        moot: set[int] = set()
        matched = match_lines(lines, name, index, sigs, facts, decoders, moot)
        found.extend(matched)
        if decoders:
            explained = {m.line_number: None if m.signature.root_cause else m.signature.category
                         for m in matched if not m.harmless}
            found.extend(m for m in code_matches(lines, name, index, decoders, explained, facts)
                         if m.line_number not in moot)
    if not any(not m.harmless and not names_nothing(m) and m.signature.root_cause for m in found):
        for index, (name, lines, facts) in enumerate(per_file):
            found.extend(family_matches(lines, name, index, facts))
    result.matches = _order(found)
    if not _named(result):
        harmless = [facts.harmless_lines for _, _, facts in per_file]
        result.clean = finished_cleanly([lines for _, lines, _ in per_file], harmless)
        if result.clean is None:  # an NCCL INFO line an editor wrapped: its tail is no line of its own
            result.clean = finished_cleanly([unwrap(lines, " ", records=True) for _, lines, _ in per_file], harmless)
        if result.clean is not None:
            result.notes, result.matches = result.matches, []
            return result
        texts = [lines for _, lines, _ in per_file]
        if read_hang and not any(m.signature.root_cause and not m.harmless for m in result.matches):
            # round 25: collectives that differ across ranks explain a hang before the hang's own reading
            shape = collective_evidence(texts) or hang_evidence(texts)
            result.matches = _order([*result.matches, *_evidence_matches(per_file, shape)])
        if not _named(result):
            failing = any(not m.harmless for m in result.matches)
            result.matches = _order([*result.matches,
                                     *_evidence_matches(per_file, interface_evidence(texts, failing))])
        if not _named(result):  # round 23: a launch mistake the logs' shape shows
            result.matches = _order([*result.matches, *_evidence_matches(per_file, launch_evidence(texts))])
    if not result.matches:
        suspects = [s for name, lines, facts in per_file for s in suspicious(lines, name, facts=facts)]
        result.suspects = sorted(suspects, key=lambda s: (s.harmless, -s.score))[:10]
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
