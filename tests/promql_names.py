"""The metric names a PromQL expression selects (the dashboard and rules test: every name is one preflight writes).

Not a PromQL parser: strings, label matchers, ranges, grouping clauses and Grafana's variables are cut out first;
what is left that looks like a name and is not a function, an aggregation (a name followed by ``(``), a keyword or
a number is a metric selector. promtool parses the same expressions for their syntax
(tests/test_prometheus_rules.py).

>>> sorted(metric_names('sum by (cluster) (rate(foo_total{job="a", x=~"b|c"}[5m])) / on(host) group_left(y) '
...                     'bar:rec:1d offset 1h > bool 0.5 and topk(3, baz) unless count without (z) (qux)'))
['bar:rec:1d', 'baz', 'foo_total', 'qux']
>>> sorted(metric_names('time() - max(x{cluster=~"$cluster"}[$__range]) > 7 * 86400 or vector(0) + Inf'))
['x']
>>> sorted(metric_names("label_values(preflight_host_verdict, cluster)"))  # Grafana's: its label is no metric
['preflight_host_verdict']
"""

from __future__ import annotations

import re

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_VARIABLES = re.compile(r"\$\{[^}]*\}|\$\w+")
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGES = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_TOKENS = re.compile(r"\d[\w.]*|[A-Za-z_:][\w:]*(?:\s*\()?")
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
            "group_right", "inf", "nan", "atan2"}
GRAFANA_LABEL_QUERIES = re.compile(r"^\s*label_values\(\s*([A-Za-z_:][\w:]*)\s*,\s*\w+\s*\)\s*$")


def metric_names(expr: str) -> set[str]:
    """The metric (or recorded series) names ``expr`` selects; also Grafana's ``label_values(metric, label)``."""
    grafana = GRAFANA_LABEL_QUERIES.match(expr)
    if grafana:
        return {grafana.group(1)}
    text = _VARIABLES.sub("1", _STRINGS.sub("", expr))
    text = _GROUPING.sub(" ", _RANGES.sub("", _MATCHERS.sub("", text)))
    names = set()
    for token in _TOKENS.findall(text):
        if token[0].isdigit() or token.endswith("(") or token.lower() in KEYWORDS:
            continue
        names.add(token)
    return names
