"""Tolerant forms of signature regexes: the same wording in another case, spacing or punctuation.

A signature's pattern is written from one version's text (``NET/IB : Got completion``); the same message in
another version or a user's paste can differ in case (``connection Reset by peer``), spacing (``NET/IB: Got``,
a tab, a doubled space), sentence punctuation (``errno 98 -`` for ``errno: 98 -``), quotes (``"`` / ``'`` /
a backtick / curly quotes) and ``-`` / ``_`` between words (``--local_rank`` / ``--local-rank``). ``tolerant``
rewrites a pattern's *literal* text only (classes, groups, quantifiers and escapes like ``\\d`` are kept), and
the result is compiled with ``re.IGNORECASE``. Nothing is made optional that carries a word, so a tolerant
pattern matches no line whose words differ from the original's.

>>> p = compile_tolerant(r"NET/IB : Got completion from peer \\S+ with error \\d+")
>>> bool(p.search("net/ib: got  completion from peer 10.0.0.2<4791> with error 12"))
True
>>> bool(compile_tolerant(r"Cuda failure 'out of memory'").search('cuda failure "out of memory"'))
True
>>> bool(compile_tolerant(r"errno: 98 - Address already in use").search("errno 98 - address already in use"))
True
>>> bool(compile_tolerant(r"errno: 98 - Address already in use").search("errno: 99 - Address already in use"))
False
"""

from __future__ import annotations

import re

_QUANT = re.compile(r"[*+?]|\{\d*(?:,\d*)?\}")
_CLASS_ESCAPES = set("dDwWsSbBAZ")
_QUOTES = "'\"`\u2018\u2019\u201c\u201d"
_QUOTE_CLASS = "['\"`\u2018\u2019\u201c\u201d]"
_SENTENCE = ".:;,!"
_SENTENCE_CLASS = r"[.:;,!]"


class _Token:
    """One piece of a regex: a literal character (``literal`` set) or regex syntax kept verbatim."""

    __slots__ = ("text", "literal", "quantified")

    def __init__(self, text: str, literal: str | None = None) -> None:
        self.text = text  # the source text, verbatim
        self.literal = literal  # the character it matches, for literal tokens
        self.quantified = False  # followed by a quantifier (then it is kept as written)

    def wordy(self) -> bool:
        """Not a literal punctuation character: a word character, or syntax (``\\d``, a class, a group...)."""
        if self.literal is not None:
            return self.literal.isalnum() or self.literal == "_"
        return True


def _group_open(pattern: str, i: int) -> int:
    """The end (exclusive) of the group opener starting at ``pattern[i] == '('``."""
    if not pattern.startswith("(?", i):
        return i + 1
    if pattern.startswith(("(?<=", "(?<!"), i):
        return i + 4
    if pattern.startswith("(?P<", i):
        end = pattern.find(">", i)
        return end + 1 if end > 0 else len(pattern)
    if pattern.startswith(("(?:", "(?=", "(?!", "(?>"), i):
        return i + 3
    if pattern.startswith(("(?P=", "(?#"), i) or re.match(r"\(\?[aiLmsux]+\)", pattern[i:]):
        end = pattern.find(")", i)
        return end + 1 if end > 0 else len(pattern)
    m = re.match(r"\(\?[aiLmsux-]+:", pattern[i:])
    return i + (m.end() if m else 2)


def _class_end(pattern: str, i: int) -> int:
    """The end (exclusive) of the character class starting at ``pattern[i] == '['``."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return min(j + 1, len(pattern))


def _tokens(pattern: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        quant = _QUANT.match(pattern, i)
        if quant and out:
            end = quant.end() + (1 if quant.end() < len(pattern) and pattern[quant.end()] in "?+" else 0)
            out.append(_Token(pattern[i:end]))
            out[-2].quantified = True
            i = end
        elif ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            literal = None if nxt in _CLASS_ESCAPES or nxt.isalnum() else nxt
            out.append(_Token(pattern[i:i + 2], literal))
            i += 2
        elif ch == "[":
            end = _class_end(pattern, i)
            out.append(_Token(pattern[i:end]))
            i = end
        elif ch == "(":
            end = _group_open(pattern, i)
            out.append(_Token(pattern[i:end]))
            i = end
        elif ch in ")|^$.":
            out.append(_Token(ch))
            i += 1
        else:
            out.append(_Token(ch, ch))
            i += 1
    return out


def _is_space(token: _Token | None) -> bool:
    return token is not None and token.literal is not None and token.literal.isspace() and not token.quantified


def tolerant(pattern: str) -> str:
    """``pattern`` with its literal spaces, quotes, sentence punctuation and word-joining ``-``/``_`` loosened.

    >>> tolerant(r"Net : Connection closed")
    'Net\\\\s*:\\\\s*Connection\\\\s+closed'
    >>> tolerant(r"local-rank=\\d+")
    'local[-_ ]rank=\\\\d+'
    """
    tokens = _tokens(pattern)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if _is_space(tok):
            j = i
            while j < len(tokens) and _is_space(tokens[j]):
                j += 1
            before = tokens[i - 1] if i else None
            after = tokens[j] if j < len(tokens) else None
            both_words = (before is None or before.wordy()) and (after is None or after.wordy())
            out.append(r"\s+" if both_words else r"\s*")
            i = j
            continue
        out.append(_loosen(tokens, i))
        i += 1
    return "".join(out)


def _loosen(tokens: list[_Token], i: int) -> str:
    """One token's tolerant text."""
    tok = tokens[i]
    if tok.literal is None or tok.quantified:
        return tok.text
    ch = tok.literal
    before = tokens[i - 1] if i else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if ch in _QUOTES:
        return _QUOTE_CLASS
    if ch in "-_" and before is not None and after is not None and before.literal is not None \
            and after.literal is not None and before.wordy() and after.wordy():
        return "[-_ ]"
    if ch in _SENTENCE and before is not None and before.literal is not None and before.wordy() \
            and (after is None or _is_space(after)):
        return _SENTENCE_CLASS + "?"  # "errno: 98" / "errno 98", "memory. Tried" / "memory, Tried"
    return re.escape(ch)


def anchor(pattern: str) -> str | None:
    """The longest run of letters and digits that every match of ``pattern`` (and of its tolerant form)
    contains, lowercased; None when the pattern has no such run (a top-level ``|``, no literal word).
    A line whose lowercase text lacks it cannot match, which makes one cheap prefilter for many patterns.

    >>> anchor(r"NET/IB : Got completion from peer \\S+"), anchor(r"a|b"), anchor(r"(?:x|y) zz?")
    ('completion', None, 'z')
    """
    depth = 0
    best = run = ""
    for tok in _tokens(pattern):
        if tok.text == "|" and depth == 0:
            return None
        if tok.text.startswith("("):
            depth += 1
        elif tok.text == ")":
            depth = max(0, depth - 1)
        if depth == 0 and tok.literal is not None and tok.literal.isalnum() and not tok.quantified:
            run += tok.literal
        else:
            run = ""
        if len(run) > len(best):
            best = run
    return best.lower() or None


def anchors_of(pattern: str) -> tuple[str, ...] | None:
    """Anchors of ``pattern``'s top-level alternatives, a line that contains none of which cannot match: each
    alternative's own ``anchor``, or, for one without, the anchors of the first group it cannot match without
    (every alternative of that group anchored); None when an alternative has neither.

    >>> anchors_of(r"out of memory|\\bOOM\\b|Unable to allocate \\d"), anchors_of(r"a|\\d+")
    (('memory', 'oom', 'allocate'), None)
    >>> anchors_of(r"\\b(?:Override|MissingValue)\\b|[a-z]+ (?:==|>=) \\d+ (?:is required|but got)")
    ('override', 'missingvalue', 'required', 'but')
    """
    found: list[str] = []
    for part in _alternatives(pattern):
        word = anchor(part)
        if word is not None:
            found.append(word)
            continue
        inner = next((words for words in map(anchors_of, _required_groups(part)) if words is not None), None)
        if inner is None:
            return None
        found += inner
    return tuple(found)


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|``."""
    parts: list[str] = []
    depth, start, position = 0, 0, 0
    for tok in _tokens(pattern):
        if tok.text.startswith("("):
            depth += 1
        elif tok.text == ")":
            depth = max(0, depth - 1)
        elif tok.text == "|" and depth == 0:
            parts.append(pattern[start:position])
            start = position + 1
        position += len(tok.text)
    parts.append(pattern[start:])
    return parts


def _required_groups(part: str) -> list[str]:
    """The contents of ``part``'s top-level groups every match goes through: not quantified, not a lookaround."""
    groups: list[str] = []
    depth, position, opened, inner_start = 0, 0, "", 0
    for tok in _tokens(part):
        position += len(tok.text)
        if tok.text.startswith("("):
            if depth == 0:
                opened, inner_start = tok.text, position
            depth += 1
        elif tok.text == ")" and depth > 0:
            depth -= 1
            if depth == 0 and not tok.quantified and not opened.startswith(("(?=", "(?!", "(?<")):
                groups.append(part[inner_start:position - 1])
    return groups


def compile_tolerant(pattern: str) -> re.Pattern[str]:
    """The tolerant form compiled case-insensitively; the pattern itself (case-insensitive) when its tolerant
    form does not compile."""
    try:
        return re.compile(tolerant(pattern), re.IGNORECASE)
    except re.error:
        return re.compile(pattern, re.IGNORECASE)
