"""sysctl: listen-queue limits that make large collective inits drop connections, and job ports the
kernel may hand out as ephemeral source ports.

When hundreds of ranks connect to the rendezvous store, the HCCL root or the NCCL bootstrap at
once, a short accept queue (``net.core.somaxconn``) or SYN queue (``net.ipv4.tcp_max_syn_backlog``)
drops connections and init fails or hangs. The threshold follows the job (:func:`needed`): fail below
twice its rank count (every rank connects to the one listener on the master), never below the
absolute floor 128; on npu clusters warn below 65535, Ascend's recommendation for multi-node training.
``min_somaxconn`` / ``min_tcp_max_syn_backlog`` (hosts.yaml ``checks: sysctl:``) replace the rule with a
fixed minimum. Reasons and sources: docs/thresholds.md.

A job port (the master port on the master, HCCL's ports on npu nodes) that lies inside
``net.ipv4.ip_local_port_range`` and is not in ``net.ipv4.ip_local_reserved_ports`` can be taken
first as the source port of any outgoing connection; the job's bind then fails.

>>> SysctlCheck().parse({"read": ProbeOutput("net.core.somaxconn=4096\\nnet.ipv4.tcp_max_syn_backlog=\\n")})
{'values': {'net.core.somaxconn': '4096', 'net.ipv4.tcp_max_syn_backlog': None}}
>>> SysctlCheck().parse({"read": ProbeOutput("net.ipv4.ip_local_port_range=32768\\t60999\\n"
...                                          "net.ipv4.ip_local_reserved_ports=\\n")})["ports"]
{'net.ipv4.ip_local_port_range': '32768 60999', 'net.ipv4.ip_local_reserved_ports': ''}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from preflight.checks.base import *
from preflight.container import container_of, container_sysctl_remedy
from preflight.ports import (
    RESERVED_KEY,
    Range,
    format_port_list,
    hccl_ports,
    intersect,
    parse_port_list,
    reserve_remedy,
    uncovered,
)
from preflight.ranks import Ranks, world

# finding id suffix -> (kernel key, parameter holding the minimum)
LIMITS = {
    "somaxconn": ("net.core.somaxconn", "min_somaxconn"),
    "tcp_max_syn_backlog": ("net.ipv4.tcp_max_syn_backlog", "min_tcp_max_syn_backlog"),
}
KEYS = [key for key, _ in LIMITS.values()]
# Below this no multi-rank job should run, whatever its size: 128 is what the kernel used for somaxconn before
# 5.4 (and the least it picks for tcp_max_syn_backlog); anything lower was lowered on purpose.
FLOOR = 128
# The queue must hold twice the ranks: each rank connects to the master's store and then again to the
# NCCL/HCCL bootstrap root, in waves that overlap, and a rank whose SYN was dropped retries on top of them.
MARGIN = 2
# Ascend's multi-node training guide (hiascend.com) sets both to 65535 on every node: a warning below it.
NPU_RECOMMENDED = 65535
PORT_RANGE_KEY = "net.ipv4.ip_local_port_range"
PORT_KEYS = [PORT_RANGE_KEY, RESERVED_KEY]

# Reads /proc/sys directly (works where the sysctl binary is missing): one `cat` of every key's file,
# a value per line in KEYS order (each file ends in a newline; an empty value is a value: nothing
# reserved). When a file cannot be read, a "== key by key" section follows with one line per key:
# "key=value", or the bare key when it cannot be read. Numeric sysctls cannot be read with the
# shell's `read` (see batch.read_line), hence cat.
_BY_KEY = "== key by key"


def _read_command(keys: list[str]) -> str:
    """The probe for ``keys`` (constants of this module: nothing from hosts.yaml).

    >>> _read_command(["net.core.somaxconn"]).split(" 2>")[0]
    'cat /proc/sys/net/core/somaxconn'
    """
    paths = {key: "/proc/sys/" + key.replace(".", "/") for key in keys}
    by_key = "; ".join(f"if v=$(cat {path} 2>/dev/null); then printf '%s=%s\\n' {key} \"$v\"; else echo {key}; fi"
                       for key, path in paths.items())
    return f"cat {' '.join(paths.values())} 2>/dev/null || {{ echo '{_BY_KEY}'; {by_key}; }}"


def parse_values(text: str, keys: list[str]) -> dict[str, str | None]:
    """key -> value with whitespace runs made one space ("" when empty, None when unreadable).

    Keys the output does not report are left out. Also reads the older one-line-per-key form
    ("key=value", or the bare key) of recorded runs.

    >>> parse_values("65535\\n32768\\t60999\\n\\n", ["a", "b", "c"])
    {'a': '65535', 'b': '32768 60999', 'c': ''}
    >>> parse_values("65535\\n== key by key\\na=65535\\nb\\n", ["a", "b"])
    {'a': '65535', 'b': None}
    """
    lines = text.splitlines()
    by_key = lines[lines.index(_BY_KEY) + 1:] if _BY_KEY in lines else None
    if by_key is None and any(line.partition("=")[0].strip() in keys for line in lines):
        by_key = lines
    if by_key is not None:
        found: dict[str, str | None] = {}
        for line in by_key:
            key, sep, value = line.partition("=")
            if key.strip() in keys:
                found[key.strip()] = " ".join(value.split()) if sep else None
        return found
    if len(lines) != len(keys):
        return {}
    return {key: " ".join(value.split()) for key, value in zip(keys, lines, strict=True)}


class SysctlCheck(Check):
    ids = ("sysctl.somaxconn", "sysctl.tcp_max_syn_backlog", "sysctl.port_range")
    order = 20
    summary = ("net.core.somaxconn and net.ipv4.tcp_max_syn_backlog large enough for a big rendezvous; "
               "job ports outside the ephemeral range or reserved")
    # 0: the job's need (see needed); N: a fixed minimum instead (fail below N, nothing else)
    params: ClassVar[Mapping[str, Any]] = {"min_somaxconn": 0, "min_tcp_max_syn_backlog": 0}
    # The CANN version decides how many HCCL ports there are. os.container's facts, when gathered (it runs by
    # default), turn the remedies into the container's; not a need: facts files without them still judge.
    needs = ("versions",)

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("read", _read_command(KEYS + PORT_KEYS), timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        found = parse_values(outputs["read"].stdout, KEYS + PORT_KEYS)
        facts: Facts = {"values": {key: found.get(key) or None for key in KEYS}}
        if any(key in found for key in PORT_KEYS):  # absent from facts recorded before sysctl.port_range existed
            facts["ports"] = {key: found.get(key) for key in PORT_KEYS}
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        ranks = world(ctx.cluster, ctx.hosts)
        for host, host_facts in facts.items():
            values = host_facts.get("values", {})
            container = container_of(ctx.other_facts, host)
            for suffix, (key, param) in LIMITS.items():
                need = needed(key, ranks, ctx.cluster.accelerator, int(ctx.params[param]))
                findings.append(_judge(f"sysctl.{suffix}", host, key, values.get(key), need, container))
            if isinstance(host_facts.get("ports"), dict):
                findings.append(_judge_port_range(host, host_facts["ports"], ctx, container))
        return findings


@dataclass(frozen=True)
class Need:
    """What a listen-queue limit must be: ``fail`` below ``minimum``, ``warn`` below ``advised`` (0: no advice)."""

    minimum: int
    why: str  # the reasoning, for the message
    advised: int = 0
    advice: str = ""


def needed(key: str, ranks: Ranks | None, accelerator: str, override: int = 0) -> Need:
    """The threshold of ``key`` for a job of ``ranks`` (None: unknown) on an ``accelerator`` cluster.

    ``override`` (the check's min_* parameter, when set) is the minimum and nothing else applies.

    >>> from preflight.ranks import Ranks
    >>> needed("net.core.somaxconn", Ranks(16, "2 hosts x 8 devices"), "gpu").minimum  # stock 4096 passes
    128
    >>> need = needed("net.core.somaxconn", Ranks(512, "64 hosts x 8 devices"), "gpu")
    >>> print(need.minimum, need.why)  # an old kernel's 128 fails
    1024 2 x 512 ranks (64 hosts x 8 devices) connecting to the master's rendezvous at once
    >>> needed("net.core.somaxconn", None, "npu").advised, needed("net.core.somaxconn", None, "gpu").minimum
    (65535, 128)
    >>> needed("net.core.somaxconn", Ranks(512, "x"), "npu", override=4096)
    Need(minimum=4096, why='the configured minimum (checks: sysctl: min_somaxconn)', advised=0, advice='')
    """
    if override > 0:
        param = dict(LIMITS.values())[key]
        return Need(override, f"the configured minimum (checks: sysctl: {param})")
    if ranks is None:
        need = Need(FLOOR, f"the floor {FLOOR} (the rank count is unknown: give `--ranks N`)")
    elif MARGIN * ranks.count > FLOOR:
        need = Need(MARGIN * ranks.count, f"{MARGIN} x {ranks.count} ranks ({ranks.why}) connecting to the master's "
                    "rendezvous at once")
    else:
        need = Need(FLOOR, f"the floor {FLOOR} ({MARGIN} x {ranks.count} ranks ({ranks.why}) is less)")
    if accelerator == "npu" and need.minimum < NPU_RECOMMENDED:
        need = replace(need, advised=NPU_RECOMMENDED,
                       advice=f"Ascend's multi-node training guide sets {key} = {NPU_RECOMMENDED} on every node")
    return need


def _remedy(key: str, value: int, container: Mapping[str, Any] | None = None) -> str:
    """``sysctl -w`` and a sysctl.d line on a machine; the container's own settings on a container (os.container).

    >>> _remedy("net.core.somaxconn", 4096)
    "sysctl -w net.core.somaxconn=4096 && echo 'net.core.somaxconn = 4096' >> /etc/sysctl.d/90-preflight.conf"
    >>> _remedy("net.core.somaxconn", 4096, {"engine": "docker"})[:34]
    'this host is a container (docker):'
    """
    on_host = f"sysctl -w {key}={value} && echo '{key} = {value}' >> /etc/sysctl.d/90-preflight.conf"
    return container_sysctl_remedy(container, key, str(value), on_host)


def _judge(check: str, host: str, key: str, raw: str | None, need: Need,
           container: Mapping[str, Any] | None = None) -> Finding:
    expected = f">= {need.minimum}" + (f" (advised: {need.advised})" if need.advised else "")
    if raw is None or not raw.strip().isdecimal():
        return finding(check, host, Status.ERROR, f"could not read {key}", observed=raw,
                       expected=expected)
    value = int(raw)
    if value < need.minimum:
        return finding(
            check, host, Status.FAIL,
            f"{key} is {value}, below {need.minimum} = {need.why}: the kernel drops the connections the "
            "queue cannot hold and init_process_group fails or hangs",
            observed=str(value), expected=expected, remedy=_remedy(key, max(need.minimum, need.advised), container),
        )
    if value < need.advised:
        return finding(check, host, Status.WARN,
                       f"{key} is {value}: enough for this job ({need.minimum} = {need.why}), below "
                       f"{need.advised}: {need.advice}",
                       observed=str(value), expected=expected, remedy=_remedy(key, need.advised, container))
    return finding(check, host, Status.PASS, f"{key} = {value} (>= {need.minimum} = {need.why})",
                   observed=str(value), expected=expected)


def parse_port_range(text: str | None) -> Range | None:
    """``net.ipv4.ip_local_port_range`` ("32768 60999") -> (low, high), or None.

    >>> parse_port_range("32768 60999"), parse_port_range("1024"), parse_port_range(None)
    ((32768, 60999), None, None)
    """
    fields = (text or "").split()
    if len(fields) != 2 or not all(f.isdecimal() for f in fields):
        return None
    low, high = int(fields[0]), int(fields[1])
    return (low, high) if 0 <= low <= high <= 65535 else None


def _judge_port_range(host: str, ports: Mapping[str, Any], ctx: EvalContext,
                      container: Mapping[str, Any] | None = None) -> Finding:
    check = "sysctl.port_range"
    targets: list[tuple[str, Range, str]] = []  # (name, ports, how they were worked out)
    if host == ctx.cluster.master:
        targets.append((f"master port {ctx.cluster.master_port}", (ctx.cluster.master_port,) * 2, ""))
    if ctx.cluster.accelerator == "npu":
        hccl = hccl_ports(host, ctx)
        if hccl.base is not None:  # a bad HCCL_IF_BASE_PORT is ports.reserved's to report
            targets.append((f"HCCL ports {hccl.text}", hccl.range, hccl.why))
    if not targets:
        return finding(check, host, Status.SKIP, f"no job port to check on {host} (not the master, and "
                       "HCCL ports are checked on npu clusters only)")
    raw_range, raw_reserved = ports.get(PORT_RANGE_KEY), ports.get(RESERVED_KEY)
    window = parse_port_range(raw_range)
    reserved = parse_port_list(raw_reserved)
    expected = " and ".join(name for name, _, _ in targets) + " outside the ephemeral range or reserved"
    if window is None or reserved is None:
        bad = PORT_RANGE_KEY if window is None else RESERVED_KEY
        return finding(check, host, Status.ERROR, f"could not read {bad}",
                       observed=str(ports.get(bad)), expected=expected)
    observed = f"{PORT_RANGE_KEY} = {window[0]}-{window[1]}; reserved: {format_port_list(reserved) or '(none)'}"
    exposed: list[str] = []
    to_reserve: list[Range] = []
    for name, wanted, why in targets:
        open_ports = intersect(uncovered(wanted, reserved), window)
        if open_ports:
            to_reserve.append(wanted)
            part = "" if open_ports == [wanted] else f"of {format_port_list([wanted])}; "
            exposed.append(name if wanted[0] == wanted[1] else
                           f"HCCL ports {format_port_list(open_ports)} ({part}{why})")
    if exposed:
        return finding(
            check, host, Status.WARN,
            f"{' and '.join(exposed)} inside {PORT_RANGE_KEY} ({window[0]}-{window[1]}) and not in "
            f"{RESERVED_KEY}: the kernel may hand such a port to any outgoing connection as its source port "
            "before the job binds it, and the job then fails with 'address already in use' (likelier the more "
            "connections the node opens)",
            observed=observed, expected=expected,
            remedy=reserve_remedy(reserved, to_reserve, container))
    names = " and ".join(name for name, _, _ in targets)
    return finding(check, host, Status.PASS, f"{names} outside the ephemeral range {window[0]}-{window[1]} "
                   "or reserved", observed=observed, expected=expected)
