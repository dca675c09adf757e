"""The diagnose check's verdicts, one method per finding id, and the corrected launch line they add up to.

``Judge`` is built once per evaluation from the plan, the facts and the steps' outcomes; each finding whose fix
is a change to the launch line records it, and ``combined`` gives the one launch line with every correction.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from preflight.batch import ProbeOutput
from preflight.checks import all_checks
from preflight.checks.base import EvalContext, Facts, StepOutcome, finding
from preflight.connect import connect_meaning, parse_listeners, parse_results
from preflight.diagnose.outcomes import dryrun_results, loopback, own_addresses, stage_text
from preflight.diagnose.plan import Plan
from preflight.interfaces import IFACE_VARS
from preflight.model import Finding, Status
from preflight.net_view import ClusterView as _ClusterView

PORT_RANGE = (1024, 65535)


class Judge:
    """Per-host verdicts of the diagnose check; shared state computed once."""

    def __init__(self, plan: Plan, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext,
                 ranks: Mapping[str, int]) -> None:
        self.plan, self.facts, self.outcomes, self.ctx, self.ranks = plan, facts, outcomes, ctx, ranks
        self.hosts = {h.name: h for h in ctx.hosts}
        self.net_facts = ctx.other_facts.get("net", {})
        self.ports = ctx.other_facts.get("ports", {})
        self.own = {h: own_addresses(self.net_facts.get(h)) for h in self.hosts}
        self.multi = len(plan.ranks) > 1
        master_own = self.own.get(plan.master)
        address = self.hosts[plan.master].address
        if master_own and address not in master_own:
            address = sorted(master_own)[0]
        self.master_ip = address  # what MASTER_ADDR should be
        self.resolved = {h: str(a[0]) for h, f in facts.items()
                         if (a := (f.get("master_addr") or {}).get("addrs"))}
        self.majority = Counter(self.resolved.values()).most_common(1)[0][0] if self.resolved else None
        self.runs = dryrun_results(outcomes)
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
            return finding(check, host, Status.FAIL, f"MASTER_ADDR is not set; fix: {fix}",
                           observed="unset", expected=self.master_ip, remedy=fix)
        error = entry.get("error")
        if error and error != "not found":
            fix = f"check the resolver on {host}: getent ahosts {shlex.quote(name)}"
            return finding(check, host, Status.ERROR, f"could not resolve MASTER_ADDR {name} on {host}: "
                           f"{error}; fix: {fix}", remedy=fix)
        if error:
            return finding(check, host, Status.FAIL, f"MASTER_ADDR {name} does not resolve on {host}: "
                           f"the ranks there cannot find the store; fix: {fix}", observed="unresolved",
                           expected=self.master_ip, remedy=fix)
        address = self.resolved[host]
        observed = f"{name} -> {address}" if name != address else address
        shown = observed if name != address else name
        master_own = self.own.get(self.plan.master)
        owner = next((h for h, own in self.own.items() if own and address in own), None)
        if loopback(address) and self.multi:
            hint = (" (Debian maps the host name to 127.0.1.1 in /etc/hosts)" if address.startswith("127.0.1.")
                    else "")
            where = "" if name == address else f" on {host}{hint}"
            return finding(check, host, Status.FAIL,
                           f"MASTER_ADDR {shown} is loopback{where} with {len(self.plan.ranks)} "
                           f"nodes: ranks on other hosts connect to themselves; fix: {fix}",
                           observed=observed, expected=f"{self.master_ip} ({self.plan.master})", remedy=fix)
        if master_own is not None and address not in master_own and not loopback(address):
            whose = f"it is {owner}'s address" if owner else "no host has it"
            return finding(check, host, Status.FAIL,
                           f"MASTER_ADDR {shown} is not an address of the master "
                           f"{self.plan.master} ({whose}); fix: {fix}", observed=observed,
                           expected=f"{self.master_ip} ({self.plan.master})", remedy=fix)
        if self.majority is not None and address != self.majority:
            return finding(check, host, Status.FAIL,
                           f"MASTER_ADDR {name} resolves to {address} on {host} but to {self.majority} on "
                           f"the other hosts; fix: {fix}", observed=observed, expected=self.majority, remedy=fix)
        return finding(check, host, Status.PASS, f"MASTER_ADDR {observed}, an address of "
                       f"{self.plan.master}", observed=observed, expected=self.master_ip)

    def _free_port(self, taken: set[int]) -> int:
        port = 29500
        while port in taken or port == self.plan.port:
            port += 1
        return port

    def master_port(self, host: str) -> Finding:
        check = "diagnose.master_port"
        if host != self.plan.master:
            return finding(check, host, Status.SKIP, "the master port is checked on the master "
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
                return finding(check, host, Status.FAIL, f"MASTER_PORT is not set; fix: {fix}",
                               observed="unset", expected="1024-65535", remedy=fix)
            return finding(check, host, Status.FAIL, f"MASTER_PORT {text!r} is not a port number; fix: {fix}",
                           observed=str(text), expected="1024-65535", remedy=fix)
        if not PORT_RANGE[0] <= port <= PORT_RANGE[1]:
            why = "a privileged port (below 1024): only root may bind it and system services own these" \
                if 0 < port < 1024 else "out of the port range"
            fix = self.line({"master_port": str(free)})
            return finding(check, host, Status.FAIL, f"MASTER_PORT {port} is {why}; fix: {fix}",
                           observed=str(port), expected="1024-65535", remedy=fix)
        if not isinstance(listeners, list):
            why = (self.ports.get(host) or {}).get("error") or "listening sockets not read"
            return finding(check, host, Status.WARN, f"cannot tell whether {port} is free on {host}: {why}",
                           observed="unknown", expected="free")
        held = [item for item in listeners if isinstance(item, dict) and item.get("port") == port]
        if held:
            procs = [p for item in held for p in item.get("processes") or [] if isinstance(p, dict)]
            who = ", ".join(sorted({f"{p.get('name')} (pid {p.get('pid')})" for p in procs})) or "another process"
            pids = sorted({p["pid"] for p in procs if isinstance(p.get("pid"), int)})
            stop = f"; or stop it: kill {' '.join(map(str, pids))}" if pids else ""
            fix = self.line({"master_port": str(free)})
            return finding(check, host, Status.FAIL,
                           f"port {port} is already in use on the master {host} by {who}: the store cannot "
                           f"bind it ('address already in use'); fix: {fix}{stop}",
                           observed=f"held by {who}", expected="free", remedy=fix + stop)
        return finding(check, host, Status.PASS, f"{port} is free on the master {host}",
                       observed="free", expected="free")

    def reachability(self, host: str) -> list[Finding]:
        check = "diagnose.reachability"
        master = self.plan.master
        port = self.plan.port
        sources = [h for h in self.plan.ranks if h != master and h in self.facts]
        listened = any("listen" in outs for o in self.outcomes for outs in o.background.values())
        if not listened:
            if host == master:
                return [finding(check, host, Status.SKIP, "not tested (one host, or no valid port)")]
            return []
        listener = next((e for o in self.outcomes for outs in o.background.values()
                         for e in parse_listeners(outs.get("listen", ProbeOutput("")).stdout)), None)
        results = self._connects()
        fix = f"iptables -I INPUT -p tcp --dport {port} -j ACCEPT  (on {master}; or open it in ufw/firewalld/nftables)"
        if listener is None or not listener.get("bound"):
            why = listener.get("error", "no report") if listener else "the test listener did not run"
            if host != master:
                return []
            return [finding(check, host, Status.SKIP, f"could not listen on {master}:{port} to test it: "
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
                                f"no host could connect to {master}:{port}: {kinds} ({connect_meaning(kinds)})"
                                f"{named}; fix: {fix}", observed=f"{len(failed)}/{len(sources)} hosts: {kinds}",
                                expected="every host connects", remedy=fix)]
            return [finding(check, host, Status.PASS, f"{len(sources) - len(failed)}/{len(sources)} hosts "
                            f"connected to {master}:{port}", observed=f"{len(sources) - len(failed)} connected")]
        if host not in sources:
            return []
        result = results.get(host, {"result": "not run", "address": "?"})
        where = f"{master} at {result.get('address')}:{port}"
        if result["result"] == "ok":
            return [finding(check, host, Status.PASS, f"{host} connects to {where}", observed="ok")]
        if len(sources) > 1 and len(failed) == len(sources):
            return []  # every host failed: the master's finding says so
        return [finding(check, host, Status.FAIL,
                        f"{host} cannot connect to {where}: {result['result']} "
                        f"({connect_meaning(str(result['result']))}); fix: {fix}; or check the route from {host}",
                        observed=str(result["result"]), expected="connect", peer=master, remedy=fix)]

    def _firewall(self, host: str) -> Finding | None:
        """The firewall check's verdict on ``host`` (the registry's check ``firewall``) when it found a blocking
        rule (it names the rule)."""
        facts = self.ctx.other_facts.get("firewall")
        if not facts or host not in facts:
            return None
        firewall = next(c for c in all_checks() if c.ident == "firewall")
        try:
            found = firewall.evaluate(facts, replace(self.ctx, params=dict(firewall.params)))
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
                            "the net facts of this host are missing")]
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
            return finding(check, host, Status.PASS, f"cpu cluster: {nproc or '?'} processes per node "
                           "(gloo)", observed=f"nproc-per-node {nproc or '?'}")
        if not isinstance(counts, dict):
            return finding(check, host, Status.ERROR, f"could not list /dev on {host}; fix: rerun, or check "
                           "the host's load", remedy="rerun preflight diagnose")
        have = int(counts.get(accelerator, 0))
        kind = "GPU" if accelerator == "gpu" else "NPU"
        number = int(nproc) if nproc and nproc.strip().isdigit() else None
        fix = f"install the {kind} driver, or set cluster.accelerator in hosts.yaml"
        if have == 0:
            return finding(check, host, Status.FAIL, f"no {kind} device on {host}; fix: {fix}",
                           observed=f"0 {kind}s", expected=f"{nproc} {kind}s", remedy=fix)
        if number is not None and number > have:
            fix = self.line({"nproc_per_node": str(have)})
            return finding(check, host, Status.FAIL,
                           f"nproc-per-node {number} but {host} has {have} {kind}s: ranks beyond {have - 1} "
                           f"fail with 'invalid device ordinal'; fix: {fix}", observed=f"{have} {kind}s",
                           expected=f">= {number} {kind}s", remedy=fix)
        groups = self._910a_groups(host, number)
        if groups is not None:
            return groups
        return finding(check, host, Status.PASS, f"nproc-per-node {nproc} on {have} {kind}s",
                       observed=f"{have} {kind}s")

    def _910a_groups(self, host: str, number: int | None) -> Finding | None:
        """Atlas training (910A) only: 1, 2, 4 or 8 NPUs per node, and 2 or 4 inside one HCCS group (0-3 / 4-7).

        Ascend's scheduling rules for the Atlas training series (hiascend.com MindX DL "Atlas 训练系列产品分布式
        亲和性策略": 每个节点申请的昇腾AI处理器个数支持为1、2、4、8; MindCluster "资源申请约束": 不大于4个时,
        需要将所需的昇腾AI处理器调度到同一个HCCS内); HCCL refuses a group across the two (see
        preflight.allreduce.topology)."""
        check = "diagnose.devices"
        generation = (self.ctx.other_facts.get("npu", {}).get(host) or {}).get("generation")
        if self.ctx.cluster.accelerator != "npu" or generation != "910A" or number is None:
            return None
        env = {**self.hosts[host].env, **self.plan.launch.env}
        visible = env.get("ASCEND_RT_VISIBLE_DEVICES", "").strip()
        ids = [int(x) for x in visible.split(",") if x.strip().isdigit()] if visible else list(range(number))
        if number not in (1, 2, 4, 8):
            allowed = max(n for n in (1, 2, 4, 8) if n <= number)
            fix = self.line({"nproc_per_node": str(allowed)})
            return finding(check, host, Status.FAIL,
                           f"nproc-per-node {number} on {host}'s Atlas training (910A) NPUs: a node takes "
                           f"1, 2, 4 or 8 of them in one HCCL job; fix: {fix}", observed=f"{number} NPUs",
                           expected="1, 2, 4 or 8 NPUs", remedy=fix)
        used = ids[:number]
        if number in (2, 4) and len({i // 4 for i in used}) > 1:
            group = ",".join(str(i) for i in range(number))
            fix = self.line(env={"ASCEND_RT_VISIBLE_DEVICES": group})
            return finding(check, host, Status.FAIL,
                           f"NPUs {','.join(map(str, used))} of {host} span the HCCS groups 0-3 and 4-7 "
                           f"(Atlas training, 910A): {number} NPUs must sit in one group or HCCL refuses the group; "
                           f"fix: {fix}", observed=f"NPUs {','.join(map(str, used))}",
                           expected="2 or 4 NPUs inside 0-3 or 4-7", remedy=fix)
        return None

    def rendezvous(self, host: str) -> Finding:
        check = "diagnose.rendezvous"
        facts = self.facts[host]
        if facts.get("torch") is not True:
            why = "torch is not installed" if facts.get("torch") is False else \
                f"python failed: {facts.get('torch_error')}"
            fix = f"{self.hosts[host].python} -m pip install torch  (or set `python:` in hosts.yaml)"
            return finding(check, host, Status.ERROR, f"cannot dry-run on {host}: {why}; fix: {fix}",
                           observed=why, expected="torch importable", remedy=fix)
        if not self.ranks:
            return finding(check, host, Status.SKIP, f"not run: the master {self.plan.master} cannot run it")
        if self.plan.port is None or not self.plan.master_addr:
            return finding(check, host, Status.SKIP, "not run: no valid MASTER_ADDR/MASTER_PORT")
        run = self.runs.get(host)
        rank = self.ranks.get(host)
        if run is None:
            return finding(check, host, Status.SKIP, "not run (evaluated without the dry run)")
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
                    return finding(check, host, Status.FAIL, f"{text}, but {name} failed: "
                                   f"{backend.get('error')}; fix: {fix}",
                                   observed=f"{name}: {backend.get('error')}", expected=f"{name} all_reduce ok",
                                   remedy=fix)
                if not backend.get("available"):
                    fix = f"install torch with {name} support (and the device driver) on every host"
                    return finding(check, host, Status.WARN, f"{text}; {name} not tried: "
                                   f"{backend.get('why') or 'not available on every rank'}; fix: {fix}",
                                   observed=f"{name} unavailable", expected=f"{name} usable", remedy=fix)
                text += f" and {name}"
            return finding(check, host, Status.PASS, f"{text}", observed=f"joined {world}/{world}")
        where = stage_text(stage, self.plan)
        late = self._late_master(host, run)
        if host == self.plan.master and stage != "done":
            lates = [x for h, r in self.runs.items() if (x := self._late_master(h, r)) is not None]
            if lates:
                fix = f"rerun with a longer --timeout (more than {max(lates):.0f} s)"
                return finding(check, host, Status.WARN,
                               f"{who} opened the store {max(lates):.1f} s after the other ranks (a slow "
                               f"torch import here) and they had given up: inconclusive; fix: {fix}",
                               observed=f"stopped at {stage or 'start'}", expected="joined", remedy=fix)
        if late is not None:
            fix = f"rerun with a longer --timeout (more than {late:.0f} s)"
            return finding(check, host, Status.WARN,
                           f"{who} gave up on the store before rank 0 ({self.plan.master}) had even "
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
                       f"{who} did not join: stopped at {where}: {error}; fix: {fix}",
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
