"""The facts file: one node's gathered raw outputs (``preflight node --facts``), read back by ``preflight judge``.

It is the recorded format (``preflight.fixture_format``) for every check of one host at once: the context
``probes()`` was given, then per check the exact commands and what they printed::

    {"format": "preflight.facts/1",
     "source": "preflight 0.9.0 node --facts, host node1",
     "gathered_at": "2026-11-24T15:40:00+00:00", "seconds": 0.42,
     "run_id": "train-4711",                       # --run-id / PREFLIGHT_RUN_ID, or null
     "selection": {"checks": [], "skip": []},      # --checks / --skip as given to `node`
     "context": {"host": {"name", "python", "env"}, "cluster": {...}},
     "checks": {"sysctl": {"commands": {key: command}, "outputs": {key: {"stdout", "stderr", "exit_status"}}}}}

A check's entry plus ``context`` is a parse fixture for tests/fixtures (add ``facts``). No controller time
travels in it: ``os.clock`` cannot be judged from it. Secrets of the host's env are masked like everywhere.

>>> doc = {"format": FORMAT, "context": {"host": {"name": "n1"}}, "checks": {"sysctl": {"commands": {},
...        "outputs": {"somaxconn": {"stdout": "4096\\n", "stderr": "", "exit_status": 0}}}}}
>>> facts = from_text(json.dumps(doc), "n1.json")
>>> facts.host.name, facts.outputs["sysctl"]["somaxconn"].stdout
('n1', '4096\\n')
>>> from_text('{"format": "preflight.facts/1",\\n "checks": [}', "bad.json")
Traceback (most recent call last):
...
preflight.facts_file.FactsError: bad.json:2: not JSON: Expecting value (column 13)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from preflight import __version__
from preflight.batch import RECEIVED, ProbeOutput
from preflight.checks.base import Check
from preflight.fixture_format import commands, host_and_cluster
from preflight.inventory import ClusterSpec, Host
from preflight.redact import known_secrets, redact_data

FORMAT = "preflight.facts/1"


class FactsError(Exception):
    """A facts file that cannot be read; the message starts with ``FILE:LINE:`` (or ``FILE:``)."""


@dataclass(frozen=True)
class NodeFacts:
    """One facts file, read: whose, from when, under which selection, and every check's raw outputs."""

    path: str
    host: Host
    cluster: ClusterSpec
    gathered_at: str
    seconds: float
    selection: tuple[tuple[str, ...], tuple[str, ...]]  # (--checks, --skip) given to `node`
    outputs: dict[str, dict[str, ProbeOutput]]  # check ident -> probe key -> output
    run_id: str | None = None  # the run it was gathered for (`node --facts --run-id`), None when not given


def dump(checks: Sequence[Check], host: Host, cluster: ClusterSpec, outputs: Mapping[str, Mapping[str, ProbeOutput]],
         gathered_at: str, seconds: float, selection: tuple[Sequence[str], Sequence[str]],
         run_id: str | None = None) -> dict[str, Any]:
    """The facts document of one gather (secrets masked)."""
    entries: dict[str, Any] = {}
    for check in checks:
        got = outputs.get(check.ident)
        if got is None:
            continue
        built = commands(check, host, cluster)
        kept = {key: out for key, out in got.items() if key != RECEIVED}  # the node's own time: no reference
        entries[check.ident] = {"commands": {key: built[key] for key in kept if key in built},
                                "outputs": {key: asdict(out) for key, out in kept.items()}}
    context = {"host": {"name": host.name, "python": host.python, "env": dict(host.env),
                        "interpreter_from": host.interpreter_from}, "cluster": asdict(cluster)}
    doc = {"format": FORMAT, "source": f"preflight {__version__} node --facts, host {host.name}",
           "gathered_at": gathered_at, "seconds": round(seconds, 3), "run_id": run_id,
           "selection": {"checks": list(selection[0]), "skip": list(selection[1])},
           "context": context, "checks": entries}
    return dict(redact_data(doc, known_secrets([host.env])))


def to_text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def load(path: Path) -> NodeFacts:
    """Read one facts file; FactsError names the file (and line) of what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FactsError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return from_text(text, str(path))


def from_text(text: str, name: str) -> NodeFacts:
    """Parse and check one facts document (``name``: the file, for the messages)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FactsError(f"{name}:{exc.lineno}: not JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise FactsError(f"{name}: not a preflight facts file (format {found!r}, expected {FORMAT!r}; "
                         "write one with `preflight node --facts FILE`)")
    context = doc.get("context")
    if not isinstance(context, dict) or not isinstance(context.get("host"), dict) \
            or not isinstance(context["host"].get("name"), str) or not context["host"]["name"]:
        raise FactsError(f"{name}: context.host.name missing: whose facts are these?")
    try:
        host, cluster = host_and_cluster(context)
    except TypeError as exc:
        raise FactsError(f"{name}: bad context: {exc}") from None
    checks = doc.get("checks")
    if not isinstance(checks, dict):
        raise FactsError(f"{name}: 'checks' must be a mapping of check -> outputs")
    outputs: dict[str, dict[str, ProbeOutput]] = {}
    for ident, entry in checks.items():
        raw = entry.get("outputs") if isinstance(entry, dict) else None
        if not isinstance(raw, dict):
            raise FactsError(f"{name}: checks.{ident}.outputs must be a mapping of probe -> output")
        outputs[ident] = {key: _output(out, f"{name}: checks.{ident}.outputs.{key}") for key, out in raw.items()}
    selection = doc.get("selection") or {}
    chosen = tuple(str(s) for s in selection.get("checks", ()) or ())
    skipped = tuple(str(s) for s in selection.get("skip", ()) or ())
    seconds = doc.get("seconds")
    run_id = doc.get("run_id")
    return NodeFacts(name, host, cluster, str(doc.get("gathered_at") or ""),
                     float(seconds) if isinstance(seconds, (int, float)) else 0.0, (chosen, skipped), outputs,
                     str(run_id) if run_id not in (None, "") else None)


def _output(raw: object, where: str) -> ProbeOutput:
    if not isinstance(raw, dict) or not isinstance(raw.get("stdout"), str) \
            or not isinstance(raw.get("stderr", ""), str):
        raise FactsError(f"{where}: expected {{stdout, stderr, exit_status}}")
    status = raw.get("exit_status")
    if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
        raise FactsError(f"{where}: exit_status must be an integer or null")
    return ProbeOutput(raw["stdout"], raw.get("stderr", ""), status, bool(raw.get("truncated", False)))
