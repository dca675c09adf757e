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

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import Check, EvalContext, Facts, finding, majority
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status
from preflight.node_python import with_json_writer

# Runs on the node as `python -S -c PYTHON_PROBE`: -S skips site's start-up work (.pth files and all),
# and package versions come from the dist-info / egg-info directory names on the interpreter's search
# path instead of importlib.metadata. It imports neither json nor re (each costs as much as the
# interpreter's own start): ~9 ms instead of ~60 ms per host. The site dirs are rebuilt as `site`
# would: the venv's, the base interpreter's when the venv includes system site packages, the user
# site outside venvs. Must work on python >= 3.6 and never import torch. Prints one JSON object.
PYTHON_PROBE = with_json_writer(r"""
import os, sys
# JSON_WRITER
dirs = list(sys.path)
try:
    import site
    # With -S, site has not applied the venv: find its pyvenv.cfg the way site.venv() does.
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    cfgs = [c for c in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(os.path.dirname(exe_dir), "pyvenv.cfg"))
            if os.path.isfile(c)]
    if cfgs:
        dirs += site.getsitepackages([os.path.dirname(cfgs[0])])
        with open(cfgs[0]) as cfg:
            for line in cfg:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages" and value.strip().lower() == "true":
                    dirs += site.getsitepackages([sys.base_prefix])
    else:
        dirs += site.getsitepackages()
        if site.check_enableusersite():
            dirs.append(site.getusersitepackages())
except Exception:
    pass
found_dirs = []
for d in dirs:
    if d and d not in found_dirs and os.path.isdir(d):
        found_dirs.append(d)
listing = {}
def entries(d):
    if d not in listing:
        try:
            listing[d] = os.listdir(d)
        except OSError:
            listing[d] = []
    return listing[d]
def norm(name):
    out, sep = [], False
    for ch in name.lower():
        if ch in "-_.":
            if not sep:
                out.append("_")
            sep = True
        else:
            out.append(ch)
            sep = False
    return "".join(out)
def name_version(entry):
    for suffix in (".dist-info", ".egg-info"):
        if entry.endswith(suffix):
            parts = entry[:-len(suffix)].split("-")
            tag = parts[-1]
            if len(parts) > 2 and tag[:2] == "py" and len(tag) > 2 and not tag[2:].strip("0123456789."):
                parts = parts[:-1]
            if len(parts) > 1 and parts[-1] and all(parts[:-1]):
                return "-".join(parts[:-1]), parts[-1]
    return None
def dist(*names):
    wanted = set(norm(n) for n in names)
    for d in found_dirs:
        for entry in entries(d):
            found = name_version(entry)
            if found and norm(found[0]) in wanted:
                return found[1]
    return None
def cuda_of(text):
    for line in text.splitlines():
        head, sep, value = line.partition("=")
        head = head.rstrip()
        if sep and (head == "cuda" or (head[:4] == "cuda" and head[4:].lstrip()[:1] == ":")):
            value = value.strip()
            end = min([i for i in (value.find("'", 1), value.find('"', 1)) if i > 1] or [0])
            return value[1:end] if value[:1] in "'\"" and end else None
    return None
out = {"python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable}
out["torch"] = dist("torch")
out["torch_npu"] = dist("torch_npu")
out["nccl"] = dist("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11")
out["extra"] = dict((name, dist(name)) for name in sys.argv[1:])  # more names: used by the tests
out["cuda"] = None
for d in found_dirs:
    if "torch" in entries(d) and os.path.isfile(os.path.join(d, "torch", "version.py")):
        try:
            with open(os.path.join(d, "torch", "version.py")) as handle:
                out["cuda"] = cuda_of(handle.read())
        except Exception:
            pass
        break
print(js(out))
""")

INSTALL_FILES = r"""
for f in /usr/local/Ascend/ascend-toolkit/latest/*-linux/ascend_toolkit_install.info \
         /usr/local/Ascend/ascend-toolkit/latest/ascend_toolkit_install.info; do
  [ -r "$f" ] && { echo "== toolkit $f"; cat "$f"; echo; }
done
f=/usr/local/Ascend/driver/version.info; [ -r "$f" ] && { echo "== driver $f"; cat "$f"; echo; }
f=/proc/driver/nvidia/version; [ -r "$f" ] && { echo "== nvidia $f"; cat "$f"; echo; }
true
"""


@dataclass(frozen=True)
class Component:
    key: str  # fact key and finding id suffix
    label: str
    required_on: tuple[str, ...]  # accelerators on which it must be installed
    remedy: str


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


# CANN release -> torch_npu releases built for it (Ascend/pytorch README "Ascend Auxiliary Software" and
# Ascend/vision's version table). A torch_npu release also requires the torch release it is named after.
TORCH_NPU_FOR_CANN: dict[str, tuple[str, ...]] = {
    "8.5.0": ("2.7.1.post2",),
    "8.2.RC1": ("2.6.0", "2.5.1.post1", "2.1.0.post13"),
    "8.1.RC1": ("2.5.1", "2.4.0.post4", "2.3.1.post6", "2.1.0.post12"),
    "8.0.0": ("2.4.0.post2", "2.3.1.post4", "2.1.0.post10"),
    "8.0.RC3": ("2.4.0", "2.3.1.post2", "2.1.0.post8"),
    "8.0.RC2": ("2.3.1", "2.1.0.post6", "1.11.0.post14"),
}


def torch_npu_problem(torch: str | None, torch_npu: str | None, cann: str | None) -> str | None:
    """Why this torch / torch_npu / CANN combination will not work, or None.

    >>> torch_npu_problem("2.4.0", "2.4.0.post2", "8.0.0") is None
    True
    >>> torch_npu_problem("2.4.0", "2.4.0.post2", "8.1.RC1")
    'torch_npu 2.4.0.post2 is not built for CANN 8.1.RC1 (it supports 2.5.1, 2.4.0.post4, 2.3.1.post6, 2.1.0.post12)'
    >>> torch_npu_problem("2.5.1+cpu", "2.4.0.post4", "8.1.RC1")
    'torch_npu 2.4.0.post4 needs torch 2.4.0, found 2.5.1+cpu'
    """
    if not torch_npu:
        return None
    base = re.split(r"\.post|rc|\+", torch_npu)[0]
    if torch and torch.split("+")[0] != base:
        return f"torch_npu {torch_npu} needs torch {base}, found {torch}"
    supported = TORCH_NPU_FOR_CANN.get(cann or "")
    if supported and torch_npu.split("+")[0] not in supported:
        return f"torch_npu {torch_npu} is not built for CANN {cann} (it supports {', '.join(supported)})"
    return None


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
    family = "versions"
    order = 10
    summary = "python, torch, torch_npu, CUDA, NCCL, CANN and driver versions present and equal on every host"
    params: ClassVar[Mapping[str, Any]] = {"expect": {}}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [
            Probe("python", shlex.join([host.python, "-S", "-c", PYTHON_PROBE]), timeout=15),
            Probe("install_files", INSTALL_FILES, timeout=5),
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
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        expect = ctx.params.get("expect") or {}
        findings: list[Finding] = []
        broken = {h for h, f in facts.items() if f.get("python_error")}
        for host in sorted(broken):
            findings.append(finding(
                "versions.python", host, Status.ERROR,
                f"versions.python: the interpreter could not run: {facts[host]['python_error']}",
                remedy="set `python:` for this host in hosts.yaml to the training environment's interpreter"))
        for component in COMPONENTS:
            python_level = component.key in ("python", "torch", "torch_npu", "cuda", "nccl")
            values = {h: _comparable(component.key, f.get(component.key)) for h, f in facts.items()
                      if not (python_level and h in broken)}
            shown = {h: facts[h].get(component.key) for h in values}
            findings += _judge(component, values, shown, ctx, expect.get(component.key))
        if ctx.cluster.accelerator == "npu":
            findings += _judge_torch_npu(facts, broken)
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
            findings.append(finding(check, host, Status.FAIL, f"{check}: {problem}", observed=combo,
                                    expected="a pairing from Ascend/pytorch's compatibility table",
                                    remedy="pip install the torch / torch_npu pair listed for the installed CANN"))
        else:
            known = (f.get("cann") or "") in TORCH_NPU_FOR_CANN
            findings.append(finding(check, host, Status.PASS if known else Status.SKIP,
                                    f"{check}: {combo}" + ("" if known else " (CANN release not in the table)"),
                                    observed=combo))
    return findings


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _comparable(key: str, value: str | None) -> str | None:
    """Python compares on major.minor (patch releases interoperate); the rest on the full string."""
    if key == "python" and value:
        return ".".join(value.split(".")[:2])
    return value


def _judge(component: Component, values: Mapping[str, str | None], shown: Mapping[str, str | None],
           ctx: EvalContext, expected: object) -> list[Finding]:
    check = f"versions.{component.key}"
    if not values:
        return []
    present = {h: v for h, v in values.items() if v is not None}
    required = ctx.cluster.accelerator in component.required_on
    if not present:
        if expected is not None or required:
            status = Status.WARN if component.key == "torch" else Status.FAIL
            return [finding(check, h, status, f"{check}: {component.label} not found on this host",
                            expected=str(expected) if expected else "installed", remedy=component.remedy)
                    for h in sorted(values)]
        return [finding(check, None, Status.SKIP, f"{check}: {component.label} is not installed on any host")]
    if expected is not None:
        target, reason = _comparable(component.key, str(expected)), "the configured expectation"
    else:
        target, strict = majority(present)
        reason = "the cluster majority"
        if not strict:
            spread = ", ".join(f"{h}={shown[h] or 'missing'}" for h in sorted(values))
            return [finding(check, h, Status.FAIL, f"{check}: {component.label} differs with no majority: {spread}",
                            observed=shown[h] or "missing", remedy=component.remedy) for h in sorted(values)]
    findings = []
    for host in sorted(values):
        value, full = values[host], shown[host]
        if value == target:
            findings.append(finding(check, host, Status.PASS, f"{check}: {component.label} {full}",
                                    observed=full, expected=str(target)))
        else:
            what = "missing" if value is None else full
            findings.append(finding(
                check, host, Status.FAIL,
                f"{check}: {component.label} is {what} on {host}, but {target} per {reason}",
                observed=what, expected=str(target), remedy=component.remedy))
    return findings
