"""One verdict (issue 35): the header word, the exit code, ``recommend_drain``, report.json, JUnit, Prometheus,
Markdown, HTML and ``preflight node``'s line all read ``Report.verdict()`` and never disagree.

A ``fail`` anywhere is FAIL (exit 1) even beside errors; errors alone are ERROR, "could not tell" (exit 4);
``--max-unhealthy`` passed is SUSPECT (exit 3); an error-only host is never recommended for draining.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console

from preflight import drain, exit_codes
from preflight.commands.node import verdict_line
from preflight.model import _EXIT, Finding, HostResult, Report, Status, Verdict, decide
from preflight.render import html, junit, markdown, prometheus, terminal

HOSTS = ("n1", "n2", "n3", "n4")

finding = st.builds(
    lambda check, host, status: Finding(check, host, status, f"{check}: {status.value}"),
    st.sampled_from(["ssh.connect", "os.shm", "sysctl.somaxconn", "net.reachability"]),
    st.sampled_from([*HOSTS, None]),
    st.sampled_from(list(Status)),
)
limits = st.one_of(st.none(), st.sampled_from(["0", "1", "2", "50%", "100%"]))


def judged(findings: list[Finding], limit: str | None) -> Report:
    """A finished run as ``run`` builds it: the findings, then the drain verdict."""
    report = Report([HostResult(h, h, True) for h in HOSTS], findings, ["os"], "2026-11-27T00:00:00+00:00", 1.0)
    return drain.apply(report, limit)[0]


def header(report: Report) -> str:
    out = io.StringIO()
    terminal.render(report.redacted(), Console(file=out, width=100, markup=False, highlight=False, color_system=None))
    return out.getvalue().splitlines()[0]


@settings(max_examples=300, deadline=None)
@given(st.lists(finding, max_size=12), limits)
def test_every_output_says_the_same_verdict(findings: list[Finding], limit: str | None) -> None:
    report = judged(findings, limit)
    verdict = report.verdict()
    statuses = {f.status for f in report.findings}
    tripped = bool(report.extra["drain"]["tripped"])
    # the rule itself
    if tripped:
        assert verdict is Verdict.SUSPECT
    elif Status.FAIL in statuses:
        assert verdict is Verdict.FAIL
    elif Status.ERROR in statuses:
        assert verdict is Verdict.ERROR
    else:
        assert verdict.exit_code == exit_codes.OK
    code = exit_codes.for_report(report)
    assert code == verdict.exit_code == report.to_dict()["exit_code"]
    assert report.to_dict()["verdict"] == verdict.value
    # the words: terminal header, HTML badge, Markdown title, node's line
    assert header(report).split()[-1] == verdict.word
    assert re.search(r'id="verdict"[^>]*>([A-Z]+)<', html.render(report.redacted())).group(1) == verdict.word  # type: ignore[union-attr]
    assert markdown.render(report.redacted()).startswith(f"## preflight: **{verdict.word}**")
    word = verdict_line(report.redacted(), "n1").split(": ", 1)[1].split()[0]
    assert word == ("OK" if code == exit_codes.OK else verdict.word)
    # drain: hosts with a fail only, none when tripped; a fail with a host means something to drain
    recommended = set(report.extra["drain"]["recommend_drain"])
    failing = {f.host for f in report.findings if f.host and f.status == Status.FAIL}
    assert recommended == (set() if tripped else failing)
    # JUnit: a failure exactly when the verdict is FAIL (or SUSPECT over fails); errors alone are <error>
    root = ET.fromstring(junit.render(report.redacted()))
    failures, errors = int(root.get("failures", "0")), int(root.get("errors", "0"))
    assert (failures > 0) == (Status.FAIL in statuses)
    assert (failures == 0 and errors > 0) == (verdict is Verdict.ERROR or (tripped and Status.FAIL not in statuses))
    for suite in root.iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props == {"preflight.verdict": verdict.value, "preflight.exit_code": str(code)}
    # Prometheus: the verdict's number and the exit code
    families = {f.name: f for f in text_string_to_metric_families(prometheus.render(report.redacted()))}
    assert families["preflight_verdict"].samples[0].value == prometheus.VERDICT_VALUE[verdict]
    assert families["preflight_exit_code"].samples[0].value == code


def test_the_models_exit_numbers_are_the_contracts() -> None:
    assert _EXIT == {Verdict.SKIP: exit_codes.OK, Verdict.PASS: exit_codes.OK, Verdict.WARN: exit_codes.OK,
                     Verdict.FAIL: exit_codes.PROBLEMS, Verdict.ERROR: exit_codes.COULD_NOT_TELL,
                     Verdict.SUSPECT: exit_codes.SUSPECT, Verdict.HELD: exit_codes.HELD}


def test_prometheus_ranks_a_fail_above_an_error_on_one_check() -> None:
    """One check on one host with a fail and an error: the series is the fail's (3), not the error's (2)."""
    findings = [Finding("os.shm", "n1", Status.ERROR, "m"), Finding("os.shm", "n1", Status.FAIL, "m")]
    assert decide(findings) is Verdict.FAIL
    text = prometheus.render(judged(findings, None).redacted())
    assert 'preflight_check_status{check="os.shm",host="n1"} 3\n' in text


def test_unreachable_hosts_count_toward_the_limit_but_are_never_drained() -> None:
    """Error-only hosts are "could not tell": not drained, yet they count toward --max-unhealthy (many hosts
    unreachable at once is itself a sign)."""
    findings = [Finding("ssh.connect", h, Status.ERROR, "refused") for h in ("n1", "n2", "n3")]
    findings.append(Finding("sysctl.somaxconn", "n4", Status.FAIL, "128"))
    under = judged(findings, None)
    assert under.extra["drain"]["unhealthy"] == ["n1", "n2", "n3", "n4"]
    assert under.extra["drain"]["recommend_drain"] == ["n4"] and under.verdict() is Verdict.FAIL
    over = judged(findings, "50%")
    assert over.extra["drain"]["recommend_drain"] == [] and over.verdict() is Verdict.SUSPECT
    assert exit_codes.for_report(over) == exit_codes.SUSPECT
