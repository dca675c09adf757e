"""os: shared memory, locked-memory limit, clock offset, free memory and free disk on every host.

- ``os.shm``: NCCL puts its intra-node buffers in /dev/shm and fails to init ("failed to extend
  /dev/shm/nccl-*") when it is small; a container's default is 64 MiB, NCCL's docs ask for
  ``--shm-size=1g``. Below ``min_shm_mib`` fails on gpu/npu clusters (warns on cpu, where only
  DataLoader workers use it); less than that *free* warns (segments left by a crashed job).
- ``os.memlock``: RDMA (InfiniBand/RoCE) pins buffers; NCCL's docs ask for ``--ulimit memlock=-1``.
  Warns on gpu/npu below ``min_memlock_mib`` (-1: unlimited required); skipped on cpu.
- ``os.clock``: NTP style. The engine stamps the controller's time into each host's script as it sends it
  ($PF_SENT) and notes its time when the output comes back (``pf.received``); the host's ``date`` lies
  between the two when the clocks agree, so its offset lies in [time - received, time - sent], however long
  the script waited to run on a loaded host. Only the part of that interval beyond the threshold counts:
  a host warns when even the interval's nearest point is over ``warn_clock_offset_s`` off, and fails over
  ``max_clock_offset_s``. The reference is the controller; when most hosts (3 or more) agree with each
  other but not with the controller (whose own clock is off), it is the interval they share. torchrun's
  c10d rendezvous drops nodes whose heartbeat (a wall-clock time) is older than 15 s, and logs stop lining
  up long before.
- ``os.memory``: MemAvailable below ``min_mem_available_mib`` fails, below
  ``warn_mem_available_pct`` % of MemTotal warns (often processes left by an earlier job).
- ``os.disk``: free space on / and /tmp (probe scratch files, compile caches, logs): below
  ``min_disk_free_gib`` fails, below ``warn_disk_free_gib`` warns.

>>> parse_limits("Max locked memory         65536                65536                bytes\\n")
{'soft': 65536, 'hard': 65536}
>>> parse_df("Filesystem 1024-blocks Used Available Capacity Mounted on\\ntmpfs 65536 0 65536 0% /dev/shm\\n")
{'fs': 'tmpfs', 'size_kib': 65536, 'avail_kib': 65536, 'mount': '/dev/shm'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from preflight.batch import RECEIVED, SENT_AT, print_file
from preflight.checks.base import *

DF_PATHS = ("/", "/tmp", "/dev/shm")
DISK_PATHS = ("/", "/tmp")
# One df for every path (a row each, in order, when it exits 0); when one path fails, a section per path.
_DF = ("df -kP " + " ".join(DF_PATHS) + " 2>/dev/null || for p in " + " ".join(DF_PATHS)
       + "; do printf '== %s\\n' \"$p\"; df -kP \"$p\" 2>&1; done")
_DF_LINE = re.compile(r"^(?P<fs>.*?)\s+(?P<size>\d+)\s+(?P<used>\d+)\s+(?P<avail>\d+)\s+(?P<cap>\d+%|-)\s+"
                      r"(?P<mount>/.*)$")
MIB = 1024 * 1024


class OsLimitsCheck(Check):
    family = "os"
    ids = ("os.shm", "os.memlock", "os.memory", "os.disk", "os.clock")
    order = 5  # first in the batch: the clock is read before slower probes could delay it on one host
    stamped = True  # the engine adds the controller's receive time (RECEIVED) to the outputs
    summary = "/dev/shm size, memlock limit for RDMA, clock offset between hosts, free memory and disk"
    params: ClassVar[Mapping[str, Any]] = {
        "min_shm_mib": 1024,
        "min_memlock_mib": -1,
        "warn_clock_offset_s": 2,
        "max_clock_offset_s": 10,
        "warn_mem_available_pct": 10,
        "min_mem_available_mib": 1024,
        "warn_disk_free_gib": 10,
        "min_disk_free_gib": 1,
    }

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        # The controller's time as it sent the script (the engine stamps it in as $PF_SENT) comes back next
        # to the host's time: the probe stays constant, parse pure, and the skew comparable.
        return [
            Probe("clock", f"printf 'ref %s\\n' \"${SENT_AT}\"; date +%s.%N", timeout=5),
            Probe("df", _DF, timeout=10),
            Probe("limits", "cat /proc/self/limits", timeout=5),
            Probe("meminfo", print_file("/proc/meminfo"), timeout=5),  # builtins: no exec
        ]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        empty = ProbeOutput("", "not run", None)
        limits = parse_limits(outputs.get("limits", empty).stdout)
        return {
            "clock": parse_clock(outputs.get("clock", empty).stdout, outputs.get(RECEIVED, empty).stdout),
            "disks": parse_df_sections(outputs.get("df", empty).stdout),
            "memlock": limits,
            "memory": parse_meminfo(outputs.get("meminfo", empty).stdout),
        }

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        params = ctx.params
        findings: list[Finding] = []
        for host, host_facts in facts.items():
            findings.append(_shm(host, host_facts, ctx.cluster.accelerator, int(params["min_shm_mib"])))
            findings.append(_memlock(host, host_facts, ctx.cluster.accelerator, int(params["min_memlock_mib"])))
            findings.append(_memory(host, host_facts, float(params["warn_mem_available_pct"]),
                                    int(params["min_mem_available_mib"])))
            findings.append(_disk(host, host_facts, float(params["warn_disk_free_gib"]),
                                  float(params["min_disk_free_gib"])))
        findings += _clock(facts, float(params["warn_clock_offset_s"]), float(params["max_clock_offset_s"]))
        return findings


# --- parsers -------------------------------------------------------------------------------------------


def _number(text: str) -> float | None:
    match = re.match(r"^(\d+)(?:\.(\d+))?$", text.strip())
    if not match:
        match = re.match(r"^(\d+)\.", text.strip())  # busybox date without %N prints "1700000000.N"
        return float(match.group(1)) if match else None
    return float(match.group(0))


def parse_clock(text: str, received: str = "") -> dict[str, Any]:
    """The controller's send time (``ref``), the host's time (``date +%s.%N``) and the controller's receive
    time, in epoch seconds, and the interval the host's offset lies in: [time - received, time - sent].

    >>> parse_clock("ref 100.5\\n103.25\\n", "104.0\\n")
    {'sent': 100.5, 'time': 103.25, 'received': 104.0, 'offset_s': [-0.75, 2.75]}
    >>> parse_clock("ref 100.5\\n103.25\\n")["offset_s"] is None  # no receive time: no interval
    True
    >>> parse_clock("ref 100.5\\n103.N\\n", "104.0\\n")["offset_s"]  # busybox: no sub-seconds, 1 s wider
    [-1.0, 3.5]
    """
    sent = host_time = None
    whole = 0.0  # a date without sub-seconds (busybox prints "%s.N") is up to 1 s behind the time it read
    for line in text.splitlines():
        if line.startswith("ref "):
            sent = _number(line[4:])
        elif line.strip() and host_time is None:
            host_time = _number(line)
            whole = 0.0 if re.match(r"^\d+\.\d", line.strip()) else 1.0
    back = _number(received.strip().splitlines()[0]) if received.strip() else None
    offset = None
    if sent is not None and host_time is not None and back is not None:
        low, high = sorted((host_time - back, host_time + whole - sent))  # sorted: the controller's clock stepped
        offset = [round(low, 3) + 0.0, round(high, 3) + 0.0]  # + 0.0 turns -0.0 into 0.0
    return {"sent": sent, "time": host_time, "received": back, "offset_s": offset}


def parse_df(text: str) -> dict[str, Any] | None:
    """The data line of ``df -kP PATH`` (the mount point may contain spaces)."""
    for line in text.splitlines():
        match = _DF_LINE.match(line.strip())
        if match:
            return {"fs": match["fs"], "size_kib": int(match["size"]), "avail_kib": int(match["avail"]),
                    "mount": match["mount"]}
    return None


def parse_df_sections(text: str) -> dict[str, dict[str, Any]]:
    """``df -kP`` output -> path -> usage, or ``{"error": ...}``.

    Either one table with a row per path of DF_PATHS in order, or (when that df failed) ``== PATH``
    sections of one df each; rows printed before the first section are then ignored.

    >>> row = "tmpfs 100 1 99 1% {}"
    >>> parse_df_sections("\\n".join(["Filesystem 1024-blocks Used Available Capacity Mounted on",
    ...                                *(row.format(p) for p in DF_PATHS)]))["/tmp"]["mount"]
    '/tmp'
    """
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    leading: list[str] = []
    for line in text.splitlines():
        if current is None and not line.startswith("== "):
            leading.append(line)
        elif line.startswith("== "):
            current = sections.setdefault(line[3:].strip(), [])
        elif current is not None:
            current.append(line)
    rows = [line for line in leading if _DF_LINE.match(line.strip())]
    if not sections and len(rows) == len(DF_PATHS):
        sections = {path: [row] for path, row in zip(DF_PATHS, rows, strict=True)}
    disks: dict[str, dict[str, Any]] = {}
    for path in DF_PATHS:
        lines = sections.get(path)
        if lines is None:
            disks[path] = {"error": "not reported"}
            continue
        usage = parse_df("\n".join(lines))
        message = next((line.strip() for line in lines if line.strip()), "") or "no output"
        disks[path] = usage if usage is not None else {"error": message[:200]}
    return disks


def parse_limits(text: str) -> dict[str, int | str | None]:
    """Soft and hard "Max locked memory" from /proc/self/limits, in bytes or "unlimited"."""
    for line in text.splitlines():
        if line.startswith("Max locked memory"):
            words = line[len("Max locked memory"):].split()
            values = [w if w == "unlimited" else int(w) if w.isdigit() else None for w in words[:2]]
            if len(values) == 2:
                return {"soft": values[0], "hard": values[1]}
    return {"soft": None, "hard": None}


def parse_meminfo(text: str) -> dict[str, int | None]:
    """MemTotal and MemAvailable in KiB (MemAvailable approximated on kernels older than 3.14).

    >>> parse_meminfo("MemTotal: 100 kB\\nMemFree: 10 kB\\nBuffers: 5 kB\\nCached: 20 kB\\n")
    {'total_kib': 100, 'available_kib': 35}
    """
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        words = rest.split()
        if words and words[0].isdigit():
            values[key.strip()] = int(words[0])
    available = values.get("MemAvailable")
    if available is None and "MemFree" in values:
        available = values["MemFree"] + values.get("Buffers", 0) + values.get("Cached", 0)
    return {"total_kib": values.get("MemTotal"), "available_kib": available}


# --- judges --------------------------------------------------------------------------------------------


def _size(kib: float) -> str:
    """Human size from KiB.

    >>> _size(65536), _size(1536 * 1024 * 1024)
    ('64 MiB', '1.5 TiB')
    """
    value, unit = float(kib), "KiB"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            break
        value /= 1024
    return f"{value:.1f} {unit}".replace(".0 ", " ")


def _shm(host: str, facts: Facts, accelerator: str, min_mib: int) -> Finding:
    check = "os.shm"
    entry = (facts.get("disks") or {}).get("/dev/shm") or {"error": "not reported"}
    expected = f">= {min_mib} MiB"
    gib = max(1, -(-min_mib // 1024))  # rounded up
    remedy = f"mount -o remount,size={gib}G /dev/shm  # in a container: docker run --shm-size={gib}g"
    if "error" in entry:
        if "No such file" in str(entry["error"]):
            return finding(check, host, Status.FAIL, f"there is no /dev/shm on {host}: NCCL cannot create "
                           "its shared-memory segments", observed="missing", expected=expected,
                           remedy="mount -t tmpfs -o size=1G tmpfs /dev/shm")
        return finding(check, host, Status.ERROR, f"could not read /dev/shm: {entry['error']}")
    size, avail = int(entry["size_kib"]), int(entry["avail_kib"])
    observed = f"{_size(size)} ({_size(avail)} free)"
    if size < min_mib * 1024:
        status = Status.FAIL if accelerator in ("gpu", "npu") else Status.WARN
        return finding(check, host, status,
                       f"/dev/shm is {_size(size)}, below {min_mib} MiB: NCCL fails to extend its segments "
                       "(\"failed to extend /dev/shm/nccl-*\") and DataLoader workers die with bus errors "
                       "(a container's default is 64 MiB)", observed=observed, expected=expected, remedy=remedy)
    if avail < min_mib * 1024:
        return finding(check, host, Status.WARN,
                       f"only {_size(avail)} of /dev/shm ({_size(size)}) is free: segments left by a "
                       "crashed job?", observed=observed, expected=f">= {min_mib} MiB free",
                       remedy="ls -la /dev/shm  # remove stale nccl-*/torch_* files of jobs that are gone")
    return finding(check, host, Status.PASS, f"/dev/shm {observed}", observed=observed, expected=expected)


def _limit_text(value: int | str | None) -> str:
    if value is None:
        return "?"
    return "unlimited" if value == "unlimited" else _size(int(value) / 1024)


def _memlock(host: str, facts: Facts, accelerator: str, min_mib: int) -> Finding:
    check = "os.memlock"
    if accelerator not in ("gpu", "npu"):
        return finding(check, host, Status.SKIP, f"not needed on a {accelerator} cluster (no RDMA)")
    limits = facts.get("memlock") or {}
    soft, hard = limits.get("soft"), limits.get("hard")
    if soft is None:
        return finding(check, host, Status.ERROR, "could not read the locked-memory limit")
    expected = "unlimited" if min_mib < 0 else f">= {min_mib} MiB"
    observed = f"{_limit_text(soft)} (hard {_limit_text(hard)})"
    enough = soft == "unlimited" or (min_mib >= 0 and int(soft) >= min_mib * MIB)
    if enough:
        return finding(check, host, Status.PASS, f"max locked memory {observed}", observed=observed,
                       expected=expected)
    if hard == "unlimited" or (min_mib >= 0 and isinstance(hard, int) and hard >= min_mib * MIB):
        value = "unlimited" if min_mib < 0 else str(min_mib * 1024)
        remedy = f"ulimit -l {value}  # in the job's launch script (the hard limit allows it)"
    else:
        remedy = ("echo '* - memlock unlimited' > /etc/security/limits.d/90-memlock.conf  # log in again; "
                  "in a container: docker run --ulimit memlock=-1")
    return finding(check, host, Status.WARN,
                   f"max locked memory is {observed}: over InfiniBand/RoCE, NCCL and HCCL cannot pin "
                   "their buffers (ibv_reg_mr fails)", observed=observed, expected=expected, remedy=remedy)


def _memory(host: str, facts: Facts, warn_pct: float, min_mib: int) -> Finding:
    check = "os.memory"
    memory = facts.get("memory") or {}
    total, avail = memory.get("total_kib"), memory.get("available_kib")
    if not isinstance(avail, int) or not isinstance(total, int) or total <= 0:
        return finding(check, host, Status.ERROR, "could not read /proc/meminfo")
    observed = f"{_size(avail)} available of {_size(total)}"
    remedy = "ps -eo pid,rss,etime,cmd --sort=-rss | head -15  # processes left by an earlier job?"
    if avail < min_mib * 1024:
        return finding(check, host, Status.FAIL, f"only {observed} on {host}: the job will be OOM-killed",
                       observed=observed, expected=f">= {min_mib} MiB available", remedy=remedy)
    if avail * 100 < total * warn_pct:
        return finding(check, host, Status.WARN,
                       f"only {observed} ({100 * avail / total:.0f}%) on {host}, below {warn_pct:g}%",
                       observed=observed, expected=f">= {warn_pct:g}% available", remedy=remedy)
    return finding(check, host, Status.PASS, f"{observed}", observed=observed)


def _disk(host: str, facts: Facts, warn_gib: float, min_gib: float) -> Finding:
    check = "os.disk"
    disks = facts.get("disks") or {}
    seen: dict[str, tuple[str, int]] = {}  # mount point -> (first path on it, free KiB)
    errors = []
    for path in DISK_PATHS:
        entry = disks.get(path) or {"error": "not reported"}
        if "error" in entry:
            errors.append(f"{path}: {entry['error']}")
        elif str(entry.get("mount")) not in seen:
            seen[str(entry.get("mount"))] = (path, int(entry["avail_kib"]))
    if not seen:
        return finding(check, host, Status.ERROR, f"could not read free space: {'; '.join(errors)}")
    observed = ", ".join(f"{path} {_size(free)} free" for path, free in seen.values())
    worst_path, worst = min(seen.values(), key=lambda item: item[1])
    remedy = f"du -xhd1 {worst_path} 2>/dev/null | sort -h | tail  # then free space on {worst_path}"
    if worst < min_gib * MIB:
        return finding(check, host, Status.FAIL, f"{worst_path} has {_size(worst)} free on {host}, below "
                       f"{min_gib:g} GiB: probes, compile caches and logs fail to write", observed=observed,
                       expected=f">= {min_gib:g} GiB free", remedy=remedy)
    if worst < warn_gib * MIB:
        return finding(check, host, Status.WARN, f"{worst_path} has {_size(worst)} free on {host}, below "
                       f"{warn_gib:g} GiB", observed=observed, expected=f">= {warn_gib:g} GiB free", remedy=remedy)
    return finding(check, host, Status.PASS, f"{observed}", observed=observed,
                   expected=f">= {warn_gib:g} GiB free")


Interval = tuple[float, float]


def consensus(intervals: Mapping[str, Interval]) -> tuple[Interval, int]:
    """The span covered by the most intervals (Marzullo's algorithm) and how many cover it.

    >>> consensus({"a": (-1.0, 0.5), "b": (0.0, 2.0), "c": (0.2, 0.3), "d": (5.0, 6.0)})
    ((0.2, 0.3), 3)
    """
    edges = sorted([(low, 0) for low, _ in intervals.values()] + [(high, 1) for _, high in intervals.values()])
    best, count, span = 0, 0, (0.0, 0.0)
    for i, (at, kind) in enumerate(edges):
        count += 1 if kind == 0 else -1
        if kind == 0 and count > best:
            best, span = count, (at, edges[i + 1][0])
    return span, best


def distance(interval: Interval, reference: Interval) -> float:
    """Signed gap between an offset interval and the reference: 0 when they overlap.

    >>> distance((2.5, 4.0), (0.0, 0.0)), distance((-6.0, -3.0), (-1.0, 1.0)), distance((-3.0, 1.0), (0.0, 0.0))
    (2.5, -2.0, 0.0)
    """
    if interval[0] > reference[1]:
        return interval[0] - reference[1]
    if interval[1] < reference[0]:
        return interval[1] - reference[0]
    return 0.0


def _clock(facts: Mapping[str, Facts], warn_s: float, max_s: float) -> list[Finding]:
    check = "os.clock"
    findings: list[Finding] = []
    intervals: dict[str, Interval] = {}
    for host, host_facts in facts.items():
        clock = host_facts.get("clock") or {}
        offset = clock.get("offset_s")
        if isinstance(offset, list) and len(offset) == 2 and all(isinstance(v, (int, float)) for v in offset):
            intervals[host] = (float(offset[0]), float(offset[1]))
        elif clock.get("time") is None:
            findings.append(finding(check, host, Status.ERROR, "could not read the host's time"))
        else:
            findings.append(finding(check, host, Status.ERROR, "no controller send/receive time for "
                                    f"{host}: its offset cannot be bracketed"))
    reference, against = (0.0, 0.0), "the controller"
    if len(intervals) >= 3:
        span, agreeing = consensus(intervals)
        if 2 * agreeing > len(intervals) and distance(span, (0.0, 0.0)) != 0.0:
            reference, against = span, f"the other hosts ({agreeing} of {len(intervals)} agree; the controller's " \
                                       f"clock is {-distance(span, (0.0, 0.0)):+.1f} s off them)"
    remedy = "chronyc makestep  # and keep time synced: systemctl enable --now chronyd (or timedatectl set-ntp true)"
    for host, (low, high) in intervals.items():
        skew = round(distance((low, high), reference), 1) + 0.0  # + 0.0 turns -0.0 into 0.0
        observed = (f"{skew:+.1f} s (offset {low:+.3f}..{high:+.3f} s against the controller, "
                    f"round trip {high - low:.3f} s)")
        if abs(skew) > max_s:
            findings.append(finding(
                check, host, Status.FAIL,
                f"{host}'s clock is at least {abs(skew):.1f} s off {against}, over {max_s:g} s: torchrun's "
                "rendezvous drops nodes whose heartbeat looks older than 15 s, TLS rejects certificates, logs do "
                "not line up", observed=observed, expected=f"within {max_s:g} s", remedy=remedy))
        elif abs(skew) > warn_s:
            findings.append(finding(
                check, host, Status.WARN,
                f"{host}'s clock is at least {abs(skew):.1f} s off {against}, over {warn_s:g} s: logs of "
                "different hosts do not line up", observed=observed, expected=f"within {warn_s:g} s",
                remedy=remedy))
        else:
            findings.append(finding(check, host, Status.PASS, f"{observed} from {against}",
                                    observed=observed, expected=f"within {warn_s:g} s"))
    return findings
