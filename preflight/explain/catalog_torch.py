"""Known failure signatures, part five: torch.distributed (c10d's ProcessGroupWrapper and TCPStore, the
ncclUniqueId exchange), torchrun / accelerate / DeepSpeed launchers and the OS limits they hit; round 3 of issue 38:
a torch build without CUDA, and an allocation request no device can hold (a corrupt size, not a shortage). Patterns are
the text those libraries raise; older and newer wordings are separate entries. See ``catalog``.

>>> from preflight.explain.matcher import explain_texts
>>> r = explain_texts({"r.log": "OSError: [Errno 24] Too many open files"})
>>> (r.best.signature.id, r.best.signature.category)
('os.too_many_open_files', 'open-files')
"""

from __future__ import annotations

from preflight.explain.signature import Signature

_UID_FIX = "Read rank 0's log for the real error; check it started and reached init_process_group."

TORCH: tuple[Signature, ...] = (
    # --- c10d ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL) --------------------------------
    Signature(
        "c10d.collectives_mismatch", "collective-mismatch",
        (r"Detected mismatch between collectives on ranks",),
        "Ranks called different collectives, or the same collective with different shapes or dtypes, at "
        "the same sequence number (torch's ProcessGroupWrapper compared their fingerprints).",
        "Read the two CollectiveFingerPrint entries: make every rank take the same code path and pass "
        "tensors of the same shape (uneven last batches, rank-dependent branches).",
        (), "https://github.com/pytorch/pytorch/pull/79901", weight=82),
    # --- the ncclUniqueId exchange through the store ------------------------------------------------
    Signature(
        "nccl.unique_id_reset", "store-timeout",
        (r"ncclUniqueId from \[\d+\] via c10d key-value store by key '[^']*', but store->get\('[^']*'\) "
         r"got error: Connection reset by peer",),
        "The store connection dropped while this rank waited for rank 0's NCCL unique id: rank 0 (which "
        "hosts the store) exited or crashed.",
        _UID_FIX, ("net.reachability",), "https://github.com/pytorch/pytorch/issues/131781", weight=18,
        root_cause=False),
    Signature(
        "nccl.unique_id_key_timeout", "store-timeout",
        (r"ncclUniqueId from \[\d+\] via c10d key-value store by key '[^']*', but store->get\('[^']*'\) "
         r"got error: Timeout waiting for key",),
        "Rank 0 never published the NCCL unique id before the store timeout (older wording): rank 0 failed "
        "or hangs before creating its communicator.",
        _UID_FIX, (), "https://github.com/NVIDIA/nccl/issues/708", weight=18, root_cause=False),
    Signature(
        "nccl.unique_id_exception", "store-timeout",
        (r"ncclUniqueId from \[\d+\] via c10d key-value store by key '[^']*', but store->get\('[^']*'\) "
         r"got exception: Socket Timeout",),
        "Rank 0 never published the NCCL unique id in the store (the `got exception` wording of torch "
        "1.11): rank 0 failed or hangs before creating its communicator.",
        _UID_FIX, (), "https://github.com/pytorch/pytorch/pull/68597", weight=18, root_cause=False),
    Signature(
        "c10d.tcpstore_gone", "store-timeout",
        (r"Failed to check the \"should dump\" flag on TCPStore, \(maybe TCPStore server has shut down too "
         r"early\)",),
        "The TCPStore (hosted by rank 0's agent) went away while this rank's watchdog polled it: rank 0 or "
        "its node exited first.",
        "Look at rank 0's log for the real error.", ("net.reachability",),
        "https://github.com/sgl-project/sglang/issues/20859", weight=12, root_cause=False),
    Signature(
        "c10d.env_var_missing", "launch-args",
        (r"Error initializing torch\.distributed using env:// rendezvous: environment variable \w+ expected, but "
         r"not set", r"env:// rendezvous: \w+ not set",
         # a traceback cut before its last line still shows the raise (rendezvous.py's _env_rendezvous_handler)
         r"raise _env_error\(\"(?:MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE)\"\)"),
        "init_process_group(init_method='env://') found no MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE: "
        "the script was started with plain python instead of a launcher that sets them.",
        "Start it with torchrun (or torch.distributed.launch / deepspeed / accelerate launch), or export "
        "MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE yourself.",
        ("net.master_resolution",), "https://github.com/pytorch/pytorch/issues/39832", weight=76),
    Signature(
        "c10d.port_in_use_libuv", "port-in-use",
        (r"name: EADDRINUSE, message: address already in use",),
        "MASTER_PORT is already taken (the libuv TCPStore server of torch 2.4+ words it `EADDRINUSE`): another "
        "job or a leftover process listens on it.",
        "Free the port (`ss -ltnp 'sport = :PORT'`) or pick another MASTER_PORT on every node.",
        ("ports.listening",), "https://github.com/meta-llama/llama-models/issues/210", weight=80),
    Signature(
        "c10d.port_in_use_legacy", "port-in-use",
        (r"RuntimeError: Address already in use",),
        "MASTER_PORT is already taken (the TCPStore wording of torch before 1.11): another job or a leftover "
        "process listens on it.",
        "Free the port or pick another MASTER_PORT / --master_port on every node.",
        ("ports.listening",), "https://github.com/NVIDIA/Megatron-LM/issues/343", weight=78),
    # --- launchers ----------------------------------------------------------------------------------
    Signature(
        "accelerate.port_in_use", "port-in-use",
        (r"Tried to launch distributed communication on port `?\d+`?, but another process is utilizing it",),
        "accelerate found the main process port already taken on this node: another job or a leftover "
        "process listens on it.",
        "Free the port (`ss -ltnp 'sport = :PORT'`) or pass another --main_process_port (0 picks a free "
        "one on a single node).",
        ("ports.listening",), "https://github.com/vision-x-nyu/thinking-in-space/issues/22", weight=80),
    Signature(
        "deepspeed.exit_sigkill", "oom",
        (r"exits with return code = -9\b",),
        "A DeepSpeed worker was killed with SIGKILL (return code -9), almost always by the kernel's OOM "
        "killer when host RAM ran out (model loading, CPU offload, dataloader workers).",
        "Check `dmesg | grep -i 'killed process'` on the node; reduce CPU offload / dataloader workers or use "
        "a node with more RAM.",
        ("os.memory",), "https://github.com/deepspeedai/DeepSpeed/issues/3232", weight=66),
    Signature(
        "deepspeed.ssh_check_failed", "ssh",
        (r"Command '\[?'?ssh (?:-o PasswordAuthentication=no )?\S+ hostname(?: -I)?'?\]?' returned non-zero "
         r"exit status 255",),
        "The DeepSpeed launcher's check `ssh HOST hostname` failed (ssh exit status 255): a host in the "
        "hostfile is not reachable by passwordless SSH from the launching node.",
        "Set up key-based SSH from the launching node to every host in the hostfile (`ssh -o "
        "PasswordAuthentication=no HOST hostname` must work), on the right port.",
        ("os",), "https://github.com/deepspeedai/DeepSpeed/issues/4907", weight=68),
    # --- gloo (transport/tcp/pair.cc) ---------------------------------------------------------------
    Signature(
        "gloo.full_mesh_loopback", "hostname-loopback",
        (r"Connection refused, remote=\[127\.0\.[01]\.1\]:",),
        "Gloo's full-mesh connect went to a loopback address: the node's hostname resolves to 127.0.x.1 "
        "(an /etc/hosts line, or host networking in a container), so each rank advertised loopback to the "
        "others.",
        "Make the hostname resolve to the node's real address (fix /etc/hosts) or set GLOO_SOCKET_IFNAME to "
        "the interface that connects the nodes.",
        ("net.hostname", "net.interface"), "https://github.com/aws-samples/aws-do-eks/pull/69", weight=73),
    # --- OS limits -----------------------------------------------------------------------------------
    Signature(
        "os.too_many_open_files", "open-files",
        (r"\[Errno 24\] Too many (?:open )?files", r"OSError: \[Errno 24\]", r"Too many open files"),
        "The process hit its open-file limit (EMFILE): dataloader workers sharing tensors through file "
        "descriptors, many sockets, or a low `ulimit -n`.",
        "Raise the limit (`ulimit -n 65535`, LimitNOFILE= in the unit, nofile in limits.conf) or use "
        "torch.multiprocessing.set_sharing_strategy('file_system'); fewer dataloader workers.",
        # round 29: above nccl.no_net_plugin (74): NCCL's "Call to getifaddrs failed: Too many open files" fails every
        # NET plugin, and its "Failed to initialize any NET plugin" after it is the consequence (recorded_h200_5)
        ("os.files",), "https://github.com/MhLiao/MaskTextSpotterV3/issues/51", weight=76),
    # --- round 3: the torch build, an absurd allocation --------------------------------------------------------
    Signature(
        "torch.not_compiled_with_cuda", "version-mismatch",
        (r"Torch not compiled with CUDA enabled",),
        "The installed torch has no CUDA (torch/cuda/__init__.py _lazy_init): a CPU-only wheel, or on an NPU a "
        "torch / torch_npu / transformers combination whose code path falls into CUDA's lazy init (torch_npu "
        "2.2 with transformers > 4.49: .to() of an int device).",
        "Install the CUDA build of torch that matches the driver (or, on Ascend, the torch / torch_npu pair the "
        "calling package supports, e.g. 2.5.1); check `python -c 'import torch; print(torch.version.cuda)'`.",
        ("versions",), "https://github.com/hiyouga/LlamaFactory/issues/7986", weight=70),
    Signature(
        "lightning.no_gpu_at_all", "version-mismatch",
        # lightning's device_parser: f"You requested gpu: {gpus}\n But your machine only has: {all_available_gpus}"
        # (pytorch_lightning 1.x: "You requested GPUs:"); an empty list: torch sees no GPU at all
        (r"But your machine only has: \[\]",),
        "The Trainer asked for GPUs and torch sees none at all: most often a CPU-only torch (or one built for "
        "another CUDA than the driver runs); else CUDA_VISIBLE_DEVICES empty or the driver unusable.",
        "Install the CUDA build of torch that matches the driver; check `python -c 'import torch; "
        "print(torch.version.cuda, torch.cuda.device_count())'` and `nvidia-smi` on that node.",
        ("versions", "gpu.devices.count"),
        "https://github.com/DCASE-REPO/DESED_task/blob/f7dc296e39b09ef26bd05f27b1c720cbc6208bb1/recipes/"
        "dcase2023_task4_baseline/README.md", weight=70),
    Signature(
        "alloc.more_than_1eb", "app-fault",
        # c10/cuda/CUDACachingAllocator.cpp (pytorch@eb42ad6e) and the NPU / MLU / GCU allocators built on it:
        # TORCH_CHECK_WITH(OutOfMemoryError, size < one_exa_bytes, "<DEV> out of memory. Tried to allocate more
        # than 1EB memory.")
        (r"out of memory\. Tried to allocate more than 1EB memory",),
        "The allocator was asked for more than 1 EiB (2^60 bytes), which no device has: not a memory shortage but "
        "a corrupt size - a tensor shape read from garbage (an overflow, uninitialised or out-of-bounds data "
        "written by a kernel, a negative length cast to unsigned).",
        "Find the tensor whose shape is computed from data (print the shapes before the failing call); check the "
        "custom kernels that wrote that data (run the reference / pure-torch path) - more memory will not help.",
        (), "https://github.com/flashserve/flash-linear-attention-npu/issues/149", weight=95),
    # --- round 5 (the spent frozen3 set, folded) ------------------------------------------------------------------
    Signature(
        "accelerate.shape_mismatch", "collective-mismatch",
        (r"Cannot apply desired operation due to shape mismatches",),
        "accelerate's debug mode compared the shapes the ranks passed to one collective (broadcast, gather, "
        "reduce) and they differ (accelerate/utils/operations.py, DistributedOperationException): without the "
        "check the collective would hang or corrupt data.",
        "Make every rank pass the same shape (pad uneven last batches, avoid rank-dependent shapes); the "
        "exception lists each process's shape.",
        (), "https://github.com/huggingface/accelerate/blob/087fa0aa7a1b42562cac9b959f432ec3fbb86d57/docs/source/"
            "basic_tutorials/troubleshooting.md", weight=80),
    # --- round 23 (the spent frozen13 set, folded) -----------------------------------------------------------
    Signature(
        "c10d.libuv_not_built", "version-mismatch",
        # torch/csrc/distributed/c10d/TCPStore.cpp: TCPStore(use_libuv=True) on a torch built without libuv (the
        # Windows wheels before 2.4); torch 2.4+ defaults to libuv, so an older torch asked by newer code fails
        (r"use_libuv was requested but PyTorch was buil[dt] without libuv support",),
        "The TCPStore was asked for its libuv backend (use_libuv=True, torch 2.4's default, or a launcher that asks "
        "for it) but this torch build has no libuv: the calling code (DeepSpeed, torchrun of a newer torch) expects "
        "a newer or other build of PyTorch.",
        "Use the torch build the launcher expects (2.4 or newer, a build with libuv), or have the store created "
        "without libuv (USE_LIBUV=0 / use_libuv=False) on this build.", ("versions",),
        "https://github.com/deepspeedai/DeepSpeed/pull/7064", weight=80),
)
