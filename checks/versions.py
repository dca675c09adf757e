"""versions: python, torch, torch_npu, CUDA, NCCL, CANN and driver versions, and their drift.

Versions are read without importing torch (an import costs seconds and can hang on a broken
driver): package metadata for torch / torch_npu / the NCCL wheel, torch/version.py for the CUDA
torch was built with, install-info files for CANN and the Ascend driver, /proc for the NVIDIA
driver. The cluster majority decides what is right; an explicit expectation may be configured:

    checks:
      versions:
        expect: {torch: "2.4.0"}

>>> parse_install_files("== toolkit /x/ascend_toolkit_install.info\\nversion=8.0.0\\n")["cann"]
'8.0.0'
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from preflight.checks.base import *
from preflight.interpreter import HOW_TO_NAME, named
from preflight.job_env import job_command, parse_setup
from preflight.node import source
from preflight.torch_npu_table import TORCH_NPU_FOR_CANN, torch_for

# Runs on the node as `python -S -c PYTHON_PROBE`: preflight/node/versions.py (its docstring says how and why).
PYTHON_PROBE = source("versions")


# Where CANN's toolkit may be: the job's ASCEND_TOOLKIT_HOME / ASCEND_HOME_PATH (hosts.yaml env:), the same
# variables in the login environment, a non-root install ($HOME/Ascend), then the default root install.
# The first root holding an install-info file wins; its path is printed with it.
TOOLKIT_ENV = ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH")
_TOOLKIT_ROOTS = ('"${ASCEND_TOOLKIT_HOME:-}" "${ASCEND_HOME_PATH:-}" "$HOME/Ascend/ascend-toolkit/latest" '
                  "/usr/local/Ascend/ascend-toolkit/latest")
INSTALL_FILES = r"""
pf_seen=
for r in ROOTS; do
  [ -n "$r" ] && [ -z "$pf_seen" ] || continue
  for f in "$r"/*-linux/ascend_toolkit_install.info "$r"/ascend_toolkit_install.info; do
    [ -r "$f" ] && { echo "== toolkit $f"; cat "$f"; echo; pf_seen=1; }
  done
done
f=/usr/local/Ascend/driver/version.info; [ -r "$f" ] && { echo "== driver $f"; cat "$f"; echo; }
f=/proc/driver/nvidia/version; [ -r "$f" ] && { echo "== nvidia $f"; cat "$f"; echo; }
true
"""


def install_files_command(env: Mapping[str, str]) -> str:
    """The install-info probe, looking first where the host's hosts.yaml env points CANN to.

    >>> install_files_command({"ASCEND_HOME_PATH": "/opt/my cann"}).splitlines()[2][:23]
    "for r in '/opt/my cann'"
    >>> "$HOME/Ascend/ascend-toolkit/latest" in install_files_command({})
    True
    """
    configured = [shlex.quote(env[name]) for name in TOOLKIT_ENV if env.get(name, "").strip()]
    return INSTALL_FILES.replace("ROOTS", " ".join([*configured, _TOOLKIT_ROOTS]))


@dataclass(frozen=True)
class Component:
    key: str  # fact key and finding id suffix
    label: str
    required_on: tuple[str, ...]  # accelerators on which it must be installed
    remedy: str


PYTHON_LEVEL = ("python", "torch", "torch_npu", "cuda", "nccl")  # read by the job's interpreter
COMPONENTS = (
    Component("python", "Python", ("npu", "gpu", "cpu"), "install the same Python on every node"),
    Component("torch", "torch", ("npu", "gpu", "cpu"), "pip install torch==<version> in the training environment"),
    Component("torch_npu", "torch_npu", ("npu",), "pip install torch_npu==<version> matching torch and CANN"),
    Component("cuda", "CUDA (torch build)", ("gpu",), "install the torch wheel built for the cluster's CUDA"),
    Component("nccl", "NCCL (wheel)", (), "pip install the same nvidia-nccl-cuXX version everywhere"),
    Component("cann", "CANN toolkit", ("npu",), "install the same CANN toolkit (Ascend-cann-toolkit_*.run) everywhere"),
    Component("npu_driver", "Ascend driver", ("npu",), "install the same Ascend driver everywhere"),
    Component("gpu_driver", "NVIDIA driver", ("gpu",), "install the same NVIDIA driver everywhere"),
)


def torch_npu_problem(torch: str | None, torch_npu: str | None, cann: str | None) -> str | None:
    """Why this torch / torch_npu / CANN combination will not work, or None.

    The table is Ascend/pytorch's, every row (``preflight.torch_npu_table``). A torch_npu release needs the
    PyTorch its row names (else the one its name starts with); on a CANN release the table lists, it must be
    one of the torch_npu releases built for it. A CANN release the table does not list is not judged.

    >>> torch_npu_problem("2.4.0", "2.4.0.post2", "8.0.0") is None, torch_npu_problem("2.9.0", "2.9.0", "8.5.0")
    (True, None)
    >>> torch_npu_problem("2.4.0", "2.4.0.post2", "8.1.RC1")
    'torch_npu 2.4.0.post2 is not built for CANN 8.1.RC1 (it supports 2.5.1, 2.4.0.post4, 2.3.1.post6, 2.1.0.post12)'
    >>> torch_npu_problem("2.5.1+cpu", "2.4.0.post4", "8.1.RC1")
    'torch_npu 2.4.0.post4 needs torch 2.4.0, found 2.5.1+cpu'
    """
    if not torch_npu:
        return None
    package = torch_npu.split("+")[0].strip()
    wanted = torch_for(package) or re.split(r"\.post|\.?rc\d|\.?a\d|\.?b\d|\.dev", package)[0]
    if torch and _release(torch) != _release(wanted):
        return f"torch_npu {torch_npu} needs torch {wanted}, found {torch}"
    supported = TORCH_NPU_FOR_CANN.get((cann or "").strip())
    if supported and package not in supported:
        return f"torch_npu {torch_npu} is not built for CANN {cann} (it supports {', '.join(supported)})"
    return None


def _release(version: str) -> str:
    """The release numbers of a version: ``2.1.0a0+git1`` -> ``2.1.0`` (local and pre-release parts dropped)."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    return match.group(1) if match else version.strip()


def parse_install_files(text: str) -> dict[str, str | None]:
    """Versions from the install-info section dump printed by INSTALL_FILES."""
    found: dict[str, str | None] = {"cann": None, "npu_driver": None, "gpu_driver": None}
    section = ""
    for line in text.splitlines():
        if line.startswith("== "):
            section = line.split()[1] if len(line.split()) > 1 else ""
            continue
        key, sep, value = line.partition("=")
        if section == "toolkit" and sep and key.strip().lower() == "version" and found["cann"] is None:
            found["cann"] = value.strip() or None
        elif section == "driver" and sep and key.strip().lower() == "version" and found["npu_driver"] is None:
            found["npu_driver"] = value.strip() or None
        elif section == "nvidia" and found["gpu_driver"] is None:
            match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)", line)
            found["gpu_driver"] = match.group(1) if match else None
    return found


class VersionsCheck(Check):
    ids = (*(f"versions.{component.key}" for component in COMPONENTS), "versions.torch_npu_compat", "versions.setup")
    order = 10
    summary = "python, torch, torch_npu, CUDA, NCCL, CANN and driver versions present and equal on every host"
    params: ClassVar[Mapping[str, Any]] = {"expect": {}}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [
            Probe("python", job_command(host, cluster, [host.python, "-S", "-c", PYTHON_PROBE]), timeout=15),
            Probe("install_files", install_files_command(host.env), timeout=5),
        ]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        facts: Facts = {key.key: None for key in COMPONENTS}
        python = outputs["python"]
        try:
            data = json.loads(python.stdout.strip().splitlines()[-1]) if python.ok else None
        except (ValueError, IndexError):
            data = None
        if isinstance(data, dict):
            facts.update({k: _text(data.get(k)) for k in ("python", "torch", "torch_npu", "cuda", "nccl")})
            facts["executable"] = _text(data.get("executable"))
        elif python.timed_out:
            facts["python_error"] = "timed out: the interpreter did not answer within the probe timeout (killed)"
        else:
            reason = python.stderr.strip() or python.stdout.strip() or f"exit status {python.exit_status}"
            facts["python_error"] = reason[-300:]
        facts.update(parse_install_files(outputs["install_files"].stdout))
        setup = parse_setup(python.stderr)
        if setup:
            facts["setup"] = setup
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        expect = ctx.params["expect"] or {}
        findings: list[Finding] = []
        broken = {h for h, f in facts.items() if f.get("python_error")}
        for host in sorted(broken):
            findings.append(finding(
                "versions.python", host, Status.ERROR,
                f"the interpreter could not run: {facts[host]['python_error']}",
                remedy=HOW_TO_NAME))
        # Hosts whose interpreter nobody named (python3 on the login PATH): what it lacks is no evidence about
        # the node (a prolog's bare environment never sees the job's venv). Host -> the interpreter tried.
        guessed = {h.name: str(facts[h.name].get("executable") or h.python) for h in ctx.hosts
                   if h.name in facts and not named(h)}
        for component in COMPONENTS:
            python_level = component.key in PYTHON_LEVEL
            values = {h: _comparable(component.key, f.get(component.key)) for h, f in facts.items()
                      if not (python_level and h in broken)}
            shown = {h: facts[h].get(component.key) for h in values}
            findings += _judge(component, values, shown, ctx, expect.get(component.key),
                               guessed if python_level else {})
        if ctx.cluster.accelerator == "npu":
            findings += _judge_torch_npu(facts, broken)
        return findings + _judge_setup(facts)


def _judge_setup(facts: Mapping[str, Facts]) -> list[Finding]:
    """versions.setup: what the host's ``setup:`` (or the npu default) did before the python-level probes."""
    check = "versions.setup"
    findings = []
    for host in sorted(facts):
        setup = facts[host].get("setup") or {}
        if not setup:
            continue
        if "failed" in setup:
            findings.append(finding(
                check, host, Status.FAIL,
                f"the setup lines failed on {host} ({setup['failed']}): the job's environment is not what "
                "its launch will see; the python-level checks ran without it",
                observed=setup["failed"], expected="setup lines exit 0",
                remedy="fix `setup:` in hosts.yaml (run the lines by hand on the host: bash -c '...')"))
            continue
        said = setup.get("sourced") or setup.get("ran") or "ran"
        findings.append(finding(check, host, Status.PASS, f"{said}", observed=said))
    return findings


def _judge_torch_npu(facts: Mapping[str, Facts], broken: set[str]) -> list[Finding]:
    check = "versions.torch_npu_compat"
    findings = []
    for host in sorted(set(facts) - broken):
        f = facts[host]
        if not f.get("torch_npu"):
            continue  # versions.torch_npu already says it is missing
        problem = torch_npu_problem(f.get("torch"), f.get("torch_npu"), f.get("cann"))
        combo = f"torch {f.get('torch')}, torch_npu {f.get('torch_npu')}, CANN {f.get('cann') or 'unknown'}"
        if problem:
            findings.append(finding(check, host, Status.FAIL, f"{problem}", observed=combo,
                                    expected="a pairing from Ascend/pytorch's compatibility table",
                                    remedy="pip install the torch / torch_npu pair listed for the installed CANN"))
        else:
            known = (f.get("cann") or "").strip() in TORCH_NPU_FOR_CANN
            findings.append(finding(check, host, Status.PASS if known else Status.SKIP,
                                    f"{combo}" + ("" if known else " (CANN release not in the table)"),
                                    observed=combo))
    return findings


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _comparable(key: str, value: str | None) -> str | None:
    """Python compares on major.minor (patch releases interoperate); the rest on the full string."""
    if key == "python" and value:
        return ".".join(value.split(".")[:2])
    return value


def _missing(component: Component, host: str, expected: object, guess: str | None) -> Finding:
    """A required or expected component no interpreter of the job has: a fail, unless the interpreter was a
    guess (``guess``: the one tried), which says nothing about the node.

    >>> _missing(COMPONENTS[3], "n1", None, "/usr/bin/python3").status.value
    'skip'
    >>> _missing(COMPONENTS[3], "n1", None, None).status.value
    'fail'
    """
    check = f"versions.{component.key}"
    wanted = str(expected) if expected else "installed"
    if guess is not None:
        return finding(check, host, Status.SKIP,
                       f"{component.label} not found by {guess}, which nobody named as the job's "
                       "interpreter (python3 on the login PATH): not judged", observed=f"missing in {guess}",
                       expected=wanted, remedy=HOW_TO_NAME)
    by = " by the job's interpreter" if component.key in PYTHON_LEVEL else ""
    return finding(check, host, Status.FAIL, f"{component.label} not found on this host{by}",
                   observed="missing", expected=wanted, remedy=component.remedy)


def _judge(component: Component, values: Mapping[str, str | None], shown: Mapping[str, str | None],
           ctx: EvalContext, expected: object, guessed: Mapping[str, str]) -> list[Finding]:
    """One component across the hosts: the configured expectation, else the majority. ``guessed``: the hosts
    whose interpreter is a guess (python-level components), host -> the interpreter tried."""
    check = f"versions.{component.key}"
    if not values:
        return []
    present = {h: v for h, v in values.items() if v is not None}
    required = ctx.cluster.accelerator in component.required_on
    if not present:
        if expected is not None or required:
            return [_missing(component, h, expected, guessed.get(h)) for h in sorted(values)]
        return [finding(check, None, Status.SKIP, f"{component.label} is not installed on any host")]
    if expected is not None:
        target, reason = _comparable(component.key, str(expected)), "the configured expectation"
    else:
        target, strict = majority(present)
        reason = "the cluster majority"
        if not strict:
            spread = ", ".join(f"{h}={shown[h] or 'missing'}" for h in sorted(values))
            return [finding(check, h, Status.FAIL, f"{component.label} differs with no majority: {spread}",
                            observed=shown[h] or "missing", remedy=component.remedy) for h in sorted(values)]
    findings = []
    for host in sorted(values):
        value, full = values[host], shown[host]
        if value is None and expected is not None and host in guessed:  # only a guess lacks it: not judged
            findings.append(_missing(component, host, expected, guessed[host]))
        elif value == target:
            findings.append(finding(check, host, Status.PASS, f"{component.label} {full}",
                                    observed=full, expected=str(target)))
        else:
            what = "missing" if value is None else full
            findings.append(finding(
                check, host, Status.FAIL,
                f"{component.label} is {what} on {host}, but {target} per {reason}",
                observed=what, expected=str(target), remedy=component.remedy))
    return findings
