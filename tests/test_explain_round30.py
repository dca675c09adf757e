"""Round 30, written from the spent sixteenth set's misses (docs/explain.md, "Round 30"): opbase's operator parameter
codes (EZ0008-EZ0038), NCCL's unhandled CUDA error as the wrapper of the failure under ``Last error:``, a package's own
``__getattr__`` and a custom-op namespace lacking a name, protobuf's descriptor check, requirement conflicts, a server
that cannot bind its port, an operator failing inside a TorchScript function or on a model's input shape, and an
import shadowed by a folder of the job's own tree."""

from __future__ import annotations

import pytest

from preflight.explain.matcher import explain_texts
from preflight.explain.table_cann_opbase import ROWS
from preflight.explain.table_cann_opbase import TABLE as OPBASE


def _best(text: str) -> tuple[str, str]:
    best = explain_texts({"rank0.log": text}).best
    return (best.signature.category, best.signature.id) if best is not None else ("unknown", "")


def test_opbase_table_holds_the_codes_the_runtime_json_lacks() -> None:
    assert len(OPBASE.entries) == len(ROWS) == 31
    assert {c.category for c in OPBASE.entries.values()} == {"app-fault", "launch-args"}
    assert OPBASE.entries["EZ0030"].category == "launch-args"  # an operator's file it could not open
    assert OPBASE.source.startswith("https://github.com/hicann/opbase/blob/") and OPBASE.version


@pytest.mark.parametrize("line", [
    "RuntimeError: [PID: 1] 2026-07-10-03:47:20.947.958 Invalid_Argument(EZ0027): Parameters a, b of Op have "
    "incorrect values 3, 0. Reason: must be 0.",
    "EZ0021: Parameters x1, x2 of MatMul have incorrect dtypes [DT_INT8, DT_FLOAT]. Reason: must be the same.",
])
def test_an_operator_parameter_code_is_the_jobs_fault(line: str) -> None:
    category, ident = _best(line)
    assert category == "app-fault" and ident.startswith("code.cann_opbase."), ident


def test_nccl_unhandled_cuda_error_names_the_cuda_failure_under_it() -> None:
    log = ("ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 2 'out of memory'\n")
    assert _best(log) == ("oom", "code.cuda_error.2")
    alone = "torch.distributed.DistBackendError: NCCL error\nncclUnhandledCudaError: Call to CUDA function failed.\n"
    assert _best(alone) == ("driver", "nccl.unhandled_cuda_error")  # nothing under it: NCCL saw a CUDA call fail


@pytest.mark.parametrize(("text", "category"), [
    # torch/__init__.py's module __getattr__ in the traceback: the installed torch lacks the name
    ('  File "torch/__init__.py", line 2562, in __getattr__\n'
     "    raise AttributeError(f\"module '{__name__}' has no attribute '{name}'\")\n"
     "AttributeError: module 'torch' has no attribute 'float8_e4m3fn'", "version-mismatch"),
    # torch/_ops.py: a custom-op library built for another torch
    ("AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'", "version-mismatch"),
    ("TypeError: Descriptors cannot be created directly.", "version-mismatch"),
    ("E   If you cannot immediately regenerate your protos, some other possible workarounds are:\n"
     "E    1. Downgrade the protobuf package to 3.20.x or lower.", "version-mismatch"),
    ("pkg_resources.VersionConflict: (torch 2.1.0 (/usr/lib/python3/site-packages), Requirement.parse('torch>=2.4'))",
     "version-mismatch"),
    ("pkg_resources.DistributionNotFound: The 'flash-attn' distribution was not found and is required by the "
     "application", "version-mismatch"),
    ("RuntimeError: Cannot install on Python version 3.12.1; only versions >=3.8,<3.12 are supported.",
     "version-mismatch"),
    ("main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080", "port-in-use"),
    ("RuntimeError: The following operation failed in the TorchScript interpreter.\nTraceback of TorchScript:\n"
     "RuntimeError: selected index k out of range", "app-fault"),
    ("E20221122 MxOmModelDesc.cpp:741] InputTensor Shape mismatches.", "app-fault"),
])
def test_round30_families(text: str, category: str) -> None:
    assert _best(text)[0] == category, _best(text)


def test_a_port_under_1024_stays_privileged_and_a_refused_bind_is_no_port_conflict() -> None:
    assert _best("thread 'main' panicked at 'error binding to 0.0.0.0:80: Permission denied'")[0] == "privileged-port"
    assert _best("start: couldn't bind HTTP server socket, hostname: 10.0.0.9, port: 8080: Cannot assign requested "
                 "address")[0] != "port-in-use"


def test_module_attribute_without_the_packages_own_getattr_is_not_read_as_a_version() -> None:
    # a script named torch.py shadows the package as often: the bare line names no version
    assert _best("AttributeError: module 'torch' has no attribute 'cuda'") == ("unknown", "")


def test_an_import_shadowed_by_a_folder_of_the_job_is_no_version_problem() -> None:
    shadowed = "ImportError: cannot import name 'Dataset' from 'datasets' (./myproj/datasets/__init__.py)"
    assert _best(shadowed)[0] == "unknown"
    installed = ("ImportError: cannot import name 'Dataset' from 'datasets' "
                 "(/usr/local/lib/python3.10/site-packages/datasets/__init__.py)")
    assert _best(installed)[0] == "version-mismatch"
