"""Failure families of round 40 (from the spent twentieth set's misses), read after round 39's
(``preflight.explain.families.FAMILIES``): a job's setup that does not fit the node before any collective runs - a
scheduler refusing the request, packages that cannot be resolved or do not match (numpy's ABI, protobuf), a linker
without a library, a library older than the chip (NCCL's shared memory, torch_npu's SoC), a launch command the
remote shell cannot parse, a node reporting a loopback or Docker bridge address as its own, and launch settings a
framework refuses. Each entry is ``(name, pattern, category, root cause, meaning, fix, category by component)``, each
pattern the tool's own wording, named in the comment above it.

>>> import re
>>> [name for name, pattern, *_ in SETUP_FAMILIES
...  if re.search(pattern, "sbatch: error: Batch job submission failed: Invalid partition name specified", re.I)]
['scheduler refused the request']
>>> [name for name, pattern, *_ in SETUP_FAMILIES
...  if re.search(pattern, "sbatch: Submitted batch job 15219016", re.IGNORECASE)]
[]
"""

from __future__ import annotations

from preflight.explain.families_tools import FamilyRow

# Slurm's refusals of a job's request (src/common/slurm_errno.c: ESLURM_INVALID_TIME_LIMIT,
# ESLURM_INVALID_PARTITION_NAME, ESLURM_INVALID_ACCOUNT, ESLURM_INVALID_QOS,
# ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, ESLURM_INVALID_GRES, ESLURM_INVALID_NODE_COUNT,
# ESLURM_TOO_MANY_REQUESTED_CPUS, ESLURM_INVALID_TASK_MEMORY, ESLURM_ACCOUNTING_POLICY, ESLURM_ACCESS_DENIED,
# ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE, ESLURM_INVALID_FEATURE, ESLURM_INVALID_LICENSES) after sbatch's / srun's
# / salloc's prefix
_SLURM_REFUSALS = (r"Requested time limit is invalid|Invalid (?:partition name|account|qos|generic resource|feature|"
                   r"license|node count|time (?:limit|value)|wckey)|Requested node configuration is not available|"
                   r"Requested partition configuration not available|Node count specification invalid|More "
                   r"processors requested than permitted|Memory required by task is not available|Job violates "
                   r"accounting/QOS policy|Access/permission denied|Requested reservation is invalid")

# a node's own address missing from the cluster's list of node addresses ("'172.17.0.1' is not in list", "IP address
# 127.0.1.1 not found in cluster IPs")
_NOT_IN_THE_LIST = r"'? (?:is )?not (?:found )?in\b"

SETUP_FAMILIES: tuple[FamilyRow, ...] = (
    ("scheduler refused the request", r"\b(?:Batch job submission failed|Unable to allocate resources|allocation "
     r"failure|Job submit/allocate failed): (?:" + _SLURM_REFUSALS + ")", "launch-args", True,
     "Slurm refused the job's request before it ran: a time limit, partition, account, QOS, node count, GPU (gres) "
     "or memory request that the cluster's partitions and limits do not allow",
     "Fix the request in the job script (`#SBATCH` lines / srun options) to what the partition allows: `sinfo -o "
     "'%P %l %D %G'` and `sacctmgr show assoc user=$USER` show the limits.", {}),
    # NCCL's check of the shared memory its kernels need against the device's (WARN("cudaArch %d ncclMaxSharedMem %d
    # exceeds device/fn maxSharedMem %zu"), then ncclSystemError): an NCCL release older than the GPU architecture
    # (NCCL 2.26.2's release notes fixed it for the RTX 50 series)
    ("NCCL older than the GPU", r"\bncclMaxSharedMem \d+ exceeds device/fn maxSharedMem \d+", "version-mismatch",
     True, "NCCL's kernels need more shared memory than this GPU gives them: the NCCL release predates the GPU "
     "architecture (a new consumer or data-centre GPU on an older NCCL)",
     "Install an NCCL release that supports this GPU (its release notes list the architectures), or a framework "
     "build that bundles one, the same on every node.", {}),
    # torch_npu's SoC version map at device start-up (AT_ERROR("Unsupported soc version: ", soc)), and MindSpore's
    # Ascend device context (the same words): the adapter release does not know the chip
    ("torch_npu without this chip", r"\bUnsupported soc version: \S+", "version-mismatch", True,
     "torch_npu does not know this NPU's SoC: the torch_npu (and CANN) release predates the chip",
     "Install the torch / torch_npu / CANN releases that support this chip (their release notes list the SoCs), "
     "the same on every node.", {}),
    # GNU ld / lld linking a C++ or CUDA extension: "/usr/bin/ld: cannot find -l:libnvshmem_host.so: No such file or
    # directory", "ld: cannot find -lcudart"
    ("a build without a library it links", r"\bld(?:\.lld|\.bfd|\.gold)?: (?:error: )?(?:cannot find|unable to find "
     r"library) -l", "version-mismatch", True,
     "an extension built on the node links a library that is not installed there or not under the name it asks "
     "for (a toolkit's development package, a wheel shipping only the versioned .so.N)",
     "Install the library's development package (or point LIBRARY_PATH / the build's library dirs at it), or "
     "install a prebuilt wheel of the extension.", {}),
    # bash on a remote node running the launcher's command (pdsh, ssh): "bash: -c: line 0: syntax error near
    # unexpected token `('" and its zh_CN catalogue text "未预期的符号“(”附近有语法错误"
    ("launch command the shell cannot parse",
     r"\bsyntax error near unexpected token\b|未预期的符号.{0,12}附近有语法错误", "launch-args", True,
     "the shell on a node could not parse the command the launcher built for it: an unquoted value (an environment "
     "variable such as SLURM_JOB_CPUS_PER_NODE=64(x2), a JSON argument) broke its syntax",
     "Quote the values the launcher exports or passes (or leave the offending variable out of what it forwards, "
     "e.g. DeepSpeed's .deepspeed_env), and rerun.", {}),
    # a node's own address checked against the cluster's list ("IP address 127.0.1.1 not found in cluster IPs",
    # "ValueError: '127.0.1.1' is not in list"): Debian's /etc/hosts maps the host name to 127.0.1.1
    ("own address is the host name's loopback", r"\b127\.0\.1\.1" + _NOT_IN_THE_LIST, "hostname-loopback",
     True, "a node took 127.0.1.1 (its host name's loopback entry in /etc/hosts) as its own address, which no "
     "other node knows it by", "Map the host name to the node's real address in /etc/hosts (or set the "
     "framework's host IP variable explicitly) on every node.", {}),
    # the same check finding Docker's bridge gateway ("ValueError: '172.17.0.1' is not in list"): `hostname -I`
    # lists docker0 first on a node with Docker installed
    ("own address is Docker's bridge", r"\b172\.17\.0\.1" + _NOT_IN_THE_LIST, "wrong-interface", True,
     "a node took Docker's bridge address (docker0, 172.17.0.1) as its own, so the cluster's list of node addresses "
     "does not contain it", "Pick the node's address on the cluster network explicitly (the framework's host IP "
     "setting, NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME), or leave docker0 out.", {}),
    # vLLM's Ray executor (vllm/v1/executor/ray_utils.py): "Ray does not allocate any GPUs on the driver node.
    # Consider adjusting the Ray placement group or running the driver on a GPU node."
    ("no GPU for the driver on its node", r"\bRay does not allocate any GPUs on the driver node\b", "device-mapping",
     True, "the placement group gave the engine's driver node no GPU bundle: vLLM needs one of its workers on the "
     "driver's node", "Run the driver on a GPU node, or pin the engine's actor to a bundle on its own node "
     "(placement_group_bundle_index).", {}),
    # vLLM's ParallelConfig check: "Unrecognized distributed executor backend tp. Supported values
    # are 'ray', 'mp' 'uni', 'external_launcher' or custom ExecutorBase subclass."
    ("unknown executor backend", r"\bUnrecognized distributed executor backend\b", "launch-args", True,
     "the launch named a distributed executor backend vLLM does not have", "Use one of the values the message "
     "lists (`mp` on one node, `ray` across nodes).", {}),
    # a resolver finding no release that satisfies the pins: uv's "No solution found when resolving dependencies"
    # / "we can conclude that your requirements are unsatisfiable", pip's "Could not find a version that satisfies
    # the requirement"
    ("no release satisfies the pins", r"\bNo solution found when resolving dependencies\b|\byour requirements are "
     r"unsatisfiable\b|\bCould not find a version that satisfies the requirement\b", "version-mismatch", True,
     "the installer found no release of a package that satisfies the pinned versions from the indexes it was given "
     "(a vendor build only on its own index, a pin for another Python / platform)",
     "Add the index that hosts the build (the vendor's --extra-index-url), or pin a release that exists for this "
     "Python and platform.", {}),
    # a compiled module built against NumPy 1.x loaded with NumPy 2 ("AttributeError: _ARRAY_API not found",
    # "ImportError: numpy.core._multiarray_umath failed to import"), and protobuf's Python API of another release
    # than the generated code or Ray expects ("'MessageFactory' object has no attribute 'GetPrototype'", Ray's
    # "'str' object has no attribute 'DESCRIPTOR' when packaging message to dict")
    ("a package built for another release", r"\b_ARRAY_API not found\b|\bnumpy\.core\._multiarray_umath failed to "
     r"import\b|'MessageFactory' object has no attribute 'GetPrototype'|object has no attribute 'DESCRIPTOR' when "
     r"packaging message to dict", "version-mismatch", True,
     "a package was built for another release of a library it loads (NumPy 1.x extensions under NumPy 2; protobuf "
     "code or Ray generated for another protobuf)",
     "Pin the library to the release its dependents were built for (numpy<2, the protobuf Ray / TensorFlow name), "
     "or upgrade the dependents; install the pins after everything else so nothing resolves them upward.", {}),
    # the NVIDIA container runtime wrapper of the GPU Operator during a driver (re)install: "nvidia driver modules
    # are not yet loaded, invoking /usr/bin/nvidia-container-runtime"
    ("NVIDIA driver not loaded yet", r"\bnvidia driver modules are not yet loaded\b", "driver", True,
     "the node's NVIDIA kernel modules were not loaded when the container started (a driver install or upgrade by "
     "the GPU Operator still running)", "Wait for the driver daemonset to finish (its pod Ready, `lsmod | grep "
     "nvidia`), or cordon the node during driver upgrades.", {}),
)
