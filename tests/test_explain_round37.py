"""Round 37 (blind to the eighteenth set): AWS EFA's completion errors as a code table - the EFA provider's
``prov_errno`` codes and texts (libfabric's ``efa_errno.h``) as NCCL's OFI plugin and libfabric print them."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.table_efa import ENTRIES, TABLE


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


# aws-ofi-nccl's GIN requests (nccl_ofi_gin_reqs.cpp); the other requests' wording (nccl_ofi_platform.h) below
_REQUEST = "node-3:4417:4502 [2] NCCL WARN NET/OFI Request 0x7f3a20 completed with error. RC: {rc}. Flags: 0. Error: "


@pytest.mark.parametrize(("line", "category", "code"), [
    (_REQUEST.format(rc=113) + "15 (Unreachable remote (never received a response)). Completed length: 0", "firewall",
     "15"),
    ("node-3:4417:4502 [2] NCCL WARN NET/OFI Request 0x7f3a20 (send) completed with error: err: 113, flags: 0, "
     "prov_errno: 15, strerror: Unreachable remote (never received a response), len: 0", "firewall", "15"),
    (_REQUEST.format(rc=103) + "4126 (Unresponsive receiver (reachable by EFA device but handshake failed)). "
     "Completed length: 0", "fabric", "4126"),
    (_REQUEST.format(rc=90) + "6 (Message too long). Completed length: 0", "collective-mismatch", "6"),
    ("libfabric:4417:1700000000::efa:ep_ctrl:efa_base_ep_write_eq_error():358<warn> Writing error to EQ: err: "
     "Input/output error (5) prov_errno: SHM internal error (4122)", "shm", "4122"),
    ("node-3:4417:4502 [2] NCCL WARN NET/OFI Request 0x7f3a20 (recv) completed with error: err: 5, flags: 0, "
     "prov_errno: 4105, strerror: Out of memory, len: 0", "memlock", "4105"),
])
def test_efa_codes_are_decoded(line: str, category: str, code: str) -> None:
    assert TABLE.find(line)[0] == code
    assert _best(line) == (category, f"code.efa.{code}")


def test_every_code_of_the_provider_is_in_the_table() -> None:
    assert len(ENTRIES) == 15 + 31  # efa_io_comp_status 1-15, the provider's 4096-4126
    assert {c.category for c in ENTRIES.values()} == {"firewall", "fabric", "rdma", "collective-mismatch", "shm",
                                                       "memlock"}


def test_a_peer_that_stopped_answering_is_a_symptom() -> None:
    assert not TABLE.decode(_REQUEST.format(rc=103) + "13 (Unresponsive remote (was previously responsive)). "
                            "Completed length: 0")[0].code.root_cause


@pytest.mark.parametrize("line", [
    "RuntimeError: Error: 15 (invalid argument)",  # no EFA / OFI on the line
    "NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)",
    "NCCL INFO NET/OFI Using aws-ofi-nccl 1.16.0; Error: none",
])
def test_other_lines_are_not_decoded(line: str) -> None:
    assert TABLE.find(line) == []
