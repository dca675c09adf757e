"""User signatures: ``~/.config/preflight/signatures.yaml`` and ``--signatures FILE`` add catalog entries or
override built-in ones with the same id. Every error names ``file:line``.

The file is a YAML list (or ``{signatures: [...]}``) of entries with keys ``id``, ``category`` (one of
``CATEGORIES``), ``pattern`` (a regex or a list of them), ``meaning``, ``remedy``, optional ``verify`` (check
ids), ``weight`` (1-100, default 90) and ``symptom`` (true: a consequence, ranked after root causes).

>>> sigs = parse_signatures("- id: site.nfs\\n  category: shm\\n  pattern: 'Stale file handle'\\n"
...                         "  meaning: NFS went away.\\n  remedy: Remount it.\\n", "s.yaml")
>>> (sigs[0].id, sigs[0].category, sigs[0].source)
('site.nfs', 'shm', 'user signature s.yaml:1')
>>> parse_signatures("- id: x\\n  category: nope\\n", "s.yaml")
Traceback (most recent call last):
...
preflight.explain.user.UserSignatureError: s.yaml:1: missing 'pattern'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import yaml

from preflight.explain.signature import CATEGORIES, Signature

KEYS = {"id", "category", "pattern", "meaning", "remedy", "verify", "weight", "symptom"}
REQUIRED = ("id", "category", "pattern", "meaning", "remedy")


class UserSignatureError(ValueError):
    """A user signature file that cannot be used; the message starts with ``file:line:``."""


def default_path() -> Path:
    """``$XDG_CONFIG_HOME/preflight/signatures.yaml`` (``~/.config/...`` without XDG_CONFIG_HOME)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "preflight" / "signatures.yaml"


def load_signatures(path: Path) -> list[Signature]:
    """The signatures of one file; ``UserSignatureError`` names the file and line of the first problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserSignatureError(f"{path}:1: cannot read: {exc}") from None
    return parse_signatures(text, str(path))


def parse_signatures(text: str, name: str) -> list[Signature]:
    """Parse and validate a signature file's text (``name`` is used in messages and ``source``)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise UserSignatureError(f"{name}:{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if root is None:
        return []
    if isinstance(root, yaml.MappingNode):
        found = [v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "signatures"]
        if not found:
            raise UserSignatureError(f"{name}:{_line(root)}: expected a list of signatures or 'signatures:'")
        root = found[0]
    if not isinstance(root, yaml.SequenceNode):
        raise UserSignatureError(f"{name}:{_line(root)}: expected a list of signatures")
    out: list[Signature] = []
    seen: dict[str, int] = {}
    for node in root.value:
        sig = _entry(node, name)
        if sig.id in seen:
            raise UserSignatureError(f"{name}:{_line(node)}: id '{sig.id}' already defined at line {seen[sig.id]}")
        seen[sig.id] = _line(node)
        out.append(sig)
    return out


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _entry(node: yaml.Node, name: str) -> Signature:
    if not isinstance(node, yaml.MappingNode):
        raise UserSignatureError(f"{name}:{_line(node)}: each signature is a mapping (id: ..., pattern: ...)")
    fields: dict[str, yaml.Node] = {}
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.value not in KEYS:
            raise UserSignatureError(f"{name}:{_line(key)}: unknown key '{getattr(key, 'value', key)}' "
                                     f"(keys: {', '.join(sorted(KEYS))})")
        fields[key.value] = value
    for key in REQUIRED:
        if key not in fields:
            raise UserSignatureError(f"{name}:{_line(node)}: missing '{key}'")
    ident = _scalar(fields["id"], name, "id")
    category = _scalar(fields["category"], name, "category")
    if category not in CATEGORIES or category == "unknown":
        raise UserSignatureError(f"{name}:{_line(fields['category'])}: category '{category}' is not one of "
                                 f"{', '.join(c for c in CATEGORIES if c != 'unknown')}")
    patterns = _strings(fields["pattern"], name, "pattern")
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UserSignatureError(f"{name}:{_line(fields['pattern'])}: bad regex {pattern!r}: {exc}") from None
    verify = _strings(fields["verify"], name, "verify") if "verify" in fields else []
    if verify:
        from preflight.checks import all_checks

        checks = all_checks()
        for ident_ in verify:
            if not any(c.selected_by(ident_) for c in checks):
                raise UserSignatureError(f"{name}:{_line(fields['verify'])}: no check '{ident_}' "
                                         "(see `preflight list-checks`)")
    weight = 90
    if "weight" in fields:
        raw = _scalar(fields["weight"], name, "weight")
        if not raw.isdigit() or not 1 <= int(raw) <= 100:
            raise UserSignatureError(f"{name}:{_line(fields['weight'])}: weight must be 1-100, not {raw!r}")
        weight = int(raw)
    symptom = _scalar(fields["symptom"], name, "symptom").lower() in ("true", "yes") if "symptom" in fields else False
    return Signature(ident, category, tuple(patterns), _scalar(fields["meaning"], name, "meaning"),
                     _scalar(fields["remedy"], name, "remedy"), tuple(verify),
                     f"user signature {name}:{_line(node)}", weight=weight, root_cause=not symptom)


def _scalar(node: yaml.Node, name: str, key: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        raise UserSignatureError(f"{name}:{_line(node)}: '{key}' must be a non-empty text")
    return str(node.value)


def _strings(node: yaml.Node, name: str, key: str) -> list[str]:
    if isinstance(node, yaml.ScalarNode):
        return [_scalar(node, name, key)]
    if isinstance(node, yaml.SequenceNode) and node.value:
        return [_scalar(item, name, key) for item in node.value]
    raise UserSignatureError(f"{name}:{_line(node)}: '{key}' must be a text or a non-empty list of texts")


def merge(base: Iterable[Signature], users: Iterable[Signature]) -> tuple[Signature, ...]:
    """The catalog with user entries replacing same-id built-ins in place and new ones appended.

    >>> from preflight.explain.catalog import CATALOG
    >>> user = parse_signatures("- {id: cuda.oom, category: oom, pattern: x, meaning: m, remedy: r}", "u")
    >>> merged = merge(CATALOG, user)
    >>> len(merged) == len(CATALOG), [s for s in merged if s.id == "cuda.oom"][0].cause
    (True, 'm')
    """
    users = list(users)
    by_id = {s.id: s for s in users}
    merged = [by_id.pop(s.id, s) for s in base]
    return (*merged, *[s for s in users if s.id in by_id])
