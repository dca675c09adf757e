"""Known failure signatures, part three: NCCL's own WARN lines (misc/socket.cc, misc/ibvwrap.cc,
transport/net_ib.cc, transport/net_socket.cc, bootstrap.cc, misc/shmutils.cc and the older include/shm.h),
older and newer wordings. Each entry's source is a public log it was written from; see ``catalog``.

>>> [s.id for s in NCCL][:2]
['nccl.socket_closed_by_peer', 'nccl.socket_reset_by_peer']
"""

from __future__ import annotations

from preflight.explain.signature import Signature

_IB_FIX = ("Check the RDMA devices on that node (`ibv_devinfo`, port state ACTIVE), that /dev/infiniband is "
           "passed into the container, and the locked-memory limit (`ulimit -l` unlimited).")

NCCL: tuple[Signature, ...] = (
    # --- sockets: the other end went away (a consequence of a failure elsewhere) --------------------
    Signature(
        "nccl.socket_closed_by_peer", "fabric",
        (r"socketProgress(?:Opt)?: Connection closed by remote peer", r"WARN Connection closed by remote peer"),
        "The peer closed NCCL's socket: that rank exited or crashed (look for its own error first), or "
        "something between the nodes cut the connection.",
        "Find the rank that failed first in its own log; if none did, check the network path between the "
        "two hosts.",
        ("net.reachability", "allreduce"), "https://github.com/NVIDIA/nccl/issues/1232", weight=22,
        root_cause=False),
    Signature(
        "nccl.socket_reset_by_peer", "fabric",
        (r"socketProgress(?:Opt)?: Call to (?:send|recv) (?:to|from) \S+ failed : Connection reset by peer",
         r"NET/Socket : (?:socket|peer) .*Connection reset by peer",
         r"Call to recv (?:from \S+ )?failed : Connection reset by peer"),
        "The peer reset NCCL's TCP connection: its process died (OOM, crash, killed) or a middlebox reset "
        "the flow.",
        "Look for the failing rank's own error (OOM, exception) first; otherwise check the network path.",
        ("net.reachability", "allreduce"), "https://github.com/NVIDIA/nccl/issues/1920", weight=22,
        root_cause=False),
    # --- message sizes: ranks disagree --------------------------------------------------------------
    Signature(
        "nccl.message_truncated", "collective-mismatch",
        (r"Message truncated : received \d+ bytes instead of \d+",),
        "A bootstrap or proxy message was larger than the receiver expected: the ranks run different NCCL "
        "versions or settings, or issue different collectives.",
        "Use the same NCCL/torch build and NCCL_* environment on every node; compare the collectives each "
        "rank issues (NCCL_DEBUG_SUBSYS=COLL).",
        ("versions.nccl", "versions"), "https://github.com/NVIDIA/nccl/issues/1176", weight=62),
    # --- InfiniBand verbs ---------------------------------------------------------------------------
    Signature(
        "nccl.ibv_create_qp_failed", "rdma",
        (r"Call to ibv_create_qp failed",),
        "NCCL could not create an RDMA queue pair: the HCA is unusable from this process (device not "
        "passed into the container, resources or locked memory exhausted, driver problem).",
        _IB_FIX, ("hccn.link", "os.memlock"), "https://github.com/NVIDIA/nccl/issues/1129", weight=60),
    Signature(
        "nccl.ibv_create_cq_failed", "rdma",
        (r"Call to ibv_create_cq failed",),
        "NCCL could not create an RDMA completion queue: the HCA is not usable from this process (no "
        "access to /dev/infiniband, locked-memory limit, driver problem).",
        _IB_FIX, ("hccn.link", "os.memlock"), "https://github.com/NVIDIA/nccl/issues/380", weight=60),
    Signature(
        "nccl.ibv_modify_qp_failed", "rdma",
        (r"Call to ibv_modify_qp failed(?: with error| with \d+)? ?(?P<why>[A-Za-z][^\n]*)?",),
        "Connecting an RDMA queue pair to the peer failed (\"Network is unreachable\": no route/GID to the "
        "peer on that port, e.g. a RoCE NIC without an IP or the wrong NCCL_IB_GID_INDEX; \"No such "
        "device\": the HCA or port chosen is not present).",
        "Check the RDMA ports' state and addresses on both nodes (`ibv_devinfo`, `show_gids`), "
        "NCCL_IB_HCA and NCCL_IB_GID_INDEX.",
        ("hccn.link",), "https://github.com/NVIDIA/nccl/issues/925", weight=60),
    # --- shared memory ------------------------------------------------------------------------------
    Signature(
        "nccl.shm_fallocate_failed", "shm",
        (r"Call to posix_fallocate failed : No space left on device",),
        "/dev/shm is full or too small (docker's 64 MB default) for NCCL's shared-memory segments (older "
        "NCCL, include/shm.h).",
        "Run the container with --shm-size=1g (or --ipc=host), or enlarge /dev/shm; remove stale "
        "/dev/shm/nccl-* files.",
        ("os.shm",), "https://github.com/NVIDIA/nccl/issues/290", weight=74),
    Signature(
        "nccl.shm_attach_failed", "shm",
        (r"Error while attaching to shared memory segment \S+ \(size \d+\)",),
        "A rank could not open the /dev/shm segment its peer created: the ranks do not share /dev/shm "
        "(separate containers without a shared IPC namespace) or the segment was removed (systemd "
        "RemoveIPC, a cleaner).",
        "Run the ranks of a node in one IPC namespace (--ipc=host or a shared /dev/shm volume), and set "
        "RemoveIPC=no in logind.conf.",
        ("os.shm",), "https://github.com/vllm-project/vllm/issues/18831", weight=70),
)
