"""Code tables keyed by message templates: the launchers' and torch.distributed's own texts, matched tolerantly.

torch.distributed, gloo and the launchers have no numeric codes: what identifies a failure is the text they print
(``The client socket has timed out after {} while trying to connect to ({}, {}).``). Each such table is a list of
:class:`Row` s, one per failure, each with the wordings several versions printed (newest first: the first is the
key). A line and a template are compared after :func:`normalize`: case, quotes, runs of blanks and punctuation do
not matter (``DistNetworkError:`` / ``distnetworkerror -``), and each ``{}`` (or a printf ``%s`` / ``%d`` / ``%lu``)
stands for whatever the log has there; ``{addr}`` only for a numeric address and port (``[10.0.0.2]:5612``,
``[::ffff:10.0.0.2]``), where any words would be too loose. Every word of the template must be there, in order.

>>> t = build("demo", "https://example.org", "1.0", (
...     Row("store: client timeout", "master-unreachable", "the store did not answer", "fix it",
...         ("The client socket has timed out after {} while trying to connect to ({}, {}).",)),))
>>> t.find("torch.distributed.DistNetworkError: the client socket has  TIMED OUT after 60s while trying to "
...        "connect to (node-0, 29500)")
['the client socket has timed out after {} while trying to connect to {} {}']
>>> t.find("The client socket has failed to connect")
[]
>>> g = build("demo", "https://example.org", "1.0", (Row("refused", "firewall", "m", "f",
...     ("connect [{addr}]:{addr}: Connection refused",)),))
>>> g.find("connect [10.0.0.2]:3210: Connection refused"), g.find("ssh: connect to host a port 22: Connection refused")
(['connect {} {} connection refused'], [])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from preflight.explain.decode import Code, CodeTable, Gate

_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[sdiuxXpmfgc]")
_ADDR = "(?: (?:[0-9]+|[0-9a-f]{1,4}))+ ?"  # a normalized numeric address: numbers and IPv6 hex groups
_QUOTES = re.compile("['\"`\u2018\u2019\u201c\u201d]")
_NOT_WORD = re.compile(r"[^a-z0-9]+")
# An environment variable's name is one word: torch prints its settings at start-up (``TORCH_NCCL_WAIT_TIMEOUT_DUMP_
# MILSEC: 15000``), and split at ``_`` such a name would read as a failure's words (``wait timeout``).
_ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")

# The checks that verify each category on the hosts (a row may name its own).
CHECKS: dict[str, tuple[str, ...]] = {
    "port-in-use": ("ports.listening",), "privileged-port": ("ports.listening",),
    "master-unreachable": ("net.master_resolution", "net.reachability", "firewall.rules"),
    "name-resolution": ("net.master_resolution", "net.hostname"), "hostname-loopback": ("net.hostname",),
    "wrong-interface": ("net.interface",), "address-family": ("net.address_family", "net.interface"),
    "firewall": ("firewall.rules", "net.reachability"), "rendezvous": ("net.reachability", "firewall.rules"),
    "store-timeout": ("net.reachability",), "fabric": ("net.reachability", "allreduce"), "shm": ("os.shm",),
    "oom": ("os.memory",), "ssh": ("os",), "driver": ("gpu.devices.driver",), "open-files": ("os.files",),
    "version-mismatch": ("versions",), "device-mapping": ("gpu.devices.count",),
}


@dataclass(frozen=True)
class Row:
    """One failure of a template table: its wordings (newest first), category, fix and whether it is a cause."""

    name: str
    category: str
    meaning: str
    fix: str
    templates: tuple[str, ...]
    root_cause: bool = True
    checks: tuple[str, ...] | None = None  # None: the category's (``CHECKS``)


@lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """Lower case, quotes dropped, every run of other punctuation or blanks one space.

    >>> normalize("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 ...")
    'torch distributed diststoreerror timed out after 901 seconds waiting for clients 1 2'
    >>> normalize("Hostfile doesn't exist")
    'hostfile doesnt exist'
    >>> normalize("environments: TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC: 15000, TORCH_NCCL_BLOCKING_WAIT: 0")
    'environments torchncclwaittimeoutdumpmilsec 15000 torchncclblockingwait 0'
    """
    if "_" in text:
        text = _ENV_NAME.sub(lambda m: m.group().replace("_", ""), text)
    return _NOT_WORD.sub(" ", _QUOTES.sub("", text.lower())).strip()


def _pieces(template: str) -> list[str]:
    """The template's literal text between placeholders, normalized, empty pieces left out."""
    return [p for p in (normalize(piece) for piece in _PLACEHOLDER.split(template)) if p]


def key(template: str) -> str:
    """A template's table key: its normalized text, ``{}`` where the log has a value.

    >>> key("exited on signal %d (%s).")
    'exited on signal {} {}'
    """
    parts = [normalize(piece) for piece in _PLACEHOLDER.split(template)]
    return re.sub(" +", " ", " {} ".join(parts)).strip()


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    anchor: str  # its longest literal piece: a cheap test before the regex
    weight: tuple[int, int]  # literal words, then characters: the more, the more specific
    key: str


def _pattern(template: str, row_key: str) -> _Pattern:
    pieces = _pieces(template)
    if not pieces:
        raise ValueError(f"template without text: {template!r}")
    # A value may be glued to the text (``{}ms``): between pieces anything goes; at the ends, whole words
    # unless the template starts or ends with a value.
    stripped = template.strip(" .")
    head = "" if _PLACEHOLDER.match(stripped) else "(?<![a-z0-9])"
    tail = "" if re.search(rf"(?:{_PLACEHOLDER.pattern})$", stripped) else "(?![a-z0-9])"
    body, at = "", 0
    for m in _PLACEHOLDER.finditer(template):
        piece = normalize(template[at:m.start()])
        if piece:
            body += re.escape(piece)
        if body:  # a value before the first piece is not matched at all
            body += _ADDR if m[0] == "{addr}" else ".*?"
        at = m.end()
    last = normalize(template[at:])
    body = body + re.escape(last) if last else re.sub(r"(?:\.\*\?)+$", "", body)
    regex = re.compile(head + body + tail)
    weight = (sum(p.count(" ") + 1 for p in pieces), sum(len(p) for p in pieces))
    return _Pattern(regex, max(pieces, key=len), weight, row_key)


# A line an Ascend module logged (``[ERROR] HCCL(pid,python):...``): torch's own tables (c10d, torch_elastic, gloo)
# read none (HCCL's "get socket timeout" is its link setup timing out, not c10d's store "Socket Timeout"; round 10)
ASCEND_MODULE_LINE = re.compile(r"\[(?:ERROR|WARNING|INFO|EVENT|DEBUG)\]\s*(?:HCCL|HCCP|RUNTIME|GE|TBE|DRV|ASCENDCL|"
                                r"APP|TDT|AICPU|FE|PROFILING)\(\d+")


def build(name: str, source: str, version: str, rows: tuple[Row, ...],
          foreign: re.Pattern[str] | None = None, required: tuple[str, ...] = ()) -> CodeTable:
    """The code table of ``rows``: each keyed by its first template, found by any of its templates, in no line that
    ``foreign`` matches (another program's log line that shares the words) and, when ``required`` names lower-case
    markers, only in a line that contains one of them (they are then the table's gate, in place of its words)."""
    entries: dict[str, Code] = {}
    patterns: list[_Pattern] = []
    for row in rows:
        row_key = key(row.templates[0])
        if row_key in entries:
            raise ValueError(f"{name}: two rows with the key {row_key!r}")
        checks = CHECKS.get(row.category, ()) if row.checks is None else row.checks
        entries[row_key] = Code(row_key, row.name, row.meaning, row.category, row.fix, checks, row.root_cause)
        patterns += [_pattern(template, row_key) for template in row.templates]
    patterns.sort(key=lambda p: p.weight, reverse=True)
    # Most log lines carry none of the table's anchors: one scan for any of them first (a 150,000-line log
    # spent most of its time testing every anchor of every table on every line).
    anchors = re.compile("|".join(re.escape(a) for a in sorted({p.anchor for p in patterns}, key=len, reverse=True)))

    def find(line: str) -> list[str]:
        """The rows a line carries, the most specific first, each once."""
        norm = normalize(line)
        if not anchors.search(norm) or (foreign is not None and foreign.search(line)):
            return []
        if required and not any(marker in line.lower() for marker in required):
            return []
        out: list[str] = []
        for p in patterns:
            if p.key not in out and p.anchor in norm and p.regex.search(norm):
                out.append(p.key)
        return out

    gate = Gate(required) if required else _gate(row.templates for row in rows)
    return CodeTable(name, source, version, entries, find, gate)


def _whole_words(template: str) -> list[str]:
    """The words of a template's text that its regex matches as whole words of the normalized line: inside a piece,
    or at the template's own start / end (a value glued to a piece, ``{}ms``, leaves that edge word partial)."""
    stripped = template.strip(" .")
    head = not _PLACEHOLDER.match(stripped)
    tail = not re.search(rf"(?:{_PLACEHOLDER.pattern})$", stripped)
    pieces = [p.split() for p in _pieces(template)]
    return [word for i, words in enumerate(pieces) for j, word in enumerate(words)
            if (j > 0 or (i == 0 and head)) and (j < len(words) - 1 or (i == len(pieces) - 1 and tail))]


_GATE_WORD = 7  # a shorter word ("only", "model", "nccl") is on too many healthy lines to gate a table by
# Long words on most lines of a healthy distributed log (NCCL INFO's channels, torchrun's notices, progress lines)
_COMMON_LOG_WORDS = frozenset({"channel", "channels", "environment", "variable", "process", "processes", "training",
                               "iteration", "default", "setting", "loading", "initialized", "connected", "version"})


def _gate(wordings: Iterable[tuple[str, ...]]) -> Gate:
    """A template table's gate: for each wording its longest whole word when that is a rare one (``_GATE_WORD``
    letters or more, not one of ``_COMMON_LOG_WORDS``), else its longest piece (a phrase: ``only one of``, not the
    word ``only``)."""
    words: set[str] = set()
    pieces: set[str] = set()
    for template in (t for templates in wordings for t in templates):
        whole = [w for w in _whole_words(template) if w not in _COMMON_LOG_WORDS]
        longest = max(whole, key=len) if whole else ""
        if len(longest) >= _GATE_WORD:
            words.add(longest)
        else:
            pieces.add(max(_pieces(template), key=len))
    return Gate(markers=tuple(sorted(pieces)), words=frozenset(words), normalized=True)
