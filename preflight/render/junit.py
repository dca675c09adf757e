"""JUnit XML: one <testsuite> per check family, one <testcase> per check id and host (classname = check id,
name = host), so CI systems show a preflight run like a test run. fail -> <failure>, error -> <error>,
skip -> <skipped>; warnings pass with the warning text in <system-out>. A case with a fail and an error is a
<failure>, as the run's verdict ranks them (``preflight.model.Status``); every <testsuite> carries the run's
verdict and exit code as properties.

>>> from preflight.model import Finding, HostResult, Report, Status
>>> r = Report([HostResult("n1", "n1", True)], [Finding("os.shm", "n1", Status.FAIL, "too small")], ["os"], "", 1.0)
>>> '<failure message="too small"' in render(r.redacted())
True
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from preflight.model import Finding, RedactedReport, Status

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # not allowed in XML 1.0


def _x(value: object) -> str:
    return _INVALID_XML.sub("", str(value))


def _detail(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        lines.append(f"[{f.status.value}] {f.message}")
        if f.observed is not None or f.expected is not None:
            lines.append(f"    observed: {f.observed or '-'}   expected: {f.expected or '-'}")
        if f.remedy:
            lines.append(f"    remedy:   {f.remedy}")
    return _x("\n".join(lines))


def render(report: RedactedReport) -> str:
    """The JUnit XML document as a string."""
    cases: dict[str, dict[tuple[str, str], list[Finding]]] = defaultdict(lambda: defaultdict(list))
    for f in report.findings:
        cases[f.check.split(".", 1)[0]][(f.check, f.host or "(cluster)")].append(f)
    root = ET.Element("testsuites", name="preflight", time=f"{report.duration_s:.3f}")
    verdict = report.verdict()
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for family in sorted(cases):
        suite = ET.SubElement(root, "testsuite", name=_x(family), timestamp=_x(report.started))
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="preflight.verdict", value=verdict.value)
        ET.SubElement(properties, "property", name="preflight.exit_code", value=str(verdict.exit_code))
        numbers = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for (check, host), found in sorted(cases[family].items()):
            case = ET.SubElement(suite, "testcase", classname=_x(check), name=_x(host), time="0")
            status = Status.worst([f.status for f in found])
            worst = [f for f in found if f.status == status]
            numbers["tests"] += 1
            if status == Status.FAIL:
                numbers["failures"] += 1
                ET.SubElement(case, "failure", message=_x(worst[0].message), type="fail").text = _detail(worst)
            elif status == Status.ERROR:
                numbers["errors"] += 1
                ET.SubElement(case, "error", message=_x(worst[0].message), type="error").text = _detail(worst)
            elif status == Status.SKIP:
                numbers["skipped"] += 1
                ET.SubElement(case, "skipped", message=_x(worst[0].message))
            elif status == Status.WARN:
                ET.SubElement(case, "system-out").text = _detail(worst)
        for key, value in numbers.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    if not report.complete:
        root.set("incomplete", "true")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
