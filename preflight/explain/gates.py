"""The gates of the hand-written code tables: what a line must contain to carry one of a table's codes
(``decode.Gate``), read off each table's ``find`` (every regex it tries needs one of these words or shapes). The
template tables get theirs from their anchors (``table_templates.build``); a table without a gate is asked about
every line.

Most lines of a big log (NCCL INFO, progress bars, loss lines, traceback frames) carry none of them, so ``matcher``
tries each table's gate (a few substring tests, one small regex) instead of all of its regexes (a 150,000-line log:
docs/explain.md). ``tests/test_explain_tables.py`` checks that no gate rejects a line its table answers.

>>> GATES["xid"].admits("kernel: nvrm: xid (pci:0000:3b:00): 79, gpu has fallen off the bus.")
True
>>> any(g.admits("epoch 3 step 100 loss=0.12") for g in GATES.values())
False
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from preflight.explain import table_cuda_error, table_nccl_result
from preflight.explain.decode import CodeTable, Gate
from preflight.explain.table_templates import normalize
from preflight.explain.wordtrie import trie_pattern

# CANN's EE/EH/EI/EJ/EK/EL/EZ, operator E2-E9/EA/EB/EF/EM/EO/EP and GE E1 codes (table_cann, table_cann_ops,
# table_ge): E + 5
_CANN = Gate(shape=re.compile(r"e[a-z0-9][0-9]{4}"))
# aclError / aclnnStatus: a 6-digit number 1xxxxx-5xxxxx, or an ACL_ERROR_* / ACLNN_ERR_* name (table_acl)
_ACL = Gate(("acl_error", "aclnn_err"), re.compile(r"[1-5][0-9]{5}"))

GATES: dict[str, Gate] = {
    "cann": _CANN, "hcomm": _CANN, "cann_inner": _CANN, "cann_opbase": _CANN, "cann_ops": _CANN, "ge": _CANN,
    # torch_npu's "HCCL function error", HCCL_E_* names, HCCL's errNo[0x...] (its "call trace: hcclRet -> N" is read
    # on HCCL lines only)
    "hccl_result": Gate(("hccl", "errno")),
    "acl": _ACL, "aclnn": _ACL,
    # torch_npu's "ERR01001 OPS invalid parameter" (table_torch_npu)
    "torch_npu_err": Gate(shape=re.compile(r"err[0-9]{5}")),
    # the runtime's "drvRetCode=6" / "drv ret=0x57" / "drvRet[6]", DRV_ERROR_* names; DCMI's -8xxx and names
    "ascend_drv": Gate(("drvretcode", "drvret", "drv ret", "drv_error_", "dev_error_", "unable to hal")),
    "dcmi": Gate(("dcmi_err_code_",), re.compile(r"-8[0-9]{3}")),
    # ATB's "... fail, error code: N" templates and its ERROR_* names (table_atb)
    "atb": Gate(("fail, error code", "error_invalid_", "error_graph_", "error_operation_null", "error_out_of_")),
    # cudaErrorXxx / CUDA_ERROR_XXX names, "CUDA error", "cuda runtime error", "Cuda failure", THCudaCheck, CUresult,
    # a number after "error code", Triton's "[CUDA]: " (round 29), and the texts no other library prints (recognised
    # without a CUDA marker)
    "cuda_error": Gate(("cudaerror", "cudasuccess", "cuda_error", "cuda_success", "cuda error", "cuda runtime error",
                        "curesult", "cuda failure", "thcudacheck", "error code", "[cuda]: ",
                        *(text for text, _ in table_cuda_error._BARE))),
    # hipErrorXxx / hipSuccess names, "HIP error", a hip_*.cpp runtime log line (table_hip_error)
    "hip_error": Gate(("hiperror", "hipsuccess", "hip error", "hip_")),
    "xid": Gate(("xid",)),
    # NVML_ERROR_* names, NVMLError_* classes, "initialize NVML", "nvml error", nvidia-smi's device handle (table_nvml)
    "nvml": Gate(("nvml", "unable to determine the device handle")),
    # an RDMA completion's status: NCCL's "Got completion", IBV_WC_* names, Open MPI's "status number", perftest's
    # "Failed status", libibverbs' texts on a completion / ibv_* / wr_id / wc / cq line (table_ibv_wc)
    "ibv_wc_status": Gate(("completion", "poll_cq", "ibv_", "wr_id", "net/ib", "status number", "failed status"),
                          words=frozenset({"wc", "cq"})),
    "cuda_libs": Gate(("cublas_status_", "cudnn_status_")),
    # the EFA provider's codes on an OFI plugin / libfabric / EFA line (table_efa)
    "efa": Gate(("net/ofi", "prov_errno", "libfabric", "fi_cq"), words=frozenset({"efa"})),
    # ncclXxx result names, CuPy's NCCL_ERROR_*, "NCCL error" / "NCCL failure", ncclGetErrorString's texts of the
    # codes that stand alone, NCCL INFO's "file.cc:123 -> N" trace
    "nccl_result": Gate(("ncclsuccess", "ncclunhandledcudaerror", "ncclsystemerror", "ncclinternalerror",
                         "ncclinvalidargument", "ncclinvalidusage", "ncclremoteerror", "ncclinprogress",
                         "nccltimeout", "nccl_error_", "nccl error", "nccl failure",
                         *(text for text, _ in table_nccl_result._OWN)),
                        re.compile(r"nccl info \S+\.(?:cc|cu|h|c|cpp):[0-9]+ -> [0-9]")),
    # torchrun's "exitcode", "exit code/status", "received by PID", DeepSpeed's "return code", spawn's / mpirun's /
    # pdsh's signals, CalledProcessError's "died with <Signals", srun's "task N:", bash's "line N: PID", core dumps,
    # the shell's bare "Killed", a signal handler's "Caught signal 7" / "received signal SIGBUS" / faulthandler's line
    "exit_signal": Gate(("exitcode", "exit code", "exit status", "received by pid", "return code", "with signal",
                         "on signal", "by signal", "died with <signals", "core dumped", "caught signal",
                         "received signal", "fatal python error", "nonexistent physical address"),
                        re.compile(r"\btasks? [0-9,\-\[\]]+:|\bline [0-9]+: [0-9]|^\s*killed\s*$")),
}


def gate_of(table: CodeTable) -> Gate | None:
    """The table's own gate, else the one written here for it by name (None: the table is asked about every line)."""
    return table.gate or GATES.get(table.name)


class GatePlan:
    """The tables to ask about a line: each gate is tried once per line (tables sharing one share the answer), the
    line lower-cased and normalized once for all of them.

    >>> from preflight.explain.tables import DECODERS
    >>> plan = GatePlan(DECODERS)
    >>> [t.name for t in plan.asked("epoch 3 step 100 loss=0.12")]
    ['nccl_warn']
    >>> "cuda_error" in [t.name for t in plan.asked("RuntimeError: CUDA error: out of memory")]
    True
    """

    def __init__(self, tables: tuple[CodeTable, ...]) -> None:
        gates: list[Gate] = []
        order: list[tuple[CodeTable, int]] = []
        for table in tables:
            gate = gate_of(table)
            if gate is not None and all(g is not gate for g in gates):
                gates.append(gate)
            order.append((table, -1 if gate is None else next(i for i, g in enumerate(gates) if g is gate)))
        self.gates = tuple(gates)
        self.order = tuple(order)
        self.ungated = tuple(table for table, i in order if i < 0)
        self.plain = any(not g.normalized for g in gates)
        self.normalized = any(g.normalized for g in gates)
        # every gate's markers and shapes as one trie regex per form, and every gate's words: a line none of them
        # admits (most lines of a big log) costs two searches, not one per gate
        self.any_plain = _any(g for g in gates if not g.normalized)
        self.any_normalized = _any(g for g in gates if g.normalized)
        self.words = frozenset(w for g in gates for w in g.words)

    def asked(self, line: str) -> tuple[CodeTable, ...]:
        """The tables whose gate admits the line (or that have none), in their order."""
        low = " ".join(line.lower().split()) if self.plain else ""
        norm = normalize(line) if self.normalized else ""
        tokens = set(norm.split())
        if (self.any_plain is None or not self.any_plain.search(low)) and (
                self.any_normalized is None or not self.any_normalized.search(norm)) and (
                self.words.isdisjoint(tokens) and self.words.isdisjoint(low.split())):
            return self.ungated
        admitted = {i for i, gate in enumerate(self.gates)
                    if (gate.admits(norm, tokens) if gate.normalized else gate.admits(low))}
        if not admitted:
            return self.ungated
        return tuple(table for table, i in self.order if i < 0 or i in admitted)


def _any(gates: Iterable[Gate]) -> re.Pattern[str] | None:
    """One regex that finds what any of the gates' markers or shapes finds (None: none has any).

    >>> _any([Gate(("xid", "nccl error")), Gate(shape=re.compile("e[0-9]{5}"))]).pattern
    '(?:nccl\\\\ error|xid)|(?:e[0-9]{5})'
    """
    chosen = list(gates)
    markers = sorted({m for g in chosen for m in g.markers})
    shapes = {g.shape.pattern: g.shape.flags for g in chosen if g.shape is not None}
    if len(set(shapes.values())) > 1:
        raise ValueError("gate shapes with different regex flags cannot share one regex")
    parts = ([trie_pattern(markers)] if markers else []) + [f"(?:{p})" for p in shapes]
    return re.compile("|".join(parts), next(iter(shapes.values()), 0)) if parts else None


_PLANS: dict[tuple[int, ...], tuple[tuple[CodeTable, ...], GatePlan]] = {}


def plan_for(tables: tuple[CodeTable, ...]) -> GatePlan:
    """The (cached) plan of a tuple of tables."""
    key = tuple(id(t) for t in tables)
    if key not in _PLANS:
        _PLANS[key] = (tables, GatePlan(tables))  # the tables are kept so their ids stay theirs
    return _PLANS[key][1]
