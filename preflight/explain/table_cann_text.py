"""CANN's error messages found by their text when the code is not on the line: the message templates of the CANN
error-code tables (``table_cann``'s EE/EH/EI/EJ/EK/EL/EZ and HCCL codes, ``table_cann_ops``, ``table_ge``) read as
templates (``table_templates``: ``%s`` is a value, case, quotes and punctuation tolerated).

A log or a document often quotes the message without its code (the code was on the line before, the plog was
trimmed, an FAQ shows only the sentence): ``Environment variable [HCCL_IF_IP] is invalid. Reason: ...`` is EI0001's
message and says the same as ``EI0001: Environment variable [HCCL_IF_IP] is invalid...``. Each template decodes to
its code's own entry (code, meaning, category, fix). Left out: templates of fewer than six words of text (five
with CANN's ``Reason:``; not ``File %s does not exist.``) and the templates two codes of different categories share.

>>> [(d.code.code, d.code.category) for d in TABLE.decode(
...     'Environment variable [HCCL_IF_IP] is invalid. Reason: it should be "ip[%ifname]".')]
[('EI0001', 'launch-args')]
>>> TABLE.decode("Environment variable check passed.")
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from preflight.explain import table_cann, table_cann_ops, table_ge
from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_templates import Row, build, key, normalize

_PRINTF = re.compile(r"%(?:\d+\$)?[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[sdiuxXfgc]")
MIN_WORDS = 5


def template_of(meaning: str) -> str:
    """A message's printf template as a ``table_templates`` template.

    >>> template_of("Value %s for environment variable %s is invalid. Reason: %s.")
    'Value {} for environment variable {} is invalid. Reason: {}.'
    """
    return _PRINTF.sub("{}", meaning)


def _usable(template: str) -> bool:
    """A template with a value and enough text to be CANN's: six words, or five and CANN's ``Reason:``."""
    words = normalize(template.replace("{}", " ")).split()
    return "{}" in template and (len(words) > MIN_WORDS or (len(words) == MIN_WORDS and "reason" in words))


def _by_template(codes: Iterable[Code]) -> dict[str, tuple[str, Code]]:
    """Each usable template's key -> (template, code); a key two codes of different categories share is dropped."""
    found: dict[str, tuple[str, Code]] = {}
    clashing: set[str] = set()
    for code in codes:
        template = template_of(code.meaning)
        if not _usable(template):
            continue
        row_key = key(template)
        if row_key in found and found[row_key][1].category != code.category:
            clashing.add(row_key)
        found.setdefault(row_key, (template, code))
    return {k: v for k, v in found.items() if k not in clashing}


_SOURCES = (*table_cann.TABLES, table_cann_ops.TABLE, table_ge.TABLE)
_TEMPLATES = _by_template(code for table in _SOURCES for code in table.entries.values())
_TEXT = build("cann_text", table_cann.CANN.source, table_cann.CANN.version,
              tuple(Row(code.name, code.category, code.meaning, code.fix, (template,), code.root_cause, code.checks)
                    for template, code in _TEMPLATES.values()))

SOURCE = table_cann.CANN.source
VERSION = (f"the message templates of {', '.join(t.name for t in _SOURCES)} ({table_cann.CANN.version}; "
           f"{table_ge.TABLE.version})")
_CODE_OF = {k: code.code for k, (_, code) in _TEMPLATES.items()}


_ANY_CODE = re.compile(r"(?<![A-Za-z0-9])E[A-Z0-9][0-9]{4}(?![0-9])")


def find(line: str) -> list[str]:
    """The codes whose message the line carries (by its text), unless the line names another CANN code: the code on
    the line is the message's own (another code's template that shares the words is not).

    >>> find("HCCL: Config device_ip is missing in the ranktable file.")
    ['EI0017']
    >>> find("E19025: Input tensor is invalid. Reason: the output memory is smaller than op_size")  # not E13025's
    []
    """
    named = set(_ANY_CODE.findall(line))
    return list(dict.fromkeys(code for code in (_CODE_OF[k] for k in _TEXT.find(line))
                              if not named or code in named))


TABLE = CodeTable("cann_text", SOURCE, VERSION, {code.code: code for _, code in _TEMPLATES.values()}, find,
                  _TEXT.gate)
