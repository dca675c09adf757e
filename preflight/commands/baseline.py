"""``preflight baseline save FILE.json``: keep a known-good run; `preflight run --baseline PATH` and
`preflight diff NEW.json` compare later runs with it.

Example: preflight baseline save reports/20261122T014658Z/report.json
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from preflight import exit_codes

BaselineOption = Annotated[Path | None, typer.Option(help="where the baseline is kept "
                                                     "(default ~/.local/share/preflight/baseline.json)")]


def register(app: typer.Typer) -> None:
    group = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,  # as cli.app's
                        help="Keep a known-good run to compare later runs with.")
    app.add_typer(group, name="baseline")

    @group.command("save")
    def save(file: Annotated[Path, typer.Argument(help="report.json of a known-good run")],
             baseline: BaselineOption = None,
             force: Annotated[bool, typer.Option(help="save even when the run has fail/error findings")] = False,
             ) -> None:
        """Save a report as the baseline (refuses a failing run unless --force)."""
        from preflight.compare import default_baseline_path
        from preflight.render import json_report

        try:
            report = json_report.load(file)
        except json_report.ReportFormatError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        if report.exit_code() != 0 and not force:
            sys.stderr.write(f"preflight: {file} has fail/error findings: not a known-good run "
                             "(use --force to save it anyway)\n")
            raise typer.Exit(exit_codes.USAGE)
        target = (baseline or default_baseline_path()).expanduser()
        try:
            json_report.write_text(target, json_report.dumps(report))
        except OSError as exc:
            sys.stderr.write(f"preflight: cannot write {target}: {exc.strerror or exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        print(f"baseline: {target} ({len(report.hosts)} hosts, started {report.started or '?'})")

    @group.command("show")
    def show(baseline: BaselineOption = None) -> None:
        """Print where the baseline is and what it holds."""
        from preflight.compare import default_baseline_path, pair_figures, version_values
        from preflight.render import json_report

        target = (baseline or default_baseline_path()).expanduser()
        if not target.exists():
            sys.stderr.write(f"preflight: no baseline at {target} yet: save one from a healthy run with "
                             "`preflight baseline save REPORT.json`\n")
            raise typer.Exit(exit_codes.USAGE)
        try:
            report = json_report.load(target)
        except json_report.ReportFormatError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        from preflight.render.terminal import hosts_text

        print(f"baseline: {target}: {hosts_text(len(report.hosts))}, started {report.started or '?'}, "
              f"{len(pair_figures(report))} all_reduce pairs, {len(version_values(report))} host versions")
