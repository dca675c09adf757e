"""os.time judges each node's own daemon with os.clock's offset thresholds; its parsers never judge on nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from preflight.checks import all_checks, known_params
from preflight.checks.base import Check
from preflight.time_sync import parse_chrony, parse_timedatectl, parse_timesync, timespan

Parser = Callable[[str], dict[str, Any]]


def _check(ident: str) -> Check:
    return next(c for c in all_checks() if c.ident == ident)


def test_offset_thresholds_are_os_clocks() -> None:
    """One `checks: os:` setting moves both: os.time declares os.clock's defaults, not its own."""
    clock, time = _check("os"), _check("os.time")
    for name in ("warn_clock_offset_s", "max_clock_offset_s"):
        assert time.params[name] == clock.params[name] == known_params()["os"][name]
    assert time.params["warn_clock_frequency_ppm"] == 500


@pytest.mark.parametrize("parse", [parse_timedatectl, parse_chrony, parse_timesync])
@pytest.mark.parametrize("text", ["\n", "", "   \n\n"])
def test_empty_output_is_not_unread(parse: Parser, text: str) -> None:
    assert parse(text)["unread"] is None


@pytest.mark.parametrize("parse", [parse_timedatectl, parse_chrony, parse_timesync])
def test_unknown_output_is_quoted(parse: Parser) -> None:
    assert parse("\n  Permission denied, please try again.\nmore\n")["unread"] == (
        "Permission denied, please try again.")


@pytest.mark.parametrize("line", ["bash: line 1: chronyc: command not found", "sh: 1: chronyc: not found",
                                  "bash: timedatectl: No such file or directory",
                                  "Unknown operation timesync-status.",
                                  "System has not been booted with systemd as init system (PID 1). Can't operate.",
                                  "# preflight: not booted with systemd (no /run/systemd/system)"])
def test_a_missing_tool_is_a_state_not_unread(line: str) -> None:
    for parse in (parse_timedatectl, parse_chrony, parse_timesync):
        assert parse(line + "\n")["unread"] is None


@pytest.mark.parametrize(("text", "seconds"), [
    ("+1min 7s 810ms 536us", 67.810536), ("-2h 3min", -7380.0), ("39,437ms", 0.039437), ("1µs", 1e-6),
    ("infinity", None), ("7.8", None), ("-", None), ("1min four", None)])
def test_timespan(text: str, seconds: float | None) -> None:
    got = timespan(text)
    assert got == pytest.approx(seconds) if seconds is not None else got is None


def test_timesync_offset_is_turned_round() -> None:
    """timesyncd prints the server minus the client: +: the local clock is slow."""
    assert parse_timesync("       Offset: +7.493693s\n Packet count: 1\n")["offset_s"] == -7.493693
    assert parse_timesync("       Offset: -0\n Packet count: 3\n")["offset_s"] == 0.0
