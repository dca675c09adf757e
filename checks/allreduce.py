"""allreduce: real all_reduce traffic between device pairs; finds the slow link and the host behind it.

Host pairs run in rounds (round-robin circle method: n-1 rounds for n hosts, disjoint pairs in
parallel, each on its own port; beyond ``all_pairs_max_hosts`` hosts, or when asked with ``pattern``,
ring neighbours or k random matchings instead); device k talks to device k of the partner, and with more than
one device per host every two local devices also pair up. The worker (preflight.allreduce.worker)
is shipped in the probe command and started in the job's environment (the login environment, the host's
``setup:`` lines, its hosts.yaml ``env``: preflight.job_env), overriding only what the test controls
(MASTER_*, RANK, WORLD_SIZE, LOCAL_RANK, the device, ``NCCL_ALGO=Ring`` on gpu). Backend: hccl on npu,
nccl on gpu, gloo on cpu (one rank per slot).

    checks:
      allreduce: {sizes_mib: [1, 4, 16], budget_s: 5, fraction: 0.8, floor_gbps: 0, confirm_max: 4,
                  expected_fraction: 0.4, nic_gbps: 0}

Every figure is read against the busbw its link class should give (preflight.allreduce.expected: the rate the
node reports x a published share); below ``expected_fraction`` of it a pair is slow even when all pairs agree.
``nic_gbps``: the line rate (Gb/s) of hosts whose interface reports none (virtual NICs), for gloo.

A pair below ``fraction`` of its class's reference is measured again alone (the ``confirm_max`` slowest,
after every round): normal alone, it is a ``warn`` (contention or an ECMP collision), not a slow link; still slow
alone, a pair of its class that was fine in the rounds runs alone right after it, and the pair is blamed only when
below ``fraction`` x that control too (else a ``warn``: the hosts were slow at that moment); a slow pair not
measured again is blamed only when it shares a host confirmed slow with two or more partners.

``mode: bisect`` (``--bisect`` on ``run`` and ``bench allreduce``) runs one all_reduce over every host instead,
and splits a group below expected (or hung) into halves run together, recursively, confirming each suspect in a
pair with a known-good partner before naming it (preflight.allreduce.bisect): O(log n) runs for one bad host.
With ``devices_per_host`` > 1 on gpu and npu it then searches within the nodes: one group per host over all its
devices (every host at once), a slow or hung one split into halves of its devices, each judged against the same
devices on a known-good host, a device named once slow with a known-good device of its host
(preflight.allreduce.bisect_devices).

Not run by default (``by_default = False``): it moves real traffic and costs seconds per round;
ask for it with ``preflight run --checks allreduce``.

>>> AllreduceCheck().parse({"torch": ProbeOutput('{"torch": true, "torch_npu": false}')})
{'torch': True, 'torch_npu': False, 'nic': {'speeds': {}, 'addrs': {}}}
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from preflight.allreduce import bisect, bisect_devices
from preflight.allreduce.bisect_devices_verdict import findings as device_findings
from preflight.allreduce.bisect_verdict import findings as bisect_findings
from preflight.allreduce.confirm import Confirmations, alone_slow, control_pair, replay
from preflight.allreduce.expected import Expected
from preflight.allreduce.floor import Rates, host_expected, intra_expected, lower, pair_expected
from preflight.allreduce.nic import SPEEDS_COMMAND, parse_speeds
from preflight.allreduce.probe import BACKENDS, TORCH_PROBE
from preflight.allreduce.schedule import PATTERNS, Pair, plan
from preflight.allreduce.topology import group_allowed, host_topology, link_class
from preflight.allreduce.verdict import PairResult, judge, median, merge, parse_lines, slow_pairs
from preflight.allreduce.worker import WORKER
from preflight.checks.base import *
from preflight.interfaces import ADDRS_COMMAND, parse_ip_addr
from preflight.job_env import job_command


class AllreduceCheck(ActiveCheck):
    ids = ("allreduce.run", "allreduce.pair", "allreduce.correct", "allreduce.busbw", "allreduce.bisect")
    order = 90
    by_default = False
    summary = "all_reduce busbw per device pair (circle schedule); names the slow link or the suspect host"
    # The intra-host link classes: nvidia-smi topo -m (gpu.devices), the NPU generation (npu: 910A's HCCS groups).
    needs = ("gpu.devices", "npu", "gpu.fabric", "hccn.link", "gpu.pcie")  # + the line rates: expected busbw
    params: ClassVar[Mapping[str, Any]] = {
        "sizes_mib": [1, 4, 16, 64], "warmup": 2, "iters": 5, "trials": 3, "budget_s": 5.0,
        "init_timeout_s": 15.0, "base_port": 29600, "fraction": 0.8, "floor_gbps": 0.0,
        "pattern": "auto", "all_pairs_max_hosts": 16, "matchings": 3, "seed": 0, "confirm_max": 4,
        "expected_fraction": 0.4, "nic_gbps": 0.0, "mode": "pairs",
    }

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("torch", job_command(host, cluster, [host.python, "-c", TORCH_PROBE]), timeout=10),
                Probe("speeds", SPEEDS_COMMAND, timeout=5), Probe("addrs", ADDRS_COMMAND, timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        out = outputs.get("torch", ProbeOutput("", exit_status=None))
        nic = {"speeds": parse_speeds(outputs.get("speeds", ProbeOutput("")).stdout),
               "addrs": parse_ip_addr(outputs.get("addrs", ProbeOutput("")).stdout)}
        for line in reversed(out.stdout.strip().splitlines()):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("torch"), bool):
                return {"torch": data["torch"], "torch_npu": data.get("torch_npu") is True, "nic": nic}
        why = (out.stderr.strip().splitlines() or [f"exit status {out.exit_status}"])[-1]
        return {"torch": None, "torch_error": why[:200], "nic": nic}

    # --- planning (pure) ---

    def usable(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[str]:
        return [h.name for h in ctx.hosts if facts.get(h.name, {}).get("torch") is True]

    def host_pattern(self, n_hosts: int, ctx: EvalContext) -> str:
        """The inter-host pattern that runs: ``auto`` is every pair up to all_pairs_max_hosts, then matchings.

        >>> ctx = EvalContext(ClusterSpec(), [], dict(AllreduceCheck.params))
        >>> AllreduceCheck().host_pattern(16, ctx), AllreduceCheck().host_pattern(17, ctx)
        ('all', 'matchings')
        """
        wanted = str(ctx.params["pattern"])
        if wanted == "auto":
            return "all" if n_hosts <= int(ctx.params["all_pairs_max_hosts"]) else "matchings"
        return wanted

    def rounds(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[list[Pair]]:
        devices = max(1, int(ctx.cluster.devices_per_host or 1))
        hosts = self.usable(facts, ctx)
        pattern = self.host_pattern(len(hosts), ctx)
        if pattern not in PATTERNS:
            return []
        topologies = {h: host_topology(h, ctx.other_facts) for h in hosts}
        return plan(hosts, devices, int(ctx.params["base_port"]), avoid=[ctx.cluster.master_port],
                    pattern=pattern, k=int(ctx.params["matchings"]), seed=int(ctx.params["seed"]),
                    link=lambda host, i, j: link_class(topologies[host], i, j))

    def probe_timeout(self, ctx: EvalContext) -> float:
        """Torch import allowance + rendezvous + budget (the budget may be overrun by one size)."""
        return 20.0 + float(ctx.params["init_timeout_s"]) + 2 * float(ctx.params["budget_s"])

    def spec(self, ctx: EvalContext) -> str:
        return json.dumps({
            "backend": BACKENDS.get(ctx.cluster.accelerator, "gloo"),
            "sizes": [int(float(m) * (1 << 20)) for m in ctx.params["sizes_mib"]],
            "warmup": int(ctx.params["warmup"]), "iters": int(ctx.params["iters"]),
            "trials": int(ctx.params["trials"]), "budget": float(ctx.params["budget_s"]),
            "init_timeout": float(ctx.params["init_timeout_s"]),
        }, separators=(",", ":"))

    def rank_command(self, pair: Pair, rank: int, hosts: Mapping[str, Host], ctx: EvalContext) -> str:
        """One rank in the job's environment (login env, ``setup:``, hosts.yaml ``env``; preflight.job_env),
        overriding only what the test controls: MASTER_*, RANK, WORLD_SIZE, LOCAL_RANK, the device, and
        NCCL_ALGO=Ring on gpu (a 2-rank link test)."""
        me, peer = (pair.host, pair.peer) if rank == 0 else (pair.peer, pair.host)
        host = hosts[me]
        variables = {
            "MASTER_ADDR": hosts[pair.host].address, "MASTER_PORT": str(pair.port), "RANK": str(rank),
            "WORLD_SIZE": "2", "LOCAL_RANK": str(pair.device if rank == 0 else pair.peer_device),
            "PF_DEVICE": str(pair.device if rank == 0 else pair.peer_device), "PF_PAIR": str(pair.index),
            "PF_PEER_ADDR": hosts[peer].address,
        }
        if ctx.cluster.accelerator == "gpu":
            variables["NCCL_ALGO"] = "Ring"
        return job_command(host, ctx.cluster, [host.python, "-c", WORKER, self.spec(ctx)], variables)

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        hosts = {h.name: h for h in ctx.hosts}
        if ctx.params.get("mode") == "bisect":
            return self.followups(facts, ctx, done)
        return [self._step(pairs, hosts, ctx) for pairs in self.rounds(facts, ctx)]

    # --- bisect mode (preflight.allreduce.bisect) ---

    def search(self, facts: Mapping[str, Facts], ctx: EvalContext,
               outcomes: Sequence[StepOutcome]) -> tuple[bisect.Search, list[bisect.Group], int]:
        """The search across hosts replayed from the rounds run so far (one outcome each), the next round's groups
        and how many outcomes it took (those after them are the search within the nodes')."""
        hosts = self.usable(facts, ctx)
        rates = self.rates(facts, ctx)
        fraction, efrac = float(ctx.params["fraction"]), float(ctx.params.get("expected_fraction", 0.4))

        def expect(members: Sequence[str]) -> Expected | None:
            return lower(*(host_expected(rates, h, 0, 1, single=True)[0] for h in members))

        search = bisect.Search(labels={h.name: h.switch for h in ctx.hosts if h.switch})
        base, avoid = int(ctx.params["base_port"]), [ctx.cluster.master_port]
        limit = 2 * max(1, (len(hosts) - 1).bit_length()) + 4
        for taken, outcome in enumerate(outcomes):
            groups = bisect.next_groups(hosts, search, base, avoid) if len(search.rounds) < limit else []
            if not groups:
                return search, [], taken
            lines = [line for outs in outcome.foreground.values()
                     for line in parse_lines(outs.get("ranks", ProbeOutput("")).stdout)]
            fine = [j.result.busbw for r in search.rounds for j in r if j.verdict in ("ok", "unjudged")
                    and j.result.group.searching and j.result.busbw is not None]
            results = bisect.merge(groups, lines, self.probe_timeout(ctx))
            search.rounds.append(bisect.judge_round(results, expect, fraction, efrac,
                                                    median(fine) if fine else None))
            bisect.against_halves(search, fraction)
        nxt = bisect.next_groups(hosts, search, base, avoid) if len(search.rounds) < limit else []
        return search, nxt, len(outcomes)

    def device_search(self, facts: Mapping[str, Facts], ctx: EvalContext, outcomes: Sequence[StepOutcome],
                      start: int, offset: int) -> tuple[bisect.Search, list[bisect.Group]]:
        """The search within the nodes (preflight.allreduce.bisect_devices), after the one across hosts: replayed
        from its outcomes, and the next round's groups. ``start``/``offset``: the group runs and rounds before."""
        counts, _ = self.within_counts(facts, ctx)
        topologies = {h: host_topology(h, ctx.other_facts) for h in counts}
        rates = self.rates(facts, ctx)
        fraction, efrac = float(ctx.params["fraction"]), float(ctx.params.get("expected_fraction", 0.4))

        def link(host: str, i: int, j: int) -> str | None:
            return link_class(topologies[host], i, j)

        def expect(host: str, devs: Sequence[int], size: int) -> Expected | None:
            return lower(*(intra_expected(Pair(0, "intra", host, a, host, b, 0, str(link(host, a, b))), size, rates)
                           for k, a in enumerate(devs) for b in devs[k + 1:]))

        search = bisect.Search()
        base, avoid = int(ctx.params["base_port"]), [ctx.cluster.master_port]
        left = list(outcomes)
        while True:
            groups = bisect_devices.next_groups(counts, search, link, base, avoid, start, offset) \
                if len(search.rounds) < bisect_devices.run_limit(counts) else []
            if not groups or not left:
                return search, groups
            lines = [line for outs in left.pop(0).foreground.values()
                     for line in parse_lines(outs.get("ranks", ProbeOutput("")).stdout)]
            results = bisect.merge(groups, lines, self.probe_timeout(ctx))
            search.rounds.append(bisect_devices.judge_round(results, expect, link, fraction, efrac, search.rounds))

    def searches(self, facts: Mapping[str, Facts], ctx: EvalContext, outcomes: Sequence[StepOutcome]
                 ) -> tuple[bisect.Search, bisect.Search | None, list[bisect.Group]]:
        """Both searches replayed: across hosts, then (once that is over) within the nodes (None before), and the
        next round's groups of whichever is running."""
        hosts, groups, taken = self.search(facts, ctx, outcomes)
        if groups:
            return hosts, None, groups
        devices, groups = self.device_search(facts, ctx, outcomes[taken:], sum(len(r) for r in hosts.rounds),
                                             len(hosts.rounds))
        return hosts, devices, groups

    def followups(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome]) -> list[Step]:
        """pairs: each slow pair measured again alone (nothing else running) before it is blamed, once, and one
        still slow alone followed by its control (preflight.allreduce.confirm), a step each; bisect: the next round
        of the search (across hosts, then within the nodes), until it is over."""
        if ctx.params.get("mode") == "bisect":
            _, _, groups = self.searches(facts, ctx, done)
            return [self._group_step(groups, {h.name: h for h in ctx.hosts}, ctx)] if groups else []
        if len(done) < len(self.rounds(facts, ctx)):
            return []
        _, confirmations = self.confirmations(facts, ctx, done)
        return [self._step([pair], {h.name: h for h in ctx.hosts}, ctx) for pair in confirmations.next]

    def _group_step(self, groups: Sequence[bisect.Group], hosts: Mapping[str, Host], ctx: EvalContext) -> Step:
        """One round: every group's ranks at once (rank i on group.hosts[i], rank 0 the store): across hosts one
        rank per host on device 0; within a node (members ``host/device``) a host's ranks side by side."""
        timeout = self.probe_timeout(ctx)
        spec = json.dumps({**json.loads(self.spec(ctx)), "track_arrival": True}, separators=(",", ":"))
        ranks: dict[str, list[str]] = defaultdict(list)
        for group in groups:
            within = "/" in group.hosts[0]
            places = [bisect_devices.split(m) if within else (m, 0) for m in group.hosts]
            master = hosts[places[0][0]]
            for rank, (name, device) in enumerate(places):
                host = hosts[name]
                peer = hosts[places[1 if rank == 0 else 0][0]]
                variables = {"MASTER_ADDR": master.address, "MASTER_PORT": str(group.port), "RANK": str(rank),
                             "WORLD_SIZE": str(len(group.hosts)), "LOCAL_RANK": str(device),
                             "PF_DEVICE": str(device), "PF_PAIR": str(group.index), "PF_PEER_ADDR": peer.address}
                if ctx.cluster.accelerator == "gpu":
                    variables["NCCL_ALGO"] = "Ring"
                ranks[name].append(job_command(host, ctx.cluster, [host.python, "-c", WORKER, spec], variables))
        foreground = {h: [Probe("ranks", cmds[0] if len(cmds) == 1 else " & ".join(cmds) + " & wait",
                                timeout=timeout)] for h, cmds in ranks.items()}
        return Step(background={}, foreground=foreground, timeout=timeout + 10)

    def first_results(self, facts: Mapping[str, Facts], ctx: EvalContext,
                      outcomes: Sequence[StepOutcome]) -> tuple[list[PairResult], list[PairResult]]:
        """The rounds' pair results (from the first ``len(rounds)`` outcomes), and the slow pairs among them
        that are measured again alone: the ``confirm_max`` slowest, worst first."""
        rounds = self.rounds(facts, ctx)
        done = outcomes[:len(rounds)]
        lines = [line for o in done for outs in o.foreground.values()
                 for line in parse_lines(outs.get("ranks", ProbeOutput("")).stdout)]
        results = merge([p for r in rounds[:len(done)] for p in r], lines, self.probe_timeout(ctx))
        slow, _ = slow_pairs([r for r in results if r.error is None], float(ctx.params["fraction"]),
                             float(ctx.params["floor_gbps"]), self.hardware_floors(results, facts, ctx))
        return results, sorted(slow, key=lambda r: r.figure)[:max(0, int(ctx.params["confirm_max"]))]

    def confirmations(self, facts: Mapping[str, Facts], ctx: EvalContext,
                      outcomes: Sequence[StepOutcome]) -> tuple[list[PairResult], Confirmations]:
        """The rounds' pair results and the confirmation runs after them, replayed (preflight.allreduce.confirm):
        each slow pair alone, and a control of its class alone right after one still slow alone; with what runs
        next."""
        results, again = self.first_results(facts, ctx, outcomes)
        later = outcomes[len(self.rounds(facts, ctx)):]
        fraction, floor_gbps = float(ctx.params["fraction"]), float(ctx.params["floor_gbps"])
        hardware = self.hardware_floors(results, facts, ctx)
        measured = [r for r in results if r.error is None]
        slow_ids = {r.pair.index for r in slow_pairs(measured, fraction, floor_gbps, hardware)[0]}

        def read(k: int, pair: Pair) -> PairResult:
            lines = [line for outs in later[k].foreground.values()
                     for line in parse_lines(outs.get("ranks", ProbeOutput("")).stdout)]
            return merge([pair], lines, self.probe_timeout(ctx))[0]

        return results, replay(again, len(later), read,
                               lambda first, alone: alone_slow(first, alone, measured, fraction, floor_gbps, hardware),
                               lambda first: control_pair(first, measured, slow_ids))

    def _step(self, pairs: Sequence[Pair], hosts: Mapping[str, Host], ctx: EvalContext) -> Step:
        """One step running ``pairs`` at once: each host's ranks start together and the probe waits for all."""
        timeout = self.probe_timeout(ctx)
        ranks: dict[str, list[str]] = defaultdict(list)
        for pair in pairs:
            ranks[pair.host].append(self.rank_command(pair, 0, hosts, ctx))
            ranks[pair.peer].append(self.rank_command(pair, 1, hosts, ctx))
        foreground = {h: [Probe("ranks", " & ".join(cmds) + " & wait", timeout=timeout)] for h, cmds in ranks.items()}
        return Step(background={}, foreground=foreground, timeout=timeout + 10)

    def pattern(self, n_hosts: int, ctx: EvalContext) -> str:
        """Says which pairs ran, e.g. ``every host pair (circle schedule), device k <-> device k``."""
        devices = max(1, int(ctx.cluster.devices_per_host or 1))
        pattern = self.host_pattern(n_hosts, ctx)
        text = {"all": "every host pair (circle schedule)", "ring": "ring neighbours (2 partners per host)",
                "matchings": f"{ctx.params['matchings']} random matchings (seed {ctx.params['seed']}, "
                             f"{ctx.params['matchings']} partners per host)"}[pattern]
        return text + ", device k <-> device k" + (", and every local device pair" if devices > 1 else "")

    # --- judging (pure) ---

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        for host in ctx.hosts:
            f = facts.get(host.name)
            if f is not None and f.get("torch") is not True:
                why = "torch is not installed" if f.get("torch") is False else f"python failed: {f.get('torch_error')}"
                findings.append(finding("allreduce.run", host.name, Status.ERROR,
                                        f"cannot run all_reduce on {host.name}: {why}",
                                        observed=why, expected="torch importable",
                                        remedy=f"{host.python} -m pip install torch  (or set `python:` in hosts.yaml)"))
        wanted = self.host_pattern(len(self.usable(facts, ctx)), ctx)
        if wanted not in PATTERNS:
            return findings + [finding("allreduce.run", None, Status.ERROR,
                                       f"unknown pattern {wanted!r}",
                                       observed=wanted, expected=f"auto or one of {', '.join(PATTERNS)}",
                                       remedy="set checks: {allreduce: {pattern: auto}} in hosts.yaml")]
        rounds = self.rounds(facts, ctx)
        if not rounds:
            return findings + [finding("allreduce.run", None, Status.SKIP,
                                       "nothing to test (fewer than 2 hosts or devices with torch)")]
        if not outcomes:
            return findings  # planned but not run (evaluate() without the active phase)
        if ctx.params.get("mode") == "bisect":
            search, within, _ = self.searches(facts, ctx, outcomes)
            findings += bisect_findings(search, sum(len(r) for r in search.rounds))
            if within is not None and within.rounds:
                findings += device_findings(within, sum(len(r) for r in within.rounds))
            if within is not None:
                findings += self.refused_within(facts, ctx)
            return findings
        results, confirmed = self.confirmations(facts, ctx, outcomes)
        return findings + judge(results, self.usable(facts, ctx), float(ctx.params["fraction"]),
                                float(ctx.params["floor_gbps"]),
                                self.pattern(len(self.usable(facts, ctx)), ctx),
                                confirmed.remeasured if len(outcomes) > len(rounds) else None,  # None: none ran
                                self.hardware_floors(results, facts, ctx), self.expected(results, facts, ctx),
                                confirmed.controls)

    def within_counts(self, facts: Mapping[str, Facts], ctx: EvalContext) -> tuple[dict[str, int], list[str]]:
        """The hosts the search within the nodes runs (host -> its devices) and those it cannot: the collective
        library refuses a group of all their devices (HCCL on 910A: 1, 2, 4 or 8 devices, 2 or 4 inside one HCCS
        group). Neither on cpu (its "devices" are slots of one CPU: no links) or with one device per host."""
        devices = max(1, int(ctx.cluster.devices_per_host or 1))
        if devices < 2 or ctx.cluster.accelerator not in ("gpu", "npu"):
            return {}, []
        hosts = self.usable(facts, ctx)
        refused = [h for h in hosts if not group_allowed(host_topology(h, ctx.other_facts), range(devices))]
        return {h: devices for h in hosts if h not in refused}, refused

    def refused_within(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        """A ``skip`` for each host the search within the nodes cannot run (``within_counts``), saying why."""
        devices = max(1, int(ctx.cluster.devices_per_host or 1))
        return [finding("allreduce.bisect", h, Status.SKIP,
                        f"{h}: not searched within the node: HCCL on Atlas training (910A) takes a group of 1, 2, 4 "
                        f"or 8 devices (2 or 4 inside one HCCS group, NPUs 0-3 or 4-7), not {devices}",
                        observed=f"{devices} devices", expected="1, 2, 4 or 8 devices",
                        remedy="set devices_per_host to 8 (or 4 / 2) in hosts.yaml, as the job's HCCL groups must be")
                for h in self.within_counts(facts, ctx)[1]]

    def rates(self, facts: Mapping[str, Facts], ctx: EvalContext) -> Rates:
        """What the expected busbw is derived from (preflight.allreduce.floor)."""
        return Rates(ctx.cluster.accelerator, ctx.other_facts, {h.name: h.env for h in ctx.hosts},
                     {h.name: h.address for h in ctx.hosts}, {h: f.get("nic") or {} for h, f in facts.items()},
                     float(ctx.params.get("nic_gbps") or 0.0))

    def expected(self, results: Sequence[PairResult], facts: Mapping[str, Facts],
                 ctx: EvalContext) -> dict[int, Expected]:
        """Each pair's expected busbw from the hardware (preflight.allreduce.floor), where its rate is known."""
        return pair_expected(results, self.rates(facts, ctx), concurrent=max(1, int(ctx.cluster.devices_per_host or 1)))

    def hardware_floors(self, results: Sequence[PairResult], facts: Mapping[str, Facts],
                        ctx: EvalContext) -> dict[int, tuple[float, str]]:
        """Each pair's floor: ``expected_fraction`` x its expected busbw, with how that was derived."""
        fraction = float(ctx.params.get("expected_fraction", 0.4))
        return {i: (e.floor(fraction), f"{fraction:g} x expected {e.gbps:.3g} GB/s = {e.how}")
                for i, e in self.expected(results, facts, ctx).items()}
