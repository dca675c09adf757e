"""Failure families read from the tools' own wordings (rounds 27 and 30, from the spent fifteenth and sixteenth sets'
misses), appended to
``preflight.explain.families.FAMILIES``: each entry is ``(name, pattern, category, root cause, meaning, fix,
category by component)``, and each pattern is the tool's own text (its source named in the comment above it).

>>> import re
>>> [name for name, pattern, *_ in TOOL_FAMILIES
...  if re.search(pattern, "thread 'main' panicked at 'error binding to 0.0.0.0:80", re.IGNORECASE)]
['privileged port']
>>> [name for name, pattern, *_ in TOOL_FAMILIES
...  if re.search(pattern, "INFO router listening on 0.0.0.0:80", re.IGNORECASE)]
[]
"""

from __future__ import annotations

from collections.abc import Mapping

# one family: (name, pattern, category, root cause, meaning, fix, category by component)
FamilyRow = tuple[str, str, str | None, bool, str, str, Mapping[str, str]]

_PORT_UNDER_1024 = r"(?:[1-9]\d?|[1-9]\d\d|10[01]\d|102[0-3])(?![\d.])"

TOOL_FAMILIES: tuple[FamilyRow, ...] = (
    # a server failing to bind a port under 1024 (TGI's router "error binding to 0.0.0.0:80", Go's and Python's
    # "bind: permission denied" on such a port): only root or CAP_NET_BIND_SERVICE may
    ("privileged port", r"\b(?:error|failed|unable|cannot|can'?t|could not)\b[^\n]{0,20}\b"
     r"(?:bind(?:ing)?|listen(?:ing)?)\b(?: to| on)?\s+\S*?:" + _PORT_UNDER_1024
     + r"|\bbind\b[^\n]{0,60}:" + _PORT_UNDER_1024 + r"[^\n]{0,60}\bpermission denied\b", "privileged-port", True,
     "a process could not bind a port under 1024, which only root (or CAP_NET_BIND_SERVICE) may bind",
     "Use a port above 1024 (and map it in the service / container), or grant the capability.", {}),
    # NVIDIA's NGC containers' entrypoint driver check (/opt/nvidia/entrypoint.d): "This container was built for NVIDIA
    # Driver Release 535.86 or later, but version 510.85.02 was detected and compatibility mode is UNAVAILABLE."
    ("driver older than the container", r"\bThis container was built for NVIDIA Driver Release [\d.]+ or later\b|"
     r"\bwas detected and compatibility mode is UNAVAILABLE\b", "driver", True,
     "the host's NVIDIA driver is older than the CUDA the container was built for, and no forward-compatibility "
     "package can bridge it", "Upgrade the host's driver to the release the container names (or run an older "
     "container built for the installed driver).", {}),
    # Transformer Engine's FP8 support checks (transformer_engine/pytorch/quantization.py check_fp8_support /
    # check_mxfp8_support / check_nvfp4_support; utils.py assert_dim_for_fp8_exec): a GPU without the format, or a
    # GEMM whose dimensions FP8 cannot take, is the job's choice; a CUDA / cuBLASLt too old for FP8 on Ada a version
    ("FP8 on this GPU", r"\bcompute capability [\d.]+ or higher required for (?:FP8|MXFP8|NVFP4) execution\b|"
     r"\bMXFP8 \(for all gemm layouts\) is not supported on\b|\bFP8 execution requires\b[^\n]{0,120}\bdivisible by\b",
     "app-fault", True, "the job asked for a low-precision format (FP8 / MXFP8 / NVFP4) this GPU lacks, or for FP8 "
     "GEMMs whose dimensions it cannot take", "Run that recipe on a GPU that has the format (FP8: compute "
     "capability 8.9+), or disable it for the layers whose shapes do not fit (pad them, or keep them in BF16).", {}),
    ("FP8 software too old", r"\b(?:CublasLt|Cuda) version [\d.]+(?:\.x)? or higher required for FP8\b",
     "version-mismatch", True, "the CUDA toolkit or cuBLASLt installed is too old for FP8 on this GPU",
     "Install the CUDA / cuBLAS release Transformer Engine names (12.1+ for FP8 on Ada).", {}),
    # Triton's runtime (triton/runtime/_allocation.py): a kernel that needs scratch memory (TMA descriptors) launched
    # with no allocator set, in this thread or context
    ("Triton allocator", r"\bKernel requires a runtime memory allocation, but no allocator was set\b", "app-fault",
     True, "one of the job's Triton kernels needs a runtime allocator that was not set where it was launched",
     "Call triton.set_allocator(...) in the process (and thread / context) that launches the kernel.", {}),
    # torch.cuda's lazy init replaying a queued call for a device index the process cannot see
    # (torch/cuda/__init__.py _lazy_init: "CUDA call failed lazily at initialization with error: ..."), and
    # TensorFlow's GPU list check ("'visible_device_list' listed an invalid GPU id '6' but visible device count is 1")
    ("device index beyond the visible ones", r"\bCUDA call failed lazily at initialization with error: (?:tuple "
     r"index out of range|device >= 0 && device < num_gpus)|\bvisible_device_list'? listed an invalid GPU id\b",
     "device-mapping", True, "a rank used a device index beyond the devices visible to it (CUDA_VISIBLE_DEVICES / "
     "ROCR_VISIBLE_DEVICES narrowed by the launcher, or changed after CUDA started)",
     "Use indices within the visible devices (LOCAL_RANK under torchrun; 0 when the launcher gives each rank one "
     "device), and do not change *_VISIBLE_DEVICES after CUDA initialised.", {}),
    # an MLIR operation's verifier rejecting the job's kernel IR ("error: 'pto.set_validshape' op requires ...",
    # Triton's "error: 'tt.load' op ..."; mlir/lib/IR/Operation.cpp emitOpError); an operator's own shape check
    # (op-plugin's "CrossShapeVerify failed, shape N of query must be one of the {64, 128}")
    ("kernel rejected by its compiler", r"\berror: '[a-z_]\w*\.[\w.]+' op \w|\b\w*ShapeVerify failed\b", "app-fault",
     True, "a compiler's operation verifier or an operator's shape check rejected the job's kernel or its inputs",
     "Read the operation and the constraint it names; change the kernel or the shapes it is given.", {}),
    # OpenSSH's sshd unable to chroot to its privilege-separation directory (sshd-auth.c / session.c: fatal
    # "chroot(\"%s\"): %s"): a container without CAP_SYS_CHROOT, so every login fails before authentication
    ("sshd privilege separation", r"\bchroot\(\"[^\"]*\"\): Operation not permitted\b", "ssh", True,
     "the worker's sshd cannot chroot to its privilege-separation directory (the container lacks CAP_SYS_CHROOT), "
     "so the launcher's ssh to it fails", "Give the worker container SYS_CHROOT (securityContext capabilities) or "
     "run sshd with privilege separation the container allows.", {}),
    # ncclGetErrorString's default ("unknown result code", src/init.cc): a result the loaded libnccl has no text for,
    # returned through a caller built against another NCCL release (a plugin built for the NCCL of another torch)
    ("NCCL result of another release", r"\bNCCL (?:error|failure)\b[^\n]{0,200}'unknown result code'",
     "version-mismatch", True, "an NCCL call returned a result code the loaded NCCL library has no name for: the "
     "caller was built against another NCCL release than the one loaded", "Use the NCCL release the calling "
     "library was built for (the torch / container version its docs name), on every node.", {}),
    # round 28: torch_npu's own checks at import and on its driver calls (torch_npu/__init__.py
    # _check_device_conflict: a torch built for CUDA next to torch_npu; csrc/core/npu: "maybe your hdk version is too
    # low, please upgrade it", "please upgrade the HDK(driver) or CANN package")
    ("torch for another accelerator", r"\bTwo accelerators cannot be used at the same time in PyTorch\b",
     "version-mismatch", True, "a torch built for another accelerator (CUDA) is installed next to torch_npu",
     "Install the CPU build of torch that torch_npu's release names (or set TORCH_DEVICE_BACKEND_AUTOLOAD=0 to use "
     "the other device).", {}),
    ("NPU driver too old", r"\bhdk version is too low\b|\bplease upgrade the HDK\(driver\)", "driver", True,
     "the NPU driver (HDK) is older than the feature torch_npu calls needs", "Upgrade the NPU driver and firmware "
     "to the release the CANN / torch_npu version table names.", {}),
    # sglang's assert_pkg_version ("sgl-kernel is installed with version 0.1.0, which is less than the minimum
    # required version 0.1.1"); a library's API called with the arguments of another release ("TypeError:
    # torch.is_autocast_enabled() takes no arguments (1 given)": a package written for a newer torch)
    ("below the required version", r"\b(?:less|lower|older) than the (?:minimum )?required version\b|"
     r"\bTypeError: (?:torch|torch_npu|transformers|deepspeed|megatron|apex|accelerate|vllm|triton|numpy|np)"
     r"\.[\w.]+\(\) (?:takes|got an|missing)\b", "version-mismatch", True,
     "an installed package is older (or newer) than the code calling it requires",
     "Install the versions the calling package requires (its requirements), on every node.", {}),
    # round 30 (from the spent sixteenth set's misses): a package's own module __getattr__ raising for a name the
    # caller expects (torch/__init__.py's ``raise AttributeError(f"module '{__name__}' has no attribute '{name}'")``
    # printed in the traceback: the installed package lacks it, no script shadows it); a custom-op library without
    # the op its Python side calls (torch/_ops.py: "'_OpNamespace' '_C_ascend' object has no attribute ...": built
    # against another torch or release)
    ("name missing from the installed package", r"\braise AttributeError\(f?[\"']module '?\{__name__(?:!r)?\}'? "
     r"has no attribute\b|'_OpNamespace' '\w+' object has no attribute\b", "version-mismatch", True,
     "the installed package (or its compiled op library) lacks a name the calling code expects: another release "
     "than the caller was written or built for", "Install the releases that fit together (the caller's "
     "requirements; rebuild a custom-op library against the installed torch), on every node.", {}),
    # protobuf's check of generated _pb2 code (descriptor.py: "Descriptors cannot be created directly", from 4.21 with
    # the hint "Downgrade the protobuf package to 3.20.x or lower"); setuptools' pkg_resources refusing an installed
    # distribution; a package's own guard of the Python version (llvmlite / numba setup.py: "Cannot install on Python
    # version 3.11.11; only versions >=3.6,<3.10 are supported.")
    ("protobuf of another release", r"\bDescriptors cannot (?:not )?be created directly\b|"
     r"\bDowngrade the protobuf package to\b", "version-mismatch", True,
     "the installed protobuf runtime does not fit the generated _pb2 code a package ships",
     "Pin protobuf to the release the generated code needs (3.20.x for code generated by an older protoc), or "
     "upgrade the package that ships the _pb2 files.", {}),
    ("requirement conflict", r"\b(?:Contextual)?VersionConflict\b|\bDistributionNotFound: The '[^']+' distribution "
     r"was not found\b|\bCannot install on Python version [\d.]+\b|\bonly versions? [<>=!~][^\n;]{0,30} (?:are|is) "
     r"supported\b", "version-mismatch", True,
     "an installed package (or the Python itself) is of a version another package's requirements exclude",
     "Install versions that satisfy every requirement (`pip check` lists the conflicts), on every node.", {}),
    # a server that cannot bind its (unprivileged) port: llama.cpp's server ("couldn't bind HTTP server socket,
    # hostname: 0.0.0.0, port: 40038"); a port under 1024 is the privileged-port family's
    ("server port taken", r"\b(?:couldn'?t|could not|can'?t|cannot|unable to|failed to) bind\b(?![^\n]*"
     r"(?:permission denied|cannot assign|not permitted))[^\n]{0,60}\bport[:= ]\s*[1-9]\d{3,4}\b", "port-in-use",
     True, "a server could not bind its port: another process (a previous run, another service, an outbound "
     "connection given that port) holds it", "Free the port (`ss -ltnp 'sport = :PORT'`, `lsof -i :PORT`) or give "
     "the server another one; keep service ports out of the ephemeral range (net.ipv4.ip_local_port_range).", {}),
    # torch.jit's interpreter re-raising an operator's error in a scripted function ("The following operation failed
    # in the TorchScript interpreter."); an inference runtime rejecting the model's input shape (MindX SDK's
    # MxOmModelDesc "InputTensor Shape mismatches.", "modelInputShape is 624, actualInputShape is 416")
    ("operator failed in a scripted function", r"\bThe following operation failed in the TorchScript interpreter\b|"
     r"\binput ?tensor shape mismatch(?:es)?\b|\bmodel ?input ?shape is \d+, actual ?input ?shape is \d+",
     "app-fault", True, "one of the job's operators rejected its inputs (inside a scripted function, or a model's "
     "input of another shape than it was built for)", "Read the operator's own error under it and fix the inputs "
     "the job gives it (shapes, sizes, k within range).", {}),
)

# round 33: wordings specific enough to be read before the generic families (families.FAMILIES puts them first)
SPECIFIC_FAMILIES: tuple[FamilyRow, ...] = (
    # round 33 (from the spent seventeenth set's misses): a library's own guard of the versions it works with
    # (DeepSpeed's "Transformers version 4.57.3 exceeds version 4.43.4!", torch's "Dynamo is not supported on Python
    # 3.12+"); numpy 2's removed aliases (np.product, np.float, np.bool...: "module 'numpy' has no attribute
    # 'product'"); libcuda's API missing from an older driver (``undefined symbol: cuGreenCtxDestroy``: a driver-API
    # name, cu + capital; cudart's ``cuda...`` and the math libraries' names are the versions family's)
    ("version guard of a library", r"\bversion [\d.]+\w* exceeds (?:the )?(?:maximum )?(?:supported )?version "
     r"[\d.]+|\bis not supported on Python \d+\.\d+\+?|\bmodule 'numpy' has no attribute '(?:product|float|int|bool|"
     r"object|str|long|unicode|complex|alltrue|sometrue|cumproduct|msort|round_|asfarray|find_common_type|NaN|NAN|"
     r"Inf|infty|PINF|NINF|string_|unicode_|float_|complex_|cast|mat|in1d|row_stack|trapz)'",
     "version-mismatch", True, "an installed package (or Python) is of a release another package does not support",
     "Install the releases the failing package supports (its requirements or release notes), on every node.", {}),
    # round 34 (blind to the eighteenth set): a library's import-time requirement check raised as an exception
    # (transformers' training_args.py "Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run
    # `pip install transformers[torch]`", its dependency_versions_check "tokenizers>=0.14,<0.19 is required ... but
    # found tokenizers==0.19.1"): only on an exception's own line, not pip's resolver notes
    ("requirement check of a library", r"\b(?:Import|Runtime|Value|ModuleNotFound)Error: [^\n]{0,160}\brequires? "
     r"[`'\"]?[a-z][\w.-]*(?:\[[\w,]+\])?[`'\"]? ?(?:>=|==|~=|<=|>|<) ?[`'\"]?\d", "version-mismatch", True,
     "a library checked at import that another installed package is of the release it requires, and it is not",
     "Install the release the message names (`pip install 'pkg>=X'`), on every node.", {}),
    ("driver API missing", r"\bundefined symbol: cu(?!da|blas|dnn|sparse|fft|rand|solver|tensor|pti|file|Lt)"
     r"(?-i:[A-Z])\w*", "driver", True,
     "a library calls a CUDA driver API the installed NVIDIA driver is too old to export",
     "Upgrade the NVIDIA driver to a release that has the call (the library's documented minimum), or use a "
     "build of the library for the installed driver.", {}),
    # an unbracketed IPv6 literal given as host:port (urllib's "Port could not be cast to integer value as
    # 'f3:03::e1:c6c9::d:52001'"): the rendezvous URL needs [addr]:port
    ("IPv6 address without brackets", r"\bPort could not be cast to integer value as\b[^\n]{0,40}'[0-9a-f]*:[0-9a-f]*"
     r":[0-9a-f:]*'", "address-family", True,
     "an IPv6 address was written into host:port without brackets, so the port cannot be parsed",
     "Write IPv6 addresses as [addr]:port in MASTER_ADDR-derived URLs (tcp://[fd00::1]:29500), or use a host name "
     "or the IPv4 address.", {}),
    # RDMA memory registration or provider discovery that fails for a reason other than the locked-memory limit
    # (perftest's "Couldn't allocate MR" / "failed to create mr" on a GPU buffer; libfabric's "fi_getinfo ... provider
    # verbs returned -2")
    ("RDMA registration or provider", r"\bCouldn'?t allocate MR\b(?![^\n]*error=12\b)|\bfailed to create mr\b|"
     r"\bfi_getinfo\b[^\n]{0,40}\bprovider \w+ returned -\d+", "rdma", True,
     "the RDMA device could not register a buffer (GPUDirect without nvidia-peermem / dma-buf) or the provider "
     "found no usable device", "Check `ibv_devinfo`, the provider (FI_PROVIDER, its device), and for GPU buffers "
     "nvidia-peermem or dma-buf support (perftest --use_cuda_dmabuf).", {}),
    # the job's operator rejecting its arguments: torch's dtype check of a matmul ("mat1 and mat2 must have the same
    # dtype, but got Half and BFloat16"), ATen's cuBLAS argument check ("at::cuda::blas::bgemm<...> argument ldb must
    # be positive and less than 2147483647"), MindSpore's operator validation ("For 'Maximum', input1.shape=[0] and
    # input2.shape=[8]"), an aclnn operator's workspace check ("aclnnRotaryPositionEmbeddingGetWorkspaceSize: The
    # shape of the input ... is not supported"), an ATB operation's parameter check ("RopeOperation_0 Wrong
    # rotaryCoeff: 128")
    ("operator rejected its arguments", r"\bmust have the same dtype, but got \w+ and \w+|\bat::cuda::blas::\w+"
     r"(?:<[\w:]+>)? argument \w+ must be\b|\b(?:Value|Type|Runtime)Error: For '(?-i:[A-Z])\w*', |"
     r"\baclnn\w+GetWorkspaceSize\b[^\n]{0,40}\b(?:not supported|not implemented|invalid|failed)\b|"
     r"\b(?-i:[A-Z])\w*Operation(?:_\d+)?:? (?-i:Wrong|Invalid) \w+",
     "app-fault", True, "one of the job's operators rejected the arguments the job gave it (dtype, shape, size)",
     "Read the operator's message and fix what the job passes it (cast to one dtype, split an oversized batch, a "
     "shape the operator supports).", {}),
    # round 33: HCCL's check that both ends of a send/recv (or a collective) are the same operation ("HcomRecv failed,
    # ret:4 / parameter tag, local end worldCommSendRecv_1_0, remote end worldCommSendRecv_0_1 / parameter cmdType,
    # local end 4, remote end 5"); the runtime refusing a device another process maps ("Map reg addr fail, maybe
    # others are using current device"); ray.util.collective's ranks that never met ("Unable to meet other processes
    # at the rendezvous store") (a framework's "RuntimeError: Allocate memory failed." is the out-of-memory family's)
    ("the two ends run different operations", r"\bparameter (?:tag|cmdType|count|dataType|dataSize|op|root|srcRank|"
     r"dstRank|reduceType), local end [^,\n]+, remote end\b", "collective-mismatch", True,
     "the two ranks of a link issued different operations (another tag, kind, size or order of send/recv)",
     "Make every rank issue the same collectives and send/recv pairs in the same order (tags for P2P), with the same "
     "sizes and types.", {}),
    ("device mapped by another process", r"\bmaybe others are using (?:the )?current device\b", "hccl-stale-process",
     True, "the device is held by another (often a leftover) process", "Find the holder (`npu-smi info`, `fuser -v "
     "/dev/davinciN`), end it, or give the job a free device.", {}),
    ("peers never met at the store", r"\bUnable to meet other processes at the rendezvous store\b", "rendezvous",
     True, "the ranks of a collective group never all arrived at its rendezvous store (another group name, size, "
     "or a rank that never called it)", "Create the group on every rank with the same name and world size; check "
     "that each rank reached the call.", {}),
)
