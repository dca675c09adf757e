"""Round 36 (blind to the eighteenth set): UCX's failures as a code table - ``ucs_status_string``'s texts, the mlx5
completion syndromes, a device or transport the host lacks, a socket ``connect`` that failed - read only on a line
that names UCX (Open MPI's ``pml ucx``, OpenSHMEM, NIXL, UCC carry it)."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.table_ucx import ROWS, TABLE

_HEAD = "[1617284401.552011] [gpu1:4455:0]  "


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


@pytest.mark.parametrize(("line", "category"), [
    (_HEAD + "sock.c:116  UCX  ERROR connect(fd=217, dest_addr=10.1.3.9:45654) failed: Connection timed out",
     "firewall"),
    ("[gpu1:4455] pml_ucx.c:385  Error: ucp_ep_create(proc=96) failed: Destination is unreachable", "wrong-interface"),
    (_HEAD + "ucp_worker.c:1720 UCX  ERROR no active messages transport to <no debug data>: self/memory - "
     "Destination is unreachable", "wrong-interface"),
    (_HEAD + "ucp_context.c:1069 UCX  WARN  network device 'mlx5_2:1' is not available, please use one or more of: "
     "'eth0'(tcp), 'mlx5_0:1'(ib)", "wrong-interface"),
    (_HEAD + "ucp_context.c:1069 UCX  WARN  transport 'rc_mlx5' is not available, please use one or more of: cma, "
     "posix, self, sysv, tcp", "rdma"),
    (_HEAD + " ib_mlx5_log.c:143  UCX  ERROR Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 "
     "hw_synd 0/0)", "fabric"),
    (_HEAD + " ib_mlx5_log.c:143  UCX  ERROR Local length on mlx5_0:1/RoCE (synd 0x1 vend 0x0 hw_synd 0/0)", "mtu"),
    (_HEAD + "mm_ep.c:158  UCX  ERROR mm ep failed to connect to remote FIFO id 0xc000000480000856: Shared memory "
     "error", "shm"),
    (_HEAD + "ucp_mm.c:80   UCX  ERROR ucp_mem_map() failed: Out of memory", "memlock"),
])
def test_ucx_failures_are_decoded(line: str, category: str) -> None:
    got = _best(line)
    assert got[0] == category and got[1].startswith("code.ucx."), got


def test_a_reset_peer_is_a_symptom_and_the_cause_before_it_wins() -> None:
    """A reset by the peer only reports the peer's failure: the device the host lacks, logged first, is the cause."""
    log = (_HEAD + "ucp_context.c:1069 UCX  WARN  network device 'mlx5_2:1' is not available, please use one or more "
           "of: 'eth0'(tcp)\n" + _HEAD + "ucp_worker.c:2804 UCX  ERROR ep 0x7f2 connection reset by remote peer: "
           "Connection reset by remote peer")
    assert _best(log)[0] == "wrong-interface"
    reset = TABLE.decode(_HEAD + "UCX  ERROR send failed: Connection reset by remote peer")
    assert [d.code.root_cause for d in reset] == [False]


def test_every_row_names_a_category_and_a_fix() -> None:
    assert len(ROWS) == len(TABLE.entries) == 15  # + 3 in round 38
    assert all(row.fix and row.meaning for row in ROWS)


@pytest.mark.parametrize("line", [
    "RuntimeError: Destination is unreachable",  # no UCX on the line: another library's words
    "OSError: [Errno 12] Out of memory",
    _HEAD + "ucp_context.c:1851 UCX  INFO  Version 1.16.0 (loaded from /opt/hpcx/ucx/lib/libucp.so.0)",
    _HEAD + "parser.c:2036 UCX  WARN  unused environment variable: UCX_ROOT (maybe: UCX_TLS?)",
])
def test_other_lines_are_not_decoded(line: str) -> None:
    assert TABLE.decode(line) == []
