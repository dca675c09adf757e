"""Every vendor code table ``explain`` decodes with (``preflight.explain.decode``), in the order they are tried.

A table module adds itself here (one import and one entry of ``DECODERS``); ``tests/test_explain_tables.py``
decodes, for every table, a code that no log sample carries.

>>> all(t.source.startswith("https://") and t.version for t in DECODERS)
True
"""

from __future__ import annotations

from preflight.explain import (
    table_acl,
    table_ascend_driver,
    table_atb,
    table_cann,
    table_cann_opbase,
    table_cann_ops,
    table_cann_text,
    table_cuda_error,
    table_cuda_libs,
    table_efa,
    table_flash_attn,
    table_ge,
    table_hip_error,
    table_ibv_wc,
    table_nccl_result,
    table_nccl_warn,
    table_nvml,
    table_torch_npu,
    table_torch_npu_device,
    table_ucx,
    table_xid,
)
from preflight.explain.decode import CodeTable
from preflight.explain.table_c10d import TABLE as C10D
from preflight.explain.table_elastic import TABLE as ELASTIC
from preflight.explain.table_exit import TABLE as EXIT
from preflight.explain.table_gloo import TABLE as GLOO
from preflight.explain.table_hccl import HCCL_RESULTS
from preflight.explain.table_launchers import ACCELERATE, DEEPSPEED, HOROVOD, LIGHTNING, REMOTE_SHELL
from preflight.explain.table_megatron import TABLE as MEGATRON
from preflight.explain.table_mpi_slurm import OPENMPI, SLURM
from preflight.explain.table_torch_npu_dist import TABLE as TORCH_NPU_DIST
from preflight.explain.table_vllm import TABLE as VLLM

DECODERS: tuple[CodeTable, ...] = (
    *table_cann.TABLES,  # Ascend: CANN EE/EH/EI/EJ/EK/EL/EZ codes
    table_cann_opbase.TABLE,  # Ascend: opbase's operator parameter checks (EZ0008-EZ0038)
    table_cann_ops.TABLE,  # Ascend: CANN operator/compiler/AI CPU codes (E2-E9xxxx, EA/EB/EF/EM/EO/EP)
    table_ge.TABLE,  # Ascend: CANN Graph Engine codes (E1xxxx: options, paths, ranktable values, models)
    table_cann_text.TABLE,  # Ascend: those three tables' messages by their text, when the code is not on the line
    HCCL_RESULTS,  # Ascend: HcclResult
    *table_acl.TABLES,  # Ascend: aclError, aclnnStatus
    table_torch_npu.TABLE,  # Ascend: torch_npu's ERRxxyyy (OPS / GRAPH rejections, memory; the rest generic)
    table_torch_npu_device.TABLE,  # Ascend: torch_npu's device-fault names (UCE ERROR, HCCS LINK ERROR...)
    *table_ascend_driver.TABLES,  # Ascend: the driver's drvError_t (drvRetCode=N), DCMI's -8xxx (npu-smi, plugins)
    table_atb.TABLE,  # Ascend: ATB's ErrorType after an operation's "... fail, error code: N" (MindIE, fused ops)
    table_ibv_wc.TABLE,  # InfiniBand/RoCE: ibv_wc_status of a failed completion (NCCL NET/IB, Open MPI, perftest)
    table_efa.TABLE,  # AWS EFA: the EFA provider's prov_errno (1-15, 4096-4126) as aws-ofi-nccl prints it
    table_ucx.TABLE,  # UCX: ucs_status_t texts, mlx5 syndromes, missing transports/devices (Open MPI pml ucx, NIXL)
    table_nccl_warn.TABLE,  # NVIDIA: NCCL WARN messages by template (NET/IB, NET/Socket, Bootstrap, SHM, P2P...)
    table_cuda_error.TABLE,  # NVIDIA: cudaError_t
    table_hip_error.TABLE,  # AMD ROCm: hipError_t (categories of its CUDA twins)
    table_cuda_libs.TABLE,  # NVIDIA: cublasStatus_t, cudnnStatus_t (allocation oom, rejected call, versions)
    table_flash_attn.TABLE,  # FlashAttention 2/3's checks: a GPU older than sm_80, a build without a feature, tensors
    table_xid.TABLE,  # NVIDIA: Xid (preflight.xid_catalog)
    table_nvml.TABLE,  # NVIDIA: nvmlReturn_t (nvidia-smi, the container toolkit, pynvml)
    table_nccl_result.TABLE,  # NVIDIA: ncclResult_t (the summary of a WARN line before it)
    C10D,  # torch.distributed (c10d): Dist*Error, store sockets, ProcessGroupNCCL / Gloo messages
    TORCH_NPU_DIST,  # Ascend: torch_npu's ProcessGroupHCCL checks (tensors, devices, options, hcclUniqueId)
    ELASTIC,  # torchrun / elastic: rendezvous errors, the agent, ChildFailedError's summary
    EXIT,  # exit codes and signals (exitcode: -9, Signal 6 (SIGABRT), exit code 137...)
    GLOO,  # gloo's TCP transport
    DEEPSPEED,  # DeepSpeed's launcher
    ACCELERATE,  # accelerate launch
    MEGATRON,  # Megatron-LM's (MindSpeed's, NeMo's) checks of the launch arguments and model config
    REMOTE_SHELL,  # pdsh / ssh as the launchers start nodes
    HOROVOD,  # horovodrun: its ssh check, task servers, interfaces
    LIGHTNING,  # Lightning's Trainer / Fabric: its devices, Slurm's and torchrun's sizes
    VLLM,  # vLLM: KV cache / startup memory, parallel sizes, Ray placement, its workers and engine core
    OPENMPI,  # Open MPI's mpirun (ORTE / PRRTE)
    SLURM,  # Slurm's srun / slurmstepd
)
