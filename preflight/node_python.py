"""Source snippets shared by the Python scripts that probes run on the nodes (``python -S -c ...``).

Those scripts avoid ``json``, ``re``, ``socket`` and ``signal``: each of these imports costs about as
much as the interpreter's own start (~8 ms), and on a cluster every millisecond is paid per host.

>>> namespace: dict[str, object] = {}
>>> exec(with_json_writer("import sys\\n# JSON_WRITER\\n"), namespace)
>>> value = {"a": [1, 2.5, None, True], "b": "q\\"\\\\é\\udcff😀"}
>>> text = namespace["js"](value)
>>> text.isascii(), json.loads(text) == value
(True, True)
"""

from __future__ import annotations

import json  # noqa: F401  (used by the doctest)

# js(value) -> JSON text (ASCII only) for None, bool, int, float, str, list/tuple and dict with str keys.
JSON_WRITER = r'''
def js(value):
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(js(str(k)) + ": " + js(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(js(v) for v in value) + "]"
    chars = []
    for ch in str(value):
        code = ord(ch)
        if 32 <= code < 127 and ch not in "\"\\":
            chars.append(ch)
        elif code > 0xFFFF:
            code -= 0x10000
            chars.append("\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)))
        else:
            chars.append("\\u%04x" % code)
    return '"' + "".join(chars) + '"'
'''


def with_json_writer(source: str) -> str:
    """``source`` with its ``# JSON_WRITER`` line replaced by the ``js()`` function."""
    return source.replace("# JSON_WRITER", JSON_WRITER)
