"""Write parse fixtures from a real run (``preflight run --record DIR``), in tests/fixtures' format.

Each reachable host and check gives ``DIR/<check ident>/parse/<host>.json``:
``{source, context, commands, outputs, facts}`` (preflight.fixture_format). Copy the interesting ones
into ``tests/fixtures/``: the parser tests pick them up, and the fixture test checks their commands are
still what ``probes()`` builds (rebuilt here from the same host and cluster: probes() is pure).
Secrets are masked (``redact.redact_data``), like in every other output.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

from preflight import __version__
from preflight.engine import Engine
from preflight.engine.evaluation import safe_parse
from preflight.fixture_format import commands, context_of
from preflight.redact import known_secrets, redact_data


def record(engine: Engine, directory: Path) -> list[Path]:
    written = []
    secrets = known_secrets(h.env for h in engine.inventory.hosts)
    cluster = engine.inventory.cluster
    for check in engine.checks:
        for name, gather in engine.gathered.items():
            outputs = gather.outputs.get(check.ident)
            if outputs is None:
                continue
            built = commands(check, gather.host, cluster)
            fixture = {
                "source": f"preflight {__version__} run --record, host {name}",
                "context": context_of(check, gather.host, cluster),
                "commands": {key: built[key] for key in outputs if key in built},
                "outputs": {key: asdict(out) for key, out in outputs.items()},
                "facts": safe_parse(check, outputs),
            }
            target = directory / check.ident / "parse" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(redact_data(fixture, secrets), indent=2) + "\n", encoding="utf-8")
            written.append(target)
    return written
