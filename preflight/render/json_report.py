"""JSON report: the versioned contract (schema ``preflight.report/1``), written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

from preflight.model import Report


def dumps(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n"


def write(report: Report, directory: Path) -> Path:
    """Write ``directory/report.json`` via a temporary file, so a reader never sees half a report."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "report.json"
    tmp = directory / f".report.json.{os.getpid()}.tmp"
    tmp.write_text(dumps(report), encoding="utf-8")
    os.replace(tmp, target)
    return target
