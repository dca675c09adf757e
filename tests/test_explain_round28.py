"""Issue 38's round 28, written blind to the sixteenth set: Ascend's own fault knowledge (MindCluster's fault
diagnosis knowledge base, ``preflight.explain.families_ascend``) read as keyword families.

Every row is read from a line holding its keywords (as the knowledge base's parser looks for them); a few lines in
the plog's and the training log's own layout; and lines that hold only part of a keyword set are not read.
"""

from __future__ import annotations

import pytest

from preflight.explain.families_ascend import _ROWS, SOURCE
from preflight.explain.matcher import explain_texts


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"plog-1234.log": text}, resemble=False).best
    return (best.signature.category, best.signature.id) if best else ("unknown", "")


@pytest.mark.parametrize(("fault", "category", "fragments"),
                         [(row[0], row[2], sets[0]) for row in _ROWS for sets in (row[3],)])
def test_each_fault_of_the_knowledge_base_is_read_from_its_keywords(fault: str, category: str,
                                                                    fragments: tuple[str, ...]) -> None:
    module = "HCCL" if "_HCC" in fault or "ERRMSG" in fault else "RUNTIME" if "CANN_Runtime" in fault else "APP"
    line = f"[ERROR] {module}(1234,python):2026-01-05-10:00:00.000.000 " + " x7 ".join(fragments) + " (see above)"
    got, sig = _best(line)
    assert got == category, (fault, sig)


@pytest.mark.parametrize(("line", "category"), [
    ("[ERROR] HCCL(31245,python):2025-03-18-10:12:31.511.046 [topoinfo_exchange_server.cc:210][31245]"
     "[Get][Connection]topo exchange server get socket timeout! timeout[120 s]", "hccl-timeout"),
    ("[ERROR] RUNTIME(4721,python):2025-03-18-10:40:02.118.200 [task_info.cc:1088]4721 PrintErrorInfo:Task run "
     "failed, base information is streamID:[3], taskID[12], taskType[Notify Wait], tsId[0].", "hccl-timeout"),
    ("[ERROR] HCCL(882,python):2025-03-18-11:02:17.020.433 [hccl_socket_manager.cc:301][882][Find][LocalHostIP]"
     "ip [192.168.3.7] of [HCCL_IF_IP] is not found in the nic list", "wrong-interface"),
    ("RuntimeError: Failed to connect to the meta server node url: 10.0.0.2:8118", "master-unreachable"),
    # torch_npu's own checks (torch_npu/__init__.py, csrc/core/npu/interface)
    ("RuntimeError: Two accelerators cannot be used at the same time in PyTorch: npu and cuda. You can install the "
     "cpu version of PyTorch to use your npu device", "version-mismatch"),
    ("RuntimeError: The from_ipc_handle method is not supported, please upgrade the HDK(driver) or CANN package.",
     "driver"),
])
def test_lines_in_the_logs_own_layout(line: str, category: str) -> None:
    assert _best(line)[0] == category


@pytest.mark.parametrize("line", [
    "[INFO] HCCL(882,python): [Init][EnvVarParam] HCCL_CONNECT_TIMEOUT set by environment to [1800]s",
    "devNum must be divisible by 8",  # half of the set: the knowledge base asks for both parts
    "Spawned worker process number: 8",
])
def test_part_of_a_keyword_set_is_not_read(line: str) -> None:
    got, sig = _best(line)
    assert "AISW_" not in sig, (line, got, sig)


def test_the_source_is_pinned() -> None:
    assert "/blob/22bb3d987bc0208c3eb7395e222b661276133c58/" in SOURCE and SOURCE.endswith("kg-config.json")


def test_nccl_without_rdma_nics_is_no_missing_device() -> None:
    """NCCL's INFO ``NET/IB : No device found.`` (a host without RDMA NICs, going on over sockets) is no failure
    family; a device the job asked for and did not get still is."""
    from preflight.explain.families import family_of

    assert family_of("node1:2211:2290 [0] NCCL INFO NET/IB : No device found.") is None
    found = family_of("RuntimeError: No CUDA GPUs are available")
    assert found is not None and found.category == "device-mapping"
