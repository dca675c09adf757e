"""The first screen a user sees: ``--help`` of every command at 80 and 100 columns (option names whole), the
run header (checks named compactly), the hosts x checks matrix (families that did not apply left out) and the
problems (one cause on many hosts printed once, with the hosts as a range)."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from preflight import cli


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command and group of the CLI (typer's own click commands) with the words that reach it."""
    found = [(path, command)]
    if hasattr(command, "commands"):  # a group
        for name, sub in sorted(command.commands.items()):
            found += _commands(sub, (*path, name))
    return found


@pytest.mark.parametrize("columns", [80, 100])
def test_help_never_cuts_an_option_name(columns: int) -> None:
    every = _commands(typer.main.get_command(cli.app))
    assert len(every) > 12, [p for p, _ in every]
    runner = CliRunner()
    for path, command in every:
        result = runner.invoke(cli.app, [*path, "--help"], env={"COLUMNS": str(columns), "TERMINAL_WIDTH": None})
        assert result.exit_code == 0, (path, result.output)
        lines = result.output.splitlines()
        assert "…" not in result.output, (path, result.output)
        assert all(len(line) <= columns for line in lines), (path, result.output)
        words = {word.strip(",/[]") for line in lines for word in line.split()}
        for param in command.params:
            for name in [*param.opts, *param.secondary_opts]:
                if name.startswith("-"):
                    assert name in words, (path, name, result.output)
