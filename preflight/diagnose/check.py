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
- ``diagnose.devices``: nproc-per-node fits the GPUs / NPUs the host has.
- ``diagnose.rendezvous``: the dry run's verdict per rank: joined, or where it stopped and why.

>>> DiagnoseCheck(Plan(master="n1", master_addr="n1", port_text="29500", ranks={"n1": 0})).ident
'diagnose'
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from preflight.allreduce.probe import TORCH_PROBE
from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import ActiveCheck, EvalContext, Facts, Step, StepOutcome, finding
from preflight.checks.firewall import FirewallCheck
from preflight.connect import CONNECTOR, LISTENER, LISTENER_READY, connect_meaning, parse_listeners, parse_results
from preflight.diagnose.launch import Launch, parse_launch
from preflight.diagnose.worker import DRYRUN
from preflight.interfaces import IFACE_VARS, parse_getent
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status
from preflight.net_view import ClusterView as _ClusterView

BACKENDS = {"npu": "hccl", "gpu": "nccl", "cpu": "gloo"}
PORT_RANGE = (1024, 65535)
STAGE_TEXT = {
    "import": "importing torch",
    "store": "connecting to the rendezvous store at {where}",
    "init": "init_process_group (gloo connects every pair of ranks)",
    "all_reduce": "the 1-element all_reduce",
    "barrier": "the barrier",
    "backend": "the job's backend ({backend})",
    "done": "done",
}
_DEVICES = "for f in /dev/nvidia[0-9]* /dev/davinci[0-9]*; do [ -e \"$f\" ] && echo \"$f\"; done; true"
# The login environment's interface variables reach the job as they would from the user's shell.
_LOGIN_IFACES = " ".join(f'${{{v}+"{v}=${v}"}}' for v in IFACE_VARS)


@dataclass(frozen=True)
class Plan:
    """What the launch means for these hosts; built by ``make_plan`` (pure)."""

    master: str  # the master host's name (node rank 0)
    master_addr: str | None  # as the ranks use it (a name or an address)
    port_text: str | None
    ranks: Mapping[str, int]  # host -> node rank in the dry run
    launch: Launch = field(default_factory=lambda: parse_launch([]))
    backend: str = "gloo"  # the job's own backend (nccl on gpu, hccl on npu)
    timeout: float = 10.0  # seconds for the dry run's store and process group
    connect_timeout: float = 3.0
    launch_findings: tuple[Finding, ...] = ()
    launch_fix: Mapping[str, str] = field(default_factory=dict)  # options that correct the launch's numbers

    @property
    def port(self) -> int | None:
        try:
            port = int(str(self.port_text))
        except ValueError:
            return None
        return port if 1 <= port <= 65535 else None


def make_plan(launch: Launch, hosts: Sequence[Host], cluster: ClusterSpec, timeout: float = 10.0) -> Plan:
    """Pick the master host (the one MASTER_ADDR names, else cluster.master) and check the launch's numbers.

    >>> hosts = [Host("n1", "10.0.0.1"), Host("n2", "10.0.0.2"), Host("n3", "10.0.0.3")]
    >>> plan = make_plan(parse_launch(["torchrun", "--nnodes=2", "--master-addr=10.0.0.2", "t.py"]), hosts,
    ...                  ClusterSpec(master="n1"))
    >>> plan.master, dict(plan.ranks), [(f.status.value, f.message[:40]) for f in plan.launch_findings]
    ('n2', {'n2': 0, 'n1': 1, 'n3': 2}, [('fail', 'diagnose.launch: --nnodes=2 but hosts.ya')])
    """
    names = [h.name for h in hosts]
    addr = launch.master_addr
    master = next((h.name for h in hosts if addr and addr in (h.name, h.address)), None)
    master = master or (cluster.master if cluster.master in names else names[0])
    order = [master, *[n for n in names if n != master]]
    backend = BACKENDS.get(cluster.accelerator, "gloo")
    found, fix = launch_findings(launch, len(hosts), [n for h in hosts for n in (h.name, h.address)])
    return Plan(master=master, master_addr=addr, port_text=launch.master_port_text,
                ranks={name: i for i, name in enumerate(order)}, launch=launch, backend=backend,
                timeout=timeout, launch_findings=tuple(found), launch_fix=fix)


def launch_findings(launch: Launch, count: int,
                    known: Sequence[str] | None = None) -> tuple[list[Finding], dict[str, str]]:
    """``diagnose.launch``: the numbers of the launch line against the number of hosts (cluster-level),
    and the options (canonical names) that correct them. ``known``: the hosts' names and addresses, to
    compare with a deepspeed hostfile.

    >>> [f.status.value for f in launch_findings(parse_launch(["torchrun", "--nnodes", "3", "t.py"]), 3)[0]]
    ['pass']
    >>> launch_findings(parse_launch(["torchrun", "--nnodes", "2", "t.py"]), 3)[1]
    {'nnodes': '3'}
    >>> f = launch_findings(parse_launch([], {"MASTER_ADDR": "a", "MASTER_PORT": "1", "WORLD_SIZE": "4",
    ...                                       "RANK": "4"}), 2)[0][0]
    >>> f.status.value, f.message.split(";")[0], f.remedy.split("  #")[0]
    ('fail', 'diagnose.launch: RANK=4 is not below WORLD_SIZE=4', 'export RANK=<0..3>')
    """
    check = "diagnose.launch"
    problems: list[tuple[Status, str, str | None, str | None]] = []  # status, text, expected, remedy
    fix: dict[str, str] = {}
    for text in launch.problems:
        missing = "not set" in text or "no training script" in text or "hostfile" in text
        remedy = ("export MASTER_ADDR=<the master's address> MASTER_PORT=29500  # or give the launch line after --"
                  if "not set" in text else None)
        problems.append((Status.FAIL if missing else Status.WARN, text, None, remedy))
    nnodes = launch.nnodes
    strangers = [h for h, _ in launch.hostfile_hosts or [] if known is not None and h not in known]
    if strangers:
        problems.append((Status.WARN, f"the deepspeed hostfile names {', '.join(strangers)}, not in hosts.yaml: "
                         "those hosts are not checked here", "the same hosts",
                         "add them to hosts.yaml, or use the hostfile's names there"))
    if launch.launcher != "env":
        if nnodes is None:
            fix["nnodes"] = str(count)
            problems.append((Status.FAIL, f"cannot read the number of nodes ({launch.options.get('nnodes')!r})",
                             f"{count}", launch.corrected({"nnodes": str(count)})))
        elif not nnodes[0] <= count <= nnodes[1]:
            spelling = "--num_nodes" if launch.launcher == "deepspeed" else "--nnodes"
            shown = f"{nnodes[0]}" if nnodes[0] == nnodes[1] else f"{nnodes[0]}:{nnodes[1]}"
            name = "num_nodes" if launch.launcher == "deepspeed" else "nnodes"
            fix[name] = str(count)
            problems.append((Status.FAIL, f"{spelling}={shown} but hosts.yaml has {count} hosts: the rendezvous "
                             "waits for nodes that never come (or turns extra ones away)", f"{count} nodes",
                             launch.corrected({name: str(count)})))
        rank = launch.node_rank
        if rank is not None and nnodes is not None and rank >= nnodes[1]:
            fix["node_rank"] = "0"
            problems.append((Status.FAIL, f"--node-rank={rank} is not below the number of nodes {nnodes[1]}",
                             f"0..{nnodes[1] - 1}", launch.corrected({"node_rank": "0"})))
        nproc = launch.nproc_per_node
        if nproc is not None and nproc not in ("auto", "gpu", "cpu", "xpu") and not _positive(nproc):
            fix["nproc_per_node"] = "1"
            problems.append((Status.FAIL, f"nproc-per-node {nproc!r} is not a positive number or auto/gpu/cpu",
                             "a positive number", launch.corrected({"nproc_per_node": "1"})))
    else:
        world, rank = launch.world_size, launch.rank
        if "WORLD_SIZE" in launch.env and (world is None or world < 1):
            problems.append((Status.FAIL, f"WORLD_SIZE={launch.env['WORLD_SIZE']!r} is not a positive number",
                             "a positive number", launch.corrected(env={"WORLD_SIZE": str(count)})))
        elif world is not None and rank is not None and not 0 <= rank < world:
            problems.append((Status.FAIL, f"RANK={rank} is not below WORLD_SIZE={world}", f"0..{world - 1}",
                             f"export RANK=<0..{world - 1}>  # a different one on every host, 0 on the master"))
        elif world is not None and world < count:
            problems.append((Status.FAIL, f"WORLD_SIZE={world} is smaller than the {count} hosts (one rank each "
                             "at least)", f">= {count}", launch.corrected(env={"WORLD_SIZE": str(count)})))
    observed = _describe(launch)
    if not problems:
        return [finding(check, None, Status.PASS, f"{check}: {observed}", observed=observed)], fix
    status = Status.worst([p[0] for p in problems])
    worst = next(p for p in problems if p[0] == status)
    remedy = worst[3] or "fix the launch line"
    return [finding(check, None, status, f"{check}: " + "; ".join(p[1] for p in problems) + f"; fix: {remedy}",
                    observed=observed, expected=worst[2], remedy=remedy)], fix


def _positive(text: str) -> bool:
    return text.strip().isdigit() and int(text) > 0


def _describe(launch: Launch) -> str:
    """One line: launcher, nodes x processes, the store's address.

    >>> _describe(parse_launch(["torchrun", "--nnodes=2", "--nproc-per-node=8", "--master-addr=n1", "t.py"]))
    'torchrun: 2 nodes x 8 processes, store at n1:29500 (static rendezvous)'
    """
    nodes = launch.nnodes
    shown = "?" if nodes is None else str(nodes[0]) if nodes[0] == nodes[1] else f"{nodes[0]}:{nodes[1]}"
    if launch.launcher == "env":
        return (f"environment: MASTER_ADDR={launch.master_addr or 'unset'} "
                f"MASTER_PORT={launch.master_port_text or 'unset'} "
                f"WORLD_SIZE={launch.env.get('WORLD_SIZE', '?')} RANK={launch.env.get('RANK', '?')}")
    return (f"{launch.launcher}: {shown} nodes x {launch.nproc_per_node or '?'} processes, store at "
            f"{launch.master_addr}:{launch.master_port_text} ({launch.rdzv_backend} rendezvous)")


def parse_devices(text: str) -> dict[str, int]:
    """Device nodes listed by the devices probe, counted by kind.

    >>> parse_devices("/dev/nvidia0\\n/dev/nvidia1\\n/dev/nvidiactl\\n/dev/davinci0\\n")
    {'gpu': 2, 'npu': 1}
    """
    counts = {"gpu": 0, "npu": 0}
    for line in text.splitlines():
        if re.fullmatch(r"/dev/nvidia\d+", line.strip()):
            counts["gpu"] += 1
        elif re.fullmatch(r"/dev/davinci\d+", line.strip()):
            counts["npu"] += 1
    return counts


def parse_dryrun(text: str) -> dict[str, Any]:
    """A rank's output: the result line, or the last stage it reached when it was killed; ``times``: the
    seconds since the rank's start at which it reached each stage.

    >>> parse_dryrun('{"event": "stage", "stage": "import", "t": 0}\\n{"event": "stage", "stage": "store"}\\n')
    {'stage': 'store', 'error': None, 'finished': False, 'times': {'import': 0.0}}
    >>> parse_dryrun("garbage")
    {'stage': None, 'error': None, 'finished': False, 'times': {}}
    """
    stage: str | None = None
    times: dict[str, float] = {}
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        if data.get("event") == "result":
            return {**{k: v for k, v in data.items() if k != "event"}, "finished": True, "times": times}
        if data.get("event") == "stage" and isinstance(data.get("stage"), str):
            stage = data["stage"]
            if isinstance(data.get("t"), (int, float)) and not isinstance(data.get("t"), bool):
                times[data["stage"]] = float(data["t"])
    return {"stage": stage, "error": None, "finished": False, "times": times}


def _own_addresses(net_facts: Facts | None) -> set[str] | None:
    """Every non-loopback address of a host, from the net check's facts (None when unknown)."""
    if not isinstance(net_facts, dict) or not isinstance(net_facts.get("interfaces"), dict):
        return None
    found: set[str] = set()
    for entry in net_facts["interfaces"].values():
        for text in (entry or {}).get("addrs") or [] if isinstance(entry, dict) else []:
            try:
                ip = ipaddress.ip_interface(str(text)).ip
            except ValueError:
                continue
            if not ip.is_loopback and not ip.is_link_local:
                found.add(str(ip))
    return found


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


class DiagnoseCheck(ActiveCheck):
    family = "diagnose"
    order = 95
    by_default = False
    summary = "one launch line's MASTER_ADDR/PORT, interfaces, devices and ranks on the live hosts, plus a dry run"
    params: ClassVar[Mapping[str, Any]] = {}
    needs = ("net", "ports", "firewall")

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    # --- gather ---

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        addr = shlex.quote(self.plan.master_addr or "")
        return [
            Probe("master_addr", f"getent ahosts {addr}", timeout=10),
            Probe("devices", _DEVICES, timeout=5),
            Probe("torch", shlex.join([host.python, "-c", TORCH_PROBE]), timeout=15),
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
            own = _own_addresses(ctx.other_facts.get("net", {}).get(master))
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
            found.append(Step(background={}, foreground={h: [Probe("dryrun", self.rank_command(hosts[h], r, len(ranks)),
                                                                   timeout=self.probe_timeout())]
                                                         for h, r in ranks.items()},
                              timeout=self.probe_timeout() + 10))
        return found

    def probe_timeout(self) -> float:
        """Torch import allowance, then the store and the process group timeouts."""
        return 30.0 + 2 * self.plan.timeout

    def rank_command(self, host: Host, rank: int, world: int) -> str:
        """``env -i PATH=... <login interface vars> <job env> MASTER_ADDR=... python -c DRYRUN SPEC``, quoted."""
        variables = {k: v for k, v in host.env.items() if k not in ("MASTER_ADDR", "MASTER_PORT", "RANK",
                                                                    "WORLD_SIZE", "LOCAL_RANK")}
        variables.update({"MASTER_ADDR": str(self.plan.master_addr), "MASTER_PORT": str(self.plan.port),
                          "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": "0"})
        assigned = " ".join(shlex.quote(f"{k}={v}") for k, v in variables.items())
        spec = json.dumps({"timeout": self.plan.timeout, "backend": self.plan.backend}, separators=(",", ":"))
        return (f'env -i PATH="$PATH" HOME="$HOME" LANG=C {_LOGIN_IFACES} {assigned} '
                + shlex.join([host.python, "-c", DRYRUN, spec]))

    # --- judging (pure) ---

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        return self._verdicts(facts, outcomes, ctx)[0]

    def corrected_launch(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome],
                         ctx: EvalContext) -> str | None:
        """One launch line with every correction the findings call for (None when none is needed)."""
        return self._verdicts(facts, outcomes, ctx)[1]

    def _verdicts(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome],
                  ctx: EvalContext) -> tuple[list[Finding], str | None]:
        view = _Judge(self.plan, facts, outcomes, ctx, self.ranks(facts))
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
        runs = _dryrun_results(outcomes)
        joined = sorted((h for h in ranks if runs.get(h, {}).get("stage") == "done"), key=lambda h: ranks[h])
        missing = sorted((h for h in self.plan.ranks if h not in joined), key=lambda h: self.plan.ranks[h])
        stopped = {h: _stage_text(runs.get(h, {}).get("stage"), self.plan) for h in missing if h in runs}
        return {"ran": bool(runs), "world_size": len(ranks), "master": self.plan.master,
                "master_addr": self.plan.master_addr, "master_port": self.plan.port_text,
                "joined": [{"host": h, "rank": ranks[h]} for h in joined],
                "missing": [{"host": h, "rank": ranks.get(h), "stopped_at": stopped.get(h, "not started"),
                             "error": runs.get(h, {}).get("error")} for h in missing]}


def _dryrun_results(outcomes: Sequence[StepOutcome]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for outcome in outcomes:
        for host, outs in outcome.foreground.items():
            if "dryrun" in outs:
                found[host] = {**parse_dryrun(outs["dryrun"].stdout), "exit_status": outs["dryrun"].exit_status}
    return found


def _stage_text(stage: object, plan: Plan) -> str:
    text = STAGE_TEXT.get(str(stage), "starting python")
    return text.format(where=f"{plan.master_addr}:{plan.port_text}", backend=plan.backend)


class _Judge:
    """Per-host verdicts of the diagnose check; shared state computed once."""

    def __init__(self, plan: Plan, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext,
                 ranks: Mapping[str, int]) -> None:
        self.plan, self.facts, self.outcomes, self.ctx, self.ranks = plan, facts, outcomes, ctx, ranks
        self.hosts = {h.name: h for h in ctx.hosts}
        self.net_facts = ctx.other_facts.get("net", {})
        self.ports = ctx.other_facts.get("ports", {})
        self.own = {h: _own_addresses(self.net_facts.get(h)) for h in self.hosts}
        self.multi = len(plan.ranks) > 1
        master_own = self.own.get(plan.master)
        address = self.hosts[plan.master].address
        if master_own and address not in master_own:
            address = sorted(master_own)[0]
        self.master_ip = address  # what MASTER_ADDR should be
        self.resolved = {h: str(a[0]) for h, f in facts.items()
                         if (a := (f.get("master_addr") or {}).get("addrs"))}
        self.majority = Counter(self.resolved.values()).most_common(1)[0][0] if self.resolved else None
        self.runs = _dryrun_results(outcomes)
        self.options: dict[str, str] = dict(plan.launch_fix)  # every correction called for, for one line
        self.env: dict[str, str] = {}
        self.remedies: list[str] = []  # of the other findings' failures, for the dry run's fix
        self.view: _ClusterView | None = None  # the net check's view, built once

    def line(self, options: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None) -> str:
        """A corrected launch line for one finding; the correction is also kept for the combined line."""
        self.options.update(options or {})
        self.env.update(env or {})
        return self.plan.launch.corrected(options, env)

    def combined(self) -> str | None:
        if not self.options and not self.env:
            return None
        return self.plan.launch.corrected(self.options, self.env)

    def master_addr(self, host: str) -> Finding:
        """MASTER_ADDR as ``host`` resolves it; a failure's correction joins the combined launch line."""
        verdict = self._master_addr(host)
        if verdict.status == Status.FAIL:
            self.line({"master_addr": self.master_ip})
        return verdict

    def _master_addr(self, host: str) -> Finding:
        check = "diagnose.master_addr"
        name = self.plan.master_addr
        entry = self.facts[host].get("master_addr") or {}
        fix = self.plan.launch.corrected({"master_addr": self.master_ip})
        if not name:
            return finding(check, host, Status.FAIL, f"{check}: MASTER_ADDR is not set; fix: {fix}",
                           observed="unset", expected=self.master_ip, remedy=fix)
        error = entry.get("error")
        if error and error != "not found":
            fix = f"check the resolver on {host}: getent ahosts {shlex.quote(name)}"
            return finding(check, host, Status.ERROR, f"{check}: could not resolve MASTER_ADDR {name} on {host}: "
                           f"{error}; fix: {fix}", remedy=fix)
        if error:
            return finding(check, host, Status.FAIL, f"{check}: MASTER_ADDR {name} does not resolve on {host}: "
                           f"the ranks there cannot find the store; fix: {fix}", observed="unresolved",
                           expected=self.master_ip, remedy=fix)
        address = self.resolved[host]
        observed = f"{name} -> {address}" if name != address else address
        shown = observed if name != address else name
        master_own = self.own.get(self.plan.master)
        owner = next((h for h, own in self.own.items() if own and address in own), None)
        if _loopback(address) and self.multi:
            hint = (" (Debian maps the host name to 127.0.1.1 in /etc/hosts)" if address.startswith("127.0.1.")
                    else "")
            where = "" if name == address else f" on {host}{hint}"
            return finding(check, host, Status.FAIL,
                           f"{check}: MASTER_ADDR {shown} is loopback{where} with {len(self.plan.ranks)} "
                           f"nodes: ranks on other hosts connect to themselves; fix: {fix}",
                           observed=observed, expected=f"{self.master_ip} ({self.plan.master})", remedy=fix)
        if master_own is not None and address not in master_own and not _loopback(address):
            whose = f"it is {owner}'s address" if owner else "no host has it"
            return finding(check, host, Status.FAIL,
                           f"{check}: MASTER_ADDR {shown} is not an address of the master "
                           f"{self.plan.master} ({whose}); fix: {fix}", observed=observed,
                           expected=f"{self.master_ip} ({self.plan.master})", remedy=fix)
        if self.majority is not None and address != self.majority:
            return finding(check, host, Status.FAIL,
                           f"{check}: MASTER_ADDR {name} resolves to {address} on {host} but to {self.majority} on "
                           f"the other hosts; fix: {fix}", observed=observed, expected=self.majority, remedy=fix)
        return finding(check, host, Status.PASS, f"{check}: MASTER_ADDR {observed}, an address of "
                       f"{self.plan.master}", observed=observed, expected=self.master_ip)

    def _free_port(self, taken: set[int]) -> int:
        port = 29500
        while port in taken or port == self.plan.port:
            port += 1
        return port

    def master_port(self, host: str) -> Finding:
        check = "diagnose.master_port"
        if host != self.plan.master:
            return finding(check, host, Status.SKIP, f"{check}: the master port is checked on the master "
                           f"{self.plan.master}")
        listeners = (self.ports.get(host) or {}).get("listeners")
        taken = {int(item["port"]) for item in listeners or [] if isinstance(item, dict)
                 and isinstance(item.get("port"), int)}
        free = self._free_port(taken)
        text = self.plan.port_text
        fix = self.plan.launch.corrected({"master_port": str(free)})
        try:
            port = int(str(text))
        except ValueError:
            fix = self.line({"master_port": str(free)})
            if text is None:
                return finding(check, host, Status.FAIL, f"{check}: MASTER_PORT is not set; fix: {fix}",
                               observed="unset", expected="1024-65535", remedy=fix)
            return finding(check, host, Status.FAIL, f"{check}: MASTER_PORT {text!r} is not a port number; fix: {fix}",
                           observed=str(text), expected="1024-65535", remedy=fix)
        if not PORT_RANGE[0] <= port <= PORT_RANGE[1]:
            why = "a privileged port (below 1024): only root may bind it and system services own these" \
                if 0 < port < 1024 else "out of the port range"
            fix = self.line({"master_port": str(free)})
            return finding(check, host, Status.FAIL, f"{check}: MASTER_PORT {port} is {why}; fix: {fix}",
                           observed=str(port), expected="1024-65535", remedy=fix)
        if not isinstance(listeners, list):
            why = (self.ports.get(host) or {}).get("error") or "listening sockets not read"
            return finding(check, host, Status.WARN, f"{check}: cannot tell whether {port} is free on {host}: {why}",
                           observed="unknown", expected="free")
        held = [item for item in listeners if isinstance(item, dict) and item.get("port") == port]
        if held:
            procs = [p for item in held for p in item.get("processes") or [] if isinstance(p, dict)]
            who = ", ".join(sorted({f"{p.get('name')} (pid {p.get('pid')})" for p in procs})) or "another process"
            pids = sorted({p["pid"] for p in procs if isinstance(p.get("pid"), int)})
            stop = f"; or stop it: kill {' '.join(map(str, pids))}" if pids else ""
            fix = self.line({"master_port": str(free)})
            return finding(check, host, Status.FAIL,
                           f"{check}: port {port} is already in use on the master {host} by {who}: the store cannot "
                           f"bind it ('address already in use'); fix: {fix}{stop}",
                           observed=f"held by {who}", expected="free", remedy=fix + stop)
        return finding(check, host, Status.PASS, f"{check}: {port} is free on the master {host}",
                       observed="free", expected="free")

    def reachability(self, host: str) -> list[Finding]:
        check = "diagnose.reachability"
        master = self.plan.master
        port = self.plan.port
        sources = [h for h in self.plan.ranks if h != master and h in self.facts]
        listened = any("listen" in outs for o in self.outcomes for outs in o.background.values())
        if not listened:
            if host == master:
                return [finding(check, host, Status.SKIP, f"{check}: not tested (one host, or no valid port)")]
            return []
        listener = next((e for o in self.outcomes for outs in o.background.values()
                         for e in parse_listeners(outs.get("listen", ProbeOutput("")).stdout)), None)
        results = self._connects()
        fix = f"iptables -I INPUT -p tcp --dport {port} -j ACCEPT  (on {master}; or open it in ufw/firewalld/nftables)"
        if listener is None or not listener.get("bound"):
            why = listener.get("error", "no report") if listener else "the test listener did not run"
            if host != master:
                return []
            return [finding(check, host, Status.SKIP, f"{check}: could not listen on {master}:{port} to test it: "
                            f"{why} (see diagnose.master_port)")]
        failed = {s: r for s, r in results.items() if r["result"] != "ok"}
        if host == master:
            if len(sources) > 1 and len(failed) == len(sources):
                kinds = ", ".join(sorted({r["result"] for r in failed.values()}))
                rule = self._firewall(master)
                named = ""
                if rule is not None and rule.remedy:
                    named, fix = f"; the rule: `{rule.observed}` (firewall.rules)", rule.remedy
                return [finding(check, host, Status.FAIL,
                                f"{check}: no host could connect to {master}:{port}: {kinds} ({connect_meaning(kinds)})"
                                f"{named}; fix: {fix}", observed=f"{len(failed)}/{len(sources)} hosts: {kinds}",
                                expected="every host connects", remedy=fix)]
            return [finding(check, host, Status.PASS, f"{check}: {len(sources) - len(failed)}/{len(sources)} hosts "
                            f"connected to {master}:{port}", observed=f"{len(sources) - len(failed)} connected")]
        if host not in sources:
            return []
        result = results.get(host, {"result": "not run", "address": "?"})
        where = f"{master} at {result.get('address')}:{port}"
        if result["result"] == "ok":
            return [finding(check, host, Status.PASS, f"{check}: {host} connects to {where}", observed="ok")]
        if len(sources) > 1 and len(failed) == len(sources):
            return []  # every host failed: the master's finding says so
        return [finding(check, host, Status.FAIL,
                        f"{check}: {host} cannot connect to {where}: {result['result']} "
                        f"({connect_meaning(str(result['result']))}); fix: {fix}; or check the route from {host}",
                        observed=str(result["result"]), expected="connect", peer=master, remedy=fix)]

    def _firewall(self, host: str) -> Finding | None:
        """The firewall check's verdict on ``host`` when it found a blocking rule (it names the rule)."""
        facts = self.ctx.other_facts.get("firewall")
        if not facts or host not in facts:
            return None
        try:
            found = FirewallCheck().evaluate(facts, replace(self.ctx, params=dict(FirewallCheck.params)))
        except Exception:  # the firewall model is best effort here: the TCP test already decided
            return None
        return next((f for f in found if f.check == "firewall.rules" and f.host == host
                     and f.status in (Status.FAIL, Status.WARN)), None)

    def _connects(self) -> dict[str, dict[str, Any]]:
        return {h: e for o in self.outcomes for h, outs in o.foreground.items()
                for e in parse_results(outs.get("connect", ProbeOutput("")).stdout)}

    def net(self, host: str) -> list[Finding]:
        """The net check's host-name and interface verdicts, under diagnose ids, the fix as a launch line."""
        if host not in self.net_facts:
            return [finding("diagnose.interface", host, Status.ERROR,
                            "diagnose.interface: the net facts of this host are missing")]
        if self.view is None:
            self.view = _ClusterView(self.net_facts, self.ctx)
        view = self.view
        found = []
        for base in (view.hostname_finding(host), view.interface_finding(host)):
            check = "diagnose." + base.check.split(".", 1)[1]
            remedy = base.remedy
            message = check + base.message[len(base.check):]
            for name in IFACE_VARS:
                if name in self.plan.launch.env:  # merged into every host's env: say where it really came from
                    message = message.replace(f"{name}={self.plan.launch.env[name]!r} (hosts.yaml env)",
                                              f"{name}={self.plan.launch.env[name]!r} (launch line)")
            match = re.match(r"export (\w+)=(\S+)", remedy or "")
            if match:
                remedy = self.line(env={match[1]: shlex.split(match[2])[0]})
            if base.status in (Status.FAIL, Status.WARN) and remedy:
                message += f"; fix: {remedy}"
            found.append(Finding(check, host, base.status, message, base.observed, base.expected, remedy))
        return found

    def devices(self, host: str) -> Finding:
        check = "diagnose.devices"
        accelerator = self.ctx.cluster.accelerator
        nproc = self.plan.launch.nproc_per_node
        counts = self.facts[host].get("devices")
        if accelerator == "cpu":
            return finding(check, host, Status.PASS, f"{check}: cpu cluster: {nproc or '?'} processes per node "
                           "(gloo)", observed=f"nproc-per-node {nproc or '?'}")
        if not isinstance(counts, dict):
            return finding(check, host, Status.ERROR, f"{check}: could not list /dev on {host}; fix: rerun, or check "
                           "the host's load", remedy="rerun preflight diagnose")
        have = int(counts.get(accelerator, 0))
        kind = "GPU" if accelerator == "gpu" else "NPU"
        number = int(nproc) if nproc and nproc.strip().isdigit() else None
        fix = f"install the {kind} driver, or set cluster.accelerator in hosts.yaml"
        if have == 0:
            return finding(check, host, Status.FAIL, f"{check}: no {kind} device on {host}; fix: {fix}",
                           observed=f"0 {kind}s", expected=f"{nproc} {kind}s", remedy=fix)
        if number is not None and number > have:
            fix = self.line({"nproc_per_node": str(have)})
            return finding(check, host, Status.FAIL,
                           f"{check}: nproc-per-node {number} but {host} has {have} {kind}s: ranks beyond {have - 1} "
                           f"fail with 'invalid device ordinal'; fix: {fix}", observed=f"{have} {kind}s",
                           expected=f">= {number} {kind}s", remedy=fix)
        return finding(check, host, Status.PASS, f"{check}: nproc-per-node {nproc} on {have} {kind}s",
                       observed=f"{have} {kind}s")

    def rendezvous(self, host: str) -> Finding:
        check = "diagnose.rendezvous"
        facts = self.facts[host]
        if facts.get("torch") is not True:
            why = "torch is not installed" if facts.get("torch") is False else \
                f"python failed: {facts.get('torch_error')}"
            fix = f"{self.hosts[host].python} -m pip install torch  (or set `python:` in hosts.yaml)"
            return finding(check, host, Status.ERROR, f"{check}: cannot dry-run on {host}: {why}; fix: {fix}",
                           observed=why, expected="torch importable", remedy=fix)
        if not self.ranks:
            return finding(check, host, Status.SKIP, f"{check}: not run: the master {self.plan.master} cannot run it")
        if self.plan.port is None or not self.plan.master_addr:
            return finding(check, host, Status.SKIP, f"{check}: not run: no valid MASTER_ADDR/MASTER_PORT")
        run = self.runs.get(host)
        rank = self.ranks.get(host)
        if run is None:
            return finding(check, host, Status.SKIP, f"{check}: not run (evaluated without the dry run)")
        world = len(self.ranks)
        who = f"rank {rank} ({host})"
        stage = run.get("stage")
        if stage == "done" and run.get("value") == run.get("expected"):
            backend = run.get("backend")
            text = f"{who} joined: all_reduce gave {run.get('value')} as expected, barrier passed (gloo)"
            if isinstance(backend, dict):
                name = backend.get("name")
                if backend.get("ok") is False:
                    fix = (f"{self.plan.launch.corrected(env={'NCCL_DEBUG': 'INFO'})}  # shows the failing connection"
                           if name == "nccl" else "check HCCL_SOCKET_IFNAME / HCCL_IF_IP and the device IPs")
                    return finding(check, host, Status.FAIL, f"{check}: {text}, but {name} failed: "
                                   f"{backend.get('error')}; fix: {fix}",
                                   observed=f"{name}: {backend.get('error')}", expected=f"{name} all_reduce ok",
                                   remedy=fix)
                if not backend.get("available"):
                    fix = f"install torch with {name} support (and the device driver) on every host"
                    return finding(check, host, Status.WARN, f"{check}: {text}; {name} not tried: "
                                   f"{backend.get('why') or 'not available on every rank'}; fix: {fix}",
                                   observed=f"{name} unavailable", expected=f"{name} usable", remedy=fix)
                text += f" and {name}"
            return finding(check, host, Status.PASS, f"{check}: {text}", observed=f"joined {world}/{world}")
        where = _stage_text(stage, self.plan)
        late = self._late_master(host, run)
        if host == self.plan.master and stage != "done":
            lates = [x for h, r in self.runs.items() if (x := self._late_master(h, r)) is not None]
            if lates:
                fix = f"rerun with a longer --timeout (more than {max(lates):.0f} s)"
                return finding(check, host, Status.WARN,
                               f"{check}: {who} opened the store {max(lates):.1f} s after the other ranks (a slow "
                               f"torch import here) and they had given up: inconclusive; fix: {fix}",
                               observed=f"stopped at {stage or 'start'}", expected="joined", remedy=fix)
        if late is not None:
            fix = f"rerun with a longer --timeout (more than {late:.0f} s)"
            return finding(check, host, Status.WARN,
                           f"{check}: {who} gave up on the store before rank 0 ({self.plan.master}) had even "
                           f"started it: rank 0 was still importing torch ({late:.1f} s later): inconclusive; "
                           f"fix: {fix}", observed="gave up waiting for rank 0", expected="joined", remedy=fix)
        if stage == "done":
            error = f"all_reduce gave {run.get('value')}, expected {run.get('expected')}"
        elif run.get("finished"):
            error = str(run.get("error") or "no error reported")
        else:
            error = "killed at the time limit" if run.get("exit_status") in (124, 137, None) else \
                f"exited with status {run.get('exit_status')} without a report"
        fix = self._dryrun_fix()
        return finding(check, host, Status.FAIL,
                       f"{check}: {who} did not join: stopped at {where}: {error}; fix: {fix}",
                       observed=f"stopped at {stage or 'start'}", expected="joined", remedy=fix)

    def _late_master(self, host: str, run: Mapping[str, Any]) -> float | None:
        """How much later than the store timeout of ``host`` rank 0 opened the store, when it did (slow torch
        import on the master, not a network problem); None when rank 0 was on time or the stall was elsewhere."""
        if host == self.plan.master or run.get("stage") != "store":
            return None
        mine = (run.get("times") or {}).get("store")
        master = self.runs.get(self.plan.master) or {}
        theirs = (master.get("times") or {}).get("store")
        if mine is None or theirs is None:
            return None
        late = float(theirs) - (float(mine) + self.plan.timeout)
        return float(theirs) - float(mine) if late > -0.5 else None

    def _dryrun_fix(self) -> str:
        """The launch line with every correction the other findings call for, and the other fixes (not launch
        lines) of the failures found; else a pointer to them."""
        combined = self.combined()
        tail = shlex.join(self.plan.launch.argv[self.plan.launch.script_at:])
        others = [r for r in dict.fromkeys(self.remedies) if r != combined and not (tail and tail in r)]
        parts = ([combined] if combined else []) + others[:2]
        return "; also: ".join(parts) or "fix the other diagnose.* findings above, then rerun preflight diagnose"
