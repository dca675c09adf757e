"""Validate documents against preflight's shipped JSON Schemas (preflight/schemas/*.json) with jsonschema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema


def schema(name: str) -> dict[str, Any]:
    """A shipped schema, read as package data: ``schema("report")`` is report.schema.json."""
    text = resources.files("preflight").joinpath("schemas").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def errors(document: object, name: str) -> list[str]:
    """Every way ``document`` breaks the schema, as ``path: message`` lines (empty: it validates)."""
    validator = jsonschema.Draft202012Validator(schema(name))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))]


def invalid_reports(root: Path) -> list[str]:
    """``path: error`` for every report.json under ``root`` that preflight wrote and the schema refuses."""
    problems = []
    for path in sorted(root.rglob("report.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # half-written on purpose by a test, or not ours: the readers' own tests cover those
        problems += [f"{path}: {error}" for error in errors(data, "report")]
    return problems
