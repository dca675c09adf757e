"""Known failure signatures, part five (issue 21, second and third rounds): devices that are missing, busy
or unusable (CUDA driver too old, no visible GPU, exclusive-mode GPUs, NVML or Ascend dcmi that cannot
start), device-memory allocation inside NCCL, RDMA memory registration through UCX, DeepSpeed's ssh check,
HCCL execution timeouts and the rendezvous heartbeat. Each entry's source is a public log it
was written from; see ``catalog``.

>>> DEVICES[0].id, DEVICES[0].category
('cuda.driver_too_old', 'driver')
"""

from __future__ import annotations

from preflight.explain.signature import Signature

DEVICES: tuple[Signature, ...] = (
    Signature(
        "cuda.driver_too_old", "driver",
        (r"CUDA driver version is insufficient for CUDA runtime version", r"cudaErrorInsufficientDriver",
         r"CUDA_ERROR_INSUFFICIENT_DRIVER"),
        "The installed NVIDIA driver is older than the CUDA runtime the job's torch/CUDA build needs "
        "(CUDA error 35).",
        "Install a driver that supports the job's CUDA version on every node (`nvidia-smi` shows the highest "
        "CUDA it supports), or use a torch build for an older CUDA.",
        ("gpu.devices", "versions"), "https://github.com/microsoft/human-pose-estimation.pytorch/issues/23",
        weight=85),
    Signature(
        "cuda.no_device", "device-mapping",
        (r"no CUDA-capable device is detected", r"No CUDA GPUs are available"),
        "CUDA sees no GPU in this process: CUDA_VISIBLE_DEVICES names GPUs that do not exist (or is empty), "
        "the container was started without the GPUs, or the driver does not see them.",
        "Check CUDA_VISIBLE_DEVICES against `nvidia-smi -L` on that node (indices start at 0), start the "
        "container with --gpus, and keep --nproc-per-node <= the visible GPUs.",
        ("gpu.devices",), "https://github.com/slczgwh/REDN/issues/5", weight=76),
    Signature(
        "nvml.unknown_error", "driver",
        (r"Failed to initialize NVML: Unknown Error", r"init NVML library; err: Unknown Error"),
        "NVML cannot open the GPUs from this container although they were there: the container lost its "
        "device access (cgroup device rules reset, e.g. by `systemctl daemon-reload` with the systemd cgroup "
        "driver) or the GPU went away.",
        "Restart the container/pod; on the host configure nvidia-container-toolkit for the systemd cgroup "
        "driver (or pass /dev/nvidia* explicitly) and check dmesg for Xid errors.",
        ("gpu.devices",), "https://github.com/Project-HAMi/HAMi/issues/1520", weight=80),
    Signature(
        "npu.dcmi_init_failed", "driver",
        (r"dcmi module initialize failed\. ret is -?\d+", r"dcmi model initialized failed, because the device "
         r"is used\. ret is -?\d+"),
        "The Ascend management library (dcmi) cannot start in this environment: the driver's libraries or "
        "/dev/davinci_manager are not mounted into the container (-8005), or the device is held by another "
        "container (-8020).",
        "Mount the driver (/usr/local/Ascend/driver, /usr/local/dcmi, npu-smi) and pass /dev/davinci*, "
        "/dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc; free the NPU from other containers.",
        ("npu.count", "npu.processes"), "https://github.com/Project-HAMi/ascend-device-plugin/issues/23",
        weight=80),
    Signature(
        "nccl.cuda_out_of_memory", "oom",
        (r"NCCL WARN Cuda failure 'out of memory'", r"NCCL WARN Failed to CUDA calloc \d+ bytes"),
        "NCCL could not allocate its GPU buffers: the GPU memory is already used up by the model (or another "
        "process on that GPU).",
        "Leave GPU memory for NCCL (smaller batch, lower gpu-memory utilisation), reduce NCCL buffers "
        "(NCCL_BUFFSIZE, fewer channels), and check `nvidia-smi` for other processes on the GPU.",
        ("gpu.devices",), "https://github.com/NVIDIA/nccl/issues/1235", weight=80),
    Signature(
        "ucx.ibv_create_cq_nomem", "memlock",
        (r"ibv_create_cq\(cqe=\d+\) failed: Cannot allocate memory",),
        "UCX could not create an RDMA completion queue: the locked-memory limit (ulimit -l, often 64 KiB) is "
        "too low.",
        "Set memlock to unlimited (`* soft/hard memlock unlimited` in /etc/security/limits.conf, docker "
        "--ulimit memlock=-1) and start a new login session.",
        ("os.memlock",), "https://github.com/openucx/ucx/issues/8229", weight=72),
    Signature(
        "deepspeed.ssh_check_failed", "ssh",
        (r"Command 'ssh -o PasswordAuthentication=no \S+ hostname' returned non-zero exit status 255",),
        "DeepSpeed's launcher checks every host of the hostfile with `ssh host hostname` and it failed (exit "
        "255: no passwordless key, host unreachable, or sshd not listening).",
        "Set up passwordless SSH from the launching node to every host of the hostfile (`ssh -o "
        "PasswordAuthentication=no HOST hostname` must work); preflight run --hosts hosts.yaml checks it.",
        ("os",), "https://github.com/deepspeedai/DeepSpeed/issues/4907", weight=68),
    Signature(
        "cuda.devices_busy", "device-mapping",
        (r"all CUDA-capable devices are busy or unavailable", r"CUDA-capable device\(s\) is/are busy or unavailable",
         r"cudaErrorDevicesUnavailable"),
        "The GPU is in exclusive-process compute mode and another process already holds it (a second rank "
        "on the same GPU, or a leftover process), or the scheduler gave this process no GPU (CUDA error 46).",
        "Give each rank its own GPU (LOCAL_RANK -> torch.cuda.set_device) and --nproc-per-node <= GPUs; stop "
        "leftover processes (`nvidia-smi`); check the compute mode (`nvidia-smi -q -d COMPUTE`).",
        ("gpu.devices",), "https://github.com/pytorch/pytorch/issues/3871", weight=74),
    Signature(
        "hccl.exec_timeout", "hccl-timeout",
        (r"The wait execution of the Notify register times out", r"hccl fftsplus task timeout occurred during task "
         r"execution", r"\bEI0002\b"),
        "An HCCL collective did not complete within HCCL_EXEC_TIMEOUT (1800 s default): another rank failed "
        "or is stuck earlier, the ranks run different numbers of steps, or the device link lost packets.",
        "Look for the earliest error on the other ranks first; make every rank run the same number of "
        "collectives; check the device links (`hccn_tool -i N -link -g`); raise HCCL_EXEC_TIMEOUT only for "
        "legitimately slow steps.",
        ("hccn.link", "npu.processes"), "https://github.com/vllm-project/vllm-ascend/issues/1443", weight=30,
        root_cause=False),
    Signature(
        "rdzv.heartbeat_failed", "rendezvous",
        (r"has failed to send a keep-alive heartbeat to the rendezvous '\S*' due to an error of type "
         r"Rendezvous\w*Error",),
        "An agent could not reach the rendezvous store to send its heartbeat: the store host (the node of "
        "--rdzv-endpoint) went away or is unreachable, so the job cannot re-rendezvous.",
        "Check the node hosting --rdzv-endpoint and the network to it; find the first failure on that node.",
        ("net.reachability", "net.master_resolution"), "https://github.com/pytorch/pytorch/issues/76287",
        weight=25, root_cause=False),
)
