"""nccl: the NCCL environment of the job on every host: interface and HCA filters, leftover debug switches.

The environment NCCL will see is, strongest first: the host's ``env:`` in hosts.yaml (what the launcher
sets), the host's login environment (``NCCL_*`` and ``CUDA_VISIBLE_DEVICES`` of a non-interactive SSH
session), the file named by ``NCCL_CONF_FILE`` or else ``~/.nccl.conf``, then ``/etc/nccl.conf`` (a file
never overrides the environment; ``KEY=VALUE`` lines, ``#`` comments).

- ``nccl.socket_ifname``: ``NCCL_SOCKET_IFNAME`` (comma list of prefixes, ``^`` excludes, ``=`` exact)
  selects at least one interface that exists on the host (interfaces from the ``net`` check's facts).
- ``nccl.ib_hca``: ``NCCL_IB_HCA`` (same syntax, optional ``:port``) names HCAs (and ports) that exist
  (from the ``gpu.fabric`` facts, or /sys/class/infiniband).
- ``nccl.debug``: ``NCCL_P2P_DISABLE``, ``NCCL_IB_DISABLE``, ``NCCL_SHM_DISABLE`` (set to anything but 0),
  ``NCCL_ALGO``, ``NCCL_PROTO`` left set: NCCL's docs call them debugging switches (slow, hangs): warn.
- ``nccl.conf``: a ``~/.nccl.conf`` or ``/etc/nccl.conf`` that sets variables changes NCCL on this host
  only, unseen by whoever launches the job: warn (a file named by ``NCCL_CONF_FILE`` is wanted: not flagged).
- ``nccl.visible_devices``: ``CUDA_VISIBLE_DEVICES`` lists at least devices_per_host GPUs, all of which
  exist (indexes below the GPU count, or known UUIDs, from the ``gpu.devices`` facts): else fail.

>>> parse_conf("# tuned\\nNCCL_IB_HCA==mlx5_0\\nNCCL_DEBUG=INFO\\n")
{'NCCL_IB_HCA': '=mlx5_0', 'NCCL_DEBUG': 'INFO'}
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from preflight import ib_hca
from preflight.checks.base import *
from preflight.interfaces import select_by_filter

VARS = ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE",
        "NCCL_ALGO", "NCCL_PROTO", "NCCL_CONF_FILE", "CUDA_VISIBLE_DEVICES")
DISABLES = ("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE")
OVERRIDES = ("NCCL_ALGO", "NCCL_PROTO")
ETC_CONF = "/etc/nccl.conf"
USER_CONF = "~/.nccl.conf"
# One "login NAME=value" line per variable set in the session (values on one line).
_LOGIN = "; ".join(f'[ -z "${{{v}+x}}" ] || printf \'login %s=%s\\n\' {v} "$(printf %s "${v}" | tr "\\n" " ")"'
                   for v in VARS) + "; true"


def _files_command(host: Host) -> str:
    """Print each NCCL config file that exists, after a ``== PATH (role)`` line."""
    yaml_conf = host.env.get("NCCL_CONF_FILE")
    first = (f"f={shlex.quote(yaml_conf)}; r=named" if yaml_conf else
             'if [ -n "${NCCL_CONF_FILE:-}" ]; then f=$NCCL_CONF_FILE; r=named; else f=$HOME/.nccl.conf; r=user; fi')
    return (f'{first}; [ -f "$f" ] && {{ printf "== %s %s\\n" "$f" "$r"; cat "$f"; echo; }}; '
            f'[ -f {ETC_CONF} ] && {{ printf "== %s etc\\n" {ETC_CONF}; cat {ETC_CONF}; echo; }}; true')


def parse_conf(text: str) -> dict[str, str]:
    """NCCL's config file syntax: ``KEY=VALUE`` lines (no trimming of the value), ``#`` comments."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()):
            found[key.strip()] = value
    return found


def parse_files(text: str) -> list[dict[str, Any]]:
    """The ``== PATH role`` sections of the files probe -> [{path, role, vars}].

    >>> parse_files("== /etc/nccl.conf etc\\nNCCL_ALGO=Tree\\n")
    [{'path': '/etc/nccl.conf', 'role': 'etc', 'vars': {'NCCL_ALGO': 'Tree'}}]
    """
    files: list[dict[str, Any]] = []
    body: list[str] = []
    for line in text.splitlines() + ["== end"]:
        head = re.fullmatch(r"== (.+) (named|user|etc)", line)
        if head or line == "== end":
            if files:
                files[-1]["vars"] = parse_conf("\n".join(body))
            if head:
                files.append({"path": head[1], "role": head[2], "vars": {}})
            body = []
        else:
            body.append(line)
    return files


class NcclEnvCheck(Check):
    family = "nccl"
    ids = ("nccl.socket_ifname", "nccl.ib_hca", "nccl.debug", "nccl.conf", "nccl.visible_devices")
    accelerators = frozenset({"gpu"})
    not_applicable = "NCCL is not used"
    order = 58
    needs = ("net", "gpu.fabric", "gpu.devices")
    summary = ("NCCL environment: NCCL_SOCKET_IFNAME / NCCL_IB_HCA match interfaces and HCAs that exist, no "
               "leftover debug switches or stray nccl.conf, CUDA_VISIBLE_DEVICES fits devices_per_host")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("login", _LOGIN, timeout=5), Probe("files", _files_command(host), timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        login: dict[str, str] = {}
        for line in outputs.get("login", ProbeOutput("")).stdout.splitlines():
            name, sep, value = line.removeprefix("login ").partition("=")
            if line.startswith("login ") and sep and name in VARS:
                login[name] = value
        return {"login": login, "files": parse_files(outputs.get("files", ProbeOutput("")).stdout)}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        env_of = {h.name: dict(h.env) for h in ctx.hosts}
        findings: list[Finding] = []
        for host in sorted(facts):
            env = effective_env(facts[host], env_of.get(host, {}))
            findings.append(_socket_ifname(host, env, ctx.other_facts.get("net", {}).get(host)))
            findings.append(_ib_hca(host, env, ctx.other_facts.get("gpu.fabric", {}).get(host)))
            findings.append(_debug(host, env))
            findings.append(_conf(host, facts[host]))
            findings.append(_visible(host, env, ctx.other_facts.get("gpu.devices", {}).get(host),
                                     int(ctx.cluster.devices_per_host)))
        return findings


def effective_env(host_facts: Facts, yaml_env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """NAME -> (value, where from): hosts.yaml, then login, then the first conf file, then /etc/nccl.conf.

    >>> effective_env({"login": {"NCCL_ALGO": "Ring"}, "files": []}, {"NCCL_ALGO": "Tree"})["NCCL_ALGO"]
    ('Tree', 'hosts.yaml env')
    """
    found: dict[str, tuple[str, str]] = {}
    layers: list[tuple[Mapping[str, str], str]] = [(yaml_env, "hosts.yaml env"),
                                                   (host_facts.get("login") or {}, "login environment")]
    files = sorted(host_facts.get("files") or [], key=lambda f: f.get("role") == "etc")
    layers += [(f.get("vars") or {}, str(f.get("path"))) for f in files]
    for values, source in layers:
        for name, value in values.items():
            if name in VARS and name not in found:
                found[name] = (str(value), source)
    return found


def _shown(name: str, env: Mapping[str, tuple[str, str]]) -> str:
    value, source = env[name]
    return f"{name}={value!r} ({source})"


def _unset_remedy(name: str, source: str) -> str:
    if source == "hosts.yaml env":
        return f"remove {name} from env: in hosts.yaml"
    if source == "login environment":
        return f"grep -rn {name} /etc/environment /etc/profile.d ~/.bashrc ~/.profile  # remove it there"
    return f"sed -i '/^{name}=/d' {shlex.quote(source)}"


def _socket_ifname(host: str, env: Mapping[str, tuple[str, str]], net: Facts | None) -> Finding:
    check = "nccl.socket_ifname"
    if "NCCL_SOCKET_IFNAME" not in env:
        return finding(check, host, Status.PASS, f"NCCL_SOCKET_IFNAME unset on {host}: NCCL picks an "
                       "interface itself (see net.interface)", observed="unset")
    value = env["NCCL_SOCKET_IFNAME"][0]
    shown = _shown("NCCL_SOCKET_IFNAME", env)
    names = sorted((net or {}).get("interfaces") or {})
    if not names:
        return finding(check, host, Status.ERROR, f"the interfaces of {host} were not read (net facts "
                       f"missing): cannot check {shown}", observed=shown)
    selected = select_by_filter(value, names)
    if len(value) < 2 or not selected:
        why = "NCCL ignores values shorter than two characters" if len(value) < 2 else \
            f"it selects no interface (there are {', '.join(names)})"
        usable = [n for n in names if n != "lo" and not n.startswith("docker")]
        return finding(check, host, Status.FAIL,
                       f"{shown} on {host}: {why}: NCCL fails to init ('no socket interface found')",
                       observed=f"{value!r} selects {', '.join(selected) or 'nothing'}",
                       expected=f"a filter that matches an interface of {', '.join(names)}",
                       remedy=f"export NCCL_SOCKET_IFNAME={shlex.quote('=' + usable[0]) if usable else '...'}  "
                              "# or fix it under env: in hosts.yaml")
    return finding(check, host, Status.PASS, f"{shown} selects {', '.join(selected)} on {host}",
                   observed=", ".join(selected))


def _ib_hca(host: str, env: Mapping[str, tuple[str, str]], fabric: Facts | None) -> Finding:
    check = "nccl.ib_hca"
    if "NCCL_IB_HCA" not in env:
        return finding(check, host, Status.PASS, f"NCCL_IB_HCA unset on {host}: NCCL uses every HCA",
                       observed="unset")
    value = env["NCCL_IB_HCA"][0]
    shown = _shown("NCCL_IB_HCA", env)
    if fabric is None:
        return finding(check, host, Status.ERROR, f"the HCAs of {host} were not read (gpu.fabric facts "
                       f"missing): cannot check {shown}", observed=shown)
    devices: dict[str, list[int]] = {str(ca["name"]): [int(p["port"]) for p in ca.get("ports") or []]
                                     for ca in fabric.get("cas") or []}
    for name in fabric.get("sys_devices") or []:
        devices.setdefault(str(name), [])
    hca = ib_hca.parse(value)  # as NCCL reads it (preflight/ib_hca.py)
    selected = hca.devices(sorted(devices))
    known = ", ".join(sorted(devices)) or "none"
    missing: list[str] = []
    for entry in [] if hca.exclude else hca.entries:
        if not any(entry.names(device, hca.exact) for device in devices):
            missing.append(entry.name)
        elif entry.port is not None and devices.get(entry.name) and entry.port not in devices[entry.name]:
            missing.append(entry.text)
    if missing or not selected:
        why = f"names {', '.join(missing)}, which {host} does not have" if missing else "selects no HCA"
        return finding(check, host, Status.FAIL,
                       f"{shown} {why} (HCAs: {known}): NCCL finds no IB device and falls back to TCP "
                       "sockets, or fails when NCCL_IB_DISABLE is not set",
                       observed=f"selects {', '.join(selected) or 'nothing'}", expected=f"HCAs among {known}",
                       remedy="ibstat -l  # then set NCCL_IB_HCA to names from that list (=mlx5_0,mlx5_1 for exact "
                              "names), or unset it")
    return finding(check, host, Status.PASS, f"{shown} selects {', '.join(selected)} on {host}",
                   observed=", ".join(selected))


def _debug(host: str, env: Mapping[str, tuple[str, str]]) -> Finding:
    check = "nccl.debug"
    left = [n for n in DISABLES if n in env and env[n][0].strip() not in ("", "0")]
    left += [n for n in OVERRIDES if n in env and env[n][0].strip()]
    if left:
        listing = "; ".join(_shown(n, env) for n in left)
        return finding(check, host, Status.WARN,
                       f"debugging switches left set on {host}: {listing}: NCCL's docs warn they give "
                       "sub-optimal speed, hangs or crashes in production",
                       observed=listing, expected="unset",
                       remedy="; ".join(_unset_remedy(n, env[n][1]) for n in left))
    return finding(check, host, Status.PASS, f"no NCCL debugging switch set on {host}", observed="none")


def _conf(host: str, host_facts: Facts) -> Finding:
    check = "nccl.conf"
    files = [f for f in host_facts.get("files") or [] if f.get("vars") and f.get("role") in ("user", "etc")]
    if files:
        listing = "; ".join(f"{f['path']}: {', '.join(f'{k}={v}' for k, v in f['vars'].items())}" for f in files)
        return finding(check, host, Status.WARN,
                       f"NCCL config files on {host} set variables ({listing}): they change NCCL on this "
                       "host only, unseen by the job's launcher", observed=listing, expected="no nccl.conf",
                       remedy="; ".join(f"mv {shlex.quote(str(f['path']))} {shlex.quote(str(f['path']) + '.off')}"
                                        for f in files) + "  # put wanted settings in the job's environment")
    return finding(check, host, Status.PASS, f"no NCCL config file sets a variable on {host}",
                   observed="none")


def _visible(host: str, env: Mapping[str, tuple[str, str]], gpu: Facts | None, wanted: int) -> Finding:
    check = "nccl.visible_devices"
    if "CUDA_VISIBLE_DEVICES" not in env:
        return finding(check, host, Status.PASS, f"CUDA_VISIBLE_DEVICES unset on {host}: every GPU is "
                       "visible", observed="unset")
    value = env["CUDA_VISIBLE_DEVICES"][0]
    shown = _shown("CUDA_VISIBLE_DEVICES", env)
    items = [item.strip() for item in value.split(",") if item.strip()]
    gpus = [g for g in (gpu or {}).get("gpus") or []]
    problems = []
    if len(items) < wanted:
        lost = str(len(items)) if len(items) == wanted - 1 else f"{len(items)}..{wanted - 1}"
        problems.append(f"{len(items)} of {wanted} devices (devices_per_host) listed: local rank {lost} gets "
                        "'invalid device ordinal'")
    if gpus:
        uuids = {str(g.get("uuid")) for g in gpus}
        absent = [i for i in items if not ((i.isdecimal() and int(i) < len(gpus))
                                           or (i.startswith(("GPU-", "MIG-")) and any(u.startswith(i) for u in uuids)))]
        if absent:
            problems.append(f"{', '.join(absent)} not among the {len(gpus)} GPUs of {host}")
    if problems:
        return finding(check, host, Status.FAIL, f"{shown} on {host}: {'; '.join(problems)}",
                       observed=value, expected=f"{wanted} existing GPUs",
                       remedy=f"export CUDA_VISIBLE_DEVICES={','.join(map(str, range(wanted)))}  # or unset it")
    return finding(check, host, Status.PASS, f"{shown} lists {len(items)} GPUs on {host}",
                   observed=value)
