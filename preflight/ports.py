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
from typing import Any

from preflight.container import container_sysctl_remedy
from preflight.context import EvalContext

HCCL_BASE_ENV = "HCCL_IF_BASE_PORT"
HCCL_BASE_DEFAULT = 60000
HCCL_PORTS = 16
HCCL_PORTS_WIDE = 32
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


def reserve_remedy(current: Sequence[Range], add: Iterable[Range],
                   container: Mapping[str, Any] | None = None) -> str:
    """A pasteable command reserving ``add`` on top of what is reserved now (the kernel replaces the list); on a
    container (os.container's facts) the container's own setting (preflight.container).

    >>> reserve_remedy([(61000, 61000)], [(60000, 60015)])
    "sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015,61000 && echo 'net.ipv4.ip_local_reserved_ports = \
60000-60015,61000' >> /etc/sysctl.d/90-preflight.conf"
    >>> reserve_remedy([], [(60000, 60015)], {"engine": "docker"})[:34]
    'this host is a container (docker):'
    """
    merged = format_port_list(merge_ranges([*current, *add]))
    on_host = f"sysctl -w {RESERVED_KEY}={merged} && echo '{RESERVED_KEY} = {merged}' >> {SYSCTL_CONF}"
    return container_sysctl_remedy(container, RESERVED_KEY, merged, on_host)


# --- which ports HCCL uses on a host ---------------------------------------------------------
#
# How many ports HCCL_IF_BASE_PORT opens, per CANN's own page for it (envref_07_0074, "配置后系统默认占用以该端口
# 起始的N个端口"), release by release (copies of the pages: docs/versions-and-ports.md):
#   16: 5.0.4.6, 6.3.RC2, 8.0.0.alpha002, 8.0.0 commercial, 8.2.RC1.alpha002 community
#       https://www.hiascend.com/document/detail/zh/canncommercial/800/apiref/envvar/envref_07_0074.html
#   32: 8.2.RC1 commercial (the first page found saying 32), 8.5.0, 9.0.0, 9.1.0-beta.1
#       https://www.hiascend.com/document/detail/zh/canncommercial/82RC1/maintenref/envvar/envref_07_0074.html
#       https://www.hiascend.com/document/detail/zh/canncommercial/850/maintenref/envvar/envref_07_0074.html
# No page was found for 8.1.RC1 or 8.3.RC1/RC2. The count only ever grew, so releases up to 8.0.x use 16 and
# releases from 8.2.RC1 (commercial) on use 32; 8.1.x and the 8.2 pre-releases are in doubt, as is an unknown
# release: there 16 are needed for sure and 32 are advised (reserving 32 is harmless).

HCCL_RANGE_ENV = "HCCL_HOST_SOCKET_PORT_RANGE"  # envref_07_0143: overrides HCCL_IF_BASE_PORT; ports, ranges or auto
HCCL_RANGE_FROM = (8, 1)  # CANN 8.1.RC1: the first release with HCCL_HOST_SOCKET_PORT_RANGE
HCCL_NARROW_UNTIL = (8, 0)  # the last release whose pages say 16 ports
HCCL_WIDE_FROM = (8, 2)  # CANN 8.2.RC1 (commercial): the first page saying 32 ports
_PRERELEASE = re.compile(r"alpha|beta", re.I)


def cann_release(version: str | None) -> tuple[int, int] | None:
    """(major, minor) of a CANN version string, or None.

    >>> cann_release("8.1.RC1"), cann_release("8.5.0"), cann_release("9.0.0"), cann_release("weird")
    ((8, 1), (8, 5), (9, 0), None)
    """
    match = re.match(r"\s*(\d+)(?:\.(\d+))?", version or "")
    return (int(match[1]), int(match[2] or 0)) if match else None


def hccl_port_count(cann: str) -> tuple[int, int, str] | None:
    """(ports HCCL_IF_BASE_PORT surely opens, ports to reserve, why) for a CANN version; None if unreadable.

    >>> hccl_port_count("8.0.0")
    (16, 16, 'for CANN 8.0.0 (the docs say 16 up to CANN 8.0.0)')
    >>> hccl_port_count("8.2.RC1")[:2], hccl_port_count("8.3.RC2")[:2], hccl_port_count("8.2.RC1.alpha002")[:2]
    ((32, 32), (32, 32), (16, 32))
    >>> hccl_port_count("8.1.RC1")
    (16, 32, 'for CANN 8.1.RC1: no CANN page settles 16 or 32 for this release (32 to be safe)')
    """
    release = cann_release(cann)
    if release is None:
        return None
    if release <= HCCL_NARROW_UNTIL:
        return HCCL_PORTS, HCCL_PORTS, f"for CANN {cann} (the docs say 16 up to CANN 8.0.0)"
    if release > HCCL_WIDE_FROM or (release == HCCL_WIDE_FROM and not _PRERELEASE.search(cann)):
        return HCCL_PORTS_WIDE, HCCL_PORTS_WIDE, f"for CANN {cann} (the docs say 32 from CANN 8.2.RC1 on)"
    return HCCL_PORTS, HCCL_PORTS_WIDE, (f"for CANN {cann}: no CANN page settles 16 or 32 for this release "
                                         "(32 to be safe)")


@dataclass(frozen=True)
class HcclPorts:
    """HCCL's host ports on one host and how they were worked out (for the findings' messages).

    ``ranges``: the ports HCCL binds for sure; ``advised``: what to reserve (wider where the CANN release
    leaves 16 or 32 in doubt). Both empty with ``auto`` (HCCL_HOST_SOCKET_PORT_RANGE=auto: the OS picks) or
    when the setting is not usable (``usable`` False).
    """

    ranges: tuple[Range, ...]
    advised: tuple[Range, ...]
    setting: str  # "HCCL_IF_BASE_PORT=60000 by default", as set in hosts.yaml, or HCCL_HOST_SOCKET_PORT_RANGE=...
    cann: str  # "for CANN 8.0.0 (...)"; "" when the count does not depend on it (a port range is set)
    usable: bool = True  # False: the setting is not a port (range) HCCL can use
    auto: bool = False  # HCCL_HOST_SOCKET_PORT_RANGE=auto

    @property
    def base(self) -> int | None:
        """The first port (HCCL_IF_BASE_PORT when that decides), None when no fixed port is known."""
        return self.ranges[0][0] if self.ranges else None

    @property
    def count(self) -> int:
        return sum(high - low + 1 for low, high in self.ranges)

    @property
    def range(self) -> Range:
        """The first range (the only one unless HCCL_HOST_SOCKET_PORT_RANGE lists several): prefer ``ranges``."""
        return self.ranges[0] if self.ranges else (0, 0)

    @property
    def text(self) -> str:
        return format_port_list(self.ranges)

    @property
    def cann_known(self) -> bool:
        """False: the count was assumed (release unknown or in doubt) and ``advised`` is wider."""
        return self.ranges == self.advised

    @property
    def why(self) -> str:
        return f"{self.setting}; {self.count} ports {self.cann}" if self.cann else self.setting

    def widened(self) -> HcclPorts:
        """What to reserve as the ports HCCL binds."""
        return HcclPorts(self.advised, self.advised, self.setting, self.cann, self.usable, self.auto)


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


def socket_port_range(raw: str) -> list[Range] | None:
    """HCCL_HOST_SOCKET_PORT_RANGE's ports: ports and ranges in [1, 65535], comma-separated, not overlapping.

    None when it is not such a list ("auto" is the caller's to handle).

    >>> socket_port_range("60000,60050-60100"), socket_port_range("60000-60010,60005"), socket_port_range("0")
    ([(60000, 60000), (60050, 60100)], None, None)
    """
    ranges = parse_port_list(raw)
    if not ranges or any(low < 1 for low, _ in ranges):
        return None
    ordered = sorted(ranges)
    if any(b[0] <= a[1] for a, b in zip(ordered, ordered[1:], strict=False)):
        return None
    return ranges


def hccl_host_ports(env: Mapping[str, str], cann: str | None, unknown: str = "no CANN toolkit found") -> HcclPorts:
    """HCCL's host ports from a host's env and its CANN version: the one place both are read.

    HCCL_HOST_SOCKET_PORT_RANGE (CANN 8.1.RC1 on) overrides HCCL_IF_BASE_PORT; "auto" leaves the ports to the
    OS. Else HCCL_IF_BASE_PORT (default 60000) and the count its CANN release's page gives (``hccl_port_count``).
    ``unknown``: why the CANN version is unknown when ``cann`` is None.

    >>> hccl_host_ports({"HCCL_HOST_SOCKET_PORT_RANGE": "61000-61003,62000"}, "8.1.RC1").ranges
    ((61000, 61003), (62000, 62000))
    >>> hccl_host_ports({"HCCL_HOST_SOCKET_PORT_RANGE": "61000-61003"}, "8.0.0").why
    'HCCL_IF_BASE_PORT=60000 by default (HCCL_HOST_SOCKET_PORT_RANGE is ignored before CANN 8.1.RC1); 16 ports \
for CANN 8.0.0 (the docs say 16 up to CANN 8.0.0)'
    >>> ports = hccl_host_ports({}, None)
    >>> ports.text, format_port_list(ports.advised), ports.why
    ('60000-60015', '60000-60031', 'HCCL_IF_BASE_PORT=60000 by default; 16 ports assumed: CANN version unknown, \
no CANN toolkit found')
    """
    counts = hccl_port_count(cann) if cann else None
    release = cann_release(cann) if counts else None
    socket_raw = env.get(HCCL_RANGE_ENV)
    ignored = ""
    if socket_raw is not None and socket_raw.strip():
        setting = f"{HCCL_RANGE_ENV}={socket_raw.strip()}"
        if release is not None and release < HCCL_RANGE_FROM:
            ignored = f" ({HCCL_RANGE_ENV} is ignored before CANN 8.1.RC1)"
        elif socket_raw.strip().lower() == "auto":
            return HcclPorts((), (), setting, "", auto=True)
        else:
            ranges = socket_port_range(socket_raw)
            found = tuple(merge_ranges(ranges or []))
            return HcclPorts(found, found, setting, "", usable=ranges is not None)
    raw = env.get(HCCL_BASE_ENV)
    setting = (f"{HCCL_BASE_ENV}={HCCL_BASE_DEFAULT} by default" if raw is None else f"{HCCL_BASE_ENV}={raw}") + ignored
    base = hccl_base(env)
    if counts is None:
        why = f"unreadable CANN version {cann!r}" if cann else unknown
        needed, advised, cann_text = HCCL_PORTS, HCCL_PORTS_WIDE, f"assumed: CANN version unknown, {why}"
    else:
        needed, advised, cann_text = counts
    if base is None:
        return HcclPorts((), (), setting, cann_text, usable=False)

    def span(count: int) -> tuple[Range, ...]:
        return ((base, min(base + count - 1, 65535)),)

    return HcclPorts(span(needed), span(advised), setting, cann_text)


def hccl_ports(host: str, ctx: EvalContext) -> HcclPorts:
    """``hccl_host_ports`` for a host: its env in hosts.yaml, its CANN version from the versions facts.

    >>> from preflight.inventory import ClusterSpec, Host
    >>> ctx = EvalContext(ClusterSpec(accelerator="npu"), [Host("n1", "n1", env={"HCCL_IF_BASE_PORT": "50000"})],
    ...                   other_facts={"versions": {"n1": {"cann": "8.5.0"}}})
    >>> hccl_ports("n1", ctx).text, hccl_ports("n1", ctx).why
    ('50000-50031', 'HCCL_IF_BASE_PORT=50000; 32 ports for CANN 8.5.0 (the docs say 32 from CANN 8.2.RC1 on)')
    >>> hccl_ports("n2", ctx).why
    'HCCL_IF_BASE_PORT=60000 by default; 16 ports assumed: CANN version unknown, versions were not gathered'
    """
    env = next((h.env for h in ctx.hosts if h.name == host), {})
    versions = ctx.other_facts.get("versions", {})
    cann = versions[host].get("cann") if host in versions else None
    unknown = "versions were not gathered" if host not in versions else "no CANN toolkit found"
    return hccl_host_ports(env, cann if isinstance(cann, str) else None, unknown)
