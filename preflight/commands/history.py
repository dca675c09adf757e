"""``preflight history``: what the history store remembers per host: the timeline of its non-pass findings, the
findings that flap, and its lemon score (docs/history.md).

Example::

    $ preflight history node2 --since 7d
    history ~/.local/state/preflight/history.sqlite: 5 runs since ...; flapping: 3+ status changes, ...
    node2  lemon 0.47 (3 of 5 runs failed)
      FLAPPING sysctl.somaxconn: fail pass fail pass fail (4 changes)

``--html FILE`` also writes the summary as a page (``preflight.render.history_html``).

Exit 0 with the summary, 2 on a usage error (a bad ``--since``), 4 when the store cannot be read or the page
cannot be written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from preflight import exit_codes


def register(app: typer.Typer) -> None:
    """Add ``preflight history`` to the CLI."""

    @app.command()
    def history(
        hosts: Annotated[list[str] | None, typer.Argument(help="only these hosts (default: every host)")] = None,
        since: Annotated[str | None, typer.Option(help="only runs since: a duration (90m, 12h, 7d, 2w) or a date "
                                                  "(2026-11-20, 2026-11-20T08:00, UTC)")] = None,
        store_path: Annotated[Path | None, typer.Option("--history", help="the history store (default "
                                                        "$PREFLIGHT_HISTORY, else $XDG_STATE_HOME/preflight/"
                                                        "history.sqlite)")] = None,
        flap_changes: Annotated[int, typer.Option(help="status changes within the window that make a finding "
                                                  "flapping", min=1)] = 3,
        json_out: Annotated[bool, typer.Option("--json", help="print the JSON document instead")] = False,
        html_out: Annotated[Path | None, typer.Option("--html", help="also write the summary as an HTML page to "
                                                      "this file (every entry of every timeline)")] = None,
    ) -> None:
        """Per host: its non-pass findings over time, what flaps, its lemon score (fails weighted to recent runs).

        Example: preflight history node2 --since 7d
        """
        from preflight.app import history as history_app
        from preflight.history.store import HistoryError
        from preflight.history.view import text

        path = history_app.where(store_path, False)
        assert path is not None
        try:
            data = history_app.summary(path, hosts or [], since, flap_changes)
        except ValueError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        except HistoryError as exc:
            sys.stderr.write(f"preflight: cannot read the history: {exc}\n")
            raise typer.Exit(exit_codes.COULD_NOT_TELL) from None
        sys.stdout.write(json.dumps(data, indent=2) + "\n" if json_out else text(data, str(path)))
        if html_out is not None:
            from preflight.delivery import write_file
            from preflight.render import history_html

            if write_file(str(html_out), lambda: history_html.write(data, html_out)) is None:
                raise typer.Exit(exit_codes.COULD_NOT_TELL)
        raise typer.Exit(exit_codes.OK)
