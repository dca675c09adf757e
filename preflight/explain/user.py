"""User signatures: ``~/.config/preflight/signatures.yaml`` and ``--signatures FILE`` add catalog entries or
override built-in ones (same ``id``); every error names the file and line.

A file is a ``signatures:`` list of entries::

    signatures:
      - id: site.xid13                      # a built-in id overrides that entry
        category: driver                    # from the fixed vocabulary (signature.CATEGORIES)
        pattern: 'NVRM: Xid \\(PCI:\\S+\\): 13,'   # a Python regex (or ``patterns:`` a list of them)
        meaning: Graphics engine exception: a bad kernel or failing GPU.
        remedy: Drain the node and run the GPU diagnostics.
        verify: [gpu.devices]               # optional: checks `preflight run --checks` accepts
        symptom: false                      # optional: true ranks it after root causes
        weight: 70                          # optional: specificity among root causes (default 75)

>>> sigs = parse_signatures("signatures:\\n  - id: a.b\\n    category: oom\\n    pattern: boom\\n"
...                         "    meaning: m\\n    remedy: r\\n", "s.yaml")
>>> (sigs[0].id, sigs[0].category, sigs[0].source)
('a.b', 'oom', 's.yaml:2')
>>> parse_signatures("signatures:\\n  - id: a.b\\n    category: nope\\n    pattern: boom\\n"
...                  "    meaning: m\\n    remedy: r\\n", "s.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
preflight.explain.user.SignatureFileError: s.yaml:3: unknown category 'nope' (one of: port-in-use, ...)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from preflight.explain.signature import CATEGORIES, Signature

KEYS = ("id", "category", "pattern", "patterns", "meaning", "remedy", "verify", "symptom", "weight")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class SignatureFileError(ValueError):
    """A signatures file that cannot be used; ``str()`` is ``FILE:LINE: message``."""

    def __init__(self, where: str, line: int | None, message: str) -> None:
        super().__init__(f"{where}:{line}: {message}" if line else f"{where}: {message}")


def default_path() -> Path:
    """``$XDG_CONFIG_HOME/preflight/signatures.yaml`` (``~/.config/...`` when XDG_CONFIG_HOME is unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "preflight" / "signatures.yaml"


def load_signatures(path: Path, known_check: Callable[[str], bool] | None = None) -> list[Signature]:
    """Read and validate one signatures file (errors: SignatureFileError naming the line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SignatureFileError(str(path), None, f"cannot read the signatures file: {exc}") from None
    return parse_signatures(text, str(path), known_check)


def parse_signatures(text: str, where: str, known_check: Callable[[str], bool] | None = None) -> list[Signature]:
    """The entries of a signatures document; ``where`` names it in errors and in each entry's source."""
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise SignatureFileError(where, _line(event.start_mark), "YAML anchors/aliases are not supported")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise SignatureFileError(where, _line(exc.problem_mark), f"invalid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise SignatureFileError(where, None, f"invalid YAML: {exc}") from None
    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode) or [k.value for k, _ in root.value] != ["signatures"]:
        raise SignatureFileError(where, _line(root.start_mark), "expected one key, 'signatures:', holding a list")
    entries = root.value[0][1]
    if not isinstance(entries, yaml.SequenceNode):
        raise SignatureFileError(where, _line(entries.start_mark), "'signatures' must be a list of entries")
    out: list[Signature] = []
    seen: dict[str, int] = {}
    for node in entries.value:
        sig = _entry(node, where, known_check)
        if sig.id in seen:
            raise SignatureFileError(where, _line(node.start_mark),
                                     f"duplicate id {sig.id!r} (first at line {seen[sig.id]})")
        seen[sig.id] = _line(node.start_mark) or 0
        out.append(sig)
    return out


def _line(mark: Any) -> int | None:
    """The 1-based line of a yaml mark (pure-Python or libyaml's), None without one."""
    return int(mark.line) + 1 if mark is not None else None


def _entry(node: yaml.Node, where: str, known_check: Callable[[str], bool] | None) -> Signature:
    def fail(at: yaml.Node, message: str) -> SignatureFileError:
        return SignatureFileError(where, _line(at.start_mark), message)

    if not isinstance(node, yaml.MappingNode):
        raise fail(node, "each entry must be a mapping (id, category, pattern, meaning, remedy, verify)")
    fields: dict[str, yaml.Node] = {}
    for key, value in node.value:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if name not in KEYS:
            raise fail(key, f"unknown key {name!r} (expected one of: {', '.join(KEYS)})")
        if name in fields:
            raise fail(key, f"duplicate key {name!r}")
        fields[str(name)] = value
    for required in ("id", "category", "meaning", "remedy"):
        if required not in fields:
            raise fail(node, f"missing {required!r}")
    ident = _text(fields["id"], "id", fail)
    if not _ID.match(ident):
        raise fail(fields["id"], f"bad id {ident!r}: letters, digits, '.', '_' and '-' only")
    category = _text(fields["category"], "category", fail)
    if category not in CATEGORIES or category == "unknown":
        known = ", ".join(c for c in CATEGORIES if c != "unknown")
        raise fail(fields["category"], f"unknown category {category!r} (one of: {known})")
    patterns = _patterns(fields, node, fail)
    verify = _strings(fields["verify"], "verify", fail) if "verify" in fields else []
    for ident_check in verify:
        if known_check is not None and not known_check(ident_check):
            raise fail(fields["verify"], f"unknown check {ident_check!r} in verify (see `preflight list`)")
    symptom = _flag(fields["symptom"], fail) if "symptom" in fields else False
    weight = _weight(fields["weight"], fail) if "weight" in fields else 75
    return Signature(ident, category, tuple(patterns), _text(fields["meaning"], "meaning", fail),
                     _text(fields["remedy"], "remedy", fail), tuple(verify),
                     f"{where}:{_line(node.start_mark)}", weight=weight, root_cause=not symptom)


_Fail = Callable[[yaml.Node, str], SignatureFileError]


def _text(node: yaml.Node, name: str, fail: _Fail) -> str:
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        raise fail(node, f"{name!r} must be a non-empty string")
    return str(node.value).strip()


def _strings(node: yaml.Node, name: str, fail: _Fail) -> list[str]:
    if isinstance(node, yaml.ScalarNode):
        return [_text(node, name, fail)]
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise fail(node, f"{name!r} must be a string or a non-empty list of strings")
    return [_text(item, name, fail) for item in node.value]


def _patterns(fields: dict[str, yaml.Node], node: yaml.Node, fail: _Fail) -> list[str]:
    if ("pattern" in fields) == ("patterns" in fields):
        raise fail(node, "give exactly one of 'pattern' (a regex) or 'patterns' (a list of them)")
    key = "pattern" if "pattern" in fields else "patterns"
    found = _strings(fields[key], key, fail)
    for item, pattern in zip(_items(fields[key]), found, strict=True):
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise fail(item, f"bad regex {pattern!r}: {exc}") from None
        if compiled.search(""):
            raise fail(item, f"regex {pattern!r} matches an empty line, so it would match every line")
    return found


def _items(node: yaml.Node) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else [node]


def _flag(node: yaml.Node, fail: _Fail) -> bool:
    if not isinstance(node, yaml.ScalarNode) or node.value not in ("true", "false"):
        raise fail(node, "'symptom' must be true or false")
    return bool(node.value == "true")


def _weight(node: yaml.Node, fail: _Fail) -> int:
    if not isinstance(node, yaml.ScalarNode) or not node.value.isdigit() or not 1 <= int(node.value) <= 100:
        raise fail(node, "'weight' must be a whole number from 1 to 100")
    return int(node.value)


def merge(builtin: Sequence[Signature], user: Iterable[Signature]) -> tuple[Signature, ...]:
    """The catalog with user entries applied: a known id is replaced in place, a new one is appended.

    >>> a, b = (Signature(i, "oom", ("x",), "c", "f", (), "s") for i in ("a", "b"))
    >>> [s.source for s in merge([a], [Signature("a", "shm", ("y",), "c", "f", (), "u"), b])]
    ['u', 's']
    """
    by_id = {s.id: s for s in user}
    merged = [by_id.pop(s.id, s) for s in builtin]
    return (*merged, *by_id.values())
