"""Keep the commands stored in parse fixtures equal to what the checks' probes() build today.

    python3 tests/fixture_commands.py --check            # list stale fixtures, exit 1 if any (the default)
    python3 tests/fixture_commands.py --update [PATH...]  # rewrite their "commands" (after a deliberate change)

Each parse fixture (tests/fixtures/<check ident>/parse/*.json, format in preflight/fixture_format.py and
tests/fixtures/README.md) names its probes' commands and the host/cluster ``context`` they were built for.
``--update`` rebuilds them with ``probes()`` for that context and writes the ones that changed, keeping
everything else in the file as it is. It never touches an
output: a fixture with an output for a key probes() no longer builds, or without a context, is reported
and left for a person to re-record or fix.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from preflight.checks import all_checks  # noqa: E402
from preflight.checks.base import Check  # noqa: E402
from preflight.fixture_format import commands, host_and_cluster  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
UPDATE = "python3 tests/fixture_commands.py --update"


def parse_fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*/parse/*.json"))


def checks() -> dict[str, Check]:
    """Check ident -> check: fixture folders are named by ident, never by module."""
    return {c.ident: c for c in all_checks()}


def _name(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def diff_hint(stored: str, today: str) -> str:
    """Where two commands part, and a line diff (split at newlines and at ``; ``) of the two."""
    at = len(os.path.commonprefix([stored, today]))
    lines = [f"  first difference at character {at}:",
             f"    stored: {stored[max(0, at - 30):at + 50]!r}",
             f"    today:  {today[max(0, at - 30):at + 50]!r}"]

    def split(text: str) -> list[str]:
        return re.split(r"(?<=;) |\n", text)
    diff = list(difflib.unified_diff(split(stored), split(today), "stored", "probes() today", n=1, lineterm=""))
    return "\n".join(lines + ["    " + line for line in diff[:40]] + (["    ..."] if len(diff) > 40 else []))


def expected_commands(fixture: Mapping[str, Any], check: Check) -> dict[str, str]:
    host, cluster = host_and_cluster(fixture["context"])
    return commands(check, host, cluster)


def problems(path: Path, fixture: Mapping[str, Any], known: Mapping[str, Check]) -> list[str]:
    """Why ``fixture`` (read from ``path``) is not current; [] when every stored command is today's."""
    where = _name(path)
    ident = path.parts[-3]
    check = known.get(ident)
    if check is None:
        return [f"{where}: no check has the ident {ident!r} (folders are named by check ident; known: "
                f"{', '.join(sorted(known))})"]
    if not isinstance(fixture.get("context"), dict):
        return [f"{where}: no \"context\" (the host and cluster the commands are built for): add one, "
                f"then run {UPDATE} {where}"]
    stored: dict[str, str] = fixture.get("commands") or {}
    outputs: dict[str, Any] = fixture.get("outputs") or {}
    found = []
    if "commands" not in fixture or stored.keys() != outputs.keys():
        found.append(f"{where}: \"commands\" and \"outputs\" name different probe keys "
                     f"({sorted(stored)} vs {sorted(outputs)}): every output needs the command that printed it; "
                     f"run {UPDATE} {where}")
    today = expected_commands(fixture, check)
    for key in outputs:
        if key not in today:
            found.append(f"{where}: probe key {key!r} of check {ident!r}: probes() no longer builds this key for "
                         f"the fixture's context (it builds: {', '.join(today) or 'nothing'}). The output came "
                         f"from a command that no longer exists: re-record the fixture, or rename the key in "
                         f"\"outputs\" if the probe was only renamed, then run {UPDATE} {where}")
        elif key in stored and stored[key] != today[key]:
            found.append(f"{where}: probe key {key!r} of check {ident!r}: the stored command is not what probes() "
                         f"builds today.\n{diff_hint(stored[key], today[key])}\n  If the command was changed on "
                         f"purpose, make sure the output is still what it prints, then run {UPDATE} {where}")
    return found


def _read(path: Path) -> tuple[dict[str, Any], int]:
    text = path.read_text(encoding="utf-8")
    indent = re.match(r"\{\n( +)\"", text)
    return json.loads(text), len(indent.group(1)) if indent else 2


def update(path: Path, known: Mapping[str, Check]) -> bool:
    """Rewrite ``path``'s stale commands in place; whether it changed. Never touches outputs or facts."""
    fixture, indent = _read(path)
    check = known.get(path.parts[-3])
    if check is None or not isinstance(fixture.get("context"), dict):
        return False
    today = expected_commands(fixture, check)
    stored: dict[str, str] = fixture.get("commands") or {}
    new: dict[str, str] = {}
    for key in fixture.get("outputs", {}):
        if key not in today:  # its probe is gone: left as it is, for a person to re-record or rename
            if key in stored:
                new[key] = stored[key]
        elif key in stored and stored[key] == today[key]:
            new[key] = stored[key]  # kept as stored: equal but for a documented volatile value
        else:
            new[key] = today[key]
    if "commands" in fixture and list(new.items()) == list(stored.items()):
        return False
    ordered: dict[str, Any] = {}
    for name, value in fixture.items():  # "commands" goes right before "outputs" when it is new
        if name == "outputs" and "commands" not in fixture:
            ordered["commands"] = new
        ordered[name] = new if name == "commands" else value
    path.write_text(json.dumps(ordered, indent=indent) + "\n", encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list stale fixtures, exit 1 if any (default)")
    mode.add_argument("--update", action="store_true", help="rewrite the stored commands of stale fixtures")
    parser.add_argument("paths", nargs="*", type=Path, help="parse fixtures (default: all of tests/fixtures)")
    args = parser.parse_args(argv)
    known = checks()
    paths = args.paths or parse_fixtures()
    if args.update:
        for path in paths:
            if update(path, known):
                print(f"updated {_name(path)}")
    left = 0
    for path in paths:
        fixture, _ = _read(path)
        found = problems(path, fixture, known)
        left += bool(found)
        for problem in found:
            print(problem)
        missing = [key for key in expected_commands(fixture, known[path.parts[-3]])
                   if key not in fixture.get("outputs", {})] if not found else []
        if missing:
            print(f"note: {_name(path)} has no output for {', '.join(missing)} (parse sees those probes as absent)")
    print(f"{len(paths)} parse fixture(s), {left} with stale or missing commands")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
