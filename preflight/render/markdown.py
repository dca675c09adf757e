"""Markdown: a short summary to paste into a ticket (verdict, counts, problems, slowest all_reduce pairs).

>>> from preflight.model import Finding, HostResult, Report, Status
>>> r = Report([HostResult("n1", "n1", True)], [Finding("os.shm", "n1", Status.FAIL, "a|b")], ["os"], "", 1.0)
>>> "a\\\\|b" in render(r.redacted())
True
"""

from __future__ import annotations

import re

from preflight.model import RedactedReport
from preflight.render import summary

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # terminal escapes from node output


def cell(value: object) -> str:
    """Text safe inside a table cell: one line, pipes and markup characters escaped.

    >>> cell("a|b\\n<i>*c*</i>")
    'a\\\\|b &lt;i&gt;\\\\*c\\\\*&lt;/i&gt;'
    """
    text = re.sub(r"\s+", " ", _CONTROL.sub("", str(value))).strip()
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", text)


def code(value: object) -> str:
    """An inline code span that survives backticks and pipes in the value (for table cells)."""
    text = re.sub(r"\s+", " ", _CONTROL.sub("", str(value))).strip().replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def render(report: RedactedReport) -> str:
    verdict = report.verdict()
    counts = ", ".join(f"{k} {v}" for k, v in report.summary().items())
    lines = [f"## preflight: **{verdict.word}**{'' if report.complete else ' (incomplete: interrupted)'}",
             "",
             f"{summary.hosts_text(len(report.hosts))}, checks {cell(', '.join(report.checks) or '-')}, "
             f"{report.duration_s:.1f} s, started {cell(report.started or '-')}  ",
             f"{counts}", ""]
    unreachable = [h.name for h in report.hosts if not h.reachable]
    if unreachable:
        lines += [f"Unreachable: {cell(summary.fold(unreachable))}", ""]
    found = summary.problems(report)
    if found:
        lines += [f"### Problems ({len(found)})", "", "| status | check | hosts | observed | expected | remedy |",
                  "|---|---|---|---|---|---|"]
        for f, hosts in found:
            where = summary.fold(hosts) if hosts else "(cluster)"
            lines.append(f"| {f.status.value} | {cell(f.check)} | {cell(where)}"
                         f" | {cell(f.observed or '-')} | {cell(f.expected or '-')} | "
                         f"{code(f.remedy) if f.remedy else '-'} |")
        lines.append("")
        lines += ["<details><summary>messages</summary>", ""]
        lines += [f"- **{cell(f.check)}** {cell(summary.fold(hosts) if hosts else '(cluster)')}: {cell(f.message)}"
                  for f, hosts in found]
        lines += ["", "</details>", ""]
    else:
        lines += ["No problems found.", ""]
    pairs = summary.busbw_pairs(report)
    if pairs:
        slowest = sorted(pairs.items(), key=lambda kv: (kv[1][0], sorted(kv[0])))[:5]
        lines += [f"### all_reduce busbw: {len(slowest)} slowest of {len(pairs)} host pairs", "",
                  "| pair | busbw GB/s | status |", "|---|---|---|"]
        lines += [f"| {cell(' - '.join(sorted(k)))} | {v:.3g} | {s.value} |" for k, (v, s) in slowest]
        lines.append("")
    return "\n".join(lines)
