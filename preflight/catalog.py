"""What the check registry documents about itself: docs/checks.md and the ``checks:`` part of hosts.yaml's schema.

Both are generated from the registry (``preflight.checks``), never written by hand, and the tests compare the
files on disk with this module's output (``tests/test_catalog.py``). Regenerate with::

    preflight list-checks --markdown > docs/checks.md
    python3 -m preflight.catalog --hosts-schema > preflight/schemas/hosts.schema.json

>>> [line for line in checks_markdown().splitlines() if line.startswith("- finding ids: `sysctl")]
['- finding ids: `sysctl.port_range`, `sysctl.somaxconn`, `sysctl.tcp_max_syn_backlog`']
>>> hosts_schema()["oneOf"][1]["properties"]["checks"]["properties"]["sysctl"]["properties"]["min_somaxconn"]
{'type': 'integer', 'default': 0}
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from preflight.checks import all_checks, known_params
from preflight.checks.base import ENGINE_SUFFIXES, Check, finding_ids
from preflight.inventory import ACCELERATORS

# Finding ids written outside the check registry: by the engine, by options of `run`. Each one is named by a
# literal in the package's source; tests/test_catalog.py fails on one that is missing here or gone there.
RUN_IDS: dict[str, str] = {
    "ssh.connect": "the host was reached, its host key verified, and its probes ran in one session (`error`: why not)",
    "ssh.session": "`error`: the host did not finish within `--host-timeout` (names the checks left)",
    "ssh.sudo": "with `--sudo`: root probes can run (`error`: sudo asks for a password, is missing or silent)",
    "baseline.busbw": "with `--baseline`: a pair's all_reduce busbw fell more than `--baseline-threshold` below it",
    "baseline.versions": "with `--baseline`: a host's versions changed since the baseline (`warn`)",
    "preflight.max_unhealthy": "`--max-unhealthy` passed: too many hosts failed to blame the hosts (exit 3)",
    "preflight.drain_policy": "with `--drain-after`: a failing host drained, held back or flapping, and why (`warn`)",
}

_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))


def _json_type(default: object) -> str | list[str] | None:
    """The JSON Schema type hosts.yaml's reader accepts for a parameter with this default.

    >>> _json_type(3), _json_type(3.0), _json_type(True), _json_type(None)
    ('integer', 'number', 'boolean', None)
    """
    for python_type, name in _JSON_TYPES:
        if isinstance(default, python_type):
            return name
    return None


def _code(values: list[str]) -> str:
    return ", ".join(f"`{v}`" for v in values) if values else "-"


def _applies(check: Check) -> str:
    if not check.accelerators:
        return "every cluster"
    where = " and ".join(sorted(check.accelerators))
    if check.not_applicable is None:
        return f"{where} clusters (elsewhere: no finding)"
    return f"{where} clusters (elsewhere one `skip` finding `{check.skip_id or check.ident}`)"


def _section(check: Check) -> list[str]:
    own = sorted(check.ids)
    extra = sorted(finding_ids(check) - set(own) - {f"{check.family}.{s}" for s in ENGINE_SUFFIXES})
    where = ("`run` and `preflight node` (one host)" if check.scope == "node"
             else "`run` only (it needs the other hosts)")
    runs = "by default" if check.by_default else f"only when named (`--checks {check.ident}`)"
    lines = [f"## `{check.ident}`", "", check.summary, "",
             f"- runs: {runs}, in {where}",
             f"- applies to: {_applies(check)}",
             f"- finding ids: {_code(own)}" + (f"; also {_code(extra)}" if extra else "")]
    if check.needs:
        lines.append(f"- reads the facts of: {_code(list(check.needs))}")
    if check.params:
        lines += ["", f"Parameters (hosts.yaml `checks: {check.family}:`):", "", "| parameter | default |", "|---|---|"]
        lines += [f"| `{name}` | `{json.dumps(value)}` |" for name, value in check.params.items()]
    return [*lines, ""]


def checks_markdown() -> str:
    """docs/checks.md: every check of the registry, its finding ids and parameters (the text on disk must equal it)."""
    checks = all_checks()
    out = ["# Checks", "",
           "<!-- Generated from the check registry by `preflight list-checks --markdown > docs/checks.md`;",
           "     do not edit: tests/test_catalog.py fails when this file differs from the registry. -->", "",
           "Every check `preflight run` knows, in run order, with every finding id it can report and its",
           "parameters. `--checks` / `--skip` take a check, a family or a finding id. What each finding means,",
           "when it fails and why: [checks-reference.md](checks-reference.md); thresholds:",
           "[thresholds.md](thresholds.md); how a check is written: [writing-checks.md](writing-checks.md).", "",
           "| check | what | runs |", "|---|---|---|"]
    out += [f"| [`{c.ident}`](#{c.ident.replace('.', '')}) | {c.summary} | "
            f"{'by default' if c.by_default else 'only when named'} |" for c in checks]
    suffixes = ", ".join(f"`<family>.{s}`" for s in ENGINE_SUFFIXES)
    out += ["", f"Every family also has {suffixes}: the engine's `error` findings when a host timed out",
            "before the check's probes ended, its parser raised or its evaluator raised.", ""]
    for check in checks:
        out += _section(check)
    out += ["## Findings from the run itself", "", "| id | what |", "|---|---|"]
    out += [f"| `{ident}` | {what} |" for ident, what in RUN_IDS.items()]
    out += ["", "`preflight diagnose` reports `diagnose.*` ids: [diagnose.md](diagnose.md).", ""]
    return "\n".join(out)


def _params_schema(params: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    families: dict[str, Any] = {}
    for family, values in sorted(params.items()):
        props: dict[str, Any] = {}
        for name, default in values.items():
            kind = _json_type(default)
            props[name] = {**({"type": kind} if kind else {}), "default": default}
        families[family] = {"type": "object", "properties": props, "additionalProperties": False}
    return {"type": "object", "description": "per-check parameters (docs/checks.md); the defaults are shown",
            "properties": families, "additionalProperties": False}


_SCALAR = {"type": ["string", "number", "boolean"], "description": "read as a string"}
_SETUP = {"description": "shell lines run (under bash) before every python-level probe and worker",
          "oneOf": [{"type": "string", "minLength": 1},
                    {"type": "array", "items": {"type": "string", "minLength": 1}}]}
_ENV = {"type": "object", "description": "the job's environment as the launch will see it",
        "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        "additionalProperties": {"type": ["string", "number", "boolean"]}}
_CONNECTION = {
    "user": _SCALAR, "port": {"$ref": "#/$defs/port"}, "identity_file": _SCALAR, "known_hosts": _SCALAR,
    "python": {**_SCALAR, "description": "the interpreter for python-level probes on the node (default python3)"},
    "proxy_jump": {**_SCALAR, "description": "[user@]host[:port][,...]: a ProxyJump chain"},
    "env": _ENV, "setup": _SETUP,
    "switch": {**_SCALAR, "description": "the switch (or rack) the host hangs off: --bisect keeps groups whole "
                                         "switches and names the path between two (docs/thresholds.md); every "
                                         "host has one, or none"},
}


def hosts_schema() -> dict[str, Any]:
    """The JSON Schema of hosts.yaml (preflight/schemas/hosts.schema.json), with every check's parameters."""
    host = {"type": "object", "required": ["name"],
            "properties": {"name": {**_SCALAR, "description": "a name or a ClusterShell range (gpu[01-16])"},
                           "address": _SCALAR, **_CONNECTION},
            "additionalProperties": False}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:preflight:hosts",
        "title": "preflight hosts.yaml",
        "description": "Generated from preflight.inventory's keys and the check registry by "
                       "`python3 -m preflight.catalog --hosts-schema`; docs/report-schema.md. preflight's own "
                       "reader also refuses YAML aliases, duplicate hosts, bad ranges and a master that is not a host.",
        "oneOf": [
            {"$ref": "#/$defs/hostList", "description": "a bare list of host names"},
            {"type": "object", "required": ["hosts"],
             "properties": {
                 "defaults": {"type": "object", "description": "apply to every host unless it overrides them",
                              "properties": {**_CONNECTION, "ssh_config": {**_SCALAR, "description":
                                                                            "default ~/.ssh/config"}},
                              "additionalProperties": False},
                 "cluster": {"type": "object", "properties": {
                     "accelerator": {"enum": list(ACCELERATORS)},
                     "devices_per_host": {"type": "integer", "minimum": 0},
                     "master": {**_SCALAR, "description": "one of the hosts (default: the first)"},
                     "master_port": {"$ref": "#/$defs/port"}}, "additionalProperties": False},
                 "hosts": {"$ref": "#/$defs/hostList"},
                 "checks": _params_schema(known_params()),
             },
             "additionalProperties": False},
        ],
        "$defs": {
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "hostList": {"type": "array", "minItems": 1, "items": {"oneOf": [
                {"type": ["string", "number"], "description": "a name or a range"}, host]}},
        },
    }


def main(argv: list[str]) -> int:
    """``python3 -m preflight.catalog --hosts-schema | --markdown``: print the generated text."""
    if argv == ["--hosts-schema"]:
        print(json.dumps(hosts_schema(), indent=2))
    elif argv == ["--markdown"]:
        print(checks_markdown(), end="")
    else:
        print("usage: python3 -m preflight.catalog --hosts-schema | --markdown", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
