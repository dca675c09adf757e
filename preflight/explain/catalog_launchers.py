"""Known failure signatures, part six: what launchers and the collective libraries under them print when a job
is started wrongly (torch.distributed.launch / torchrun arguments, init_process_group never called, a torch
build without NCCL), when a launcher cannot start its processes (DeepSpeed without GPUs, Open MPI's mpirun
daemons and slots, accelerate on RTX 4000 cards) and gloo's own failures (a size mismatch between ranks, an
operation timeout). Patterns are the text those tools print. See ``catalog``.

>>> from preflight.explain.matcher import explain_texts
>>> r = explain_texts({"r.log": "ORTE was unable to reliably start one or more daemons."})
>>> (r.best.signature.id, r.best.signature.category)
('mpirun.orte_daemons', 'ssh')
"""

from __future__ import annotations

from preflight.explain.signature import Signature

LAUNCHERS: tuple[Signature, ...] = (
    # --- gloo (transport/tcp) --------------------------------------------------------------------------
    Signature(
        "gloo.preamble_size_mismatch", "collective-mismatch",
        (r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+",),
        "Gloo received more bytes than the receiving rank posted: the ranks are in different collectives, or "
        "in the same one with tensors of different sizes (rank-dependent code paths, uneven batches).",
        "Make every rank call the same collectives in the same order with tensors of the same shape; "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL names the mismatching collective.",
        (), "https://github.com/PrimeIntellect-ai/prime-diloco/issues/68", weight=80),
    Signature(
        "gloo.op_timeout", "fabric",
        (r"unbound_buffer\.cc:\d+\] Timed out waiting \d+ms for (?:send|recv) operation to complete",),
        "A gloo send/recv did not complete within the process-group timeout (30 min by default): the peer "
        "rank never entered the collective (it crashed, hangs or runs other code) or the network stalls.",
        "Find the rank that is not in the collective (its log has the first error); test the links with "
        "`preflight run --checks allreduce`.",
        ("net.reachability", "firewall.rules"), "https://github.com/FoundationVision/VNext/issues/9", weight=14,
        root_cause=False),
    # --- torch.distributed / torchrun --------------------------------------------------------------------
    Signature(
        "c10d.nccl_not_built", "version-mismatch",
        (r"Distributed package doesn't have NCCL built in",),
        "The installed torch has no NCCL (a Windows, macOS or CPU-only build), so backend='nccl' cannot be "
        "created.",
        "Install a CUDA build of torch on Linux on every node (pip's cu12x wheels), or use backend='gloo' "
        "where NCCL does not exist.",
        ("versions",), "https://github.com/bshall/hubert/issues/1", weight=74),
    Signature(
        "c10d.not_initialized", "launch-args",
        (r"Default process group has not been initialized, please make sure to call init_process_group",),
        "A torch.distributed call ran before init_process_group: the script was started without a launcher "
        "(plain python) or took its single-process path while still calling collectives.",
        "Start it with torchrun / deepspeed / accelerate launch (which set RANK and WORLD_SIZE), or call "
        "init_process_group before any collective, DDP or DistributedSampler.",
        (), "https://github.com/congvvc/InstructSeg/issues/7", weight=70),
    Signature(
        "launch.local_rank_arg", "launch-args",
        (r"error: unrecognized arguments: --local-rank=\d+",),
        "torch.distributed.launch of torch 2.x passes `--local-rank=N` (with a dash) and the script's "
        "argparse only knows `--local_rank`, so every worker exits with usage error 2.",
        "Accept both spellings in the script (`parser.add_argument('--local-rank', '--local_rank', ...)`), "
        "read LOCAL_RANK from the environment, or start it with torchrun.",
        (), "https://github.com/tsujuifu/pytorch_violet/issues/17", weight=74),
    # --- launchers ----------------------------------------------------------------------------------------
    Signature(
        "accelerate.rtx4000_no_p2p", "p2p",
        (r"Using RTX 4000 series doesn't support faster communication broadband via P2P or IB",),
        "accelerate refuses to start NCCL on RTX 40xx cards with P2P or InfiniBand enabled: these consumer "
        "GPUs have no peer-to-peer support and NCCL would hang or fail.",
        "Export NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1 before the job, or start it with `accelerate "
        "launch`, which sets them.",
        ("allreduce",), "https://github.com/tabularis-ai/be_great/issues/54", weight=70),
    Signature(
        "deepspeed.no_gpu", "driver",
        (r"Unable to proceed, no GPU resources available",),
        "The DeepSpeed launcher found no GPU on this node: no NVIDIA driver or device in the container "
        "(--gpus / nvidia runtime missing), CUDA_VISIBLE_DEVICES empty, or a torch build without CUDA.",
        "Check `nvidia-smi` and `python -c 'import torch; print(torch.cuda.device_count())'` in the job's "
        "environment; run the container with --gpus all and install a CUDA build of torch.",
        ("gpu.devices.count", "gpu.devices.driver"), "https://github.com/thu-coai/EVA/issues/11", weight=72),
    Signature(
        "mpirun.orte_daemons", "ssh",
        (r"ORTE was unable to reliably start one or more daemons",),
        "mpirun could not start its orted daemon on a remote host: SSH to it fails, Open MPI is not on that "
        "host's PATH/LD_LIBRARY_PATH, or the daemon cannot connect back to mpirun over the network.",
        "Check `ssh HOST which orted` from the launching node, install Open MPI at the same path on every "
        "host (or pass --prefix), and allow the connection back (--mca oob_tcp_if_include IF).",
        ("os", "net.reachability"), "https://github.com/PoonLab/covizu/issues/350", weight=66,
        root_cause=False),  # mpirun's summary of the ssh / orted failure printed before it
    Signature(
        "mpirun.not_enough_slots", "hostfile",
        (r"There are not enough slots available in the system to satisfy the \d+",),
        "mpirun (or horovodrun) was asked for more processes than the slots its hosts offer: the hostfile's "
        "`slots=N` / `-H host:N` sum is below -np (a bare host counts 1 slot, or the number of cores).",
        "Give every host its slot count (`host slots=8` in the hostfile, `-H host1:8,host2:8`) so the sum "
        "matches -np.",
        (), "https://github.com/horovod/horovod/issues/978", weight=66),
)
