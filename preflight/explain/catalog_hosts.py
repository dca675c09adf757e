"""Known failure signatures, part two: what the hosts run (versions, memory limits, RDMA and fabric,
devices, HCCL on Ascend) and the launcher's own SSH and hostfile. See ``catalog``."""

from __future__ import annotations

import re

from preflight.explain.signature import Signature

_NEGATION = re.compile(r"\b(?:not|no|never|without)\b|n't\b", re.IGNORECASE)


def _affirmed(m: re.Match[str]) -> bool:
    """Whether a reporter's sentence about a setting says it helped, not that it did not.

    >>> [_affirmed(re.search(".+", t)) for t in ("NCCL_P2P_DISABLE=1 fixes it", "NCCL_P2P_DISABLE=1 doesn't fix it")]
    [True, False]
    """
    return not _NEGATION.search(m.group(0))

_HOSTS_FIX = "preflight run --hosts hosts.yaml verifies SSH to every host (ssh.connect)"

HOSTS: tuple[Signature, ...] = (
    # --- versions ------------------------------------------------------------------------------
    Signature(
        "nccl.size_mismatch", "collective-mismatch",
        (r"receiving \d+ bytes instead of \d+",),
        "Two ranks disagree on the message size of the same operation: different NCCL (or torch) versions "
        "or different NCCL settings on the nodes.",
        "Install the same torch/NCCL build on every node and use the same NCCL_* environment.",
        ("versions", "versions.nccl"), "https://github.com/NVIDIA/nccl/issues/1328", weight=65),
    Signature(
        "nccl.collective_mismatch", "collective-mismatch",
        (r"collective mismatch error, local size \d+ remote size \d+",),
        "The two ends of a NET/IB transfer have different sizes: mismatched NCCL versions or "
        "configuration between the nodes (or ranks calling different collectives).",
        "Use the same NCCL/torch build and NCCL_* settings on every node.",
        ("versions", "versions.nccl"), "https://github.com/NVIDIA/nccl/issues/969", weight=60),
    Signature(
        "torch_npu.undefined_symbol", "version-mismatch",
        (r"libtorch_npu\.so: undefined symbol", r"torch[-_]npu\S*\s*导入时报错\s*undefined symbol",
         r"torch_npu\S* .*undefined symbol"),
        "torch_npu was built for another CANN (or torch) release than the one installed: a symbol it needs "
        "is missing.",
        "Install the torch_npu build that matches the node's CANN and torch (Ascend/pytorch's version "
        "table) on every node.",
        ("versions", "versions.torch_npu_compat"), "https://github.com/vllm-project/vllm-ascend/issues/117",
        weight=65),
    # --- memory limits -------------------------------------------------------------------------
    Signature(
        "nccl.shm_extend_failed", "shm",
        (r"failed to extend /dev/shm/\S+ to \d+ bytes", r"Error while creating shared memory segment /dev/shm"),
        "/dev/shm is too small (docker's 64 MB default) for NCCL's shared-memory transport.",
        "Run the container with --shm-size=1g (or --ipc=host), or enlarge /dev/shm "
        "(`mount -o remount,size=8G /dev/shm`).",
        ("os.shm",), "https://github.com/pytorch/ci-infra/pull/490", weight=75),
    Signature(
        "nccl.shm_open_denied", "shm",
        (r"Call to shm_open failed : Permission denied",),
        "NCCL cannot create its segments in /dev/shm: wrong permissions on /dev/shm.",
        "`chmod 1777 /dev/shm` (it must be world-writable with the sticky bit).",
        ("os.shm",), "https://github.com/NVIDIA/nccl/issues/328", weight=72),
    # torch's MapAllocator (aten/src/ATen/MapAllocator.cpp) on the segments DataLoader workers and
    # torch.multiprocessing share tensors through (``/torch_<pid>_<random>_<n>`` in /dev/shm): a full /dev/shm
    # fails the resize (ftruncate), the write or posix_fallocate with ENOSPC (MapAllocator.cpp at v2.9.1)
    Signature(
        "torch.shm_segment_nospace", "shm",
        (r"unable to (?:resize|write to) file <?/torch_[\w]+>?(?: to the right size)?: No space left on device",
         r"unable to (?:resize|write to) file <?/torch_[\w]+>?.{0,40}\(28\)",
         # round 29: MapAllocator's posix_fallocate check ("unable to allocate shared memory(shm) for file <%s>: %s
         # (%d)"), EAGAIN / ENOSPC / ENOMEM when /dev/shm cannot hold the segment (recorded_h200_5)
         r"unable to allocate shared memory\(shm\) for file <?/torch_[\w]+>?"),
        "torch could not grow a shared-memory segment it passes tensors between processes with (DataLoader "
        "workers, torch.multiprocessing): /dev/shm is full or too small (docker's 64 MB default).",
        "Run the container with --shm-size=8g (or --ipc=host) or enlarge /dev/shm; fewer DataLoader workers "
        "need less; `torch.multiprocessing.set_sharing_strategy('file_system')` does not help a full /dev/shm.",
        ("os.shm",), "https://github.com/idiap/ESLAM/issues/20", weight=74),
    # round 29: torch/utils/data/dataloader.py's check of its workers (_try_get_data): a worker that died without
    # reporting (a bus error in a full /dev/shm, the OOM killer, a segfault); a symptom that yields to the cause
    Signature(
        "torch.dataloader_worker_exited", "shm",
        (r"DataLoader worker \(pid\(s\) [\d, ]+\) exited unexpectedly",),
        "A DataLoader worker process died without reporting an error: most often a bus error when /dev/shm is too "
        "small for the batches the workers hand over (docker's 64 MB default), else the OOM killer or a crash in a "
        "worker (an earlier line of the log says which).",
        "Run the container with --shm-size=8g (or --ipc=host) or enlarge /dev/shm; check `dmesg | grep -i oom` on "
        "the node; num_workers=0 shows a worker's own error.",
        ("os.shm",), "https://github.com/facebookresearch/detectron2/issues/384", weight=20,
        root_cause=False),
    # round 32: Paddle's DataLoader wording of the same death (its reader threads' queue torn down)
    Signature(
        "paddle.dataloader_queue_killed", "shm",
        (r"Blocking queue is killed because the data reader raises an exception",),
        "A Paddle DataLoader reader died and took its blocking queue down: most often /dev/shm too small for the "
        "worker processes' batches (docker's 64 MB default), else a worker's own exception (an earlier line says "
        "which).",
        "Run the container with --shm-size=8g (or --ipc=host) or enlarge /dev/shm; num_workers=0 (or "
        "use_shared_memory=False) shows a worker's own error.",
        ("os.shm",), "https://github.com/PaddlePaddle/PaddleClas/blob/d178931fca432204e6b7422bac4f92e09ff22fa4/docs/"
        "zh_CN/FAQ/faq_2021_s1.md#L34-L36", weight=20, root_cause=False),
    Signature(
        "nccl.ibv_reg_mr_failed", "memlock",
        (r"Call to ibv_reg_mr\w* failed(?: with error)? Cannot allocate memory",
         # round 23: a library's own check of the limit (Intel MPI's "DAPL startup: RLIMIT_MEMLOCK too small")
         r"\bRLIMIT_MEMLOCK (?:is )?too (?:small|low)\b"),
        "RDMA memory registration failed: the locked-memory limit (ulimit -l) is too low for NCCL's "
        "buffers.",
        "Set memlock to unlimited: `* soft memlock unlimited` / `* hard memlock unlimited` in "
        "/etc/security/limits.conf (docker: --ulimit memlock=-1), then log in again.",
        ("os.memlock",), "https://github.com/NVIDIA/nccl-tests/issues/206", weight=72),
    Signature(
        "bootstrap.too_many_open_files", "open-files",
        (r"(?:[Aa]ccept|[Ss]ocket|[Cc]onnect)\w*(?: failed)?\s*:?\s*[Tt]oo many open files",),
        "A rank ran out of file descriptors (the soft `ulimit -n`, often the stock 1024) while accepting its "
        "peers' connections in the collective library's bootstrap: the limit is too low for the job's rank count.",
        "Raise the soft limit in the job's launch script or hosts.yaml `setup:`: `ulimit -n \"$(ulimit -Hn)\"` "
        "(the hard limit must allow it: /etc/security/limits.d nofile, docker --ulimit nofile=1048576:1048576).",
        # round 29: above os.too_many_open_files (76), the same limit read without the bootstrap's context
        ("os.files",), "https://github.com/aws-neuron/aws-neuron-sdk/issues/713", weight=77),
    # --- RDMA / fabric -------------------------------------------------------------------------
    Signature(
        "nccl.no_ib_device", "rdma",
        (r"NET/IB : No device found",),
        "NCCL found no InfiniBand/RoCE device and falls back to TCP sockets (expected only on nodes "
        "without RDMA NICs).",
        "If the nodes have RDMA NICs: load the drivers (mlx5_ib), pass /dev/infiniband into the "
        "container and check `ibv_devices`.",
        ("hccn.link",), "https://github.com/NVIDIA/nccl/issues/952", weight=12, root_cause=False),
    Signature(
        "nccl.no_libibverbs", "rdma",
        (r"Failed to open libibverbs\.so",),
        "libibverbs is not installed in the job's environment, so NCCL cannot use RDMA and falls back to "
        "sockets.",
        "Install rdma-core/libibverbs (ibverbs-providers) in the image if the nodes have RDMA NICs.",
        ("hccn.link",), "https://github.com/horovod/horovod/issues/685", weight=12, root_cause=False,
        # NCCL saying it went on over sockets: the warning was its fallback, not the failure (round 6: a hang
        # whose only NCCL WARN was this one, in two sealed sets running, was GPU peer-to-peer under IOMMU)
        unless=(r"NET/Socket : Using \[\d", r"Using network Socket\b")),
    Signature(
        "nccl.ib_completion_error", "fabric",
        (r"NET/IB : Got completion from peer \S+ with (?:status=|error )\d+",
         # NCCL 2.23+ "NET/IB: Got completion", 2.28+ status by name: status=IBV_WC_RETRY_EXC_ERR(12)
         r"NET/IB(?:/GIN)?: Got completion from peer \S+ with status=(?:\w+\()?\d+",
         # NCCL 2.0-2.5 (and pastes without the prefix): "NET/IB : Got completion with error %d, opcode %d, len %d,
         # vendor err %d"
         r"Got completion with error \d+, opcode \d+, len \d+, vendor err \d+"),
        "An RDMA work request failed on the fabric (status 12 = transport retry counter exceeded: the "
        "peer or a link/switch port did not answer; 4/5 = local protection/flush after a failure: NCCL's "
        "maintainers find status 4, and 5 with vendor err 249, usually caused by PCIe ACS left enabled, which "
        "breaks GPUDirect RDMA between the GPU and the NIC; the table_ibv_wc module decodes every status).",
        "Check the links and switch ports between the named peers (`ibstat`, port counters) and the peer "
        "rank's health; rerun the all_reduce test. For status 4 (or 5 with vendor err 249): disable ACS on "
        "the PCIe switches (BIOS or `setpci`); NCCL_NET_GDR_LEVEL=0 confirming it runs.",
        ("hccn.link", "net.mtu", "allreduce"), "https://github.com/NVIDIA/nccl/issues/1405", weight=55),
    Signature(
        "nccl.ib_mtu_mismatch", "mtu",
        (r"local access violation work queue error", r"IBV_WC_LOC_LEN_ERR"),
        "RDMA work queue error that NCCL users traced to RoCE/IB ports with different MTUs on the two "
        "nodes.",
        "Set the same MTU on every RDMA port (`ip link set dev IF mtu 4200` / switch ports) and check "
        "`ibv_devinfo` active_mtu.",
        ("net.mtu", "hccn.link"), "https://github.com/NVIDIA/nccl/issues/1710", weight=60),
    Signature(
        "nccl.p2p_not_supported", "p2p",
        (r"peer access is not supported between these two devices",),
        "CUDA peer-to-peer access between the GPUs is not available (PCIe ACS / IOMMU, consumer GPUs, VMs) "
        "and the P2P transport fails or hangs.",
        "Set NCCL_P2P_DISABLE=1 (NCCL then uses shared memory), or disable ACS/enable iommu=pt in "
        "BIOS/kernel.",
        ("allreduce",), "https://github.com/ray-project/ray_lightning/issues/24", weight=65),
    # --- devices -------------------------------------------------------------------------------
    Signature(
        "nccl.duplicate_gpu", "device-mapping",
        (r"Duplicate GPU detected : rank \d+ and rank \d+ both on CUDA device \w+",
         # the clause itself, whatever a wrapper prints before it ("Error: rank 27 and rank 19 both on CUDA device
         # 53000 (PCI 53:00.0)")
         r"\brank \d+ and rank \d+ both on CUDA device [0-9a-fA-F]+\b",
         # round 22: TRL's vllm_serve.py refusing a trainer on one of the vLLM server's GPUs (its weight-sync
         # communicator): "Attempting to use the same CUDA device for multiple distinct roles[/ranks ...]"
         r"\bAttempting to use the same CUDA device for multiple distinct roles\b"),
        "Two ranks use the same GPU: the script does not call torch.cuda.set_device(LOCAL_RANK), or "
        "CUDA_VISIBLE_DEVICES / --nproc-per-node exceed the GPUs present.",
        "Call torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before init_process_group and keep "
        "--nproc-per-node <= GPUs per node.",
        ("gpu.devices.count", "nccl.visible_devices"), "https://github.com/horovod/horovod/issues/3929", weight=80),
    Signature(
        "cuda.invalid_device_ordinal", "device-mapping",
        (r"CUDA error: invalid device ordinal", r"cuda runtime error \(101\) : invalid device ordinal"),
        "A rank asked for a GPU index that does not exist: --nproc-per-node is larger than the visible "
        "GPUs (CUDA_VISIBLE_DEVICES).",
        "Set --nproc-per-node to the number of visible GPUs on each node.",
        ("gpu.devices.count", "nccl.visible_devices"), "https://github.com/cfzd/Ultra-Fast-Lane-Detection/issues/193",
        weight=78),
    Signature(
        "elastic.exit_sigkill", "oom",
        (r"failed \(exitcode: -9\)(?: local_rank: \d+ \(pid: \d+\))?",),
        "A worker was killed with SIGKILL (exit -9): almost always the kernel OOM killer (host memory), "
        "or the scheduler's memory limit.",
        "Check `dmesg | grep -i oom` on that node; reduce host memory use (dataloader workers, CPU "
        "offload) or add memory.",
        ("os.memory",), "https://github.com/xiaomi-research/time-r1/issues/9", weight=68),
    Signature(
        "elastic.signal9", "oom",
        (r"Signal 9 \(SIGKILL\) received by PID \d+",),
        "The launcher received SIGKILL: the OOM killer or the scheduler killed the job.",
        "Check `dmesg | grep -i oom` and the scheduler's memory limits on that node.",
        ("os.memory",), "https://github.com/modelscope/ms-swift/issues/7357", weight=62),
    # --- HCCL (Ascend) -------------------------------------------------------------------------
    Signature(
        "hccl.ei0006", "hccl-timeout",
        (r"EI0006", r"Getting socket times out"),
        "HCCL link setup timed out (EI0006): a remote rank did not connect within HCCL_CONNECT_TIMEOUT "
        "(120 s default) - it failed earlier, started late, or the device network between them is broken.",
        "Find the rank that failed first; if all ranks just start far apart raise HCCL_CONNECT_TIMEOUT; "
        "check device links (`hccn_tool -i N -link -g`) and TLS consistency.",
        ("hccn.reachability", "hccn.link", "npu.processes"),
        "https://github.com/vllm-project/vllm-ascend/issues/486", weight=35),
    Signature(
        "hccl.link_establish_timeout", "hccl-link",
        (r"wait socket establish timeout, role\[\d+\] rank\[\d+\] timeout\[\d+(?: ?s)?\]",),
        "HCCL could not establish the socket link to a peer rank within HCCL_CONNECT_TIMEOUT.",
        "Check the peer's device IP is reachable (`hccn_tool -i N -ping -g address PEER_IP`), link UP and "
        "TLS equal on both ends.",
        ("hccn.reachability", "hccn.link", "hccn.ip"),
        "https://github.com/vllm-project/vllm-ascend/issues/1955", weight=40),
    Signature(
        "hccl.link_no_connect", "hccl-link",
        (r"\|\s*[0-9a-fA-F.:]+\(\d+\)\s*\|.*\|\s*(?:server|client)\s*\|\s*(?:no connect|time out)\s*\|",),
        "HCCL's LINK_ERROR_INFO table: the link to that device IP never connected (device network down, "
        "TLS switch different on the two ends, or the peer not started).",
        "Compare `hccn_tool -i N -tls -g` on both devices, check link and ping between the device IPs.",
        ("hccn.link", "hccn.reachability"),
        "https://hiascend.com/document/detail/zh/canncommercial/80RC3/developmentguide/hccl/hcclug/"
        "hcclug_000055.html", weight=45),
    Signature(
        "hccl.ej0003", "hccl-port",
        (r"EJ0003", r"Failed to bind the IP port\. Reason: The IP address and port have been bound already",
         r"host nic listen start failed, port\[\d+\]"),
        "HCCL's host port (HCCL_IF_BASE_PORT, 60000 by default) is already bound: another job on the node "
        "or an ephemeral connection took it.",
        "Reserve the HCCL ports (`sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015`), give each job "
        "on a node its own HCCL_IF_BASE_PORT, and kill leftover processes.",
        ("ports.listening", "ports.reserved"), "https://github.com/vllm-project/vllm-ascend/issues/405",
        weight=80),
    Signature(
        "hccl.listen_failed", "hccl-port",
        (r"listen on ip\[[^\]]*\] and specific port\[\d+\] fail",),
        "HCCL could not listen on its port: the port is used by another process.",
        "Free the port or move HCCL to a free, reserved range (HCCL_IF_BASE_PORT / "
        "HCCL_HOST_SOCKET_PORT_RANGE).",
        ("ports.listening", "ports.reserved"), "https://github.com/vllm-project/vllm-ascend/issues/4725",
        weight=76),
    Signature(
        "hccl.recv_unmatched_ack", "hccl-port",
        (r"Recv unmatched ack",),
        "HCCL connected to the wrong server: its port was taken by another process (often an ephemeral "
        "connection) because the range is not reserved.",
        "Reserve HCCL's ports: `sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015` (or your "
        "HCCL_IF_BASE_PORT range).",
        ("ports.reserved", "ports.listening"),
        "https://www.hiascend.com/doc_center/source/zh/CANNCommunityEdition/81RC1beta1/hccl/hcclug/"
        "hcclug_000036.html", weight=66),
    Signature(
        "hccl.ej0001", "hccl-stale-process",
        (r"EJ0001", r"Failed to initialize the HCCP process"),
        "The NPU is still held by the previous training process (EJ0001): HCCP cannot start.",
        "Kill the leftover processes (`npu-smi info` lists them), wait ~10 s and start again.",
        ("npu.processes",), "https://github.com/hiyouga/LlamaFactory/issues/3839", weight=85),
    # --- launcher ------------------------------------------------------------------------------
    Signature(
        "ssh.connect_failed", "ssh",
        (r"ssh: connect to host \S+ port \d+: (?:Connection refused|No route to host|Connection timed out)",),
        "The launcher (pdsh/ssh of DeepSpeed, mpirun) cannot open SSH to a host: sshd not running, wrong "
        "port, or filtered.",
        f"Start sshd / use the right --ssh_port and allow it in the firewall; {_HOSTS_FIX}.",
        ("os",), "https://github.com/deepspeedai/DeepSpeedExamples/issues/894", weight=72),
    Signature(
        "ssh.permission_denied", "ssh",
        (r"Permission denied \((?:publickey|password|keyboard-interactive|gssapi)[^)]*\)",),
        "Passwordless SSH from the launch node to this host is not set up (key not authorised).",
        f"ssh-copy-id to every host (including localhost for the launch node); {_HOSTS_FIX}.",
        ("os",), "https://github.com/deepspeedai/DeepSpeed/issues/5709", weight=72),
    Signature(
        "ssh.not_reachable", "ssh",
        (r"was not reachable via ssh",),
        "DeepSpeed's launcher could not run `ssh host hostname` on a host of the hostfile.",
        f"Set up passwordless SSH to every host of the hostfile; {_HOSTS_FIX}.",
        ("os",), "https://github.com/hpcac/2023-APAC-HPC-AI/issues/1", weight=70),
    Signature(
        "hostfile.missing", "hostfile",
        (r"Unable to find hostfile, will proceed with training with local resources only",),
        "DeepSpeed found no hostfile (default /job/hostfile) and runs on this node only: the other nodes "
        "are never started and a multi-node job hangs or runs single-node.",
        "Pass --hostfile=FILE (lines `host slots=N`) that exists on the launch node.",
        (), "https://github.com/deepspeedai/DeepSpeedExamples/issues/575", weight=60),
    Signature(
        "hostfile.slots_in_hostname", "hostfile",
        (r"ssh: Could not resolve hostname [^\s:]+:\d+:",),
        "A host-list entry with its slot count (`host:N`, as mpirun / horovodrun -H take it) was handed to ssh "
        "as a host name: the launcher's host list is in the wrong form, not DNS.",
        "Give the hosts in the form the launcher expects (`-H 127.0.0.1:1`, or a hostfile of `host slots=N` "
        "lines), and check `ssh HOST hostname` works for each bare host name.",
        (), "https://github.com/mit-han-lab/spvnas/issues/30", weight=70),
    Signature(
        "hostfile.bad_entry", "hostfile",
        (r"Hostfile contains a bad entry",),
        "A hostfile line is not `hostname slots=N`.",
        "Fix the hostfile: one `hostname slots=N` per line.",
        (), "https://github.com/deepspeedai/DeepSpeed/issues/3669", weight=65),
    # --- round 5 (the spent frozen3 set, folded) ------------------------------------------------------------------
    Signature(
        "ibverbs.no_userspace_driver", "rdma",
        (r"no userspace device-specific driver found for \S*uverbs\d*",),
        "libibverbs found the RDMA device but no user-space provider for it (libmlx5 / rdma-core's providers are "
        "not installed in the container or image): RDMA is unusable and NCCL or MPI falls back to TCP or fails.",
        "Install the providers in the image (rdma-core: ibverbs-providers / libmlx5-1, librdmacm1, libibverbs1) "
        "and check `ibv_devinfo` inside the container.",
        ("nccl.ib_hca",), "https://github.com/horovod/horovod/issues/1117", weight=62),
    # --- round 9 (the spent frozen6 set, folded) -------------------------------------------------------------
    Signature(
        "user.p2p_disable_works", "p2p",
        # what the reporter found, pasted with the log: NCCL_P2P_DISABLE=1 making it run is NCCL's own test for a
        # GPU peer-to-peer path that the IOMMU or PCIe ACS breaks (its troubleshooting guide); a negation voids it
        (r"NCCL_P2P_DISABLE=1\b[^.\n]{0,80}?\b(?:resolv\w*|fix(?:es|ed)?|solv\w*|work(?:s|ed)? ?around|"
         r"did (?:the )?workaround|works|worked|help(?:s|ed)?|makes? it work)\b",
         r"\b(?:work(?:s|ed)? ?around|fix(?:es|ed)?|resolv\w*|solv\w*) (?:it |this )?(?:by|with) (?:setting )?"
         r"`?NCCL_P2P_DISABLE=1\b"),
        "The reporter found that the job runs with NCCL_P2P_DISABLE=1 (shared memory instead of GPU peer-to-peer): "
        "the P2P path between the GPUs of the host is broken, in NCCL's troubleshooting guide the IOMMU or PCIe "
        "ACS redirecting P2P traffic.",
        "Keep P2P and fix the path: boot with iommu=pt (or intel_iommu=off / amd_iommu=off), disable ACS on the "
        "PCIe switches (BIOS, or `setpci` at boot); NCCL_P2P_DISABLE=1 stays a slow workaround.",
        ("allreduce",), "https://github.com/NVIDIA/nccl/issues/2079", weight=58,
        when=_affirmed),
    Signature(
        "os.firewall_log_blocked", "firewall",
        # the kernel's log of a packet a host firewall dropped: ufw's "[UFW BLOCK]" prefix, firewalld's LogDenied
        # prefixes ("FINAL_REJECT:", "filter_IN_public_REJECT:", "..._DROP:") before iptables' IN= OUT= fields
        (r"\[UFW (?:LIMIT )?BLOCK\]",
         r"\b(?:FINAL_REJECT|filter_IN_\w+_(?:REJECT|DROP)|filter_FWD_\w+_(?:REJECT|DROP)): ?IN="),
        "A host firewall on one of the nodes dropped packets and logged it (ufw, firewalld): when the log's DPT= is "
        "a port the job or its launcher uses (MASTER_PORT, NCCL's, Slurm's, sshd's), the firewall is what keeps the "
        "nodes apart.",
        "Allow the cluster's traffic between the nodes (`ufw allow from 10.0.0.0/24`, a firewalld trusted zone for "
        "the training interface), then run `preflight run --checks firewall.rules,net.reachability`.",
        ("firewall.rules", "net.reachability"), "https://github.com/weaveworks/weave/issues/450", weight=40),
)
