"""Open MPI's mpirun and Slurm's srun / slurmstepd as code tables, keyed by normalized template
(``table_templates``); a printf ``%s`` / ``%d`` / ``%lu`` stands for the value. Their multi-line help texts are
matched by their first line. The signal or exit code such a line quotes is decoded by ``table_exit``.

Open MPI: ORTE's help files of Open MPI 4.1.8 (``orte/tools/orterun/help-orterun.txt``,
``orte/mca/errmgr/base/help-errmgr-base.txt``, ``orte/mca/rmaps/base/help-orte-rmaps-base.txt``,
``orte/mca/state/base/help-state-base.txt``, ``orte/util/hostfile/help-hostfile.txt``,
``orte/mca/ess/pmi/help-ess-pmi.txt``, ``orte/mca/oob/tcp/oob_tcp_connection.c``'s firewall message,
``opal/mca/btl/tcp/help-mpi-btl-tcp.txt``'s ``[peer hung up]``, ``orte/tools/orterun/orterun.c``'s root check)
with 3.1 / 4.0's wording, and PRRTE's (Open MPI 5:
``PRTE was unable...``, ``prterun noticed...``). Slurm: ``src/srun/launch.c``, ``src/slurmd/slurmstepd/req.c``,
``src/plugins/task/cgroup/task_cgroup_memory.c`` (22.05's and 23.02+'s oom-kill wordings), ``src/api/step_launch.c``.

>>> [(d.code.name, d.code.category) for d in OPENMPI.decode("ORTE was unable to reliably start one or more daemons.")]
[('daemons not started', 'ssh')]
>>> [d.code.category for d in SLURM.decode("slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of "
...     "the step tasks have been OOM Killed.")]
['oom']
"""

from __future__ import annotations

from preflight.explain.table_templates import Row, build

_DAEMON = ("Check `ssh HOST which orted` (prted for Open MPI 5) from the launching node, install Open MPI at the "
           "same path on every host (or pass --prefix), and allow the daemons to connect back to mpirun "
           "(--mca oob_tcp_if_include IFACE, the firewall).")
_RANK = "Read that rank's output (its traceback or the signal it died of) for the first error."

OPENMPI_ROWS: tuple[Row, ...] = (
    Row("daemons not started", "ssh",
        "mpirun could not start its daemon (orted / prted) on a host: SSH to it fails, Open MPI is not on that "
        "host's PATH / LD_LIBRARY_PATH, /tmp is not writable, or the daemon cannot connect back to mpirun.",
        _DAEMON, ("{} was unable to reliably start one or more daemons.",), checks=("os", "net.reachability"),
        root_cause=False),  # mpirun's summary: the ssh / orted line before it names the cause
    Row("daemon cannot complete a TCP connection", "firewall",
        "A daemon or process could not open a TCP connection to another node (Open MPI: usually a firewall on the "
        "remote host).", _DAEMON, ("A process or daemon was unable to complete a TCP connection",),
        checks=("firewall.rules", "net.interface", "net.reachability")),
    Row("MPI peer hung up", "fabric",
        "An MPI peer process disconnected unexpectedly: it crashed or exited first (its failure is the cause).",
        _RANK, ("An MPI communication peer process has unexpectedly disconnected.",), root_cause=False,
        checks=()),
    Row("daemon failed before reporting back", "firewall",
        "A daemon started but never reached mpirun: no common network interface or route, or a firewall.",
        _DAEMON, ("An ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun.",
                  "A PRTE daemon has unexpectedly failed after launch and before communicating back to"),
        checks=("firewall.rules", "net.interface", "net.reachability")),
    # round 33: orted's own check of its peers' versions (orte/mca/ess/base help: "Open MPI detected a mismatch in
    # versions between two processes"); the lost daemon that follows it is its consequence
    Row("versions differ between processes", "version-mismatch",
        "mpirun and a remote daemon (or two processes) come from different Open MPI installs.",
        "Use one Open MPI install on every node: the same prefix first in PATH and LD_LIBRARY_PATH of "
        "non-interactive ssh shells, or mpirun --prefix.",
        ("Open MPI detected a mismatch in versions between two processes.",), checks=("versions", "os")),
    Row("lost a remote daemon", "fabric",
        "mpirun lost the TCP connection to a node's daemon: the node crashed, rebooted or dropped off the "
        "network (or the daemon died).", "Check that node (uptime, `dmesg`, the OOM killer) and the network to "
        "it.", ("{} has lost communication with a remote daemon.",), checks=("net.reachability",)),
    Row("cannot connect to a daemon", "firewall",
        "mpirun cannot open a connection to a node's daemon (no common interface or route, or a firewall).",
        _DAEMON, ("{} is unable to establish a communication connection to the specified daemon",
                  "{} does not know how to route a message to the specified daemon"),
        checks=("firewall.rules", "net.interface", "net.reachability")),
    Row("not enough slots", "hostfile",
        "-np asks for more processes than the hosts offer slots (`slots=N` in the hostfile, `-H host:N`; a "
        "bare host counts one slot or its cores).", "Give every host its slot count so the sum matches -np.",
        ("There are not enough slots available in the system to satisfy the {}",
         "There are not enough slots available in the system or not enough"), checks=()),
    # round 23: rmaps' no-available-resources help (help-orte-rmaps-base.txt): mpirun found no usable node at all
    Row("no nodes available", "hostfile",
        "mpirun found no node to map the job on: the host list or allocation it was given is empty or unusable "
        "(an unreadable host file, a Slurm node list passed as a file name, nodes marked down).",
        "Give mpirun a real host file (one `host slots=N` per node; `scontrol show hostnames` expands Slurm's "
        "list) or -H host:N, and check the nodes are up.",
        ("No nodes are available for this job, either due to a failure to",), checks=()),
    # round 14: the hostfile parser's help (orte/util/hostfile/help-hostfile.txt): a node defined twice with slots
    # (two lines that name one host, or two FQDNs that ORTE cuts at the first dot into one short name)
    Row("slot count defined twice", "hostfile",
        "The hostfile gives one node two slot counts: it is listed twice with slots=N, or two names that ORTE "
        "shortens to the same host name at the first dot (mpi-worker.1.foo / mpi-worker.2.foo).",
        "List each host once with slots=N; with FQDNs that share a first label, give the hosts distinct short names "
        "or run mpirun with --mca orte_keep_fqdn_hostnames 1.",
        ("A hostfile was provided that contains multiple definitions",
         "of the slot count for at least one node:"), checks=()),
    # round 14: ess/pmi's and ess/singleton's help (orte/mca/ess/pmi/help-ess-pmi.txt, ompi/mca/rte help): an MPI
    # program started by srun when Open MPI has no Slurm / PMI support, or the pip-installed mpi4py's own Open MPI
    Row("direct launch by srun unsupported", "launch-args",
        "The MPI program was started directly with srun, but the Open MPI it links was built without Slurm's PMI "
        "support (often the one a pip wheel or a container brings), so it cannot start.",
        "Launch with mpirun (inside the allocation) instead of srun, or use an Open MPI built --with-slurm / "
        "--with-pmix and `srun --mpi=pmix`.",
        ("The application appears to have been direct launched using \"srun\",",
         "but OMPI was not built with SLURM's PMI support and therefore cannot",
         "but OMPI was not built with SLURM support. This usually happens"), checks=()),
    # round 27: the TCP BTL's connect handshake (opal/mca/btl/tcp/btl_tcp_endpoint.c) reaching another process than
    # the one it dialled: an address two hosts share (docker0, virbr0, a NAT'd or link-local interface) was tried
    Row("TCP BTL reached another process", "wrong-interface",
        "Open MPI's TCP transport connected to an address that another process answered: an interface whose "
        "address is not unique across the hosts (docker0, virbr0, a NAT'd bridge) was used instead of the network "
        "the hosts share.", "Restrict the TCP transport to the shared network: --mca btl_tcp_if_include IFACE (or "
        "btl_tcp_if_exclude lo,docker0,virbr0), and oob_tcp_if_include for the daemons.",
        ("received unexpected process identifier {}", "received unexpected process identifier: got {} expected {}"),
        checks=("net.interface",)),
    # round 27: a PMIx client started with no PMIx server to talk to (PMIx_Init's PMIX_ERR_NOT_FOUND, logged as
    # "PMIX ERROR: NOT-FOUND in file client/pmix_client.c at line N"): a rank launched by srun without --mpi=pmix or
    # without the launcher's environment (srun --export=NONE), or run by hand
    Row("no PMIx server", "launch-args",
        "The MPI process found no PMIx server in its environment: it was started by srun without the PMIx plugin "
        "(--mpi=pmix) or with the environment that names the server removed (--export=NONE), or outside a launcher.",
        "Launch with `srun --mpi=pmix --export=ALL` (or mpirun inside the allocation).",
        ("PMIX ERROR: NOT-FOUND in file client/pmix_client.c at line {}",), checks=()),
    Row("run as root refused", "launch-args",
        "mpirun (orterun, Open MPI 5's prterun) refuses to start as root unless told to (orterun.c's and PRRTE's "
        "schizo root check): a container or a scheduler hook running the job as root.",
        "Run the job as a non-root user, or add --allow-run-as-root (or OMPI_ALLOW_RUN_AS_ROOT=1 and "
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1) to the launch.",
        ("{} has detected an attempt to run as root.", "{} cannot provide the help message when run as root."),
        checks=()),
    Row("executable not found", "launch-args",
        "mpirun could not find the program on a node (a typo'd option taken as the program, or not installed "
        "at that path there).", "Use an absolute path that exists on every node; check mpirun's options.",
        ("{} was unable to find the specified executable file, and therefore did not launch the job.",
         "{} was unable to find the specified executable file, and therefore did"), checks=()),
    Row("could not launch the application", "launch-args",
        "mpirun could not start a process (not executable, a working directory missing on that node, or a "
        "system limit).", "Read the Error: / Node: lines that follow.",
        ("{} was unable to launch the specified application as it encountered an error:",
         "{} was unable to launch the specified application as it could not access",
         "{} was unable to launch the specified application as it could not change to the specified working "
         "directory:", "{} was unable to start the specified application as it encountered an"), checks=()),
    Row("system limit exceeded", "open-files",
        "A node hit a limit on processes, pipes or network connections while mpirun started ranks.",
        "Raise the limits (`ulimit -n`, `ulimit -u`) for the job, or place fewer ranks per node.",
        ("Error: system limit exceeded on number of pipes that can be open",
         "Error: system limit exceeded on number of network connections that can be open",
         "Error: system limit exceeded on number of processes that can be started")),
    Row("rank killed by a signal", "unknown",
        "mpirun reports a rank that died of a signal (decoded on its own: 9 is usually the OOM killer).", _RANK,
        ("{} noticed that process rank {} with PID {} on node {} exited on signal {} ({}).",
         "{} noticed that process rank {} with PID {} on node {} exited on signal {}.",
         "{} noticed that process rank {} with PID {} on node {} exited on"), root_cause=False, checks=()),
    Row("a rank returned non-zero", "unknown",
        "The job ended and some ranks returned a non-zero exit code.", _RANK,
        ("While {} job {} terminated normally, {} process returned", "While {} job {} terminated normally, {} "
         "processes returned", "{} job {} terminated normally, but {} process returned",
         "{} job {} terminated normally, but {} processes returned"), root_cause=False, checks=()),
    Row("a rank exited improperly", "unknown",
        "A rank exited without MPI_Finalize or called abort, and mpirun took the job down.", _RANK,
        ("{} has exited due to process rank {} with PID {} on",
         "{} has exited due to a process exiting without calling \"finalize\","), root_cause=False, checks=()),
    Row("job aborted without a known process", "unknown", "mpirun saw the job abort but not which rank.", _RANK,
        ("{} noticed that the job aborted, but has no info as to the process",
         "{} noticed that the job aborted by signal, but has no info as"), root_cause=False, checks=()),
)

_OOM = ("The step used more memory than its cgroup allows (--mem / --mem-per-cpu / --mem-per-gpu): ask for more "
        "(`seff JOBID` shows the peak), or load the model with less host memory (fewer DataLoader workers, less "
        "CPU offload).")
_SCHED = "Check the job's record (`sacct -j JOBID -o JobID,State,ExitCode,Elapsed,Timelimit`, `scontrol show job`)."

SLURM_ROWS: tuple[Row, ...] = (
    # round 25: plugin.c's load failure as srun prints it (a switch / MPI / task plugin whose library is missing
    # where srun runs: srun started inside a container, or a node whose Slurm install differs)
    Row("plugin not loadable", "launch-args",
        "srun could not load one of its plugins: the plugin's libraries are missing where srun runs (srun started "
        "inside a container image instead of around it, or a Slurm build that does not match the node's).",
        "Run srun on the host and put the container in srun's options (`srun --environment=... python ...`, "
        "`--container-image`), not the other way round; or use the node's own Slurm.",
        ("Couldn't load specified plugin name for {}",), checks=()),
    # round 27: task/affinity's check of a --cpu-bind against the step's CPUs (src/plugins/task/affinity/
    # dist_tasks.c) and the errno it fails the launch with (ESLURMD_CPU_BIND_ERROR, src/common/slurm_errno.c): since
    # Slurm 22.05 srun no longer inherits --cpus-per-task from the job, so an explicit binding can fall outside it
    Row("CPU binding outside the step", "launch-args",
        "srun's CPU binding asks for CPUs outside the step's allocation (an explicit --cpu-bind mask / map, or a "
        "--cpus-per-task that srun no longer inherits from the job since Slurm 22.05).",
        "Pass --cpus-per-task to srun itself (or export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK) and keep --cpu-bind "
        "masks within the step's CPUs.",
        ("CPU binding outside of job step allocation, allocated CPUs are: {}.", "Unable to satisfy cpu bind request"),
        checks=()),
    Row("task out of memory", "oom", "srun reports a task killed for running out of memory.", _OOM,
        ("{}: task {}: Out Of Memory", "{}: tasks {}: Out Of Memory")),
    Row("oom-kill event", "oom",
        "The cgroup out-of-memory handler killed processes of the step (host memory, not GPU memory).", _OOM,
        ("Detected {} oom_kill event{} in {}. Some of the step tasks have been OOM Killed.",
         "Detected {} oom-kill event(s) in {}. Some of your processes may have been killed by the cgroup "
         "out-of-memory handler.")),
    Row("memory limit exceeded", "oom", "Slurm's accounting saw the job or step exceed its memory limit.", _OOM,
        ("Exceeded job memory limit", "Exceeded step memory limit")),
    Row("state OUT_OF_MEMORY", "oom", "The job's state is OUT_OF_MEMORY (the OOM killer ended it).", _OOM,
        ("JobState=OUT_OF_MEMORY", "State: OUT_OF_MEMORY (exit code {})")),
    Row("cancelled: time limit", "launch-args",
        "Slurm killed the job at its time limit (SIGTERM, then SIGKILL after KillWait).",
        "Ask for a longer --time, or checkpoint and resume; " + _SCHED,
        ("*** {} ON {} CANCELLED AT {} DUE TO TIME LIMIT ***",), checks=()),
    Row("cancelled: preemption", "launch-args", "A higher-priority job preempted this one.",
        "Use a partition / QoS that is not preempted, or checkpoint and requeue; " + _SCHED,
        ("*** {} ON {} CANCELLED AT {} DUE TO PREEMPTION ***",), checks=()),
    Row("cancelled: node failure", "unknown",
        "A node of the job failed (slurmd stopped answering: a crash, reboot, hardware or network failure).",
        "Ask the administrators about that node (slurmctld's log, `sinfo -R`); resubmit excluding it.",
        ("*** {} ON {} CANCELLED AT {} DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",), checks=()),
    Row("cancelled: requeue", "launch-args", "The job was requeued (by an administrator or a failure policy).",
        _SCHED, ("*** {} ON {} CANCELLED AT {} DUE TO JOB REQUEUE ***",), root_cause=False, checks=()),
    Row("cancelled: signal", "launch-args", "The step was cancelled with a signal (scancel, or the job's end).",
        _SCHED, ("*** {} ON {} CANCELLED AT {} DUE to SIGNAL {} ***",), root_cause=False, checks=()),
    Row("cancelled: task failure", "unknown",
        "Another task of the step failed and Slurm killed the rest (--kill-on-bad-exit).", _RANK,
        ("*** {} ON {} CANCELLED AT {} DUE TO TASK FAILURE ***",), root_cause=False, checks=()),
    Row("cancelled", "launch-args", "The job or step was cancelled (scancel, or one of the reasons above).",
        _SCHED, ("*** {} ON {} CANCELLED AT {} ***",), root_cause=False, checks=()),
    Row("step failed", "unknown", "A step ended with a non-zero exit code or another failure.", _RANK,
        ("*** {} ON {} FAILED (non-zero exit code or other failure mode) ***",), root_cause=False, checks=()),
    Row("step aborted", "unknown", "srun is tearing the step down after a task ended.", _RANK,
        ("Job step aborted: Waiting up to {} seconds for job step to finish.", "Job step aborted"),
        root_cause=False, checks=()),
    Row("task exited with a code", "unknown", "srun reports a task's non-zero exit code (decoded on its own).",
        _RANK, ("{}: task {}: Exited with exit code {}", "{}: tasks {}: Exited with exit code {}"), root_cause=False,
        checks=()),
    Row("cannot create step", "launch-args",
        "srun could not start the step inside the allocation (more tasks, GPUs or memory than allocated, or "
        "nodes not ready); the reason follows.", "Ask srun for what the allocation has (or allocate more); "
        + _SCHED, ("Unable to create step for job {}: {}",), checks=()),
    Row("cannot allocate resources", "launch-args",
        "The allocation request was refused (a partition, GPU count, memory or node count that cannot be "
        "satisfied, or an account / QoS limit); the reason follows.", "Fix the sbatch / srun request; " + _SCHED,
        ("Unable to allocate resources: {}",), checks=()),
)

OPENMPI = build("openmpi", "https://github.com/open-mpi/ompi/tree/v4.1.8/orte",
                "Open MPI 4.1.8 (ORTE), with 3.1 / 4.0 and PRRTE (Open MPI 5) wordings", OPENMPI_ROWS)
SLURM = build("slurm", "https://github.com/SchedMD/slurm/tree/284c3b95f08a2dc2478499837b03355e1b9c5c75/src",
              "Slurm 26.05 (main 284c3b9), with 22.05's oom-kill wording", SLURM_ROWS)
