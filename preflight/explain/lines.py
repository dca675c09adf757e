"""What one log line (or its file) says besides the failure: its time, its rank, its host, and whether it is a
harmless warning that must not outrank a real error.

Hosts come from the line's own prefix (NCCL's ``node3:12345:12400 [0] NCCL WARN``, Open MPI's ``[node3:12345]``,
``kubectl logs --prefix``'s ``[pod/train-worker-1/main]``, a ``host: `` prefix that pdsh / DeepSpeed put on many
lines), else the file (one host among its prefixes, torchrun's failure summary ``host      : node3``, else a
host-like part of its path: ``node3/rank0.log``, ``train-worker-1.log``).

>>> host_of_line("kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer")
'kp-ddp-worker-0'
>>> host_of_line("[node3:12345] *** Process received signal ***"), host_of_line("[W socket.cpp:601] x")
('node3', None)
>>> path_rank("logs/attempt_0/3/stderr.log"), path_host("run/node3/attempt_0/3/stderr.log")
(3, 'node3')
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath

_ISO = re.compile(r"(\d{4})[-/](\d{2})[-/](\d{2})[ T-](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?")
_GLOG = re.compile(r"(?<![\w])[IWEF](\d{3,4}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?")
_US = re.compile(r"\b(\d{2})/(\d{2})/(\d{4}) (\d{2}):(\d{2}):(\d{2})")
_LINE_RANK = re.compile(r"\[rank ?(\d+)\]|\[Rank (\d+)\]|RankID:(\d+)|\brank\s*: (\d+) \(local_rank|"
                        r"(?:^|[\s:])\[\d+,(\d+)\]<std(?:out|err)>", re.IGNORECASE)
_FILE_RANK = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)

_HOSTNAME = r"[A-Za-z][\w.-]*"
_SOURCE_FILE = re.compile(r"\.(?:cpp|cc|cxx|c|h|hpp|cu|cuh|py|ts|go|rs|java)$")
# NCCL's debug.cc: "%s:%d:%d [%d] NCCL INFO " and "%s:%d:%d [%d] %s:%d NCCL WARN " (host:pid:tid [dev] file:line)
_NCCL_PREFIX = re.compile(rf"(?<![\w.-])({_HOSTNAME}):\d+:\d+ \[\d+\] (?:\S+:\d+ )?NCCL (?:INFO|WARN|TRACE|ABORT)")
_PID_PREFIX = re.compile(rf"^\s*\[({_HOSTNAME}):\d+\]")
_KUBECTL_PREFIX = re.compile(r"^\[pod/([\w.-]+)/[\w.-]+\] ")
_COLON_PREFIX = re.compile(rf"^({_HOSTNAME}): ")
# torchrun's failure summary (elastic/multiprocessing/errors): "  host      : node3", "  rank      : 3 (local_rank: 3)",
# also under a launcher's or a log collector's prefix ("2026-09-17 13:40:05   host      : ...")
_SUMMARY_HOST = re.compile(r"(?:^|\s)(?:host|hostname)\s*:\s*(\S+)\s*$")
_SUMMARY_RANK = re.compile(r"(?:^|\s)rank\s*:\s*(\d+)")
_NOT_A_HOST = re.compile(r"^(?:E[A-Z]\d{4}|\w*(?:Error|Exception|Warning|WARNING|ERROR|INFO|DEBUG)|"
                         r"[A-Z]+|Traceback|File|frame|rank\d*|Root Cause|localhost|https?)$")

# torchrun's --log-dir layout: <dir>/<run id>/attempt_<n>/<local rank>/{stdout,stderr}.log
_TORCHRUN_LAYOUT = re.compile(r"(?:^|/)attempt_\d+/(\d+)/(?:stdout|stderr)\.log$")
_GENERIC_PART = re.compile(r"^(?:\d+|slurm-\d+(?:_\d+)?|stdout|stderr|error|logs?|output|out|err|runs?|jobs?|tmp|"
                           r"var|pods?|\d[\d_.:-]*|v\d[\w.]*|(?:r|rank|local_?rank|proc(?:ess)?|p|gpu|npu|cuda|"
                           r"dev(?:ice)?|lr|log|out|err|task|job|step|epoch|run|attempt|try|part)[-_]?\d+)$",
                           re.IGNORECASE)
_HOSTLIKE_PART = re.compile(r"^(?=.*\d)[A-Za-z][\w.-]*$")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")

# Lines that only warn: the real error, if any, is elsewhere; a match on them never outranks one that is not.
# torch's own [W ...] lines are not among them: c10d and gloo print real causes at that level (errno 113, the
# loopback fallback).
_HARMLESS = re.compile(
    r"\b(?:UserWarning|FutureWarning|DeprecationWarning|PendingDeprecationWarning|ResourceWarning)\b"
    r"|\bis deprecated\b|\bhas been deprecated\b|\bwill be (?:removed|deprecated)\b"
    r"|Setting OMP_NUM_THREADS environment variable"
    r"|^\W*(?:\[rank\d+\]:)?\s*\[WARNING\]"  # CANN / HCCL plog: [WARNING] HCCL(...)
    r"|^\s*WARNING(?::|\s\d)"  # Python logging / vLLM: "WARNING: ...", "WARNING 03-24 17:02:27 ..."
    r"|NCCL WARN (?:Could not find real path|Ignoring\b|.* is being ignored|.*, setting (?:it )?to\b|"
    r".*setting NCCL_\w+ to\b|Missing \"iblist\")"
    r"|\bwarnings\.warn\("
    r"|NCCL INFO .*\bProceeding without\b",  # NCCL falling back (NVLS bind failed: "Proceeding without NVLS support")
    re.IGNORECASE)
_PY_WARNING = re.compile(r":\d+: \w*Warning: ")
# Warnings that state why the job cannot run (round 35): torch's "UserWarning: CUDA initialization: <the driver's
# error>" sets the visible GPUs to zero, and every later "No CUDA GPUs are available" is its consequence; round 39:
# vLLM's "Tensor parallel size (8) exceeds available GPUs (4)" before the placement group Ray cannot give
_CAUSE_WARNING = re.compile(r"\bUserWarning: CUDA initialization: "
                            r"|\bTensor parallel size \(\d+\) exceeds available GPUs\b")


def timestamp(line: str) -> tuple[int, int, float] | None:
    """(month, day, seconds of the day) of the line's timestamp; None without one (years are ignored:
    glog lines have none).

    >>> timestamp("[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] x")
    (6, 26, 23084.903881913)
    >>> timestamp("EI0006: 2024-08-05-18:15:21.270.506 Getting socket times out")
    (8, 5, 65721.27)
    >>> timestamp("no time here") is None
    True
    """
    m = _ISO.search(line)
    if m:
        frac = float("0." + m.group(7)) if m.group(7) else 0.0
        return int(m.group(2)), int(m.group(3)), _secs(m.group(4), m.group(5), m.group(6)) + frac
    m = _GLOG.search(line)
    if m:
        md = m.group(1)
        frac = float("0." + m.group(5)) if m.group(5) else 0.0
        return int(md[:-2]), int(md[-2:]), _secs(m.group(2), m.group(3), m.group(4)) + frac
    m = _US.search(line)
    if m:
        return int(m.group(1)), int(m.group(2)), _secs(m.group(4), m.group(5), m.group(6))
    return None


def _secs(h: str, m: str, s: str) -> float:
    return float(int(h) * 3600 + int(m) * 60 + int(s))


def line_rank(line: str) -> int | None:
    """The rank a line names (``[rank3]:``, ``RankID:3``, mpirun's ``[1,3]<stdout>``), else None."""
    m = _LINE_RANK.search(line)
    return int(next(g for g in m.groups() if g is not None)) if m else None


def path_rank(file: str) -> int | None:
    """The rank in a log's path: ``rank_7.log``, or torchrun's ``attempt_0/<local rank>/stderr.log``."""
    posix = file.replace("\\", "/")
    m = _TORCHRUN_LAYOUT.search(posix)
    if m:
        return int(m.group(1))
    m = _FILE_RANK.search(PurePath(posix).name)
    return int(m.group(1)) if m else None


def path_host(file: str) -> str | None:
    """A host-like part of a log's path, nearest first: ``node3/rank0.log`` -> node3, ``train-worker-1.log``
    -> train-worker-1; None when no part looks like a host name (a letter and a digit, or an IPv4 address).

    >>> path_host("logs/rank0.log"), path_host("10.0.0.7/stdout.log"), path_host("slurm-4411.out")
    (None, '10.0.0.7', None)
    >>> path_host("r0.log"), path_host("gpu3.log"), path_host("default/train-worker-1/logs.txt")
    (None, None, 'train-worker-1')
    >>> path_host("node1/none_3__tsy5i/attempt_0/0/stderr.log")  # torchrun's run folder is not a host
    'node1'
    """
    parts = PurePath(file.replace("\\", "/")).parts
    if not parts:
        return None
    stem = re.sub(r"\.(?:log|txt|out|err)$", "", parts[-1])
    # torchrun --log-dir makes the folder above attempt_<n> with tempfile.mkdtemp(prefix=f"{run_id}_"): <run id>_
    # and 8 random characters ("none_3__tsy5i"); that is not a host
    run_folders = {parts[i - 1] for i in range(1, len(parts)) if re.fullmatch(r"attempt_\d+", parts[i])
                   and re.fullmatch(r".+_[a-z0-9_]{8}", parts[i - 1])}
    for part in (stem, *(p for p in reversed(parts[:-1]) if p not in run_folders)):
        if _IPV4.match(part):
            return part
        if not _GENERIC_PART.match(part) and _HOSTLIKE_PART.match(part) and not _NOT_A_HOST.match(part):
            return part
    return None


def host_of_line(line: str) -> str | None:
    """The host a line's own prefix names (NCCL, Open MPI ``[host:pid]``, ``kubectl logs --prefix``)."""
    for pattern in (_NCCL_PREFIX, _KUBECTL_PREFIX, _PID_PREFIX):
        m = pattern.search(line)
        if m and not _SOURCE_FILE.search(m.group(1)) and not _NOT_A_HOST.match(m.group(1)):
            return m.group(1)
    return None


def harmless(line: str) -> bool:
    """A warning that is not a failure: deprecation notices (``TORCH_NCCL_*``), Python warnings, CANN ``[WARNING]``
    lines, informational ``NCCL WARN`` lines, NCCL's INFO that it falls back, torchrun's OMP_NUM_THREADS notice.

    >>> harmless("[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated")
    True
    >>> harmless("node1:77:77 [0] NCCL WARN Could not find real path of /sys/class/net/ib0/device")
    True
    >>> harmless("node1:77:77 [0] NCCL WARN Cuda failure 'out of memory'")
    False
    >>> harmless("[W socket.cpp:558] [c10d] The client socket has failed to connect to [h]:1234 (errno: 113 - x).")
    False
    >>> harmless("[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address.")
    False
    >>> harmless("h:7:9 [0] NCCL INFO Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA "
    ...          "error 401 'the operation cannot be performed in the present state'. Proceeding without NVLS support.")
    True
    """
    low = line.lower()
    if not any(word in low for word in ("warn", "deprecat", "will be removed", "omp_num", "proceeding without")):
        return False  # every harmless form carries one of these words: most lines stop here
    return bool(_HARMLESS.search(line)) and not _CAUSE_WARNING.search(line)


@dataclass(frozen=True)
class FileFacts:
    """What a whole log says about where it ran: its host and rank when the lines themselves do not."""

    host: str | None
    rank: int | None
    prefix_hosts: frozenset[str]  # ``host: `` prefixes repeated on many lines (pdsh, DeepSpeed's runner)
    harmless_lines: frozenset[int]  # 1-based numbers of warning lines (with a Python warning's source line)

    def host_of(self, line: str) -> str | None:
        """The line's host: its own prefix, else the file's."""
        found = host_of_line(line)
        if found:
            return found
        m = _COLON_PREFIX.match(line)
        if m and m.group(1) in self.prefix_hosts:
            return m.group(1)
        return self.host

    def rank_of(self, line: str) -> int | None:
        """The line's rank, else the file's."""
        found = line_rank(line)
        return found if found is not None else self.rank


def file_facts(lines: list[str], file: str) -> FileFacts:
    """The host and rank of a log as a whole, and which of its lines only warn.

    >>> f = file_facts(["Root Cause (first observed failure):", "[0]:", "  host      : node3",
    ...                 "  rank      : 3 (local_rank: 3)"], "agent.log")
    >>> (f.host, f.rank)
    ('node3', 3)
    """
    line_hosts: Counter[str] = Counter()
    prefixes: Counter[str] = Counter()
    summary_host: str | None = None
    summary_rank: int | None = None
    in_root = False
    warned: set[int] = set()
    for number, line in enumerate(lines, start=1):
        if harmless(line):
            warned.add(number)
            if _PY_WARNING.search(line) and number < len(lines) and lines[number][:1].isspace():
                warned.add(number + 1)  # the source line Python prints under a warning
        host = host_of_line(line)
        if host:
            line_hosts[host] += 1
        m = _COLON_PREFIX.match(line)
        if m and not _NOT_A_HOST.match(m.group(1)) and (re.search(r"\d|-", m.group(1))):
            prefixes[m.group(1)] += 1
        if "Root Cause (first observed failure)" in line:
            in_root = True
        elif in_root:
            h = _SUMMARY_HOST.search(line)
            r = _SUMMARY_RANK.search(line)
            if h and summary_host is None:
                summary_host = h.group(1)
            if r and summary_rank is None:
                summary_rank = int(r.group(1))
            if "=====" in line and summary_host:
                in_root = False
    prefix_hosts = frozenset(h for h, n in prefixes.items() if n >= 3)
    single = next(iter(line_hosts)) if len(line_hosts) == 1 else None
    host = single or summary_host or path_host(file)
    rank = path_rank(file)
    return FileFacts(host, rank if rank is not None else summary_rank, prefix_hosts, frozenset(warned))
