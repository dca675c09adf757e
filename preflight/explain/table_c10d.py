"""torch.distributed's C++ core (c10d) as a code table: its exception classes (DistNetworkError, DistStoreError,
DistBackendError...) and the messages of its store sockets, ProcessGroupNCCL's watchdog and ProcessGroupGloo, keyed
by normalized template (``table_c10d_rows``) and found tolerantly (``table_templates``).

Source: torch's ``torch/csrc/distributed/c10d`` and ``distributed_c10d.py``, read as the strings of the 1.13.1,
2.1.2, 2.4.1, 2.6.0, 2.9.1 (CUDA) and 2.13.0 (CPU) wheels, where every wording of those versions is kept; and the
torch 1.x wordings of ``torch/lib/c10d`` (pytorch/pytorch at f64e82381ae8c9a3a79b8730c5ab5ef18b46d41c, the torch 1.9
cycle, the last before c10d moved to ``torch/csrc``: ``Utils.cpp``'s tcputil ``connect() timed out.`` / ``waiting for
processes to connect has timed out``, and that directory's ``Utils.hpp``, ``TCPStore.cpp``, ``FileStore.cpp``,
``NCCLUtils.hpp``, ``ProcessGroupNCCL.cpp``, ``ProcessGroupGloo.cpp``, ``GlooDeviceFactory.cpp``, ``ProcessGroup.cpp``,
``ProcessGroupMPI.cpp`` as stored), with the 1.x ``distributed_c10d.py`` / ``rendezvous.py`` messages.

>>> [d.code.name for d in TABLE.decode("[W1226 socket.cpp:697] [c10d] The client socket has timed out after 1800s "
...     "while trying to connect to (10.0.0.1, 29500).")]
['store: client connect timed out']
>>> [(d.code.name, d.code.root_cause) for d in TABLE.decode(
...     "[rank3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] watchdog caught collective operation timeout: "
...     "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600043 milliseconds before timing out")]
[('NCCL watchdog: collective timeout', False)]
>>> [(d.code.name, d.code.category) for d in TABLE.decode("RuntimeError: connect() timed out.")]  # torch 1.0-1.9
[('store: connect() timed out', 'firewall')]
"""

from __future__ import annotations

from preflight.explain.table_c10d_rows import ROWS
from preflight.explain.table_templates import ASCEND_MODULE_LINE, build

SOURCE = "https://github.com/pytorch/pytorch/tree/v2.9.1/torch/csrc/distributed/c10d"
VERSION = ("torch 2.9.1 (wordings of 1.13.1, 2.1.2, 2.4.1, 2.6.0, 2.9.1 and 2.13.0, and torch/lib/c10d at "
           "f64e82381ae8c9a3a79b8730c5ab5ef18b46d41c (torch 1.x))")

TABLE = build("c10d", SOURCE, VERSION, ROWS, foreign=ASCEND_MODULE_LINE)
