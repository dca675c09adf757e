"""The coverage tables of docs/explain.md, generated from the catalog (``python -m preflight.explain.coverage``
prints them; tests/test_explain_coverage.py checks the docs carry the current ones).

>>> library_of("nccl.shm_attach_failed"), library_of("cuda.oom"), library_of("hccl.ej0001")
('NCCL', 'CUDA / NVIDIA driver', 'HCCL / CANN / torch_npu')
>>> library_of("vllm.device_memory_short"), library_of("alloc.more_than_1eb")
('vLLM / vllm-ascend', 'torch (build, caching allocator)')
"""

from __future__ import annotations

from collections.abc import Iterable

from preflight.explain.catalog import CATALOG
from preflight.explain.signature import CATEGORIES, Signature

LIBRARIES = {
    "c10d": "torch.distributed (c10d, TCPStore)", "store": "torch.distributed (c10d, TCPStore)",
    "rdzv": "torchrun / elastic", "elastic": "torchrun / elastic", "launch": "torchrun / elastic",
    "nccl": "NCCL", "gloo": "gloo", "cuda": "CUDA / NVIDIA driver", "nvml": "CUDA / NVIDIA driver",
    "nvidia_smi": "CUDA / NVIDIA driver", "nvrm": "CUDA / NVIDIA driver", "hccl": "HCCL / CANN / torch_npu",
    "torch_npu": "HCCL / CANN / torch_npu", "cann": "HCCL / CANN / torch_npu", "aclnn": "HCCL / CANN / torch_npu",
    "mindspore": "MindSpore", "deepspeed": "DeepSpeed launcher, pdsh, ssh",
    "ssh": "DeepSpeed launcher, pdsh, ssh", "hostfile": "DeepSpeed launcher, pdsh, ssh",
    "accelerate": "accelerate", "mpirun": "Open MPI (mpirun)", "os": "OS limits",
    "npu_smi": "HCCL / CANN / torch_npu", "vllm": "vLLM / vllm-ascend", "parallel": "vLLM / vllm-ascend",
    "torch": "torch (build, caching allocator)", "alloc": "torch (build, caching allocator)",
    "triton": "Triton", "triton_ascend": "Triton", "host": "OS limits", "net": "network (interfaces, addresses)",
    "orte": "Open MPI (mpirun)", "ucx": "Open MPI (mpirun)", "ibverbs": "rdma-core (libibverbs)",
    "collective": "torch.distributed (c10d, TCPStore)", "nvidia_container": "CUDA / NVIDIA driver",
    "docker": "CUDA / NVIDIA driver", "driver": "CUDA / NVIDIA driver",
}


def library_of(ident: str) -> str:
    """The library whose printed text a signature id comes from (by its prefix)."""
    return LIBRARIES.get(ident.split(".", 1)[0], "other")


def by_library(catalog: Iterable[Signature] = CATALOG) -> str:
    """Markdown table: library, number of signatures, categories they cover."""
    rows: dict[str, list[Signature]] = {}
    for sig in catalog:
        rows.setdefault(library_of(sig.id), []).append(sig)
    out = ["| library | signatures | categories |", "|---|---|---|"]
    for lib in sorted(rows, key=lambda k: (-len(rows[k]), k)):
        cats = sorted({s.category for s in rows[lib]})
        out.append(f"| {lib} | {len(rows[lib])} | {', '.join(f'`{c}`' for c in cats)} |")
    total = sum(len(v) for v in rows.values())
    out.append(f"| **all** | **{total}** | {len({s.category for v in rows.values() for s in v})} categories |")
    return "\n".join(out) + "\n"


def by_category(catalog: Iterable[Signature] = CATALOG) -> str:
    """Markdown table: category, its signatures, the checks that verify it."""
    sigs = list(catalog)
    out = ["| category | signatures | checks that verify it |", "|---|---|---|"]
    for cat in CATEGORIES:
        mine = [s for s in sigs if s.category == cat]
        if not mine:
            continue
        checks = sorted({c for s in mine for c in s.checks})
        out.append(f"| `{cat}` | {', '.join(f'`{s.id}`' for s in mine)} | "
                   f"{', '.join(f'`{c}`' for c in checks) or '-'} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(by_library() + "\n" + by_category(), end="")
