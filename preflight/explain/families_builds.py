"""Failure families of round 39 (from the spent nineteenth set's misses), read after round 38's
(``preflight.explain.families.FAMILIES``): builds that do not fit the node (a CANN without a function torch_npu
calls, two Triton back ends, a compiler without a toolkit's headers, a verbs provider for another kernel), GPU
memory that cannot be shared (IPC handles, IOMMU passthrough, dma-buf registration) and a vLLM placement that the
Ray cluster cannot give. Each entry is ``(name, pattern, category, root cause, meaning, fix, category by
component)``, each pattern the tool's own wording, named in the comment above it.

>>> import re
>>> [name for name, pattern, *_ in BUILD_FAMILIES
...  if re.search(pattern, "RuntimeError: Failed to find function HcclCommInitRootInfoConfig", re.IGNORECASE)]
['CANN without a function torch_npu calls']
>>> [name for name, pattern, *_ in BUILD_FAMILIES
...  if re.search(pattern, "Failed to find function 'main'. The imported GraphDef is ill-formed.", re.IGNORECASE)]
[]
"""

from __future__ import annotations

from preflight.explain.families_tools import FamilyRow

BUILD_FAMILIES: tuple[FamilyRow, ...] = (
    # torch_npu's loader of CANN's libraries (libhccl, libascendcl, libacl_op_compiler): a symbol the adapter needs
    # is not in the installed CANN ("RuntimeError: Failed to find function HcclCommInitRootInfoConfig")
    ("CANN without a function torch_npu calls", r"\bFailed to find function (?:Hccl|Hcom|acl|aclnn|aclrt|rt|hal|Ge|"
     r"Aclnn|Acl)\w*", "version-mismatch", True,
     "torch_npu looked up a function of CANN's libraries (HCCL, ACL) that the installed CANN does not have: the "
     "CANN toolkit is older (or newer) than the one this torch_npu release was built against",
     "Install the CANN version the torch_npu release notes name for this torch_npu (or the torch_npu matching the "
     "installed CANN), the same on every node, and source its set_env.sh.", {}),
    # Triton's driver selection (triton/runtime/driver.py): more than one back end reports itself active
    # ("RuntimeError: 2 active drivers ([<class '...NPUDriver'>, <class '...CudaDriver'>]). There should only be one.")
    ("two Triton back ends", r"\b[2-9] active drivers \(", "version-mismatch", True,
     "two Triton back ends consider themselves usable in one process (triton-ascend beside the NVIDIA back end, or "
     "two Triton packages installed over each other)",
     "Install one Triton distribution per environment (uninstall `triton` before `triton-ascend`, or the reverse), "
     "or disable the back end the node cannot use.", {}),
    # GCC / Clang building a C++ / CUDA extension on the node: a toolkit's header is missing ("acl.cpp:1:10: fatal
    # error: acl/acl.h: No such file or directory", "fatal error: cuda_runtime.h: No such file or directory")
    ("a build without the toolkit's headers", r"\bfatal error: [\w./+-]+\.(?:h|hpp|hh|cuh|inc): No such file or "
     r"directory", "version-mismatch", True,
     "a C++ / CUDA / CANN extension was compiled on the node without the headers of a toolkit it needs (the CANN "
     "or CUDA development files, Python's headers): the toolkit is not installed or not on the include path",
     "Install the development package of that toolkit (CANN toolkit / CUDA toolkit / python3-dev) matching the "
     "runtime, source its environment script (set_env.sh, CUDA_HOME), or install a prebuilt wheel.", {}),
    # rdma-core's provider loader (libibverbs/init.c): "libibverbs: Warning: Driver bnxt_re does not support the
    # kernel ABI of 8 (supports 1 to 1) for device ...": the container's provider is not the host kernel's release
    ("verbs provider for another kernel", r"\bDriver \S+ does not support the kernel ABI of\b|\blibibverbs: Warning: "
     r"Driver \S+ does not support the kernel ABI\b", "rdma", True,
     "the user-space RDMA provider (libmlx5, libbnxt_re, libionic in the container or image) does not match the "
     "RDMA kernel driver of the host, so libibverbs skips every device and the job sees no RDMA device",
     "Use the provider library of the same release as the host's RDMA driver (mount the host's rdma-core / "
     "vendor provider into the container, or rebuild the image with it).", {}),
    # CUDA / HIP IPC handles between the ranks of one node (NCCL's / RCCL's P2P transport, custom all-reduce):
    # "NCCL WARN hipIpcGetMemHandle failed : invalid argument"
    ("GPU memory handle not shared", r"\b(?:cuda|hip)Ipc(?:Get|Open)MemHandle\b[^\n]{0,40}\bfailed\b", "p2p", True,
     "one process could not export or open another GPU's memory handle (CUDA / HIP IPC): the ranks do not share "
     "an IPC namespace (containers without --ipc=host), the IOMMU blocks peer access, or the memory was allocated "
     "in a way IPC cannot share (expandable segments, VMM)",
     "Run the ranks of a node in one IPC namespace (--ipc=host / hostIPC), configure the IOMMU for passthrough "
     "(iommu=pt), or disable P2P (NCCL_P2P_DISABLE=1) to confirm.", {}),
    # RCCL's init check of /proc/cmdline (src/init.cc): 'NCCL WARN Missing "iommu=pt" from kernel command line which
    # can lead to system instablity or hang!'
    ("IOMMU not in passthrough", r"\bMissing \"?iommu=pt\"?", "p2p", True,
     "the kernel runs without IOMMU passthrough (iommu=pt), which AMD GPUs need for peer-to-peer and RDMA traffic",
     "Add `amd_iommu=on iommu=pt` (or `intel_iommu=on iommu=pt`) to the kernel command line and reboot.", {}),
    # UCX / NCCL registering GPU memory through dma-buf ("UCX ERROR ibv_reg_dmabuf_mr(address=..., length=16,
    # access=0xf) failed: Invalid argument"): the NIC driver, kernel or GPU driver does not support it
    ("dma-buf registration refused", r"\bibv_reg_dmabuf_mr\b[^\n]{0,120}\bfailed\b", "rdma", True,
     "the NIC could not register GPU memory through dma-buf: the kernel, the NIC driver (OFED) or the GPU driver "
     "does not support dma-buf for this memory",
     "Update the NIC driver / kernel to one with dma-buf support, or turn it off and use peermem "
     "(NCCL_DMABUF_ENABLE=0, UCX_CUDA_COPY_DMABUF=no, UCX_TLS=^gdr_copy).", {}),
    # vLLM's Ray executor (vllm/executor/ray_utils.py): "Tensor parallel size (2) exceeds available GPUs (1). This may
    # result in Ray placement group allocation failures."
    ("more ranks than GPUs", r"\bTensor parallel size \(\d+\) exceeds available GPUs \(\d+\)", "launch-args", True,
     "the launch asks for more GPUs per engine (tensor parallel size) than the Ray cluster (or the node) has",
     "Lower --tensor-parallel-size to the GPUs the cluster has (`ray status`), add pipeline parallelism across "
     "nodes, or let the placement group spread across nodes.", {}),
    # Ray's autoscaler waiting for a request pinned to one node's IP ("Error: No available node types can fulfill
    # resource request {'node:10.0.0.1': 0.001, 'GPU': 1.0}"): vLLM's troubleshooting guide: the node has several
    # addresses and vLLM chose another one than Ray (VLLM_HOST_IP)
    ("placement pinned to an address Ray does not know", r"\bNo available node types can fulfill resource "
     r"request\b[^\n]*'node:", "wrong-interface", False,
     "the placement group asks for a node by an IP address no Ray node has: on a node with several addresses vLLM "
     "picked another address than the one Ray registered",
     "Set VLLM_HOST_IP on every node to the address Ray uses (`ray list nodes`), or start Ray with "
     "--node-ip-address set to the address vLLM picks.", {}),
)
