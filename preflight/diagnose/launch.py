"""Read a training launch line (torchrun, torch.distributed.run/launch, deepspeed, or the MASTER_* environment).

Pure: no file or network access. What the launch will do is resolved the way the launchers do it
(torchrun's defaults: one node, one process, MASTER_ADDR 127.0.0.1, port 29500; ``--rdzv-backend
c10d`` takes the store from ``--rdzv-endpoint``, port 29400 by default; deepspeed's master is the
first host of its hostfile). A corrected line keeps every other token as the user wrote it.

>>> launch = parse_launch(["torchrun", "--nnodes=2", "--nproc_per_node", "8", "--master-addr=node1", "train.py"])
>>> launch.launcher, launch.master_addr, launch.master_port, launch.nnodes, launch.nproc_per_node
('torchrun', 'node1', 29500, (2, 2), '8')
>>> launch.corrected({"master_addr": "10.0.0.1", "master_port": "29501"})
'torchrun --nnodes=2 --nproc_per_node 8 --master-addr=10.0.0.1 --master-port=29501 train.py'
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

TORCH_DEFAULT_PORT = 29500
C10D_DEFAULT_PORT = 29400
ENV_VARS = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "NODE_RANK", "LOCAL_WORLD_SIZE")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"^python[0-9.]*$")

# option spelling -> canonical name; options not listed take no value (flags)
_TORCH_VALUES = {
    "--nnodes": "nnodes", "--nproc-per-node": "nproc_per_node", "--nproc_per_node": "nproc_per_node",
    "--rdzv-backend": "rdzv_backend", "--rdzv_backend": "rdzv_backend",
    "--rdzv-endpoint": "rdzv_endpoint", "--rdzv_endpoint": "rdzv_endpoint",
    "--rdzv-id": "rdzv_id", "--rdzv_id": "rdzv_id", "--rdzv-conf": "rdzv_conf", "--rdzv_conf": "rdzv_conf",
    "--max-restarts": "max_restarts", "--max_restarts": "max_restarts",
    "--monitor-interval": "monitor_interval", "--monitor_interval": "monitor_interval",
    "--start-method": "start_method", "--start_method": "start_method",
    "--event-log-handler": "event_log_handler", "--event_log_handler": "event_log_handler",
    "--role": "role", "--log-dir": "log_dir", "--log_dir": "log_dir", "-r": "redirects", "--redirects": "redirects",
    "-t": "tee", "--tee": "tee", "--local-ranks-filter": "local_ranks_filter",
    "--local_ranks_filter": "local_ranks_filter", "--node-rank": "node_rank", "--node_rank": "node_rank",
    "--master-addr": "master_addr", "--master_addr": "master_addr",
    "--master-port": "master_port", "--master_port": "master_port",
    "--local-addr": "local_addr", "--local_addr": "local_addr", "--logs-specs": "logs_specs",
    "--logs_specs": "logs_specs", "--numa-binding": "numa_binding", "--numa_binding": "numa_binding",
    "--signals-to-handle": "signals_to_handle", "--signals_to_handle": "signals_to_handle",
    "--shutdown-timeout": "shutdown_timeout", "--shutdown_timeout": "shutdown_timeout",
    "--duplicate-stdout-filters": "duplicate_stdout_filters",
    "--duplicate_stdout_filters": "duplicate_stdout_filters",
    "--duplicate-stderr-filters": "duplicate_stderr_filters",
    "--duplicate_stderr_filters": "duplicate_stderr_filters",
    "--local-rank": "local_rank", "--local_rank": "local_rank",
}
_TORCH_FLAGS = {"--standalone", "-m", "--module", "--no-python", "--no_python", "--run-path", "--run_path",
                "--virtual-local-rank", "--virtual_local_rank", "--use-env", "--use_env", "-h", "--help"}
_DEEPSPEED_VALUES = {
    "-H": "hostfile", "--hostfile": "hostfile", "-i": "include", "--include": "include", "-e": "exclude",
    "--exclude": "exclude", "--num_nodes": "num_nodes", "--num_gpus": "num_gpus", "--num_accelerators": "num_gpus",
    "--min_elastic_nodes": "min_elastic_nodes", "--max_elastic_nodes": "max_elastic_nodes",
    "--master_port": "master_port", "--master_addr": "master_addr", "--node_rank": "node_rank",
    "--launcher": "launcher", "--launcher_args": "launcher_args", "--enable_each_rank_log": "enable_each_rank_log",
    "--autotuning": "autotuning", "--bind_core_list": "bind_core_list", "--ssh_port": "ssh_port",
    "--venv_script": "venv_script", "--comment": "comment",
}
_DEEPSPEED_FLAGS = {"--module", "--no_python", "--no_local_rank", "--no_ssh_check", "--force_multi", "--save_pid",
                    "--elastic_training", "--bind_cores_to_rank", "--no_ssh", "-h", "--help"}
_MODULES = {"torch.distributed.run": "torch.distributed.run", "torch.distributed.launch": "torch.distributed.launch",
            "deepspeed.launcher.runner": "deepspeed"}
DEEPSPEED_HOSTFILE = "/job/hostfile"


@dataclass(frozen=True)
class Spot:
    """Where an option sits in the argv: its token index, the spelling used, and ``--opt=value`` or not."""

    index: int
    spelling: str
    inline: bool


@dataclass
class Launch:
    """A parsed launch line; ``options`` by canonical name (``master_addr``), values as written."""

    launcher: str  # torchrun | torch.distributed.run | torch.distributed.launch | deepspeed | env
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # VAR=value in front of the launcher (and MASTER_* in env mode)
    options: dict[str, str] = field(default_factory=dict)
    spots: dict[str, Spot] = field(default_factory=dict)
    script_at: int = 0  # argv index of the first token after the launcher's options
    problems: list[str] = field(default_factory=list)
    hostfile_hosts: list[tuple[str, int | None]] | None = None  # deepspeed: (host, slots) read from the hostfile

    # --- what the launch will do ---

    @property
    def torch_like(self) -> bool:
        return self.launcher in ("torchrun", "torch.distributed.run", "torch.distributed.launch")

    @property
    def rdzv_backend(self) -> str:
        return self.options.get("rdzv_backend", "static") if self.torch_like else "static"

    def _endpoint(self) -> tuple[str | None, str | None]:
        """``--rdzv-endpoint host:port`` split (``[v6]:port`` too); (None, None) when absent."""
        value = self.options.get("rdzv_endpoint", "").strip()
        if not value:
            return None, None
        if value.startswith("["):
            host, _, rest = value[1:].partition("]")
            return host, rest.lstrip(":") or None
        if value.count(":") == 1:
            host, _, port = value.partition(":")
            return host, port or None
        return value, None

    @property
    def uses_endpoint(self) -> bool:
        return self.torch_like and self.rdzv_backend != "static" and self._endpoint()[0] is not None

    @property
    def master_addr(self) -> str | None:
        """The store's address as every rank will use it."""
        if self.launcher == "env":
            return self.env.get("MASTER_ADDR") or None
        if self.uses_endpoint:
            return self._endpoint()[0]
        if "master_addr" in self.options:
            return self.options["master_addr"]
        if self.launcher == "deepspeed":
            return self.hostfile_hosts[0][0] if self.hostfile_hosts else None
        return "127.0.0.1"  # torchrun's default

    @property
    def master_port_text(self) -> str | None:
        if self.launcher == "env":
            return self.env.get("MASTER_PORT")
        if self.uses_endpoint:
            return self._endpoint()[1] or str(C10D_DEFAULT_PORT)
        return self.options.get("master_port", str(TORCH_DEFAULT_PORT))

    @property
    def master_port(self) -> int | None:
        """The port as a number (None when it is not one)."""
        return _int(self.master_port_text)

    @property
    def nnodes(self) -> tuple[int, int] | None:
        """(min, max) nodes; None when it cannot be told (env mode, junk)."""
        if self.torch_like:
            text = self.options.get("nnodes", "1")
            low, sep, high = text.partition(":")
            lo, hi = _int(low), _int(high) if sep else _int(low)
            return (lo, hi) if lo is not None and hi is not None and 0 < lo <= hi else None
        if self.launcher == "deepspeed":
            count = _int(self.options.get("num_nodes", "-1"))
            if count is not None and count > 0:
                return count, count
            if self.hostfile_hosts:
                return len(self.hostfile_hosts), len(self.hostfile_hosts)
            return (1, 1) if self.hostfile_hosts is not None or "hostfile" not in self.options else None
        return None

    @property
    def nproc_per_node(self) -> str | None:
        """As written: a number, or torchrun's auto/gpu/cpu/xpu; None when unknown."""
        if self.torch_like:
            return self.options.get("nproc_per_node", "1")
        if self.launcher == "deepspeed":
            value = self.options.get("num_gpus")
            if value is not None and value != "-1":
                return value
            slots = {s for _, s in self.hostfile_hosts or [] if s is not None}
            return str(slots.pop()) if len(slots) == 1 else "auto"
        return self.env.get("LOCAL_WORLD_SIZE")

    @property
    def node_rank(self) -> int | None:
        if self.launcher == "env":
            return _int(self.env.get("NODE_RANK", ""))
        value = _int(self.options.get("node_rank", ""))
        return value if value is not None and value >= 0 else None

    @property
    def world_size(self) -> int | None:
        """WORLD_SIZE in env mode; nnodes x nproc-per-node for a launcher, when both are numbers."""
        if self.launcher == "env":
            return _int(self.env.get("WORLD_SIZE", ""))
        nnodes, nproc = self.nnodes, _int(self.nproc_per_node or "")
        return nnodes[1] * nproc if nnodes and nnodes[0] == nnodes[1] and nproc else None

    @property
    def rank(self) -> int | None:
        return _int(self.env.get("RANK", "")) if self.launcher == "env" else None

    # --- corrected lines ---

    def corrected(self, options: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None) -> str:
        """The launch line with ``options`` (canonical names) and ``env`` assignments set, all else kept.

        >>> parse_launch(["python", "-m", "torch.distributed.launch", "--master_port", "80", "t.py"]).corrected(
        ...     {"master_port": "29500", "master_addr": "10.0.0.1"}, {"GLOO_SOCKET_IFNAME": "eth0"})
        'GLOO_SOCKET_IFNAME=eth0 python -m torch.distributed.launch --master_port 29500 --master_addr=10.0.0.1 t.py'
        >>> parse_launch([], {"MASTER_ADDR": "127.0.0.1"}).corrected({"master_addr": "10.0.0.1"})
        'export MASTER_ADDR=10.0.0.1'
        """
        options = dict(options or {})
        env = dict(env or {})
        if self.launcher == "env":
            names = {"master_addr": "MASTER_ADDR", "master_port": "MASTER_PORT", "nnodes": "WORLD_SIZE"}
            env.update({names[k]: v for k, v in options.items() if k in names})
            options = {}
        if self.uses_endpoint and ("master_addr" in options or "master_port" in options):
            host, port = self._endpoint()
            host = options.pop("master_addr", host or "")
            port = options.pop("master_port", port or str(C10D_DEFAULT_PORT))
            options["rdzv_endpoint"] = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        argv = list(self.argv)
        inserts: list[str] = []
        for name, value in options.items():
            spot = self.spots.get(name)
            if spot is None:
                inserts.append(f"{self._spelling(name)}={value}")
            elif spot.inline:
                argv[spot.index] = f"{spot.spelling}={value}"
            elif spot.index + 1 < len(argv):
                argv[spot.index + 1] = value
        argv[self.script_at:self.script_at] = inserts
        # replace assignments in front (VAR=value or `env VAR=value`), add new ones in front
        head = 0
        while head < len(argv) and (_ASSIGNMENT.match(argv[head]) or (head == 0 and argv[head] == "env")):
            name = argv[head].partition("=")[0]
            if name in env:
                argv[head] = f"{name}={env.pop(name)}"
            head += 1
        front = [f"{k}={v}" for k, v in env.items()]
        if not argv:
            return "export " + shlex.join(front) if front else ""
        return shlex.join(front + argv)

    def _spelling(self, name: str) -> str:
        """How to write a missing option: in the style of the line (underscores if it uses them)."""
        if self.launcher == "deepspeed":
            return "--" + name
        dashes = any("-" in spot.spelling[2:] for spot in self.spots.values())
        underscores = any("_" in spot.spelling for spot in self.spots.values())
        return "--" + (name if underscores and not dashes else name.replace("_", "-"))


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def parse_launch(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> Launch:
    """Parse a launch line; ``environ`` supplies MASTER_ADDR/... when there is no launcher (env mode).

    >>> l = parse_launch(["python3", "-u", "-m", "torch.distributed.run", "--rdzv_backend", "c10d",
    ...                   "--rdzv_endpoint", "node1:29400", "--nnodes", "1:4", "train.py", "--lr", "1"])
    >>> l.launcher, l.master_addr, l.master_port, l.nnodes, l.argv[l.script_at:]
    ('torch.distributed.run', 'node1', 29400, (1, 4), ['train.py', '--lr', '1'])
    >>> e = parse_launch(["python", "train.py"], {"MASTER_ADDR": "n1", "MASTER_PORT": "29501", "WORLD_SIZE": "2"})
    >>> e.launcher, e.master_addr, e.master_port, e.world_size
    ('env', 'n1', 29501, 2)
    """
    argv = list(argv)
    launch = Launch(launcher="env", argv=argv)
    i = 0
    if argv and argv[0] == "env":
        i = 1
    while i < len(argv) and _ASSIGNMENT.match(argv[i]):
        name, _, value = argv[i].partition("=")
        launch.env[name] = value
        i += 1
    if i >= len(argv):
        return _env_mode(launch, environ, len(argv))
    program = os.path.basename(argv[i])
    if program == "torchrun":
        launch.launcher, i = "torchrun", i + 1
    elif program in ("deepspeed", "ds"):
        launch.launcher, i = "deepspeed", i + 1
    elif _PYTHON.match(program):
        j = i + 1
        while j < len(argv) and argv[j].startswith("-") and argv[j] != "-m":
            j += 2 if argv[j] in ("-W", "-X") else 1
        if j + 1 < len(argv) and argv[j] == "-m" and argv[j + 1] in _MODULES:
            launch.launcher, i = _MODULES[argv[j + 1]], j + 2
        else:
            return _env_mode(launch, environ, i)
    else:
        return _env_mode(launch, environ, i)
    values, flags = (_DEEPSPEED_VALUES, _DEEPSPEED_FLAGS) if launch.launcher == "deepspeed" else \
        (_TORCH_VALUES, _TORCH_FLAGS)
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        token = argv[i]
        if token == "--":
            i += 1
            break
        spelling, inline, value = token.partition("=")
        spelling = _expand(spelling, values, flags)
        if spelling in values:
            name = values[spelling]
            if inline:
                launch.options[name] = value
                launch.spots[name] = Spot(i, spelling, True)
                i += 1
            elif i + 1 < len(argv):
                launch.options[name] = argv[i + 1]
                launch.spots[name] = Spot(i, spelling, False)
                i += 2
            else:
                launch.problems.append(f"{spelling} has no value")
                i += 1
        else:
            if spelling not in flags:
                launch.problems.append(f"unknown {launch.launcher} option {token}")
            launch.options.setdefault(spelling.lstrip("-").replace("-", "_"), "true")
            i += 1
    launch.script_at = i
    if i >= len(argv):
        launch.problems.append("no training script after the launcher's options")
    return launch


def _expand(spelling: str, values: Mapping[str, str], flags: set[str]) -> str:
    """argparse accepts unique prefixes of long options (``--nproc`` is ``--nproc-per-node``)."""
    if spelling in values or spelling in flags or not spelling.startswith("--"):
        return spelling
    matches = {values.get(s, s) for s in [*values, *flags] if s.startswith(spelling)}
    if len(matches) == 1:
        name = matches.pop()
        return next(s for s in [*values, *flags] if values.get(s, s) == name)
    return spelling


def _env_mode(launch: Launch, environ: Mapping[str, str] | None, script_at: int) -> Launch:
    """No known launcher: the ranks read MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK from the environment."""
    launch.launcher = "env"
    launch.script_at = script_at
    merged = {k: v for k, v in (environ or {}).items() if k in ENV_VARS}
    merged.update(launch.env)
    launch.env = {**launch.env, **merged}
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if not launch.env.get(name):
            launch.problems.append(f"{name} is not set (no torchrun/deepspeed launch line, and not in the environment)")
    return launch


def parse_hostfile(text: str) -> list[tuple[str, int | None]]:
    """A DeepSpeed hostfile: ``host slots=N`` per line, ``#`` comments.

    >>> parse_hostfile("# workers\\nworker-1 slots=4\\nworker-2 slots=4  # second\\n\\nworker-3\\n")
    [('worker-1', 4), ('worker-2', 4), ('worker-3', None)]
    """
    hosts: list[tuple[str, int | None]] = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        slots = next((_int(w.partition("=")[2]) for w in words[1:] if w.startswith("slots=")), None)
        hosts.append((words[0], slots))
    return hosts
