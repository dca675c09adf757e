"""JSON report: the versioned contract (schema ``preflight.report/1``), written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from preflight.delivery import write_atomic
from preflight.model import SCHEMA, Finding, HostResult, RedactedReport, Report


def new_report_dir(base: Path = Path("reports")) -> Path:
    """A fresh ``reports/<UTC time>/`` (``-2``, ``-3``... when two runs share a second), created; where the
    current directory is not writable (``cd /proc``), under ``$XDG_STATE_HOME/preflight/reports``
    (``~/.local/state/preflight/reports``), else the temporary directory. The report says where it went."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "preflight" / "reports"
    for root in (base, state, Path(tempfile.gettempdir()) / "preflight-reports"):
        candidate, n = root / stamp, 1
        while True:
            try:
                candidate.mkdir(parents=True, exist_ok=False)
                return candidate
            except FileExistsError:
                n += 1
                candidate = root / f"{stamp}-{n}"
            except OSError:  # read-only or not ours: the next place
                break
    raise OSError(f"cannot create a report directory under {base}, {state} or the temporary directory")


def dumps(report: RedactedReport) -> str:
    """The report as JSON text: each top-level key on its line, and each item of a top-level list (a finding, a
    host) on one line of its own, easy to grep and to diff.

    Written by json's C encoder (``indent`` would take its pure-Python one: ~10x slower, 0.1 s at 128 hosts,
    after every host has answered), once per report (report.json, then ``--json``: ``RedactedReport.text``).

    >>> from preflight.model import Finding, Status
    >>> text = dumps(Report([], [Finding("os.shm", "n1", Status.PASS, "ok")], ["os"], "", 0.5).redacted())
    >>> lines = text.splitlines()
    >>> lines[lines.index('  "findings": ['):][:3]
    ['  "findings": [', '    {"check": "os.shm", "host": "n1", "status": "pass", "message": "ok", "observed": null, \
"expected": null, "remedy": null}', '  ],']
    """
    return report.text("json", _dumps)


def _dumps(report: RedactedReport) -> str:
    lines = []
    for key, value in report.to_dict().items():
        if isinstance(value, list) and value:
            text = "[\n" + ",\n".join("    " + json.dumps(item) for item in value) + "\n  ]"
        else:
            text = json.dumps(value)
        lines.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write(report: RedactedReport, directory: Path) -> Path:
    """Write ``directory/report.json`` via a temporary file, so a reader never sees half a report."""
    directory.mkdir(parents=True, exist_ok=True)
    return write_atomic(directory / "report.json", dumps(report))


class ReportFormatError(ValueError):
    """The file is not a preflight report this version can read (wrong schema, not JSON, missing keys)."""


def from_dict(data: object) -> Report:
    """Rebuild a Report from its JSON form; unknown keys are kept in ``extra`` or ignored.

    >>> from preflight.model import Finding, Status
    >>> r = from_dict({"schema": "preflight.report/1", "hosts": [{"name": "n1", "address": "n1", "reachable": True}],
    ...                "findings": [{"check": "os.shm", "host": "n1", "status": "pass", "message": "ok"}]})
    >>> r.findings[0].status.value, r.hosts[0].name
    ('pass', 'n1')
    """
    if not isinstance(data, dict):
        raise ReportFormatError("not a preflight report: the top level is not a JSON object")
    schema = data.get("schema")
    if schema != SCHEMA:
        raise ReportFormatError(f"not a preflight report: schema is {schema!r}, expected {SCHEMA!r}")
    try:
        hosts = [HostResult(name=str(h["name"]), address=str(h.get("address", h["name"])),
                            reachable=bool(h.get("reachable", False)), seconds=float(h.get("seconds") or 0.0),
                            error=h.get("error")) for h in data.get("hosts") or []]
        findings = [Finding.from_dict(f) for f in data.get("findings") or []]
        known = {"schema", "tool_version", "started", "duration_s", "complete", "verdict", "exit_code", "checks",
                 "hosts", "findings", "summary"}
        return Report(hosts=hosts, findings=findings, checks=[str(c) for c in data.get("checks") or []],
                      started=str(data.get("started") or ""), duration_s=float(data.get("duration_s") or 0.0),
                      complete=bool(data.get("complete", True)), tool_version=str(data.get("tool_version") or ""),
                      extra={k: v for k, v in data.items() if k not in known})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReportFormatError(f"not a valid preflight report: {type(exc).__name__}: {exc}") from None


def load(path: Path) -> RedactedReport:
    """Read a saved report.json; ReportFormatError (with the path) when it cannot be used."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportFormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReportFormatError(f"{path}: not JSON: {exc}") from None
    try:
        return from_dict(data).redacted()  # a saved report is shown again: redacted like any output
    except ReportFormatError as exc:
        raise ReportFormatError(f"{path}: {exc}") from None


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (node_exporter's textfile collector may read it at any time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, text)
