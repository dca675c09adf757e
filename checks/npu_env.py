"""npu.env: the CANN environment the job will see, in the job's shell (login env, ``setup:``, ``env:``).

torch_npu loads ``libascendcl.so`` and ``libhccl.so`` through LD_LIBRARY_PATH, which CANN's ``set_env.sh`` sets
along with ASCEND_HOME_PATH (ASCEND_TOOLKIT_HOME on older toolkits) and ASCEND_OPP_PATH (the operator
packages). A node whose job shell lacks them fails at ``import torch_npu`` with ``libhccl.so: cannot open shared
object file ... Please run 'source set_env.sh' in the CANN installation path``. The probe prints the variables
and where each library resolves (a folder of LD_LIBRARY_PATH, else the loader cache, ``ldconfig -p``).

The smoke import (``import torch_npu``; ``torch.npu.device_count()``) is npu.torch, run only when asked: it
takes seconds on a real node.

>>> parse_env("ASCEND_HOME_PATH=/opt/cann/latest\\nASCEND_OPP_PATH unset\\n"
...           "lib libascendcl.so /opt/cann/latest/lib64/libascendcl.so\\nlib libhccl.so missing\\n")
... # doctest: +NORMALIZE_WHITESPACE
{'vars': {'ASCEND_HOME_PATH': '/opt/cann/latest', 'ASCEND_OPP_PATH': None},
 'libs': {'libascendcl.so': '/opt/cann/latest/lib64/libascendcl.so', 'libhccl.so': None}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.job_env import CANN_ENV_REMEDY, job_command, parse_setup

VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH")
LIBRARIES = ("libascendcl.so", "libhccl.so")
_SCRIPT = (
    'for v in ' + " ".join(VARIABLES) + '; do if printenv "$v" >/dev/null; then '
    'printf "%s=%s\\n" "$v" "$(printenv "$v")"; else printf "%s unset\\n" "$v"; fi; done; '
    'for lib in ' + " ".join(LIBRARIES) + '; do found=; old=$IFS; IFS=:; '
    'for d in ${LD_LIBRARY_PATH:-}; do [ -n "$d" ] && [ -e "$d/$lib" ] && { found="$d/$lib"; break; }; done; '
    'IFS=$old; if [ -z "$found" ]; then l=$(command -v ldconfig || echo /sbin/ldconfig); '
    'found=$("$l" -p 2>/dev/null | awk -v l="$lib" \'$1 == l {print $NF; exit}\'); fi; '
    'echo "lib $lib ${found:-missing}"; done')


def parse_env(text: str) -> dict[str, Any]:
    """The probe's lines -> {vars: {name: value or None}, libs: {library: path or None}}; never raises."""
    variables: dict[str, str | None] = {}
    libs: dict[str, str | None] = {}
    for line in text.splitlines():
        if line.startswith("lib "):
            parts = line.split(" ", 2)
            if len(parts) == 3:
                libs[parts[1]] = None if parts[2].strip() == "missing" else parts[2].strip()
        elif line.endswith(" unset") and "=" not in line:
            variables[line[:-len(" unset")]] = None
        elif "=" in line:
            name, value = line.split("=", 1)
            variables[name] = value
    return {"vars": variables, "libs": libs}


class NpuEnvCheck(Check):
    ids = ("npu.env",)
    order = 45
    accelerators = frozenset({"npu"})
    not_applicable = "no NPUs: CANN is not needed"
    summary = ("CANN environment of the job's shell: set_env.sh's ASCEND_HOME_PATH / ASCEND_OPP_PATH set, "
               "libascendcl and libhccl resolvable")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("env", job_command(host, cluster, ["sh", "-c", _SCRIPT, "npu-env"]), timeout=15)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        env = outputs.get("env", ProbeOutput(""))
        return {**parse_env(env.stdout), "setup": parse_setup(env.stderr)}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return [_judge_env(host, host_facts) for host, host_facts in sorted(facts.items())]


def _setup_said(facts: Facts) -> str:
    setup = facts.get("setup") or {}
    said = (str(setup[k]) for k in ("failed", "sourced", "ran") if setup.get(k))
    return next(said, "nothing sourced (no setup: line, no set_env.sh found)")


def _judge_env(host: str, facts: Facts) -> Finding:
    check = "npu.env"
    variables: dict[str, str | None] = facts.get("vars") or {}
    libs: dict[str, str | None] = facts.get("libs") or {}
    if not variables and not libs:
        return finding(check, host, Status.ERROR, f"could not read the job's environment on {host}")
    home = variables.get("ASCEND_HOME_PATH") or variables.get("ASCEND_TOOLKIT_HOME")
    missing = ([] if home else ["ASCEND_HOME_PATH unset"]) + \
        ([] if variables.get("ASCEND_OPP_PATH") else ["ASCEND_OPP_PATH unset"]) + \
        [f"{lib} not found on LD_LIBRARY_PATH or in the loader cache" for lib in LIBRARIES if not libs.get(lib)]
    setup = _setup_said(facts)
    if missing:
        return finding(check, host, Status.FAIL,
                       f"CANN's environment is not loaded in the job's shell on {host} "
                       f"({'; '.join(missing)}; setup: {setup}): import torch_npu fails there (libhccl.so: cannot "
                       "open shared object file)", observed="; ".join(missing),
                       expected="ASCEND_HOME_PATH, ASCEND_OPP_PATH set; libascendcl.so and libhccl.so resolvable",
                       remedy=CANN_ENV_REMEDY)
    shown = f"ASCEND_HOME_PATH={home}; {LIBRARIES[0]} at {libs.get(LIBRARIES[0])}"
    return finding(check, host, Status.PASS, f"{shown} (setup: {setup})", observed=shown)
