"""js(value) -> JSON text (ASCII only) for None, bool, int, float, str, list/tuple and dict with str keys.

The node programs avoid ``json``: its import costs about as much as the interpreter's own start (~8 ms),
and on a cluster every millisecond is paid per host. They import ``js`` from here; the text shipped to
the node has that import replaced by the function below (see ``preflight.node.source``).
"""
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# JSON_WRITER begins
def js(value):  # type: (Any) -> str
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
