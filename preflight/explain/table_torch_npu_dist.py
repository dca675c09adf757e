"""torch_npu's process group (``ProcessGroupHCCL``) errors as a code table, keyed by normalized template
(``table_templates``): what torch_npu raises before or around an HCCL call, the HCCL counterpart of c10d's
ProcessGroupNCCL rows (``table_c10d``).

Source: Ascend/pytorch ``torch_npu/csrc/distributed/ProcessGroupHCCL.cpp`` (its ``TORCH_CHECK``s and thrown
errors), read at 9e73e70 (2026-08-21, torch_npu for torch 2.x). A collective handed tensors it cannot take (not
NPU, not dense, sizes that do not divide, a reduce op or dtype HCCL lacks) is the job's ``app-fault``; tensors on
the wrong or on several devices per process are ``device-mapping``; a communicator option of the wrong type, a
missing MASTER_ADDR or an unusable dump path is ``launch-args``; a CANN too old for an option is
``version-mismatch``; rank 0's hcclUniqueId never arriving through the store only reports rank 0's failure.

>>> [d.code.category for d in TABLE.decode("RuntimeError: Tensors must be NPU and dense")]
['app-fault']
>>> [d.code.category for d in TABLE.decode("RuntimeError: ProcessGroupHCCL support one device per process only")]
['device-mapping']
"""

from __future__ import annotations

from preflight.explain.table_templates import Row, build

SOURCE = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/"
          "distributed/ProcessGroupHCCL.cpp")
VERSION = "torch_npu 9e73e70 (2026-08-21)"

_TENSORS = ("The collective was called with tensors it cannot take: make every tensor an NPU tensor, contiguous "
            "and dense (`.npu().contiguous()`), of the sizes and dtype the collective needs (the same on every "
            "rank; a first dimension that divides by the group size where it is split), with a reduce op HCCL has.")
_DEVICE = ("Give each process one NPU: call torch.npu.set_device(LOCAL_RANK) before init_process_group, launch one "
           "process per device (--nproc-per-node), and make ASCEND_RT_VISIBLE_DEVICES list the node's devices.")
_OPTION = ("Fix the process group option or environment the message names (init_process_group's pg_options / "
           "hccl_config value types, MASTER_ADDR set on every node, a dump path that exists and is writable).")
_PEER = ("Rank 0 never published its hcclUniqueId: read rank 0's log for its first error (a crash, an OOM kill, "
         "a wrong device), then check MASTER_ADDR:MASTER_PORT is reachable from this node.")

ROWS: tuple[Row, ...] = (
    Row("tensor not NPU / dense", "app-fault", "A collective got a tensor that is not a dense NPU tensor.",
        _TENSORS, ("Tensors must be NPU and dense", "Tensors must be non-overlapping and dense"), checks=()),
    Row("tensors of different size / type", "app-fault",
        "The tensors of one collective call differ in size, strides or dtype.", _TENSORS,
        ("Tensors must have identical size", "Tensors must have identical strides", "Tensors must have identical "
         "type", "Tensors are not equal in size or data type", "input tensor must be the same type as the output "
         "tensor.", "output tensor must have the same type as input tensor", "output tensor must have the same "
         "numel as input tensor"), checks=()),
    Row("sizes do not fit the group", "app-fault",
        "A gather / scatter / all-to-all got tensors whose sizes do not fit the group size.", _TENSORS,
        ("Tensor's dim 0 does not divide equally across group size", "input tensor must be the same size as "
         "output size times world size", "output tensor size must be equal to world_size times input tensor size",
         "Split sizes doesn't match total dim 0 size", "Number of tensor splits not equal to group size",
         "Tensor list input to scatter/gather must match number of collective participants",
         "the size of output_tensors and worldsize must equal", "the size of input_tensors and output_tensors must "
         "equal", "Tensor list operands to scatter/gather must have the same length", "Tensor list operands to "
         "reduce_scatter must have the same length", "All tensor operands to scatter/gather must have the same "
         "size", "Scalar tensors (0-dim tensors) are not supported in alltoall."), checks=()),
    Row("operation HCCL lacks", "app-fault",
        "The collective or reduce op is not supported by ProcessGroupHCCL (gather / recv in some versions, "
        "PREMUL_SUM, a dtype PreMulSum cannot take).", _TENSORS,
        ("Cannot use ReduceOp.{} with HCCL", "ProcessGroupHCCL does not support {}", "PreMulSum Data type must be "
         "half, float, bfloat16 or double", "For a tensor of internal format, it's storage_offset must be 0"),
        checks=()),
    Row("several devices per process", "device-mapping",
        "The tensors of one call are on several NPUs, or on another NPU than the process group's: torch_npu "
        "takes one device per process.", _DEVICE,
        ("ProcessGroupHCCL support one device per process only", "Tensors must be on distinct NPU devices",
         "Tensors must be on same NPU device", "tensors must be on the same device", "Corresponding input/output "
         "tensors to scatter/gather must all reside on the same device", "Corresponding input/output tensors to "
         "reduce_scatter must all reside on the same device", "Tensor list mustn't be larger than the number of "
         "available NPUs", "Expecting same device across coalesced P2P operations."),
        checks=("npu.count", "npu.env")),
    Row("NPU devices not known", "device-mapping",
        "The process group could not tell which NPU to build its communicator on (no device set for the rank, an "
        "invalid device number).", _DEVICE,
        ("Not able to create/get the HCCL Communicator since the NPU devices are not known", "Invalid device "
         "number"), checks=("npu.count", "npu.env")),
    Row("MASTER_ADDR not set", "launch-args",
        "torch_npu needs the master's IP address from the environment (MASTER_ADDR) and found none.", _OPTION,
        ("Unable to fetch master IP addr, environment variable is null.",), checks=()),
    Row("process group option of the wrong type", "launch-args",
        "An HCCL option of the process group (pg_options.hccl_config) has the wrong type or length.", _OPTION,
        ("Value type of {} should be {}.", "Value type of hccl_exec_timeout exceeds INT32_MAX(2147483647).",
         "The length of the name must be between 1 and {}, Invalid hcclCommName:{}", "Window memory register "
         "unsupported set HCCL_ZERO_COPY=1"), checks=()),
    Row("dump path unusable", "launch-args",
        "A path torch_npu writes its HCCL status or performance dump to cannot be created or opened.", _OPTION,
        ("Failed to prepare HCCL status save directory. Please verify the path is accessible and writable.",
         "Create file failed. Please check whether input file is valid.", "Open shared directory failed. Please "
         "check whether perfdumppath is valid.", "perfDumpPath is not realpath."), checks=()),
    Row("CANN too old for an option", "version-mismatch",
        "The installed CANN's HCCL lacks an option torch_npu passes (the communicator name).",
        "Install the CANN version this torch_npu's release notes name, on every node.",
        ("The current version of CANN does not support the hcclCommName:{}",), checks=("versions.cann",)),
    Row("hcclUniqueId not received", "store-timeout",
        "This rank waited in the store for rank 0's hcclUniqueId and did not get it: rank 0 failed or hangs "
        "before creating its communicator, or the store is not reachable.", _PEER,
        ("Unknown exception while [{}] is setting up HCCL communicator and retrieving hcclUniqueId from [0] via "
         "c10d key-value store by key {}. This may indicate a possible application crash on rank 0 or a network "
         "set up issue.",), root_cause=False),
    Row("communicator creation failed", "unknown",
        "torch_npu could not create or get the HCCL communicator; the HCCL error printed before it names why.",
        "Read the HCCL function error / EIxxxx lines above it and the plog (~/ascend/log).",
        ("create/get the HCCL Communicator failed for comm type: {}",), root_cause=False, checks=()),
)

TABLE = build("torch_npu_dist", SOURCE, VERSION, ROWS)
