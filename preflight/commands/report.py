"""``preflight report FILE.json``: re-render a saved run without touching the cluster.

Example: preflight report reports/20261122T014658Z/report.json --html out.html --junit junit.xml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from preflight import exit_codes


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        file: Annotated[Path, typer.Argument(help="a saved report.json")],
        html: Annotated[Path | None, typer.Option(help="write the HTML report here")] = None,
        markdown: Annotated[Path | None, typer.Option(help="write the Markdown summary here")] = None,
        junit: Annotated[Path | None, typer.Option(help="write JUnit XML here")] = None,
        prometheus: Annotated[Path | None, typer.Option(help="write a Prometheus textfile here")] = None,
        terminal_out: Annotated[bool, typer.Option("--terminal", help="print the terminal report (the default "
                                                   "when no file option is given)")] = False,
    ) -> None:
        """Re-render a saved report.json (HTML, Markdown, JUnit, Prometheus or the terminal report).

        Exit code: the saved run's verdict (0 / 1), 2 when the file is not a preflight report.
        """
        from rich.console import Console

        from preflight.render import json_report, terminal
        from preflight.render.outputs import ReportOutputs

        try:
            saved = json_report.load(file)
        except json_report.ReportFormatError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        outputs = ReportOutputs(junit=junit, prometheus=prometheus, markdown=markdown, html=html)
        written = outputs.write(saved)
        if len(written) < len(outputs.targets()):
            raise typer.Exit(exit_codes.USAGE)
        if terminal_out or not outputs.targets():
            terminal.render(saved, Console(markup=False, highlight=False))
        raise typer.Exit(exit_codes.for_report(saved))
