"""Exit codes and signals as a code table: what ``exitcode: -9``, ``Signal 6 (SIGABRT) received by PID``, ``exited
on signal 11``, ``task 3: Killed`` or ``exit code 137`` usually mean for a training process.

Keys are exit codes as torchrun reports them: ``-N`` for a process killed by signal N (Linux x86-64 / arm64
numbering, ``signal(7)``), ``128+N`` for the same as a shell, a container runtime or Kubernetes reports it, and the
plain codes launchers use (1, 2, 126, 127, 255). ``find`` reads them from the forms torchrun
(``torch/distributed/elastic/multiprocessing/errors``), torch.multiprocessing.spawn, DeepSpeed's launcher, mpirun
/ prterun, pdsh, srun, bash, Python's subprocess and Kubernetes print.

>>> [(d.code.name, d.code.category) for d in TABLE.decode("  exitcode  : -9 (pid: 2412)")]
[('SIGKILL', 'oom')]
>>> [d.code.code for d in TABLE.decode("traceback : Signal 6 (SIGABRT) received by PID 2413")]
['-6']
>>> [d.code.code for d in TABLE.decode("srun: error: node-3: task 5: Bus error (core dumped)")]
['-7']
>>> [d.code.category for d in TABLE.decode("[gpu3:1:381] Caught signal 7 (Bus error: nonexistent physical address)")]
['shm']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable

SOURCE = ("https://github.com/pytorch/pytorch/blob/v2.9.1/torch/distributed/elastic/multiprocessing/errors/"
          "__init__.py")
VERSION = "torch 2.9.1 failure summary; Linux signal(7) numbers (x86-64, arm64)"

_FIRST = "Read the log of the rank that failed first (torchrun's Root Cause block names it) for what it did last."
_OUTSIDE = ("Something outside the process sent it: the scheduler (time limit, preemption, scancel, a pod "
            "deleted), `timeout`, a user's Ctrl-C, or the launcher stopping the other workers after one failed. "
            "Check the scheduler's record of the job and the first worker that failed.")

# signal number: name, glibc's strsignal() text, category, root cause, meaning, fix
_SIGNALS: dict[int, tuple[str, str, str, bool, str, str]] = {
    1: ("SIGHUP", "Hangup", "ssh", True,
        "The terminal or SSH session that started the job closed, and its processes got SIGHUP.",
        "Start long jobs under nohup, tmux / screen or the scheduler (sbatch), not from an interactive SSH "
        "session."),
    2: ("SIGINT", "Interrupt", "launch-args", False,
        "Interrupted: Ctrl-C, or a launcher passing an interrupt on to its workers (DeepSpeed's runner sends "
        "SIGINT, then SIGTERM).", _OUTSIDE),
    3: ("SIGQUIT", "Quit", "unknown", False, "Quit (Ctrl-\\ or a kill -QUIT from outside).", _OUTSIDE),
    4: ("SIGILL", "Illegal instruction", "version-mismatch", True,
        "Illegal instruction: a binary (torch, an extension, a library) uses CPU instructions this node lacks "
        "(AVX-512, AVX2: built for a newer CPU), or a corrupt binary.",
        "Use builds for the oldest CPU among the nodes (or rebuild extensions on it); compare `lscpu` flags "
        "between the nodes."),
    5: ("SIGTRAP", "Trace/breakpoint trap", "app-fault", True,
        "A trap in native code (a debugger breakpoint, or a runtime's __builtin_trap on a fatal error).", _FIRST),
    6: ("SIGABRT", "Aborted", "unknown", False,  # alone it names nothing: the watchdog's own line does
        "Aborted in native code: most often ProcessGroupNCCL's (or HCCL's) watchdog taking the process down "
        "after a collective timed out or NCCL failed (`Watchdog caught collective operation timeout`, "
        "`terminate called after throwing an instance of ...` above), else a C++ assertion or an uncaught C++ "
        "exception.",
        "Read the lines before the abort in that rank's log: a watchdog timeout points to the rank that never "
        "joined the collective; a C++ exception's `what():` is the real error."),
    7: ("SIGBUS", "Bus error", "shm", True,
        "Bus error: usually shared memory ran out (/dev/shm is 64 MB in a default Docker container; DataLoader "
        "workers and NCCL use it), or a memory-mapped file was truncated underneath.",
        "Give the container more shared memory (`--shm-size=16g` or `--ipc=host`; an emptyDir medium: Memory on "
        "Kubernetes), or fewer DataLoader workers."),
    8: ("SIGFPE", "Floating point exception", "app-fault", True,
        "An arithmetic fault in native code (an integer division by zero).", _FIRST),
    9: ("SIGKILL", "Killed", "oom", True,
        "Killed with SIGKILL, which a process cannot catch: almost always the kernel's OOM killer (host RAM "
        "or the container / cgroup / Slurm --mem limit ran out), else the scheduler (scancel, time limit, "
        "preemption) or the launcher killing what did not stop after SIGTERM.",
        "Check `dmesg -T | grep -i -E 'killed process|oom'` (or the scheduler's OOM record) on that node; load "
        "the model with less host memory (low_cpu_mem_usage, fewer DataLoader workers, less CPU offload) or ask "
        "for more memory."),
    10: ("SIGUSR1", "User defined signal 1", "launch-args", False,
         "SIGUSR1, which schedulers send before a time limit (Slurm --signal=USR1@T) and the job did not "
         "handle.", _OUTSIDE),
    11: ("SIGSEGV", "Segmentation fault", "app-fault", True,
         "A crash in native code: native libraries that do not match (torch vs CUDA / NCCL / the driver, an "
         "extension built against another torch), a bug in an extension, or a stack overflow.",
         "Run the rank with `python -X faulthandler` (or gdb) to see the crashing frame; check that torch, "
         "CUDA, NCCL and compiled extensions come from matching builds on every node."),
    12: ("SIGUSR2", "User defined signal 2", "launch-args", False,
         "SIGUSR2, sent from outside (a scheduler's warning signal) and not handled.", _OUTSIDE),
    13: ("SIGPIPE", "Broken pipe", "fabric", False,
         "The process wrote to a pipe or socket whose reader had gone (the launcher, a logger or a peer exited "
         "first).", _FIRST),
    14: ("SIGALRM", "Alarm clock", "unknown", True, "An alarm timer the process set went off unhandled.",
         _FIRST),
    15: ("SIGTERM", "Terminated", "launch-args", False,
         "Asked to terminate: by the scheduler (cancel, time limit, preemption, a pod deleted), `timeout`, or "
         "torchrun / the launcher stopping the remaining workers after one failed.", _OUTSIDE),
    16: ("SIGSTKFLT", "Stack fault", "unknown", True, "A coprocessor stack fault (unused on modern Linux).",
         _FIRST),
    17: ("SIGCHLD", "Child exited", "unknown", False, "A child process ended (not fatal by itself).", _FIRST),
    18: ("SIGCONT", "Continued", "unknown", False, "Continued after a stop (not fatal by itself).", _OUTSIDE),
    19: ("SIGSTOP", "Stopped (signal)", "unknown", False, "Stopped from outside (kill -STOP, a debugger).",
         _OUTSIDE),
    20: ("SIGTSTP", "Stopped", "unknown", False, "Stopped from the terminal (Ctrl-Z).", _OUTSIDE),
    21: ("SIGTTIN", "Stopped (tty input)", "unknown", False,
         "A background process read from the terminal and was stopped.", _OUTSIDE),
    22: ("SIGTTOU", "Stopped (tty output)", "unknown", False,
         "A background process wrote to the terminal and was stopped.", _OUTSIDE),
    23: ("SIGURG", "Urgent I/O condition", "unknown", False, "Urgent socket data (not fatal by itself).", _FIRST),
    24: ("SIGXCPU", "CPU time limit exceeded", "launch-args", True,
         "The process used up its CPU-time limit (`ulimit -t`, a scheduler's CPU-time limit).",
         "Raise the CPU-time limit of the job (ulimit -t / the scheduler's limit)."),
    25: ("SIGXFSZ", "File size limit exceeded", "unknown", True,
         "A file grew past the file-size limit (`ulimit -f`) while writing a checkpoint or a log.",
         "Raise `ulimit -f` for the job or write to a file system without that limit."),
    26: ("SIGVTALRM", "Virtual timer expired", "unknown", True, "A virtual timer the process set went off "
                                                                "unhandled.", _FIRST),
    27: ("SIGPROF", "Profiling timer expired", "unknown", True, "A profiler's timer went off unhandled.",
         _FIRST),
    28: ("SIGWINCH", "Window changed", "unknown", False, "The terminal was resized (not fatal by itself).",
         _FIRST),
    29: ("SIGIO", "I/O possible", "unknown", True, "Asynchronous I/O notification that was not handled.",
         _FIRST),
    30: ("SIGPWR", "Power failure", "unknown", True, "The system reported a power failure.", _OUTSIDE),
    31: ("SIGSYS", "Bad system call", "unknown", True,
         "A system call was refused (a container's seccomp profile blocks it).",
         "Run the container with a seccomp profile that allows it (a newer runtime, or --security-opt "
         "seccomp=unconfined to confirm)."),
}

_CHECKS = {"oom": ("os.memory",), "shm": ("os.shm",), "ssh": ("os",), "version-mismatch": ("versions",)}


def _entries() -> dict[str, Code]:
    out: dict[str, Code] = {}
    for n, (name, text, category, root, meaning, fix) in _SIGNALS.items():
        checks = _CHECKS.get(category, ())
        out[f"-{n}"] = Code(f"-{n}", name, f"Signal {n} ({name}, '{text}'). {meaning}", category, fix, checks,
                            root)
        out[str(128 + n)] = Code(str(128 + n), f"{name} (128+{n})",
                                 f"Exit status {128 + n} = 128+{n}: a shell, container runtime or Kubernetes "
                                 f"reporting death by signal {n} ({name}). {meaning}", category, fix, checks, root)
    out["1"] = Code("1", "exit 1", "The process exited with status 1: a Python exception (its traceback is above "
                    "in that rank's log) or sys.exit(1).", "unknown", _FIRST, (), False)
    out["2"] = Code("2", "exit 2", "Exit status 2: a usage error (argparse rejected the command line, e.g. "
                    "--local-rank=N given to a script that only knows --local_rank).", "launch-args",
                    "Run the worker's command by hand to see the usage error; accept the launcher's arguments "
                    "or read LOCAL_RANK from the environment.", (), True)
    out["126"] = Code("126", "exit 126", "Exit status 126: the command was found but could not be executed "
                      "(not executable, wrong architecture).", "launch-args",
                      "Check the entry point's permissions and architecture on that node.", (), True)
    out["127"] = Code("127", "exit 127", "Exit status 127: command not found (python, torchrun or the script "
                      "is not on PATH on that node: a virtualenv or module not loaded there).", "launch-args",
                      "Use absolute paths or set up the same environment on every node (PATH, the virtualenv).",
                      (), True)
    out["255"] = Code("255", "exit 255", "Exit status 255: ssh's status when it could not connect or "
                      "authenticate (pdsh, mpirun or DeepSpeed starting a remote node), or exit(-1) from a "
                      "program.", "ssh", "Check `ssh -o BatchMode=yes HOST true` from the launching node to "
                      "every host.", ("os",), True)
    return out


ENTRIES = _entries()
_BY_NAME = {name: n for n, (name, *_rest) in _SIGNALS.items()}
_BY_TEXT = {text.lower(): n for n, (_name, text, *_rest) in _SIGNALS.items()}
_TEXTS = "|".join(re.escape(t) for t in sorted(_BY_TEXT, key=len, reverse=True))
_CODE = r"(-?\d+)"
# (regex, how its group becomes a key): "code" as written, "signal" a number -> -N, "name" SIGxxx, "text" strsignal
_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"exit ?code\s*[:=]\s*" + _CODE, re.I), "code"),  # torchrun, kubectl "Exit Code: 137"
    (re.compile(r"signal\s+(\d+)\s*\(\s*SIG\w+\s*\)\s*received by pid", re.I), "signal"),
    (re.compile(r"exits with return code\s*=\s*" + _CODE, re.I), "code"),  # DeepSpeed launch.py
    (re.compile(r"terminated with signal\s+(SIG[A-Z0-9]+)", re.I), "name"),  # torch.multiprocessing.spawn
    (re.compile(r"(?:terminated|exited) with exit code\s*:?\s*" + _CODE, re.I), "code"),  # spawn, pdsh, srun
    (re.compile(r"exited on\s+signal\s+(\d+)", re.I), "signal"),  # mpirun / prterun
    (re.compile(r"killed by signal\s+(\d+)", re.I), "signal"),  # pdsh
    # round 38: TGI's launcher ("Download process was signaled to shutdown with signal 7", "Shard 0 ... signal 9")
    (re.compile(r"signaled to shutdown with signal\s+(\d+)", re.I), "signal"),
    (re.compile(r"non-zero exit status\s+" + _CODE, re.I), "code"),  # subprocess.CalledProcessError
    (re.compile(r"died with <Signals\.(SIG[A-Z0-9]+):\s*\d+>", re.I), "name"),  # CalledProcessError, signal
    (re.compile(r"\bexit status\s*[:=]?\s*" + _CODE, re.I), "code"),
    (re.compile(r"\bexit code\s+" + _CODE, re.I), "code"),
    (re.compile(rf"\btasks? [\d,\-\[\]]+:\s*({_TEXTS})\b", re.I), "text"),  # srun: error: HOST: task N: Killed
    (re.compile(rf"\bline \d+:\s+\d+\s+({_TEXTS})\b", re.I), "text"),  # bash: "line 3: 1234 Killed  python ..."
    (re.compile(rf"^\s*({_TEXTS})\s+\(core dumped\)", re.I), "text"),  # the shell: "Segmentation fault (core dumped)"
    (re.compile(r"^\s*(Killed)\s*$"), "text"),  # the shell's own line for a foreground job killed by SIGKILL
    # torch.utils.data's worker watchdog (_utils/signal_handling.py): "DataLoader worker (pid N) is killed by
    # signal: Killed." (strsignal's text) and its "(pid(s) N, M) exited unexpectedly" sibling names no signal
    (re.compile(rf"is killed by signal:\s*({_TEXTS})", re.I), "text"),
    # the handlers that print a fatal signal inside the process: UCX's (ucs/debug/debug.c, loaded with NCCL's and
    # Open MPI's UCX plugins: "[host:pid:tid] Caught signal 7 (Bus error: nonexistent physical address)"), gdb's
    # "Thread 7 received signal SIGBUS, Bus error.", glog's / c10's "*** SIGSEGV (@0x0) received by PID 12 (TID ...)",
    # Python's faulthandler "Fatal Python error: Bus error"
    (re.compile(r"\bCaught signal\s+(\d+)\s*\(", re.I), "signal"),
    (re.compile(r"\breceived signal\s+(SIG[A-Z0-9]+)\b"), "name"),
    (re.compile(r"\*\*\*\s*(SIG[A-Z0-9]+)\s*\(@0x[0-9a-f]+\)\s*received by PID", re.I), "name"),
    (re.compile(rf"\bFatal Python error:\s*({_TEXTS})\b", re.I), "text"),
    # round 22: psiginfo's text of a SIGBUS with BUS_ADRERR ("Bus error: nonexistent physical address"), quoted
    # without a handler's prefix: a page of a mapped file (a /dev/shm segment) beyond its end
    (re.compile(r"\b(Bus error):\s*nonexistent physical address", re.I), "text"),
)


def _key(kind: str, value: str) -> str | None:
    if kind == "code":
        return str(int(value))
    if kind == "signal":
        return f"-{int(value)}"
    n = _BY_NAME.get(value.upper()) if kind == "name" else _BY_TEXT.get(value.lower())
    return f"-{n}" if n else None


_HINTS = ("exit", "signal", "core dumped", "task", "line ", "killed", "fatal python error",
          "received by pid", "nonexistent physical address")  # every form has one of these


def find(line: str) -> list[str]:
    """The exit codes and signals a line reports, each once, in the order they appear."""
    low = line.lower()
    if not any(h in low for h in _HINTS):
        return []
    found: list[tuple[int, str]] = []
    for regex, kind in _FORMS:
        for m in regex.finditer(line):
            k = _key(kind, m[1])
            if k is not None:
                found.append((m.start(1), k))
    out: list[str] = []
    for _, k in sorted(found):
        if k not in out:
            out.append(k)
    return out


TABLE = CodeTable("exit_signal", SOURCE, VERSION, ENTRIES, find)
