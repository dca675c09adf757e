"""The job's interpreter: which ``python`` and ``setup:`` lines the python-level probes run, and who said so.

A Slurm prolog or a Kubernetes init container runs as root with a bare environment: ``python3`` on its PATH
is rarely the training job's (a conda env, a uv venv, ``/opt/venv``). Whoever names the job's interpreter
wins, in this order (docs/scheduler.md):

1. ``--python PATH`` / ``--setup LINE`` (repeatable) on the command line;
2. ``PREFLIGHT_PYTHON`` / ``PREFLIGHT_SETUP`` (setup lines separated by newlines) in the environment;
3. hosts.yaml: the host's ``python:`` / ``setup:``, else ``defaults:``;
4. nobody: ``python3`` on the node's login PATH, a guess. The versions check then blames no node for what
   that interpreter lacks (``Host.interpreter_from`` is ""): a missing torch is a ``skip`` naming the
   interpreter tried and how to name the right one.

>>> from preflight.inventory import Host
>>> h = with_interpreter(Host("n1", "n1"), None, [], {"PREFLIGHT_PYTHON": "/opt/venv/bin/python"})
>>> h.python, h.interpreter_from
('/opt/venv/bin/python', 'PREFLIGHT_PYTHON')
>>> h = with_interpreter(h, "/usr/bin/python3", ["source /opt/env.sh"], {})
>>> h.python, h.setup, h.interpreter_from
('/usr/bin/python3', ('source /opt/env.sh',), '--python, --setup')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from preflight.inventory import Host

ENV_PYTHON = "PREFLIGHT_PYTHON"
ENV_SETUP = "PREFLIGHT_SETUP"
HOW_TO_NAME = ("name the job's interpreter: --python /path/to/venv/bin/python (or PREFLIGHT_PYTHON, or python: in "
               "hosts.yaml), and --setup 'source ...' / PREFLIGHT_SETUP / setup: for what activates it")


def with_interpreter(host: Host, python: str | None, setup: Sequence[str], environ: Mapping[str, str]) -> Host:
    """``host`` with the interpreter and setup lines the flags (else the environment) name; what neither
    names stays as hosts.yaml (or the default) had it. ``interpreter_from`` says who named them."""
    said: list[str] = []
    python_now, setup_now = host.python, host.setup
    if python:
        python_now = python
        said.append("--python")
    elif environ.get(ENV_PYTHON, "").strip():
        python_now = environ[ENV_PYTHON].strip()
        said.append(ENV_PYTHON)
    lines = [line for line in setup if line.strip()]
    if lines:
        setup_now = tuple(lines)
        said.append("--setup")
    elif environ.get(ENV_SETUP, "").strip():
        setup_now = tuple(line for line in environ[ENV_SETUP].splitlines() if line.strip())
        said.append(ENV_SETUP)
    if not said:
        return host
    if host.interpreter_from and len(said) < 2:  # hosts.yaml named the other half
        said.append(host.interpreter_from)
    return replace(host, python=python_now, setup=setup_now, interpreter_from=", ".join(said))


def named(host: Host) -> bool:
    """Whether anybody named this host's interpreter (else ``python3`` on the login PATH is a guess)."""
    return bool(host.interpreter_from)
