"""Failure families of round 38 (from the spent eighteenth set's misses), read before the generic keyword families
(``preflight.explain.families.FAMILIES`` puts them after ``SPECIFIC_FAMILIES``): each entry is ``(name, pattern,
category, root cause, meaning, fix, category by component)``, each pattern a tool's own wording, named in the comment
above it. Each generalizes one missed log to the tool's message, not to the log's other words.

>>> import re
>>> [name for name, pattern, *_ in LAUNCH_FAMILIES
...  if re.search(pattern, "run.sh: line 124: --save: command not found", re.IGNORECASE)]
['an option run as a command']
>>> [name for name, pattern, *_ in LAUNCH_FAMILIES
...  if re.search(pattern, "bash: nvidia-smi: command not found", re.IGNORECASE)]
[]
"""

from __future__ import annotations

from preflight.explain.families_tools import FamilyRow

LAUNCH_FAMILIES: tuple[FamilyRow, ...] = (
    # bash running a launch script whose `\` line continuation broke (a commented-out argument line, a blank after
    # the backslash): the next argument line runs as a command of its own ("line 124: --save: command not found")
    ("an option run as a command", r"\bline \d+: --?[A-Za-z][\w-]*(?:=\S*)?: command not found\b", "launch-args",
     True, "a line of the launch script that holds only arguments ran as a command: the `\\` continuation of the "
     "line before it broke (a commented-out argument, a blank after the backslash), so the launcher got fewer "
     "arguments than the script meant", "Fix the continued command in the launch script: no comment lines inside "
     "it, nothing after each trailing backslash (`bash -n` / `bash -x` shows what runs).", {}),
    # CPython's "can't open file '/path/train.py': [Errno 2] No such file or directory": the launcher ran a script
    # path that does not exist there (the working directory of the node or the container differs)
    ("launched script not found", r"\bcan'?t open file '[^'\n]+': \[Errno 2\] No such file or directory",
     "launch-args", True, "the launcher started Python on a script path that does not exist on that node or in its "
     "working directory", "Give the launcher the script's absolute path (or cd into its directory first) and check "
     "the file exists on every node / in the container image.", {}),
    # LLVM's command-line parser in a device compiler (bishengir-compile, llc, clang) that does not know the chip
    # it is asked to build for ("for the --target option: Cannot find option named 'Ascend910B4-1'!"): the
    # toolchain predates the device
    ("compiler without this chip", r"\bfor the -{1,2}(?:target|mcpu|march|soc-version|arch)\b[^\n]{0,12}option: "
     r"Cannot find option named\b", "version-mismatch", True,
     "the device compiler (Triton's back end, BiSheng, LLVM) does not know the chip it was asked to build for: it is "
     "older than the device", "Install the compiler / Triton back-end release that supports this chip (the "
     "vendor's matching CANN / triton-ascend / ROCm release), the same on every node.", {}),
    # ps-lite's van (BytePS, MXNet's dist kvstore, StepMesh): "van.cc:291: Check failed: (my_node_.port) != (-1) bind
    # failed" after its bind retries (ps-lite src/van.cc: CHECK_NE(my_node_.port, -1) << "bind failed")
    ("ps-lite could not bind", r"\bCheck failed: \(my_node_\.port\) != \(-1\) bind failed\b", "port-in-use", True,
     "the ps-lite van (scheduler, server or worker) could not bind its port: another process (a previous run) holds "
     "it, or the address it binds is not this host's", "Free or change the port (DMLC_PS_ROOT_PORT / PORT, `ss "
     "-ltnp`), end leftover processes, and check that DMLC_NODE_HOST / DMLC_INTERFACE / the RDMA NIC name this "
     "host's own interface.", {}),
    # an RDMA device context that cannot be opened for lack of HCA resources (UCX's "ibv_open_device(mlx5_0) failed:
    # Cannot allocate memory" with the kernel's "mlx5_cmd_check ... ALLOC_UAR(0x802) ... failed, status limits
    # exceeded"): too many processes per HCA, not the locked-memory limit (that one fails memory registration)
    ("HCA out of resources", r"\bibv_open_device\b[^\n]{0,60}\bCannot allocate memory\b|\bALLOC_UAR\b[^\n]{0,60}"
     r"\bfailed\b|\bmlx5_cmd_check\b[^\n]*\bstatus limits exceeded\b", "rdma", True,
     "the HCA ran out of the resources a device context needs (UAR pages, queue pairs): too many processes open the "
     "same device", "Open fewer contexts per HCA (fewer ranks per node on it, shared contexts: UCX_IB_... / "
     "Open MPI's btl_openib settings the vendor documents), or raise the device's limits (mlx5 "
     "`log_max_uar_page` / firmware profile).", {}),
    # python-etcd's client behind torchelastic's etcd rendezvous ("Failed to get list of machines from
    # http://etcd-service:2379/v2"): the rendezvous server is not reachable
    ("etcd rendezvous server unreachable", r"\bFailed to get list of machines from https?://", "rendezvous", True,
     "the etcd server of the elastic rendezvous could not be reached (its name, address or port, or it is down)",
     "Check the etcd endpoint the job's rdzv_endpoint names (resolvable and reachable from every node, etcd "
     "running: `etcdctl endpoint health`).", {}),
    # Ray Client's server failing the client's initialisation ("ConnectionAbortedError: Initialization failure from
    # server"): the KubeRay troubleshooting guide's first cause is a client of another Ray release than the cluster
    ("Ray client refused by the cluster", r"\bConnectionAbortedError: Initialization failure from server\b",
     "version-mismatch", True, "the Ray cluster's client server failed the client's start-up: a Ray (or Python) "
     "release on the client other than the cluster's", "Use on the client the same Ray and Python releases as the "
     "cluster image (`ray --version` on both).", {}),
    # a CANN operator whose tiling function rejected the job's inputs ("[FUNC:Tiling4GridSampler3D]", "op[X], tiling
    # failed"): the operator does not support these shapes or types in this CANN
    ("operator tiling rejected the inputs", r"\[FUNC:Tiling\w*\]|\bTiling4\w+\b|\btiling (?:func(?:tion)? )?"
     r"(?:failed|error)\b", "app-fault", True,
     "an NPU operator's tiling rejected the shapes or types the job gave it (this CANN does not support them for "
     "that operator)", "Change the operator's inputs to a supported shape / dtype, run it on the CPU, or install a "
     "CANN release that adapts the operator.", {}),
    # a host buffer that could not be pinned (mlock) for device or RDMA transfers ("RuntimeError: Unable to pin host
    # memory with error code: -1"): the locked-memory limit of the container or service
    ("host memory could not be pinned", r"\bUnable to pin host memory\b|\bfailed to pin host memory\b|"
     r"\bmlock(?:all)?\(?\)? failed\b", "memlock", True,
     "a host buffer could not be locked in memory: the locked-memory limit (ulimit -l) of the job, its container or "
     "its service manager is too low", "Raise the locked-memory limit to unlimited where the job runs "
     "(LimitMEMLOCK=infinity for containerd / docker, --ulimit memlock=-1, limits.conf).", {}),
)
