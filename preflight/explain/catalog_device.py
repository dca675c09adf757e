"""Known failure signatures, part eight (issue 38, round 4): the job's own device code, memory and installed
versions in the vendors' generic wordings, whichever accelerator prints them.

- an operator that refuses the call because CANN is too old for it: ``version-mismatch``;
- an NPU core exception as the CANN runtime and torch_npu print it, whether or not a code is on the line (the
  runtime's ``Kernel task happen error, retCode=0x26, [aicore exception]``, the device error report ``there is an
  aivec error exception``, ``Aicore kernel execute failed``, torch_npu's ``The vector core execution is
  abnormal``): ``app-fault``, like CUDA's illegal address / device-side assert (the ``cuda_error`` table);
- a Triton kernel that asks for more shared memory / registers than the GPU has: ``app-fault`` (the kernel's
  configuration, not /dev/shm, although the words are ``shared memory``);
- host memory: C++'s ``std::bad_alloc`` (``oom``, like Python's ``MemoryError`` and the caching allocators);
- vLLM's KV cache too small for the model's length (``oom``, beside ``vllm.device_memory_short``);
- a peer reached on Docker's default bridge (172.17.0.0/16) or a link-local address: ``wrong-interface``;
- DeepSpeed's batch-size assertion (the world size the launch gave disagrees with the config): ``launch-args``;
- argparse rejecting the launch command's arguments: ``launch-args``;
- round 5: an operator no CANN operator store holds for the job's dtype/format/shape, a collective handed a dtype
  its backend does not reduce or a non-contiguous tensor: ``app-fault``; torch_npu's caching allocator failing to
  get a block from the NPU: ``oom``.
- round 6: no kernel binary of the installed CANN kernels package for an operator (``Cannot find binary for op``):
  ``version-mismatch``; the OFI plugin failing to register GPU memory with an EFA Libfabric too old for NCCL 2.19+:
  ``version-mismatch``.
- round 23: an Ascend C kernel's own assertion on the device (``[ASSERT] [CANN_VERSION : ...]``): ``app-fault``;
  oneCCL failing to open a peer GPU's memory over Level Zero IPC: ``p2p``.
- round 22: Triton-Ascend failing to compile the job's kernel for the NPU (its Unified Buffer overflowing, a grid
  of more than 65535 cores, a failed compiler pass): ``app-fault``, like Triton's out of resources on a GPU.

Each entry's ``source`` is the public thread its excerpt comes from (tests/fixtures/explain/excerpts.json); the
wordings are those of the vendors' sources in ``WORDING_SOURCES``.

>>> [s.id for s in DEVICE if s.category == "app-fault"]  # doctest: +NORMALIZE_WHITESPACE
['cann.op_unsupported', 'collective.unsupported_dtype', 'c10d.tensors_not_contiguous', 'cann.core_exception',
 'triton.out_of_resources', 'triton_ascend.compile_failed', 'ascendc.kernel_assert']
"""

from __future__ import annotations

from preflight.explain.signature import Signature

_RUNTIME = "https://github.com/hicann/runtime/blob/5dcf3b70b499eddb6c9a908dbd027bde32abc8af/"
WORDING_SOURCES: dict[str, str] = {
    # RT_LOG "Kernel task happen error, retCode=%#x, [%s]." with GetTsErrCodeDesc (aicore exception, vector core
    # exception, aicore trap...), STREAM_REPORT_ERR_MSG "AICORE/AIV Kernel task happen error", the device error
    # report "there is an aicore error exception" / "an exception of aivec error" (device_error_core_proc.cc)
    "cann.core_exception": _RUNTIME + "src/runtime/core/src/task/davinci_kernel_task.cc",
    # MLIRCompilationError's "[ERROR][Triton][BEG]" banner (python/triton/compiler/errors.py); the two "typical error
    # messages" of docs/en/migration_guide/migrate_from_gpu.md (ub overflow, coreDim)
    "triton_ascend.compile_failed": "https://github.com/Ascend/triton-ascend/blob/eeb030e7bb71f8a251c5d378dbe2977e8b8"
                                    "dbb83/python/triton/compiler/errors.py",
    # torch_npu's device-error notice, printed under ERR00100 for ACL_ERROR_RT_AICORE/VECTOR_CORE_EXCEPTION
    "cann.core_exception.torch_npu": "https://github.com/Ascend/pytorch/blob/master/torch_npu/csrc/core/npu/"
                                     "NPUException.cpp",
    # CompiledKernel._init_handles: raise OutOfResources(self.metadata.shared, max_shared, "shared memory");
    # OutOfResources.__init__: "out of resource: {name}, Required: {required}, Hardware limit: {limit}"
    "triton.out_of_resources": "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/errors.py",
    # libstdc++'s std::bad_alloc::what() and __gnu_cxx::__verbose_terminate_handler
    "host.bad_alloc": "https://github.com/gcc-mirror/gcc/blob/master/libstdc%2B%2B-v3/libsupc%2B%2B/vterminate.cc",
    # vllm/worker/worker.py raise_if_cache_size_invalid (v0); vllm/v1/core/kv_cache_utils.py
    # check_enough_kv_cache_memory (v1)
    "vllm.kv_cache_too_small": "https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/kv_cache_utils.py",
    # Docker's default bridge network (docker0, 172.17.0.1/16); RFC 3927 link-local 169.254.0.0/16
    "net.container_bridge_peer": "https://docs.docker.com/engine/network/drivers/bridge/",
    # op-plugin's checks that name the CANN version: TORCH_CHECK(check_aclnn_kernel_available("aclnnXxx"),
    # "Current CANN version do not support this api. Please try to update the version of CANN." +
    # OPS_ERROR(ErrCode::PARAM)) in op_plugin/ops/opapi/*KernelNpuOpApi.cpp; npu_grouped_matmul's FRACTAL_NZ check
    "cann.version_unsupported": "https://github.com/Ascend/op-plugin/tree/master/op_plugin/ops/opapi",
    # round 5 (the spent frozen3 set, folded): GE's engine manager when no operator store holds the op for its
    # dtype/format/shape (dnnengine_manager.cc GetDNNEngineName: "Op type %s of ops kernel %s is unsupported, reason:
    # %s"; the TBE store's "The type of this op is not found in op store" / "... is not supported in op store")
    "cann.op_unsupported": "https://github.com/Ascend/pytorch/blob/01912265501ba3baf74f20939f8a964dec4cb8b9/docs/en/"
                           "PyTorch%20Network%20Model%20Porting%20and%20Training%20Guide/PyTorch%20Network%20Model%20"
                           "Porting%20and%20Training%20Guide.md",
    # torch_npu's NPUCachingAllocator::malloc: C10_NPU_CHECK on the aclrtMalloc of a new block
    "torch_npu.allocator_malloc": "https://github.com/Ascend/pytorch/blob/master/torch_npu/csrc/core/npu/"
                                  "NPUCachingAllocator.cpp",
    # torch's ProcessGroupNCCL getNcclDataType ("Input tensor data type is not supported for NCCL process group"),
    # torch_npu's ProcessGroupHCCL ("HCCL AllReduce & Reduce: Unsupported data type at::kByte/at::kBool"),
    # c10d's check_gpu_single_tensor / assertDense ("Tensors must be contiguous")
    "collective.unsupported_dtype": "https://github.com/Ascend/pytorch/blob/master/torch_npu/csrc/distributed/"
                                    "ProcessGroupHCCL.cpp",
    "c10d.tensors_not_contiguous": "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/Utils.hpp",
    # DeepSpeedConfig._batch_assertion
    "deepspeed.batch_size_mismatch": "https://github.com/deepspeedai/DeepSpeed/blob/"
                                     "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/config.py",
    # ArgumentParser.error: "%(prog)s: error: %(message)s"; _parse_known_args: "the following arguments are
    # required: %s"; _get_values: "argument %(argument_name)s: invalid %(type)s value: %(value)r"
    "launch.argparse_error": "https://github.com/python/cpython/blob/3.12/Lib/argparse.py",
    # round 6 (the spent frozen4 set, folded): opbase's aclnn engine when no kernel binary of the installed OPP
    # matches the op's inputs (OpKernel::Launch / GetWorkspace: "Cannot find binary for op %s."; "Op %s does not has
    # any binary." with ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND), and torch_npu's older "Cannot find bin of op"
    "cann.op_binary_missing": "https://github.com/hicann/opbase/blob/aa3cd74b7f6d772acd64ff48292a7e65a9bc8142/src/"
                              "nnopbase/composite_op/aclnn_engine/op_kernel.h",
    # aws-ofi-nccl's reg_mr: "Unable to register memory (type = %d) for device %d. RC: %d, Error: %s" (type 2:
    # NCCL_PTR_CUDA); libfabric's hmem_cuda.c "Failed to perform cuPointerSetAttribute" and the EFA provider's
    # efa_mr_hmem_setup "unable to set memops for cuda ptr" - the Libfabric of EFA installers before 1.29.1 with
    # NCCL 2.19+ (aws-ofi-nccl's release notes: FI_EFA_SET_CUDA_SYNC_MEMOPS=0 or a newer EFA installer)
    "ofi.cuda_mr_register": "https://github.com/aws/aws-ofi-nccl/blob/master/src/nccl_ofi_net.cpp",
}

_CORE = r"(?:fftsplus )?(?:aicore|ai core|aicpu|ai cpu|aivec|aivector|aiv|aic|vector core|cube core)"

DEVICE: tuple[Signature, ...] = (
    Signature(
        "cann.op_unsupported", "app-fault",
        (r"Op type \S+ of ops kernel \S+ is unsupported", r"The type of this op is not found in op store",
         r"The dtype, format or shape of input in op desc is not supported in op store"),
        "No operator store of CANN holds this operator for the inputs the job passes (its dtype, format or shape): "
        "the graph engine cannot assign it to an engine. The model (or its port) calls an op with inputs the NPU's "
        "operator library does not take - typically int64 or float64 where the op takes int32 / float16 / float32.",
        "Cast the inputs to a dtype the operator supports (the operator's spec in the CANN operator list), or run "
        "it on the CPU; update CANN if a newer operator library adds it. No host check verifies it.",
        (), "https://github.com/Ascend/pytorch/blob/01912265501ba3baf74f20939f8a964dec4cb8b9/docs/en/PyTorch%20Network"
            "%20Model%20Porting%20and%20Training%20Guide/PyTorch%20Network%20Model%20Porting%20and%20Training%20Guide"
            ".md#what-do-i-do-if-the-error-message-op-type-sigmoidcrossentropywithlogitsv2-of-ops-kernel-aicoreenginemd",
        weight=70),
    Signature(
        "collective.unsupported_dtype", "app-fault",
        (r"(?:HCCL|NCCL|Gloo)\b[^\n]{0,60}\bUnsupported data ?type",
         r"data type is not supported for (?:NCCL|HCCL) process group",
         r"Unsupported data type for (?:NCCL|HCCL|Gloo)"),
        "The job passed a collective a tensor of a dtype its backend does not reduce (bool / uint8 on HCCL, "
        "some types on NCCL or gloo): the collective call itself is rejected, not the cluster.",
        "Cast the tensor before the collective (bool/byte to int32, then back), or use a backend that takes it.",
        (), "https://github.com/wangshuai09/Notebook/blob/1dde65b641956f59535106ab12f2e63d8ccfde94/QA/Error.md",
        weight=72),
    Signature(
        "c10d.tensors_not_contiguous", "app-fault",
        (r"\b(?:Tensors|Tensor|input tensor) must be (?:contiguous|dense)\b",),
        "A collective was handed a non-contiguous tensor (a transposed view, a slice with strides), which the "
        "process group rejects before any communication.",
        "Call .contiguous() on the tensor before the collective.",
        (), "https://github.com/Ascend/pytorch/blob/356e12daa42681673f838fd710758fb63705035f/docs/zh/"
            "troubleshooting/communication_operator_transfers_Non-contiguous_tensors.md", weight=72),
    Signature(
        "torch_npu.allocator_malloc", "oom",
        (r"malloc:\S*NPUCachingAllocator\S*:\d+ NPU error",),
        "torch_npu's caching allocator could not get a new block of device memory from the NPU (aclrtMalloc "
        "failed inside NPUCachingAllocator::malloc): the model and its activations need more memory than is free.",
        "Lower the batch size or sequence length, free what other processes hold on the device (`npu-smi info`), "
        "or shard the model further.",
        ("npu.processes",), "https://github.com/Ascend/pytorch/blob/01912265501ba3baf74f20939f8a964dec4cb8b9/docs/en/"
        "PyTorch%20Network%20Model%20Porting%20and%20Training%20Guide/PyTorch%20Network%20Model%20Porting%20and"
        "%20Training%20Guide.md#what-do-i-do-if-the-error-message-runtimeerror-malloc-pytorch-c10-npu-"
        "npucachingallocator-cpp-293-npmd", weight=70),
    Signature(
        "cann.core_exception", "app-fault",
        (rf"Kernel task happen error, retCode=0x[0-9a-fA-F]+, \[{_CORE} (?:exception|trap\w*|timeout)\]",
         r"(?:AICORE|AIV|AIC) Kernel (?:task )?happen error, retCode=",
         rf"there is an? (?:exception of )?{_CORE} error",
         r"(?:Aicore|AIV|Aivec|aicpu) kernel execute failed, device_id=",
         r"The (?:vector core|aicore|AI Core|cube core) execution is abnormal",
         # round 25: the AICPU report without the device id ("Aicpu kernel execute failed, soName=..."), the STARS
         # report ("an exception occurred during AICPU execution") and the device's extend info ("errorStr: The VEC
         # instruction parameter is invalid.")
         r"\bAicpu kernel execute failed,\s*soName=", r"\ban exception occurred during AICPU execution\b",
         r"\berrorStr: The (?:VEC|CUBE|SCALAR|MTE\d?|FIXP|SU|BIU|CCU)\w* instruction\b",
         rf"reason=\[{_CORE} exception\]"),
        "An NPU compute core (AI Core, or its vector / cube unit) raised an exception while running one of the "
        "job's kernels (an operator, a fused or custom kernel, a Triton-Ascend / inductor kernel): an address out "
        "of bounds, an unaligned access, an illegal instruction, or inputs the operator does not handle - CANN's "
        "runtime reports it on the device, torch_npu as 507015 / 507035. The kernel is named in the report "
        "(fault kernel_name).",
        "Rerun with ASCEND_LAUNCH_BLOCKING=1 to see the failing operator; check its input shapes, dtypes and "
        "formats; update CANN / torch_npu / the kernel package if the operator is theirs, or run the step eager. "
        "No host check verifies it.",
        (), "https://github.com/hw-native-sys/PTOAS/pull/426", weight=66),
    Signature(
        "triton.out_of_resources", "app-fault",
        (r"OutOfResources: out of resource: (?:shared memory|registers|threads)",
         r"out of resource: shared memory, ?Required: ?\d+,? ?Hardware limit"),
        "A Triton kernel (the job's, or one torch.compile / a kernel library generated) needs more on-chip "
        "resources than this GPU has - shared memory per block, registers or threads - for its block sizes and "
        "num_stages; older or consumer GPUs have less (e.g. 99 KiB of shared memory on sm_86, 227 KiB on H100). "
        "Not /dev/shm.",
        "Lower the kernel's block sizes or num_stages (or pick the library's config for this GPU), use another "
        "backend for that op, or run on a GPU with more shared memory per block.",
        (), "https://github.com/state-spaces/mamba/issues/387", weight=74),
    Signature(
        "triton_ascend.compile_failed", "app-fault",
        (r"\bub overflow, requires \d+ bits while \d+ bits available",
         r"\bcoreDim=\d+ can'?t be greater than UINT16_MAX",
         r"\bMLIRCompilationError\b", r"\[ERROR\]\[Triton\]\[BEG\]",
         # round 23: the BiSheng compiler it runs failing (CalledProcessError of bishengir-compile / npuc)
         r"CalledProcessError: Command '\['[^']*/(?:bishengir-compile|npuc)'"),
        "Triton-Ascend (the NPU's Triton compiler) could not build one of the job's Triton kernels for the NPU: "
        "its blocks need more on-chip Unified Buffer than a vector core has (`ub overflow`), its grid asks for "
        "more than 65535 cores (`coreDim`), or a compiler pass failed on the kernel (MLIRCompilationError names "
        "the stage). A kernel written or tuned for GPUs often does.",
        "Lower the kernel's BLOCK sizes (split a block into sub-blocks in a loop), keep the grid within the "
        "physical core count (TRITON_ALL_BLOCKS_PARALLEL=1), or run that op with the eager implementation; "
        "TRITON_DEBUG=1 dumps the failing pass.",
        (), "https://github.com/Ascend/triton-ascend/blob/eeb030e7bb71f8a251c5d378dbe2977e8b8dbb83/docs/en/"
            "programming_guide.md#how-do-i-avoid-ub-overflow-on-the-npu", weight=72,
        # round 38: a compiler that does not know the chip is a toolchain older than the device (a versions family)
        unless=(r"\bCannot find option named\b",)),
    Signature(
        "host.bad_alloc", "oom",
        (r"terminate called after throwing an instance of 'std::bad_alloc'",
         r"what\(\):\s+std::bad_alloc", r"MemoryError: std::bad_alloc"),
        "A C++ allocation on the host failed (std::bad_alloc): the process ran out of host memory or address "
        "space - too many ranks or data-loader workers per node, a dataset or checkpoint loaded whole into RAM, "
        "a container memory limit - or it asked for an absurd size read from corrupt data.",
        "Check the node's free memory and the container's limit while the job runs (`free -g`, the cgroup's "
        "memory.max); fewer processes or workers per node, smaller buffers; check the size the failing step "
        "asks for.",
        ("os.memory",), "https://github.com/Haiyang-W/DSVT/issues/14", weight=60),
    Signature(
        "vllm.kv_cache_too_small", "oom",
        (r"max seq len \(\d+\) is larger than the maximum number of tokens that can be stored in KV cache",
         r"KV cache is needed, which is larger than the available KV cache memory",
         # vLLM's worker log after profiling: the weights alone took more than the budget
         r"Available KV cache memory: -\d"),
        "vLLM's KV cache, what is left of the device memory after the weights within --gpu-memory-utilization, "
        "cannot hold one request of the model's maximum length (max_model_len).",
        "Raise --gpu-memory-utilization, lower --max-model-len, free the device (`nvidia-smi` / `npu-smi info`) "
        "or spread the model over more devices (tensor parallelism).",
        ("gpu.devices.processes", "npu.processes"), "https://github.com/vllm-project/vllm/issues/10517",
        weight=82),
    Signature(
        "net.container_bridge_peer", "wrong-interface",
        (r"(?:[Cc]onnect(?:ion)?(?:\(\))? to|from) \[?(?:172\.17|169\.254)\.\d{1,3}\.\d{1,3}\]?(?:<\d+>|:\d+)? "
         r"?failed",),
        "A rank tried to reach a peer at an address of Docker's default bridge (172.17.0.0/16) or a link-local "
        "address (169.254.0.0/16): the peer advertised its docker0 / container-internal / link-local address, "
        "which other nodes cannot reach. The communication library picked the wrong interface.",
        "Select the routable interface on every node (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, HCCL_SOCKET_IFNAME, "
        "Open MPI's btl_tcp_if_include), or run the containers with --network host.",
        ("net.interface",), "https://github.com/horovod/horovod/issues/310", weight=78),
    Signature(
        "cann.version_unsupported", "version-mismatch",
        (r"current CANN version (?:do|does) not support", r"Please (?:try to )?(?:update|upgrade) the version of CANN"),
        "An operator refused the call because the installed CANN is too old for it (a weight format such as "
        "FRACTAL_NZ, a dtype or an operator mode that a newer CANN added): torch_npu / the caller (vllm-ascend, "
        "MindIE) is newer than CANN. The ERR01001 torch_npu prints with it is this refusal.",
        "Install the CANN version the caller's install guide names for this torch_npu (toolkit and kernels "
        "packages), on every node, or use the caller's release made for the installed CANN.",
        ("versions.cann", "versions.torch_npu_compat"), "https://github.com/vllm-project/vllm-ascend/issues/3378",
        weight=80),
    Signature(
        "deepspeed.batch_size_mismatch", "launch-args",
        (r"Check batch related parameters\. ?train_batch_size is not equal to micro_batch_per_gpu \* "
         r"gradient_acc_step \* world_size",),
        "DeepSpeed's batch sizes disagree with the launch: train_batch_size is not micro batch x gradient "
        "accumulation x world size - usually the world size the launcher gave (GPUs, nodes, ranks per node) is "
        "not the one the config was written for.",
        "Set train_batch_size (or leave it 'auto') to micro_batch x grad_acc x the real world size, or launch "
        "with the number of ranks the config expects.",
        (), "https://github.com/deepspeedai/DeepSpeed/issues/6914", weight=76),
    Signature(
        "launch.argparse_error", "launch-args",
        (r": error: the following arguments are required: \S",
         r": error: argument [-\w/]+: invalid \w+ value: "),
        "The launch command's arguments were rejected (argparse): a required argument is missing or a value has "
        "the wrong type - in the launcher (torchrun, deepspeed, accelerate) or in the training script it starts.",
        "Give every required argument with a valid value; compare the command with the program's `--help`.",
        (), "https://github.com/pytorch/accimage/issues/39", weight=60),
    Signature(
        "cann.op_binary_missing", "version-mismatch",
        (r"Cannot find bin(?:ary)? (?:of|for) op \S", r"\bOp \S+ does not ha(?:s|ve) any binary"),
        "The operator library found no compiled kernel binary for this operator and these inputs: the CANN "
        "kernels (OPP) package for this SoC is not installed, or is of another version than the toolkit, so the "
        "binaries the aclnn call looks for are missing. The EZ9999 / ERR01100 beside it only report this.",
        "Install the CANN kernels package (Ascend-cann-kernels-<soc>) of the same version as the toolkit on every "
        "node and source set_env.sh; if it is installed, the operator may not support these dtypes on this SoC.",
        ("versions.cann",), "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/docs/zh/"
                            "user_guide/troubleshooting/troubleshooting_cases/operator_called_error.md", weight=74),
    Signature(
        "ofi.cuda_mr_register", "version-mismatch",
        (r"NET/OFI Unable to register memory \(type = 2\) for device \d+\. RC: -22\b",
         r"unable to set memops for cuda ptr", r"Failed to perform cuPointerSetAttribute: CUDA_ERROR_NOT_SUPPORTED"),
        "The OFI plugin could not register a GPU buffer with libfabric (EINVAL for CUDA memory): the Libfabric of an "
        "EFA installer before 1.29.1 cannot set CUDA sync memops the way NCCL 2.19+ asks (a newer torch brings a "
        "newer NCCL than the image's EFA software was made for).",
        "Upgrade the EFA installer (Libfabric) on the nodes / in the image to 1.29.1 or newer, or set "
        "FI_EFA_SET_CUDA_SYNC_MEMOPS=0, or use an NCCL before 2.19 with this Libfabric.",
        ("versions",), "https://github.com/aws/aws-ofi-nccl/issues/584", weight=70),
    # --- round 23 (the spent frozen13 set, folded) -----------------------------------------------------------
    Signature(
        "ascendc.kernel_assert", "app-fault",
        # an Ascend C kernel's own assert() on the device, dumped by the runtime ("DumpHead: AIV-27, CoreType=AIV,
        # ..." then "[ASSERT] [CANN_VERSION : 8.5.0][TimeStamp : 0] file.h:137: Assertion `...' ...")
        (r"\[ASSERT\] \[CANN_VERSION\s*:", r"\bDumpHead: AI[VC]-\d+, CoreType=AI[VC]\b"),
        "An assertion inside an NPU operator's Ascend C kernel failed on the device (the line names the file, "
        "line and condition, often an index out of range): the operator was handed inputs it does not accept, "
        "typically by the framework calling it (a scheduler, a custom op's wrapper).",
        "Read the assertion: the condition and values say which input was wrong (an index, a length); fix the "
        "caller or report it to the operator's owner with the shapes; ASCEND_LAUNCH_BLOCKING=1 names the op.",
        (), "https://github.com/vllm-project/vllm-ascend/issues/5445", weight=72),
    Signature(
        "oneccl.ze_ipc_open_failed", "p2p",
        # oneCCL's Level Zero calls (ze_call.cpp do_call): opening a peer GPU's memory handle (IPC) failed
        (r"\bze error at zeMemOpenIpcHandle\b",),
        "oneCCL could not open another GPU's memory through Level Zero IPC (zeMemOpenIpcHandle): GPU peer-to-peer "
        "access between these Intel GPUs is not available on this platform (PCIe topology, IOMMU / ACS, the "
        "driver), so intra-node collectives over IPC fail.",
        "Keep the collectives off the IPC path (raise CCL_SYCL_*_SIMPLE_THRESHOLD, CCL_TOPO_P2P_ACCESS=0) or fix "
        "the platform's P2P (BIOS ACS / IOMMU settings, a driver with P2P support).", (),
        "https://github.com/SergiioB/intel-arc-pro-b70-inference-cookbook/issues/8", weight=70),
)
