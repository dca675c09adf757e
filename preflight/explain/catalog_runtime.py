"""Known failure signatures, part four: the accelerator runtime and driver (CUDA, NVML, the kernel's NVRM
lines, Ascend ACL/HCCL return codes), device memory, process limits and c10d's own checks. Each entry's
source is a public log it was written from; see ``catalog``.

>>> RUNTIME[0].id, RUNTIME[0].category
('cuda.system_not_ready', 'driver')
"""

from __future__ import annotations

import re

from preflight.explain.signature import Signature

# HcclResult (CANN hccl_types.h): the number torch_npu prints as "error code is N".
HCCL_RESULT = {1: "HCCL_E_PARA", 2: "HCCL_E_PTR", 3: "HCCL_E_MEMORY", 4: "HCCL_E_INTERNAL",
               5: "HCCL_E_NOT_SUPPORT", 6: "HCCL_E_NOT_FOUND", 7: "HCCL_E_UNAVAIL", 8: "HCCL_E_SYSCALL",
               9: "HCCL_E_TIMEOUT", 10: "HCCL_E_OPEN_FILE_FAILURE", 11: "HCCL_E_TCP_CONNECT",
               12: "HCCL_E_ROCE_CONNECT", 13: "HCCL_E_TCP_TRANSFER", 14: "HCCL_E_ROCE_TRANSFER",
               15: "HCCL_E_RUNTIME", 16: "HCCL_E_DRV", 17: "HCCL_E_PROFILING", 18: "HCCL_E_CCE",
               19: "HCCL_E_NETWORK"}


def _hccl_connect_code(m: re.Match[str]) -> bool:
    """True for the HcclResult codes of a failed link (TCP/RoCE connect or transfer, network).

    >>> _hccl_connect_code(re.search(r"is (?P<code>\\d+)", "error code is 11"))
    True
    """
    return int(m.group("code")) in (11, 12, 13, 14, 19)


_DRIVER = ("gpu.devices", "versions")
_NPU = ("npu.count", "npu.processes")

RUNTIME: tuple[Signature, ...] = (
    # --- CUDA / NVML / kernel driver ----------------------------------------------------------------
    Signature(
        "cuda.system_not_ready", "driver",
        (r"system not yet initialized", r"\bError 802\b", r"cuda runtime error \(802\)",
         r"cudaErrorSystemNotReady", r"CUDA_ERROR_SYSTEM_NOT_READY"),
        "CUDA error 802 (system not ready): on NVSwitch systems (HGX/DGX A100/H100/H200) the NVIDIA Fabric "
        "Manager service is not running or its version differs from the driver's, so CUDA refuses to start.",
        "Install nvidia-fabricmanager of exactly the driver's version and `systemctl enable --now "
        "nvidia-fabricmanager`; check `nvidia-smi -q | grep -i fabric`.",
        ("gpu.fabric", "gpu.devices"), "https://github.com/pytorch/pytorch/issues/35710", weight=85),
    Signature(
        "nvml.driver_library_mismatch", "driver",
        (r"Failed to initialize NVML: Driver/library version mismatch",),
        "The NVIDIA user-space libraries were upgraded but the loaded kernel module is still the old "
        "version (an unattended upgrade without a reboot): nvidia-smi and CUDA fail.",
        "Reboot the node (or unload and reload the nvidia kernel modules) so the module matches the "
        "libraries; pin the driver packages against unattended upgrades.",
        _DRIVER, "https://github.com/lyulyul/shine-cluster/issues/30", weight=85),
    Signature(
        "cuda.ecc_uncorrectable", "driver",
        (r"uncorrectable ECC error encountered", r"CUDA_ERROR_ECC_UNCORRECTABLE", r"cudaErrorECCUncorrectable"),
        "The GPU hit an uncorrectable ECC memory error: the GPU memory is faulty or needs its pages "
        "retired (a reset/reboot); every job on that GPU fails until then.",
        "Drain the node; check `nvidia-smi -q -d ECC,PAGE_RETIREMENT` and Xid 48/63/64/94/95 in dmesg; "
        "reset the GPU or reboot, and replace it if the errors return.",
        ("gpu.devices",), "https://github.com/tloen/alpaca-lora/issues/123", weight=88),
    Signature(
        "nvrm.fallen_off_bus", "driver",
        (r"fallen off the bus", r"NVRM: Xid \([^)]*\): 79\b"),
        "The kernel lost the GPU on the PCIe bus (Xid 79): power, thermal, a bad riser/slot or firmware; "
        "the GPU is gone until the node is power-cycled.",
        "Drain and power-cycle the node; check the GPU's power cables, temperatures and PCIe errors "
        "(`dmesg`, BMC logs); replace the GPU if it recurs.",
        ("gpu.devices",), "https://github.com/NVIDIA/NVSentinel/issues/155", weight=90),
    Signature(
        "nvrm.rm_init_adapter_failed", "driver",
        (r"NVRM: GPU \S+: RmInitAdapter failed!", r"rm_init_adapter failed, device minor number \d+"),
        "The NVIDIA kernel driver could not initialise the GPU (RmInitAdapter failed): driver/firmware "
        "problem or failing hardware; the GPU is unusable.",
        "Check dmesg for the Xid/NVRM lines before it; reinstall the driver, update the firmware, "
        "power-cycle the node; replace the GPU if it persists.",
        ("gpu.devices",), "https://github.com/Cyridd/cmpunlocker/issues/4", weight=86),
    Signature(
        "nccl.library_missing", "driver",
        (r"libnccl\.so(?:\.\d+)*: cannot open shared object file",),
        "The NCCL library is not installed or not on the library path of this node's environment.",
        "Install NCCL (libnccl2 or the nvidia-nccl-cu* wheel) on every node, or add its directory to "
        "LD_LIBRARY_PATH.",
        ("versions.nccl", "versions"), "https://github.com/NVIDIA/nccl-tests/issues/85", weight=80),
    # --- device memory ------------------------------------------------------------------------------
    Signature(
        "cuda.out_of_memory", "oom",
        (r"CUDA out of memory\. Tried to allocate", r"torch(?:\.cuda)?\.OutOfMemoryError: CUDA out of memory"),
        "A rank ran out of GPU memory; the other ranks then fail or time out waiting for it.",
        "Reduce the per-GPU batch size or sequence length, enable activation checkpointing / ZeRO / FSDP "
        "sharding, or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation; check no "
        "other process holds the GPU (`nvidia-smi`).",
        ("gpu.devices",), "https://github.com/determined-ai/determined/issues/5418", weight=84),
    Signature(
        "deepspeed.exit_sigkill", "oom",
        (r"\[launch\.py:\d+:sigkill_handler\] .* exits with return code = -9",),
        "DeepSpeed's launcher saw a worker killed by SIGKILL (-9): almost always the kernel OOM killer "
        "(host memory) or the scheduler's memory limit.",
        "Check `dmesg | grep -i oom` on that node; reduce host memory use (CPU offload, dataloader "
        "workers) or add memory.",
        ("os.memory",), "https://github.com/deepspeedai/DeepSpeed/issues/3232", weight=66),
    # --- process limits -----------------------------------------------------------------------------
    Signature(
        "os.too_many_open_files", "open-files",
        (r"\[Errno 24\] Too many open files", r"Too many open files"),
        "The process hit its open-file limit (ulimit -n, often 1024): DataLoader workers sharing tensors "
        "through file descriptors, many sockets of a large job.",
        "Raise the limit (`ulimit -n 65536`, limits.conf nofile, docker --ulimit nofile=65536) or use "
        "torch.multiprocessing.set_sharing_strategy('file_system').",
        (), "https://github.com/MhLiao/MaskTextSpotterV3/issues/51", weight=70),
    # --- c10d's own checks --------------------------------------------------------------------------
    Signature(
        "c10d.collective_mismatch", "collective-mismatch",
        (r"Detected mismatch between collectives on ranks",),
        "With TORCH_DISTRIBUTED_DEBUG=DETAIL, c10d compared the ranks' collectives and they differ (op type, "
        "tensor shape or dtype): the ranks took different code paths.",
        "Make every rank issue the same collectives in the same order with the same shapes (look at the "
        "two fingerprints in the message).",
        (), "https://github.com/pytorch/pytorch/issues/78022", weight=82),
    Signature(
        "c10d.port_in_use_libuv", "port-in-use",
        (r"code: -98, name: EADDRINUSE, message: address already in use",),
        "MASTER_PORT is already taken on the master (libuv TCPStore wording, torch >= 2.4): another job "
        "or a leftover process listens on it.",
        "Free the port (`ss -ltnp 'sport = :PORT'`) or pick another MASTER_PORT on every node.",
        ("ports.listening", "net.reachability"), "https://github.com/vllm-project/vllm/issues/39015", weight=80),
    Signature(
        "c10d.env_var_not_set", "launch-args",
        (r"env:// rendezvous: environment variable (?:RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|LOCAL_RANK) expected, "
         r"but not set", r"env:// rendezvous: (?:RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT) not set",
         r"raise _env_error\(\"(?:RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT)\"\)"),
        "init_process_group(init_method='env://') found no RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT: the "
        "script was started with plain `python`, not by torchrun / torch.distributed.launch / the DeepSpeed "
        "launcher that set them.",
        "Start it with `torchrun --nnodes N --nproc-per-node G --rdzv-endpoint HOST:PORT script.py` (or export "
        "the four variables on every rank).",
        (), "https://github.com/pytorch/pytorch/issues/39832", weight=78),
    Signature(
        "rdzv.shutdown_failed", "rendezvous",
        (r"has failed to shutdown the rendezvous '\S*' due to an error of type Rendezvous\w*Error",),
        "The agent could not reach the rendezvous store to close the rendezvous: the store (hosted by the "
        "first agent on --rdzv-endpoint) is gone, e.g. another job on the node used the same endpoint and "
        "exited.",
        "Give every job its own --rdzv-endpoint port and --rdzv-id; find the first failure on the store's node.",
        ("ports.listening", "net.reachability"), "https://github.com/wenet-e2e/wespeaker/issues/171", weight=24,
        root_cause=False),
    # --- Ascend -------------------------------------------------------------------------------------
    Signature(
        "acl.set_device_507033", "driver",
        (r"aclrtSetDevice\S* failed: 507033", r"open device \d+ failed, runtime result = 507033",
         r"acl set device \d+ failed, errorCode = 507033"),
        "ACL could not open the NPU (507033, device retain error): the NPU driver/firmware is not running "
        "or mismatched with CANN, the device is held by another process, or not passed into the container.",
        "Check `npu-smi info` and the driver/firmware/CANN versions on that node; pass /dev/davinci* and "
        "/dev/davinci_manager into the container; stop processes holding the NPU.",
        _NPU + ("versions",), "https://github.com/hw-native-sys/PTOAS/pull/736", weight=80),
    Signature(
        "hccl.init_link_error", "hccl-link",
        (r"hcclCommInitRootInfo(?:Config)?\(.*?\)\S*,? error code is (?P<code>\d+)",),
        "HCCL communicator init failed with a link error (HcclResult 11 TCP connect, 12 RoCE connect, 13/14 "
        "transfer, 19 network): a device NIC cannot reach its peer.",
        "Check the device network: `hccn_tool -i N -link -g`, `-ip -g`, ping between device IPs, and the "
        "same subnet/TLS settings on every NPU.",
        ("hccn.link", "hccn.reachability", "hccn.ip"), "https://github.com/vllm-project/vllm-ascend/issues/3196",
        weight=70, when=_hccl_connect_code),
)
