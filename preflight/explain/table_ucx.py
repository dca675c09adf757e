"""UCX's failures as a code table, keyed by normalized template (``table_templates``): the status texts
``ucs_status_string`` prints for every ``ucs_status_t`` (``UCS_ERR_UNREACHABLE`` ``Destination is unreachable`` ...),
the mlx5 completion syndromes ``uct_ib_mlx5_completion_with_err`` names, and UCX's own messages around them (no
transport to a peer, a device or transport that ``UCX_NET_DEVICES`` / ``UCX_TLS`` names and the host lacks, a
socket ``connect`` that failed). UCX carries Open MPI's ``pml ucx``, OpenSHMEM, NIXL and UCC; its lines look like

    [1555716468.435202] [jazz04:185068:0]  sock.c:116  UCX  ERROR connect(fd=217, dest_addr=2.1.3.9:45654) failed: ...
    [jazz04:185061] spml_ucx.c:264  Error: ucp_ep_create(proc=142/224) failed: Destination is unreachable

(openucx/ucx#3513, #4480; ``error handling callback was invoked with status -6 (Destination is unreachable)`` in
#7991, ``ucp_ep_create() failed: Input/output error`` in #6523, the device ``is not enabled`` diagnosis in #10651,
UCX through dask in dask/distributed#7000, #7968's error-handling mode). The status texts are short and common
words, so a line is read only when it names UCX (``required``: ``ucx``, ``ucp_``, ``uct_``, ``ucs_``).

Sources: ``src/ucs/type/status.c`` (the texts) and ``src/ucs/type/status.h`` (the enum) of openucx/ucx at 147021f
and ff9c138, ``src/uct/ib/mlx5/ib_mlx5_log.c`` at 8fe843c (the syndromes). Categories: no transport or device
reaches the peer (the hosts expose different NICs or transports, or ``UCX_NET_DEVICES`` names one the host lacks)
``wrong-interface``; a transport ``UCX_TLS`` asks for that the host lacks, a verbs queue pair or request the HCA
rejected ``rdma``; a retry or timeout on the wire, an aborted or reset peer ``fabric`` (the peer's reset or a timeout
only reports another failure: no root cause); a socket ``connect`` timed out or refused ``firewall``; memory UCX
could not register (``Out of memory`` on a UCX line) ``memlock``; its shared-memory transport ``shm``; a message longer
than the receive posted for it ``collective-mismatch``; a local length syndrome (the two ends' MTU) ``mtu``.

>>> [d.code.category for d in TABLE.decode("[h:1:0] pml_ucx.c:385  Error: ucp_ep_create(proc=96) failed: "
...                                        "Destination is unreachable")]
['wrong-interface']
>>> [d.code.name for d in TABLE.decode("ib_mlx5_log.c:143  UCX  ERROR Transport retry count exceeded on mlx5_0:1/IB "
...                                    "(synd 0x15 vend 0x81 hw_synd 0/0)")]
['UCS_ERR_ENDPOINT_TIMEOUT: transport retry count exceeded']
>>> TABLE.decode("RuntimeError: Destination is unreachable"), TABLE.decode("UCX  INFO  Out of band messages: 3")
([], [])
"""

from __future__ import annotations

from preflight.explain.table_templates import Row, build

SOURCE = ("https://github.com/openucx/ucx/blob/147021f8cdc88f97e6fed46db24a61d475c5747b/src/ucs/type/status.c ; "
          "https://github.com/openucx/ucx/blob/ff9c1389941792a30449b1a004e32212271ca8f2/src/ucs/type/status.h ; "
          "https://github.com/openucx/ucx/blob/8fe843cbc8da289039f51f9b28966658def62362/src/uct/ib/mlx5/"
          "ib_mlx5_log.c")
VERSION = "UCX 1.x (ucs_status_t -1 to -80 as status.c 147021f prints them; mlx5 syndromes of ib_mlx5_log.c 8fe843c)"

_PATH = ("Give every host the same UCX devices and transports: `ucx_info -d` on each host lists them; set "
         "`UCX_NET_DEVICES` (an RDMA port such as mlx5_0:1, or an interface every host has) and `UCX_TLS` alike on "
         "all of them (`mpirun -x UCX_NET_DEVICES=...`), and check that the interface it picks routes to the peer.")
_WIRE = ("Check the RDMA links between the two hosts (`ibstat` / `ibv_devinfo` port state, error counters, cables, "
         "switch ports) and whether the peer process was still alive; UCX_RC_TIMEOUT / UCX_RC_RETRY_COUNT only "
         "hide a flaky path.")
_STACK = "Check this host's RDMA stack (driver, firmware, rdma-core, `ucx_info -d`) and the same UCX on every host."

ROWS: tuple[Row, ...] = (
    Row("UCS_ERR_UNREACHABLE", "wrong-interface",
        "No transport of this host can reach the peer: the hosts expose different devices or transports to UCX, or "
        "UCX_NET_DEVICES / UCX_TLS leave out the one the peer's address needs.", _PATH,
        ("Destination is unreachable", "no active messages transport to {}",
         "no remote memory access transport to {}", "no auxiliary transport to {}",
         "is not enabled, enable it in UCX_NET_DEVICES or use corresponding ip address")),
    Row("network device not available", "wrong-interface",
        "UCX_NET_DEVICES names a device or port this host does not have.", _PATH,
        ("network device {} is not available, please use one or more of", "No such device")),
    Row("transport not available", "rdma",
        "UCX_TLS asks for a transport this host's UCX cannot open (no RDMA device, no driver, a UCX built without "
        "it).", _STACK, ("transport {} is not available, please use one or more of",
                         "Function not implemented", "Unsupported operation")),
    Row("UCS_ERR_ENDPOINT_TIMEOUT: transport retry count exceeded", "fabric",
        "The HCA retried a transfer until its retry count ran out: the link, a switch port or the peer stopped "
        "answering.", _WIRE,
        ("Transport retry count exceeded on {}", "Error on QP {}: Transport retry count exceeded",
         "Receive-no-ready retry count exceeded", "Remote side aborted", "Endpoint timeout")),
    Row("access or protection syndrome", "fabric",
        "The HCA could not access a buffer of the transfer (local or remote protection / access error): on GPU "
        "hosts usually PCIe ACS or GPUDirect RDMA, else a memory key the peer no longer holds.",
        "Disable PCIe ACS between GPU and NIC, check nvidia-peermem / DMA-BUF and the memlock limit; then the "
        "peer's log.", ("Local protection on {}", "Local access on {}", "Remote access on {}", "Bad response on {}",
                        "Error on QP {}: Local protection", "Error on QP {}: Remote access")),
    Row("queue pair syndrome", "rdma", "The HCA rejected a queue pair or work request of UCX.", _STACK,
        ("Local QP operation on {}", "Remote QP on {}", "Invalid request on {}", "Memory window bind on {}")),
    Row("local length syndrome", "mtu",
        "A received message was longer than the receive buffer posted for it: the two ends' MTU differ.",
        "Set the same MTU on every RDMA port (`ibv_devinfo` active_mtu, the switch ports; on RoCE the interface).",
        ("Local length on {}", "Error on QP {}: Local length")),
    Row("UCS_ERR_CONNECTION_RESET", "fabric",
        "The peer reset or dropped the connection: it exited or lost its link; its own log has the cause.", _WIRE,
        ("Connection reset by remote peer", "Endpoint is not connected", "Operation rejected by remote peer",
         "Input/output error", "Operation timed out", "Failed to connect some of the requested endpoints"),
        root_cause=False),
    # round 38 (the spent eighteenth set, openucx/ucx#6695): UCX's TCP transport dialling the peer at a loopback
    # address is the interface it picked (lo), not a firewall; 127.0.1.1 is the hostname's loopback entry
    Row("socket connect to the loopback", "wrong-interface",
        "UCX's TCP transport dialled the peer at 127.0.0.1: it took the loopback interface as this host's address.",
        "Pin UCX to the interface the hosts share (`UCX_NET_DEVICES=eth0`, or the RDMA port), so it never "
        "advertises lo.", ("connect(fd={}, dest_addr=127.0.0.1:{}) failed: Connection refused",
                           "connect(fd={}, dest_addr=127.0.0.1:{}) failed: Connection timed out")),
    Row("socket connect to the hostname's loopback", "hostname-loopback",
        "UCX dialled the peer at 127.0.1.1: the peer's host name resolves to its loopback entry in /etc/hosts.",
        "Map each host name to its routable address in /etc/hosts (not 127.0.1.1), or pin UCX_NET_DEVICES.",
        ("connect(fd={}, dest_addr=127.0.1.1:{}) failed: Connection refused",
         "connect(fd={}, dest_addr=127.0.1.1:{}) failed: Connection timed out")),
    # round 38 (openucx/ucx#6675): the peers' UCX releases differ (a program linked with one, loading another)
    Row("worker address version mismatch", "version-mismatch",
        "The peer's worker address is of another UCX release: the processes load different UCX libraries.",
        "Load one UCX release everywhere (LD_LIBRARY_PATH, `ucx_info -v` on every node; a program linked with one "
        "UCX must not pick up another from /usr/lib).", ("address version mismatch: expected {}, actual {}",)),
    Row("socket connect failed", "firewall",
        "UCX's TCP connection to the peer's address timed out or was refused: a firewall or security group, or an "
        "address on an interface the peer cannot route to.",
        "Open the ports between the hosts (UCX's TCP sockets use ephemeral ports) or pin UCX_NET_DEVICES to the "
        "interface the hosts share.", ("connect(fd={}, dest_addr={}) failed: Connection timed out",
                                       "connect(fd={}, dest_addr={}) failed: Connection refused",
                                       "connect(fd={}, dest_addr={}) failed: No route to host")),
    Row("UCS_ERR_NO_MEMORY", "memlock",
        "UCX could not allocate or register memory for its transfers: on an RDMA host usually the locked-memory "
        "limit (ulimit -l) of the job.", "Raise the memlock limit to unlimited for the job (limits.conf, the "
        "container's --ulimit memlock=-1, Slurm's PropagateResourceLimits); then host memory.",
        ("Out of memory", "No resources are available to initiate the operation")),
    Row("UCS_ERR_SHMEM_SEGMENT", "shm", "UCX's shared-memory transport could not create or attach its segment.",
        "Give the job a larger /dev/shm (--ipc=host, --shm-size) and the same user namespace for all its ranks.",
        ("Shared memory error",)),
    Row("UCS_ERR_MESSAGE_TRUNCATED", "collective-mismatch",
        "A message was longer than the receive the peer posted: the ranks disagree on a size.",
        "Check that every rank sends and receives the same sizes in the same order.", ("Message truncated",)),
)

TABLE = build("ucx", SOURCE, VERSION, ROWS, required=("ucx", "ucp_", "uct_", "ucs_"))
