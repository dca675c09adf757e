"""Known failure signatures, part three: the accelerator runtime and driver (CUDA out of memory, error 802 /
fabric manager, ECC, NVML driver/library mismatch, Xid, Ascend device start-up). Each pattern is the text the
library itself prints (torch's c10 CUDA checks, the CUDA runtime's error strings, nvidia-smi, the NVIDIA kernel
module, torch_npu); older and newer wordings are separate entries. See ``catalog``.

>>> from preflight.explain.matcher import explain_texts
>>> explain_texts({"r0.log": "torch.OutOfMemoryError: CUDA out of memory."}).best.signature.id
'cuda.oom'
"""

from __future__ import annotations

from preflight.explain.signature import Signature

_DRIVER = ("versions.gpu_driver", "gpu.devices.driver", "gpu.devices.smi")
_OOM_FIX = ("Lower the per-GPU batch size or sequence length, enable activation checkpointing / ZeRO / FSDP "
            "sharding, and check `nvidia-smi` for other processes holding memory on that GPU.")

CUDA: tuple[Signature, ...] = (
    # --- out of memory (c10/cuda/CUDACachingAllocator.cpp) ---------------------------------------
    Signature(
        "cuda.oom", "oom",
        (r"(?:torch\.(?:cuda\.)?)?OutOfMemoryError: CUDA out of memory",),
        "A rank ran out of GPU memory (torch's caching allocator could not allocate); the other ranks then "
        "fail or hang waiting for it.",
        _OOM_FIX, ("gpu.devices.processes",), "https://github.com/carolchenyx/MGFN./issues/35", weight=88),
    Signature(
        "cuda.oom_legacy", "oom",
        (r"RuntimeError: CUDA out of memory\. Tried to allocate",),
        "A rank ran out of GPU memory (torch before 1.13 raised a plain RuntimeError); the other ranks then "
        "fail or hang waiting for it.",
        _OOM_FIX, ("gpu.devices.processes",), "https://github.com/pytorch/pytorch/issues/18853", weight=87),
    Signature(
        "cuda.oom_thc", "oom",
        (r"cuda runtime error \(2\) : out of memory",),
        "A rank ran out of GPU memory (THC's `cuda runtime error (2)` wording of torch before 1.0).",
        _OOM_FIX, ("gpu.devices.processes",), "https://github.com/rowanz/neural-motifs/issues/58", weight=87),
    Signature(
        "cuda.error_oom", "oom",
        (r"CUDA error: ?out of memory",),
        "A CUDA call failed with cudaErrorMemoryAllocation (c10's `CUDA error: out of memory`): the GPU is "
        "full, often because another process (or another rank on the same GPU) holds its memory.",
        _OOM_FIX, ("gpu.devices.processes", "nccl.visible_devices"), "https://github.com/MIC-DKFZ/nnUNet/issues/593",
        weight=86),
    Signature(
        "nccl.cuda_oom", "oom",
        (r"NCCL WARN Cuda failure (?:\d+ )?'out of memory'", r"NCCL WARN Failed to CUDA calloc (?:async )?\d+ bytes"),
        "NCCL could not allocate its GPU buffers: the GPU is full (the model, another process, or too many "
        "NCCL channels/communicators).",
        "Free GPU memory before the first collective (smaller batch, fewer communicators) or lower "
        "NCCL_BUFFSIZE / NCCL_MAX_NCHANNELS; check `nvidia-smi` for other processes.",
        ("gpu.devices.processes",), "https://github.com/NVIDIA/nccl/issues/1235", weight=86),
    Signature(
        "torch_npu.oom", "oom",
        (r"NPU out of memory\. (?:Tried to allocate|NPUWorkspaceAllocator tried to allocate|device id: )",),
        "A rank ran out of NPU memory (torch_npu's caching allocator, the NPU counterpart of CUDA's out of "
        "memory); the other ranks then fail or hang waiting for it.",
        "Lower the per-NPU batch size or sequence length, shard more (ZeRO / FSDP), set "
        "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True against fragmentation, and check `npu-smi info` for "
        "other processes holding memory on that NPU.",
        ("npu.processes",), "https://github.com/vllm-project/vllm-omni/issues/6400", weight=88),
    # --- CUDA error 802: cudaErrorSystemNotReady (fabric manager) -------------------------------
    Signature(
        "cuda.system_not_ready", "driver",
        (r"Error 802: system not yet initialized", r"CUDA Error 802\b",
         r"failed to initialize CUDA: system not yet initialized",
         r"Error \([\w.-]+:\d+\): system not yet initialized"),
        "CUDA error 802 (cudaErrorSystemNotReady): on NVSwitch systems the nvidia-fabricmanager service is "
        "not running or does not match the driver, so no CUDA context can be created.",
        "Install nvidia-fabricmanager of exactly the driver's version and start it; check `nvidia-smi -q | "
        "grep -i fabric`.",
        _DRIVER, "https://github.com/microsoft/lisa/issues/2823", weight=92),
    # --- ECC, Xid, the kernel module -------------------------------------------------------------
    Signature(
        "cuda.ecc_uncorrectable", "driver",
        (r"CUDA error: uncorrectable ECC error encountered",),
        "The GPU reported an uncorrectable ECC memory error (cudaErrorECCUncorrectable): a hardware fault on "
        "that GPU, not a software bug; every later run on it can fail.",
        "Drain the node, read `nvidia-smi -q -d ECC,PAGE_RETIREMENT` and `dmesg | grep Xid`, reset the GPU "
        "(or reboot); replace it if the errors come back.",
        ("gpu.devices.ecc",), "https://github.com/tloen/alpaca-lora/issues/123", weight=93),
    Signature(
        "cuda.ecc_uncorrectable_legacy", "driver",
        (r"cuda runtime error \(39\) : uncorrectable ECC error encountered",
         r"CUDA_ERROR_ECC_UNCORRECTABLE"),
        "The GPU reported an uncorrectable ECC memory error (runtime error 39 / CUDA_ERROR_ECC_UNCORRECTABLE "
        "from the driver API): a hardware fault on that GPU.",
        "Drain the node, check `nvidia-smi -q -d ECC` and `dmesg | grep Xid`, reset or replace the GPU.",
        ("gpu.devices.ecc",), "https://github.com/nagadit/DeepFaceLab_Linux/issues/89", weight=93),
    Signature(
        "nvml.driver_mismatch", "driver",
        (r"Failed to initialize NVML: Driver/[Ll]ibrary version mismatch", r"Driver/library version mismatch"),
        "The loaded NVIDIA kernel module and the user-space driver libraries (libnvidia-ml) are different "
        "versions, usually after a driver upgrade without a reboot; CUDA cannot start either.",
        "Reboot the node (or unload and reload the nvidia modules) so the kernel module matches the installed "
        "driver; pin the driver packages against unattended upgrades.",
        _DRIVER, "https://github.com/Oneflow-Inc/oneflow/issues/3106", weight=94),
    Signature(
        "nvidia_smi.no_driver", "driver",
        (r"NVIDIA-SMI has failed because it couldn.t communicate with the NVIDIA driver",),
        "nvidia-smi cannot talk to the NVIDIA kernel driver: the module is not loaded (a kernel upgrade "
        "without a rebuilt DKMS module, nouveau holding the card) or the container was started without GPUs.",
        "Load/rebuild the driver for the running kernel (`dkms status`, `modprobe nvidia`), blacklist "
        "nouveau; in containers start with --gpus all / the NVIDIA runtime.",
        _DRIVER, "https://github.com/ci-for-research/self-hosted-runners/issues/40", weight=90),
    Signature(
        "nvidia_smi.gpu_lost", "driver",
        (r"Unable to (?:determine|detect) the device handle for GPU ?[0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.\d",),
        "NVML (nvidia-smi) can no longer reach a GPU the driver enumerated: the GPU fell off the bus, is lost or "
        "hung (`Unknown Error`, `GPU is lost`), usually after an Xid 79 or a PCIe link failure; ranks on it fail "
        "or hang.",
        "Drain the node; check `dmesg` for Xid 79 / PCIe AER errors on that bus id; reset or reboot, then reseat or "
        "replace the GPU (power, cooling, riser) if it recurs.",
        _DRIVER, "https://github.com/NVIDIA/nvidia-docker/issues/1553", weight=90),
    Signature(
        "nvidia_container.no_nvml", "driver",
        (r"nvidia-container-cli: initialization error: load library failed: libnvidia-ml\.so\.1",),
        "The NVIDIA container runtime found no driver library (libnvidia-ml.so.1) on the host: the driver "
        "is not installed or not visible to the container runtime.",
        "Install the NVIDIA driver on the host and configure the NVIDIA container toolkit for the runtime.",
        _DRIVER, "https://github.com/ameli/manylinux-cuda/issues/5", weight=90),
    # libnvidia-container's device lookup (nvc_info.c): the GPU a container was given (--gpus N, --gpus
    # '"device=1"', NVIDIA_VISIBLE_DEVICES, a MIG id) is not one this host has
    Signature(
        "nvidia_container.unknown_device", "device-mapping",
        (r"nvidia-container-cli(?:\.real)?: device error: \S+: unknown device",),
        "The container asked for a GPU this host does not have: `--gpus N` above the host's count, a device "
        "index or UUID (NVIDIA_VISIBLE_DEVICES, a scheduler's allocation, a MIG id of another naming) that is not "
        "there.",
        "Compare the request with `nvidia-smi -L` on that host: ask for at most as many GPUs as it has, pass the "
        "indices or UUIDs it lists (MIG: the `MIG-<uuid>` names of newer drivers), or let the scheduler set "
        "NVIDIA_VISIBLE_DEVICES.", ("gpu.devices.count", "nccl.visible_devices"),
        "https://github.com/NVIDIA/nvidia-docker/issues/1283",
        weight=80),
    Signature(
        "nvrm.no_adapter_probed", "driver",
        (r"NVRM: No NVIDIA graphics adapter probed!", r"NVRM: The NVIDIA probe routine was not called"),
        "The NVIDIA kernel module found no GPU it may drive: another driver (nouveau) owns the cards, or "
        "the module does not support them.",
        "Blacklist nouveau, rebuild the initramfs and reboot; check `lspci -k` shows nvidia in use.",
        _DRIVER, "https://github.com/mattshma/bigdata/issues/133", weight=90),
    Signature(
        "nvrm.fallen_off_bus", "driver",
        (r"NVRM: Xid \([^)]*\): 79, GPU has fallen off the bus", r"NVRM: fallen off the bus",
         r"\bGPU (?:at \S+ )?has fallen off (?:of )?the bus"),  # Xid 79's text as nvidia-smi / users quote it
        "The GPU stopped answering on PCIe (Xid 79): overheating, power, a riser/slot fault or firmware; the "
        "driver cannot use it until a reset.",
        "Drain the node, check temperatures, power and `dmesg`, reseat or replace the GPU, update the BIOS.",
        _DRIVER, "https://github.com/NVIDIA/NVSentinel/issues/155", weight=95),
    Signature(
        "nvrm.init_adapter_failed", "driver",
        (r"NVRM: GPU [0-9a-fA-F:.]+: RmInitAdapter failed!",),
        "The NVIDIA kernel driver could not initialise a GPU (RmInitAdapter failed): the card, its firmware "
        "or the driver install is broken, so CUDA sees fewer or no GPUs.",
        "Read the NVRM lines in `dmesg`, reinstall the driver matching the kernel, reseat or replace the GPU.",
        _DRIVER, "https://github.com/Cyridd/cmpunlocker/issues/4", weight=90),
    Signature(
        "nccl.cuda_unknown_error", "driver",
        (r"Cuda failure (?:999 )?'unknown error'",),
        "A CUDA call inside NCCL failed with error 999 (cudaErrorUnknown): the driver is in a bad state "
        "(after an Xid, a driver upgrade without reboot, or a broken container runtime).",
        "Check `nvidia-smi` and `dmesg | grep -i xid` on the node; reset the GPU or reboot.",
        _DRIVER, "https://github.com/pytorch/pytorch/issues/170045", weight=70),
    Signature(
        "nccl.unhandled_cuda_error", "driver",
        (r"ncclUnhandledCudaError: Call to CUDA function failed",),
        "NCCL reports that a CUDA call failed (ncclUnhandledCudaError); the `Last error` / `Cuda failure` line "
        "names which, usually a driver/runtime mismatch or a GPU in a bad state.",
        "Run with NCCL_DEBUG=INFO, read the `Cuda failure N` line; check driver vs CUDA versions and "
        "`nvidia-smi` on that node.",
        # round 30: a wrapper, as its text says: the ``Cuda failure N '...'`` under ``Last error:`` is the cause (an
        # out-of-memory there is ``oom``); alone it still reads as a CUDA call NCCL saw fail
        ("versions.gpu_driver", "versions.cuda"), "https://github.com/NVIDIA/nccl/issues/1410", weight=40,
        root_cause=False),
    Signature(
        "cuda.invalid_device_ordinal_thc", "device-mapping",
        (r"cuda runtime error \((?:10|101)\) : invalid device ordinal",
         r"THCudaCheck FAIL file=\S+ line=\d+ error=(?:10|101) : invalid device ordinal"),
        "A rank asked for a GPU index that does not exist on its node (THC wording of torch before 1.8): "
        "--nproc-per-node is larger than the visible GPUs, or CUDA_VISIBLE_DEVICES hides some.",
        "Make --nproc-per-node equal the number of GPUs in CUDA_VISIBLE_DEVICES on every node.",
        ("gpu.devices.count", "nccl.visible_devices"), "https://github.com/pytorch/vision/issues/2237", weight=78),
    Signature(
        "cuda.no_gpus_available", "device-mapping",
        (r"RuntimeError: No CUDA GPUs are available",),
        "The process sees no GPU at all: CUDA_VISIBLE_DEVICES is empty or names only GPUs this node does not "
        "have, or the job or container was started without GPUs (no --gres=gpu, no nvidia.com/gpu, no --gpus).",
        "Compare CUDA_VISIBLE_DEVICES with `nvidia-smi -L` on that node (unset it, or use indices that exist), "
        "and request the GPUs from the scheduler or container runtime.",
        ("nccl.visible_devices", "gpu.devices.count"), "https://github.com/jiaw-z/CoR-GS/issues/23", weight=79,
        # round 35: after torch's "CUDA initialization: <the driver's error>" warning the GPUs were set to zero by
        # that error, which its own signature or the CUDA table names
        unless=(r"\bUserWarning: CUDA initialization: ",)),
    # --- Ascend: torch_npu cannot start the device ------------------------------------------------
    Signature(
        "torch_npu.set_device_507033", "driver",
        (r"SetDevice\(device_id_\), error code is 507033",),
        "aclrtSetDevice failed with 507033 (ACL_ERROR_RT_DEV_SETUP_ERROR): the NPU could not be started, "
        "usually a driver/firmware/CANN mismatch or a device held by another process.",
        "Check `npu-smi info` health and processes, and that driver, firmware and CANN versions are a "
        "supported combination.",
        ("npu.health", "npu.processes", "versions.npu_driver", "versions.cann"),
        "https://github.com/vllm-project/vllm-ascend/issues/4284", weight=85),
    # round 32: torch_npu's device start-up (NpuSysCtrl::Initialize) failing with one of ACL's generic internal codes
    # (500000-500004): no code names a cause, the device did not come up (the driver/firmware state; a reboot)
    Signature(
        "torch_npu.init_internal_error", "driver",
        (r"\bInitialize:\S*npu_sys_ctrl\.cpp:\d+\b[^\n]{0,120}\berror code is 50000[0-4]\b",),
        "torch_npu could not start the NPU (NpuSysCtrl::Initialize) and the runtime gave only a generic internal "
        "error: the device, its driver or firmware is not in a usable state.",
        "Check `npu-smi info` (health, processes), the driver/firmware/CANN versions; reset the device or reboot "
        "the node.",
        ("npu.health", "versions.npu_driver", "versions.cann"),
        "https://www.hiascend.com/document/detail/zh/canncommercial/601/modeldevpt/ptmigr/ptmigr_0100.html",
        weight=80),
    Signature(
        "torch_npu.libhccl_missing", "driver",
        (r"libhccl\.so: cannot open shared object file",),
        "torch_npu cannot load HCCL from CANN: the CANN toolkit is not installed or its environment "
        "(`source .../set_env.sh`) was not sourced in this shell / on this node.",
        "Install CANN matching torch_npu and source its set_env.sh in the job's environment on every node.",
        ("versions.cann", "versions.torch_npu_compat"), "https://github.com/LinZhekai/X-Oscar/issues/4", weight=85),
    Signature(
        "ascend.device_id_error", "device-mapping",
        (r"rtGetDeviceIndexByPhyId execute failed, reason=\[device id error\]",),
        "The Ascend runtime could not map a physical NPU id to a visible device: ASCEND_RT_VISIBLE_DEVICES "
        "(or the container's device list) does not contain the NPU the rank asked for.",
        "Make the visible NPU list and the ranks per node agree (ASCEND_RT_VISIBLE_DEVICES, --nproc-per-node).",
        ("npu.count", "npu.chip"), "https://github.com/vllm-project/vllm-ascend/issues/672", weight=78),
    # --- round 5: the driver as torch, the container runtime, NVML and the dynamic linker report it missing or too
    # old (torch/cuda/__init__.py _check_driver and c10/cuda's lazy init; nvidia-container-toolkit's requirement and
    # RPC errors; docker's device-driver lookup; NVML's init; libcuda / libnvidia-ml, which the driver installs)
    Signature(
        "torch.no_nvidia_driver", "driver",
        (r"Found no NVIDIA driver on your system",),
        "torch found no NVIDIA kernel driver: the node (or the container) has no driver loaded, no NVIDIA GPU, or "
        "the container was started without the GPUs.",
        "Check `nvidia-smi` on the node and inside the container (`--gpus all` / the device plugin); install or "
        "load the driver.", _DRIVER, "https://github.com/pytorch/pytorch/issues/3864", weight=70),
    Signature(
        "torch.driver_too_old", "driver",
        # round 14: also without the version in brackets (a log or an answer that quotes the sentence alone)
        (r"The NVIDIA driver on your system is too old(?: \(found version \d+\))?",),
        "The NVIDIA driver is older than the CUDA runtime this torch was built with needs (the version found is "
        "the driver's CUDA API level, e.g. 11040 = CUDA 11.4).",
        "Install a driver that supports the build's CUDA version (NVIDIA's CUDA compatibility table), or a torch "
        "wheel built for the driver's CUDA version.", _DRIVER, "https://github.com/wuhuikai/FastFCN/issues/37",
        weight=72),
    Signature(
        "torch.cuda_driver_init_failed", "driver",
        (r"CUDA driver initialization failed, you might not have a CUDA gpu",),
        "cuInit failed when torch first touched CUDA: the driver is not usable by this process - a driver and "
        "library mismatch, missing device files in the container, or a driver in a bad state.",
        "Run `nvidia-smi` in the same environment; reload the driver or reboot after an upgrade; check the "
        "container's device mounts.", _DRIVER, "https://github.com/wenet-e2e/wenet/issues/700", weight=60),
    # round 35 (blind to the eighteenth set): torch's own words for the driver at initialization and for a GPU its
    # build has no kernels for; torch prints both as warnings (c10/cuda/CUDAFunctions.cpp's "CUDA initialization: ...",
    # torch/cuda/__init__.py's _check_capability), so they are signatures: a family skips a warning's line
    Signature(
        "torch.cuda_unknown_error", "driver",
        (r"CUDA unknown error - this may be due to an incorrectly set up environment",),
        "The CUDA driver failed with an unknown error (cudaErrorUnknown) when torch counted or initialised the GPUs: "
        "the driver's state on this node (updated without a reboot, nvidia_uvm not loaded, after a suspend), "
        "seldom the CUDA_VISIBLE_DEVICES change the message suggests.",
        "Check `nvidia-smi` on the node; reboot after a driver update, or load nvidia_uvm (`nvidia-modprobe -u -c=0` "
        "/ `modprobe nvidia_uvm`); set CUDA_VISIBLE_DEVICES before the process starts.",
        _DRIVER, "https://github.com/pytorch/pytorch/issues/49081", weight=62),
    Signature(
        "torch.gpu_arch_not_in_build", "version-mismatch",
        (r"with CUDA capability sm_\d+ is not compatible with the current PyTorch installation",
         r"PyTorch no longer supports this GPU because it is too old",
         r"which requires CUDA_VERSION >= \d+ to\s+work properly, but your PyTorch was compiled"),
        "The installed torch was built without kernels for this GPU's architecture (a build for an older CUDA than a "
        "new GPU needs, or a GPU older than the build supports): its CUDA calls fail with 'no kernel image'.",
        "Install a torch wheel built for a CUDA release that supports this GPU (`torch.cuda.get_arch_list()` must "
        "list its sm_XX), on every node with that GPU.",
        ("versions.cuda", "gpu.devices.smi"), "https://github.com/meituan/YOLOv6/issues/350", weight=70),
    Signature(
        "nvidia_container.cuda_requirement", "driver",
        # round 14: also the bare "requirement error: ..." that docker prints after its own prefix
        (r"(?:nvidia-container-cli: )?requirement error: unsatisfied condition: cuda\s*>=\s*[\d.]+",),
        "The image requires a newer CUDA (its NVIDIA_REQUIRE_CUDA) than the host's driver supports: the NVIDIA "
        "container runtime refuses to start it.",
        "Upgrade the host's driver to one that supports that CUDA version, or use an image built for an older "
        "CUDA.", _DRIVER, "https://github.com/SyneRBI/PETRIC2/issues/27", weight=74),
    Signature(
        "nvidia_container.driver_rpc", "driver",
        (r"nvidia-container-cli: initialization error: driver rpc error",),
        "The NVIDIA container runtime timed out or failed talking to the driver while starting the container "
        "(GPUs not in persistence mode, a driver hung on a failing GPU).",
        "Enable persistence (`nvidia-smi -pm 1` or nvidia-persistenced), check `dmesg` for Xid errors, and "
        "reset or drain the GPU.", _DRIVER, "https://github.com/NVIDIA/nvidia-container-toolkit/issues/202",
        weight=70),
    Signature(
        "docker.no_gpu_device_driver", "driver",
        (r"could not select device driver \"\" with capabilities: \[\[gpu\]\]",),
        "docker was asked for GPUs (`--gpus`) but has no device driver for them: the NVIDIA container toolkit is "
        "not installed or not configured for this docker daemon, or the host has no NVIDIA GPU.",
        "Install nvidia-container-toolkit, run `nvidia-ctk runtime configure --runtime=docker` and restart "
        "docker; check `nvidia-smi` on the host.", _DRIVER,
        "https://github.com/fboulnois/stable-diffusion-docker/issues/82", weight=72),
    # the container runtime has no "nvidia" handler: containerd's CRI (`no runtime for %q is configured`, a pod
    # with runtimeClassName nvidia; containerd pkg/cri/server/helpers.go) and dockerd (`unknown or invalid runtime
    # name: %s`, --runtime=nvidia)
    Signature(
        "container.nvidia_runtime_missing", "driver",
        (r"no runtime for \"nvidia\" is configured", r"unknown or invalid runtime name: nvidia\b"),
        "The container runtime on this node has no `nvidia` runtime: the NVIDIA container toolkit is not installed "
        "or was never registered with containerd / docker (the GPU operator's toolkit pod not finished, a node "
        "added later), so no GPU container can start here.",
        "Install nvidia-container-toolkit and run `nvidia-ctk runtime configure --runtime=containerd` (or "
        "`--runtime=docker`), restart the runtime; on Kubernetes check the GPU operator's toolkit and validator "
        "pods on that node.", _DRIVER,
        "https://github.com/NVIDIA/gpu-operator/issues/730", weight=70),
    Signature(
        "nvml.init_unknown_error", "driver",
        (r"Failed to initialize NVML: Unknown Error",
         # go-nvml / the device plugin when the container got no driver library: "could not load NVML library"
         r"Failed to (?:initialize|start) (?:NVML|nvml)(?: with error)?: +could not load NVML library"),
        "NVML could not open the GPUs: inside a container this is the device cgroup losing the GPUs (a "
        "`systemctl daemon-reload` on a host with systemd cgroups), on a host a driver in a bad state.",
        "Restart the container (and configure the runtime so a daemon-reload keeps the devices), or reload "
        "the driver / reboot the host.", _DRIVER, "https://github.com/NVIDIA/nvidia-docker/issues/1671", weight=66),
    Signature(
        "driver.library_missing", "driver",
        (r"lib(?:cuda|nvidia-ml)\.so(?:\.\d+)*: cannot open shared object file",
         r"(?:could not|couldn't|failed to) (?:load|open|find) (?:the )?(?:library )?lib(?:cuda|nvidia-ml)\.so"),
        "libcuda / libnvidia-ml are installed by the NVIDIA driver, not by CUDA or pip: without them the node or "
        "the container has no driver (or the container runtime did not mount it).",
        "Install the driver on the host and start the container with the NVIDIA runtime (`--gpus all`); on a "
        "CPU-only node, use a CPU build.", _DRIVER,
        "https://github.com/aws/sagemaker-mxnet-inference-toolkit/issues/112", weight=64),
)
