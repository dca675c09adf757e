"""Known failure signatures, part three: Ascend HCCL / CANN error codes (EI0001-EI0014), torch_npu's
``HCCL function error: ..., error code is N``, and the CANN runtime / aclnn / torch_npu / MindSpore messages that
say the cause in words (ASCEND_RT_VISIBLE_DEVICES rejected, the driver's HAL library missing, no kernel config
for the SoC, an uncapturable operator in an NPU graph, MindSpore's parallel environment missing; round 3: MindSpore's
allocator over the device's memory, npu-smi unable to initialise DCMI, torch_npu lacking an API its caller expects).
See ``catalog``.

Each entry's sample is printed text from a public issue or from the vendors' troubleshooting guides
(hicann/hccl, mindspore-ai/docs); tests/fixtures/explain/excerpts.json keeps it.

>>> [s.id for s in ASCEND if s.category == "launch-args"][:2]
['hccl.ei0001_env_invalid', 'hccl.ei0004_ranktable_invalid']
>>> HCCL_RESULT[11], _CODES[:38]
('HCCL_E_TCP_CONNECT', 'HcclResult codes: 1 E_PARA (parameter)')
"""

from __future__ import annotations

import re

from preflight.explain.signature import Signature
from preflight.explain.table_hccl import HCCL_RESULT

# HcclResult (the whole table: table_hccl): the number torch_npu prints as "error code is N".
_CODES = "HcclResult codes: " + ", ".join(f"{code} {name[len('HCCL_'):]}" for code, name in HCCL_RESULT.items()
                                          if code) + "."


def _para(m: re.Match[str]) -> bool:
    return int(m.group("code")) == 1


_HICANN = "https://github.com/hicann/hccl/blob/"
_EI0001_DOC = (_HICANN + "bf07f6e5c76b263f36264e439f29c6a0581cae1e/docs/en/user_guide/fault_diagnosis/"
               "env_config_error_EI0001.md")
_RANKTABLE_DOC = (_HICANN + "bf07f6e5c76b263f36264e439f29c6a0581cae1e/docs/en/user_guide/fault_diagnosis/"
                  "rank_table_load_fail.md")
_LINK_DOC = (_HICANN + "7076f76a733493cd2fc8b5521aad8703f2488f19/docs/en/user_guide/fault_diagnosis/"
             "param_link_stage.md")
# The signatures of the last group cite a real log (their ``source``); their patterns are the wordings of the
# vendors' own sources, every variant the source prints, listed here.
_RUNTIME_SRC = "https://github.com/hicann/runtime/blob/5dcf3b70b499eddb6c9a908dbd027bde32abc8af/"
WORDING_SOURCES: dict[str, str] = {
    # GetVisibleDevices's three errors (range, duplicated, order); newer CANN: EE2002 in api/impl/api_impl.cc
    "cann.visible_devices_invalid": _RUNTIME_SRC + "src/runtime/core/src/runtime.cc",
    # set_env.sh decides "driver installed" by finding libascend_hal.so under the driver's lib64
    "cann.driver_library_missing": _RUNTIME_SRC + "scripts/package/runtime/set_env.sh",
    # KernelMgr::ParseDynamicKernelConfig / AclOpKernelInit: ACLNN_ERR_INNER_LOAD_JSON_FAILED
    "aclnn.kernel_config_missing": "https://github.com/hicann/opbase/blob/79ed04ccb64c5502d0a5190fc7ecbae948b14cc7/"
                                   "src/nnopbase/composite_op/aclnn_engine/kernel_mgr.cpp",
    # assertNotCapturing / assertNotCapturingAclop
    "torch_npu.graph_capture_unsupported": "https://github.com/Ascend/pytorch/blob/"
                                           "028cebd3fbbaed78524ee3e3036b92905451c001/torch_npu/csrc/core/npu/"
                                           "NPUGraphsUtils.h",
    # _check_parallel_envs
    "mindspore.parallel_env_missing": "https://github.com/mindspore-ai/mindspore/blob/"
                                      "a75716fe6650adef3a82038c9ead676eb04d4f46/mindspore/python/mindspore/"
                                      "communication/management.py",
    # round 3: DynamicMemPoolBestFit::AddMemBlockAndMemBufByEagerFree's used-max check (both wordings, with and
    # without TotalUsedByEventMemStatistics)
    "mindspore.device_memory_exceeded": "https://github.com/mindspore-ai/mindspore/blob/"
                                        "fcb5c0ac5e4bd17260163154aad0fb0a9fa45df0/mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc",
    # npu-smi's DCMI init (the driver's management library); Ascend's MindX DL FAQ: -8005 after a driver/firmware
    # upgrade without a reboot, or the device not reachable from the container
    "npu_smi.dcmi_init_failed": "https://github.com/vllm-project/vllm-ascend/issues/2698",
    # Python's AttributeError for a module attribute, on torch_npu or one of its submodules (torchair...)
    "torch_npu.missing_attribute": "https://github.com/Ascend/pytorch/issues/23",
}
_MINDSPORE_FAQ = ("https://github.com/mindspore-ai/docs/blob/010322b13f6e39c9e1b4b1f806e8d7eb847f9001/"
                 "docs/mindspore/source_zh_cn/faq/distributed_configure.md")
_MINDSPORE_DOC = ("https://github.com/mindspore-ai/docs/blob/c846dddffa32fc04ccf7281e2b42dce111979d30/"
                  "tutorials/source_zh_cn/debug/error_analysis/cann_error_cases.md")

ASCEND: tuple[Signature, ...] = (
    # --- configuration: environment variables, the rank table ---------------------------------
    Signature(
        "hccl.ei0001_env_invalid", "launch-args",
        (r"Config_Error_Invalid_Environment_Variable\(EI0001\)", r"\bEI0001\b",
         r"Value \S+ for environment variable \w+ is invalid"),
        "An HCCL_* environment variable has a value HCCL rejects (EI0001); the message names the variable "
        "and its valid range, and the communicator is not created.",
        "Set the variable named in the message to a value in the printed range (or unset it) on every "
        "rank; keep the HCCL_* environment identical on all nodes.",
        ("hccl.env",), _EI0001_DOC, weight=72),
    Signature(
        "hccl.socket_ifname_not_found", "wrong-interface",
        (r"by HCCL_SOCKET_IFNAME, but not found in the environment", r"get host ip fail by socket Ifname"),
        "HCCL_SOCKET_IFNAME names a host NIC that does not exist on this node (in a container: not inside "
        "the container), so HCCL finds no host IP to bind; the log lists the NICs that do exist.",
        "Set HCCL_SOCKET_IFNAME to an interface present on every node (`ip -br addr`), e.g. the one that "
        "carries MASTER_ADDR's subnet.",
        ("hccl.env", "net.interface"), _EI0001_DOC, weight=74),
    Signature(
        "hccl.ei0004_ranktable_invalid", "launch-args",
        (r"\bEI0004\b", r"The ranktable is invalid", r"Invalid ranktable"),
        "The rank table (RANK_TABLE_FILE) is invalid for this host (EI0004): a duplicated or wrong "
        "device_id, a rank_id beyond the rank count, a bad IP, or a file that cannot be read.",
        "Fix the rank table as the message says (one entry per device, device_id/rank_id in range, the "
        "node's real device IPs) and use the same file on every node.",
        ("hccn.rank_table",), _MINDSPORE_DOC, weight=75),
    Signature(
        "hccl.ranktable_device_ip_mismatch", "launch-args",
        (r"the IP address\(\S+\) in the ranktable is inconsistent with the IP address\(\S+\) of the network "
         r"adapter",),
        "The device_ip the rank table gives this rank is not the IP of its NPU's network port (HCCP "
        "ra_rdev_init check; EI0014), so the device NIC cannot be initialised.",
        "Put each device's real IP in the rank table (`hccn_tool -i N -ip -g` on every node) or regenerate "
        "the rank table.",
        ("hccn.rank_table", "hccn.ip"), _RANKTABLE_DOC, weight=80),
    # --- link setup between ranks ---------------------------------------------------------------
    Signature(
        "hccl.ei0005_args_inconsistent", "collective-mismatch",
        (r"\bEI0005\b", r"The arguments for collective communication are inconsistent between ranks",
         r"CMD information \w+ check fail"),
        "Two ranks called different collectives at link setup (EI0005): the operator, its count, data type, "
        "reduce op or HCCL buffer size differ - diverging scripts/data, or different versions on the nodes.",
        "Make every rank run the same code, data and CANN/torch_npu versions; the message names the "
        "parameter (tag, count, cmdType...) and its local and remote values.",
        ("versions", "versions.cann"), _LINK_DOC, weight=72),
    Signature(
        "hccl.ei0009_transport_init", "hccl-link",
        (r"\bEI0009\b", r"Transport init error\. Reason: \[Create\] ?\[DestLink\]Create Dest error"),
        "HCCL could not create the transport link to a peer rank (EI0009): the peer NPU failed or exited, "
        "or its device network is unreachable.",
        "Check the peer named in createLink para (dst_rank, remote_ip_addr) for an earlier error; check "
        "device links and ping between the device IPs (`hccn_tool -i N -ping -g address PEER_IP`).",
        ("hccn.link", "hccn.reachability", "npu.processes"),
        "https://github.com/vllm-project/vllm-ascend/issues/3162", weight=45),
    Signature(
        "hccl.ei0011_device_oom", "oom",
        (r"Resource_Error_Insufficient_Device_Memory", r"\bEI0011\b"),
        "HCCL could not allocate NPU memory for its links (EI0011, QP resources): the device is full - the "
        "job itself or another process on the NPU.",
        "Free NPU memory (smaller batch, fewer RoCE links, stop other processes: `npu-smi info`); lower "
        "HCCL_BUFFSIZE if HCCL's buffers are the large part.",
        ("npu.processes",), _LINK_DOC, weight=78),
    # --- execution ------------------------------------------------------------------------------
    Signature(
        "hccl.ei0002_notify_wait_timeout", "hccl-timeout",
        (r"\bEI0002\b", r"The wait execution of the Notify register times out", r"Notify wait execute failed"),
        "A collective waited longer than HCCL_EXEC_TIMEOUT (1800 s default) for a peer rank (EI0002): that "
        "rank failed or exited earlier, is far behind (e.g. saving a checkpoint), runs a different "
        "collective sequence, or the device network drops packets.",
        "Find the rank that failed first (the message may name the abnormal device); if all ranks only "
        "wait on a slow one raise HCCL_EXEC_TIMEOUT; grep the plogs for 'error cqe' and check device links.",
        ("npu.processes", "hccn.link", "hccn.reachability"), _MINDSPORE_DOC, weight=32),
    Signature(
        "hccl.device_task_timeout", "hccl-timeout",
        (r"hccl (?:fftsplus )?task timeout occurred during task execution", r"stuck notify wait context",
         # the same report for a notify or event wait task (device_error_proc.cc ProcessStarsWaitTimeoutErrorInfo):
         # the stream waited on another stream or device, HCCL's collectives among them, past the timeout
         r"(?:notify|event) wait timeout occurred during task execution"),
        "A collective task on the device waited past the HCCL execution timeout (HCCL_EXEC_TIMEOUT, 30 min by "
        "default) with notifies stuck: the runtime's device-error report under EI9999 (hicann/runtime "
        "src/runtime/feature/src/device/device_error_proc.cc; the EI0002 case told by the device): a peer rank "
        "failed or exited earlier, is far behind, or runs another collective sequence.",
        "Find the rank that failed first (its own error comes before the timeout); if all ranks only wait on a "
        "slow one raise HCCL_EXEC_TIMEOUT; check device links and that every rank calls the same collectives.",
        ("npu.processes", "hccn.link", "hccn.reachability"),
        "https://github.com/Ascend/pytorch/issues/54", weight=34),
    Signature(
        "hccl.error_code_para", "launch-args",
        (r"HCCL function error: .*, error code is (?P<code>\d+)\b",),
        "An HCCL call from torch_npu returned HcclResult 1 (HCCL_E_PARA, parameter error): HCCL rejected "
        "the communicator's arguments - rank/world size, the parallel layout, an HCCL_* setting, or a "
        "feature the device does not support. " + _CODES,
        "Read the CANN error lines after it (EIxxxx, plog under ~/ascend/log) for the parameter; check the "
        "rank count and parallel sizes against the NPUs and HCCL_* variables on every node.",
        ("hccl.env", "npu.count"), "https://github.com/vllm-project/vllm-ascend/issues/2712", weight=20,
        when=_para),
    # --- the cause in words: CANN runtime, aclnn, torch_npu, MindSpore ------------------------------
    Signature(
        "cann.visible_devices_invalid", "device-mapping",
        (r"set ASCEND_RT_VISIBLE_DEVICES:\[?[^\]\s]*\]? (?:error|cannot be duplicated)",
         r"Value \S+ for environment variable ASCEND_RT_VISIBLE_DEVICES is invalid"),
        "CANN rejected ASCEND_RT_VISIBLE_DEVICES (the runtime's GetVisibleDevices): it names an "
        "NPU this node or container does not have ('input data range[0-N)'), repeats one, or is not in "
        "ascending order, so the runtime sees no device (207004 'no valid device', 107001 on set device).",
        "List only NPUs that exist here, ascending and without repeats; inside a container that mounts one "
        "/dev/davinciN that NPU is device 0. Match the ranks per node to `npu-smi info`.",
        ("npu.count", "npu.chip", "npu.env"), "https://github.com/gpustack/gpustack/issues/2527", weight=82),
    Signature(
        "cann.driver_library_missing", "driver",
        (r"libascend_hal\.so: cannot open shared object file",
         # round 5: the driver package's other libraries (driver/lib64: DSMI for npu-smi, DCMI)
         r"lib(?:drvdsmi_host|dcmi)\.so: cannot open shared object file"),
        "The NPU driver's HAL library (libascend_hal.so, installed by the driver package under "
        "/usr/local/Ascend/driver/lib64) cannot be loaded: the driver is not installed on this node, or the "
        "container was started without the driver mounted (CANN's set_env.sh takes a missing libascend_hal.so "
        "for 'driver not installed').",
        "Install the NPU driver; in a container mount /usr/local/Ascend/driver (with npu-smi and dcmi) and "
        "source set_env.sh so LD_LIBRARY_PATH holds the driver's lib64.",
        ("npu.health", "versions.npu_driver", "npu.env"), "https://github.com/vllm-project/vllm-ascend/issues/1440",
        weight=85),
    Signature(
        "aclnn.kernel_config_missing", "version-mismatch",
        (r"Parse dynamic kernel config fail", r"Failed to ParseDynamicKernels"),
        "aclnn found no kernel binaries for the operator: the kernel config JSON of the CANN kernels (OPP) package "
        "for this SoC is missing or unreadable (opbase's ACLNN_ERR_INNER_LOAD_JSON_FAILED) - the "
        "kernels package is not installed, is for another chip (910B vs 910C, 310P) or CANN version, or "
        "ASCEND_OPP_PATH / ASCEND_CUSTOM_OPP_PATH point elsewhere. The aclnn code beside it (561103...) is its "
        "consequence.",
        "Install the CANN kernels package matching the toolkit and this SoC (an image built for this chip), "
        "source set_env.sh, and check ASCEND_CUSTOM_OPP_PATH in the process's environment.",
        ("versions.cann", "npu.env"), "https://github.com/vllm-project/vllm-ascend/issues/3046", weight=80),
    Signature(
        "torch_npu.graph_capture_unsupported", "app-fault",
        (r"Cannot run aclop operators during NPU graph capture",
         r"during NPU graph capture\. If you need this call to be captured"),
        "torch_npu refused an operation while capturing an NPU (ACL) graph: only aclnn "
        "operators can be captured, and an aclop operator (often one a private format such as FRACTAL_NZ "
        "selects) or another uncapturable call ran inside the capture.",
        "Set torch.npu.config.allow_internal_format = False, run the model eager (vLLM: --enforce-eager), or use "
        "a torch_npu in which the operator has an aclnn implementation.",
        (), "https://github.com/modelscope/ms-swift/issues/6684", weight=80),
    Signature(
        "mindspore.parallel_env_missing", "launch-args",
        (r"Environment variables RANK_ID has not been exported",
         r"Get hccl rank_table_file failed, please export MINDSPORE_HCCL_CONFIG_PATH or RANK_TABLE_FILE"),
        "MindSpore's init() for HCCL ran without the distributed environment: RANK_ID is "
        "not exported, or neither MINDSPORE_HCCL_CONFIG_PATH nor RANK_TABLE_FILE names the rank table.",
        "Launch with msrun (it sets them) or export RANK_ID, RANK_SIZE, DEVICE_ID and RANK_TABLE_FILE for every "
        "process; a single-device run must not call init().",
        ("hccl.env", "hccn.rank_table"), "https://github.com/mindspore-lab/mindocr/issues/101", weight=78),
    # --- round 3 (issue 38): classes the spent frozen2 set showed, in the vendors' wordings ----------------------
    Signature(
        "mindspore.device_memory_exceeded", "oom",
        (r"plus alloc size : \d+ is more than total mem size : \d+",),
        "MindSpore's device memory pool (mem_dynamic_allocator.cc, AddMemBlockAndMemBufByEagerFree) cannot "
        "serve an allocation: the memory in use plus the request exceeds the NPU's (or GPU's) total: the model, "
        "batch or sequence is too large for the device, or another process holds part of it.",
        "Smaller batch or sequence, recompute / parallelism to split the model, or a larger device; free the "
        "NPU (`npu-smi info`); MindSpore's max_device_memory bounds the pool.",
        ("npu.processes",), "https://github.com/candle-org/MindAct/issues/1761", weight=84),
    Signature(
        "npu_smi.dcmi_init_failed", "driver",
        (r"dcmi module initialize failed",),
        "npu-smi (and everything that uses the driver's DCMI management library) cannot initialise it: the NPU "
        "driver is not loaded or does not match its firmware (-8005 after an upgrade without a reboot), or in a "
        "container the davinci / davinci_manager / devmm_svm / hisi_hdc devices are not mounted or are held by "
        "another container.",
        "Check `npu-smi info` on the host, reboot after a driver/firmware upgrade, and start the container with the "
        "NPU device files (or --privileged) and the driver directory mounted.",
        ("npu.health", "npu.env", "versions.npu_driver"), "https://github.com/vllm-project/vllm-ascend/issues/2698",
        weight=86),
    Signature(
        "torch_npu.missing_attribute", "version-mismatch",
        (r"module 'torch_npu(?:\.\w+)*' has no attribute '\w+'",),
        "The installed torch_npu (or its submodule, e.g. torchair) lacks an API the calling package expects "
        "(an npu_* operator, an internal _npu_* function, get_npu_backend): torch_npu, torch, CANN and the "
        "package calling it (vllm-ascend, MindIE, diffusers ports) are not of matching versions.",
        "Install the torch_npu release the calling package names for this torch and CANN (its install guide's "
        "version table); torch and torch_npu must be of the same minor version.",
        ("versions.torch_npu_compat", "versions.cann"), "https://github.com/Ascend/pytorch/issues/23", weight=78),
    # --- round 8: MindSpore's distributed-configuration FAQ, the questions the spent frozen3 set drew ------------
    Signature(
        "mindspore.hccl_comm_init_error_2", "oom",
        (r"HcclCommInitRootInfo failed\.? *\| *Error Number 2\b",),
        "MindSpore's HCCL communicator creation failed with HcclResult 2: launched by OpenMPI, HCCL needs about 300 MB "
        "of device memory per communicator on each card, and a card in many communicators (many sub-groups) runs "
        "short because MindSpore's memory pool took the rest.",
        "Leave HCCL room: lower MindSpore's device memory pool (context `variable_memory_max_size` / "
        "`max_device_memory`, or `set_memory(max_size=...)`) or use fewer communication groups.",
        ("npu.processes",), _MINDSPORE_FAQ + "#case-11", weight=80),
    Signature(
        "mindspore.init_plugin_ranktable", "launch-args",
        (r"Init plugin so failed, ret = 1343225860\b",),
        "MindSpore could not initialise HCCL's plugin with the rank table it was given (RANK_TABLE_FILE): the rank "
        "table's content is wrong for this cluster.",
        "Regenerate the rank table for the devices of this run (hccl_tools.py, or the node's real device IPs from "
        "`hccn_tool -i N -ip -g`) and point RANK_TABLE_FILE at it on every node.",
        ("hccn.rank_table",), _MINDSPORE_FAQ + "#case-1", weight=76),
    # --- round 7 (the spent frozen5 set, folded) -------------------------------------------------------------
    Signature(
        "mindspore.unique_id_fetch", "store-timeout",
        (r"Failed to fetch the unique id of the collective lib from the meta server node",),
        "MindSpore's non-root ranks fetch the communicator's unique id (HCCL's root info) from the scheduler and "
        "gave up waiting: the group's root rank exited or never got that far, or, at large scale, the default "
        "wait (MS_NODE_TIMEOUT) is too short.",
        "Read the root rank's log (the message names it: 'Please check root rank: N') for its own error; above "
        "128 devices raise MS_NODE_TIMEOUT (900-1800 s).",
        ("net.reachability",), "https://github.com/mindspore-ai/docs/blob/9e844dc65dc5ef4381574e8b6ec2f93f9681f720/"
        "docs/mindspore/source_zh_cn/faq/distributed_parallel.md#case-unique-id-timeout", weight=60,
        root_cause=False),
    Signature(
        "cann.visible_device_invalid", "device-mapping",
        (r"Set visible device failed, invalid device=\d+, input visible devices:",),
        "The CANN runtime was asked for a device outside ASCEND_RT_VISIBLE_DEVICES: the launcher (Ray, a device "
        "plugin) overwrote the visible-devices variable, or a rank's device index counts physical instead of "
        "visible devices.",
        "Keep each worker's ASCEND_RT_VISIBLE_DEVICES as its scheduler set it (with Ray: export "
        "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1 before `ray start`) and index devices from 0 within it.",
        ("npu.env", "npu.count"), "https://github.com/vllm-project/vllm-ascend/issues/168", weight=74),
    Signature(
        "hccl.ranktable_device_ip_unset", "hccl-link",
        (r"'device ip' is not set correctly, must be set when multi Server",),
        "HCCL's ranktable check found no device IP for an NPU while the job spans servers (or HCCL_INTRA_ROCE_"
        "ENABLE is set): the NPU NICs have no address, or the container does not see /etc/hccn.conf / hccn_tool, "
        "so the ranktable has no device_ip.",
        "Give every NPU its device IP (`hccn_tool -i N -ip -g`), mount /etc/hccn.conf and hccn_tool into the "
        "container, and regenerate the ranktable with the device IPs.",
        ("hccn.ip", "hccn.link"), "https://github.com/vllm-project/vllm-ascend/issues/7711", weight=74),
    # --- round 9 (the spent frozen6 set, folded): vendor FAQ texts ------------------------------------------
    Signature(
        "mindcluster.device_ip_unread", "hccl-link",
        (r"\bGet device ip failed\b",),
        "The Ascend device plugin could not read an NPU's device IP (hccn_tool has none configured), so the job's "
        "rank table (hccl.json) never leaves 'initializing'.",
        "Configure every NPU's device IP (`hccn_tool -i N -ip -s address ... netmask ...`; check with `-ip -g`) "
        "and restart the device plugin.", ("hccn.ip", "hccn.link"),
        "https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/"
        "dlug_installation_faq_020.html", weight=70),
    Signature(
        "mindcluster.npu_busy", "hccl-stale-process",
        # MindCluster's job scripts loop on npu-smi while it answers DCMI's -8020 (device busy)
        (r"\bnpu is busy, check again\b", r"\bnpu is occupied by others too long\b"),
        "The NPUs given to the job are still held by another container or process (running, or only having the "
        "davinci devices mounted).",
        "Stop the container or process that holds or mounts the NPUs (`npu-smi info` lists the processes), or "
        "run the job's container privileged when the other one only mounts them.", ("npu.processes",),
        "https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/"
        "dlug_installation_faq_050.html", weight=70),
    Signature(
        # round 15 (the spent frozen10 set): the runtime's device lookup when the NPU driver is not loaded
        # (aclrtSetDevice then returns 107001, an invalid device id: the symptom)
        "ascend.driver_not_loaded", "driver",
        (r"Failed to get phy dev id by logic dev id, driver may not be loaded",),
        "The CANN runtime could not map the logical device to a physical one because the NPU driver is not loaded "
        "(not installed, or its kernel modules are not up); the invalid-device error that follows is the symptom.",
        "Check `lsmod | grep drv_davinci` and /usr/local/Ascend/driver/version.info; reinstall or reload the NPU "
        "driver (and reboot), then `npu-smi info`.", ("npu.health", "versions.npu_driver"),
        "https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/FAQ/"
        "aclrtSetDevice%E8%B0%83%E7%94%A8%E5%A4%B1%E8%B4%A5.md#case-2", weight=78),
    Signature(
        "ascend.libdcmi_unloadable", "driver",
        (r"Failed to load the libdcmi\.so dynamic library",),
        "The NPU driver's management library (libdcmi.so) cannot be loaded: the driver is not installed right, "
        "its library path is not set in this environment, or the driver package lacks it.",
        "Check the driver with `npu-smi info`; reinstall it or put its lib64 (/usr/local/Ascend/driver/lib64...) "
        "on LD_LIBRARY_PATH.", ("npu.health", "versions.npu_driver"),
        "https://www.hiascend.com/document/detail/en/mindcluster/730/toolbox/toolboxug/toolboxug_0098.html",
        weight=70),
    Signature(
        "torch_npu.unsupported_dtype", "app-fault",
        (r"Unsupport(?:ed)? data type: at::ScalarType::\w+",),
        "An NPU operator got a tensor of a data type it does not support (float64 / Double on most NPU "
        "operators).", "Convert the tensor before the call (`.float()`, or `.cpu().float().npu()`).", (),
        "https://www.hiascend.com/document/detail/en/mindstudio/500/msug/msug_000055.html", weight=66),
    Signature(
        "ascend.nvme_address_unaligned", "driver",
        (r"The address does not comply with the NVMe protocol\s*\(must be aligned with 4KB\)",),
        "The NPU cannot start: the host kernel handed its driver a DMA address that is not 4 KB aligned (a host "
        "kernel or driver fault, whatever the job).",
        "Follow Huawei's case for the host kernel (IOMMU / DMA settings) and the driver version; check "
        "`npu-smi info` and dmesg.", ("npu.health",),
        "https://support.huawei.com/enterprise/en/doc/EDOC1100116422/62db083/"
        "ascend-310-ai-processor-cannot-be-started-properly", weight=70),
    Signature(
        "torch_npu.shutdown_without_set_device", "device-mapping",
        (r"in _npu_shutdown\b.*\btorch\._C\._npu_shutdown\(\)\s*RuntimeError",),
        "torch_npu failed at exit: the process never called torch_npu.npu.set_device, so it was bound to device 0 "
        "while it created tensors on another NPU.",
        "Call `torch_npu.npu.set_device(local_rank)` before any NPU work in each process.", ("npu.env",),
        "https://www.hiascend.com/doc_center/source/zh/Pytorch/600/comref/comaq/commonqa_0009.html", weight=30),
    # --- round 23 (the spent frozen13 set, folded) -----------------------------------------------------------
    Signature(
        "paddle.npu_op_ge_failure", "app-fault",
        # PaddleCustomDevice's npu_op_runner (PADDLE_ENFORCE_NPU_SUCCESS around aclopCompileAndExecute): the CANN
        # operator the Paddle kernel ran failed to compile or run - ACL 500002 (ACL_ERROR_GE_FAILURE)
        (r"\bACL error,\s*the error code is\s*:\s*500002\b",),
        "A Paddle NPU kernel's CANN operator failed to compile or run (ACL 500002, the graph engine's failure, as "
        "Paddle's NPU op runner reports it): the operator rejected the dtype / shape / attributes Paddle passed, "
        "or has no kernel for them in this compile mode.",
        "Run with FLAGS_npu_blocking_run=1 to find the operator and dump its inputs; try the other compile mode "
        "(FLAGS_npu_jit_compile) or another dtype; report it with the operator's name and inputs.",
        (), "https://github.com/PaddlePaddle/PaddleCustomDevice/pull/1799", weight=64),
)
