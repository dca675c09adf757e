"""Known failure signatures, part four: NCCL's own WARN lines that the older parts do not cover (socket
progress and resets in misc/socket.cc, IB verbs calls in misc/ibvwrap.cc, completions in transport/net_ib.cc
and the IB plugin, shared memory in include/shm.h and misc/shmutils.cc, truncated messages in bootstrap.cc
and transport/net_socket.cc, collective checks in init.cc; round 3 of issue 38: no network plugin initialised, in
net.cc). Older and newer wordings are separate entries.
A reset or closed connection is a symptom: another rank died first. See ``catalog``.

>>> from preflight.explain.matcher import explain_texts
>>> explain_texts({"r.log": "misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed"}).best.signature.id
'nccl.ibv_create_qp_failed'
"""

from __future__ import annotations

from preflight.explain.signature import Signature

_SYMPTOM_FIX = ("Look at the other ranks' logs (the earliest error) for why the peer went away: a crash, an "
                "OOM, a kill, a reboot; then check the path between the nodes.")
_IB = ("gpu.fabric.devices", "gpu.fabric.ports", "nccl.ib_hca")
_SHM = ("os.shm",)

NCCL: tuple[Signature, ...] = (
    # --- a connect to a link-local address (every connect wording of misc/socket.cc, 2.3-2.30) ---------------
    Signature(
        "nccl.connect_link_local", "wrong-interface",
        (r"connect to \[?(?:fe80:|169\.254\.)",),
        "NCCL connected to another rank's IPv6 link-local (fe80::, scoped to one interface such as a tunnel "
        "ip6tnl0) or IPv4 link-local (169.254.x.x) address: it picked an interface that does not route between "
        "the nodes, so the connect times out or is refused whatever the firewall says.",
        "Set NCCL_SOCKET_IFNAME to the training interface on every node (and NCCL_SOCKET_FAMILY=AF_INET if "
        "the nodes talk IPv4); the `NET/Socket : Using` INFO line shows the interface NCCL chose.",
        ("net.interface", "net.reachability"), "https://github.com/NVIDIA/nccl/issues/529", weight=80),
    # --- sockets (misc/socket.cc): the peer went away ----------------------------------------------
    Signature(
        "nccl.socket_closed_by_peer", "fabric",
        (r"socketProgress: Connection closed by remote peer",),
        "NCCL's socket to another rank was closed by that rank: its process exited or crashed first (NCCL "
        "2.12+ wording).",
        _SYMPTOM_FIX, ("net.reachability",), "https://github.com/NVIDIA/nccl/issues/1612", weight=10,
        root_cause=False),
    Signature(
        "nccl.net_closed_by_peer", "fabric",
        (r"Net : Connection closed by remote peer",),
        "NCCL's socket to another rank was closed by that rank (the wording of NCCL before 2.12 and of the "
        "`Last error:` torch prints): the peer process exited or crashed first.",
        _SYMPTOM_FIX, ("net.reachability",), "https://github.com/NVIDIA/nccl/issues/1514", weight=10,
        root_cause=False),
    Signature(
        "nccl.socket_reset", "fabric",
        (r"socketProgress(?:Opt)?: Call to (?:send|recv) (?:to|from) \S+ failed : Connection reset by peer",
         r"NET/Socket : .*Connection reset by peer"),
        "A TCP connection NCCL uses was reset by the other side: the peer process died, or a middlebox "
        "(firewall, NAT, load balancer) dropped it.",
        _SYMPTOM_FIX, ("net.reachability", "firewall.rules"), "https://github.com/NVIDIA/nccl/issues/1920",
        weight=10, root_cause=False),
    Signature(
        "nccl.socket_broken_pipe", "fabric",
        (r"Net : Call to (?:recv|send) (?:from|to) \S+ failed : Broken pipe",),
        "NCCL wrote to a socket whose peer had already closed it (EPIPE): the other rank died first.",
        _SYMPTOM_FIX, ("net.reachability",), "https://github.com/NVIDIA/nccl/issues/795", weight=10,
        root_cause=False),
    # --- IB verbs (misc/ibvwrap.cc) ----------------------------------------------------------------
    Signature(
        "nccl.ibv_create_qp_failed", "rdma",
        (r"NCCL WARN Call to ibv_create_qp failed",),
        "NCCL could not create an InfiniBand/RoCE queue pair: the HCA is down or in a bad state, the "
        "container lacks the RDMA devices, or the memlock limit is too low.",
        "Check `ibv_devinfo` (port ACTIVE), that /dev/infiniband is passed into the container, and "
        "`ulimit -l unlimited`; or set NCCL_IB_HCA to working devices.",
        (*_IB, "gpu.fabric.memlock"), "https://github.com/NVIDIA/nccl/issues/1129", weight=70),
    Signature(
        "nccl.ibv_create_cq_failed", "rdma",
        (r"NCCL WARN Call to ibv_create_cq failed",),
        "NCCL could not create an InfiniBand/RoCE completion queue: the HCA or its driver is unusable from "
        "this process (missing device in the container, driver state, memlock).",
        "Check `ibv_devinfo`, the RDMA devices in the container and `ulimit -l`.",
        (*_IB, "gpu.fabric.memlock"), "https://github.com/NVIDIA/nccl/issues/380", weight=70),
    # --- IB completions with an error (transport/net_ib.cc, IB plugins) ----------------------------
    Signature(
        "nccl.ibp_completion_error", "fabric",
        (r"NET/IBP\s*:\s*Got completion from peer \S+ with status=\d+",),
        "An InfiniBand/RoCE work request completed with an error status (12 = transport retry counter "
        "exceeded): packets to the peer were lost, a link flapped, or the peer is gone (newer NCCL / IB "
        "plugin's NET/IBP wording).",
        "Check `ibstat` link state and error counters on both nodes and the switch; verify NCCL_IB_GID_INDEX "
        "and the RoCE/PFC configuration.",
        _IB, "https://github.com/NVIDIA/nccl/issues/1664", weight=56),
    # --- shared memory (include/shm.h, misc/shmutils.cc) -------------------------------------------
    Signature(
        "nccl.shm_fallocate_nospace", "shm",
        (r"Call to posix_fallocate failed : No space left on device",),
        "/dev/shm is full or too small for NCCL's shared-memory buffers (Docker's default is 64 MiB).",
        "Run the container with --ipc=host or --shm-size=8g (Kubernetes: an emptyDir with medium Memory on "
        "/dev/shm), or clean stale /dev/shm/nccl-* files.",
        _SHM, "https://github.com/NVIDIA/nccl/issues/525", weight=74),
    Signature(
        "nccl.shm_attach_failed", "shm",
        (r"Error while attaching to shared memory segment",),
        "A rank could not open the shared-memory segment another rank created: /dev/shm is not shared "
        "between the ranks' containers, or it was cleaned (systemd RemoveIPC) under them.",
        "Run all ranks of a node in one IPC namespace (--ipc=host) and set RemoveIPC=no in logind.conf.",
        _SHM, "https://github.com/NVIDIA/nccl/issues/1589", weight=68),
    # --- ranks disagree (bootstrap.cc, net_socket.cc, init.cc) --------------------------------------
    Signature(
        "nccl.message_truncated", "collective-mismatch",
        (r"Message truncated : received \d+ bytes instead of \d+",),
        "A rank received a larger message than it posted for the same step: the ranks disagree on the "
        "collective, its size, or NCCL settings (newer wording in bootstrap.cc).",
        "Make every rank issue the same collectives with the same sizes; use identical NCCL_* settings and "
        "NCCL versions on all nodes (TORCH_DISTRIBUTED_DEBUG=DETAIL finds the mismatch).",
        ("versions.nccl", "nccl.conf"), "https://github.com/NVIDIA/nccl/issues/1176", weight=64),
    Signature(
        "nccl.mismatched_collective", "collective-mismatch",
        (r"NCCL WARN Mismatched collective detected",),
        "NCCL detected ranks calling different collectives (or the same one with different sizes) at the "
        "same point.",
        "Find the rank that takes another code path (conditional collectives, uneven data); run with "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL.",
        ("nccl.conf",), "https://github.com/NVIDIA/nccl/issues/296", weight=66),
    Signature(
        "nccl.ring_no_loop", "collective-mismatch",
        (r"NCCL WARN Error : ring \d+ does not loop back to start",),
        "The ranks computed different rings (graph/rings.cc): they disagree on the topology, usually "
        "because NCCL settings (NCCL_HOSTID, NCCL_ALGO, NCCL_TOPO_FILE...) or NCCL versions differ between "
        "nodes.",
        "Use the same NCCL build and the same NCCL_* environment on every rank; unset per-node overrides.",
        ("versions.nccl", "nccl.conf"), "https://github.com/NVIDIA/nccl/issues/879", weight=60),
    Signature(
        "nccl.library_missing", "version-mismatch",
        (r"libnccl\.so\.\d: cannot open shared object file",),
        "The NCCL shared library is not installed where the program looks (LD_LIBRARY_PATH / ldconfig), "
        "or a different major version is installed.",
        "Install NCCL (libnccl2) matching the build, or add its lib directory to LD_LIBRARY_PATH on every node.",
        ("versions.nccl",), "https://github.com/NVIDIA/nccl-tests/issues/85", weight=75),
    Signature(
        "nccl.ib_collective_mismatch", "collective-mismatch",
        (r"NET/IB : collective mismatch error",),
        "The two ends of an IB transfer disagree on its size: ranks issue different collectives or use "
        "different NCCL versions/settings.",
        "Use the same NCCL build and NCCL_* settings everywhere; check that every rank calls the same "
        "collectives.",
        ("versions.nccl", "nccl.conf"), "https://github.com/NVIDIA/nccl/issues/531", weight=58),
    Signature(
        "nccl.no_net_plugin", "rdma",
        # src/net.cc (2.19+): WARN("Failed to initialize any NET plugin") when every plugin it may use failed
        (r"Failed to initialize any NET plugin",
         # round 25: net.cc before 2.19, NCCL_NET naming a network no plugin provides ("Error: network AWS Libfabric
         # not found.")
         r"NCCL WARN Error: network .{1,40} not found\."),
        "NCCL could not initialise any network plugin it is allowed to use: NCCL_NET (or the image's profile) "
        "forces IB / an external plugin (AWS Libfabric, gIB, TCPX) whose devices are not visible (a container "
        "without /dev/infiniband) or whose library is missing from LD_LIBRARY_PATH or built for another NCCL, so "
        "there is no fallback to sockets; the ncclInvalidUsage beside it is the consequence.",
        "Expose the RDMA devices to the process (--device /dev/infiniband, the RDMA device plugin), put the plugin "
        "on LD_LIBRARY_PATH with a build matching this NCCL, or unset NCCL_NET / set NCCL_NET=Socket on a single "
        "node.",
        ("nccl.conf", "nccl.ib_hca"), "https://github.com/getainode/ainode/pull/87", weight=74),
    # --- round 7 (the spent frozen5 set, folded) -------------------------------------------------------------
    Signature(
        "nccl.kernel_symbol_missing", "version-mismatch",
        # NCCL's CUDACHECK in enqueue.cc / init: cudaFuncGetAttributes on a kernel the build does not hold
        (r"NCCL WARN Cuda failure 'named symbol not found'", r"NCCL WARN Cuda failure \d+ 'named symbol not found'"),
        "NCCL looked up one of its own device kernels and the library holds none for this GPU: it was built with "
        "NVCC_GENCODE for other architectures only (an NCCL compiled for A100's sm_80 run on H100's sm_90), or "
        "for a CUDA that cannot target this GPU.",
        "Use an NCCL build that covers this GPU's compute capability (the release packages do), or rebuild with "
        "NVCC_GENCODE including it (`-gencode=arch=compute_90,code=sm_90`).",
        ("versions.nccl", "versions.cuda"), "https://github.com/NVIDIA/nccl/issues/1372", weight=72),
    Signature(
        # round 14 (the spent ninth set): init.cc's parseCommConfig (NCCL 2.14+) checks ncclConfig_t's fields; a
        # torch built against an older NCCL passes a config struct of another layout, so "blocking" reads as garbage
        # (INT_MIN) and ncclCommInitRankConfig returns ncclInvalidArgument
        "nccl.config_blocking_invalid", "version-mismatch",
        (r"Invalid config blocking attribute value -?\d+",),
        "NCCL refused the communicator config torch passed: its `blocking` field holds garbage because this torch "
        "was built against another NCCL release than the libnccl loaded (a pip nvidia-nccl or an LD_LIBRARY_PATH "
        "one newer or older than torch's), so the config struct's layout differs.",
        "Use the NCCL torch was built with (`python -c 'import torch; print(torch.cuda.nccl.version())'`): remove the "
        "other libnccl from LD_LIBRARY_PATH / the environment, or install the torch build that matches it.",
        ("versions.nccl",), "https://github.com/vllm-project/vllm/issues/1726", weight=74),
    Signature(
        "ofi.no_provider_devices", "rdma",
        # aws-ofi-nccl's init: "OFI fi_getinfo() call failed: %s" with fi_strerror(-ret); -61 (ENODATA) is
        # "No data available": no provider (EFA) device matched the hints
        (r"NET/OFI (?:OFI )?fi_getinfo\(\) call failed: No data available",
         # round 23: fi_info's own report ("fi_getinfo: -61 (No data available)") and oneCCL's ATL/OFI transport
         # ("atl_ofi_helper.cpp:1118 fi_getinfo error: ret -61, providers 0")
         r"\bfi_getinfo: -61 \(No data available\)", r"\bfi_getinfo error: ret -61, providers 0\b"),
        "The OFI plugin asked libfabric for its provider (EFA) and found no device: the EFA interfaces are not "
        "exposed to the process (a container without /dev/infiniband, the EFA device plugin or --device), the "
        "instance has no EFA enabled, or FI_PROVIDER names a provider the node lacks.",
        "Expose the EFA devices to the container (`--device /dev/infiniband/uverbs0...`, the aws-efa-k8s-device-"
        "plugin resource), check `fi_info -p efa` on the node, and set FI_PROVIDER=efa only where EFA exists.",
        ("nccl.ib_hca",), "https://github.com/aws/aws-ofi-nccl/issues/1020", weight=70),
    Signature(
        "nccl.nvls_bind_failed", "driver",
        # transport/nvls.cc (NCCL 2.27-2.28; transport/multicast.cc in 2.30): WARN("Failed to bind NVLink SHARP (NVLS)
        # Multicast memory of size %ld : CUDA error %d '%s'.\nThis is usually caused by a system or configuration
        # error in the Fabric Manager or NVSwitches. ..."); the INFO line that goes on "Proceeding without NVLS
        # support." is NCCL falling back, no failure
        (r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory(?![^\n]*Proceeding without NVLS)",),
        "NCCL could not bind its NVLink SHARP (multicast) buffers on the NVSwitches: the Fabric Manager or the "
        "NVSwitches of that node are misconfigured or in a bad state (a container without the fabric, a switch "
        "that needs a reset); the job's code is not at fault.",
        "Check the fabric on that node (`nvidia-smi -q | grep -A3 Fabric`: State Completed, Status Success; the "
        "nvidia-fabricmanager service), reset or reboot it; meanwhile NCCL_NVLS_ENABLE=0 runs without NVLS.",
        ("gpu.fabricmanager", "gpu.devices.driver"), "https://github.com/NVIDIA/DCGM/issues/304", weight=74),
)
