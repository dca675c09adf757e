"""``preflight judge``: the cross-node evaluation of facts files written by ``preflight node --facts``.

Example::

    $ preflight judge facts/ --hosts hosts.yaml
    ... the report of `run` (terminal, --json, report.json/html) from node1.json node2.json ...

Exit codes are ``run``'s (docs/exit-codes.md). A file that cannot be read is named on stderr with its line
and becomes a ``facts.file`` error (exit 4 when nothing fails); the other files are still judged.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from preflight import exit_codes
from preflight.app import UsageError, save
from preflight.cli_options import DrainAfterOption, HistoryOption, NoHistoryOption, split_items
from preflight.facts_current import DEFAULT_MAX_AGE
from preflight.render import console
from preflight.render.outputs import ReportOutputs


def _store(path: Path | None, off: bool) -> Path | None:
    from preflight.app import history as history_app

    return history_app.where(path, off)


def register(app: typer.Typer) -> None:
    """Add ``preflight judge`` to the CLI."""

    @app.command()
    def judge(
        paths: Annotated[list[Path], typer.Argument(help="facts files, or folders of *.json facts files")],
        hosts: Annotated[Path | None, typer.Option("--hosts", "-H", help="hosts.yaml: the hosts expected (one "
                                                   "without a file is an error), the cluster and check "
                                                   "parameters; default: the files' hosts")] = None,
        checks: Annotated[list[str] | None, typer.Option("--checks", "-c", help="judge only these (default: "
                                                         "what the files were gathered with)")] = None,
        skip: Annotated[list[str] | None, typer.Option("--skip", help="skip these checks or finding ids")] = None,
        accelerator: Annotated[str, typer.Option(help="npu | gpu | cpu | auto (hosts.yaml's, else the files')")
                               ] = "auto",
        max_unhealthy: Annotated[str | None, typer.Option(help="N hosts or P%: past it, exit "
                                                          f"{exit_codes.SUSPECT}, recommend no drain")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the JSON report instead")] = False,
        report_dir: Annotated[Path | None, typer.Option(help="where report.json goes "
                                                        "(default reports/<UTC time>/)")] = None,
        junit: Annotated[Path | None, typer.Option(help="also write a JUnit XML report here")] = None,
        prometheus: Annotated[Path | None, typer.Option(help="also write a Prometheus textfile here")] = None,
        markdown: Annotated[Path | None, typer.Option(help="also write a Markdown summary here")] = None,
        run_id: Annotated[str | None, typer.Option(envvar="PREFLIGHT_RUN_ID", help="judge only the files of this "
                                                   "run (`node --facts --run-id`); default: the run most files "
                                                   "carry; another run's file is an error, not judged")] = None,
        max_age: Annotated[str, typer.Option(help="a file gathered longer ago is an error, not judged (seconds, "
                                             "or 30m, 2h, 1d; 0: no bound)")] = DEFAULT_MAX_AGE,
        history: HistoryOption = None,
        no_history: NoHistoryOption = False,
        drain_after: DrainAfterOption = None,
    ) -> None:
        """Judge facts files of many nodes together, as `run` would (active checks and os.clock: not run).

        Example: preflight judge facts/ --hosts hosts.yaml
        """
        from preflight.app import judge as judge_app  # facts files: only `judge` reads them

        request = judge_app.JudgeRequest(paths=paths, hosts=hosts, checks=split_items(checks), skip=split_items(skip),
                                         accelerator=accelerator, max_unhealthy=max_unhealthy,
                                         outputs=ReportOutputs.build(junit=junit, prometheus=prometheus,
                                                                     markdown=markdown),
                                         run_id=run_id, max_age=max_age, drain_after=drain_after,
                                         history=_store(history, no_history))
        try:
            report = judge_app.judge_facts(request)
        except UsageError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        for problem in request.problems:
            sys.stderr.write(f"preflight: {problem}\n")
        path = save(report, report_dir, request.outputs)
        console.show(report, path, json_out)
        not_run = [f.check for f in report.findings if f.observed == judge_app.NOT_RUN]
        if not_run and not json_out:
            sys.stdout.write(f"not run (they need `preflight run`'s controller): {', '.join(not_run)}\n")
        from preflight.app import history as history_app  # after the verdict, never changing it

        history_app.record(report, "judge", history_app.where(history, no_history))
        raise typer.Exit(exit_codes.for_report(report))
