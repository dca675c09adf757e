"""Reserved ports: ``net.ipv4.ip_local_reserved_ports`` merged with what is reserved now, never replaced.

The kernel takes the whole list on every write: writing only the job's ports would drop every other
reservation (another service's, another job's). The change writes the union of what is reserved now and what the
checks' remedies reserve, in our sysctl file (``preflight.fix.sysctl``).

>>> change = reserved_change("n1", ("ports.reserved",), "61000", [(60000, 60031)], None, {})
>>> change.summary
'net.ipv4.ip_local_reserved_ports 61000 -> 60000-60031,61000 (adds 60000-60031)'
>>> change.expect
(('net.ipv4.ip_local_reserved_ports', '60000-60031,61000'),)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from preflight.fix.model import Change
from preflight.fix.sysctl import remedy_value, setting_change
from preflight.ports import RESERVED_KEY, Range, format_port_list, merge_ranges, parse_port_list, uncovered


def wanted_ranges(remedy: str | None) -> list[Range] | None:
    """The list a check's remedy reserves (``sysctl -w net.ipv4.ip_local_reserved_ports=LIST`` at its start);
    None for any other remedy (a container's, a setting in hosts.yaml).

    >>> wanted_ranges("sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015,61000 && echo ...")
    [(60000, 60015), (61000, 61000)]
    >>> wanted_ranges("set HCCL_IF_BASE_PORT under env: in hosts.yaml") is None
    True
    """
    value = remedy_value(remedy, RESERVED_KEY)
    return parse_port_list(value) if value is not None else None


def reserved_change(host: str, fixes: tuple[str, ...], current: str, add: Iterable[Range], conf: str | None,
                    files: Mapping[str, str | None]) -> Change | None:
    """The change reserving ``add`` on top of ``current`` (the list in force, the kernel's syntax); None when
    ``current`` cannot be read or nothing is missing.

    >>> reserved_change("n1", ("ports.reserved",), "60000-60031", [(60000, 60015)], None, {}) is None
    True
    >>> reserved_change("n1", ("ports.reserved",), "junk", [(60000, 60015)], None, {}) is None
    True
    """
    now = parse_port_list(current)
    if now is None:
        return None
    missing = [gap for wanted in add for gap in uncovered(wanted, now)]
    if not missing:
        return None
    merged = format_port_list(merge_ranges([*now, *missing]))
    summary = (f"{RESERVED_KEY} {format_port_list(now) or '(none)'} -> {merged} "
               f"(adds {format_port_list(merge_ranges(missing))})")
    return setting_change(host, fixes, RESERVED_KEY, current, merged, conf, files, summary=summary,
                          kind="reserved_ports")
