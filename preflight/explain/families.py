"""The third layer of ``explain``: the component and failure family of a line no signature and no code table
knows, from its keywords (``NET/IB`` + ``link down``, ``HCCL`` + ``timeout``, ``out of memory``...).

A family needs a failure word (a component alone is not a failure); the component, when one is named, refines
the category (a timeout in HCCL is ``hccl-timeout``, in the TCPStore ``store-timeout``). Families whose
category depends on a component the line does not name are not reported.

>>> f = family_of("node2:77:90 [1] NCCL WARN NET/IB : port 1 of mlx5_0 link is down")
>>> (f.component, f.family, f.category, f.root_cause)
('NET/IB', 'link down / transport error', 'fabric', True)
>>> family_of("[E] HCCL execution stalled: timeout while waiting for rank 3").category
'hccl-timeout'
>>> family_of("epoch 3 step 100 loss=0.12") is None
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from preflight.explain.families_ascend import ASCEND_FAMILIES
from preflight.explain.families_builds import BUILD_FAMILIES
from preflight.explain.families_launch import LAUNCH_FAMILIES
from preflight.explain.families_setup import SETUP_FAMILIES
from preflight.explain.families_tools import SPECIFIC_FAMILIES, TOOL_FAMILIES
from preflight.explain.tolerant import anchors_of
from preflight.explain.wordtrie import trie_pattern

COMPONENTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(p, re.IGNORECASE)) for name, p in (
    # round 12: libfabric / AWS EFA (NCCL's NET/OFI plugin) is the same class of RDMA network (its -12 is the
    # locked-memory limit as ibv_reg_mr's is)
    ("NET/IB", r"NET/IB\w*|NET/OFI|\blibfabric\b|\bEFA\b|prov/efa|\bibv_\w+|\blibibverbs\b|\bmlx5_?\w*|"
               r"InfiniBand|\bRoCE\b|\bverbs\b"),
    ("HCCL", r"HCCL|\bHCCP\b|\bhccn\w*"),  # also WorkHCCL, ProcessGroupHCCL, hcclComm
    ("CANN runtime", r"\bACL\b|\baclrt\w*|\bRUNTIME\(|\bCANN\b|\bascend\w*"),
    ("NPU", r"\bNPU\b|torch_npu"),
    ("NCCL", r"NCCL|\bnccl\w*"),  # also WorkNCCL, ProcessGroupNCCL
    ("gloo", r"\bgloo\b"),
    ("rendezvous", r"rendezvous|\brdzv\w*"),
    ("TCPStore", r"TCPStore|\bDistStore\w*|\bc10d\b|MASTER_ADDR|MASTER_PORT"),
    ("NVIDIA driver", r"\bNVRM\b|nvidia-smi|\bNVML\b|\bXid\b|nvidia-fabricmanager"),
    # round 14: the driver's own CUDA library (libcuda, the driver API) apart from the toolkit's (libcudart, nvcc)
    ("CUDA driver", r"\blibcuda\.so|\bCUDA driver\b|\bcuInit\b|(?-i:\bcu(?:Device|Ctx)[A-Z]\w*)"),
    # round 22: the driver API's camel-case names (cuMemAlloc) in their case: not "current", "custom", "cut"
    ("CUDA", r"\bCUDA\b|\bcuda\w*|(?-i:\bcu[A-Z]\w+)"),
    ("torchrun", r"torch\.distributed\.elastic|\btorchrun\b|ChildFailedError"),
    ("MPI", r"\bmpirun\b|\bORTE\b|\bPMIx?\b|Open MPI"),
    ("ssh", r"\bssh\b|\bpdsh\b|\b(?:kex|ssh)_exchange_identification\b"),  # round 16: sshd's handshake
))


FAMILY_WEIGHT = 30  # a keyword family's (or a log shape's: preflight.explain.evidence) weight; a symptom's a third


@dataclass(frozen=True)
class Family:
    """A failure family: its keywords, its category (by component) and whether it is a cause or a symptom."""

    name: str
    pattern: re.Pattern[str]
    category: str | None  # without a component, or a component missing from by_component; None: not reported
    root_cause: bool
    meaning: str
    fix: str
    by_component: Mapping[str, str] = field(default_factory=dict)

    def category_for(self, component: str | None) -> str | None:
        return self.by_component.get(component or "", self.category)


_PEER_FIX = ("Look at the other ranks' logs for the first error (a crash, an OOM, a kill); then check the network "
             "path between the nodes.")

FAMILIES: tuple[Family, ...] = tuple(Family(name, re.compile(p, re.IGNORECASE), cat, root, meaning, fix, comp)
                                     for name, p, cat, root, meaning, fix, comp in (
    *ASCEND_FAMILIES,  # round 28: Ascend's own fault knowledge, specific keyword sets before the generic families
    *SPECIFIC_FAMILIES,  # round 33: tools' own wordings of one cause, before the generic keyword families
    *LAUNCH_FAMILIES,  # round 38: launch scripts, compilers, ps-lite, HCA resources, etcd, Ray client, tiling, pinning
    *BUILD_FAMILIES,  # round 39: CANN / Triton / toolkit builds, verbs providers, GPU memory sharing, vLLM placement
    *SETUP_FAMILIES,  # round 40: scheduler refusals, package pins and ABIs, linkers, chips, shells, own addresses
    # round 14: the dynamic loader's "cannot allocate memory in static TLS block" is a library load order, not memory;
    # a serving engine's KV cache without a free block (TensorRT-LLM's "No free blocks left") is
    ("out of memory", r"out of memory|\bOOM\b|Cannot allocate memory(?! in static TLS block)|"
     r"insufficient (?:device )?memory|\bNo free blocks left\b|\bCan't allocate new blocks\b|"
     # round 33: a framework's device allocation failing outright ("RuntimeError: Allocate memory failed.")
     r"memory (?:allocation|alloc) (?:failed|error)|failed to allocate|\bAllocate memory failed\b|\bMemoryError\b|"
     r"OutOfMemoryError\b|oom-kill|"
     r"\bbad_alloc\b|memory is not enough|not enough memory|Unable to allocate \d|\bOOMKilled\b|"
     # round 11: GE's memory manager limit, vLLM's start-up check of free device memory
     r"greater than memory manager malloc max size|Free memory .{0,60}less than desired", "oom", True,
     "a device or host ran out of memory", "Free memory on that node (smaller batch, fewer processes on the "
     "device) and check what else holds it.", {"NET/IB": "memlock"}),
    # round 12: multiprocessing's "received 0 items of ancdata": a DataLoader worker passing tensors as file
    # descriptors (torch's file_descriptor sharing strategy) ran out of them
    # round 32: the typos of a retyped line ("Too may open files")
    ("too many open files", r"Too ma(?:ny|y|n|ney) open files|\bEMFILE\b|received 0 items of ancdata", "open-files",
     True,
     "the process hit its open-file limit", "Raise `ulimit -n` for the job.", {}),
    # round 15: UCX's shared-memory transport (mm_iface) that cannot allocate its receive FIFO in /dev/shm
    ("shared memory", r"/dev/shm|\bshm_\w+|shared memory|\bmm_iface failed to allocate\b|"
     r"\bfailed to allocate receive FIFO\b", "shm", True,
     "shared memory (/dev/shm) could not be used", "Give the job a larger /dev/shm (--ipc=host, --shm-size).",
     {}),
    # round 11: "The IP address and port have been bound already" is HCCL's wording (EJ0003), the sockets' is
    # "Address already in use": a paraphrase of HCCL's, without the component, is still HCCL's port
    ("address bound (HCCL)", r"\bhave (?:already )?been bound\b|\bbeen bound already\b", "hccl-port", True,
     "an HCCL port (the device-side NIC's, HCCL_IF_BASE_PORT's range) is already taken on this host",
     "Free the port (a previous job's processes) or give each process on the NPU its own range "
     "(HCCL_NPU_SOCKET_PORT_RANGE=auto, HCCL_IF_BASE_PORT).", {}),
    ("address in use", r"Address already in use|\bEADDRINUSE\b|address in use", "port-in-use", True,
     "a port the job needs is already taken", "Free the port or choose another one on every node.",
     {"HCCL": "hccl-port"}),
    # getaddrinfo's texts: glibc (EAI_NONAME, EAI_AGAIN, EAI_FAIL, EAI_NODATA), musl ("Name does not resolve"), the
    # BSDs / macOS ("nodename nor servname"); Go's resolver ("lookup HOST: no such host"); ssh and curl
    ("name resolution", r"Name or service not known|Temporary failure in name resolution|nodename nor servname|"
     r"Non-recoverable failure in name resolution|No address associated with hostname|Name does not resolve|"
     r"\blookup \S+(?: on \S+)?: no such host|\bgai error\b|could not resolve host|unknown host|"
     # round 15: MPICH's tcp netmod (MPID_nem_tcp_init) resolving the node's own name
     r"\bgethostbyname failed\b|"
     # round 25: nslookup's answers for a name the DNS server does not know
     r"\bserver can'?t find \S+: NXDOMAIN\b|\*\*\* Can'?t find \S+: No answer\b",
     "name-resolution", True,
     "a host name does not resolve", "Make every node's name and MASTER_ADDR resolve on every node.", {}),
    ("no route", r"No route to host|\bEHOSTUNREACH\b", "firewall", True,
     "the peer is unreachable (a REJECT rule or no route)", "Open the job's ports between the nodes and check "
     "the routes.", {}),
    # ENETUNREACH: no interface or route for the peer's network at all (round 5): the address or interface is wrong
    ("network unreachable", r"Network is unreachable|\bENETUNREACH\b", "wrong-interface", True,
     "this host has no route to the peer's network", "Pick an interface on the network every node shares "
     "(NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME) or fix the routes.", {}),
    # round 12: Ray's workers reaching the head's GCS (its store, as MASTER_ADDR's is torch's); an empty host
    # (``address :6379``) is a launch variable left unset
    ("GCS address empty", r"Failed to connect to GCS at address :\d+", "launch-args", True,
     "the Ray worker was started with an empty head address (the variable that should hold it is unset)",
     "Set the head node's address in the launch script (ray start --address=HEAD_IP:6379) on every worker.", {}),
    ("GCS unreachable", r"Failed to connect to GCS at address \S+", "master-unreachable", True,
     "a Ray worker cannot reach the head node's GCS", "Start the workers with the head's reachable address (not "
     "127.0.0.1) and open the GCS port (6379) between the nodes.", {}),
    ("connection refused", r"Connection refused|\bECONNREFUSED\b", "master-unreachable", True,
     "nothing listens where the rank connects (wrong address or port, or the peer is not up)",
     "Check MASTER_ADDR/MASTER_PORT and that the peer started; check the firewall.",
     {"NCCL": "firewall", "NET/IB": "firewall", "HCCL": "hccl-link", "ssh": "ssh", "MPI": "ssh"}),
    ("peer gone", r"Connection reset by peer|Broken pipe|Connection closed by (?:remote )?peer|\bECONNRESET\b|"
     r"\bEPIPE\b|remote process exit\w*|connection (?:was )?(?:closed|lost|aborted)", "fabric", False,
     "a peer closed the connection: it exited or crashed first", _PEER_FIX,
     {"HCCL": "hccl-link", "TCPStore": "store-timeout", "rendezvous": "rendezvous", "ssh": "ssh"}),
    ("link down / transport error", r"link (?:is )?down|port (?:state )?(?:is )?down|\bPORT_DOWN\b|"
     r"retry (?:counter )?exceeded|\bRETRY_EXC\w*|completion error|error cqe|\bIBV_WC_\w+_ERR\b|async event|"
     # round 25: libfabric providers' own errors: the CXI (Slingshot) NIC's event queue overflow, the EFA provider
     # failing to write its event queue (but for -12, ENOMEM: the locked-memory limit, frozen8's thread)
     r"\bCassini Event Queue overflow\b|\bUnable to write to EQ\b(?![^\n]*(?:\(-12\)|Cannot allocate memory))",
     "fabric", True, "the network fabric reported a link or transport error",
     "Check the link state and error counters on both nodes and the switch.", {"HCCL": "hccl-link"}),
    ("timeout", r"\btimed? ?out\b|\btimeout\b|times out|deadline exceeded|\bwatchdog\b", None, False,
     "an operation waited too long for a peer: some rank failed or hangs first", _PEER_FIX,
     {"NCCL": "fabric", "NET/IB": "fabric", "gloo": "fabric", "HCCL": "hccl-timeout",
      "CANN runtime": "hccl-timeout", "NPU": "hccl-timeout", "TCPStore": "store-timeout",
      "rendezvous": "rendezvous", "torchrun": "rendezvous", "ssh": "ssh"}),
    # round 4: Python's import errors, the dynamic linker's symbol versions (glibc / libstdc++), pip's resolver,
    # NumPy's ABI notice, "compiled with different CUDA versions" (torchvision), a version that "does not match" /
    # "mismatches" / "is not compatible with" another: the installed packages, whatever component they name
    # (not an import a local directory shadows: "cannot import name X from 'pkg' (unknown location)" is a folder
    # named like the package, without __init__.py, in the working directory: the user's setup, no version at
    # fault. "No module named 'pkg._C'" stays: a wheel for another Python as often as a run inside a source tree)
    # round 30: nor one whose module is a path of the job's own tree ("cannot import name 'Dataset' from 'datasets'
    # (./torchtitan/datasets/__init__.py)": a folder of the job named like the package shadows it)
    ("package / version", r"\bNo module named\b|\bcannot import name\b(?![^\n]*\(unknown location\))"
     r"(?![^\n]*\(\.\.?/)|"
     r"version [`'\u2018]?GLIBC\w*_[\d.]+'? not found|compiled with different|compiled using NumPy \d|"
     r"Cannot find a working triton installation|"
     # round 10: a package's submodule without the attribute its caller expects (an API another version has; a
     # top-level name is left out: ``module 'torch' has no attribute`` is as often a script named like the package,
     # and "partially initialized module" is a circular import); PEP 585 generics (``list[int]``) on a Python older
     # than 3.9; NumPy's C-ABI check; pip refusing the Python version
     r"(?<!partially initialized )\bmodule '\w+(?:\.\w+)+' has no attribute\b|'type' object is not subscriptable|"
     r"numpy\.\w+ size changed, may indicate binary incompatibility|requires a different Python\b|"
     # round 15: NumPy's C-API check ("module compiled against API version 0x10 but this version of numpy is 0xd"), a
     # feature that needs a newer CUDA / torch / NCCL... than installed ("requires Hopper and CUDA >= 12.9")
     r"\bcompiled against API version \w+ but this version of numpy is\b|"
     r"\brequires?\b[^.;]{0,40}\b(?:CUDA|PyTorch|torch|NCCL|cuDNN|CANN|Python|transformers|triton)\s*(?:version\s*)?"
     r">=?\s*\d|"
     # round 11: transformers' auto classes naming a class the installed release does not have; a symbol version
     # the installed library lacks (``symbol X version libcudart.so.11.0 not defined in file``: an older release)
     r"does not exist or is not currently imported|version \S+ not defined in file|"
     # round 16: transformers not knowing a model ("does not recognize this architecture", "Unrecognized configuration
     # class"), a remote-code model's missing packages, NumPy 1.24's removed aliases (np.float, np.int...)
     r"\bdoes not recognize this architecture\b|\bUnrecognized configuration class\b|"
     r"\brequires the following packages that were not found\b|"
     r"\bmodule 'numpy' has no attribute '(?:float|int|bool|object|str|complex|long|unicode)'|"
     # NumPy 2.0's own message for the names it removed (``np.float_`` / ``np.NaN`` ... "was removed in the NumPy 2.0
     # release"), and a module built against NumPy 1.x ("compiled using NumPy 1.x cannot be run in NumPy 2")
     r"\bwas removed in the NumPy 2\.0 release\b|\bcompiled using NumPy 1\.x cannot be run in\s+NumPy 2\b|"
     r"which is incompatible|\bversions?\b[^.;]{0,60}\b(?:does not match|mismatch(?:es)?|(?:is |are )?not "
     r"compatible|incompatible)\b|\b(?:does not match|mismatch(?:es)?|not compatible with)\b[^.;]{0,60}\bversions?\b",
     "version-mismatch", True, "a package is missing or of another version than the code importing it expects",
     "Install the versions the failing package names (its install guide's version table) on every node; "
     "import errors name the missing module.", {"NVIDIA driver": "driver"}),
    # round 11: torch's cpp_extension ABI warning, protobuf's duplicate registration (two builds of one .proto
    # loaded: packages of different releases), a library that could not be loaded (``Could not load libtorchcodec``)
    # round 14: "undefind symbol" as a document misspells it, "Undefined CUDA symbols", "Cannot open libcudart.so"
    ("library / version", r"undefine?d symbol|\bundefined (?:CUDA |CUDA runtime )?symbols\b|"
     r"cannot open shared object file|\bcannot open lib[\w+.-]*\.so|version mismatch|"
     r"ABI[- ]incompatible|File already exists in database|"
     r"Could not load (?:library )?lib[\w.-]+|"
     r"\bLoading \S+\.so\S* failed|\bis not installed or found\b|"
     r"incompatible (?:version|driver)|not compiled with|built without", "version-mismatch", True,
     "a library is missing or of another version than the build expects",
     "Install matching versions of the library on every node.", {"NVIDIA driver": "driver", "CUDA driver": "driver"}),
    # round 11: the interface a launcher or library was told to use is not on this host (a container's eth0 that
    # is not there: ifconfig's "error fetching interface information", a launcher's "can not get IP from eth0")
    ("interface missing", r"error fetching interface information|can ?not get (?:the )?IP(?: address)? (?:from|of) "
     r"(?:interface )?[\w.-]+|no such (?:network )?interface\b|\b(?:network )?interface \S+ (?:not found|does not "
     r"exist)", "wrong-interface", True, "the network interface the job was told to use is not on this host",
     "Name an interface this host has (`ip -br addr`) in the launcher's setting and NCCL_SOCKET_IFNAME / "
     "GLOO_SOCKET_IFNAME / HCCL_SOCKET_IFNAME, on every node.", {}),
    # round 12: HCCP (HCCL's process on the device) could not bring up the device NIC (``ra rdev init failed``):
    # the device IP the rank table or hccn.conf names is not the NIC's
    ("device NIC init", r"\bra (?:rdev|socket) init failed|\bHCCL fails to initialize the NIC\b", "hccl-link", True,
     "HCCL could not initialise the NPU's device NIC", "Compare the device IPs (`hccn_tool -i N -ip -g`) with the "
     "rank table's device_ip and check the link (`hccn_tool -i N -link -g`).", {}),
    # round 16: the accelerator's driver tools or kernel module absent (npu-smi / nvidia-smi not found, modprobe
    # failing to insert the driver's module)
    ("driver not installed", r"\b(?:npu|nvidia)-smi: (?:command )?not found\b|"
     r"\bcould not insert '(?:nvidia\w*|drv_davinci\w*|davinci\w*)'", "driver", True,
     "the accelerator's driver (its tools or kernel module) is not installed or not loaded on this host",
     "Install the driver (or mount its tools and libraries into the container) and load its kernel module; check "
     "`nvidia-smi` / `npu-smi info`.", {}),
    # round 16: Kubernetes cannot schedule the pod: no node has the accelerators it asks for free
    ("scheduler lacks devices", r"\bInsufficient (?:nvidia\.com/gpu|huawei\.com/Ascend\w*|amd\.com/gpu)\b",
     "device-mapping", True, "no node offers the accelerators the pod asks for (all taken, not advertised by the "
     "device plugin, or more than a node has)", "Check `kubectl describe node` (Allocatable) and the device plugin "
     "pods; ask for no more devices per pod than a node has.", {}),
    # round 21: JAX's "no supported devices found for platform CUDA" (a task that sees none of its GPUs)
    # round 28: not NCCL's "NET/IB : No device found." (INFO on a host without RDMA NICs: it goes on over sockets)
    ("device missing", r"invalid device ordinal|(?<!NET/IB : )no (?:CUDA )?(?:GPUs?|devices?|NPUs?) (?:are )?"
     r"(?:available|found)|"
     r"device not found|No such device|invalid device id|device id error|"
     r"no supported devices found for platform (?:CUDA|ROCM)|"
     # round 25: PALS mpiexec's --gpu-bind it cannot map; a runtime asked to allocate before any device was set
     r"\bFailed to parse implicit GPU selection\b|\bfail(?:ed)? (?:to )?get device id, check if set device id\b",
     "device-mapping", True,
     "a rank asked for a device that is not there", "Match the ranks per node to the visible devices.",
     {"NET/IB": "rdma"}),
    ("hardware / driver fault", r"\bXid\b|ECC error|fallen off the bus|uncorrectable|GPU is lost|device lost|"
     r"hardware (?:error|fault)|RmInitAdapter|communicate with the NVIDIA driver|driver (?:is )?not loaded|"
     r"infoROM is corrupted|Failed to enable MSI-X|"
     # round 25: Fabric Manager refusing a driver of another version; the driver library failing its own init as a
     # loader reports it ("cuda driver library init failure: 3"); ollama's GPU discovery never finishing
     r"\bfabric manager\b[^\n]{0,60}\bdon'?t match with driver version\b|\bcuda driver library init failure\b|"
     r"\bfailure during GPU discovery\b|"
     # round 32: the Fabric Manager missing or stopped on an NVSwitch node (CUDA's 802 in prose); a library's own
     # check that the driver supports too old a CUDA ("The maximum supported version is 12040 but X requires 12060")
     r"\b(?:lack|absence|missing|without)\b[^\n]{0,30}\b(?:nvidia-)?fabric ?manager\b|"
     r"\b(?:nvidia-)?fabric ?manager\b[^\n]{0,40}\b(?:is )?(?:not (?:installed|running|started|active)|inactive "
     r"\(dead\)|failed to start)\b|"
     r"\bupdate (?:your )?(?:GPU|NVIDIA|CUDA) drivers?\b[^\n]{0,80}\bmaximum supported version is \d+\b",
     "driver", True, "the accelerator or its driver failed", "Drain the node; check `dmesg` and the device "
     "health, reset or replace it.", {}),
    # round 11: the launch's world size against what the job was built or saved for (``Loading a checkpoint for
    # MP=1 but world size is 4``)
    # round 15: OpenSSH asking to trust a host key: a launcher's non-interactive ssh cannot answer it
    # round 21: a launcher's host file that is not there (``open(args.host_file)``: ``No such file or directory:
    # 'hosts'``; a hostfile named in the arguments but missing)
    ("host file missing", r"No such file or directory:? '(?!/etc/)[^'\n]*\bhost(?:file|s|_?list)?(?:\.txt)?'|"
     r"\bhost ?file\b[^\n]{0,40}\b(?:not found|does not exist|doesn't exist)\b", "hostfile", True,
     "the launcher's host file is not where the launch says", "Create the host file (one node per line, as the "
     "launcher documents) at the path the launch names, on the launching node.", {}),
    # round 25: an image without sshd, where MPI's launcher must start the workers over ssh
    ("no ssh server", r"/usr/sbin/sshd: No such file or directory\b|\bsshd: (?:command )?not found\b", "ssh", True,
     "the node (or container) has no ssh server, so the launcher cannot start the workers there",
     "Install and start sshd in the workers' image (or use a launcher that needs no ssh: srun, torchrun on every "
     "node, the MPI operator's own image).", {}),
    ("ssh host key prompt", r"\bThe authenticity of host .{0,80}can't be established\b|"
     r"\bAre you sure you want to continue connecting\b", "ssh", True,
     "ssh to a node asks to confirm its host key, which a launcher's non-interactive ssh cannot answer",
     "Add every node's host key to ~/.ssh/known_hosts on the launching node (ssh-keyscan, or ssh to each once) "
     "and set up passwordless keys.", {}),
    ("world size", r"\bbut (?:the )?world[ _]size (?:is|=)|world[ _]size\b.{0,40}\b(?:does not match|mismatch)|"
     r"\bmpiSize == tp \* pp\b|"
     # round 15: TensorRT-LLM's engine built for another world size than the processes launched
     r"\bworld size \(?\d+\)?\s*!=\s*\w+ world size\b",
     "launch-args", True, "the number of processes launched does not fit what the job expects",
     "Launch as many processes as the job (its checkpoint's model-parallel size, the config) expects: "
     "--nproc_per_node x --nnodes.", {}),
    # round 13: an operator that rejected its inputs while the graph or kernel was prepared: shape inference
    # (ATB's and GE's "infer shape fail", MindSpore's "InferShape" errors, TensorRT's "could not infer shape"), tiling
    # (an Ascend kernel splitting its inputs) or an AI Core / vector core exception on the device: the job's own call
    ("operator rejected", r"\binfer[ _]?shape\w*(?: check)?\s*(?:fail(?:ed|s|ure)?|error)\b|"
     # round 14: GE's pass log ("Call InferShapeAndType for node:X failed", "process pass InferShapePass on node:X
     # failed"); an operator that has no kernel for the dtype ("The param dtype not implemented for DT_BFLOAT16, should
     # be in dtype support list", torch's '"addmm_impl_cpu_" not implemented for 'Half'')
     r"\binfer[ _]?shape\w*\b[^;]{0,60}?\bfailed\b|\bdtype not implemented for\b|\bdtype support list\b|"
     r"\"\w+\" not implemented for '\w+'|"
     # round 15: TBE's operator parameter checks ("In op, the num of dimensions of input/output[x] should be in ...",
     # "In op[reduce_sum], the parameter[axis] ...")
     r"\bIn op(?:\[[\w.]+\])?,? the (?:num|parameter|shape|dtype|value|format|input|output)\b|"
     r"\b(?:failed to|could not|cannot|unable to) infer (?:the )?(?:output )?shape|"
     r"\btiling(?: func(?:tion)?)? (?:fail(?:ed|s|ure)?|error)\b|\b(?:do|run|get|calc\w*)[ _]?tiling failed|"
     r"\b(?:ai ?core|aivec|vector core|ai ?cpu) (?:error|exception)\b|"
     # round 22: torch_npu's report of a failed asynchronous operator ("The Inner error is reported as above. The
     # process exits for this inner error, and the current working operator name is InplaceIndexAdd.", NPUQueue.cpp;
     # not a collective's Hcom / Hccl task); torch's dispatcher finding no kernel of an aten operator for the device
     # the job runs it on ("Could not run 'aten::X' with arguments from the 'PrivateUse1' backend", OperatorEntry.cpp)
     r"\bcurrent working operator name is (?!Hc(?:cl|om))\w|"
     # Paddle's enforce wrapper naming the operator whose kernel failed ("[operator < mean > error]", operator.cc)
     r"\[operator < \w+ > error\]|"
     # round 23: a kernel compiler's LLVM backend refusing the kernel ("fatal error: error in backend: not support
     # bf16 type cast", report_fatal_error); ATC's and AMCT's model conversion failing on the model it was given;
     # an operator the framework or graph engine does not support ("node x(y) is v1 control operator, which is not
     # supported"); a torch_npu custom op's own argument check ("npu_x: h0 must be [B,H,...]")
     r"\bfatal error: error in backend:|\bATC run failed\b|\[ERROR\] AMCT\(|"
     r"\boperator,? which is not supported\b|\bnpu_\w+: \w+ (?:must|should) be\b|"
     # round 24: an operator or API the chip (SoC) does not have ("npu_mla_prolog not support on this soc version",
     # "Unsupported soc version: Ascend910A", torch_npu / op-plugin)
     r"\bnot support(?:ed)? on (?:this|the current) soc(?: version)?\b|\bUnsupported soc version\b|"
     # round 25: a tensor layout the operator does not take (c10's "unsupported memory format Preserve"); the model
     # converters' failures (the old OMG's "Op build failed", "OMG Generate execute failed"); a kernel framework's own
     # assertion (PyPTO's "ASSERTION FAILED: vecTile[lastDim] % alignNum == 0"); an ATB operation refusing its inputs
     # at setup (op-plugin's OperationSetup: "RopeOperation setup failed!")
     r"\bunsupported memory format\b|\bOp build failed\b|\bOMG (?:Generate execute failed|builder Build\(\) return "
     r"fail)|\bASSERTION FAILED: [\w(]|\b\w*Operation setup failed!|\bException raised from OperationSetup at\b|"
     r"\bCould not run 'aten::[\w.]+' with arguments from the '(?!CPU')\w+' backend",
     "app-fault", True, "an operator rejected the inputs the job gave it (shape inference or tiling failed) or "
     "crashed on the device", "Read the operator's name and the shapes / dtypes in the lines before it; use "
     "inputs the operator supports (its documentation's constraints) or report it with the shapes.", {}),
    # round 13: a size the job's parallel layout must divide, on a line that names the layout (tensor / pipeline /
    # expert parallel sizes, world size, GPUs, ranks, heads): a launch value that does not fit. Not a tensor's
    # dimension (the model's) and not a bare "batch size 10 is not divisible by 4" (the script's own data)
    ("parallel size", r"^(?!.*\b(?:dimension|shape|dim)\b)(?=.*(?:parallel|\bworld[ _]?size|\b[tpde]p(?:_size)?\b|"
     r"\b(?:num_)?(?:gpus|npus|devices|ranks|nproc\w*|processes|shards?)\b|(?:\b|_)heads\b))"
     # round 27: gpt-neox's NeoXArgs check ("(global_num_gpus / pp_size) / mp_size [(4 / 4) / 2] must be a whole
     # number")
     r".*\b(?:divisible by|must be a whole number)\b",
     "launch-args", True, "a size the parallel layout must divide (world size, tensor/pipeline parallel size, "
     "heads, batch) does not divide it", "Choose parallel sizes that divide the model's heads / layers and the "
     "world size (nnodes x nproc_per_node), and a batch size that divides by the data-parallel size.", {}),
    # round 13: the command line or config the job was launched with (argparse's and Hydra's / OmegaConf's errors)
    ("launch options", r"\berror: (?:unrecognized arguments|the following arguments are required|argument \S+: "
     r"(?:invalid|expected))|\b(?:OverrideParseException|MissingMandatoryValue|ConfigAttributeError|"
     r"ConfigKeyError)\b|\bCould not override '|"
     # round 16: options that cannot go together; a launcher variable the script reads but nothing set (run without
     # torchrun / srun / mpirun)
     r"\bmutually exclusive\b|\bcannot (?:be (?:used|set|specified|enabled) together|both be (?:set|specified|used|"
     r"enabled))\b|\bKeyError: ['\"](?:LOCAL_RANK|RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|"
     r"OMPI_COMM_WORLD_\w+|SLURM_\w+|PMI_\w+)['\"]",
     "launch-args", True, "the launch command or its config has an option the program does not accept",
     "Fix the option the error names in the launch script or config (`--help` lists them).", {}),
    # round 13: a call with an argument the installed library's function does not have: its API of another release
    # round 14: a package pin next to the words that refuse it ("MMCV==2.2.0 is used but incompatible. Please install
    # mmcv>=2.0.0rc4, <2.1.0."), nvcc without the GPU's architecture (a CUDA toolkit older than the card), NCCL
    # refusing the config struct of the torch build ("Invalid config blocking attribute value": another NCCL release)
    ("API of another version", r"\b[A-Za-z][\w.-]*\s*(?:==|>=|<=|~=)\s*\d[\w.]*\b[^;]{0,80}?\b(?:is used but "
     r"incompatible|incompatible|please install|is required|but (?:you have|found|got))\b|\bplease install "
     r"[A-Za-z][\w.-]*\s*(?:==|>=|~=)\s*\d|\bUnsupported gpu architecture\b|"
     r"\bInvalid config blocking attribute value\b|"
     # round 22: an extension's own operator (torchvision::nms, a package's custom op) with no kernel for the device:
     # the extension was built for another torch or without the device's support (a CPU-only torchvision wheel)
     r"\bCould not run '(?!aten::)\w+::[\w.]+' with arguments from the '(?:CUDA|PrivateUse1|NPU|XPU|HIP)' backend|"
     # round 25: the dispatcher finding no registration of an extension's operator at all (torchvision built for
     # another torch: "operator torchvision::nms does not exist")
     r"\boperator (?!aten::)\w+::\w+ does not exist\b|"
     # round 22: a tool that needs a newer release of another ("XLA requires ptxas version 11.8 or higher"); not a
     # GPU's compute capability
     r"\brequires? (?!compute\b|sm_?\d|cc\b)[A-Za-z][\w.+-]*(?: version)? v?\d+(?:\.\d+)+ or (?:higher|newer|later|"
     r"above|greater)\b|"
     # round 24: torch_npu's and op-plugin's own version checks ("please upgrade CANN.", "not supported in this CANN
     # version", "need to upgrade hccl version", "you need to upgrade to cann version 8.5.0 or higher") and a
     # package's "Installed triton version too old"
     r"\bplease (?:upgrade|update) (?:the |your )?(?:CANN|hccl|triton|torch_npu|torch|transformers|vllm)\b|"
     r"\bnot supported in (?:this|the current|current) (?:CANN|torch_npu|HCCL|triton|torch) version\b|"
     r"\bneed (?:to )?upgrade (?:to )?(?:the )?(?:CANN |hccl |triton |torch_npu )?version\b|"
     r"\b(?:installed )?(?:CANN|hccl|triton|torch_npu|torch|transformers|vllm|deepspeed) version (?:is )?too "
     r"(?:old|low)\b|"
     r"\bgot an unexpected keyword argument\b|\bis not supported in (?:this|your) "
     r"version\b|\bplease (?:upgrade|update)\b(?![^.;]*\bdriver)"
     r"[^.;]{0,40}?(?:\bto (?:version |v)?\d|>=\s*\d|\bversions?\b|\bpackages?\b|\blatest\b)", "version-mismatch", True,
     "the code calls a library with an API another release of it has", "Install the library version the "
     "calling code was written for (its requirements file), on every node.", {"NVIDIA driver": "driver"}),
    # round 15: GPUs without peer access to each other (a custom all-reduce or P2P transport that needs it)
    ("peer access", r"\bpeer access\b.{0,40}\b(?:is not available|not supported|unavailable|is disabled)\b", "p2p",
     True, "GPUs of this host cannot access each other's memory (no P2P between them: PCIe topology, ACS / IOMMU, "
     "virtualisation)", "Check `nvidia-smi topo -p2p r`; disable the feature that needs P2P (a custom all-reduce) "
     "or fix the platform (ACS off, iommu=pt).", {}),
    # round 15: the RDMA NIC's firmware refusing a command for lack of resources (mlx5's CREATE_MKEY "status no
    # resources", a memory region over the device's max_mr_size)
    ("RDMA device resources", r"\bmlx5_cmd_out_err\b|\bstatus no resources\b|\bOut of mr size\b", "rdma", True,
     "the RDMA NIC (its firmware or driver) refused to register memory or create a key: its resources are exhausted "
     "or the region exceeds its limit", "Register less memory at once, restart the applications that leaked keys "
     "(or reload the mlx5 driver / reboot), and check the NIC with `ibv_devinfo -v`.", {}),
    # round 14: Ray cannot place the job's placement group: the cluster has not the GPUs / NPUs (or custom resources)
    # the bundles ask for (the resources were not registered with `ray start`, the devices are not visible)
    ("placement group", r"\bCannot provide a placement group\b|\bplacement group\b.{0,60}\b(?:cannot be "
     r"(?:scheduled|satisfied)|infeasible)", "device-mapping", True,
     "Ray could not place the job's bundles: the cluster has not the devices (GPUs, NPUs, custom resources) they ask "
     "for", "Check `ray status`: start every node with its devices (`ray start --num-gpus N`, or --resources "
     "'{\"NPU\": 8}' for NPUs Ray does not detect) and ask for no more than the cluster has.", {}),
    ("collective mismatch", r"collective mismatch|mismatch(?:ed)? collective|inconsistent between ranks|"
     r"different (?:collectives|shapes|sizes)", "collective-mismatch", True,
     "the ranks disagree on the collective they run", "Make every rank run the same collectives with the same "
     "shapes and versions.", {}),
    *TOOL_FAMILIES,  # round 27
))


@dataclass(frozen=True)
class Recognised:
    """A line's component (None when it names none) and failure family, with the category they give."""

    component: str | None
    family: str
    category: str
    root_cause: bool
    meaning: str
    fix: str


def component_of(line: str) -> str | None:
    """The first component (in ``COMPONENTS`` order, most specific first) the line names."""
    return next((name for name, pattern in COMPONENTS if pattern.search(line)), None)


@functools.lru_cache(maxsize=1)
def _family_anchors() -> tuple[tuple[Family, tuple[str, ...] | None], ...]:
    """Each family with the anchors of its alternatives (``tolerant.anchors_of``): a lowercased line holding none of
    them cannot match the family, and most lines hold none."""
    return tuple((fam, anchors_of(fam.pattern.pattern)) for fam in FAMILIES)


@functools.lru_cache(maxsize=1)
def _any_anchor() -> re.Pattern[str]:
    """Every family anchor in one trie regex: a line without any is tried only against the families without."""
    return re.compile(trie_pattern(sorted({w for _, words in _family_anchors() for w in words or ()})))


def family_of(line: str) -> Recognised | None:
    """The line's failure family and component, or None when it carries no failure word with a category.

    >>> family_of("NCCL WARN Call to connect returned Connection refused").family, family_of("step 10 loss 2.1")
    ('connection refused', None)
    """
    low = line.lower()
    anchored = _any_anchor().search(low) is not None
    component: str | None = None
    named = False
    for fam, words in _family_anchors():
        if words is not None and not (anchored and any(w in low for w in words)):
            continue
        if fam.pattern.search(line):
            if not named:
                component, named = component_of(line), True
            category = fam.category_for(component)
            if category is None:
                continue
            return Recognised(component, fam.name, category, fam.root_cause, fam.meaning, fam.fix)
    return None


@functools.lru_cache(maxsize=1)
def checks_by_category() -> dict[str, tuple[str, ...]]:
    """The checks that verify each category: those the catalog's signatures of that category name.

    >>> checks_by_category()["shm"]
    ('os.shm',)
    """
    from preflight.explain.catalog import CATALOG

    found: dict[str, set[str]] = {}
    for sig in CATALOG:
        found.setdefault(sig.category, set()).update(sig.checks)
    return {cat: tuple(sorted(checks)) for cat, checks in found.items()}
