"""Launch mistakes read from the shape of the logs rather than from one line (issue 38, round 23), for logs whose
lines name no cause:

- Lightning's DDP start line (``initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4``, ``Initializing distributed: ...``)
  printed twice for one rank (more processes than the Trainer's world: Slurm's tasks against ``Trainer(num_nodes,
  devices)``), or a log that stops at it before every member joined (the job waits for ranks never started);
- nccl-tests' summary (``# Avg bus bandwidth``) printed more than once in one log of an MPI launch: every process
  ran the test alone (a binary built without ``MPI=1``);
- launch commands in the logs that disagree on ``--master_addr`` / ``--master_port`` or give two nodes one
  ``--node_rank``.

Each finder returns ``(file index, 1-based line number, what it saw)`` or None.

>>> start = "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4"
>>> lightning_shape([[start, start]])
(0, 2, 'rank 1 started twice')
>>> lightning_shape([["initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2", "Epoch 0: 100%", "loss=0.1"]]) is None
True
>>> command_shape([["python -m torch.distributed.launch --nnodes=2 --node_rank=0 --master_addr=localhost t.py",
...                 "python -m torch.distributed.launch --nnodes=2 --node_rank=0 --master_addr=10.0.0.1 t.py"]])
(0, 2, 'the launch commands give --master_addr localhost and 10.0.0.1')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

Found = tuple[int, int, str]

_DDP = re.compile(r"\b(?:initializing ddp|initializing distributed): GLOBAL_RANK: (\d+), MEMBER: (\d+)/(\d+)",
                  re.IGNORECASE)
# Lightning's banners printed around the start line: they are no progress
_BANNER = re.compile(r"\b(?:GPU|TPU|IPU|HPU) available\b|^\s*LOCAL_RANK: \d+ - |Multi-processing is handled by|"
                     r"^\s*-{5,}\s*$|distributed_backend=|All distributed processes registered", re.IGNORECASE)
_SUMMARY = re.compile(r"^\s*#\s*Avg bus bandwidth\s*:")
_HEADER = re.compile(r"^\s*#\s*(?:nThread\b|Using devices\b)")  # the start of one test's output
_MPI = re.compile(r"\b(?:mpirun|mpiexec|srun)\b")
_OPTION = re.compile(r"--(master[_-]addr|master[_-]port|node[_-]rank|nnodes)[= ]+([^\s`'\"]+)")


def lightning_shape(files: Sequence[Sequence[str]]) -> Found | None:
    """A rank Lightning started twice, or a log that ends at Lightning's start line with members missing."""
    seen: set[str] = set()
    for index, lines in enumerate(files):
        for number, line in enumerate(lines, start=1):
            m = _DDP.search(line)
            if m is None:
                continue
            if m[1] in seen:
                return index, number, f"rank {m[1]} started twice"
            seen.add(m[1])
    for index, lines in enumerate(files):
        starts = [(n, m) for n, m in ((n, _DDP.search(line)) for n, line in enumerate(lines, start=1)) if m]
        if not starts:
            continue
        number, last = starts[-1]
        after = [line for line in lines[number:] if line.strip() and not _DDP.search(line) and
                 not _BANNER.search(line)]
        world = int(last[3])
        if not after and len(seen) < world:
            return index, number, f"the log stops with {len(seen)} of {world} members started"
    return None


def nccl_tests_shape(files: Sequence[Sequence[str]]) -> Found | None:
    """nccl-tests' summary printed more than once in one log of an MPI launch, with no new test's header between two of
    them (two tests run one after the other print a header each: no launch mistake).

    >>> run = ["mpirun -np 2 ./all_reduce_perf -g 2", "# nThread 1 nGpus 2 minBytes 8", "# Avg bus bandwidth : 3.9"]
    >>> nccl_tests_shape([run + run[1:]]) is None
    True
    >>> nccl_tests_shape([run + run[2:]])
    (0, 4, 'nccl-tests printed its summary 2 times')
    """
    for index, lines in enumerate(files):
        summaries = [n for n, line in enumerate(lines, start=1) if _SUMMARY.search(line)]
        if len(summaries) < 2 or not any(_MPI.search(line) for line in lines):
            continue
        for first, second in zip(summaries, summaries[1:], strict=False):
            if not any(_HEADER.search(line) for line in lines[first:second - 1]):
                return index, second, f"nccl-tests printed its summary {len(summaries)} times"
    return None


def command_shape(files: Sequence[Sequence[str]]) -> Found | None:
    """Launch commands that disagree on the master's address or port, or repeat a node rank of a multi-node job."""
    first: dict[str, str] = {}
    ranks: list[str] = []
    multi = False
    for index, lines in enumerate(files):
        for number, line in enumerate(lines, start=1):
            options = {k.replace("-", "_"): v for k, v in _OPTION.findall(line)}
            multi = multi or options.get("nnodes", "1") not in ("1", "1:1")
            for key in ("master_addr", "master_port"):
                value = options.get(key)
                if value is not None and first.setdefault(key, value) != value:
                    return index, number, f"the launch commands give --{key} {first[key]} and {value}"
            if "node_rank" in options:
                if multi and options["node_rank"] in ranks:
                    return index, number, f"two launch commands give --node_rank {options['node_rank']}"
                ranks.append(options["node_rank"])
    return None
