"""Programs that run on the nodes, kept as real modules (so ruff and mypy read them) and shipped as text.

A probe runs one as ``python -S -c SOURCE ARGS``: ``source(name)`` is the text of ``preflight/node/NAME.py``
with its ``from preflight.node.json_writer import js`` line replaced by the ``js()`` function itself (the
programs avoid ``json``, ``re``, ``socket`` and ``signal``: each import costs about as much as the
interpreter's own start, ~8 ms, paid per host). The controller never imports these modules.

>>> namespace: dict[str, object] = {}
>>> exec(source("json_writer"), namespace)
>>> exec("print(js([1, 'a']))", namespace)
[1, "a"]
>>> value = {"a": [1, 2.5, None, True], "b": "q\\"\\\\é\\udcff😀"}
>>> text = namespace["js"](value)  # type: ignore[operator]
>>> text.isascii(), json.loads(text) == value
(True, True)
"""

from __future__ import annotations

import json  # noqa: F401  (used by the doctest)
from functools import cache
from pathlib import Path

_HERE = Path(__file__).parent
_IMPORT_JS = ("from preflight.node.json_writer import js  # JSON_WRITER: this line is replaced by js() itself "
              "when shipped\n")
_BEGINS = "# JSON_WRITER begins\n"


@cache
def json_writer() -> str:
    """The ``js()`` function's source."""
    text = (_HERE / "json_writer.py").read_text(encoding="utf-8")
    return text[text.index(_BEGINS) + len(_BEGINS):]


@cache
def source(name: str) -> str:
    """The program ``preflight/node/NAME.py`` as shipped: its ``js`` import replaced by the function."""
    text = (_HERE / f"{name}.py").read_text(encoding="utf-8")
    return text.replace(_IMPORT_JS, json_writer())
