"""``preflight explain LOG [LOG...]``: the root cause of a failed launch from its logs, and the checks
that verify it (``--hosts FILE`` runs them right away).

Example: ``preflight explain rank0.log rank1.log --hosts hosts.yaml``
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from preflight.explain.matcher import Explanation

EXIT_OK, EXIT_USAGE = 0, 2


def register(app: typer.Typer) -> None:
    """Add the ``explain`` command to the CLI."""
    app.command("explain")(explain)


def explain(
    logs: Annotated[list[str] | None, typer.Argument(help="log files, one per rank ('-' or none: stdin)")] = None,
    hosts: Annotated[Path | None, typer.Option("--hosts", "-H", help="run the checks that verify the best "
                                               "match on these hosts")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print {\"matches\": [...]} (best first)")] = False,
    report_dir: Annotated[Path | None, typer.Option(help="with --hosts: where report.json goes "
                                                    "(default reports/<UTC time>/)")] = None,
) -> None:
    """Explain a failed distributed launch from its logs (torchrun, DeepSpeed, NCCL, gloo, HCCL).

    Example: preflight explain rank0.log rank1.log --hosts hosts.yaml
    """
    import json
    import sys

    from preflight.explain.matcher import explain_texts, read_file, read_log

    texts: dict[str, str] = {}
    for name in logs or ["-"]:
        if name == "-":
            texts["<stdin>"] = read_log(sys.stdin.buffer)
            continue
        try:
            texts[name] = read_file(Path(name))
        except OSError as exc:
            sys.stderr.write(f"preflight: {name}: cannot read the log: {exc.strerror or exc}\n")
            raise typer.Exit(EXIT_USAGE) from None
    result = explain_texts(texts)
    checks = list(result.best.signature.checks) if result.best else []
    if not hosts:
        if json_out:
            sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        else:
            sys.stdout.write(render(result))
        raise typer.Exit(EXIT_OK)
    if not checks:
        if json_out:
            sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        else:
            sys.stdout.write(render(result))
        sys.stderr.write("preflight: no check verifies this cause; nothing was run on the hosts\n")
        raise typer.Exit(EXIT_OK)
    if json_out:
        raise typer.Exit(_run_checks_json(result, hosts, checks, report_dir))
    sys.stdout.write(render(result) + f"\nrunning: preflight run --checks {','.join(checks)} --hosts {hosts}\n\n")
    sys.stdout.flush()
    raise typer.Exit(_run_checks(hosts, checks, False, report_dir))


def _run_checks(hosts: Path, checks: list[str], json_out: bool, report_dir: Path | None) -> int:
    """The same code path as ``preflight run --checks <ids> --hosts FILE``; its exit code."""
    from preflight.cli import _run

    report = _run(hosts, checks, None, 64, 10.0, None, 60.0, False, json_out, report_dir, None, None)
    return report.exit_code()


def _run_checks_json(result: Explanation, hosts: Path, checks: list[str], report_dir: Path | None) -> int:
    """``--json --hosts``: one JSON document, the matches plus the run's report under ``"report"``."""
    import contextlib
    import io
    import json
    import sys

    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        code = _run_checks(hosts, checks, True, report_dir)
    data = result.to_dict()
    try:
        data["report"] = json.loads(captured.getvalue())
    except ValueError:
        data["report"] = captured.getvalue()
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
    return code


def render(result: Explanation) -> str:
    """The terminal text: the root cause (file, line, rank, cause, fix, checks), then the other matches.

    >>> from preflight.explain.matcher import explain_texts
    >>> print(render(explain_texts({"r0.log": "EJ0001: Failed to initialize the HCCP process."})))
    ... # doctest: +ELLIPSIS
    root cause: hccl-stale-process (hccl.ej0001)
      where:  r0.log:1
    ...
    """
    out: list[str] = []
    best = result.best
    if best is None:
        out.append(f"unknown: no known failure signature in {len(result.files)} log(s)")
        if result.suspects:
            out.append("most suspicious lines:")
            out.extend(f"  {s.file}:{s.line_number}: {_cut(s.line)}" for s in result.suspects)
        else:
            out.append("no error, exception, timeout or refused connection found either")
        return "\n".join(out) + "\n"
    rank = f", rank {best.rank}" if best.rank is not None else ""
    out.append(f"root cause: {best.signature.category} ({best.signature.id})")
    out.append(f"  where:  {best.file}:{best.line_number}{rank}")
    out.append(f"  line:   {_cut(best.line)}")
    out.append(f"  cause:  {best.explanation()}")
    out.append(f"  fix:    {best.signature.fix}")
    if best.signature.checks:
        out.append(f"  verify: preflight run --checks {','.join(best.signature.checks)} --hosts hosts.yaml")
    out.append(f"  source: {best.signature.source}")
    others = result.matches[1:]
    if others:
        out.append(f"other matches ({len(others)}):")
        for m in others[:20]:
            kind = "" if m.signature.root_cause else " (symptom)"
            out.append(f"  {m.signature.category}{kind} {m.signature.id}  {m.file}:{m.line_number}  "
                       f"{_cut(m.line, 90)}")
            for t in m.timeouts:
                out.append(f"      timeout {t.describe()}")
    return "\n".join(out) + "\n"


def _cut(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
