"""The vendor code tables ``explain`` decodes with (``preflight.explain.tables.DECODERS``).

Every table names an https source and a version, and decodes a code that no log sample under
tests/fixtures/explain carries (``UNSEEN``: one case per table; a table joining ``DECODERS`` adds its own).
The lines of those cases are written from the vendor's own message text for the code, not copied from a log:
they test that a code is decoded from its table alone. The sealed ``frozen/`` set is never opened here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.explain.decode import CodeTable
from preflight.explain.signature import CATEGORIES
from preflight.explain.table_acl import ACL, ACLNN
from preflight.explain.table_cann import CANN, CANN_INNER, HCOMM
from preflight.explain.table_hccl import HCCL_RESULT, HCCL_RESULTS
from preflight.explain.tables import DECODERS

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
SEALED = {"frozen"}  # the sealed evaluation set: not read, not listed

# table name -> (a line carrying a code, that code); the code must appear in no log sample
UNSEEN: dict[str, tuple[str, str]] = {
    "cann": ("EL0015: The device access is invalid.", "EL0015"),
    "hcomm": ("Communication_Error_Bind_IP_Port(EI0020): Failed to enable listening for the NPU network adapter "
              "socket. Reason: %s", "EI0020"),
    "cann_inner": ("EL9999: Inner Error!", "EL9999"),
    "hccl_result": ("HCCL function error: HcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, "
                    "&(comm->hcclComm_)), error code is 24", "24"),
    "acl": ("RuntimeError: ACL stream synchronize failed, error code:507054", "507054"),
    "aclnn": ("call aclnnMatmul failed, error code is 561112", "561112"),
}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _sample_lines() -> list[str]:
    """Every line of every log sample under tests/fixtures/explain, the sealed set left out unlisted."""
    lines: list[str] = []
    for top, dirs, files in os.walk(FIXTURES):
        dirs[:] = sorted(d for d in dirs if not (Path(top) == FIXTURES and d in SEALED))
        for name in sorted(files):
            text = (Path(top) / name).read_text(encoding="utf-8", errors="replace")
            texts = _strings(json.loads(text)) if name.endswith(".json") else iter((text,))
            lines += [line for chunk in texts for line in chunk.splitlines()]
    return lines


SAMPLE_LINES = _sample_lines()


def test_samples_were_read() -> None:
    assert len(SAMPLE_LINES) > 500


@pytest.mark.parametrize("table", DECODERS, ids=lambda t: t.name)
def test_table_has_source_version_and_valid_entries(table: CodeTable) -> None:
    assert table.source.startswith("https://") and table.version
    assert table.entries
    for key, code in table.entries.items():
        assert key == code.code and code.name and code.meaning and code.fix, key
        assert code.category in CATEGORIES, (key, code.category)


def test_every_table_has_an_unseen_case() -> None:
    assert {t.name for t in DECODERS} <= set(UNSEEN), "add a case to UNSEEN for each table"
    assert len({t.name for t in DECODERS}) == len(DECODERS)


@pytest.mark.parametrize("table", DECODERS, ids=lambda t: t.name)
def test_decodes_a_code_no_sample_carries(table: CodeTable) -> None:
    line, code = UNSEEN[table.name]
    assert not any(d.code.code == code for sample in SAMPLE_LINES for d in table.decode(sample)), code
    decoded = table.decode(line)
    assert [d.code.code for d in decoded] == [code]
    assert code in decoded[0].describe() and table.source in decoded[0].describe()


# --- the Ascend tables ------------------------------------------------------------------------------


def test_ascend_table_sizes() -> None:
    # error_code.json's EE/EH/EI/EJ/EK/EL/EZ entries; hcomm's extra EI codes; the X9999 inner codes;
    # hccl_types.h without HCCL_SUCCESS; aclError's non-zero codes; aclnnStatus's non-zero codes
    assert [len(t.entries) for t in (CANN, HCOMM, CANN_INNER, HCCL_RESULTS, ACL, ACLNN)] == [101, 4, 4, 25, 251, 26]
    assert {c[:2] for c in CANN.entries} == {"EE", "EH", "EI", "EJ", "EK", "EL", "EZ"}


@pytest.mark.parametrize(("line", "codes"), [
    ("EI0006: Getting socket times out.", ["EI0006"]),
    ("[ERROR] ... [EI0006] get socket timeout", ["EI0006"]),
    ("Communication_Error_Get_Socket(ei0006): ...", ["EI0006"]),
    ("EZ9999[PID: 41421] 2026-07-12-17:20:56 In NO_QUANT situation, block_size should aligned to 16", ["EZ9999"]),
    ("EE9999: Inner Error!  EJ0001 after it", ["EE9999", "EJ0001"]),
    ("XEI0006 EI00061 0xEE1001", []),
])
def test_cann_find_tolerates_format(line: str, codes: list[str]) -> None:
    assert CANN.find(line) == codes


@pytest.mark.parametrize(("line", "code"), [
    ("aclrtSetDevice failed, ret = 507033", "507033"),
    ("SetDevice failed.ret=507033", "507033"),
    ("RuntimeError: ACL stream synchronize failed, error code:507035", "507035"),
    ("NPU function error: AclrtSynchronizeDeviceWithTimeout, ERROR CODE IS 507049", "507049"),
    ("wait for compute device to finish failed, runtime result = 507049", "507049"),
    ("[ERROR] RUNTIME(3132,python):2025-10-15-16:32:16 [stream.cc:1] error code 507015", "507015"),
    ("AclNN_Runtime_Error(EZ9903): aclrtLaunchKernelWithHostArgs failed: 507015", "507015"),
    ("launch err=507015 msg=EZ9999: Inner Error!", "507015"),
    ("returned acl_error_rt_aicore_exception", "507015"),
])
def test_acl_find_tolerates_format(line: str, code: str) -> None:
    assert [d.code.code for d in ACL.decode(line)] == [code]


@pytest.mark.parametrize("line", ["pid=507033 started", "copied 507033 bytes", "secret=507033", "ret=5070331"])
def test_acl_find_ignores_other_numbers(line: str) -> None:
    assert ACL.find(line) == []


@pytest.mark.parametrize(("line", "code"), [
    ("HCCL function error: HcclGetRootInfo(&hcclID), error code is 7", "7"),
    ("hccl function error :HcclGetRootInfo(&hcclID), Error code is 11", "11"),
    ("[ERROR] HCCL(17528,python3):... [AllReduce][Result]errNo[0x0000000005010009] hcclComm AllReduce error", "9"),
    ("[ERROR] HCCL(60570,):2025-12-04-14:46:07.911.325 [hccl_comm.cc:115] [Init]call trace: hcclRet -> 7", "7"),
])
def test_hccl_find_tolerates_format(line: str, code: str) -> None:
    assert [d.code.code for d in HCCL_RESULTS.decode(line)] == [code]


@pytest.mark.parametrize("line", ["error code is 9", "call trace: ret -> 7", "errNo[0x0000000000000009]"])
def test_hccl_find_needs_hccl_context(line: str) -> None:
    assert HCCL_RESULTS.find(line) == []


def test_categories_and_symptoms() -> None:
    assert ACL.entries["507033"].category == "driver"
    assert ACL.entries["207018"].category == CANN.entries["EI0011"].category == "oom"
    assert CANN.entries["EJ0003"].category == HCOMM.entries["EI0020"].category == "hccl-port"
    assert CANN.entries["EI0004"].category == "launch-args"
    assert CANN.entries["EZ9999"].category == ACL.entries["507015"].category == "app-fault"
    # codes that only report another rank's or layer's failure
    assert not any(c.root_cause for c in (CANN.entries["EI0002"], CANN.entries["EI0006"], ACL.entries["507046"],
                                          ACL.entries["507057"], HCCL_RESULTS.entries["9"]))
    assert CANN.entries["EJ0001"].root_cause and ACL.entries["507054"].root_cause


def test_hccl_result_keeps_the_catalog_view() -> None:
    assert HCCL_RESULT[7] == "HCCL_E_UNAVAIL (resource/port in use)" and HCCL_RESULT[24] == "HCCL_E_OOM"
    assert set(HCCL_RESULT) == {0, 1041, *range(1, 25)}
