"""Known failure signatures, part six: what launchers and the collective libraries under them print when a job
is started wrongly (torch.distributed.launch / torchrun arguments, init_process_group never called, a torch
build without NCCL), when a launcher cannot start its processes (DeepSpeed without GPUs, Open MPI's mpirun
daemons and slots, horovodrun's slots, accelerate on RTX 4000 cards), gloo's own failures (a size mismatch between
ranks, an operation timeout) and vLLM's startup checks (round 3 of issue 38: the device memory it may take, the
devices it can see, the parallel sizes the model's dimensions allow - the same text on GPUs and, through
vllm-ascend, on NPUs). Patterns are the text those tools print. See ``catalog``.

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
        (r"are not enough slots available in the system to satisfy",  # also a paste that lost "There"
         # horovodrun's own check (horovod/runner/common/util/hosts.py, get_host_assignments)
         r"Process number should not be larger than total available slots"),
        "mpirun (or horovodrun) was asked for more processes than the slots its hosts offer: the hostfile's "
        "`slots=N` / `-H host:N` sum is below -np (a bare host counts 1 slot, or the number of cores).",
        "Give every host its slot count (`host slots=8` in the hostfile, `-H host1:8,host2:8`) so the sum "
        "matches -np.",
        (), "https://github.com/horovod/horovod/issues/978", weight=66),
    # --- vLLM's startup checks (round 3): vllm/v1/worker/gpu_worker.py and vllm-ascend's worker ("Free memory on
    # device"), vllm/v1/core/kv_cache_utils.py ("No available memory for the cache blocks"),
    # vllm/v1/executor/multiproc_executor.py (local_world_size), vllm/distributed/utils.py ensure_divisibility
    # (also Megatron's) and vllm/config verify_with_parallel_config (heads / tensor parallel size) ----------------
    Signature(
        "vllm.device_memory_short", "oom",
        (r"Free memory on device (?:\S+ )?\([\d.]+/[\d.]+ GiB\) on startup is less than desired",
         r"No available memory for the cache blocks"),
        "vLLM could not reserve the device memory it was configured to take (--gpu-memory-utilization of the GPU "
        "or NPU): another process holds part of the device at startup, or after the weights nothing is left for "
        "the KV cache.",
        "Free the device (`nvidia-smi` / `npu-smi info`: a previous server still running), lower "
        "--gpu-memory-utilization or --max-model-len, or spread the model over more devices.",
        ("gpu.devices.processes", "npu.processes"), "https://github.com/vllm-project/vllm-ascend/issues/14628",
        weight=84),
    Signature(
        "vllm.world_size_exceeds_devices", "device-mapping",
        (r"local_world_size \(\d+\) must be less than or equal to the number",),
        "vLLM was asked for more workers on this node (tensor x pipeline parallel size) than devices the "
        "process can see: CUDA_VISIBLE_DEVICES / ASCEND_RT_VISIBLE_DEVICES list fewer, or the container has "
        "none mounted (0 visible).",
        "Make the parallel sizes match the visible devices, or expose the devices to the process / container "
        "(--gpus, the /dev/davinciN devices, the *_VISIBLE_DEVICES variable).",
        ("gpu.devices.count", "npu.count", "npu.env"), "https://github.com/vllm-project/vllm-ascend/issues/14631",
        weight=80),
    Signature(
        "parallel.size_not_divisible", "launch-args",
        (r"AssertionError: \d+ is not divisible by \d+\s*$",
         r"Total number of attention heads \(\d+\) must be divisible by tensor parallel size \(\d+\)",
         r"\b(?:tp_size|tensor[ _-]parallel[ _-]size) exceeds num_key_value_heads"),
        "The parallel sizes the job was launched with do not divide the model's dimensions (attention heads, "
        "hidden size, experts) - vLLM's and Megatron's ensure_divisibility / the heads-by-tensor-parallel "
        "check - so the model cannot be split.",
        "Choose a tensor (or expert) parallel size that divides the model's head count and sizes (for 12 heads: "
        "1, 2, 3, 4, 6 or 12), and use the remaining devices for pipeline or data parallelism.",
        (), "https://github.com/zai-org/GLM-V/issues/130", weight=70),
    # --- round 5 (the spent frozen3 set, folded) ------------------------------------------------------------------
    Signature(
        "orte.unpack_past_end", "version-mismatch",
        (r"Data unpack would read past end of buffer",),
        "Open MPI's daemons could not read each other's messages (ORTE/PMIx unpack past the end of a buffer): the "
        "hosts run different Open MPI (or PMIx / hwloc) versions, or one host picks up another installation first "
        "on its PATH / LD_LIBRARY_PATH.",
        "Install one Open MPI version at the same path on every host (`ssh HOST which mpirun orted; mpirun "
        "--version`), remove a second hwloc / Open MPI from the library path, or launch with --prefix.",
        ("versions", "os"), "https://github.com/horovod/horovod/blob/0195c7bd2ec42ca18f1eb5e5b7111e0032bea7f0/docs/"
        "troubleshooting.rst", weight=62),
    Signature(
        "ucx.endpoint_unresolved", "wrong-interface",
        (r"Failed to resolve UCX endpoint for rank", r"Failed to receive UCX worker address"),
        "Open MPI's UCX layer could not get or use another rank's worker address: the hosts expose different "
        "network devices or transports to UCX (a NIC present on one host and not the other, or on other "
        "subnets), so the address one publishes is not reachable from the other.",
        "Pin the same device and transports on every host (`-x UCX_NET_DEVICES=mlx5_0:1` / an interface both "
        "have, `-x UCX_TLS=...`), or `--mca btl_tcp_if_include IF` with the TCP path.",
        ("net.interface",), "https://github.com/mindspore-ai/docs/blob/010322b13f6e39c9e1b4b1f806e8d7eb847f9001/"
        "docs/mindspore/source_zh_cn/faq/distributed_configure.md", weight=56),
    Signature(
        "mindspore.role_invalid", "launch-args",
        (r"InitNodeRole\]? Role name is invalid", r"\bRole name is invalid\b"),
        "MindSpore's dynamic cluster found no valid MS_ROLE (cluster_context.cc InitNodeRole): the script called "
        "communication init() without mpirun and without the environment variables a non-MPI launch needs "
        "(MS_ROLE, MS_SCHED_HOST, MS_SCHED_PORT, MS_WORKER_NUM).",
        "Start the job with msrun / mpirun, or export MS_ROLE (MS_SCHED / MS_WORKER) and the scheduler's "
        "address, port and worker count for every process.",
        (), "https://github.com/mindspore-ai/docs/blob/010322b13f6e39c9e1b4b1f806e8d7eb847f9001/docs/mindspore/"
        "source_zh_cn/faq/distributed_configure.md", weight=70),
    # --- round 7 (the spent frozen5 set, folded) -------------------------------------------------------------
    Signature(
        "orte.daemon_unknown_option", "version-mismatch",
        # orted rejects an option only a newer mpirun passes (ORTE's internal --hnp-topo-sig, --hnp-uri,
        # --tree-spawn, --parent-uri): the daemon on the remote host is another Open MPI than the launcher's
        (r"unknown option \"?--(?:hnp-topo-sig|hnp-uri|tree-spawn|parent-uri)\b",),
        "The Open MPI daemon (orted) started on a remote host did not know an option mpirun passed it: the hosts "
        "run different Open MPI versions (or the remote PATH finds another installation first).",
        "Install one Open MPI version at the same path on every host (`ssh HOST which orted; mpirun --version`), "
        "or launch with --prefix pointing at it.",
        ("versions", "os"), "https://github.com/horovod/horovod/issues/848", weight=70),
    # --- round 9 (the spent frozen6 set, folded) -------------------------------------------------------------
    Signature(
        "ray.port_conflict", "port-in-use",
        # python/ray/_private/node.py, the check of the ports the node's components will use
        (r"Ray component \S+ is trying to use a port number \d+ that is used by other components",),
        "Two of the Ray node's components got the same port: a port left random (the dashboard agent, the runtime "
        "env agent, metrics) landed inside the worker port range, or two components were given one port.",
        "Pin every Ray port (`ray start --dashboard-agent-grpc-port ... --runtime-env-agent-port ... "
        "--metrics-export-port ...`) outside the worker range, or move the range (--min-worker-port / "
        "--max-worker-port).", ("ports.listening",), "https://github.com/NVIDIA-NeMo/RL/issues/261", weight=72),
    Signature(
        "ray.session_mismatch", "port-in-use",
        # python/ray/_private/node.py: the GCS on the port answered with another cluster's session
        (r"Session name session_\S+ does not match persisted value",),
        "The new Ray node reached a GCS (Redis) on its port that belongs to another Ray cluster: a Ray left "
        "running on the host (or a neighbour's job with --network=host) holds the port.",
        "Stop the other Ray (`ray stop --force`) or give each job its own Ray port (--port) and temp dir.",
        ("ports.listening",), "https://github.com/radixark/miles/pull/2860", weight=72),
    # --- round 23 (the spent frozen13 set, folded) -----------------------------------------------------------
    Signature(
        "ray.visible_devices_inconsistent", "device-mapping",
        # python/ray/_private/accelerators/amd_gpu.py (Ray 2.45): HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES
        # must agree on ROCm (the message's own spelling "Inconsistant")
        (r"Inconsist[ae]nt values found\. Please use either HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES",),
        "Ray's AMD GPU support found HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES set to different devices (or one "
        "set and the other not, in Ray releases that demanded both): it cannot tell which GPUs the process owns.",
        "Set only one of the two variables (HIP_VISIBLE_DEVICES on ROCm), or both to the same list; upgrade Ray if "
        "it refuses CUDA_VISIBLE_DEVICES alone.", ("gpu.devices.count",),
        "https://github.com/ray-project/ray/issues/52701", weight=76),
    Signature(
        "slurm.nodelist_as_file", "hostfile",
        # Slurm's compressed host list (SLURM_JOB_NODELIST / SLURM_NODELIST: node[01-04], d05-[41-42]) passed where
        # a host file is read: "cat: d05-[41-42]: No such file or directory"
        (r"\b[\w.-]*\[\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*\][\w.-]*: No such file or directory",),
        "The launch script used Slurm's compressed node list (node[01-04]) as the name of a host file, so no "
        "hosts were read and the launcher had no nodes to start the job on.",
        "Expand the list into a real host file first (`scontrol show hostnames \"$SLURM_JOB_NODELIST\" > hosts`) "
        "and pass that file (with slots per host) to mpirun / deepspeed.", (),
        "https://github.com/awslabs/palace/issues/228", weight=74),
    Signature(
        "oneccl.launcher_env_missing", "launch-args",
        # oneCCL's global.cpp getenv_local_coord: no launcher set the local rank / size it needs for Level Zero IPC
        (r"\bgetenv_local_coord: condition\b", r"\bto get local_idx/count from ATL, set CCL_ZE_IPC_EXCHANGE\b"),
        "oneCCL found no local rank and local size: the job was not started by a launcher oneCCL reads (mpirun / "
        "mpiexec, or CCL_PROCESS_LAUNCHER with CCL_LOCAL_RANK and CCL_LOCAL_SIZE), e.g. accelerate or torchrun "
        "without those variables.",
        "Start the job with an MPI launcher, or set CCL_PROCESS_LAUNCHER=none with CCL_LOCAL_RANK / CCL_LOCAL_SIZE "
        "(from LOCAL_RANK / LOCAL_WORLD_SIZE) for every process; CCL_ZE_IPC_EXCHANGE=sockets as the error says.",
        (), "https://github.com/huggingface/accelerate/issues/2340", weight=74),
)
