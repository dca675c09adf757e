"""Which signatures a line is worth trying against: the catalog indexed by its anchors (``tolerant.anchor``: a word
every match of a signature contains), found with one trie regex (``wordtrie``) per line.

>>> from preflight.explain.catalog import CATALOG
>>> pre = prefilter_of(tuple(CATALOG))
>>> len(list(pre.candidates("epoch 3 step 100 loss=0.12"))) <= len(pre.always)
True
>>> any(s.category == "firewall" for s in pre.candidates("ncclsystemerror: connection refused"))
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from preflight.explain.catalog import Signature
from preflight.explain.tolerant import anchor
from preflight.explain.wordtrie import trie_pattern


@dataclass(frozen=True)
class Prefilter:
    """The signatures indexed by their anchors (a word every match contains, ``tolerant.anchor``)."""

    anchors: re.Pattern[str] | None  # one alternation of every anchor
    always: tuple[Signature, ...]  # the few signatures without an anchor, tried on every line
    words: tuple[str, ...]  # every anchor
    by_word: Mapping[str, frozenset[int]]  # anchor -> the signatures (catalog positions) it keys
    unkeyed: frozenset[int]  # the positions of ``always``
    signatures: tuple[Signature, ...]

    def candidates(self, low: str) -> Iterable[Signature]:
        """The signatures worth trying on a lowercased line, in catalog order."""
        if self.anchors is None or not self.anchors.search(low):
            return self.always
        chosen = set(self.unkeyed)
        for word in self.words:
            if word in low:
                chosen |= self.by_word[word]
        return [self.signatures[i] for i in sorted(chosen)]


@functools.lru_cache(maxsize=8)
def prefilter_of(signatures: tuple[Signature, ...]) -> Prefilter:
    """One alternation of the signatures' anchors searched in the lowercased line: lines without any are only tried
    against the few signatures without an anchor (the prefilter makes big logs 10-50x faster); a line with one is
    tried against the signatures one of whose anchors it contains (and those without), in catalog order."""
    always: list[Signature] = []
    unkeyed: set[int] = set()
    by_word: dict[str, set[int]] = {}
    for position, sig in enumerate(signatures):
        words = [anchor(p) for p in sig.patterns]
        if any(w is None for w in words):
            always.append(sig)
            unkeyed.add(position)
            continue
        for word in words:
            if word:
                by_word.setdefault(word, set()).add(position)
    ordered = sorted(by_word, key=lambda w: (-len(w), w))
    return Prefilter(re.compile(trie_pattern(ordered)) if ordered else None, tuple(always),
                      tuple(ordered), {w: frozenset(p) for w, p in by_word.items()}, frozenset(unkeyed), signatures)
