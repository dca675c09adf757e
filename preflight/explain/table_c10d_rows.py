"""The rows of ``table_c10d``: what torch.distributed's C++ core (c10d) raises, by failure.

Each template is the text of torch's own source (``socket.cpp``, ``TCPStore.cpp`` / ``TCPStoreLibUvBackend.cpp``,
``ProcessGroupNCCL.cpp``, ``ProcessGroupGloo.cpp``, ``distributed_c10d.py``, ``c10/util/Exception.h``), read as
the strings of the torch 1.13.1, 2.1.2, 2.4.1, 2.6.0, 2.9.1 (CUDA) and 2.13.0 (CPU) wheels; ``{}`` is a value.
Where versions worded a failure differently every wording is kept (newest first): the torch 1.0-1.12 wordings
(``torch/lib/c10d``'s ``Utils.cpp`` / ``Utils.hpp`` tcputil, ``TCPStore.cpp``, ``FileStore.cpp``, ``NCCLUtils.hpp``,
``ProcessGroupNCCL.cpp``, ``ProcessGroupGloo.cpp``, ``GlooDeviceFactory.cpp``, ``ProcessGroupMPI.cpp``,
``ProcessGroup.cpp``, and that era's ``distributed_c10d.py`` / ``rendezvous.py``) come last in each row.
"""

from __future__ import annotations

from preflight.explain.table_templates import Row

_MASTER = ("Check MASTER_ADDR resolves to rank 0's node on every node and MASTER_PORT is open between the nodes "
           "(`nc -zv MASTER_ADDR MASTER_PORT` from a worker); start rank 0 first, it hosts the store.")
_PORT = ("Another process listens on MASTER_PORT (a previous run's leftover, another job): free it "
         "(`ss -ltnp 'sport = :PORT'`) or choose another --master_port / MASTER_PORT on every node.")
_PEER = ("This rank only saw another rank or the store go away: read the other ranks' logs (rank 0's first) for "
         "the earliest error (a crash, an OOM kill, an exception).")
_STORE = ("Some ranks never reached the store within the timeout: check every node started (the scheduler, the "
          "hostfile), that they can reach MASTER_ADDR:MASTER_PORT, and read the missing ranks' logs.")
_WATCHDOG = ("A collective did not finish on this rank: some rank is not in it (crashed, hung, or running other "
             "code) or the network between them stalled. Find the first failing rank's log; run "
             "`preflight run --checks allreduce` to test the links.")
_NCCL = "Read the NCCL WARN lines before this one (NCCL_DEBUG=INFO) and the NCCL error text it quotes."

ROWS: tuple[Row, ...] = (
    # --- exception classes (c10/util/Exception.h, torch.distributed) ----------------------------------------
    Row("DistNetworkError", "master-unreachable",
        "torch.distributed.DistNetworkError: an error of the TCP/IP stack while talking to the c10d store "
        "(connect, send, recv); its message says which.", _MASTER, ("DistNetworkError",), root_cause=False),
    Row("DistStoreError", "store-timeout",
        "torch.distributed.DistStoreError: the c10d store failed, mostly a wait for keys or clients that timed "
        "out because some ranks never arrived.", _STORE, ("DistStoreError",), root_cause=False),
    Row("DistBackendError", "fabric",
        "torch.distributed.DistBackendError: the collective library (NCCL, Gloo, HCCL) failed or timed out; its "
        "message says which.", _WATCHDOG, ("DistBackendError",), root_cause=False),
    Row("DistError", "unknown", "torch.distributed.DistError: the base class of c10d's errors.", _PEER,
        ("DistError",), root_cause=False),
    Row("QueueEmptyError", "store-timeout", "A non-blocking pop on an empty c10d store queue.", _STORE,
        ("QueueEmptyError", "DistQueueEmptyError"), root_cause=False),
    # --- the store's client socket (socket.cpp, TCPStore.cpp) ------------------------------------------------
    Row("store: client connect timed out", "master-unreachable",
        "This rank could not connect to the c10d store (rank 0's MASTER_ADDR:MASTER_PORT) before the timeout: "
        "rank 0 is not up yet or died, the address or port is wrong, or a firewall drops the connection.",
        _MASTER, ("The client socket has timed out after {} while trying to connect to ({}, {}).",
                  "TCP client failed to connect/validate to host {}:{} - timed out (try={}, timeout={}ms): {}")),
    Row("store: connect() timed out", "firewall",
        "torch 1.x's store client (tcputil::connect) got no connection to MASTER_ADDR:MASTER_PORT before the "
        "timeout: its connect attempts were never answered (a firewall dropping them, an address nothing answers "
        "on) or kept being refused until the deadline (rank 0 not listening).",
        "Open MASTER_PORT between the nodes (firewalld / iptables / security groups) and check MASTER_ADDR is rank "
        "0's reachable address (`nc -zv MASTER_ADDR MASTER_PORT` from a worker); start rank 0 first.",
        ("RuntimeError: connect() timed out.", "what(): connect() timed out.")),
    Row("store: client connect failed", "master-unreachable",
        "Connecting to the c10d store failed (refused: nothing listens there yet or a firewall rejects; no "
        "route; unreachable network).", _MASTER,
        ("The client socket has failed to connect to any network address of ({}, {}).",
         "The client socket has failed to connect to {} {}.")),
    Row("store: client socket init failed", "address-family",
        "The client socket could not even be created for the store's address: an address family the node does "
        "not support (IPv6 off) or a bad MASTER_ADDR.", _MASTER,
        ("The client socket cannot be initialized to connect to {} {}.",)),
    Row("store: not listening yet (retrying)", "master-unreachable",
        "The store is not listening yet; c10d retries until its timeout (harmless while rank 0 starts).", _MASTER,
        ("No socket on ({}, {}) is listening yet, will retry.", "The server socket on {} is not yet listening {}, "
         "will retry.", "TCP client failed to connect/validate to host {}:{} - retrying (try={}, timeout={}ms, "
         "delay={}ms): {}"), root_cause=False),
    # --- the store's server socket ---------------------------------------------------------------------------
    Row("store: server cannot listen", "port-in-use",
        "Rank 0 could not open the c10d store on MASTER_PORT: the port is taken (EADDRINUSE) or not allowed.",
        _PORT, ("The server socket has failed to listen on any local network address. port: {}, useIpv6: {}, "
                "code: {}, name: {}, message: {}", "The server socket has failed to listen on any local network "
                "address.", "The server socket has failed to listen on provided socket.",
                "The server socket has failed to listen on {} {}.")),
    Row("store: server cannot bind", "port-in-use",
        "Rank 0 could not bind the c10d store's port: it is taken or MASTER_ADDR is not an address of this node.",
        _PORT, ("The server socket has failed to bind to {} {}.", "The server socket has failed to bind.")),
    Row("store: address already in use", "port-in-use", "MASTER_PORT is already taken on rank 0's node.", _PORT,
        ("name: EADDRINUSE, message: address already in use", "errno: 98 - Address already in use",
         "RuntimeError: Address already in use", "EADDRINUSE")),
    Row("store: server socket init failed", "address-family",
        "The store's server socket could not be created for that address (IPv6 disabled, or IPv4 not "
        "supported on it).", _MASTER, ("The server socket cannot be initialized on {} {}.",
                                        "The server socket does not support IPv4 communication on {}.",
                                        "cannot find host to listen on: {}")),
    Row("store: listen fd not supported", "launch-args",
        "The libuv TCPStore (default since torch 2.4) cannot take over a listening fd.",
        "Set USE_LIBUV=0 to use the legacy TCPStore, or let torchrun open the store itself.",
        ("The libuv TCPStore backend does not support initialization with an listen fd.",), checks=()),
    # --- errno texts c10d appends (errno: N - text) ----------------------------------------------------------
    Row("errno: connection refused", "master-unreachable",
        "Nothing listens on the store's address and port (rank 0 not started, crashed, wrong port), or a "
        "firewall rejects the connection.", _MASTER, ("errno: {} - Connection refused",)),
    Row("errno: connection timed out", "firewall",
        "The connection to the store got no answer at all: a firewall drops it, or MASTER_ADDR is an address "
        "nothing answers on.", _MASTER, ("errno: {} - Connection timed out",)),
    Row("errno: address family not supported", "address-family",
        "The store address resolved to a family (IPv6 / IPv4) this node cannot open a socket for.",
        "Use an IPv4 (or IPv6) literal as MASTER_ADDR, or make the name resolve to the family every node "
        "supports.", ("errno: {} - Address family not supported by protocol",)),
    Row("errno: no route to host", "firewall",
        "The store's host is unreachable: a firewall rejecting with icmp-host-prohibited, or no route.",
        "Allow TCP between the nodes on MASTER_PORT (firewalld / iptables REJECT rules) and check the routes.",
        ("errno: {} - No route to host",)),
    Row("errno: network unreachable", "wrong-interface",
        "No route to the store's network from this node (wrong MASTER_ADDR, or an IPv6 address without IPv6 "
        "routing).", _MASTER, ("errno: {} - Network is unreachable",)),
    Row("errno: cannot assign requested address", "address-family",
        "The socket cannot use that local address: MASTER_ADDR is not an address of this node, or IPv6 "
        "is off.", _MASTER, ("errno: {} - Cannot assign requested address",)),
    Row("errno: name resolution", "name-resolution",
        "MASTER_ADDR (or a peer's host name) does not resolve on this node.",
        "Make the host name resolve on every node (/etc/hosts or DNS) or use an IP address.",
        ("network addresses of ({}, {}) cannot be retrieved (gai error: {} - {})",
         "gai error: {} - Name or service not known", "gai error: {} - Temporary failure in name resolution",
         "gai error: {} - nodename nor servname provided, or not known", "ValueError: host not found: {}",
         "host not found: Name or service not known", "host not found: Temporary failure in name resolution",
         "host not found: nodename nor servname provided, or not known",
         "host not found: No address associated with hostname")),
    # --- the store talking (TCPStore.cpp, tcputils) ----------------------------------------------------------
    Row("store: socket timeout", "store-timeout",
        "A read from the c10d store timed out: the key this rank waits for was never written (another rank "
        "did not get there) or the store stopped answering.", _STORE,
        ("Socket Timeout", "Wait timeout", "Timeout waiting for key: {}")),
    Row("store: reply out of step", "store-timeout",
        "The c10d store answered a wait or check with something else than its reply: an earlier call on this "
        "rank's store connection failed or timed out (torch 1.x TCPStore) and left it out of step.", _STORE,
        ("Stop_waiting response is expected", "ready or not_ready response expected"), root_cause=False),
    Row("store: waiting for clients timed out", "store-timeout",
        "The store on rank 0 waited for all ranks to connect and not all came: a node did not start or cannot "
        "reach MASTER_ADDR:MASTER_PORT.", _STORE,
        ("Timed out after {} seconds waiting for clients. {}/{} clients joined.",
         "Timed out after {} seconds waiting for workers. {}/{} workers joined.",
         "waiting for processes to connect has timed out"), root_cause=False),
    Row("store: store-based barrier timed out", "store-timeout",
        "init_process_group's store-based barrier timed out: some ranks never joined (num_workers_joined, in "
        "torch 1.x worker_count, says how many did).", _STORE,
        ("Timed out initializing process group in store based barrier on rank {}, for key: {} (world_size={}, "
         "num_workers_joined={}, timeout={}", "Timed out waiting on barrier on rank {}, for key prefix: {} "
         "(world_size={}, missing_ranks={}, timeout={})", "barrier timeout after {}ms, key: {}",
         "Timed out initializing process group in store based barrier on rank: {}, for key: {} (world_size={}, "
         "worker_count={}, timeout={})"),
        root_cause=False),
    Row("store: server closed the connection", "store-timeout",
        "The c10d store's server (rank 0's agent) closed the connection: rank 0 exited or crashed.", _PEER,
        ("Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
         "Failed to send, sent 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
         "recvValueWithTimeout failed on {}: {}",
         "Failed to check the \"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early)"),
        root_cause=False),
    Row("store: daemon socket error", "store-timeout",
        "The c10d store's daemon thread on rank 0 saw an error event on its listening socket or control pipe "
        "(torch 1.x TCPStore) and stopped: every rank loses the store.", _PEER,
        ("Unexpected poll revent on the master's listening socket: {}",
         "Unexpected poll revent on the control pipe's reading fd: {}"), root_cause=False),
    Row("store: control pipe not created", "open-files",
        "The c10d store could not create the pipe that stops its daemon thread: the process is out of file "
        "descriptors (EMFILE / ENFILE).", "Raise the open-files limit (`ulimit -n`) for the job, or find what "
        "leaks file descriptors (many DataLoader workers, unclosed files).",
        ("Failed to create the control pipe to start the BackgroundThread run",)),
    Row("FileStore: file cannot be locked", "launch-args",
        "init_method='file://...' puts the c10d FileStore on a file system that does not support flock() (an "
        "NFS mount without lockd, some FUSE or object-store mounts).",
        "Put the file on a shared file system that supports locks, or use init_method='env://' / tcp://.",
        ("flock: No locks available", "flock: Function not implemented"), checks=()),
    Row("socket: connection reset by peer", "fabric",
        "The other end of a c10d socket went away (its process exited or crashed).", _PEER,
        ("DistNetworkError: Connection reset by peer", "RuntimeError: Connection reset by peer",
         "got error: Connection reset by peer", "errno: {} - Connection reset by peer"), root_cause=False),
    Row("socket: broken pipe", "fabric", "This rank wrote to a c10d socket whose other end had closed.", _PEER,
        ("DistNetworkError: Broken pipe", "RuntimeError: Broken pipe", "errno: {} - Broken pipe"),
        root_cause=False),
    Row("NCCL unique id not received", "store-timeout",
        "This rank waited in the store for rank 0's ncclUniqueId and did not get it: rank 0 failed or hangs "
        "before creating its communicator.", _PEER,
        ("is setting up NCCL communicators and retrieving ncclUniqueId from roots via TCPStore by key '{}', but "
         "got error: {}", "is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
         "store by key '{}', but store->get('{}') got error: {}", "is setting up NCCL communicator and retreiving "
         "ncclUniqueId from [0] via c10d key-value store by key '{}', but store->get('{}') got error: {}"),
        root_cause=False),
    # --- ProcessGroupNCCL --------------------------------------------------------------------------------------
    Row("NCCL process group lacks the operation", "version-mismatch",
        "This torch's ProcessGroupNCCL does not implement the operation the job calls (barrier before torch "
        "1.0.1, send / recv before 1.7, some collectives in older releases): the torch is older than the code "
        "expects.", "Install the torch version the training code was written for (its requirements), on every "
        "node.", ("ProcessGroupNCCL does not support {}",
                  "ProcessGroupNCCL only supports {} for NCCL lib version >= 2.7.0",
                  "allreduce_coalesced is currently not supported with NCCL",
                  "no support for allgather_coalesced in this process group"), checks=("versions",)),
    Row("NCCL watchdog: collective timeout", "fabric",
        "The ProcessGroupNCCL watchdog saw a collective run past the process-group timeout (Timeout(ms) in the "
        "WorkNCCL): another rank never entered it or the network stalled.", _WATCHDOG,
        ("Watchdog caught collective operation timeout: {} ran for {} milliseconds before timing out.",
         "Caught collective operation timeout: {} ran for {} milliseconds before timing out."), root_cause=False),
    Row("NCCL: operations failed or timed out", "fabric",
        "ProcessGroupNCCL tears the process down after a failed or timed-out collective (the line after the "
        "watchdog timeout or the NCCL error).", _WATCHDOG,
        ("Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, "
         "subsequent GPU operations might run on corrupted/incomplete data.",
         "To avoid data inconsistency, we are taking the entire process down.",
         "To avoid this inconsistency, we are taking the entire process down."), root_cause=False),
    Row("NCCL: communicator aborted", "fabric",
        "This communicator was aborted earlier (after a timeout or an error on this or another rank); later "
        "collectives on it fail.", _WATCHDOG,
        ("NCCL communicator was aborted on rank {}.", "NCCL communicator was aborted.",
         "from rank: {}, aborting appropriate communicators", "wrote aborted communicator id to store: {}"),
        root_cause=False),
    Row("NCCL: watchdog thread terminated", "fabric",
        "The ProcessGroupNCCL watchdog thread stopped on an exception (the timeout or NCCL error it quotes).",
        _WATCHDOG, ("Process group watchdog thread terminated with exception: {}",
                    "NCCL watchdog thread terminated with exception: {}",
                    "NCCL watchdog thread terminated with unknown exception"), root_cause=False),
    Row("NCCL: work failed in watchdog", "fabric",
        "The watchdog found a failed or timed-out collective (the work sequence id names it).", _WATCHDOG,
        ("failure detected by watchdog at work sequence id: {}",
         "Exception (either an error or timeout) detected by watchdog at work: {}",
         "found async exception when checking for NCCL errors: {}",
         "Received NCCL errors for communicators in the cache"), root_cause=False),
    Row("NCCL: blocking wait timed out", "fabric",
        "A collective waited on with TORCH_NCCL_BLOCKING_WAIT=1 did not finish within the timeout.", _WATCHDOG,
        ("timed out in blocking wait", "timed out in call to wait()"), root_cause=False),
    Row("NCCL: heartbeat monitor timed out", "driver",
        "The watchdog itself stopped making progress (a NCCL or CUDA call hangs: a hung GPU or a NCCL abort "
        "that blocks), so the heartbeat monitor kills the process.",
        "Look for Xid / GPU errors on that node (`dmesg`, nvidia-smi) and the first rank that failed; raise "
        "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC only if the watchdog is merely slow.",
        ("ProcessGroupNCCL's watchdog got stuck for {} seconds without making progress in monitoring enqueued "
         "collectives.", "Heartbeat monitor timed out! Process will be terminated after dumping debug info."),
        root_cause=False, checks=("gpu.devices.driver", "gpu.xid")),
    Row("NCCL: debug dump requested by a timeout", "fabric",
        "A rank's collective timed out and the ranks dump their flight recorders (a consequence, not a cause).",
        _WATCHDOG, ("Received a dump signal due to a collective timeout from {}",
                    "Observed flight recorder dump signal from another rank via TCPStore.",
                    "ProcessGroupNCCL's watchdog detected a dump signal from rank {}",
                    "Received a global dump signal from rank {}"), root_cause=False),
    Row("NCCL: lagging ranks", "fabric",
        "TORCH_NCCL_DESYNC_DEBUG's report: these ranks never joined the collective that timed out (they crashed, "
        "hang, or run other code): their logs hold the cause.", _WATCHDOG,
        ("are the lagging ranks that caused this timeout. They never joined any collectives",
         "the lagging/dead/mismatched ranks that caused the desync are"), root_cause=False),
    Row("NCCL error (wrapped)", "fabric",
        "ProcessGroupNCCL raised an ncclResult_t failure (`NCCL error in: FILE:LINE, <NCCL's text>, NCCL "
        "version X`): the text after the location says which (the NCCL tables decode it).", _NCCL,
        ("NCCL error in: {}", "NCCL communicator encountered error set by ProcessGroupNCCL: {}",
         "RuntimeError: NCCL error: {}, NCCL version {}"),
        root_cause=False),
    Row("NCCL: init health check failed", "fabric",
        "ProcessGroupNCCL's health check (TORCH_ENABLE_NCCL_HEALTH_CHECK) could not create a NCCL communicator.",
        _NCCL, ("ProcessGroupNCCL: Health check failure: Failed to initialize NCCL communicator on rank {}",)),
    Row("NCCL: device guessed from rank", "device-mapping",
        "barrier() or the first collective guessed this rank's GPU from its global rank: it hangs if ranks do "
        "not map one to one onto the node's GPUs.",
        "Call torch.cuda.set_device(local_rank) before init_process_group, or pass device_id= to it.",
        ("Guessing device ID based on global rank.",
         "using best-guess GPU {} to perform barrier as devices used by this process are currently unknown."),
        root_cause=False),
    Row("NCCL: no GPU for the process group", "device-mapping",
        "backend='nccl' started in a process that sees no GPU (CUDA_VISIBLE_DEVICES empty or wrong, a node "
        "without GPUs or without its driver loaded), or a collective named no GPU device.",
        "Check `nvidia-smi` and CUDA_VISIBLE_DEVICES on that node (the scheduler's GPU allocation), call "
        "torch.cuda.set_device(local_rank) first, or use backend='gloo' for CPU-only ranks.",
        ("ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
         "Not able to create/get the NCCL Communicator since the GPU devices are not known"),
        checks=("gpu.devices.count", "gpu.devices.driver")),
    Row("NCCL not built in", "version-mismatch",
        "The installed torch has no NCCL (a CPU-only, Windows or macOS build), so backend='nccl' cannot start.",
        "Install a CUDA build of torch on Linux on every node, or use backend='gloo'.",
        ("Distributed package doesn't have NCCL built in",)),
    # --- ProcessGroupMPI --------------------------------------------------------------------------------------
    Row("MPI not built in", "version-mismatch",
        "backend='mpi' needs a torch built from source against an MPI library; pip and conda wheels have none.",
        "Use backend='nccl' (GPUs) or 'gloo' (CPUs), or build torch from source on a host with MPI installed.",
        ("Distributed package doesn't have MPI built in",)),
    Row("MPI lacks what c10d needs", "version-mismatch",
        "The MPI library torch was built against lacks a feature c10d needs: MPI_THREAD_SERIALIZED (or "
        "MPI_THREAD_MULTIPLE for a second process group) or CUDA-aware transfers for CUDA tensors.",
        "Use an MPI built with thread support (and CUDA support for GPU tensors) and rebuild torch against it, "
        "or switch to backend='nccl' / 'gloo'.",
        ("Used MPI implementation doesn't have the minimum level of threading support: MPI_THREAD_SERIALIZED.",
         "CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
         "this is not supported due to the used MPI implementation doesn't provide the full support of "
         "multi-threading")),
    Row("MPI error", "fabric",
        "An MPI call of ProcessGroupMPI returned an error code; the MPI library's own messages before it say "
        "which.", "Read the MPI runtime's (mpirun's) messages before this line; test the links with "
        "`preflight run --checks allreduce`.", ("MPI error in: {}, with error code: {}",), root_cause=False),
    # --- collectives out of step (ProcessGroupWrapper, ProcessGroupGloo) -------------------------------------
    Row("collectives mismatch", "collective-mismatch",
        "TORCH_DISTRIBUTED_DEBUG=DETAIL found ranks calling different collectives (or shapes/dtypes) at the same "
        "sequence number.", "Make every rank take the same code path with tensors of the same shape.",
        ("Detected mismatch between collectives on ranks",), checks=()),
    Row("monitoredBarrier: rank missing", "fabric",
        "Gloo's monitored barrier names the ranks that did not reach it in time (they crashed or hang).", _PEER,
        ("Rank {} failed to pass monitoredBarrier in {} ms", "Ranks {} failed to pass monitoredBarrier in {} ms",
         "timed out in monitoredBarrier after {}", "No ranks successfully processed in monitoredBarrier."),
        root_cause=False),
    Row("Gloo: full mesh connect failed", "wrong-interface",
        "ProcessGroupGloo could not connect all ranks to each other (gloo's text follows): the address each "
        "rank advertised is not reachable from the others.",
        "Set GLOO_SOCKET_IFNAME to the interface that connects the nodes (the same on every node) and make the "
        "host names resolve to those addresses.", ("Gloo connectFullMesh failed with {}",),
        checks=("net.interface", "net.hostname", "net.reachability")),
    Row("Gloo: loopback fallback", "hostname-loopback",
        "The node's host name does not resolve to a usable address, so Gloo binds to loopback and the other "
        "nodes cannot reach it.", "Make the host name resolve to the node's address (fix /etc/hosts) or set "
        "GLOO_SOCKET_IFNAME.", ("Unable to resolve hostname to a (local) address. Using the loopback address as "
                                "fallback.",), checks=("net.hostname", "net.interface")),
    Row("Gloo: host name not bindable", "name-resolution",
        "ProcessGroupGloo was given a host name (or address) that does not resolve to an address this node can "
        "bind: a wrong name, a name of another node, or a sandbox that forbids binding.",
        "Make the host name resolve to one of this node's addresses (/etc/hosts) or set GLOO_SOCKET_IFNAME to "
        "the interface to use.", ("Cannot resolve {} to a (local) address",),
        checks=("net.hostname", "net.interface")),
    Row("Gloo: unsupported device transport", "launch-args",
        "GLOO_DEVICE_TRANSPORT names a Gloo transport this torch was not built with (TCP_TLS, UV on Linux...).",
        "Unset GLOO_DEVICE_TRANSPORT (TCP on Linux, UV on macOS / Windows) or set it to a built transport.",
        ("makeDeviceForInterface(): unsupported gloo device", "makeDeviceForHostname(): unsupported gloo device"),
        checks=()),
    # --- starting the process group ---------------------------------------------------------------------------
    Row("process group not initialized", "launch-args",
        "A torch.distributed call ran before init_process_group (the script was started without a launcher).",
        "Start it with torchrun / deepspeed / accelerate launch, or call init_process_group first.",
        ("Default process group has not been initialized, please make sure to call init_process_group.",
         "Default process group is not initialized"), checks=()),
    Row("process group initialized twice", "launch-args",
        "init_process_group ran a second time in one process: the script, or a library it imported (accelerate, "
        "a trainer, vLLM), already initialized the default process group.",
        "Call init_process_group once per process (guard it with `dist.is_initialized()`), or let the library "
        "that already did it own the process group.", ("trying to initialize the default process group twice!",),
        checks=()),
    Row("init_method incomplete", "launch-args",
        "init_process_group's init_method does not say what its rendezvous needs: tcp:// without a port (or one "
        "out of range), "
        "file:// without a path, no rank / world_size, an unknown scheme, or a FileStore for no workers.",
        "Pass a complete URL (tcp://HOST:PORT, file:///shared/path) with rank= and world_size=, or use env:// "
        "under a launcher that sets MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE.",
        ("Error initializing torch.distributed using {} rendezvous: port number missing",
         "Error initializing torch.distributed using {} rendezvous: rank parameter missing",
         "Error initializing torch.distributed using {} rendezvous: world size parameter missing",
         "Error initializing torch.distributed using {} rendezvous: path missing", "No rendezvous handler for {}://",
         "Number of workers for FileStore should be greater than zero",
         # round 29: the rest of rendezvous.py's checks (torch 2.13): a port out of range, a rank or world size that
         # is no integer (an unset variable read as None), a rendezvous iterator asked a second time
         "port must have value from 0 to 65535 but was {}.", "`rank` must be an integer. {}",
         "`world_size` must be an integer. {}", "`url` must be a string. {}: {}",
         "Unable to perform re-rendezvous using {} method", "Unable to perform rerendezvous using {} method"),
        checks=()),
    Row("env:// variable not set", "launch-args",
        "init_process_group(init_method='env://') found no MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE.",
        "Start it with a launcher that sets them (torchrun, deepspeed, accelerate), or export them.",
        ("Error initializing torch.distributed using env:// rendezvous: environment variable {} expected, but "
         "not set", "env:// rendezvous: {} not set"), checks=("net.master_resolution",)),
)
