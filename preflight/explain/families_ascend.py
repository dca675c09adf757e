"""Ascend's own fault knowledge (round 28, blind to the sixteenth set): the log-line keywords of MindCluster's fault
diagnosis knowledge base (``Ascend/mind-cluster`` ``component/ascend-faultdiag/src/ascend_fd/configuration/
kg-config.json`` at 22bb3d9, 2026-08-21: 1,050 faults, each with the keyword sets its parser looks for in CANN's plog,
the training log and MindIE's log), for the faults of a distributed job that no signature or code table here reads,
appended to ``preflight.explain.families.FAMILIES``.

Each row is ``(fault id, category, keyword sets, meaning, fix)``: a line with every keyword of one set, in the order
the knowledge base lists them, belongs to the fault. The category is ours (the knowledge base classes faults as
software, hardware, user or network); faults whose cause is a job's own script, a data set or an internal error are
left out, as are keyword sets that name no failure by themselves.

>>> [name for name, pattern, *_ in ASCEND_FAMILIES if re.search(pattern,
...  "[ERROR] HCCL(1234,python):2025-01-01-00:00:00.000.000 [hccl_socket_manager.cc:88][Find][LocalHostIP]ip "
...  "[10.0.0.9] of [HCCL_IF_IP] is not found in the nic list", re.IGNORECASE)]
['HCCL: HCCL_IF_IP not on this host (AISW_CANN_HCCL_001)']
"""

from __future__ import annotations

import re

from preflight.explain.families_tools import FamilyRow

SOURCE = ("https://github.com/Ascend/mind-cluster/blob/22bb3d987bc0208c3eb7395e222b661276133c58/component/"
          "ascend-faultdiag/src/ascend_fd/configuration/kg-config.json")

_HCCN = "Check the device NICs on both hosts (`hccn_tool -i N -link -g`, `-ip -g`, `-net_health -g`) and the switch."
_RANKTABLE = "Fix the rank table (RANK_TABLE_FILE): every server, device and device_ip as the hosts have them."
_TIMEOUT = ("A peer rank failed or hangs first: read every rank's log for its first error; raise HCCL_CONNECT_TIMEOUT "
            "/ HCCL_EXEC_TIMEOUT only when all ranks are slow to arrive.")

_ROWS: tuple[tuple[str, str, str, tuple[tuple[str, ...], ...], str, str], ...] = (
    # --- HCCL and HCCP in CANN's plog ---------------------------------------------------------------------------
    ("AISW_CANN_HCCL_001", "HCCL_IF_IP not on this host", "wrong-interface",
     (("[Find][LocalHostIP]ip [", "] of [", "] is not found in the nic list"),),
     "the host IP HCCL was told to use (HCCL_IF_IP) is not on any of this host's NICs",
     "Set HCCL_IF_IP to an address of this host (or unset it and name the NIC with HCCL_SOCKET_IFNAME)."),
    ("AISW_CANN_HCCL_003", "host socket cannot listen", "hccl-port", (("ra socket listen start fail",),),
     "HCCL could not listen on its host socket (the port is taken, often by a previous job's process)",
     "Free the port (kill the previous job's processes) or move HCCL_IF_BASE_PORT."),
    ("AISW_CANN_HCCL_004", "root rank's socket link timed out", "hccl-timeout",
     (("[Get][Connection]topo exchange server get socket timeout",),),
     "the root rank waited in vain for the other ranks to connect for HCCL's topology exchange", _TIMEOUT),
    ("AISW_CANN_HCCL_005", "non-root rank's socket link timed out", "hccl-timeout",
     (("[Get][Connection]topo exchange agent get socket timeout",),),
     "a rank could not connect to the root rank for HCCL's topology exchange in time", _TIMEOUT),
    ("AISW_CANN_HCCL_007", "rank table file missing", "launch-args",
     (("[HcomLoadRanktableFile]get file[", "] real path error"),),
     "the rank table file the job names does not exist", _RANKTABLE),
    ("AISW_CANN_HCCL_009", "rank table not JSON", "launch-args",
     (("[Read][File]errNo[", "] load file[", "] to json fail"),), "the rank table file is not valid JSON", _RANKTABLE),
    ("AISW_CANN_HCCL_012", "HCCL environment variable invalid", "launch-args", (("[Init][EnvVarParam]",),),
     "an HCCL environment variable has a value HCCL refuses", "Fix the HCCL_* variable the line names."),
    ("AISW_CANN_HCCL_014", "device RDMA NIC init failed", "hccl-link", (("rdma init fail",),),
     "HCCL could not initialise the NPU's RDMA NIC", _HCCN),
    ("AISW_CANN_HCCL_016", "P2P enable timed out", "hccl-timeout", (("[Wait][P2PConnected]connected p2p timeout",),
                                                                    ("Wait timeout for get P2P status",)),
     "the NPUs of a host did not enable peer-to-peer access to each other in time", _TIMEOUT),
    ("AISW_CANN_HCCL_017", "link to a device not established", "hccl-link",
     (("the connection failure between this device and", "target device"), ("Wait links establish completed failed",)),
     "HCCL could not establish its links between this device and another", _HCCN),
    ("AISW_CANN_HCCL_020", "operator inconsistent across ranks", "collective-mismatch",
     (("[RankConsistentImpl][CompareFrame]",),),
     "the ranks called the collective with different parameters", "Make every rank issue the same collectives with "
     "the same counts, types and root."),
    ("AISW_CANN_HCCL_023", "RDMA queue pair not created", "hccl-link", (("ra qp create fail",),),
     "HCCL could not create an RDMA queue pair on the device NIC", _HCCN),
    ("AISW_CANN_HCCL_024", "RDMA queue pair link not set up", "hccl-link", (("[Connect][Qp]get qp status timeout",),),
     "the RDMA queue pair between two device NICs never came up (the network between them)", _HCCN),
    ("AISW_CANN_HCCL_027", "Notify Wait timed out", "hccl-timeout",
     (("Task run failed", "taskType[Notify Wait]"), ("run failed, op information", "taskType[Notify Wait]")),
     "a collective's Notify Wait task timed out: a peer rank never arrived", _TIMEOUT),
    ("AISW_CANN_HCCL_029", "RDMA retransmissions exceeded", "hccl-link",
     (("[Heartbeat]cqe err status",), ("[Heartbeat]cqe error status",), ("cqe error status[12]",)),
     "the device NIC gave up retransmitting to a peer (completion status 12: retry exceeded): the link or the network",
     _HCCN),
    ("AISW_CANN_HCCL_034", "TLS settings differ across NPUs", "hccl-link",
     (("Some ranks tlsStatus are inconsistent",),),
     "the NPUs' device-NIC TLS switch differs across ranks", "Set TLS the same on every NPU (`hccn_tool -i N -tls -s "
     "enable 0|1`)."),
    ("AISW_CANN_HCCP_002", "device IP check failed", "hccl-link", (("HCCP", "[check][ip]fail"),),
     "HCCP found the device IP it was given not on the device NIC", _RANKTABLE),
    ("AISW_CANN_ERRMSG_Custom_06", "NPU network port down", "hccl-link", (("ra hdc message process failed ret(-67)",),),
     "the NPU's network port was down before the task ran", _HCCN),
    # --- the runtime's task timeouts ------------------------------------------------------------------------------
    ("AISW_CANN_Runtime_021", "runtime Notify Wait timed out", "hccl-timeout",
     (("wait task timeout", "type=7"), ("Notify wait execute failed",)),
     "a Notify Wait task (a collective's) timed out on the device", _TIMEOUT),
    ("AISW_CANN_Runtime_059", "task wait timed out", "hccl-timeout",
     (("event wait error", "retCode=0x105", "[task timeout]"),),
     "a task waiting for an event timed out on the device", _TIMEOUT),
    ("AISW_CANN_Runtime_054", "runtime cannot allocate device memory", "oom",
     (("DevMemAllocHugePageManaged failed",), ("DevMemAllocHugePageManaged", "halMemAlloc failed")),
     "the runtime could not allocate device memory", "Free device memory (smaller batch, fewer processes per NPU) "
     "and check `npu-smi info` for other holders."),
    # --- torch_npu / PyTorch in the training log -------------------------------------------------------------------
    ("AISW_PyTorch_Start_03", "a previous training process holds the NPU", "hccl-stale-process",
     (("the last training process is running",),), "the NPU is still held by a previous training process",
     "Kill the previous job's processes on this host (`npu-smi info` lists them), then relaunch."),
    ("AISW_PyTorch_Init_01", "device id invalid", "device-mapping",
     (("SetDevice failed", "devId is invalid"), ("Invalid device ID", "Check whether the device ID is valid")),
     "a rank set a device id this host does not have", "Match LOCAL_RANK / the device ids to the visible NPUs "
     "(ASCEND_RT_VISIBLE_DEVICES)."),
    ("AISW_PyTorch_Train_02", "a CPU tensor in an HCCL collective", "app-fault",
     (("No backend type associated with device type cpu",),),
     "the job passed a CPU tensor to a collective of an NPU-only process group", "Move the tensor to the NPU (or "
     "create the group with a gloo backend for CPU tensors)."),
    ("AISW_PyTorch_Train_03", "tensors of different dtypes in a collective", "app-fault",
     (("Invalid usage of tensors with different dtypes",),),
     "the job passed tensors of different dtypes to one collective", "Give the collective tensors of one dtype."),
    # --- MindSpore's msrun, cluster and parallel setup ---------------------------------------------------------------
    ("AISW_MindSpore_DP_07", "rank table path not set", "launch-args",
     (("Get hccl rank_table_file failed", "please export"),),
     "MindSpore found no rank table (MINDSPORE_HCCL_CONFIG_PATH / RANK_TABLE_FILE unset)", _RANKTABLE),
    ("AISW_MindSpore_DP_08", "HCCL lacks HcclSetConfig", "version-mismatch",
     (("HcclSetConfig", "from libhccl.so failed"),),
     "the installed CANN's HCCL lacks a function this MindSpore calls", "Install the CANN version this MindSpore "
     "release requires."),
    ("AISW_MindSpore_DP_21", "rank table IP invalid", "launch-args",
     (("The ranktable or rank is invalid", "The ip in ranktable is not a valid ip address"),),
     "the rank table holds an IP address that is not valid", _RANKTABLE),
    ("AISW_MindSpore_msrun_01", "scheduler port invalid", "launch-args",
     (("The port number of meta server node", "is invalid"),),
     "msrun's scheduler (meta server) port is not a valid port", "Give msrun --master_port (MS_SCHED_PORT) a free "
     "port between 1024 and 65535."),
    ("AISW_MindSpore_msrun_04", "cluster socket cannot bind", "port-in-use", (("Failed to call bind",),),
     "MindSpore's cluster socket could not bind its address (the port is taken, or the address is not this host's)",
     "Choose a free --master_port / MS_SCHED_PORT and the host's own address."),
    ("AISW_MindSpore_msrun_07", "collective communication not initialised", "launch-args",
     (("Distributed Communication has not been inited",),),
     "the script used MindSpore's communication before init() (or was started without msrun / its environment)",
     "Start the job with msrun (or mpirun / the rank table) and call mindspore.communication.init() first."),
    ("AISW_MindSpore_msrun_08", "another process occupies the NPU", "hccl-stale-process",
     (("may be other processes occupying this card",),), "another process holds the NPU",
     "Kill the previous job's processes on this host (`npu-smi info`), then relaunch."),
    ("AISW_MindSpore_msrun_09", "scheduler unreachable", "master-unreachable",
     (("Failed to connect to the meta server node url",),),
     "a MindSpore worker cannot reach the scheduler (meta server) at the address and port it was given",
     "Check --master_addr / MS_SCHED_HOST (reachable from every node) and the port; check the firewall."),
    ("AISW_MindSpore_msrun_10", "workers spawned differ from the expected", "launch-args",
     (("Spawned worker process number is not as expected",),),
     "msrun started another number of workers than --local_worker_num asks", "Check --worker_num / "
     "--local_worker_num against the NPUs of each node."),
    ("AISW_MindSpore_msrun_13", "node registered twice", "launch-args",
     (("Failed to register the compute graph node", "Repeated registration node"),),
     "two processes registered with the scheduler under one node id (a rank launched twice, a stale process)",
     "Give every process its own rank / node id; kill stale workers of a previous run."),
    ("AISW_MindSpore_msrun_23", "device count not supported", "launch-args",
     (("devNum must be divisible by 8", "or equal to 1"),),
     "the job's NPU count per group is one HCCL cannot form", "Use 1, 2, 4 or a multiple of 8 NPUs."),
    ("AISW_MindSpore_Backend_Runtime_06", "device memory below the request", "oom",
     (("Memory not enough", "Current free memory size[", "is smaller than required size["),),
     "the NPU has less free memory than the graph asks for", "Lower the batch size or max_device_memory's share of "
     "other holders; check `npu-smi info`."),
    # --- MindIE and vLLM-Ascend ---------------------------------------------------------------------------------------
    ("AISW_MindIE_Server_ModelBackend_02", "shared memory too small", "shm", (("MIE04E120208",),),
     "MindIE's model backend has not enough shared memory", "Give the container a larger /dev/shm (--shm-size)."),
    ("AISW_MindIE_LLM_TEXTGENERATOR_19", "PD link between devices failed", "hccl-link",
     (("MIE05E01001B",), ("Link from local_device_ip", "to remote_device_ip", "error")),
     "MindIE could not link a prefill device to a decode device (their device NICs)", _HCCN),
    ("AISW_VLLM_ASCEND_KV_POOL_MOONCAKE_004", "HCCL_BUFFSIZE too small", "launch-args",
     (("HCCL_BUFFSIZE should be positive",),),
     "HCCL_BUFFSIZE is too small for the KV pool's transfers", "Raise HCCL_BUFFSIZE (MB) to what the deployment "
     "guide asks."),
)


def _pattern(sets: tuple[tuple[str, ...], ...]) -> str:
    return "|".join(".*?".join(re.escape(fragment) for fragment in fragments) for fragments in sets)


_COMPONENTS = (("MindSpore", "MindSpore"), ("HCC", "HCCL"), ("ERRMSG", "HCCL"), ("CANN_Runtime", "CANN runtime"),
               ("PyTorch", "torch_npu"), ("MindIE", "MindIE"))


def _component(fault: str) -> str:
    """The component a fault id names (``AISW_CANN_HCCL_001`` -> ``HCCL``)."""
    return next((name for key, name in _COMPONENTS if key in fault), "vLLM-Ascend")


ASCEND_FAMILIES: tuple[FamilyRow, ...] = tuple(
    (f"{_component(fault)}: {name} ({fault})", _pattern(sets), category, True, meaning, fix, {})
    for fault, name, category, sets, meaning, fix in _ROWS
)
