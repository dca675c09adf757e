"""docs/checks.md and hosts.schema.json are generated from the check registry: the files on disk must be current."""

from __future__ import annotations

import json
import re
from pathlib import Path

from preflight import catalog, drain
from preflight.checks import all_checks
from preflight.checks.base import finding_ids
from preflight.history import policy

ROOT = Path(__file__).resolve().parent.parent
CHECKS_MD = ROOT / "docs" / "checks.md"
ID = re.compile(r"`([a-z0-9_]+(?:\.[a-z0-9_]+)*)`")


def registry_ids() -> set[str]:
    return {i for check in all_checks() for i in finding_ids(check) if not i.endswith((".gather", ".parse",
                                                                                        ".internal"))}


def test_every_finding_id_is_in_checks_md_and_none_is_stale() -> None:
    families = {c.family for c in all_checks()} | {i.split(".")[0] for i in catalog.RUN_IDS}
    documented = {i for i in ID.findall(CHECKS_MD.read_text()) if i.split(".")[0] in families}
    known = registry_ids() | {c.ident for c in all_checks()} | set(catalog.RUN_IDS)
    assert sorted(registry_ids() - documented) == [], "missing from docs/checks.md"
    assert sorted(documented - known) == [], "in docs/checks.md but no check emits it"


def test_checks_md_is_the_generated_text() -> None:
    assert CHECKS_MD.read_text() == catalog.checks_markdown(), \
        "docs/checks.md is stale: run `preflight list-checks --markdown > docs/checks.md`"


def test_hosts_schema_is_the_generated_schema() -> None:
    on_disk = json.loads((ROOT / "preflight" / "schemas" / "hosts.schema.json").read_text())
    assert on_disk == catalog.hosts_schema(), ("hosts.schema.json is stale: run `python3 -m preflight.catalog "
                                               "--hosts-schema > preflight/schemas/hosts.schema.json`")


def literal_ids_outside_the_registry() -> set[str]:
    """Finding ids named by a literal ``Finding("x.y", ...)`` in the package outside checks/, drain's id and the
    drain policy's."""
    found = {drain.CHECK, policy.CHECK}
    for path in (ROOT / "preflight").rglob("*.py"):
        if "checks" not in path.relative_to(ROOT).parts:
            code = "\n".join(line for line in path.read_text().splitlines()  # not doctests
                             if not line.lstrip().startswith((">>>", "...")))
            found |= set(re.findall(r'Finding\(\s*"([a-z0-9_]+(?:\.[a-z0-9_]+)+)"', code))
    return found


def test_run_ids_are_what_the_run_writes() -> None:
    outside = literal_ids_outside_the_registry() - registry_ids()
    assert sorted(outside) == sorted(catalog.RUN_IDS)


def test_the_readme_and_the_layout_link_checks_md() -> None:
    assert "(docs/checks.md)" in (ROOT / "README.md").read_text()
    assert "(checks.md)" in (ROOT / "docs" / "layout.md").read_text()
