"""The launchers' own errors as code tables, keyed by normalized template (``table_templates``): DeepSpeed's
launcher (``deepspeed/launcher/runner.py``, ``launch.py``, ``multinode_runner.py``), accelerate's (``accelerate
launch``: ``commands/launch.py``, ``utils/launch.py``, ``state.py``) and the remote shells they start nodes with
(pdsh's ``src/common/pipecmd.c`` and OpenSSH's ``sshconnect.c`` / ``ssh.c`` texts), and horovodrun's
(``horovod/runner``: the ssh check, the task servers and their interface checks, host parsing), and Lightning's
Trainer / Fabric checks of its devices and of the launcher around it.

>>> [d.code.category for d in DEEPSPEED.decode("ValueError: Hostfile contains a bad entry: node1 slot=8, unable to "
...     "proceed with launching")]
['hostfile']
>>> [d.code.name for d in ACCELERATE.decode("ConnectionError: Tried to launch distributed communication on port "
...     "`29500`, but another process is utilizing it.")]
['main process port in use']
>>> [d.code.category for d in REMOTE_SHELL.decode("ssh: connect to host worker-2 port 22: Connection refused")]
['ssh']
>>> [d.code.category for d in HOROVOD.decode("Exception: Unable to find a set of common task-to-task communication "
...     "interfaces: [(0, {'eth0': [('10.0.0.2', 12345)]}), (1, {'ib0': [('10.1.0.3', 23456)]})]")]
['wrong-interface']
>>> [d.code.category for d in LIGHTNING.decode(" But your machine only has: [0]")]
['device-mapping']
"""

from __future__ import annotations

from preflight.explain.table_templates import Row, build

_HOSTFILE = ("Write the hostfile as one `HOSTNAME slots=N` line per node (N = GPUs to use there), each host once, "
             "names the launching node can resolve and reach by SSH.")
_SSH = ("Set up key-based SSH from the launching node to every host (`ssh -o BatchMode=yes HOST hostname` must "
        "work without a prompt), on the right port, with the host keys accepted.")
_SSH_CHECKS = ("os", "net.reachability")

DEEPSPEED_ROWS: tuple[Row, ...] = (
    Row("no hostfile (local only)", "hostfile",
        "No hostfile at --hostfile (default /job/hostfile): DeepSpeed runs on this node only.",
        "Pass --hostfile for a multi-node run; on one node this warning is harmless.",
        ("Unable to find hostfile, will proceed with training with local resources only.",), root_cause=False,
        checks=()),
    Row("hostfile malformed", "hostfile", "The hostfile could not be parsed (empty, or not `host slots=N`).",
        _HOSTFILE, ("Hostfile is empty or not formatted correctly, unable to proceed with launching.",
                    "Hostfile is not formatted correctly, unable to proceed with training."), checks=()),
    Row("hostfile bad entry", "hostfile", "A hostfile line is not `HOSTNAME slots=N`.", _HOSTFILE,
        ("Hostfile contains a bad entry: {}, unable to proceed with launching",), checks=()),
    Row("hostfile duplicate host", "hostfile", "A host is listed twice in the hostfile.", _HOSTFILE,
        ("Hostfile contains multiple entries for {}, unable to proceed with launching",
         "Hostfile contains duplicate hosts, unable to proceed with training."), checks=()),
    Row("include/exclude host not in hostfile", "hostfile",
        "--include / --exclude name a host or slot the hostfile does not have.", _HOSTFILE,
        ("Hostname '{}' not found in hostfile",), checks=()),
    # round 23: a slot is a GPU index of the host: CUDA_VISIBLE_DEVICES (which the launcher turns into slots 0..n-1
    # before DeepSpeed 0.15.2) or --include HOST:N naming a GPU the host's slot list lacks
    Row("include slot not on host", "device-mapping",
        "--include / --exclude (or CUDA_VISIBLE_DEVICES, which the launcher turns into them) name a GPU slot the "
        "host does not have in the launcher's list.",
        "Name GPUs that exist on the host (`--include host:0,2` with slots=N covering them), and unset "
        "CUDA_VISIBLE_DEVICES when passing --include; DeepSpeed 0.15.2+ maps visible devices to their indices.",
        ("No slot '{}' specified on host '{}'",), checks=("gpu.devices.count",)),
    Row("no other nodes in hostfile", "hostfile",
        "--num_nodes asks for more than one node but the hostfile has only this one.", _HOSTFILE,
        ("Num nodes is >1 but no extra nodes available via hostfile",), checks=()),
    Row("MPI runner needs equal devices", "hostfile",
        "The MPICH / Intel MPI / MVAPICH runner needs the same slot count on every host.", _HOSTFILE,
        ("MPICH requires same number of devices per node", "Intel MPI requires same number of devices per node",
         "mvapich requires same number of devices per node"), checks=()),
    Row("no GPU", "driver",
        "The launcher found no GPU on this node: no driver or device in the container, CUDA_VISIBLE_DEVICES "
        "empty, or a torch without CUDA.", "Check `nvidia-smi` and torch.cuda.device_count() in the job's "
        "environment (--gpus all, the nvidia runtime, a CUDA build of torch).",
        ("Unable to proceed, no GPU resources available",), checks=("gpu.devices.count", "gpu.devices.driver")),
    Row("first host not reachable by ssh", "ssh",
        "The launcher's `ssh HOST hostname` check to the first host of the hostfile failed.", _SSH,
        ("Using hostfile at {} but host={} was not reachable via ssh. If you are running with a single node "
         "please remove {} or setup passwordless ssh.",), checks=_SSH_CHECKS),
    Row("master address not detected", "launch-args",
        "`ssh FIRST_HOST hostname -I` failed or printed no address, so the launcher has no --master_addr.",
        "Pass --master_addr (the first host's address on the training network) and check SSH to it.",
        ("Unable to detect suitable master address via `hostname -I`, please manually specify one via "
         "--master_addr",), checks=("os", "net.master_resolution")),
    Row("multi-node launcher missing", "launch-args",
        "The launcher for --launcher (pdsh by default, or openmpi / mpich / impi / mvapich / slurm) is not "
        "installed on the launching node.", "Install it (`apt install pdsh`) or choose another --launcher.",
        ("launcher '{}' not installed.",), checks=()),
    Row("launcher arguments conflict", "launch-args", "Conflicting launcher arguments.",
        "Use either --num_nodes/--num_gpus or --include/--exclude; give --master_addr for elastic training.",
        ("Cannot specify num_nodes/gpus with include/exclude", "Master Addr is required when elastic training "
         "is enabled", "num_nodes {} is not in MIN:MAX format", "MIN:MAX format is only supported in elastic "
         "training"), checks=()),
    Row("worker exited", "unknown",
        "DeepSpeed's per-node launcher reports a worker's exit code (decoded on its own: -9 SIGKILL is usually "
        "the OOM killer).", "Read that worker's log for its traceback; decode the return code.",
        ("{} exits with return code = {}",), root_cause=False, checks=()),
)

ACCELERATE_ROWS: tuple[Row, ...] = (
    Row("main process port in use", "port-in-use",
        "accelerate found --main_process_port already taken on this node (another job or a leftover process).",
        "Free the port (`ss -ltnp 'sport = :PORT'`) or pass another --main_process_port (0 picks a free one on "
        "a single node).", ("Tried to launch distributed communication on port `{}`, but another process is "
                             "utilizing it.",)),
    Row("RTX 4000: P2P/IB not disabled", "p2p",
        "accelerate refuses NCCL on RTX 40xx cards with P2P or InfiniBand enabled (no peer-to-peer support: "
        "NCCL would hang).", "Export NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1, or start with `accelerate launch`.",
        ("Using RTX 4000 series doesn't support faster communication broadband via P2P or IB.",),
        checks=("allreduce",)),
    Row("RTX 4000: P2P/IB disabled", "p2p",
        "accelerate launch disabled P2P and IB for RTX 40xx cards itself (a warning; slower, not a failure).",
        "Nothing to do; the job runs without P2P.", ("Using RTX 4000 series which doesn't support faster "
                                                      "communication speedups. Ensuring P2P and IB "
                                                      "communications are disabled.",), root_cause=False,
        checks=()),
    Row("launch options conflict", "launch-args", "accelerate launch options that cannot go together.",
        "Fix the `accelerate launch` arguments or the config file (`accelerate config`).",
        ("You can only use one of `--cpu`, `--multi_gpu`, `--tpu`, `--use_deepspeed`, `--use_fsdp` at a time.",
         "You need to use at least 2 processes to use `--multi_gpu`.",
         "You need to manually pass in `--num_processes` using this config yaml."), checks=()),
    Row("defaults used (warning)", "launch-args",
        "accelerate launch filled in options the config did not give (a warning, not a failure).",
        "Nothing to do, or run `accelerate config` to set them.",
        ("The following values were not passed to `accelerate launch` and had defaults used instead:",),
        root_cause=False, checks=()),
    Row("backend not available", "launch-args",
        "accelerate was asked for a process-group backend this device cannot use (NCCL on an Ascend NPU, HCCL on "
        "a GPU, a backend the torch build lacks) and names the one it would use.",
        "Pass the backend accelerate names (--ddp_backend hccl on NPUs, nccl on GPUs, gloo on CPUs) or drop the "
        "option; accelerate < 0.30 printed the message with its placeholders unfilled.",
        ("Your assigned backend {} is not avaliable, please use {}",), checks=()),
    Row("MPI not found", "launch-args", "The multi-CPU launch needs mpirun / mpiexec, which is not on PATH.",
        "Install Intel MPI, Open MPI or MVAPICH on the node, or put it on PATH.",
        ("mpirun or mpiexec were not found. Ensure that Intel MPI, Open MPI, or MVAPICH are installed.",),
        checks=()),
    Row("DeepSpeed not installed", "version-mismatch", "--use_deepspeed without DeepSpeed installed.",
        "Install deepspeed in the job's environment on every node.",
        ("DeepSpeed is not installed => run `pip3 install deepspeed` or build it from source.",)),
    Row("FP8 not available", "version-mismatch",
        "--mixed_precision fp8 without Transformer Engine, MS-AMP or torchao.",
        "Install one of them on every node, or use bf16.",
        ("FP8 is not available on this machine. Please ensure that either Transformer Engine, MSAMP or torchao "
         "is installed.",)),
)

REMOTE_SHELL_ROWS: tuple[Row, ...] = (
    Row("ssh: connect failed", "ssh",
        "ssh could not open a TCP connection to the host (refused: no sshd on that port; timed out: firewall or "
        "host down; no route).", _SSH, ("ssh: connect to host {} port {}: {}",), checks=_SSH_CHECKS),
    Row("ssh: host name not resolved", "name-resolution", "ssh could not resolve the host name of a node.",
        "Make every host of the hostfile resolve on the launching node (/etc/hosts or DNS).",
        ("ssh: Could not resolve hostname {}: {}",), checks=("net.hostname", "net.master_resolution")),
    Row("ssh: permission denied", "ssh", "ssh reached the host but no key was accepted.", _SSH,
        ("Permission denied (publickey", "Permission denied, please try again."), checks=("os",)),
    Row("ssh: host key verification failed", "ssh",
        "The host's key is unknown or changed, and ssh will not ask in a non-interactive launch.",
        "Accept the host keys once (`ssh-keyscan HOST >> ~/.ssh/known_hosts`) or fix the changed key.",
        ("Host key verification failed.",
         # round 25: sshconnect.c's warnings when the stored key differs and strict checking is on
         "{} host key for {} has changed and you have requested strict checking.",
         "WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!"), checks=("os",)),
    Row("ssh: key or directory permissions", "ssh",
        "OpenSSH refuses a private key, host key, config or ~/.ssh directory that others can read or write "
        "(authfile.c's permission check, sshd's StrictModes); without the key the login fails, and an sshd with no "
        "usable host key exits (a secret mounted with mode 0644 in a container, a home directory group-writable).",
        "Make private keys and host keys mode 0600 owned by their user, ~/.ssh 0700, ~/.ssh/config and "
        "authorized_keys 0600 (Kubernetes: the secret's defaultMode: 0600), and the home directory not "
        "group-writable.",
        ("WARNING: UNPROTECTED PRIVATE KEY FILE!", "Permissions {} for {} are too open.",
         "It is required that your private key files are NOT accessible by others.",
         "sshd: no hostkeys available -- exiting.", "Unable to load host key: {}", "Bad owner or permissions on {}",
         "Authentication refused: bad ownership or modes for directory {}"), checks=("os",)),
    Row("pdsh: remote command failed", "ssh",
        "pdsh's ssh to a node exited non-zero (255: the connection or login failed; another code: the remote "
        "command failed).", _SSH, ("{}: ssh exited with exit code {}", "{}: ssh killed by signal {}",
                                   "{}: ssh exited with nonzero status {}"), checks=_SSH_CHECKS),
    Row("pdsh: exec failed", "launch-args", "pdsh could not run its remote command (rcmd) for a host.",
        "Install ssh on the launching node and set PDSH_RCMD_TYPE=ssh.",
        ("exec cmd {} failed for host {}", "execvp {} failed: {}"), checks=()),
)

_HOROVOD_NIC = ("Name the interface every host shares for horovodrun's own traffic: --network-interfaces eth0 (and "
                "NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME for the job's), an interface with an IPv4 address that the "
                "hosts reach each other on.")
HOROVOD_ROWS: tuple[Row, ...] = (
    Row("ssh check failed", "ssh", "horovodrun's ssh check to a remote host failed before launching.", _SSH,
        ("ssh not successful for host {}:", "could not connect to some hosts via ssh"), checks=_SSH_CHECKS),
    Row("task function launch failed", "wrong-interface",
        "The horovod task server on a host exited non-zero: it did not start there (the host's Python or horovod) "
        "or could not reach the driver back; its own output follows the message.",
        "Read the host output after the message; where it shows a connection to the driver failing, " + _HOROVOD_NIC,
        ("Launching horovod task function was not successful:",), root_cause=False),
    Row("no common interface", "wrong-interface",
        "The hosts' task servers share no network interface name that reaches each other.", _HOROVOD_NIC,
        ("Unable to find a set of common task-to-task communication interfaces: {}",)),
    Row("no IPv4 on the common interface", "address-family",
        "The interface chosen for the driver has no IPv4 address.", _HOROVOD_NIC,
        ("Cannot find an IPv4 address of the common interface.",), checks=("net.interface", "net.address_family")),
    Row("no loopback interface", "wrong-interface", "On one local host no interface carries 127.0.0.1.",
        "Bring the loopback interface up (`ip link set lo up`; a container without it) or pass --network-interfaces.",
        ("No interface is found for address 127.0.0.1.",), checks=("net.interface",)),
    Row("no free port", "port-in-use", "horovodrun found no free port for its driver or task service.",
        "Free ports in the local port range (`ss -ltn`), or widen net.ipv4.ip_local_port_range.",
        ("Unable to find a port to bind to.",), checks=("ports.listening", "sysctl.port_range")),
    Row("bad -H entry", "hostfile", "A -H / --hosts entry is not host:slots.",
        "Write hosts as `worker-0:2,worker-1:2` (a name or address, a colon, the slot count).",
        ("Invalid host input, please make sure it has format as : worker-0:2,worker-1:2.",), checks=()),
    Row("a process exited", "unknown",
        "One of the job's processes exited non-zero and horovodrun stopped the job; the process it names failed "
        "first.", "Read that process's own output above for its error.",
        ("Horovod detected that one or more processes exited with non-zero status, thus causing the job to be "
         "terminated.",), root_cause=False, checks=()),
)

_LIGHTNING_DEVICES = ("Ask for the GPUs the process sees: `Trainer(devices=N)` with N at most `nvidia-smi -L`'s "
                      "count after CUDA_VISIBLE_DEVICES (the scheduler's allocation), or `devices='auto'`; an empty "
                      "list means torch sees no GPU at all (a CPU build of torch, or the driver).")
LIGHTNING_ROWS: tuple[Row, ...] = (
    Row("more GPUs requested than visible", "device-mapping",
        "The Trainer (or Fabric) was asked for GPUs this process does not see: more devices, or indices, than "
        "CUDA_VISIBLE_DEVICES leaves it (a scheduler that gave fewer GPUs, a second job on the node).",
        _LIGHTNING_DEVICES,
        ("You requested gpu: {} But your machine only has: {}", "You requested gpu: {}", "You requested GPUs: {}",
         "But your machine only has: {}",
         "You requested to find {} devices but this machine only has {} GPUs.",
         "You requested to find {} devices but there are no visible CUDA devices on this machine."),
        checks=("gpu.devices.count",)),
    Row("GPUs occupied", "device-mapping",
        "Lightning found the visible GPUs taken by other processes (exclusive-process compute mode, or a leftover "
        "job holding them).",
        "Free the GPUs (`nvidia-smi` lists the processes holding them) or ask for fewer devices.",
        ("You requested to find {} devices but only {} are currently available.",
         "The devices {} are occupied by other processes and can't be used at the moment."),
        checks=("gpu.devices",)),
    Row("accelerator not available", "device-mapping",
        "`accelerator='gpu'` (or 'cuda') but torch sees no GPU: no device visible to the process, a CPU build of "
        "torch, or a driver it cannot use.", _LIGHTNING_DEVICES,
        ("`{}` can not run on your system since the accelerator is not available.",
         "{} can not run on your system since the accelerator is not available.")),
    Row("devices and SLURM tasks differ", "launch-args",
        "Under Slurm, Lightning starts one process per task: `Trainer(devices=, num_nodes=)` must equal the job's "
        "`--ntasks-per-node` and `--nodes`.",
        "Make `--ntasks-per-node` equal the GPUs per node and `--nodes` equal num_nodes (or the Trainer's to them), "
        "and start the script with `srun`.",
        ("You set `devices={}` in Lightning, but the number of tasks per node configured in SLURM "
         "`--ntasks-per-node={}` does not match.",
         "You set `num_nodes={}` in Lightning, but the number of nodes configured in SLURM `--nodes={}` does not "
         "match.",
         "You set `--ntasks={}` in your SLURM bash script, but this variable is not supported."), checks=()),
    Row("devices and torchrun world size differ", "launch-args",
        "Under torchrun, `devices x num_nodes` of the Trainer must equal torchrun's world size "
        "(`--nproc_per_node x --nnodes`).", "Give the Trainer the same devices and nodes as torchrun.",
        ("You set `devices={}` and `num_nodes={}` in Lightning, but the product ({} * {}) does not match the world "
         "size ({}).",), checks=()),
    Row("invalid devices / strategy", "launch-args",
        "A Trainer option this accelerator or environment cannot take (a devices value it cannot parse, a "
        "multi-process strategy in a notebook).", "Fix the Trainer's `devices` / `strategy` arguments.",
        ("`Trainer(devices={})` value is not a valid input using {} accelerator.",
         "`Trainer(strategy={})` is not compatible with an interactive environment."), checks=()),
    Row("srun not used (warning)", "launch-args",
        "srun exists on the node but the script was not started with it, so Lightning does not take Slurm's "
        "ranks (a warning; a multi-node job then waits for nodes that never join).",
        "Start the script as `srun python train.py ...` inside the allocation.",
        ("The `srun` command is available on your system but is not used.",), root_cause=False, checks=()),
)

DEEPSPEED = build("deepspeed_launcher",
                  "https://github.com/deepspeedai/DeepSpeed/tree/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/"
                  "deepspeed/launcher", "DeepSpeed 0.19.6 (wordings since 0.6.0)", DEEPSPEED_ROWS)
ACCELERATE = build("accelerate_launcher",
                   "https://github.com/huggingface/accelerate/tree/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/"
                   "src/accelerate", "accelerate 1.15.0.dev0 (main 16cb6eb)", ACCELERATE_ROWS)
REMOTE_SHELL = build("remote_shell",
                     "https://github.com/chaos/pdsh/blob/cad4b00c3a5bb2835f86a34eaa360322b9c90ab7/src/common/"
                     "pipecmd.c", "pdsh 2.x pipecmd.c; OpenSSH sshconnect.c, authfile.c, sshd.c, readconf.c, "
                     "misc.c and auth2-pubkeyfile.c messages (openssh-portable 0ef0f5a)", REMOTE_SHELL_ROWS)
HOROVOD = build("horovodrun",
                "https://github.com/horovod/horovod/tree/2626dc87a3a8eb8fb7d2216198ce45bce0f9e65a/horovod/runner",
                "horovod 0.28.1+ (main 2626dc8; these wordings since 0.16-0.20)", HOROVOD_ROWS)
LIGHTNING = build("lightning",
                  "https://github.com/Lightning-AI/pytorch-lightning/tree/2.6.6/src/lightning",
                  "lightning 2.6.6 (fabric/accelerators/cuda.py, fabric/utilities/device_parser.py, fabric/plugins/"
                  "environments/slurm.py and torchelastic.py, pytorch/trainer/connectors/accelerator_connector.py; "
                  "pytorch_lightning 1.x's `You requested GPUs:`)", LIGHTNING_ROWS)
