"""Known failure signatures, part one: where the job connects and how its ranks meet (ports, the master
address, names, interfaces, firewalls, the rendezvous store, the launch arguments). See ``catalog``."""

from __future__ import annotations

import re

from preflight.explain.signature import Signature


def _more_workers(m: re.Match[str]) -> bool:
    return int(m.group("workers")) > int(m.group("world"))


def _not_more_workers(m: re.Match[str]) -> bool:
    return not _more_workers(m)


_BARRIER = (r"store based barrier (?:on|to initialize process group for) rank:? ?\d+, (?:for )?key: \S+ "
            r"\(world_size=(?P<world>\d+), worker_count=(?P<workers>\d+), timeout=[0-9:]+\)")
_MASTER = ("net.master_resolution", "net.reachability", "firewall.rules")

NETWORK: tuple[Signature, ...] = (
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
        _MASTER + ("sysctl.port_range",), "https://github.com/pytorch/PiPPy/issues/158", weight=45,
        # round 23: beside getaddrinfo's EAI_ADDRFAMILY the unusable address is one of the wrong family
        unless=(r"\bAddress family for hostname not supported\b",)),
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
        (r"RendezvousConnectionError: The connection to the C10d store has failed",
         r"The connection to the C10d store has failed",),  # round 5: also quoted without the exception's name
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
        (r"DistStoreError: Socket Timeout", r"RuntimeError: Socket Timeout",
         r"DistStoreError: wait timeout after \d+ms, keys: "),  # torch 2.5+ (pytorch/pytorch#131808)
        "A TCPStore read timed out: the key was never written because another rank (usually rank 0) "
        "failed or is stuck.",
        "Look at the other ranks' logs (rank 0 first) for the real error.",
        _MASTER, "https://github.com/alibaba/Pai-Megatron-Patch/issues/468", weight=15, root_cause=False),
    Signature(
        "nccl.unique_id_timeout", "store-timeout",
        (r"retr[e]?i[e]?ving ncclUniqueId from \[\d+\] via c10d key-value store by key '[^']*', but "
         r"store->get\('[^']*'\) got error: (?:Socket Timeout|wait timeout after \d+ms)",),
        "Rank 0 never published the NCCL unique id in the store: rank 0 failed or hangs before creating "
        "its communicator.",
        "Read rank 0's log for the real error; check it started and reached init_process_group.",
        _MASTER, "https://github.com/zai-org/ChatGLM-6B/issues/1232", weight=18, root_cause=False),
    Signature(
        "nccl.watchdog_timeout", "fabric",
        (r"Watchdog caught collective operation timeout: WorkNCCL\(",),
        "A collective did not complete within the process-group timeout: some rank never entered it "
        "(crashed, stuck elsewhere), the network between the ranks stalls, or work queued before it on this "
        "rank's GPU (a long or hung kernel) ran past the timeout.",
        "Find the rank that is not in the collective (its log has the first error); test the links with "
        "`preflight run --checks allreduce`. If every rank is in it and the links are fine, look for a kernel "
        "that runs longer than the timeout (`py-spy dump`, the flight recorder's dump).",
        ("net.reachability", "firewall.rules", "allreduce"),
        "https://github.com/XPixelGroup/BasicSR/issues/737", weight=15, root_cause=False),
    Signature(
        "torch_npu.watchdog_timeout", "fabric",
        (r"Watchdog caught collective operation timeout: WorkHCCL\(",
         r"HCCL watchdog thread terminated with exception"),
        "A collective did not complete within the process-group timeout (torch_npu's ProcessGroupHCCL "
        "watchdog, the NPU counterpart of NCCL's): some rank never entered it (crashed, stuck elsewhere) or the "
        "device network between the ranks stalls.",
        "Find the rank that is not in the collective (its log and plog have the first error); check the device "
        "links (`hccn_tool -i N -link -g`) and ping between the device IPs.",
        ("npu.processes", "hccn.link", "hccn.reachability"),
        "https://github.com/vllm-project/vllm-ascend/issues/382", weight=15, root_cause=False),
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
        (r"Invalid rank requested(?: : \d+/\d+)?",),
        "A rank number is not below the world size: --nnodes/--nproc-per-node/--node-rank (or "
        "WORLD_SIZE/RANK) disagree between the nodes.",
        "Launch every node with the same --nnodes and --nproc-per-node, node ranks 0..nnodes-1.",
        ("gpu.devices.count", "nccl.visible_devices"), "https://github.com/jeffffffli/HybrIK/issues/47", weight=78),
    # --- round 5 (the spent frozen3 set, folded) ------------------------------------------------------------------
    Signature(
        "nccl.connect_network_unreachable", "wrong-interface",
        (r"NCCL WARN [^\n]*connect to \S+ failed\s*:\s*Network is unreachable",
         r"NCCL WARN [^\n]*connect[^\n]*\bENETUNREACH\b|NCCL WARN [^\n]*connect[^\n]*failed with error Network is "
         r"unreachable"),
        "A NCCL socket connect found no route to the peer's address (ENETUNREACH - not refused, not filtered): this "
        "host has no interface on the network the address belongs to, so the ranks picked interfaces or "
        "addresses on different networks.",
        "Set NCCL_SOCKET_IFNAME to an interface on the network every node shares (`ip -br addr` on each), or fix "
        "the routes between those networks.",
        ("net.interface",), "https://github.com/mindspore-ai/docs/blob/010322b13f6e39c9e1b4b1f806e8d7eb847f9001/"
        "docs/mindspore/source_zh_cn/faq/distributed_configure.md", weight=64),
    # --- round 15 (the spent frozen10 set, folded) -----------------------------------------------------------
    Signature(
        # NCCL's socket connect (socketStartConnect / socketConnect) to a loopback address: a peer advertised lo
        "nccl.connect_loopback", "wrong-interface",
        (r"\bsocket(?:Start)?Connect: Connect to 127\.\d{1,3}\.\d{1,3}\.\d{1,3}<\d+> failed",
         # round 23: NCCL 2.2x's ncclOsSocket{Start,Poll}Connect: "connect to 127.0.0.1<52243> returned Connection
         # refused, retrying"
         r"\bncclOsSocket(?:Start|Poll)?Connect: connect to 127\.\d{1,3}\.\d{1,3}\.\d{1,3}<\d+> returned"),
        "NCCL connected to a loopback address (127.x) for a peer: that peer's NCCL advertised its lo interface "
        "(NCCL_SOCKET_IFNAME=lo, or no other usable interface), which no other host can reach.",
        "Set NCCL_SOCKET_IFNAME on every node to the interface the hosts share (`ip -br addr`), never lo for a "
        "multi-node job.", ("net.interface",), "https://github.com/awslabs/awsome-distributed-ai/issues/192",
        weight=80),
    # --- round 9 (the spent frozen6 set, folded) -------------------------------------------------------------
    Signature(
        "envoy.rbac_denied", "firewall",
        # Envoy's RBAC filter (source/extensions/filters/common/rbac/utility.cc): the response / connection
        # termination detail ("_{}" before 1.17, "[{}]" since), and the HTTP body it answers with
        (r"\brbac_access_denied_matched_policy[\[_]", r"\bRBAC: access denied\b"),
        "A service-mesh sidecar (Istio's Envoy) denied the connection by an authorization policy: the ranks' "
        "rendezvous / store / NCCL traffic between pods is intercepted and refused.",
        "Keep the mesh out of the training pods (`sidecar.istio.io/inject: \"false\"` on the job's pod template), or "
        "add an AuthorizationPolicy that allows the master port and the collective ports between them.",
        ("firewall.rules", "net.reachability"), "https://github.com/kubeflow/trainer/issues/1634", weight=70),
    # --- round 23 (the spent frozen13 set, folded) -----------------------------------------------------------
    Signature(
        "c10d.gai_address_family", "address-family",
        # getaddrinfo's EAI_ADDRFAMILY (-9), gai_strerror "Address family for hostname not supported", as c10d's
        # socket.cpp prints it: an IPv6-only name or address (::) asked for its IPv4 addresses, or the reverse
        (r"\bgai error: -9 - Address family for hostname not supported",
         r"\bAddress family for hostname not supported\b"),
        "The master's name or address has no address of the family the socket asked for: an IPv6 address or "
        "wildcard (::) used where the store or client resolves IPv4 only (or an IPv4 name on an IPv6-only path).",
        "Give MASTER_ADDR an address of the family every node uses (an IPv4 address such as 10.0.0.1 rather than "
        "::), or make the name resolve to both families; set the store's family consistently on all ranks.",
        ("net.master_resolution",), "https://github.com/meta-pytorch/monarch/pull/232", weight=82),
    Signature(
        "net.ipv6_link_local_master", "address-family",
        # a head / master address that is an IPv6 link-local one (fe80::/10): valid only on one link with a zone
        # (%eth0), which c10d / NCCL / Ray peers cannot use as a plain address
        (r"(?i:\b(?:head node|master[_ ]?addr(?:ess)?|host[_ ]?ip|driver ip)\b)\W{0,4}\[?fe80:[0-9a-fA-F:]*",),
        "The address chosen for the head / master is an IPv6 link-local address (fe80::...), found by host-IP "
        "detection inside a container or on an interface without a routable address: the other ranks cannot "
        "connect to it (link-local addresses need a zone and stay on one link).",
        "Set the address explicitly to a routable IPv4 (or global IPv6) address of the node (MASTER_ADDR, "
        "VLLM_HOST_IP, the framework's host-IP setting), or give the interface a routable address.",
        ("net.interface", "net.master_resolution"), "https://github.com/meta-pytorch/torchforge/issues/743",
        weight=66),
)
