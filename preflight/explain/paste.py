"""A log as users paste it: terminal colours, HTML-escaped quotes, long lines wrapped by a terminal or a forum.

``normalize`` drops what no log line means (ANSI colour and cursor sequences; HTML entities, which a forum or a bug
tracker's export writes for ``"``, ``'``, ``<``, ``>`` and ``&``), reads full-width punctuation as ASCII (a Chinese
input method's ``：`` and ``，``), reads a line pasted percent-encoded (copied out of a URL, a search link or a web
form: ``undefined%20symbol%3A%20ncclCommRegister``) and opens a log kept inside a JSON string (torchrun's error
file, a Kubernetes event, a job status: one line, its newlines escaped). ``joins`` gives the views of a wrapped
line: a long line with the one or two lines after it, joined as a terminal cuts (at a column, mid-word: joined with
nothing) and as an editor wraps (at a space: joined with one); ``matcher`` tries a signature on them only where a
match crosses the cut, so nothing a single line says is counted twice. ``unwrap`` is the last resort of a log in
which nothing named a cause: every long line joined with the lines it may have been cut into (the line numbers kept:
a joined line's continuation lines are left empty).

>>> [len(line) for line in unwrap(["a" * 60, "b" * 60, "c", "", "short", "x"], "")]
[121, 0, 0, 0, 5, 1]
>>> normalize("\\x1b[1;31mRuntimeError\\x1b[0m: NCCL error: &#39;unhandled system error&#39;")
"RuntimeError: NCCL error: 'unhandled system error'"
>>> normalize("RuntimeError\uff1a CUDA out of memory\uff0c \u8bad\u7ec3\u5931\u8d25")
'RuntimeError: CUDA out of memory, \u8bad\u7ec3\u5931\u8d25'

>>> [(n, text, cuts) for n, text, cuts in joins(["x" * 58 + " Connection re", "fused", "next"])][:2]
[(1, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx Connection refused', (72,)), \
(1, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx Connection re fused', (73,))]
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from urllib.parse import unquote

WRAP_MIN = 60  # a line this long may have been wrapped: terminals are 80 columns or more, forums wider
# round 40: an editor's or git's wrap at 72 columns leaves a shorter line when the next word did not fit (a commit
# message's "...require setting the environment variable" before "CUDA_DEVICE_MAX_CONNECTIONS to 1")
WRAP_WIDTH = 72
WRAP_SHORT_MIN = 40
RECORD_MAX = 4096  # unwrap joins no more onto a line this long: one record, not a whole log of long lines
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_JSON_ESCAPE = re.compile(r"\\(?:[nt\"\\/]|u[0-9a-fA-F]{4})")
_ESCAPES = {"\\n": "\n", "\\t": "\t", '\\"': '"', "\\\\": "\\", "\\/": "/"}
_ENTITY = re.compile(r"&(?:quot|apos|lt|gt|amp|nbsp|#\d{2,5}|#x[0-9a-fA-F]{2,4});")
# a percent-encoded space, colon, slash, quote, comma or bracket: a line carrying two of them was URL-encoded
# (a log line never prints them so; a printf width such as "%20s" is not followed by those pairs twice)
# full-width forms (U+FF01-U+FF5E) and the ideographic space, as a Chinese input method types them into a log or a
# paste ("RuntimeError： CUDA out of memory", "ProcessGroupNCCL.cpp:1970， unhandled system error"): read as ASCII
_FULLWIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_HAS_FULLWIDTH = re.compile("[\uff01-\uff5e\u3000]")
_PERCENT = re.compile(r"%(?:20|3[aAdD]|2[cCfF2789])")


def normalize(text: str) -> str:
    """The text without ANSI escape sequences, with HTML entities read where the text carries any, and with the
    escaped newlines of a log kept inside a JSON string (two or more ``\\n`` on one line) turned into lines."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    if _HAS_FULLWIDTH.search(text):
        text = text.translate(_FULLWIDTH)
    if "%" in text and _PERCENT.search(text):
        text = "\n".join(_decoded(line) for line in text.split("\n"))
    if "\\n" in text:
        text = "\n".join(_unescape(line) if line.count("\\n") >= 2 else line for line in text.split("\n"))
    return text


def _decoded(line: str) -> str:
    """The line percent-decoded when it carries two or more encoded separators; else as it is.

    >>> _decoded("libtorch_cuda.so:%20undefined%20symbol:%20ncclCommRegister")
    'libtorch_cuda.so: undefined symbol: ncclCommRegister'
    >>> _decoded("progress 100%20 done"), _decoded("width %20s %-20s")
    ('progress 100%20 done', 'width %20s %-20s')
    """
    return unquote(line) if len(_PERCENT.findall(line)) >= 2 else line


def _unescape(line: str) -> str:
    """A JSON string's escapes read (``\\n``, ``\\t``, ``\\"``, ``\\\\``, ``\\uXXXX``); others kept.

    >>> print(_unescape('{"message": "RuntimeError: x\\n  File \\"a.py\\"\\n\\u4e2d"}'))
    {"message": "RuntimeError: x
      File "a.py"
    中"}
    """
    return _JSON_ESCAPE.sub(lambda m: _ESCAPES.get(m[0]) or chr(int(m[0][2:], 16)), line)


def joins(lines: Sequence[str]) -> Iterator[tuple[int, str, tuple[int, ...]]]:
    """``(line number, joined text, the cuts a match must cross)`` for each long line (``WRAP_MIN`` characters or
    more) and the line after it (then the one after that too, when the second is long as well): joined with
    nothing (a terminal's cut) and with a space (an editor's wrap at a space). The cuts are the offsets in the
    joined text where a line ended; a match of the two-line view must cross the first, of the three-line view
    the second (crossing only the first, the two-line view had it)."""
    for index in range(len(lines) - 1):
        first, second = lines[index], lines[index + 1]
        if not wrapped(first, second) or not second.strip():
            continue
        third = lines[index + 2] if index + 2 < len(lines) and wrapped(second, lines[index + 2]) else ""
        for sep in ("", " "):
            joined, cut = _join(first, second, sep)
            yield index + 1, joined, (cut,)
            if third.strip():
                more, cut = _join(joined, third, sep)
                yield index + 1, more, (cut,)


def wrapped(line: str, following: str) -> bool:
    """Whether ``line`` may have been wrapped before ``following``: it is long (``WRAP_MIN``), or it is at least
    ``WRAP_SHORT_MIN`` long and the next line's first word would not have fitted in ``WRAP_WIDTH`` columns.

    >>> wrapped("AssertionError: Using tensor model parallelism or context", "parallelism require")
    False
    >>> wrapped("parallelism require setting the environment variable", "CUDA_DEVICE_MAX_CONNECTIONS to 1")
    True
    """
    if len(line) >= WRAP_MIN:
        return True
    words = following.split()
    return len(line) >= WRAP_SHORT_MIN and bool(words) and len(line.rstrip()) + 1 + len(words[0]) > WRAP_WIDTH


def _join(head: str, tail: str, sep: str) -> tuple[str, int]:
    """``head`` and ``tail`` as one line, and where ``tail`` starts in it: a terminal's cut (``sep`` empty) as they
    are, an editor's wrap with the spaces around the break made one ``sep``.

    >>> _join("a b ", " c", " "), _join("a b", "c", "")
    (('a b c', 4), ('a bc', 3))
    """
    if not sep:
        return head + tail, len(head)
    head = head.rstrip() + sep
    return head + tail.lstrip(), len(head)


# A line that starts a record of its own (a bracket, a date, a traceback, an exception, NCCL's host:pid:tid [dev],
# glog's I0123): never the tail of a wrapped line when ``records`` is kept
_RECORD_START = re.compile(r"^\s*(?:\[|\d{4}[-/]\d\d|Traceback\b|[A-Z]\w*(?:Error|Exception|Warning)\b|"
                           r"[\w.-]+:\d+:\d+ \[\d+\]|[EWIF]\d{4} )")


def unwrap(lines: Sequence[str], sep: str, records: bool = False) -> list[str]:
    """``lines`` with each long line (``WRAP_MIN`` or more, or ``wrapped`` before the next) joined by ``sep`` with
    the non-empty lines after it, as long as the line before was long too (with ``records``, not a line that starts
    a record of its own); the lines taken in are left empty, so every line keeps its number.

    >>> unwrap(["x" * 60 + " NCCL INFO Init", "COMPLETE", "x" * 60, "RuntimeError: boom"], " ", records=True)[:2]
    ['xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx NCCL INFO Init COMPLETE', '']
    >>> unwrap(["x" * 60, "RuntimeError: boom"], " ", records=True)
    ['xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'RuntimeError: boom']
    """
    out = list(lines)
    index = 0
    while index < len(out):
        start, joined = index, out[index]
        while index + 1 < len(out) and wrapped(lines[index], out[index + 1]) and out[index + 1].strip() and not (
                records and _RECORD_START.match(out[index + 1])) and len(joined) < RECORD_MAX:
            index += 1
            joined = _join(joined, out[index], sep)[0]
            out[index] = ""
        out[start] = joined
        index += 1
    return out


def terminal_width(lines: Sequence[str]) -> int | None:
    """The column a terminal cut the log's lines at, when it looks cut: three or more different lines of exactly
    the longest length (60 or more) each followed by a line. None otherwise.

    >>> terminal_width(["a" * 80, "b", "c" * 80, "d", "e" * 80, "f", "short"]), terminal_width(["a" * 80, "b"])
    (80, None)
    """
    width = max((len(line) for line in lines), default=0)
    if width < WRAP_MIN:
        return None
    cut = {line for index, line in enumerate(lines[:-1]) if len(line) == width and lines[index + 1].strip()}
    return width if len(cut) >= 3 else None


def uncut(lines: Sequence[str], width: int) -> list[str]:
    """``lines`` with each run of lines exactly ``width`` long joined with the line that ends it, the lines taken
    in left empty (line numbers kept).

    >>> uncut(["a" * 4, "bb", "cccc", "dddd", "e", "f"], 4)
    ['aaaabb', '', 'ccccdddde', '', '', 'f']
    """
    out = list(lines)
    index = 0
    while index < len(out):
        start, joined = index, out[index]
        while len(lines[index]) == width and index + 1 < len(out):
            index += 1
            joined += out[index]
            out[index] = ""
        out[start] = joined
        index += 1
    return out
