"""The fleet view (issue 42, docs/history.md): examples/prometheus/preflight-rules.yml and the Grafana dashboard.

The rules run in Prometheus' own ``promtool`` (``check rules``, ``test rules``) over series built from what
preflight really writes: each run of a scenario is a report rendered by ``preflight.render.prometheus``, its text
parsed back and scraped every interval (the latest run's values; a series a run no longer writes goes stale, as
node_exporter's textfile collector and a scrape make it). The recorded lemon score and flapping are compared
with ``preflight.history.analysis`` over the same runs, and which alerts fire (and that a healthy fleet fires
none) is asserted. Without promtool these tests skip, and fail under ``PREFLIGHT_REQUIRE_CLUSTER=1`` (CI: .ci/run
unpacks it from Debian's prometheus package).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from promql_names import metric_names

from preflight.history.analysis import Lemon, changes, lemon_scores, per_run
from preflight.history.store import Row
from preflight.model import Finding, HostResult, Report, Status
from preflight.render import prometheus

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "examples" / "prometheus" / "preflight-rules.yml"
DASHBOARD = ROOT / "examples" / "grafana" / "preflight-dashboard.json"
ALERTS = ("PreflightClusterFailingHosts", "PreflightLemonNode", "PreflightCheckFlapping", "PreflightMetricsStale")
P, F, W, E, S = Status.PASS, Status.FAIL, Status.WARN, Status.ERROR, Status.SKIP
H, D = 3600, 86400


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("PREFLIGHT_REQUIRE_CLUSTER"):
            pytest.fail("promtool is not installed (.ci/run unpacks it from Debian's prometheus package)")
        pytest.skip("promtool is not installed (Debian's prometheus package ships it)")
    return found


# --- what preflight writes, run after run ---------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One run on a target: when, each host's findings (id -> status), the hosts --drain-after held."""

    at: int
    findings: Mapping[str, Mapping[str, Status]]
    held: frozenset[str] = frozenset()

    def report(self) -> Report:
        found = [Finding(check, host, status, "m") for host, checks in self.findings.items()
                 for check, status in checks.items()]
        started = datetime.fromtimestamp(self.at, timezone.utc).isoformat()
        return Report([HostResult(h, h, True) for h in self.findings], found, ["sysctl", "os"], started, 1.0,
                      extra={"drain": {"held": sorted(self.held)}} if self.held else {})

    def samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """The textfile this run writes, parsed back: (name, labels) -> value."""
        text = prometheus.render(self.report().redacted())
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(text) for s in family.samples}

    def rows(self) -> list[Row]:
        """What the same run leaves in the history store."""
        return [Row(f"r{self.at}", float(self.at), "run", f.host, f.check, f.status.value, None)
                for f in self.report().findings]


@dataclass(frozen=True)
class Target:
    """A node_exporter target whose textfile directory preflight writes to (`run` on a controller: many hosts;
    `node` on a host: itself)."""

    instance: str
    cluster: str
    runs: Sequence[Run]


def input_series(targets: Sequence[Target], interval: int, end: int) -> list[dict[str, str]]:
    """promtool's input_series: every target scraped every ``interval`` seconds from 0 to ``end``."""
    times = range(0, end + 1, interval)
    out = []
    for target in targets:
        written = [(run.at, run.samples()) for run in sorted(target.runs, key=lambda r: r.at)]
        keys = sorted({key for _, samples in written for key in samples})
        for name, labels in keys:
            values, seen = [], False
            for t in times:
                now = [samples for at, samples in written if at <= t]
                value = now[-1].get((name, labels)) if now else None
                values.append(_number(value) if value is not None else "stale" if seen else "_")
                seen = value is not None
            every = {"job": "node", "instance": target.instance, "cluster": target.cluster, **dict(labels)}
            shown = ",".join(f'{k}="{v}"' for k, v in sorted(every.items()) if v != "")  # a scrape drops empty labels
            out.append({"series": f"{name}{{{shown}}}", "values": " ".join(values)})
    return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def history(targets: Sequence[Target], since: float, until: float) -> list[Row]:
    """The history rows of the runs in (since, until], as `preflight history --since` reads them."""
    return [row for t in targets for run in t.runs if since < run.at <= until for row in run.rows()]


# --- promtool -------------------------------------------------------------------------------------------------


def filled_annotations(alert: str, value: str, **labels: str) -> dict[str, str]:
    """The rule file's annotations of ``alert`` filled in as Prometheus fills them (``value``: the rendered
    value, humanized as the template asks)."""
    rule = next(r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"] if r.get("alert") == alert)
    def fill(template: str) -> str:
        text = re.sub(r"\{\{ \$value(?: \| \w+)? \}\}", value, template)
        return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)
    return {key: fill(text) for key, text in rule["annotations"].items()}


def fired(alert: str, severity: str, value: str, **labels: str) -> dict[str, Any]:
    return {"exp_labels": {"severity": severity, **labels},
            "exp_annotations": filled_annotations(alert, value, **labels)}


def alert_tests(at: str, expected: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One alert_rule_test per alert at ``at``: those named fire with exactly these, every other fires none."""
    return [{"eval_time": at, "alertname": name, "exp_alerts": expected.get(name, [])} for name in ALERTS]


def run_promtool(tmp_path: Path, tests: list[dict[str, Any]], every: str = "1m") -> subprocess.CompletedProcess[str]:
    """promtool test rules on ``tests``, the rules evaluated ``every`` (a week of them: 1h, else minutes)."""
    spec = tmp_path / "preflight-rules.test.yml"
    spec.write_text(yaml.safe_dump({"rule_files": [str(RULES)], "evaluation_interval": every, "tests": tests}))
    return subprocess.run([promtool(), "test", "rules", str(spec)], capture_output=True, text=True, timeout=300,
                          check=False)


def lemon_samples(targets: Sequence[Target], at: int) -> list[dict[str, Any]]:
    """The lemon records expected at ``at``: `preflight history --since 7d`'s counts of the same runs."""
    lemons = lemon_scores(history(targets, at - 7 * D, at), now=float(at))
    cluster = {host: t.cluster for t in targets for run in t.runs for host in run.findings}
    figures: list[tuple[str, Callable[[Lemon], float]]] = [
        ("preflight:host_runs:7d", lambda x: x.runs), ("preflight:host_failed_runs:7d", lambda x: x.failed_runs),
        ("preflight:host_lemon_score:7d", lambda x: x.failed_runs / x.runs)]
    tests = []
    for record, value in figures:
        tests.append({"expr": record, "eval_time": f"{at}s", "exp_samples": [
            {"labels": f'{record}{{cluster="{cluster[h]}",host="{h}"}}', "value": value(lemon)}
            for h, lemon in sorted(lemons.items())]})
    return tests


# --- the scenarios --------------------------------------------------------------------------------------------


def failing_cluster() -> list[Target]:
    """`run` on a controller every 30 min, 12 runs: node1 healthy; node2's somaxconn toggled on alternate runs;
    node3's /dev/shm failing from the 4th run on; node4 failing in the last two, both held by --drain-after."""
    runs = []
    for i in range(12):
        runs.append(Run(i * 1800, {
            "node1": {"sysctl.somaxconn": P, "os.shm": P},
            "node2": {"sysctl.somaxconn": F if i % 2 == 0 else P, "os.shm": P},
            "node3": {"sysctl.somaxconn": P, "os.shm": F if i >= 3 else P},
            "node4": {"sysctl.somaxconn": F if i >= 10 else P, "os.shm": P},
        }, held=frozenset({"node4"}) if i >= 10 else frozenset()))
    return [Target("ctl:9100", "a", runs)]


def test_the_rules_file_passes_promtool_check_rules() -> None:
    done = subprocess.run([promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "SUCCESS: 14 rules found" in done.stdout, done.stdout + done.stderr


def test_a_failing_and_flapping_cluster(tmp_path: Path) -> None:
    targets = failing_cluster()
    at = 6 * H  # 30 min after the 12th run; node2 passed in it, node3 and node4 failed
    rows = history(targets, -1, at)
    statuses = {key: [s for _, _, s in seq] for key, seq in per_run(rows).items()}
    flap_changes = {key: changes(seq) for key, seq in statuses.items()}
    assert flap_changes[("node2", "sysctl.somaxconn")] == 11 and flap_changes[("node3", "os.shm")] == 1
    lemons = lemon_scores(rows, now=float(at))
    assert (lemons["node2"].failed_runs, lemons["node3"].failed_runs, lemons["node4"].failed_runs) == (6, 9, 2)
    series = input_series(targets, 300, at)
    assert any(s["series"].startswith("preflight_host_failed_timestamp_seconds{") and "stale" in s["values"]
               for s in series), "node2's failed-run series goes stale on its passing runs"
    records = [
        {"expr": "preflight:host_verdict:max", "eval_time": "6h", "exp_samples": [
            {"labels": f'preflight:host_verdict:max{{cluster="a",host="{h}"}}', "value": v}
            for h, v in (("node1", 0), ("node2", 0), ("node3", 3), ("node4", 5))]},
        {"expr": "preflight:cluster_hosts_failing:count", "eval_time": "6h",
         "exp_samples": [{"labels": 'preflight:cluster_hosts_failing:count{cluster="a"}', "value": 1}]},
        {"expr": "preflight:cluster_hosts_held:count", "eval_time": "6h",
         "exp_samples": [{"labels": 'preflight:cluster_hosts_held:count{cluster="a"}', "value": 1}]},
        {"expr": "preflight:check_failing_hosts:count", "eval_time": "6h", "exp_samples": [
            {"labels": 'preflight:check_failing_hosts:count{check="os.shm",cluster="a"}', "value": 1},
            {"labels": 'preflight:check_failing_hosts:count{check="sysctl.somaxconn",cluster="a"}', "value": 1}]},
        {"expr": "preflight:cluster_failing_checks:count", "eval_time": "6h",
         "exp_samples": [{"labels": 'preflight:cluster_failing_checks:count{cluster="a"}', "value": 2}]},
        {"expr": "preflight:check_status_changes:1d", "eval_time": "6h", "exp_samples": [
            {"labels": f'preflight:check_status_changes:1d{{check="{c}",cluster="a",host="{h}"}}', "value": n}
            for (h, c), n in sorted(flap_changes.items())]},
        *lemon_samples(targets, at),
    ]
    expected = {
        "PreflightClusterFailingHosts": [fired("PreflightClusterFailingHosts", "critical", "1", cluster="a")],
        "PreflightLemonNode": [fired("PreflightLemonNode", "warning", "50%", cluster="a", host="node2"),
                               fired("PreflightLemonNode", "warning", "75%", cluster="a", host="node3")],
        "PreflightCheckFlapping": [fired("PreflightCheckFlapping", "warning", "11", check="sysctl.somaxconn",
                                         cluster="a", host="node2")],
    }
    # node2 fails at 0 and 1h: the cluster alert waits out its 5 minutes, then fires alone (too few runs for a
    # lemon, 2 changes are no flapping); at 45 min every host passes.
    early = {"PreflightClusterFailingHosts": [fired("PreflightClusterFailingHosts", "critical", "1", cluster="a")]}
    done = run_promtool(tmp_path, [{"interval": "5m", "input_series": series, "promql_expr_test": records,
                                    "alert_rule_test": alert_tests("6h", expected) + alert_tests("4m", {})
                                    + alert_tests("45m", {}) + alert_tests("1h4m", {})
                                    + alert_tests("1h10m", early)}])
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr


def test_promtool_fails_a_wrong_expectation(tmp_path: Path) -> None:
    """The harness can fail: node1, healthy, claimed a lemon; and the flapping alert claimed silent."""
    series = input_series(failing_cluster(), 300, 6 * H)
    wrong = {"PreflightLemonNode": [fired("PreflightLemonNode", "warning", "50%", cluster="a", host="node1")]}
    done = run_promtool(tmp_path, [{"interval": "5m", "input_series": series,
                                    "alert_rule_test": [t for t in alert_tests("6h", wrong)
                                                        if t["alertname"] in ("PreflightLemonNode",
                                                                              "PreflightCheckFlapping")]}])
    assert done.returncode != 0, done.stdout
    assert "PreflightLemonNode" in done.stderr + done.stdout and "PreflightCheckFlapping" in done.stderr + done.stdout


def test_a_healthy_fleet_fires_nothing_for_30_hours(tmp_path: Path) -> None:
    """`node` on each host hourly (a prolog): warnings, a skipped check, one could-not-tell run; no alert ever,
    and the counts of failing hosts and checks are 0, not absent."""
    targets = []
    for host in ("node5", "node6"):
        runs = [Run(i * H, {host: {"sysctl.somaxconn": P, "os.shm": W if host == "node5" else P,
                                   "npu.count": S, "net.reachability": E if (host, i) == ("node6", 10) else P}})
                for i in range(30)]
        targets.append(Target(f"{host}:9100", "b", runs))
    series = input_series(targets, 300, 30 * H)
    at = 30 * H
    zero = [{"expr": f"preflight:{r}", "eval_time": "30h", "exp_samples": [
        {"labels": f'preflight:{r}{{cluster="b"}}', "value": 0}]}
        for r in ("cluster_hosts_failing:count", "cluster_hosts_held:count", "cluster_failing_checks:count")]
    checks = [t for when in ("1h", "6h", "11h", "12h", "24h", "29h59m", "30h") for t in alert_tests(when, {})]
    done = run_promtool(tmp_path, [{"interval": "5m", "input_series": series, "alert_rule_test": checks,
                                    "promql_expr_test": zero + lemon_samples(targets, at)}])
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr


def test_a_node_that_stopped_running_preflight_is_stale(tmp_path: Path) -> None:
    """node7 ran at 0, 1h and 2h, then never again; its textfile stays exported. Stale once the last run is a day
    old (26h) and 15 minutes have passed; not before."""
    targets = [Target("node7:9100", "c", [Run(i * H, {"node7": {"os.shm": P}}) for i in range(3)])]
    series = input_series(targets, 300, 28 * H)
    stale = fired("PreflightMetricsStale", "warning", "1d 1h 0m 0s", cluster="c", host="node7")
    done = run_promtool(tmp_path, [{"interval": "5m", "input_series": series,
                                    "alert_rule_test": alert_tests("25h", {}) + alert_tests("26h10m", {})
                                    + alert_tests("27h", {"PreflightMetricsStale": [stale]})}])
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr


def test_the_lemon_score_counts_the_runs_of_the_last_7_days(tmp_path: Path) -> None:
    """node8 runs every 6 h for 9 days (at 3h, 9h, ...), failing in the first 3: at day 9 the window holds 28 runs,
    4 failed - the run of 45h, still current when the window opens, is not one of them."""
    runs = [Run(3 * H + i * 6 * H, {"node8": {"os.shm": F if 3 * H + i * 6 * H < 3 * D else P}}) for i in range(36)]
    targets = [Target("node8:9100", "d", runs)]
    at = 9 * D
    lemon = lemon_scores(history(targets, at - 7 * D, at), now=float(at))["node8"]
    assert (lemon.runs, lemon.failed_runs) == (28, 4)
    done = run_promtool(tmp_path, [{"interval": "1h", "input_series": input_series(targets, H, at),
                                    "promql_expr_test": lemon_samples(targets, at),
                                    "alert_rule_test": alert_tests("9d", {})}], every="1h")
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr


# --- every query names a metric preflight writes --------------------------------------------------------------


def written_metrics() -> set[str]:
    """The metric names preflight/render/prometheus.py writes: every name the module passes to ``_metric``, each
    seen in a rendered report (one that exercises every branch: pairs, held hosts, a start time)."""
    source = ast.parse(Path(prometheus.__file__).read_text())
    declared = {node.args[1].value for node in ast.walk(source) if isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "_metric" and isinstance(node.args[1], ast.Constant)}
    report = Report([HostResult("n1", "n1", True), HostResult("n2", "n2", True)], [
        Finding("os.shm", "n1", F, "m"), Finding("os.shm", "n2", F, "m"),
        Finding("allreduce.busbw", "n1", F, "slow", peer="n2", device=0, peer_device=0, algbw_gbps=1.0,
                busbw_gbps=1.0)], ["os"], "2026-11-27T08:00:00+00:00", 1.0, extra={"drain": {"held": ["n2"]}})
    rendered = {f.name for f in text_string_to_metric_families(prometheus.render(report.redacted()))}
    assert declared == rendered and len(declared) >= 12, (declared, rendered)
    return rendered


def rules_exprs() -> tuple[dict[str, str], list[str]]:
    """(recorded name -> its expr, every expr) of the rules file."""
    rules = [r for group in yaml.safe_load(RULES.read_text())["groups"] for r in group["rules"]]
    return {r["record"]: r["expr"] for r in rules if "record" in r}, [r["expr"] for r in rules]


def dashboard_exprs() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    panels = [p for top in board["panels"] for p in [top, *top.get("panels", [])]]
    exprs = [t["expr"] for p in panels for t in p.get("targets", [])]
    exprs += [v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
              for v in board["templating"]["list"] if v["type"] == "query"]
    return exprs


def test_every_query_names_a_metric_preflight_writes() -> None:
    written = written_metrics()
    recorded, in_rules = rules_exprs()
    board = dashboard_exprs()
    assert len(board) >= 6
    for expr in [*in_rules, *board]:
        names = metric_names(expr)
        assert names, expr
        unknown = {n for n in names if n not in written and n not in recorded}
        assert not unknown, f"{expr!r} names what preflight does not write and no rule records: {unknown}"
    used = set().union(*(metric_names(e) for e in board))
    assert {"preflight:host_verdict:max", "preflight:host_lemon_score:7d", "preflight:check_status_changes:1d",
            "preflight:check_failing_hosts:count", "preflight:host_last_run_timestamp_seconds:max"} <= used
    assert all(not n.startswith("preflight:") or n.split(":")[1] for n in recorded)


def test_every_dashboard_query_parses(tmp_path: Path) -> None:
    """promtool parses the dashboard's queries too: each becomes a recording rule ($cluster a regex)."""
    queries = [e for e in dashboard_exprs() if not e.startswith("label_values(")]
    rules = [{"record": f"dashboard:query:{i}", "expr": re.sub(r"\$\{?cluster\}?", ".*", q)}
             for i, q in enumerate(queries)]
    spec = tmp_path / "dashboard-rules.yml"
    spec.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    done = subprocess.run([promtool(), "check", "rules", str(spec)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and f"SUCCESS: {len(rules)} rules found" in done.stdout, done.stdout + done.stderr
