"""Port ranges and the job's ports: the kernel's port list syntax, and the host ports HCCL binds.

Shared by the ports, sysctl and firewall checks and the firewall machinery (``preflight.firewall``), below
all of them: nothing here imports the check registry.

>>> parse_port_list("60000-60015,61000")
[(60000, 60015), (61000, 61000)]

>>> format_port_list(merge_ranges([(61000, 61000), (60000, 60015), (60016, 60031)]))
'60000-60031,61000'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from preflight.context import EvalContext

HCCL_BASE_ENV = "HCCL_IF_BASE_PORT"
HCCL_BASE_DEFAULT = 60000
HCCL_PORTS = 16
HCCL_PORTS_WIDE = 32
HCCL_WIDE_FROM = (8, 5)  # CANN release that widened HCCL's host port range to 32
HCCL_BASE_RANGE = (1024, 65520)  # what the CANN docs allow for HCCL_IF_BASE_PORT
RESERVED_KEY = "net.ipv4.ip_local_reserved_ports"
SYSCTL_CONF = "/etc/sysctl.d/90-preflight.conf"

Range = tuple[int, int]


# --- the kernel's port list syntax -----------------------------------------------------------

def parse_port_list(text: str | None) -> list[Range] | None:
    """``60000-60015,61000`` -> ranges; "" -> [] (nothing reserved); junk or None -> None.

    >>> parse_port_list("")
    []
    >>> parse_port_list(" 8080 , 9000-9001\\n")
    [(8080, 8080), (9000, 9001)]
    >>> parse_port_list("60015-60000") is None, parse_port_list("70000") is None, parse_port_list("a") is None
    (True, True, True)
    """
    if text is None:
        return None
    text = text.strip()
    if not text:
        return []
    ranges: list[Range] = []
    for item in text.split(","):
        match = re.fullmatch(r"\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?", item)
        if not match:
            return None
        low = int(match[1])
        high = int(match[2]) if match[2] else low
        if not 0 <= low <= high <= 65535:
            return None
        ranges.append((low, high))
    return ranges


def merge_ranges(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, with overlapping and adjacent ranges joined.

    >>> merge_ranges([(5, 6), (1, 2), (3, 3), (10, 12), (11, 20)])
    [(1, 3), (5, 6), (10, 20)]
    """
    merged: list[Range] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def format_port_list(ranges: Iterable[Range]) -> str:
    """The kernel's syntax: ``60000-60015,61000``.

    >>> format_port_list([(1, 1), (3, 4)])
    '1,3-4'
    """
    return ",".join(str(low) if low == high else f"{low}-{high}" for low, high in ranges)


def uncovered(wanted: Range, covered: Iterable[Range]) -> list[Range]:
    """The parts of ``wanted`` that no range of ``covered`` contains.

    >>> uncovered((60000, 60031), [(60000, 60015), (60020, 60020)])
    [(60016, 60019), (60021, 60031)]
    """
    missing: list[Range] = []
    start = wanted[0]
    for low, high in merge_ranges(covered):
        if high < start or low > wanted[1]:
            continue
        if low > start:
            missing.append((start, low - 1))
        start = max(start, high + 1)
        if start > wanted[1]:
            break
    if start <= wanted[1]:
        missing.append((start, wanted[1]))
    return missing


def intersect(ranges: Iterable[Range], window: Range) -> list[Range]:
    """The parts of ``ranges`` inside ``window``.

    >>> intersect([(1, 5), (8, 9)], (4, 8))
    [(4, 5), (8, 8)]
    """
    out = [(max(low, window[0]), min(high, window[1])) for low, high in ranges]
    return [(low, high) for low, high in out if low <= high]


def reserve_remedy(current: Sequence[Range], add: Iterable[Range]) -> str:
    """A pasteable command reserving ``add`` on top of what is reserved now (the kernel replaces the list).

    >>> reserve_remedy([(61000, 61000)], [(60000, 60015)])
    "sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015,61000 && echo 'net.ipv4.ip_local_reserved_ports = \
60000-60015,61000' >> /etc/sysctl.d/90-preflight.conf"
    """
    merged = format_port_list(merge_ranges([*current, *add]))
    return f"sysctl -w {RESERVED_KEY}={merged} && echo '{RESERVED_KEY} = {merged}' >> {SYSCTL_CONF}"


# --- which ports HCCL uses on a host ---------------------------------------------------------

def cann_release(version: str | None) -> tuple[int, int] | None:
    """(major, minor) of a CANN version string, or None.

    >>> cann_release("8.1.RC1"), cann_release("8.5.0"), cann_release("9.0.0"), cann_release("weird")
    ((8, 1), (8, 5), (9, 0), None)
    """
    match = re.match(r"\s*(\d+)(?:\.(\d+))?", version or "")
    return (int(match[1]), int(match[2] or 0)) if match else None


@dataclass(frozen=True)
class HcclPorts:
    """HCCL's host port range on one host and how it was worked out (for the findings' messages)."""

    base: int | None  # None: HCCL_IF_BASE_PORT is not a usable port
    count: int
    setting: str  # "HCCL_IF_BASE_PORT=60000 by default" or as set in hosts.yaml
    cann: str  # "for CANN 8.0.0 (< 8.5)" or "assumed: CANN version unknown, no CANN toolkit found"
    cann_known: bool  # False: the count assumed a CANN before 8.5, which newer CANN outgrows

    @property
    def range(self) -> Range:
        base = self.base or 0
        return base, min(base + self.count - 1, 65535)

    @property
    def text(self) -> str:
        return format_port_list([self.range])

    @property
    def why(self) -> str:
        return f"{self.setting}; {self.count} ports {self.cann}"

    def widened(self) -> HcclPorts:
        """The same base with the count of CANN >= 8.5."""
        return HcclPorts(self.base, HCCL_PORTS_WIDE, self.setting, self.cann, True)


def hccl_base(env: Mapping[str, str]) -> int | None:
    """HCCL_IF_BASE_PORT from a host's env (the default when unset); None when it is not a usable port.

    >>> hccl_base({}), hccl_base({"HCCL_IF_BASE_PORT": " 50000"}), hccl_base({"HCCL_IF_BASE_PORT": "80"})
    (60000, 50000, None)
    """
    raw = env.get(HCCL_BASE_ENV)
    if raw is None:
        return HCCL_BASE_DEFAULT
    text = raw.strip()
    return int(text) if text.isdecimal() and HCCL_BASE_RANGE[0] <= int(text) <= HCCL_BASE_RANGE[1] else None


def hccl_ports(host: str, ctx: EvalContext) -> HcclPorts:
    """HCCL_IF_BASE_PORT from the host's env in hosts.yaml, the count from the versions facts' CANN.

    >>> from preflight.inventory import ClusterSpec, Host
    >>> ctx = EvalContext(ClusterSpec(accelerator="npu"), [Host("n1", "n1", env={"HCCL_IF_BASE_PORT": "50000"})],
    ...                   other_facts={"versions": {"n1": {"cann": "8.5.0"}}})
    >>> hccl_ports("n1", ctx).text, hccl_ports("n1", ctx).why
    ('50000-50031', 'HCCL_IF_BASE_PORT=50000; 32 ports for CANN 8.5.0 (>= 8.5)')
    >>> hccl_ports("n2", ctx).why
    'HCCL_IF_BASE_PORT=60000 by default; 16 ports assumed: CANN version unknown, versions were not gathered'
    """
    env = next((h.env for h in ctx.hosts if h.name == host), {})
    raw = env.get(HCCL_BASE_ENV)
    base = hccl_base(env)
    setting = f"{HCCL_BASE_ENV}={HCCL_BASE_DEFAULT} by default" if raw is None else f"{HCCL_BASE_ENV}={raw}"
    wide_from = ".".join(map(str, HCCL_WIDE_FROM))
    versions = ctx.other_facts.get("versions", {})
    cann = versions[host].get("cann") if host in versions else None
    release = cann_release(cann)
    if release is None:
        unknown = ("versions were not gathered" if host not in versions
                   else "no CANN toolkit found" if not cann else f"unreadable CANN version {cann!r}")
        return HcclPorts(base, HCCL_PORTS, setting, f"assumed: CANN version unknown, {unknown}", False)
    if release >= HCCL_WIDE_FROM:
        return HcclPorts(base, HCCL_PORTS_WIDE, setting, f"for CANN {cann} (>= {wide_from})", True)
    return HcclPorts(base, HCCL_PORTS, setting, f"for CANN {cann} (< {wide_from})", True)
