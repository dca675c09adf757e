"""``preflight explain LOG [LOG...]``: the root cause of a failed launch from its logs, and the checks
that verify it (``--hosts FILE`` runs them right away).

Example: ``preflight explain rank0.log rank1.log --hosts hosts.yaml``
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from preflight import exit_codes

if TYPE_CHECKING:
    from preflight.explain.matcher import Explanation, Match
    from preflight.explain.signature import Signature



def register(app: typer.Typer) -> None:
    """Add the ``explain`` command to the CLI."""
    app.command("explain")(explain)


def explain(
    logs: Annotated[list[str] | None, typer.Argument(help="log files (one per rank) or directories of rank logs "
                                                     "('-' or none: stdin)")] = None,
    hosts: Annotated[Path | None, typer.Option("--hosts", "-H", help="run the checks that verify the best "
                                               "match on these hosts")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print {\"matches\": [...]} (best first)")] = False,
    report_dir: Annotated[Path | None, typer.Option(help="with --hosts: where report.json goes "
                                                    "(default reports/<UTC time>/)")] = None,
    signatures: Annotated[Path | None, typer.Option("--signatures", help="YAML file of extra signatures "
                                                    "(added to ~/.config/preflight/signatures.yaml)")] = None,
    list_catalog: Annotated[bool, typer.Option("--list", help="print the signature catalog and exit")] = False,
    saved_report: Annotated[Path | None, typer.Option("--report", help="a saved `preflight run` report.json: "
                                                      "confirm or rule out each cause by what its checks saw "
                                                      "on the hosts")] = None,
) -> None:
    """Explain a failed distributed launch from its logs (torchrun, DeepSpeed, NCCL, gloo, HCCL).

    Example: preflight explain rank0.log rank1.log --hosts hosts.yaml
    """
    import sys

    from preflight.explain.matcher import explain_texts

    catalog = _catalog(signatures)
    if list_catalog:
        sys.stdout.write(render_catalog(catalog))
        raise typer.Exit(exit_codes.OK)
    if not logs and sys.stdin.isatty():
        sys.stderr.write("usage: preflight explain LOG|DIR [...]  (or pipe a log: ... | preflight explain -)\n"
                         "       preflight explain --list          (the known failure signatures)\n")
        raise typer.Exit(exit_codes.USAGE)
    texts = _read_logs(logs or ["-"])
    result = explain_texts(texts, catalog)
    if not result.matches and not json_out:
        for name, text in texts.items():
            why = _unreadable(text)
            if why:
                sys.stderr.write(f"preflight: {name}: {why}\n")
    if saved_report is not None:
        raise typer.Exit(_with_report(result, saved_report, json_out, hosts))
    checks = list(result.best.signature.checks) if result.best else []
    if not hosts or not checks:
        _print(result, json_out)
        if hosts:
            sys.stderr.write("preflight: no check verifies this cause; nothing was run on the hosts\n")
        raise typer.Exit(exit_codes.OK)
    raise typer.Exit(_verify(result, hosts, checks, json_out, report_dir))


def _read_logs(names: list[str]) -> dict[str, str]:
    """``{name: text}`` of every log named: files, ``-`` (stdin) and directories (their rank logs, recursively:
    ``preflight.explain.logdir``); a log that cannot be read, or a directory without logs, stops with a usage
    error."""
    import sys

    from preflight.explain.logdir import MAX_FILES, SUFFIXES, log_files
    from preflight.explain.matcher import read_file, read_log

    texts: dict[str, str] = {}
    for name in names:
        if name == "-":
            texts["<stdin>"] = read_log(sys.stdin.buffer)
            continue
        path = Path(name)
        files = log_files(path) if path.is_dir() else [path]
        if not files:
            sys.stderr.write(f"preflight: {name}: no log files ({', '.join('*' + s for s in SUFFIXES)}) in this "
                             "directory\n")
            raise typer.Exit(exit_codes.USAGE)
        if len(files) >= MAX_FILES:
            sys.stderr.write(f"preflight: {name}: only the first {MAX_FILES} log files are read\n")
        for file in files:
            try:
                texts[str(file)] = read_file(file)
            except OSError as exc:
                sys.stderr.write(f"preflight: {file}: cannot read the log: {exc.strerror or exc}\n")
                raise typer.Exit(exit_codes.USAGE) from None
    return texts


def _catalog(extra: Path | None) -> tuple[Signature, ...]:
    """The built-in catalog merged with ~/.config/preflight/signatures.yaml (if present) and ``extra``;
    a bad file stops with a usage error naming file:line."""
    import sys

    from preflight.explain.catalog import CATALOG
    from preflight.explain.user import UserSignatureError, default_path, load_signatures, merge

    paths = [p for p in (default_path(),) if p.is_file()] + ([extra] if extra else [])
    users: list[Signature] = []
    try:
        for path in paths:
            users.extend(load_signatures(path))
    except UserSignatureError as exc:
        sys.stderr.write(f"preflight: {exc}\n")
        raise typer.Exit(exit_codes.USAGE) from None
    return merge(CATALOG, users)


def _unreadable(text: str) -> str:
    """Why a log cannot match anything: empty, or binary rather than text ('' when it is a text log).

    >>> _unreadable(""), _unreadable("\\x00\\x01\\ufffd" * 10), _unreadable("ok")
    ('the file is empty', 'the file looks binary (not a text log)', '')
    """
    if not text.strip():
        return "the file is empty"
    sample = text[:65536]
    odd = sum(1 for ch in sample if ch in "\x00\ufffd" or (ord(ch) < 32 and ch not in "\n\r\t\f\v\x1b"))
    if odd > len(sample) * 0.1:
        return "the file looks binary (not a text log)"
    return ""


def render_catalog(catalog: tuple[Signature, ...]) -> str:
    """One line per signature: id, category, where it comes from; user entries marked.

    >>> from preflight.explain.catalog import CATALOG
    >>> render_catalog(CATALOG).splitlines()[0].split()[:2]
    ['c10d.port_in_use', 'port-in-use']
    """
    width = max(len(s.id) for s in catalog)
    lines = [f"{s.id:<{width}}  {s.category:<19}  {s.source}" for s in catalog]
    return "\n".join(lines) + f"\n{len(catalog)} signatures\n"


def _print(result: Explanation, json_out: bool, extra: dict[str, Any] | None = None) -> None:
    """The explanation as JSON (with ``extra`` keys) or terminal text; secrets in the log lines masked."""
    import json
    import sys

    from preflight.redact import known_secrets, redact_data, redact_text

    if json_out:
        data = redact_data({**result.to_dict(), **(extra or {})}, known_secrets())
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        secrets = known_secrets()
        sys.stdout.write(redact_text(render(result, secrets), secrets))


def _with_report(result: Explanation, path: Path, json_out: bool, hosts: Path | None) -> int:
    """The explanation joined with a saved report (preflight.explain.join): each cause confirmed, ruled out or
    not checked by the findings of its checks; a confirmed root cause first. The exit code."""
    import sys

    from preflight.explain.join import join
    from preflight.explain.join import render as render_evidence
    from preflight.redact import known_secrets, redact_text
    from preflight.render.json_report import ReportFormatError, load

    if hosts is not None:
        sys.stderr.write("preflight: --report weighs a saved report, --hosts runs the checks now: give one\n")
        return exit_codes.USAGE
    try:
        saved = load(path)
    except ReportFormatError as exc:
        sys.stderr.write(f"preflight: {exc}\n")
        return exit_codes.USAGE
    joined = join(result, saved)
    result.matches = [v.match for v in joined.verdicts]
    if json_out:
        _print(result, json_out, joined.to_dict() if joined.verdicts else {})
    else:
        _print(result, json_out)
        secrets = known_secrets()
        sys.stdout.write(redact_text("\n".join(render_evidence(joined, str(path))), secrets) + "\n")
    return exit_codes.OK


def _verify(result: Explanation, hosts: Path, checks: list[str], json_out: bool, report_dir: Path | None) -> int:
    """Run the checks that verify the best match (as ``preflight run --checks <ids> --hosts FILE`` would);
    with ``--json`` one document: the matches plus the run's report under ``"report"``. The exit code."""
    import sys

    from preflight import app
    from preflight.render import console

    request = app.RunRequest(hosts=hosts, checks=checks)
    try:
        engine = app.prepare(request)
    except app.UsageError as exc:
        sys.stderr.write(f"preflight: {exc}\n")
        return exit_codes.USAGE
    if not json_out:
        _print(result, json_out)
        sys.stdout.write(f"\nrunning: preflight run --checks {','.join(checks)} --hosts {hosts}\n\n")
        sys.stdout.flush()
    bar, engine.on_host_done = console.progress([h.name for h in engine.inventory.hosts], enabled=not json_out)
    run = app.run_cluster(request, engine, gathering=bar)
    path = app.save(run.report, report_dir)
    if json_out:
        _print(result, json_out, {"report": run.report.to_dict()})
    else:
        console.show(run.report, path, json_out)
    if not run.complete:
        console.exit_interrupted(path, exit_codes.interrupted(run.engine.stopped_by))
    return exit_codes.for_report(run.report)


def render(result: Explanation, secrets: Iterable[str] = ()) -> str:
    """The terminal text: the root cause (file, line, rank, cause, fix, checks), then the other matches; log lines
    are redacted (with the literal ``secrets``) before they are cut, so no secret is cut where a mask cannot see it.

    >>> from preflight.explain.matcher import explain_texts
    >>> print(render(explain_texts({"r0.log": "EJ0001: Failed to initialize the HCCP process."})))
    ... # doctest: +ELLIPSIS
    root cause: hccl-stale-process (hccl.ej0001)
      where:  r0.log:1
    ...
    """
    out: list[str] = []
    best = result.best
    if result.clean is not None:
        out.append(f"no failure: {result.clean} ({len(result.files)} log(s))")
        if result.notes:
            out.append(f"notes, not causes ({len(result.notes)}):")
            out.extend(f"  {m.signature.category} {m.signature.id}  {m.file}:{m.line_number}  "
                       f"{_cut(m.line, secrets, 90)}" for m in result.notes[:20])
        return "\n".join(out) + "\n"
    if best is None:
        out.append(f"unknown: no known failure signature in {len(result.files)} log(s)")
        if result.suspects:
            out.append("most suspicious lines:")
            out.extend(f"  {s.file}:{s.line_number}: {_cut(s.line, secrets)}" for s in result.suspects)
        else:
            out.append("no error, exception, timeout or refused connection found either")
        return "\n".join(out) + "\n"
    rank = f", rank {best.rank}" if best.rank is not None else ""
    host = f", host {best.host}" if best.host else ""
    lead = "a lead, not a diagnosis: resembles" if best.layer == "resembles" else "root cause:"
    out.append(f"{lead} {best.signature.category} ({best.signature.id})")
    out.append(f"  where:  {best.file}:{best.line_number}{rank}{host}")
    out.append(f"  line:   {_cut(best.line, secrets)}")
    out.append(f"  found:  {_layer(best)}")
    out.append(f"  cause:  {best.explanation()}")
    out.append(f"  fix:    {best.signature.fix}")
    if best.signature.checks:
        out.append(f"  verify: preflight run --checks {','.join(best.signature.checks)} --hosts hosts.yaml")
    if best.signature.source:
        out.append(f"  source: {best.signature.source}")
    others = result.matches[1:]
    if others:
        out.append(f"other matches ({len(others)}):")
        for m in others[:20]:
            kind = "" if m.signature.root_cause else " (symptom)"
            out.append(f"  {m.signature.category}{kind} {m.signature.id}  {m.file}:{m.line_number}  "
                       f"{_cut(m.line, secrets, 90)}")
            for t in m.timeouts:
                out.append(f"      timeout {t.describe()}")
    return "\n".join(out) + "\n"


def _layer(match: Match) -> str:
    """Which layer recognised the line: its signature, a decoded code, or its component and failure family.

    >>> from preflight.explain.matcher import explain_texts
    >>> _layer(explain_texts({"r.log": "mlx5_0 NET/IB : port 1 link is down"}, tables=()).matches[0])
    'keywords: component NET/IB, failure family link down / transport error (no signature or code table knows it)'
    """
    if match.layer == "code" and match.decoded:
        d = match.decoded[0]
        return f"code {d.code.code} ({d.code.name}) from the {d.table.name} table {d.table.version}"
    if match.layer == "resembles":
        return f"resemblance: the known case {match.signature.source} (nothing recognised the log)"
    if match.layer == "family":
        return (f"keywords: component {match.component or 'not named'}, failure family {match.family} "
                "(no signature or code table knows it)")
    code = f"; the line carries code {match.decoded[0].code.code} ({match.decoded[0].code.name})" \
        if match.decoded else ""
    return f"signature {match.signature.id}{code}"


def _cut(text: str, secrets: Iterable[str], width: int = 160) -> str:
    """``text`` redacted, then cut to ``width``.

    >>> _cut("fetch https://bob:hunter2hunter2@data.example.com/x failed", (), 40)
    'fetch https://***@data.example.com/x ...'
    """
    from preflight.redact import redact_text

    text = redact_text(text, secrets)
    return text if len(text) <= width else text[:width - 3] + "..."
