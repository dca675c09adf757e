"""``preflight diff OLD.json NEW.json``: what changed between two runs (new problems, fixed ones, version
drift, all_reduce busbw down by more than --threshold). Exit 1 when something got worse, else 0; 2 on a
file that is not a preflight report. With one file, OLD is the saved baseline.

Example: preflight diff reports/good/report.json reports/20261122T014658Z/report.json --threshold 0.1
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from preflight import exit_codes


def register(app: typer.Typer) -> None:
    @app.command("diff")
    def diff_command(
        files: Annotated[list[Path], typer.Argument(help="OLD.json NEW.json, or NEW.json to compare with "
                                                    "the baseline")],
        threshold: Annotated[float, typer.Option(help="busbw drop that counts as worse (0.05 = 5%)",
                                                 min=0.0, max=1.0)] = 0.05,
        baseline: Annotated[Path | None, typer.Option(help="baseline used when only NEW.json is given "
                                                      "(default ~/.local/share/preflight/baseline.json)")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the differences as JSON")] = False,
    ) -> None:
        """Show what changed between two saved runs; exit 1 when something got worse."""
        from preflight.compare import default_baseline_path, diff
        from preflight.render import json_report

        if len(files) not in (1, 2):
            sys.stderr.write("preflight: diff takes OLD.json NEW.json, or NEW.json alone (against the baseline)\n")
            raise typer.Exit(exit_codes.USAGE)
        paths = files if len(files) == 2 else [baseline or default_baseline_path(), files[0]]
        try:
            old, new = (json_report.load(p) for p in paths)
        except json_report.ReportFormatError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        result = diff(old, new, threshold)
        if json_out:
            sys.stdout.write(json.dumps({"old": str(paths[0]), "new": str(paths[1]), **result.to_dict()},
                                        indent=2) + "\n")
        else:
            print(f"preflight diff: {paths[0]} ({old.started or '?'}) -> {paths[1]} ({new.started or '?'})")
            for line in result.lines() or ["no changes"]:
                print(line)
            print("WORSE" if result.got_worse() else "not worse")
        raise typer.Exit(1 if result.got_worse() else 0)
