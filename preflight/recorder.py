"""Write parse fixtures ``{command, outputs, facts}`` from a real run (``preflight run --record DIR``).

Each reachable host and check gives ``DIR/<family>/parse/<host>.json``; copy the interesting ones
into ``tests/fixtures/`` and the parser tests pick them up. Secrets are masked (``redact.redact_data``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

from preflight.engine import Engine
from preflight.engine.evaluation import safe_parse
from preflight.redact import known_secrets, redact_data


def record(engine: Engine, directory: Path) -> list[Path]:
    written = []
    secrets = known_secrets(h.env for h in engine.inventory.hosts)
    for check in engine.checks:
        for name, gather in engine.gathered.items():
            outputs = gather.outputs.get(check.ident)
            if outputs is None:
                continue
            commands = {p.key: p.command for p in check.probes(gather.host, engine.inventory.cluster)}
            fixture = {
                "commands": commands,
                "outputs": {key: asdict(out) for key, out in outputs.items()},
                "facts": safe_parse(check, outputs),
            }
            target = directory / check.ident / "parse" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(redact_data(fixture, secrets), indent=2) + "\n", encoding="utf-8")
            written.append(target)
    return written
