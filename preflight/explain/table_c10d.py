"""torch.distributed's C++ core (c10d) as a code table: its exception classes (DistNetworkError, DistStoreError,
DistBackendError...) and the messages of its store sockets, ProcessGroupNCCL's watchdog and ProcessGroupGloo, keyed
by normalized template (``table_c10d_rows``) and found tolerantly (``table_templates``).

Source: torch's ``torch/csrc/distributed/c10d`` and ``distributed_c10d.py``, read as the strings of the 1.13.1,
2.1.2, 2.4.1, 2.6.0, 2.9.1 (CUDA) and 2.13.0 (CPU) wheels, where every wording of those versions is kept.

>>> [d.code.name for d in TABLE.decode("[W1226 socket.cpp:697] [c10d] The client socket has timed out after 1800s "
...     "while trying to connect to (10.0.0.1, 29500).")]
['store: client connect timed out']
>>> [(d.code.name, d.code.root_cause) for d in TABLE.decode(
...     "[rank3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] watchdog caught collective operation timeout: "
...     "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600043 milliseconds before timing out")]
[('NCCL watchdog: collective timeout', False)]
"""

from __future__ import annotations

from preflight.explain.table_c10d_rows import ROWS
from preflight.explain.table_templates import build

SOURCE = "https://github.com/pytorch/pytorch/tree/v2.9.1/torch/csrc/distributed/c10d"
VERSION = "torch 2.9.1 (wordings of 1.13.1, 2.1.2, 2.4.1, 2.6.0, 2.9.1 and 2.13.0)"

TABLE = build("c10d", SOURCE, VERSION, ROWS)
