"""Known failure signatures of distributed-training launches (torchrun, DeepSpeed, NCCL, gloo, HCCL).

Every entry names the cause, the fix, the preflight checks that verify it on live hosts and the public
post its test excerpt comes from (tests/fixtures/explain/excerpts.json keeps the excerpts).

``weight`` orders matches: a root cause (``root_cause=True``) that names what is wrong beats a generic
symptom (a timeout, a reset connection) that only says some other rank failed.

>>> SIGNATURES["hccl.ej0001"].category
'hccl-stale-process'
>>> len(CATALOG) >= 45
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

CATEGORIES = (
    "port-in-use", "privileged-port", "master-unreachable", "name-resolution", "hostname-loopback",
    "wrong-interface", "address-family", "firewall", "rendezvous", "store-timeout", "launch-args",
    "version-mismatch", "shm", "memlock", "rdma", "fabric", "mtu", "p2p", "device-mapping", "oom",
    "hccl-timeout", "hccl-port", "hccl-stale-process", "hccl-link", "ssh", "hostfile", "unknown",
)


@dataclass(frozen=True)
class Signature:
    """One known failure: the regexes that recognise its log line and what to do about it."""

    id: str
    category: str
    patterns: tuple[str, ...]
    cause: str
    fix: str
    checks: tuple[str, ...]
    source: str
    weight: int = 50
    root_cause: bool = True
    near: tuple[str, ...] = ()  # one of these must occur in the line or the 3 lines before it
    when: Callable[[re.Match[str]], bool] | None = None  # extra condition on the match
    compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    compiled_near: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", tuple(re.compile(p) for p in self.patterns))
        object.__setattr__(self, "compiled_near", tuple(re.compile(p, re.IGNORECASE) for p in self.near))

    def search(self, line: str) -> re.Match[str] | None:
        """The first pattern match in ``line`` that also satisfies ``when`` (None when there is none)."""
        for pattern in self.compiled:
            m = pattern.search(line)
            if m and (self.when is None or self.when(m)):
                return m
        return None


def _more_workers(m: re.Match[str]) -> bool:
    return int(m.group("workers")) > int(m.group("world"))


def _not_more_workers(m: re.Match[str]) -> bool:
    return not _more_workers(m)


_BARRIER = (r"store based barrier (?:on|to initialize process group for) rank:? ?\d+, (?:for )?key: \S+ "
            r"\(world_size=(?P<world>\d+), worker_count=(?P<workers>\d+), timeout=[0-9:]+\)")
_MASTER = ("net.master_resolution", "net.reachability", "firewall.rules")
_HOSTS_FIX = "preflight run --hosts hosts.yaml verifies SSH to every host (ssh.connect)"

CATALOG: tuple[Signature, ...] = (
    # --- ports ---------------------------------------------------------------------------------
    Signature(
        "c10d.port_in_use", "port-in-use",
        (r"server socket has failed to (?:bind|listen)[^\n]*errno: 98 - Address already in use",
         r"errno: 98 - Address already in use"),
        "MASTER_PORT is already taken on the master: another job (or a leftover process of the last "
        "run) listens on it, so the TCPStore cannot bind and the launch fails at once.",
        "Free the port (`ss -ltnp 'sport = :PORT'` names the holder; kill it) or pick another MASTER_PORT "
        "(--master-port) on every node.",
        ("ports.listening", "net.reachability"),
        "https://github.com/showlab/Tune-A-Video/issues/90", weight=80),
    Signature(
        "c10d.privileged_port", "privileged-port",
        (r"errno: 13 - Permission denied", r"\[Errno 13\] Permission denied"),
        "The port to bind is below 1024 (a privileged port) and the process is not root: bind() is "
        "refused with EACCES.",
        "Use a MASTER_PORT in 1024-65535 (29500 is torch's default), or run as root / grant "
        "CAP_NET_BIND_SERVICE.",
        ("ports.listening", "net.reachability"),
        "https://github.com/LevyHsu/CF-Cannon/issues/6", weight=75,
        near=(r"bind", r"listen", r"server socket")),
    # --- master address ------------------------------------------------------------------------
    Signature(
        "c10d.connect_timed_out", "master-unreachable",
        (r"client socket has failed to connect to \S+ \(errno: 110 - Connection timed out\)",),
        "The ranks cannot reach MASTER_ADDR:MASTER_PORT: the address is wrong (not the master's), not "
        "routed from this node, or packets are dropped on the way.",
        "Set MASTER_ADDR to an address of the master every node reaches (`getent ahosts MASTER_ADDR` on "
        "each node), and open MASTER_PORT on the master's firewall.",
        _MASTER, "https://github.com/hiyouga/LlamaFactory/issues/3715", weight=45),
    Signature(
        "c10d.connect_any_failed", "master-unreachable",
        (r"client socket has failed to connect to any network address of \(",),
        "No address of MASTER_ADDR accepted the connection: wrong or unresolvable MASTER_ADDR, nothing "
        "listening on the master yet (rank 0 died), or a firewall in between.",
        "Check MASTER_ADDR resolves to the master on every node and that rank 0 is up and listening on "
        "MASTER_PORT.",
        _MASTER, "https://github.com/hpcaitech/Open-Sora/issues/667", weight=38),
    Signature(
        "c10d.client_timed_out", "master-unreachable",
        (r"client socket has timed out after \d+m?s while trying to connect to",),
        "The client kept retrying to reach the store on MASTER_ADDR:MASTER_PORT until its connect timeout "
        "ran out: the master is not listening there, not reachable, or the packets are dropped.",
        "Verify MASTER_ADDR/MASTER_PORT point at the node running rank 0 and that the port is reachable "
        "(`nc -vz MASTER_ADDR MASTER_PORT` from a worker).",
        _MASTER, "https://github.com/ModelTC/LightCompress/issues/365", weight=40),
    Signature(
        "c10d.store_connect_timed_out", "master-unreachable",
        (r"connect\(\) timed out\. Original timeout was \d+ ms",),
        "The agent could not open a TCP connection to the rendezvous store within the c10d connect "
        "timeout: the endpoint is wrong, not listening, or filtered.",
        "Point --rdzv-endpoint / MASTER_ADDR at a reachable address of the store host and open its port.",
        _MASTER, "https://github.com/pytorch/pytorch/issues/69197", weight=40),
    Signature(
        "c10d.address_not_available", "master-unreachable",
        (r"client socket has failed to connect to \S+ \(errno: 99 - Cannot assign requested address\)",
         r"client socket has failed to connect to \S+ \(system error: 10049"),
        "The store address cannot be connected to from here (EADDRNOTAVAIL): MASTER_ADDR or the host name "
        "resolves to an address that is not usable (0.0.0.0, an address of another network), or the local "
        "ephemeral ports are exhausted by quick restarts on the same port.",
        "Set MASTER_ADDR to the master's routable IP (not a name that resolves to 0.0.0.0/localhost), and "
        "use a fresh MASTER_PORT between quick restarts.",
        _MASTER + ("sysctl.port_range",), "https://github.com/pytorch/PiPPy/issues/158", weight=45),
    # --- names ---------------------------------------------------------------------------------
    Signature(
        "c10d.name_resolution", "name-resolution",
        (r"network addresses of \(.+?, \d+\) cannot be retrieved \(gai error: -?\d+ - "
         r"(?:Name or service not known|nodename nor servname provided, or not known|"
         r"Temporary failure in name resolution|No address associated with hostname)",),
        "A host name used for the rendezvous (MASTER_ADDR or this node's own name) does not resolve on "
        "this node.",
        "Use an IP address as MASTER_ADDR, or add the name to DNS / /etc/hosts on every node.",
        ("net.master_resolution", "net.hostname"), "https://github.com/Vchitect/VBench/issues/107", weight=55),
    Signature(
        "gloo.hostname_unresolvable", "name-resolution",
        (r"rp != nullptr\. Unable to find address for: \S+",),
        "gloo binds to the address of this node's host name, and the name does not resolve.",
        "Map the host name to the node's training address in /etc/hosts (or DNS), or set "
        "GLOO_SOCKET_IFNAME to the training interface.",
        ("net.hostname",), "https://github.com/msr-fiddle/pipedream/issues/32", weight=70),
    Signature(
        "gloo.loopback_fallback", "hostname-loopback",
        (r"Unable to resolve hostname to a \(local\) address\. Using the loopback address as fallback",),
        "This node's host name does not resolve to a routable address, so gloo binds to loopback and the "
        "other nodes cannot connect to it.",
        "Map the host name to the node's training IP in /etc/hosts (not 127.0.1.1), or set "
        "GLOO_SOCKET_IFNAME=<training interface>.",
        ("net.hostname", "net.interface"), "https://github.com/vllm-project/vllm/issues/7074", weight=72),
    Signature(
        "gloo.connect_loopback", "hostname-loopback",
        (r"connect \[127\.0\.[01]\.1\]:\d+: Connection refused", r"remote=\[127\.0\.[01]\.1\]:\d+"),
        "A peer advertised a loopback address (127.0.1.1 / 127.0.0.1): its host name resolves to "
        "loopback (Debian's /etc/hosts default), so the other ranks connect to themselves.",
        "On every node map `hostname` to its real address in /etc/hosts (remove the 127.0.1.1 line) or set "
        "GLOO_SOCKET_IFNAME to the training interface.",
        ("net.hostname",), "https://github.com/pytorch/pytorch/issues/15592", weight=72),
    # --- interfaces and address family ---------------------------------------------------------
    Signature(
        "gloo.ifname_not_found", "wrong-interface",
        (r"ifa != nullptr\. Unable to find (?:address|interface) for: \S+",),
        "GLOO_SOCKET_IFNAME names no interface of this node (gloo takes one exact interface name, not "
        "NCCL's prefix or ^exclude syntax).",
        "Set GLOO_SOCKET_IFNAME to an existing interface name of this node (`ip -br addr`).",
        ("net.interface",), "https://github.com/aws-samples/aws-do-eks/pull/51", weight=75),
    Signature(
        "nccl.no_socket_interface", "wrong-interface",
        (r"Bootstrap : no socket interface found", r"no NCCL_SOCKET_IFNAME interface found",
         r"NET/Socket : No usable listening interface found"),
        "NCCL_SOCKET_IFNAME (or its default filter) matches no usable interface on this node.",
        "Set NCCL_SOCKET_IFNAME to the training interface (`eth0`, a prefix `eth`, or `=eth0` for an "
        "exact name) as it is named on every node.",
        ("net.interface",), "https://github.com/marin-community/marin/issues/6940", weight=75),
    Signature(
        "nccl.bad_socket_family", "wrong-interface",
        (r"ncclSocketInit: connecting to address .*with family \d+ is neither AF_INET",),
        "NCCL found no interface for NCCL_SOCKET_IFNAME and went on with an empty address.",
        "Set NCCL_SOCKET_IFNAME to an interface that exists on this node.",
        ("net.interface",), "https://github.com/NVIDIA/nccl/issues/1837", weight=70),
    Signature(
        "gloo.connect_full_mesh", "wrong-interface",
        (r"Gloo connectFullMesh failed",),
        "gloo could not connect every pair of ranks: usually a rank advertised an address the others "
        "cannot reach (loopback, a docker bridge, the wrong NIC).",
        "Set GLOO_SOCKET_IFNAME to the interface that carries the training network on every node.",
        ("net.interface", "net.hostname", "net.reachability"),
        "https://github.com/sgl-project/sglang/issues/3226", weight=25, root_cause=False),
    Signature(
        "nccl.address_family", "address-family",
        (r"Socket creation failed : Address family not supported by protocol",),
        "NCCL picked an interface address of a family (IPv6 / IPv4) the node cannot use; nodes may disagree "
        "on the family.",
        "Use one address family on every node: set NCCL_SOCKET_FAMILY=AF_INET (or AF_INET6) and an "
        "interface that has such an address.",
        ("net.address_family", "net.interface"), "https://github.com/NVIDIA/nccl/issues/210", weight=65),
    Signature(
        "c10d.address_family", "address-family",
        (r"errno: 97 - Address family not supported by protocol",),
        "The store address resolved to a family (IPv6 / IPv4) this node cannot open a socket for.",
        "Use an IPv4 (or IPv6) literal as MASTER_ADDR, or make the name resolve to the family every node "
        "has.",
        ("net.address_family", "net.master_resolution"),
        "https://github.com/sgl-project/sglang/issues/2561", weight=65),
    # --- firewall ------------------------------------------------------------------------------
    Signature(
        "c10d.no_route_to_host", "firewall",
        (r"errno: 113 - No route to host",),
        "EHOSTUNREACH on a host that is up: firewalld/iptables REJECT with icmp-host-prohibited (the "
        "default reject of firewalld), or no route to it.",
        "Open MASTER_PORT (and the ephemeral ports NCCL/gloo use) between the nodes: "
        "`firewall-cmd --add-port=PORT/tcp` or remove the REJECT rule.",
        ("firewall.rules", "net.reachability"), "https://github.com/pytorch/pytorch/issues/85300", weight=60),
    Signature(
        "nccl.no_route_to_host", "firewall",
        (r"returned 113\(No route to host\)", r"Connect to \S+ failed : No route to host"),
        "NCCL's bootstrap/proxy connection was rejected with EHOSTUNREACH: a firewall REJECT rule "
        "(firewalld's icmp-host-prohibited) between the nodes.",
        "Allow TCP between the nodes on the ephemeral range NCCL uses (or all ports on the training "
        "network) in firewalld/iptables.",
        ("firewall.rules", "net.reachability"), "https://github.com/sgl-project/sglang/issues/3820", weight=60),
    Signature(
        "nccl.connection_abort", "firewall",
        (r"Software caused connection abort",),
        "ECONNABORTED while connecting to a peer: a firewall or middlebox tore the connection down.",
        "Disable or open the host firewall between the nodes (ufw/firewalld/iptables) and retry.",
        ("firewall.rules", "firewall.state", "net.reachability"),
        "https://github.com/NVIDIA/nccl-tests/issues/166", weight=55),
    Signature(
        "nccl.connect_refused", "firewall",
        (r"connect to \S+ returned Connection refused", r"Call to connect returned Connection refused"),
        "A peer refused NCCL's connection on its bootstrap/proxy port: a REJECT (tcp-reset) rule, or the "
        "peer process is gone.",
        "Allow TCP between the nodes on NCCL's ports (ephemeral range) and check the peer rank is alive.",
        ("firewall.rules", "net.reachability"),
        "https://github.com/kwsong0113/diffusion-forcing-transformer/issues/31", weight=45),
    Signature(
        "nccl.connect_timed_out", "firewall",
        (r"Call to connect (?:returned|failed :) Connection timed out",),
        "NCCL's TCP connect to a peer never completed: the SYNs are dropped (firewall DROP rule or a "
        "black-holed route on the chosen interface).",
        "Open the ports between the nodes or choose the right NIC with NCCL_SOCKET_IFNAME.",
        ("firewall.rules", "net.interface", "net.reachability"),
        "https://github.com/Oneflow-Inc/oneflow/issues/3586", weight=45),
    # --- rendezvous / store --------------------------------------------------------------------
    Signature(
        "rdzv.timeout", "rendezvous",
        (r"RendezvousTimeoutError",),
        "Not all nodes joined the rendezvous in time (--nnodes more than started, a node could not reach "
        "the endpoint, or started too late).",
        "Start every node with the same --nnodes/--rdzv-id/--rdzv-endpoint; look at the node that never "
        "joined (its log names the cause).",
        ("net.reachability", "net.master_resolution", "os.clock"),
        "https://github.com/facebookresearch/av_hubert/issues/19", weight=22, root_cause=False),
    Signature(
        "rdzv.closed", "rendezvous",
        (r"RendezvousClosedError",),
        "The rendezvous was closed: another agent finished or gave up (a failed node, max restarts "
        "reached, or a previous run with the same --rdzv-id).",
        "Use a fresh --rdzv-id per job and find the agent that closed it (the first node that failed).",
        ("net.reachability",), "https://github.com/pytorch/pytorch/issues/116974", weight=30),
    Signature(
        "rdzv.connection_error", "rendezvous",
        (r"RendezvousConnectionError: The connection to the C10d store has failed",),
        "The agent could not connect to the c10d rendezvous store at --rdzv-endpoint.",
        "Make --rdzv-endpoint an address:port of the first node that every node reaches, and open that "
        "port.",
        _MASTER, "https://github.com/pytorch/pytorch/issues/64926", weight=30),
    Signature(
        "store.wait_clients_timeout", "store-timeout",
        (r"Timed out after \d+ seconds waiting for (?:clients|workers)\. \d+/\d+ (?:clients|workers) joined",),
        "The TCPStore on the master waited for all ranks and some never connected (they could not reach "
        "MASTER_ADDR:MASTER_PORT, crashed, or were never started).",
        "Look at the ranks that did not join: check MASTER_ADDR/PORT reachability from them and the world "
        "size you launched with.",
        _MASTER, "https://github.com/Liuziyu77/Visual-RFT/issues/123", weight=20, root_cause=False),
    Signature(
        "store.barrier_timeout", "store-timeout",
        (_BARRIER,),
        "The store-based barrier of init_process_group timed out: fewer ranks than world_size arrived.",
        "Find the ranks that never reached init_process_group (crash, unreachable master, slow start) and "
        "raise the timeout only if they are just slow.",
        _MASTER, "https://github.com/neu-vi/ezflow/issues/194", weight=20, root_cause=False,
        when=_not_more_workers),
    Signature(
        "store.socket_timeout", "store-timeout",
        (r"DistStoreError: Socket Timeout", r"RuntimeError: Socket Timeout"),
        "A TCPStore read timed out: the key was never written because another rank (usually rank 0) "
        "failed or is stuck.",
        "Look at the other ranks' logs (rank 0 first) for the real error.",
        _MASTER, "https://github.com/alibaba/Pai-Megatron-Patch/issues/468", weight=15, root_cause=False),
    Signature(
        "nccl.unique_id_timeout", "store-timeout",
        (r"retr[e]?i[e]?ving ncclUniqueId from \[\d+\] via c10d key-value store by key '[^']*', but "
         r"store->get\('[^']*'\) got error: Socket Timeout",),
        "Rank 0 never published the NCCL unique id in the store: rank 0 failed or hangs before creating "
        "its communicator.",
        "Read rank 0's log for the real error; check it started and reached init_process_group.",
        _MASTER, "https://github.com/zai-org/ChatGLM-6B/issues/1232", weight=18, root_cause=False),
    Signature(
        "nccl.watchdog_timeout", "fabric",
        (r"Watchdog caught collective operation timeout: WorkNCCL\(",),
        "A collective did not complete within the process-group timeout: some rank never entered it "
        "(crashed, stuck elsewhere) or the network between the ranks stalls.",
        "Find the rank that is not in the collective (its log has the first error); test the links with "
        "`preflight run --checks allreduce`.",
        ("net.reachability", "firewall.rules", "allreduce"),
        "https://github.com/XPixelGroup/BasicSR/issues/737", weight=15, root_cause=False),
    Signature(
        "gloo.connection_reset", "fabric",
        (r"Read error \[[^\]]+\]:\d+: Connection reset by peer", r"Connection closed by peer \["),
        "The peer at that address closed its gloo connection: that rank exited (look at its log) or the "
        "network dropped it.",
        "Read the log of the rank at the named address first; it usually failed before this one.",
        ("net.reachability",), "https://github.com/kvcache-ai/Mooncake/issues/842", weight=8, root_cause=False),
    # --- launch arguments ----------------------------------------------------------------------
    Signature(
        "launch.more_workers_than_world", "launch-args",
        (_BARRIER,),
        "More processes joined the store than world_size: two launches share MASTER_ADDR:MASTER_PORT, or "
        "nodes were started with a different --nnodes/--nproc-per-node/--node-rank (duplicate node rank).",
        "Give every job its own MASTER_PORT and start every node with the same --nnodes and "
        "--nproc-per-node and a unique --node-rank 0..nnodes-1.",
        ("ports.listening",), "https://github.com/tczhangzhi/pytorch-distributed/issues/18", weight=78,
        when=_more_workers),
    Signature(
        "nccl.invalid_rank", "launch-args",
        (r"Invalid rank requested : \d+/\d+",),
        "A rank number is not below the world size: --nnodes/--nproc-per-node/--node-rank (or "
        "WORLD_SIZE/RANK) disagree between the nodes.",
        "Launch every node with the same --nnodes and --nproc-per-node, node ranks 0..nnodes-1.",
        ("npu.count",), "https://github.com/jeffffffli/HybrIK/issues/47", weight=78),
    # --- versions ------------------------------------------------------------------------------
    Signature(
        "nccl.size_mismatch", "version-mismatch",
        (r"receiving \d+ bytes instead of \d+",),
        "Two ranks disagree on the message size of the same operation: different NCCL (or torch) versions "
        "or different NCCL settings on the nodes.",
        "Install the same torch/NCCL build on every node and use the same NCCL_* environment.",
        ("versions", "versions.nccl"), "https://github.com/NVIDIA/nccl/issues/1328", weight=65),
    Signature(
        "nccl.collective_mismatch", "version-mismatch",
        (r"collective mismatch error, local size \d+ remote size \d+",),
        "The two ends of a NET/IB transfer have different sizes: mismatched NCCL versions or "
        "configuration between the nodes (or ranks calling different collectives).",
        "Use the same NCCL/torch build and NCCL_* settings on every node.",
        ("versions", "versions.nccl"), "https://github.com/NVIDIA/nccl/issues/969", weight=60),
    Signature(
        "torch_npu.undefined_symbol", "version-mismatch",
        (r"libtorch_npu\.so: undefined symbol", r"torch[-_]npu\S*\s*导入时报错\s*undefined symbol",
         r"torch_npu\S* .*undefined symbol"),
        "torch_npu was built for another CANN (or torch) release than the one installed: a symbol it needs "
        "is missing.",
        "Install the torch_npu build that matches the node's CANN and torch (Ascend/pytorch's version "
        "table) on every node.",
        ("versions", "versions.torch_npu_compat"), "https://github.com/vllm-project/vllm-ascend/issues/117",
        weight=65),
    # --- memory limits -------------------------------------------------------------------------
    Signature(
        "nccl.shm_extend_failed", "shm",
        (r"failed to extend /dev/shm/\S+ to \d+ bytes", r"Error while creating shared memory segment /dev/shm"),
        "/dev/shm is too small (docker's 64 MB default) for NCCL's shared-memory transport.",
        "Run the container with --shm-size=1g (or --ipc=host), or enlarge /dev/shm "
        "(`mount -o remount,size=8G /dev/shm`).",
        ("os.shm",), "https://github.com/pytorch/ci-infra/pull/490", weight=75),
    Signature(
        "nccl.shm_open_denied", "shm",
        (r"Call to shm_open failed : Permission denied",),
        "NCCL cannot create its segments in /dev/shm: wrong permissions on /dev/shm.",
        "`chmod 1777 /dev/shm` (it must be world-writable with the sticky bit).",
        ("os.shm",), "https://github.com/NVIDIA/nccl/issues/328", weight=72),
    Signature(
        "nccl.ibv_reg_mr_failed", "memlock",
        (r"Call to ibv_reg_mr\w* failed(?: with error)? Cannot allocate memory",),
        "RDMA memory registration failed: the locked-memory limit (ulimit -l) is too low for NCCL's "
        "buffers.",
        "Set memlock to unlimited: `* soft memlock unlimited` / `* hard memlock unlimited` in "
        "/etc/security/limits.conf (docker: --ulimit memlock=-1), then log in again.",
        ("os.memlock",), "https://github.com/NVIDIA/nccl-tests/issues/206", weight=72),
    # --- RDMA / fabric -------------------------------------------------------------------------
    Signature(
        "nccl.no_ib_device", "rdma",
        (r"NET/IB : No device found",),
        "NCCL found no InfiniBand/RoCE device and falls back to TCP sockets (expected only on nodes "
        "without RDMA NICs).",
        "If the nodes have RDMA NICs: load the drivers (mlx5_ib), pass /dev/infiniband into the "
        "container and check `ibv_devices`.",
        ("hccn.link",), "https://github.com/NVIDIA/nccl/issues/952", weight=12, root_cause=False),
    Signature(
        "nccl.no_libibverbs", "rdma",
        (r"Failed to open libibverbs\.so",),
        "libibverbs is not installed in the job's environment, so NCCL cannot use RDMA and falls back to "
        "sockets.",
        "Install rdma-core/libibverbs (ibverbs-providers) in the image if the nodes have RDMA NICs.",
        ("hccn.link",), "https://github.com/horovod/horovod/issues/685", weight=12, root_cause=False),
    Signature(
        "nccl.ib_completion_error", "fabric",
        (r"NET/IB : Got completion from peer \S+ with (?:status=|error )\d+",),
        "An RDMA work request failed on the fabric (status 12 = transport retry counter exceeded: the "
        "peer or a link/switch port did not answer; 4/5 = local protection/flush after a failure).",
        "Check the links and switch ports between the named peers (`ibstat`, port counters) and the peer "
        "rank's health; rerun the all_reduce test.",
        ("hccn.link", "net.mtu", "allreduce"), "https://github.com/NVIDIA/nccl/issues/1405", weight=55),
    Signature(
        "nccl.ib_mtu_mismatch", "mtu",
        (r"local access violation work queue error", r"IBV_WC_LOC_LEN_ERR"),
        "RDMA work queue error that NCCL users traced to RoCE/IB ports with different MTUs on the two "
        "nodes.",
        "Set the same MTU on every RDMA port (`ip link set dev IF mtu 4200` / switch ports) and check "
        "`ibv_devinfo` active_mtu.",
        ("net.mtu", "hccn.link"), "https://github.com/NVIDIA/nccl/issues/1710", weight=60),
    Signature(
        "nccl.p2p_not_supported", "p2p",
        (r"peer access is not supported between these two devices",),
        "CUDA peer-to-peer access between the GPUs is not available (PCIe ACS / IOMMU, consumer GPUs, VMs) "
        "and the P2P transport fails or hangs.",
        "Set NCCL_P2P_DISABLE=1 (NCCL then uses shared memory), or disable ACS/enable iommu=pt in "
        "BIOS/kernel.",
        ("allreduce",), "https://github.com/ray-project/ray_lightning/issues/24", weight=65),
    # --- devices -------------------------------------------------------------------------------
    Signature(
        "nccl.duplicate_gpu", "device-mapping",
        (r"Duplicate GPU detected : rank \d+ and rank \d+ both on CUDA device \w+",),
        "Two ranks use the same GPU: the script does not call torch.cuda.set_device(LOCAL_RANK), or "
        "CUDA_VISIBLE_DEVICES / --nproc-per-node exceed the GPUs present.",
        "Call torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before init_process_group and keep "
        "--nproc-per-node <= GPUs per node.",
        ("npu.count",), "https://github.com/horovod/horovod/issues/3929", weight=80),
    Signature(
        "cuda.invalid_device_ordinal", "device-mapping",
        (r"CUDA error: invalid device ordinal", r"cuda runtime error \(101\) : invalid device ordinal"),
        "A rank asked for a GPU index that does not exist: --nproc-per-node is larger than the visible "
        "GPUs (CUDA_VISIBLE_DEVICES).",
        "Set --nproc-per-node to the number of visible GPUs on each node.",
        ("npu.count",), "https://github.com/cfzd/Ultra-Fast-Lane-Detection/issues/193", weight=78),
    Signature(
        "elastic.exit_sigkill", "oom",
        (r"failed \(exitcode: -9\) local_rank: \d+ \(pid: \d+\)",),
        "A worker was killed with SIGKILL (exit -9): almost always the kernel OOM killer (host memory), "
        "or the scheduler's memory limit.",
        "Check `dmesg | grep -i oom` on that node; reduce host memory use (dataloader workers, CPU "
        "offload) or add memory.",
        ("os.memory",), "https://github.com/xiaomi-research/time-r1/issues/9", weight=68),
    Signature(
        "elastic.signal9", "oom",
        (r"Signal 9 \(SIGKILL\) received by PID \d+",),
        "The launcher received SIGKILL: the OOM killer or the scheduler killed the job.",
        "Check `dmesg | grep -i oom` and the scheduler's memory limits on that node.",
        ("os.memory",), "https://github.com/modelscope/ms-swift/issues/7357", weight=62),
    # --- HCCL (Ascend) -------------------------------------------------------------------------
    Signature(
        "hccl.ei0006", "hccl-timeout",
        (r"EI0006", r"Getting socket times out"),
        "HCCL link setup timed out (EI0006): a remote rank did not connect within HCCL_CONNECT_TIMEOUT "
        "(120 s default) - it failed earlier, started late, or the device network between them is broken.",
        "Find the rank that failed first; if all ranks just start far apart raise HCCL_CONNECT_TIMEOUT; "
        "check device links (`hccn_tool -i N -link -g`) and TLS consistency.",
        ("hccn.reachability", "hccn.link", "npu.processes"),
        "https://github.com/vllm-project/vllm-ascend/issues/486", weight=35),
    Signature(
        "hccl.link_establish_timeout", "hccl-link",
        (r"wait socket establish timeout, role\[\d+\] rank\[\d+\] timeout\[\d+(?: ?s)?\]",),
        "HCCL could not establish the socket link to a peer rank within HCCL_CONNECT_TIMEOUT.",
        "Check the peer's device IP is reachable (`hccn_tool -i N -ping -g address PEER_IP`), link UP and "
        "TLS equal on both ends.",
        ("hccn.reachability", "hccn.link", "hccn.ip"),
        "https://github.com/vllm-project/vllm-ascend/issues/1955", weight=40),
    Signature(
        "hccl.link_no_connect", "hccl-link",
        (r"\|\s*[0-9a-fA-F.:]+\(\d+\)\s*\|.*\|\s*(?:server|client)\s*\|\s*(?:no connect|time out)\s*\|",),
        "HCCL's LINK_ERROR_INFO table: the link to that device IP never connected (device network down, "
        "TLS switch different on the two ends, or the peer not started).",
        "Compare `hccn_tool -i N -tls -g` on both devices, check link and ping between the device IPs.",
        ("hccn.link", "hccn.reachability"),
        "https://hiascend.com/document/detail/zh/canncommercial/80RC3/developmentguide/hccl/hcclug/"
        "hcclug_000055.html", weight=45),
    Signature(
        "hccl.ej0003", "hccl-port",
        (r"EJ0003", r"Failed to bind the IP port\. Reason: The IP address and port have been bound already",
         r"host nic listen start failed, port\[\d+\]"),
        "HCCL's host port (HCCL_IF_BASE_PORT, 60000 by default) is already bound: another job on the node "
        "or an ephemeral connection took it.",
        "Reserve the HCCL ports (`sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015`), give each job "
        "on a node its own HCCL_IF_BASE_PORT, and kill leftover processes.",
        ("ports.listening", "ports.reserved"), "https://github.com/vllm-project/vllm-ascend/issues/405",
        weight=80),
    Signature(
        "hccl.listen_failed", "hccl-port",
        (r"listen on ip\[[^\]]*\] and specific port\[\d+\] fail",),
        "HCCL could not listen on its port: the port is used by another process.",
        "Free the port or move HCCL to a free, reserved range (HCCL_IF_BASE_PORT / "
        "HCCL_HOST_SOCKET_PORT_RANGE).",
        ("ports.listening", "ports.reserved"), "https://github.com/vllm-project/vllm-ascend/issues/4725",
        weight=76),
    Signature(
        "hccl.recv_unmatched_ack", "hccl-port",
        (r"Recv unmatched ack",),
        "HCCL connected to the wrong server: its port was taken by another process (often an ephemeral "
        "connection) because the range is not reserved.",
        "Reserve HCCL's ports: `sysctl -w net.ipv4.ip_local_reserved_ports=60000-60015` (or your "
        "HCCL_IF_BASE_PORT range).",
        ("ports.reserved", "ports.listening"),
        "https://www.hiascend.com/doc_center/source/zh/CANNCommunityEdition/81RC1beta1/hccl/hcclug/"
        "hcclug_000036.html", weight=66),
    Signature(
        "hccl.ej0001", "hccl-stale-process",
        (r"EJ0001", r"Failed to initialize the HCCP process"),
        "The NPU is still held by the previous training process (EJ0001): HCCP cannot start.",
        "Kill the leftover processes (`npu-smi info` lists them), wait ~10 s and start again.",
        ("npu.processes",), "https://github.com/hiyouga/LlamaFactory/issues/3839", weight=85),
    # --- launcher ------------------------------------------------------------------------------
    Signature(
        "ssh.connect_failed", "ssh",
        (r"ssh: connect to host \S+ port \d+: (?:Connection refused|No route to host|Connection timed out)",),
        "The launcher (pdsh/ssh of DeepSpeed, mpirun) cannot open SSH to a host: sshd not running, wrong "
        "port, or filtered.",
        f"Start sshd / use the right --ssh_port and allow it in the firewall; {_HOSTS_FIX}.",
        ("os",), "https://github.com/deepspeedai/DeepSpeedExamples/issues/894", weight=72),
    Signature(
        "ssh.permission_denied", "ssh",
        (r"Permission denied \((?:publickey|password|keyboard-interactive|gssapi)[^)]*\)",),
        "Passwordless SSH from the launch node to this host is not set up (key not authorised).",
        f"ssh-copy-id to every host (including localhost for the launch node); {_HOSTS_FIX}.",
        ("os",), "https://github.com/deepspeedai/DeepSpeed/issues/5709", weight=72),
    Signature(
        "ssh.not_reachable", "ssh",
        (r"was not reachable via ssh",),
        "DeepSpeed's launcher could not run `ssh host hostname` on a host of the hostfile.",
        f"Set up passwordless SSH to every host of the hostfile; {_HOSTS_FIX}.",
        ("os",), "https://github.com/hpcac/2023-APAC-HPC-AI/issues/1", weight=70),
    Signature(
        "hostfile.missing", "hostfile",
        (r"Unable to find hostfile, will proceed with training with local resources only",),
        "DeepSpeed found no hostfile (default /job/hostfile) and runs on this node only: the other nodes "
        "are never started and a multi-node job hangs or runs single-node.",
        "Pass --hostfile=FILE (lines `host slots=N`) that exists on the launch node.",
        (), "https://github.com/deepspeedai/DeepSpeedExamples/issues/575", weight=60),
    Signature(
        "hostfile.bad_entry", "hostfile",
        (r"Hostfile contains a bad entry",),
        "A hostfile line is not `hostname slots=N`.",
        "Fix the hostfile: one `hostname slots=N` per line.",
        (), "https://github.com/deepspeedai/DeepSpeed/issues/3669", weight=65),
)

SIGNATURES: dict[str, Signature] = {s.id: s for s in CATALOG}
