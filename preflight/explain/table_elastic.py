"""torchrun / torch.distributed.elastic as a code table: the rendezvous errors (RendezvousTimeoutError,
RendezvousClosedError, RendezvousConnectionError, RendezvousStateError...), the agent's messages and the failure
summary (ChildFailedError, ``Root Cause (first observed failure)``, ``failed (exitcode: N)``), keyed by normalized
template (``table_templates``). The exit code or signal such a summary quotes is decoded by ``table_exit``.

Source: ``torch/distributed/elastic`` (``rendezvous/api.py``, ``dynamic_rendezvous.py``,
``c10d_rendezvous_backend.py``, ``etcd_rendezvous*.py``, ``agent/server/api.py``, ``multiprocessing/api.py`` and
``errors/__init__.py``) and ``torch/multiprocessing/spawn.py`` of torch 1.13.1, 2.1.2, 2.4.1, 2.6.0, 2.9.1 and 2.13.0.

>>> [(d.code.name, d.code.category) for d in TABLE.decode(
...     "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
...     "failed. See inner exception for details.")]
[('rendezvous: store connection failed', 'rendezvous'), ('RendezvousConnectionError', 'rendezvous')]
>>> [d.code.root_cause for d in TABLE.decode("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")]
[False]
"""

from __future__ import annotations

from preflight.explain.table_templates import ASCEND_MODULE_LINE, Row, build

SOURCE = "https://github.com/pytorch/pytorch/tree/v2.9.1/torch/distributed/elastic"
VERSION = "torch 2.9.1 (wordings of 1.13.1, 2.1.2, 2.4.1, 2.6.0, 2.9.1 and 2.13.0)"

_RDZV = ("Check every node runs the same torchrun command (same --rdzv-id, --rdzv-endpoint, --nnodes) and reaches "
         "the rendezvous endpoint (host:port of the c10d store, usually node 0's --master-port); start all "
         "nodes within --rdzv-conf timeout.")
_FIRST = ("This is torchrun's summary of a worker that exited: the `Root Cause` block names the first failed rank, "
          "its host and exit code; read that rank's own log (its traceback, or the signal: see the exit code).")
_KILLED = ("The launcher or the job was told to stop from outside (SIGTERM / SIGINT / SIGHUP): the scheduler "
           "(time limit, preemption, scancel), a closed terminal or SSH session, or torchrun stopping the other "
           "workers after one failed. Check the scheduler's record of the job and the first worker that failed.")

ROWS: tuple[Row, ...] = (
    # --- rendezvous errors (rendezvous/api.py) -----------------------------------------------------------------
    Row("RendezvousTimeoutError", "rendezvous",
        "The rendezvous did not complete in time: fewer nodes than --nnodes (min) joined (a node did not start, "
        "runs another --rdzv-id, or cannot reach the endpoint).", _RDZV, ("RendezvousTimeoutError",),
        root_cause=False),
    Row("RendezvousClosedError", "rendezvous",
        "The rendezvous was closed (another node's agent finished, failed or used up --max-restarts): this "
        "node joined a run that is over.", _RDZV, ("RendezvousClosedError",), root_cause=False),
    Row("RendezvousConnectionError", "rendezvous",
        "The agent could not reach the rendezvous backend (the c10d store or etcd at --rdzv-endpoint).", _RDZV,
        ("RendezvousConnectionError",)),
    Row("RendezvousStateError", "rendezvous",
        "The rendezvous state in the backend is unreadable (torch versions that differ between nodes, or an "
        "--rdzv-id reused by another job).", "Use the same torch version on every node and a new --rdzv-id "
        "for each job.", ("RendezvousStateError",)),
    Row("RendezvousGracefulExitError", "rendezvous",
        "This node left the rendezvous on purpose (it is in the redundancy list: more nodes than --nnodes max).",
        _RDZV, ("RendezvousGracefulExitError",), root_cause=False),
    Row("RendezvousError", "rendezvous", "The base class of the rendezvous errors.", _RDZV,
        ("RendezvousError",), root_cause=False),
    # --- the backends' messages --------------------------------------------------------------------------------
    Row("rendezvous: store connection failed", "rendezvous",
        "The c10d rendezvous backend could not connect to its store at --rdzv-endpoint (the inner exception "
        "says why: refused, timed out, name not resolved).", _RDZV,
        ("The connection to the C10d store has failed. See inner exception for details.",)),
    Row("rendezvous: etcd connection failed", "rendezvous",
        "The etcd rendezvous backend could not reach etcd at --rdzv-endpoint.", _RDZV,
        ("The connection to etcd has failed. See inner exception for details.",)),
    Row("rendezvous: store file creation failed", "rendezvous",
        "The c10d rendezvous backend could not create the FileStore file it was given.", _RDZV,
        ("The file creation for C10d store has failed. See inner exception for details.",)),
    Row("rendezvous: state corrupt", "rendezvous",
        "The rendezvous state read from the backend cannot be decoded (mixed torch versions, or a reused "
        "--rdzv-id).", "Use the same torch version on every node and a new --rdzv-id for each job.",
        ("The rendezvous state is corrupt. See inner exception for details.",
         "The state object is corrupt. See inner exception for details.")),
    Row("rendezvous: backend mismatch", "launch-args",
        "The nodes were started with different --rdzv-backend values.", "Use the same torchrun arguments on "
        "every node.", ("The rendezvous backend '{}' does not match the requested backend '{}'.",), checks=()),
    Row("rendezvous: closed", "rendezvous", "The agent found the rendezvous closed (the run is over).", _RDZV,
        ("Rendezvous for run_id={} was observed to be closed",), root_cause=False),
    Row("rendezvous: etcd timeout", "rendezvous", "The etcd rendezvous timed out waiting for nodes.", _RDZV,
        ("Rendezvous timeout occurred in EtcdRendezvousHandler", "Rendezvous timeout occured in "
                                                                  "EtcdRendezvousHandler"), root_cause=False),
    Row("rendezvous: redundant node", "rendezvous",
        "More nodes joined than --nnodes allows; this one waits in the redundancy list.", _RDZV,
        ("The node '{}' added itself to the redundancy list of round {}", "The node {} is in redundancy list"),
        root_cause=False),
    # --- the agent and its summary -----------------------------------------------------------------------------
    Row("ChildFailedError", "unknown", "torchrun's agent reports that a worker exited with an error.", _FIRST,
        ("ChildFailedError",), root_cause=False, checks=()),
    Row("failure summary: root cause", "unknown", "The summary's block for the first worker that failed.",
        _FIRST, ("Root Cause (first observed failure):",), root_cause=False, checks=()),
    Row("agent: worker failed", "unknown",
        "The agent saw a worker exit with a non-zero code (the exit code is decoded on its own).", _FIRST,
        ("failed (exitcode: {}) local_rank: {} (pid: {}) of binary: {}", "failed (exitcode: {})"),
        root_cause=False, checks=()),
    Row("agent: no error file", "unknown",
        "The failed worker left no error file, so the summary has no traceback: the worker was killed by a "
        "signal or did not use @record.", _FIRST,
        ("local_rank {} FAILED with no error file.", "To enable traceback see: "
         "https://pytorch.org/docs/stable/elastic/errors.html"), root_cause=False, checks=()),
    Row("agent: closing the other workers", "unknown",
        "After one worker failed the agent stops the others (their SIGTERM is a consequence).", _FIRST,
        ("Sending process {} closing signal {}",), root_cause=False, checks=()),
    Row("agent: got a death signal", "launch-args",
        "The torchrun agent itself received SIGTERM / SIGINT / SIGHUP and shut the workers down.", _KILLED,
        ("Received {} death signal, shutting down workers", "Process {} got signal: {}"), root_cause=False,
        checks=()),
    Row("spawn: process killed by a signal", "unknown",
        "torch.multiprocessing.spawn: a spawned process died of a signal (SIGKILL: the OOM killer or the "
        "scheduler; SIGSEGV / SIGABRT: a crash in native code).", _FIRST,
        ("process {} terminated with signal {}",), root_cause=False, checks=()),
    Row("spawn: process exited with an error", "unknown",
        "torch.multiprocessing.spawn: a spawned process exited with a non-zero code.", _FIRST,
        ("process {} terminated with exit code {}",), root_cause=False, checks=()),
)

TABLE = build("torch_elastic", SOURCE, VERSION, ROWS, foreign=ASCEND_MODULE_LINE)
