"""sysctl: listen-queue limits that make large collective inits drop connections.

When hundreds of ranks connect to the rendezvous store, the HCCL root or the NCCL bootstrap at
once, a short accept queue (``net.core.somaxconn``) or SYN queue (``net.ipv4.tcp_max_syn_backlog``)
drops connections and init fails or hangs. Ascend and NCCL guides recommend 65535.

>>> SysctlCheck().parse({"read": ProbeOutput("net.core.somaxconn=4096\\nnet.ipv4.tcp_max_syn_backlog=\\n")})
{'values': {'net.core.somaxconn': '4096', 'net.ipv4.tcp_max_syn_backlog': None}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import Check, EvalContext, Facts, finding
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

# finding id suffix -> (kernel key, parameter holding the minimum)
LIMITS = {
    "somaxconn": ("net.core.somaxconn", "min_somaxconn"),
    "tcp_max_syn_backlog": ("net.ipv4.tcp_max_syn_backlog", "min_tcp_max_syn_backlog"),
}
KEYS = [key for key, _ in LIMITS.values()]

# Reads /proc/sys directly: works where the sysctl binary is missing; one line per key.
_READ = "for k in {keys}; do printf '%s=' \"$k\"; cat /proc/sys/$(echo \"$k\" | tr . /) 2>/dev/null || echo; done"


class SysctlCheck(Check):
    family = "sysctl"
    order = 20
    summary = "net.core.somaxconn and net.ipv4.tcp_max_syn_backlog large enough for a big rendezvous"
    params: ClassVar[Mapping[str, Any]] = {"min_somaxconn": 65535, "min_tcp_max_syn_backlog": 65535}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("read", _READ.format(keys=" ".join(KEYS)), timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        values: dict[str, str | None] = {key: None for key in KEYS}
        for line in outputs["read"].stdout.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() in values:
                values[key.strip()] = value.strip() or None
        return {"values": values}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        for host, host_facts in facts.items():
            values = host_facts.get("values", {})
            for suffix, (key, param) in LIMITS.items():
                minimum = int(ctx.params.get(param, self.params[param]))
                findings.append(_judge(f"sysctl.{suffix}", host, key, values.get(key), minimum))
        return findings


def _judge(check: str, host: str, key: str, raw: str | None, minimum: int) -> Finding:
    expected = f">= {minimum}"
    remedy = (f"sysctl -w {key}={minimum} && echo '{key} = {minimum}' >> /etc/sysctl.d/90-preflight.conf")
    if raw is None or not raw.strip().isdigit():
        return finding(check, host, Status.ERROR, f"{check}: could not read {key}", observed=raw,
                       expected=expected)
    value = int(raw)
    if value < minimum:
        return finding(
            check, host, Status.FAIL,
            f"{check}: {key} is {value}, below {minimum}: with many ranks connecting at once the kernel "
            "drops connections and init_process_group fails or hangs",
            observed=str(value), expected=expected, remedy=remedy,
        )
    return finding(check, host, Status.PASS, f"{check}: {key} = {value}", observed=str(value), expected=expected)
