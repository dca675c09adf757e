"""The diagnose check: one launch's assumptions judged on the live hosts, then a real rendezvous dry run.

Not in the check registry (``preflight run`` never runs it): ``preflight diagnose`` builds it from a
launch line and runs it with the net and ports checks, whose facts it reads (``needs``).

Finding ids (every message ends with the fix, a corrected launch line where that is the fix):

- ``diagnose.launch`` (cluster): the line parses; nodes, node rank and world size match the hosts.
- ``diagnose.master_addr``: MASTER_ADDR resolves on the host, to the same address as elsewhere, to an
  address of the master host, and not to loopback when there is more than one node.
- ``diagnose.master_port``: 1024-65535 and nobody listens on it on the master (skip on the others).
- ``diagnose.reachability``: a TCP connect from every host to the master port (the master blamed when
  no host gets through: DROP = timeout, REJECT = refused).
- ``diagnose.hostname`` / ``diagnose.interface``: the net check's verdicts (gloo binds the host name's
  address; NCCL/GLOO/HCCL_SOCKET_IFNAME and HCCL_IF_IP exist and reach the master's network).
- ``diagnose.devices``: nproc-per-node fits the GPUs / NPUs the host has; on Atlas training (910A) 1, 2, 4 or 8 NPUs,
  2 or 4 inside one HCCS group (0-3 / 4-7, ASCEND_RT_VISIBLE_DEVICES).
- ``diagnose.rendezvous``: the dry run's verdict per rank: joined, or where it stopped and why.

Split by job: ``plan`` (the launch against the hosts), ``outcomes`` (reading the probes and the dry run),
``judge`` (the verdicts and the corrected launch); this module is the check itself: probes, steps, and the
entry points (``judge``, ``corrected_launch``, ``summary_of``).

>>> DiagnoseCheck(Plan(master="n1", master_addr="n1", port_text="29500", ranks={"n1": 0})).ident
'diagnose'
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from preflight.allreduce.probe import TORCH_PROBE
from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import ActiveCheck, EvalContext, Facts, Step, StepOutcome
from preflight.connect import CONNECTOR, LISTENER, LISTENER_READY
from preflight.diagnose.judge import Judge
from preflight.diagnose.outcomes import dryrun_results, own_addresses, parse_devices, parse_dryrun, stage_text
from preflight.diagnose.plan import Plan, launch_findings, make_plan
from preflight.diagnose.worker import DRYRUN
from preflight.interfaces import parse_getent
from preflight.inventory import ClusterSpec, Host
from preflight.job_env import job_command
from preflight.model import Finding, Status

# The plan and the dry run's parsing, importable from here as before the split.
__all__ = ["DiagnoseCheck", "Plan", "launch_findings", "make_plan", "parse_devices", "parse_dryrun"]

_DEVICES = "for f in /dev/nvidia[0-9]* /dev/davinci[0-9]*; do [ -e \"$f\" ] && echo \"$f\"; done; true"
# The login environment's interface variables reach the job as they would from the user's shell.


class DiagnoseCheck(ActiveCheck):
    family = "diagnose"
    order = 95
    by_default = False
    summary = "one launch line's MASTER_ADDR/PORT, interfaces, devices and ranks on the live hosts, plus a dry run"
    params: ClassVar[Mapping[str, Any]] = {}
    needs = ("net", "ports", "firewall", "npu")  # npu: the chip generation (910A's HCCS groups)

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    # --- gather ---

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        addr = shlex.quote(self.plan.master_addr or "")
        return [
            Probe("master_addr", f"getent ahosts {addr}", timeout=10),
            Probe("devices", _DEVICES, timeout=5),
            Probe("torch", job_command(host, cluster, [host.python, "-c", TORCH_PROBE]), timeout=15),
        ]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        missing = ProbeOutput("", "not run", None)
        resolved = outputs.get("master_addr", missing)
        addrs = parse_getent(resolved.stdout)
        if addrs:
            error = None
        elif resolved.exit_status == 2 or (resolved.ok and not resolved.stderr.strip()):
            error = "not found"
        else:
            error = (resolved.stderr.strip().splitlines() or [f"exit status {resolved.exit_status}"])[-1][:200]
        torch_out = outputs.get("torch", missing)
        torch: bool | None = None
        for line in reversed(torch_out.stdout.strip().splitlines()):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("torch"), bool):
                torch = data["torch"]
                break
        torch_error = None if torch is not None else \
            (torch_out.stderr.strip().splitlines() or [f"exit status {torch_out.exit_status}"])[-1][:200]
        devices = outputs.get("devices", missing)
        return {"master_addr": {"addrs": addrs, "error": error}, "torch": torch, "torch_error": torch_error,
                "devices": parse_devices(devices.stdout) if devices.ok else None}

    # --- planning (pure) ---

    def ranks(self, facts: Mapping[str, Facts]) -> dict[str, int]:
        """Node ranks of the hosts that can run the dry run (torch importable), master first."""
        usable = [h for h in self.plan.ranks if facts.get(h, {}).get("torch") is True]
        if self.plan.master not in usable:
            return {}
        return {h: i for i, h in enumerate(usable)}

    def _target_address(self, host: str, facts: Mapping[str, Facts], own: set[str] | None,
                        hosts: Mapping[str, Host]) -> str:
        """Where ``host`` connects for the port test: what MASTER_ADDR resolves to there when that is the
        master's, else the master's address from hosts.yaml (the port is tested, not the name)."""
        addrs = (facts.get(host, {}).get("master_addr") or {}).get("addrs") or []
        if addrs and own is not None and addrs[0] in own:
            return str(addrs[0])
        return hosts[self.plan.master].address

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        hosts = {h.name: h for h in ctx.hosts}
        port = self.plan.port
        master = self.plan.master
        found: list[Step] = []
        sources = [h for h in self.plan.ranks if h != master and h in facts]
        if port is not None and master in facts and sources:
            own = own_addresses(ctx.other_facts.get("net", {}).get(master))
            timeout = self.plan.connect_timeout
            window = timeout + 2.0 + 3.0
            tag = f"preflight-listener-diagnose-{port}"
            background = {master: [Probe("listen", shlex.join([hosts[master].python, "-S", "-c", LISTENER, tag,
                                                                 str(window), f"{port}:{len(sources)}"]),
                                         timeout=window + 5)]}
            marker = tag.replace("listener", "listene[r]")
            pattern = f"^{re.escape(hosts[master].python)} -S -c .*{marker}"
            cleanup = {master: [Probe("stop", "pkill -TERM -f " + shlex.quote(pattern) + " || true", timeout=5)]}
            foreground = {}
            for source in sources:
                address = self._target_address(source, facts, own, hosts)
                spec = f"{master}=[{address}]:{port}" if ":" in address else f"{master}={address}:{port}"
                foreground[source] = [Probe("connect", shlex.join([hosts[source].python, "-S", "-c", CONNECTOR,
                                                                   str(timeout), "2.0", spec]), timeout=window + 5)]
            found.append(Step(background=background, foreground=foreground, timeout=window + 10, cleanup=cleanup,
                              ready=LISTENER_READY, ready_timeout=window))
        ranks = self.ranks(facts)
        if port is not None and self.plan.master_addr and len(ranks) >= 1:
            dryruns = {h: [Probe("dryrun", self.rank_command(hosts[h], r, len(ranks), ctx.cluster),
                                 timeout=self.probe_timeout())] for h, r in ranks.items()}
            found.append(Step(background={}, foreground=dryruns,
                              timeout=self.probe_timeout() + 10))
        return found

    def probe_timeout(self) -> float:
        """Torch import allowance, then the store and the process group timeouts."""
        return 30.0 + 2 * self.plan.timeout

    def rank_command(self, host: Host, rank: int, world: int, cluster: ClusterSpec | None = None) -> str:
        """The dry run of one rank in the job's environment (login env, ``setup:``, hosts.yaml ``env``:
        preflight.job_env) with MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE and LOCAL_RANK set, quoted."""
        variables = {"MASTER_ADDR": str(self.plan.master_addr), "MASTER_PORT": str(self.plan.port),
                     "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": "0"}
        spec = json.dumps({"timeout": self.plan.timeout, "backend": self.plan.backend}, separators=(",", ":"))
        return job_command(host, cluster or ClusterSpec(), [host.python, "-c", DRYRUN, spec], variables)

    # --- judging (pure) ---

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        return self._verdicts(facts, outcomes, ctx)[0]

    def corrected_launch(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome],
                         ctx: EvalContext) -> str | None:
        """One launch line with every correction the findings call for (None when none is needed)."""
        return self._verdicts(facts, outcomes, ctx)[1]

    def _verdicts(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome],
                  ctx: EvalContext) -> tuple[list[Finding], str | None]:
        view = Judge(self.plan, facts, outcomes, ctx, self.ranks(facts))
        findings = list(self.plan.launch_findings)
        names = [h.name for h in ctx.hosts if h.name in facts]
        for host in names:
            findings.append(view.master_addr(host))
            findings.append(view.master_port(host))
            findings += view.reachability(host)
            findings += view.net(host)
            findings.append(view.devices(host))
        view.remedies = [f.remedy for f in findings if f.remedy and f.status in (Status.FAIL, Status.ERROR)]
        findings += [view.rendezvous(host) for host in names]
        return findings, view.combined()

    def summary_of(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome]) -> dict[str, Any]:
        """The dry run in brief: ranks joined, ranks missing, and where the first missing one stopped."""
        ranks = self.ranks(facts)
        runs = dryrun_results(outcomes)
        joined = sorted((h for h in ranks if runs.get(h, {}).get("stage") == "done"), key=lambda h: ranks[h])
        missing = sorted((h for h in self.plan.ranks if h not in joined), key=lambda h: self.plan.ranks[h])
        stopped = {h: stage_text(runs.get(h, {}).get("stage"), self.plan) for h in missing if h in runs}
        return {"ran": bool(runs), "world_size": len(ranks), "master": self.plan.master,
                "master_addr": self.plan.master_addr, "master_port": self.plan.port_text,
                "joined": [{"host": h, "rank": ranks[h]} for h in joined],
                "missing": [{"host": h, "rank": ranks.get(h), "stopped_at": stopped.get(h, "not started"),
                             "error": runs.get(h, {}).get("error")} for h in missing]}
