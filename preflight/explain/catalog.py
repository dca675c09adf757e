"""Known failure signatures of distributed-training launches (torchrun, DeepSpeed, NCCL, gloo, HCCL).

Every entry names the cause, the fix, the preflight checks that verify it on live hosts and the public
post its test excerpt comes from (tests/fixtures/explain/excerpts.json keeps the excerpts).

``weight`` orders matches: a root cause (``root_cause=True``) that names what is wrong beats a generic
symptom (a timeout, a reset connection) that only says some other rank failed.

>>> SIGNATURES["hccl.ej0001"].category
'hccl-stale-process'
>>> len(CATALOG) >= 45
True
"""

from __future__ import annotations

from preflight.explain.catalog_ascend import ASCEND
from preflight.explain.catalog_builds import BUILDS
from preflight.explain.catalog_cuda import CUDA
from preflight.explain.catalog_device import DEVICE
from preflight.explain.catalog_hosts import HOSTS
from preflight.explain.catalog_launchers import LAUNCHERS
from preflight.explain.catalog_nccl import NCCL
from preflight.explain.catalog_network import NETWORK
from preflight.explain.catalog_torch import TORCH
from preflight.explain.signature import CATEGORIES, Signature

__all__ = ["CATALOG", "CATEGORIES", "SIGNATURES", "Signature"]

# In matching order: the entries of a part keep their order, as when they were one table.
CATALOG: tuple[Signature, ...] = (*NETWORK, *HOSTS, *ASCEND, *CUDA, *NCCL, *TORCH, *LAUNCHERS, *DEVICE,
                                    *BUILDS)

SIGNATURES: dict[str, Signature] = {s.id: s for s in CATALOG}
