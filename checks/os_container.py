"""os.container: whether a host is a container; the sysctl and ports checks then give the container's remedies.

The evidence and the remedies: preflight.container.

>>> OsContainerCheck().parse({"container": ProbeOutput("marker /.dockerenv\\n== cgroup\\n0::/\\n== mounts\\n")})
{'engine': 'docker', 'evidence': ['/.dockerenv'], 'proc_sys_ro': None}
"""

from __future__ import annotations

from collections.abc import Mapping

from preflight.checks.base import *
from preflight.container import COMMAND, parse_container


class OsContainerCheck(Check):
    ids = ("os.container",)
    order = 6
    summary = "whether the host is a container (Docker, Podman, Kubernetes): its sysctls are set when it starts"

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("container", COMMAND, timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        out = outputs.get("container", ProbeOutput("", "", None))
        return parse_container(out.stdout)

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return [_judge(host, host_facts) for host, host_facts in facts.items()]


def _judge(host: str, facts: Facts) -> Finding:
    check = "os.container"
    engine = facts.get("engine")
    evidence = ", ".join(facts.get("evidence") or [])
    if not engine:
        return finding(check, host, Status.PASS, f"{host} is not a container (no /.dockerenv, "
                       "/run/.containerenv or container cgroup)", observed="no container evidence")
    read_only = "; /proc/sys is read-only, so sysctl -w fails inside" if facts.get("proc_sys_ro") else ""
    return finding(
        check, host, Status.PASS,
        f"{host} is a container ({engine}: {evidence}): its net.* sysctls are its own network "
        f"namespace's, set when it starts (docker run --sysctl, the pod's securityContext.sysctls){read_only}; "
        "the sysctl remedies in this report say so",
        observed=f"{engine} ({evidence})")
