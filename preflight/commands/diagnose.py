"""``preflight diagnose --hosts FILE -- LAUNCH LINE``: check one launch's assumptions on the live hosts.

Example: ``preflight diagnose --hosts hosts.yaml -- torchrun --nnodes=2 --nproc-per-node=8
--master-addr=node1 --master-port=29500 train.py`` (or no launch line: MASTER_ADDR, MASTER_PORT,
WORLD_SIZE and RANK are read from the environment). Exit code: 0 no fail/error, 1 problems, 2 usage.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from preflight import exit_codes
from preflight.app import RunOptions, UsageError


def register(app: typer.Typer) -> None:
    """Add ``diagnose`` to the CLI."""

    @app.command(context_settings={"allow_interspersed_args": False})
    def diagnose(
        launch: Annotated[list[str] | None, typer.Argument(help="the launch line, after --")] = None,
        hosts: Annotated[Path | None, typer.Option("--hosts", "-H", help="hosts.yaml")] = None,
        timeout: Annotated[float, typer.Option(help="dry run: seconds for the store and the process group",
                                               min=1)] = 10.0,
        connect_timeout: Annotated[float, typer.Option(help="seconds to connect and authenticate", min=0.1)] = 10.0,
        host_timeout: Annotated[float, typer.Option(help="seconds for one host's whole gather", min=1)] = 60.0,
        parallel: Annotated[int, typer.Option(help="hosts gathered at once", min=1)] = 64,
        accept_new_host_keys: Annotated[bool, typer.Option(help="trust and record unknown host keys")] = False,
        json_out: Annotated[bool, typer.Option("--json", help="print the JSON report instead")] = False,
        report_dir: Annotated[Path | None, typer.Option(help="where report.json goes")] = None,
    ) -> None:
        """Check a launch line's MASTER_ADDR/PORT, interfaces, devices and ranks on the hosts, then dry-run it.

        Example: preflight diagnose --hosts hosts.yaml -- torchrun --nnodes=2 --master-addr=node1 train.py
        """
        from preflight.app import diagnose as diagnose_app
        from preflight.render import diagnose as diagnose_view

        options = RunOptions(parallel=parallel, connect_timeout=connect_timeout, host_timeout=host_timeout,
                             accept_new_host_keys=accept_new_host_keys)
        request = diagnose_app.DiagnoseRequest(hosts, launch or [], dict(os.environ), timeout, options)
        try:
            report = diagnose_app.diagnose(request)
        except UsageError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        diagnose_view.show(report, diagnose_app.save(report, report_dir), json_out)
        if not report.complete:
            sys.stdout.flush()
            terminated = report.extra.get("diagnose", {}).get("interrupted_by") == "SIGTERM"
            os._exit(exit_codes.TERMINATED if terminated else exit_codes.INTERRUPTED)
        raise typer.Exit(exit_codes.for_report(report))
