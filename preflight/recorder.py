"""Write parse fixtures ``{command, outputs, facts}`` from a real run (``preflight run --record DIR``).

Each reachable host and check gives ``DIR/<family>/parse/<host>.json``; copy the interesting ones
into ``tests/fixtures/`` and the parser tests pick them up.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

from preflight.checks.base import planned_probes
from preflight.engine import Engine, _safe_parse


def record(engine: Engine, directory: Path) -> list[Path]:
    written = []
    for check in engine.checks:
        for name, gather in engine.gathered.items():
            outputs = gather.outputs.get(check.ident)
            if outputs is None:
                continue
            commands = {p.key: p.command for p in planned_probes(check, gather.host, engine.inventory.cluster)}
            fixture = {
                "commands": commands,
                "outputs": {key: asdict(out) for key, out in outputs.items()},
                "facts": _safe_parse(check, outputs),
            }
            target = directory / check.ident / "parse" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(fixture, indent=2) + "\n", encoding="utf-8")
            written.append(target)
    return written
