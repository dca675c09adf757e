"""A silent hang in NCCL's setup on one node: the logs stop while NCCL (or nccl-tests / rccl-tests) sets up two or
more GPUs of one host, with no error anywhere and nothing after.

A hang prints nothing: the last lines are NCCL's own setup (``Bootstrap``, ``NET/Socket``, ``Channel``, the
nccl-tests header) and then the job sits there at 100% GPU until a watchdog or the user kills it. Between the GPUs
of one host NCCL's first transfers go peer to peer (PCIe / NVLink P2P); where the IOMMU or PCIe Access Control
Services (ACS) redirect that traffic, the transfer never completes. NCCL's troubleshooting guide names both (ACS
on PCIe switches, the IOMMU on AMD and virtualised hosts) as the cause of hangs and data corruption, and
``NCCL_P2P_DISABLE=1`` (shared memory instead) as the test. Across hosts the same silence has no single usual
cause (firewall, interface, fabric), so only one host's logs are read as this.

The shape, all of it:

- NCCL lines (``host:pid:tid [dev] NCCL INFO``) or nccl-tests rank lines (``#  Rank  0 ... on HOST device 1``; the
  older ``Rank  0 uses device  0 [0x05] Tesla M40`` of one process on one host) show one host and at least two
  devices; or they show one host and the launch asked for two or more GPUs on one node (torchrun's
  ``--nproc_per_node 4`` without ``--nnodes`` above 1, nccl-tests' ``-g 4`` / ``nGpus 4``);
- no other line looks like an error (``clean.SUSPICIOUS``; NCCL's own INFO / WARN lines are read by the catalog,
  which found nothing it calls a cause);
- the logs end in that setup: at most ``TAIL_LINES`` lines of other output after the last NCCL line (a job that
  went on to train did not hang in setup), and no nccl-tests result summary (``Avg bus bandwidth``).

>>> log = ["a6000:42:42 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>", "NCCL version 2.10.3+cuda11.3",
...        "a6000:43:43 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>"]
>>> h = silent_hang([log])
>>> (h.host, h.devices, h.file_index, h.line_number)
('a6000', 2, 0, 3)
>>> silent_hang([log + ["epoch 1 step 10 loss 2.31", "epoch 1 step 20 loss 2.02", "epoch 1 step 30 loss 1.87"]])
>>> silent_hang([log + ["RuntimeError: boom"]]) is None, silent_hang([log[:2]]) is None
(True, True)
>>> silent_hang([["$ torchrun --nproc_per_node 4 --nnodes 1 train.py", log[0]]]).devices
4
>>> silent_hang([["> Using devices", "   Rank  0 uses device  0 [0x05] Tesla M40 24GB",
...               "   Rank  1 uses device  1 [0x08] Tesla M40 24GB", ">"]]).host
'this host'

"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from preflight.explain.clean import SUSPICIOUS

TAIL_LINES = 2  # other lines allowed after the last NCCL line (a shell prompt, a progress bar, a "..." of the paste)
_NCCL = re.compile(r"(?P<host>[\w.-]+):\d+:\d+ \[(?P<dev>\d+)\] (?:[\w/.-]+:\d+ )?NCCL (?:INFO|WARN)\b")
_RANK = re.compile(r"^#\s+Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device\s+(?P<dev>\d+)\b")
_OLD_RANK = re.compile(r"^\s*Rank\s+\d+\s+uses device\s+(?P<dev>\d+)\s+\[0x[0-9a-f]+\]", re.IGNORECASE)
_QUOTE = re.compile(r"^\s*(?:>\s?)+")  # a Markdown quote of the log (a forum or an issue)
_SETUP = re.compile(r"^\s*(?:#|NCCL version\b|rccl-tests: Version\b|Using devices\b|\$ |\./build/\w+_perf\b|"
                    r"out-of-place\b|(?:size|bytes)\s+(?:count|N)\s+type\b|$)")
_PER_NODE = re.compile(r"--nproc[_-]per[_-]node[= ](\d+)|(?:_perf\b.*\s-g\s?|\bnGpus\s)(\d+)")
_NODES = re.compile(r"--nnodes[= ](\d+)")
_LOCAL = "this host"  # the host of the older nccl-tests rank lines: one process, one host
_FINISHED = re.compile(r"Avg bus bandwidth|Destroy COMPLETE|Out of bounds values", re.IGNORECASE)


@dataclass(frozen=True)
class Hang:
    """Where a silent hang stopped: the host, how many of its devices NCCL set up, and the last setup line."""

    host: str
    devices: int
    file_index: int
    line_number: int  # 1-based, in that file


def silent_hang(files: Sequence[Sequence[str]]) -> Hang | None:
    """The silent hang the logs (their lines, file by file) show, or None."""
    hosts: set[str] = set()
    devices: set[tuple[str, str]] = set()
    asked = 0  # GPUs the launch asked for on one node (torchrun's --nproc_per_node, nccl-tests' -g)
    last: tuple[int, int] | None = None  # (file index, line number) of the last NCCL line of the last such file
    for index, lines in enumerate(files):
        last_here = 0
        for number, raw in enumerate(lines, start=1):
            line = _QUOTE.sub("", raw)
            if _FINISHED.search(line):
                return None
            launch = _PER_NODE.search(line)
            if launch and all(int(n) <= 1 for n in _NODES.findall(line)):
                asked = max(asked, int(launch[1] or launch[2]))
            found = _NCCL.search(line) or _RANK.search(line)
            host = found["host"] if found else _LOCAL
            found = found or _OLD_RANK.search(line)
            if found:
                hosts.add(host)
                devices.add((host, found["dev"]))
                last_here = number
            elif not _SETUP.match(line) and SUSPICIOUS.search(line):
                return None
        if last_here:
            tail = [line for line in lines[last_here:] if not _SETUP.match(_QUOTE.sub("", line))]
            if len(tail) > TAIL_LINES:
                return None
            last = (index, last_here)
    if last is None or len(hosts) != 1 or max(len(devices), asked) < 2:
        return None
    return Hang(next(iter(hosts)), max(len(devices), asked), last[0], last[1])
