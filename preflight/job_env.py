"""The job's environment for every python-level probe and worker: the node's login environment, then the
host's ``setup:`` lines (hosts.yaml), then its ``env:``, then only what the test itself must control.

``setup:`` lines are what the user runs before a launch (``source .../set_env.sh``, ``conda activate
train``); they run under bash (as users write them; ``--norc``: the login environment is already there),
their stdout is dropped (it would mix with the probe's), and a failing setup is said on stderr
(``preflight-setup: failed ...``) while the probe still runs, so the finding can say why an import
fails. On npu clusters a host without ``setup:`` sources CANN's set_env.sh from where it is installed.

>>> from preflight.inventory import ClusterSpec, Host
>>> job_command(Host("n1", "n1"), ClusterSpec(), ["python3", "-c", "print(1)"])
"python3 -c 'print(1)'"
>>> job_command(Host("n1", "n1", env={"A": "1"}), ClusterSpec(), ["python3"], {"RANK": "0"})
'env A=1 RANK=0 python3'
>>> "set_env.sh" in job_command(Host("n1", "n1"), ClusterSpec(accelerator="npu"), ["python3"])
True
>>> parse_setup("x\\npreflight-setup: ran 1 line(s)\\npreflight-setup: failed (exit 1): source /nope\\n")
{'ran': 'ran 1 line(s)', 'failed': 'failed (exit 1): source /nope'}
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from preflight.inventory import ClusterSpec, Host

MARK = "preflight-setup:"
CANN_ENV_REMEDY = (  # npu.env and npu.torch: what loads CANN in the job's shell
    "source CANN's set_env.sh in the job's shell: hosts.yaml setup: [source /usr/local/Ascend/ascend-toolkit/"
    "set_env.sh] (where CANN is installed) and the same line in the launch script; if it is already there, "
    "check the toolkit: ls $ASCEND_HOME_PATH/lib64/libascendcl.so")
# CANN's environment script, where the toolkit is installed: ASCEND_HOME_PATH (.../ascend-toolkit/latest, set by
# an earlier set_env.sh or the user), the default root install, the default non-root install.
DEFAULT_NPU_SETUP = (
    'for pf_f in "${ASCEND_HOME_PATH:+$ASCEND_HOME_PATH/../set_env.sh}" '
    '"${ASCEND_HOME_PATH:+$ASCEND_HOME_PATH/set_env.sh}" /usr/local/Ascend/ascend-toolkit/set_env.sh '
    '"$HOME/Ascend/ascend-toolkit/set_env.sh"; do '
    '[ -f "$pf_f" ] && { . "$pf_f"; echo "' + MARK + ' sourced $pf_f" >&2; break; }; done; true'
)  # found none: says nothing (versions.cann judges the toolkit itself)


def setup_lines(host: Host, cluster: ClusterSpec) -> list[str]:
    """The host's ``setup:`` lines; on npu clusters without any, the default that sources CANN's set_env.sh."""
    if host.setup:
        return list(host.setup)
    return [DEFAULT_NPU_SETUP] if cluster.accelerator == "npu" else []


def job_command(host: Host, cluster: ClusterSpec, argv: Sequence[str],
                overrides: Mapping[str, str] | None = None) -> str:
    """``argv`` as a shell command that runs in the job's environment (see the module docstring)."""
    env = {**host.env, **(overrides or {})}
    command = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *argv] if env else list(argv))
    lines = setup_lines(host, cluster)
    if not lines:
        return command
    said = " / ".join(line.strip() for line in lines if line.strip())[:200]
    steps = [f"{{\n{line}\n}} </dev/null >/dev/null || pf_fail=\"exit $?: \"{shlex.quote(line.strip()[:120])}"
             for line in lines]  # each line on its own: one that fails is named, the others still run
    ran = f"echo {shlex.quote(f'{MARK} ran {len(lines)} line(s): {said}')} >&2" if host.setup else ":"
    script = ("pf_fail=\n" + "\n".join(steps)
              + f'\nif [ -n "$pf_fail" ]; then echo "{MARK} failed ($pf_fail)" >&2; else {ran}; fi\nexec "$@"')
    runner = shlex.join(["bash", "--norc", "--noprofile", "-c", script, "preflight-setup"])
    return f"{runner} {command}"


def parse_setup(stderr: str) -> dict[str, str]:
    """What the setup said on stderr: ``sourced`` (the default's script), ``ran``, ``failed``."""
    found: dict[str, str] = {}
    for line in stderr.splitlines():
        if line.startswith(MARK):
            text = line[len(MARK):].strip()
            found[text.split(" ", 1)[0]] = text
    return found
