"""How explain holds up when a log reaches it the way users paste it (issue 38, tolerant matching).

Every log of the unsealed sets (the training corpus, the held-out set, both dev sets) is explained as it is, then
again after each transform a real paste or log collector applies to the same text: torch's ``[rankN]:``
prefix on every line, torchrun's ``[default0]:`` (``--tee`` / ``--local-ranks-filter``), srun ``-l``'s ``0: ``,
a logging timestamp, ``kubectl logs --prefix``, ANSI colours, CRLF, a Markdown quote, HTML-escaped quotes, lines
cut at a terminal's width (80, 120) or soft-wrapped at 80 columns (an editor), an indentation, upper case. A
transform "holds" a log when the first category is the same as without it.
No sealed set is read: this measures robustness, not accuracy.

    python3 bench/explain_perturb.py          # one table, a row per transform
    python3 bench/explain_perturb.py --show rank_prefix   # the logs one transform changes
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from preflight.explain.matcher import explain_texts  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "explain"


def _each_line(prefix: Callable[[int], str]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        return "\n".join(prefix(i) + line for i, line in enumerate(text.splitlines()))
    return apply


def _wrap(text: str) -> str:
    """A forum's or an editor's soft wrap copied as text: lines broken at the last space before column 80."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(textwrap.wrap(line, 80, break_long_words=True, break_on_hyphens=False,
                                 drop_whitespace=False) or [""])
    return "\n".join(out)


def _cut(width: int) -> Callable[[str], str]:
    """A terminal's hard wrap (tmux / screen copy, a fixed-width console capture): every ``width`` characters."""
    def apply(text: str) -> str:
        out: list[str] = []
        for line in text.splitlines():
            out.extend([line[i:i + width] for i in range(0, len(line), width)] or [""])
        return "\n".join(out)
    return apply


TRANSFORMS: dict[str, Callable[[str], str]] = {
    "rank_prefix": _each_line(lambda i: "[rank3]: "),
    "default_prefix": _each_line(lambda i: "[default0]:"),
    "srun_label": _each_line(lambda i: "3: "),
    "timestamp": _each_line(lambda i: f"2025-03-04 10:11:{i % 60:02d},123 - "),
    "kubectl_prefix": _each_line(lambda i: "[pod/train-worker-1/main] "),
    "ansi_colour": lambda t: "\n".join(f"\x1b[31m{line}\x1b[0m" for line in t.splitlines()),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "markdown_quote": _each_line(lambda i: "> "),
    "html_escaped": lambda t: html.escape(t, quote=True),
    "terminal_80": _cut(80),
    "terminal_120": _cut(120),
    "soft_wrap_80": _wrap,
    "indented": _each_line(lambda i: "    "),
    "upper_case": lambda t: t.upper(),
    # a log inside JSON: torchrun's error file ("message": {"message": ..., "extraInfo": {"py_callstack": ...}}),
    # a Kubernetes event or a job status, printed as one line with its newlines escaped
    "json_string": lambda t: json.dumps({"message": t}),
}


def load() -> list[dict[str, object]]:
    logs: list[dict[str, object]] = []
    for name in ("corpus.json", "dev_ascend.json", "dev_nvidia.json", "heldout/logs.json"):
        data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
        for log in data:
            logs.append({**log, "set": name})
    return logs


def category(text: str) -> str:
    best = explain_texts({"log.txt": text}).best
    return best.signature.category if best else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", choices=sorted(TRANSFORMS), help="print the logs this transform changes")
    args = parser.parse_args()
    logs = load()
    base = [category(str(log["excerpt"])) for log in logs]
    right = sum(b == log["category"] for b, log in zip(base, logs, strict=True))
    print(f"{len(logs)} unsealed logs; right first as pasted: {right} ({right / len(logs):.1%})")
    print(f"{'transform':<16} {'holds':>6} {'changed':>8} {'right':>6}")
    for name, transform in TRANSFORMS.items():
        if args.show and name != args.show:
            continue
        now = [category(transform(str(log["excerpt"]))) for log in logs]
        same = sum(a == b for a, b in zip(base, now, strict=True))
        ok = sum(n == log["category"] for n, log in zip(now, logs, strict=True))
        print(f"{name:<16} {same / len(logs):>6.1%} {len(logs) - same:>8} {ok / len(logs):>6.1%}")
        if args.show:
            for log, a, b in zip(logs, base, now, strict=True):
                if a != b:
                    print(f"  {log['source']}: {a} -> {b}")


if __name__ == "__main__":
    main()
