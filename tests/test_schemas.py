"""The shipped JSON Schemas: real reports and the documented hosts files validate, wrong ones do not.

Every report.json the rest of the suite writes is validated too, when the session ends (conftest.py).
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from schema_check import errors, schema

from preflight.checks import known_params
from preflight.inventory import InventoryError, parse_inventory

ROOT = Path(__file__).resolve().parent.parent


def preflight(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "preflight", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=None, timeout=120, check=False)


@pytest.mark.parametrize("name", ["report", "hosts"])
def test_the_schemas_are_valid_json_schemas(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema(name))


@pytest.fixture(scope="module")
def local_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real `preflight run` of this machine (no SSH) with a baseline and --max-unhealthy: every optional part."""
    tmp = tmp_path_factory.mktemp("local-report")
    first = preflight("run", "--report-dir", tmp / "first", cwd=tmp)
    assert first.returncode in (0, 1, 4), first.stderr
    saved = preflight("baseline", "save", tmp / "first" / "report.json", "--force", "--baseline", tmp / "b.json",
                      cwd=tmp)
    assert saved.returncode == 0, saved.stderr
    second = preflight("run", "--report-dir", tmp / "second", "--baseline", tmp / "b.json", "--max-unhealthy", "50%",
                       cwd=tmp)
    assert second.returncode in (0, 1, 3, 4), second.stderr
    report: dict[str, Any] = json.loads((tmp / "second" / "report.json").read_text())
    return report


def test_a_real_report_validates(local_report: dict[str, Any]) -> None:
    assert {"cluster", "drain", "baseline"} <= set(local_report)
    assert any(f["check"].startswith("baseline.") for f in local_report["findings"])
    assert errors(local_report, "report") == []


def test_preflight_node_and_json_output_validate(tmp_path: Path) -> None:
    node = preflight("node", "--json", cwd=tmp_path)
    assert node.returncode in (0, 1, 4), node.stderr
    assert errors(json.loads(node.stdout), "report") == []


BROKEN: list[tuple[str, Any, str]] = [
    ("schema", "preflight.report/2", "schema"),
    ("verdict", "bad", "verdict"),
    ("summary", {"pass": 1}, "summary"),
    ("findings.0.status", "ok", "findings/0/status"),
    ("findings.0.device", "0", "findings/0/device"),
    ("findings.0.adress", "x", "findings/0"),
    ("hosts.0.reachable", "yes", "hosts/0/reachable"),
    ("cluster.master_port", 70000, "cluster/master_port"),
    ("history", {"store": "h.sqlite", "since": "2026-11-20T00:00:00Z", "window_days": 7, "flap_changes": 3,
                 "half_life_days": 7.0, "runs": 2, "hosts": [{"host": "n1", "flapping": [],
                                                             "lemon": {"score": 2, "runs": 2, "failed_runs": 1}}]},
     "history/hosts/0/lemon/score"),
]


@pytest.mark.parametrize(("where", "value", "path"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_wrong_report_fails(local_report: dict[str, Any], where: str, value: Any, path: str) -> None:
    report = copy.deepcopy(local_report)
    *parents, key = where.split(".")
    target: Any = report
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[key] = value
    found = errors(report, "report")
    assert found and all(e.startswith(f"{path}:") for e in found), found


def test_a_report_missing_a_key_fails(local_report: dict[str, Any]) -> None:
    report = {k: v for k, v in local_report.items() if k != "findings"}
    assert errors(report, "report") == ["(top): 'findings' is a required property"]


def documented_hosts_files() -> list[tuple[str, str]]:
    """(where, YAML text) of every hosts.yaml in README.md, docs/ and examples/; a `yaml` block of the docs
    without `hosts:` is a part of one (`checks:` alone) and is read with one host added. Blocks of other
    files (explain's signatures.yaml: a top-level `signatures:`; Prometheus' configuration and rules) are left
    out."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for n, block in enumerate(re.findall(r"```yaml\n(.*?)```", doc.read_text(), flags=re.S)):
            if re.match(r"\s*(?:signatures|scrape_configs|groups):", block):  # explain's signatures, Prometheus
                continue
            found.append((f"{doc.relative_to(ROOT)}#{n}", block))
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        if path.name.startswith("hosts"):
            found.append((str(path.relative_to(ROOT)), path.read_text()))
    return found


def test_the_documented_hosts_files_are_found() -> None:
    where = [w for w, _ in documented_hosts_files()]
    assert "README.md#0" in where and "examples/hosts.yaml" in where


@pytest.mark.parametrize(("where", "text"), documented_hosts_files(), ids=[w for w, _ in documented_hosts_files()])
def test_documented_hosts_files_validate(where: str, text: str) -> None:
    data = yaml.safe_load(text)
    if isinstance(data, dict) and "hosts" not in data:
        data["hosts"] = ["n1"]
        text = yaml.safe_dump(data)
    assert errors(data, "hosts") == []
    parse_inventory(text, Path(where), known_params())  # and preflight reads it


WRONG_HOSTS = [
    "hosts:\n  - name: n1\n    adress: 10.0.0.1\n",
    "hosts:\n  - name: n1\n    port: ssh\n",
    "hosts: [n1]\ncluster:\n  accelerator: tpu\n",
    "hosts: [n1]\ncluster:\n  master_port: 70000\n",
    "hosts: [n1]\ndefaults:\n  env:\n    1BAD: x\n",
    "hosts: [n1]\nchecks:\n  sysctl:\n    min_somaxconn: big\n",
    "hosts: [n1]\nchecks:\n  sysctl:\n    min_somaxcon: 1024\n",
    "hosts: [n1]\nchecks:\n  nosuchcheck: {}\n",
    "hosts: []\n",
    "defaults:\n  user: root\n",
]


@pytest.mark.parametrize("text", WRONG_HOSTS)
def test_a_wrong_hosts_file_fails_the_schema_as_preflight_refuses_it(text: str) -> None:
    assert errors(yaml.safe_load(text), "hosts")
    with pytest.raises(InventoryError):
        parse_inventory(text, Path("hosts.yaml"), known_params())
