"""Run a new TCP connection through rulesets: rule order, jumps, gotos, returns, policies, netdev devices.

Each base chain on the input path gives the set of outcomes its rules can lead to; a condition that
is undecided (MAYBE) is followed both ways and named. A drop in any base chain is final.

>>> from preflight.firewall.iptables_rules import compile_iptables
>>> facts = {"policies": {"INPUT": "DROP"}, "rules": ["-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT"]}
>>> ruleset = compile_iptables(facts, "iptables", "ipv4")
>>> verdict(ruleset, Packet("ipv4", 29500, None, None, None)).definite[0].text
'-P INPUT DROP'
>>> verdict(ruleset, Packet("ipv4", 22, None, None, None)).possible
()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from preflight.firewall.model import MAYBE, NO, IfaceIs, Packet, Rule, RuleSet

Outcome = tuple[str, Rule | None]  # ("accept" | "drop" | "return", the deciding rule for drops)


class _Walker:
    """All outcomes of one packet through one ruleset's chains (undecided matches are followed both ways)."""

    def __init__(self, ruleset: RuleSet, pkt: Packet) -> None:
        self.ruleset, self.pkt = ruleset, pkt
        self.memo: dict[str, frozenset[Outcome]] = {}
        self.active: set[str] = set()
        self.undecided: set[str] = set()

    def chain(self, name: str) -> frozenset[Outcome]:
        if name in self.memo:
            return self.memo[name]
        chain = self.ruleset.chains.get(name)
        if chain is None or name in self.active or len(self.active) > 64:
            return frozenset({("return", None)})
        self.active.add(name)
        after: frozenset[Outcome] = frozenset({("return", None)})
        for rule in reversed(chain.rules):
            matched = rule.match(self.pkt)
            if matched == NO:
                continue
            taken = self._apply(rule, after)
            if matched == MAYBE:
                if taken != after:  # an undecided match that changes what can happen
                    self.undecided |= {c.label for c in rule.conds if c.test(self.pkt) == MAYBE}
                taken = taken | after
            after = taken
        self.active.discard(name)
        self.memo[name] = after
        return after

    def _apply(self, rule: Rule, after: frozenset[Outcome]) -> frozenset[Outcome]:
        if rule.verdict == "accept":
            return frozenset({("accept", None)})
        if rule.verdict in ("drop", "reject"):
            return frozenset({("drop", rule)})
        if rule.verdict == "queue":
            self.undecided.add("the verdict of a userspace queue (NFQUEUE)")
            return frozenset({("drop", rule), ("accept", None)})
        if rule.verdict == "return":
            return frozenset({("return", None)})
        if rule.verdict in ("jump", "goto") and rule.target in self.ruleset.chains:
            sub = self.chain(rule.target)
            if rule.verdict == "goto":
                return sub
            kept = frozenset(o for o in sub if o[0] != "return")
            return kept | after if any(o[0] == "return" for o in sub) else kept
        return after

    def base(self, name: str) -> frozenset[Outcome]:
        """Outcomes of a base chain: falling off its end (or returning) applies its policy."""
        chain = self.ruleset.chains[name]
        policy = chain.policy
        end: Outcome = ("drop", policy) if policy is not None and policy.verdict == "drop" else ("accept", None)
        outcomes = frozenset(end if o[0] == "return" else o for o in self.chain(name))
        if chain.device is not None:
            on_device = IfaceIs([chain.device]).test(self.pkt)
            if on_device == NO:
                return frozenset({("accept", None)})
            if on_device == MAYBE:
                self.undecided.add("the input interface")
                return outcomes | {("accept", None)}
        return outcomes


@dataclass(frozen=True)
class Verdict:
    """What the base chains on the input path do with one packet."""

    definite: tuple[Rule, ...]  # a base chain drops it on every path: the rules that do
    possible: tuple[Rule, ...]  # some path drops it
    undecided: frozenset[str]


def verdict(ruleset: RuleSet | Sequence[RuleSet], pkt: Packet) -> Verdict:
    """Run ``pkt`` through every base chain of the rulesets (of its family); a drop in any one is final."""
    definite: list[Rule] = []
    possible: list[Rule] = []
    undecided: set[str] = set()
    for rs in [ruleset] if isinstance(ruleset, RuleSet) else ruleset:
        if pkt.family not in rs.families:
            continue
        walker = _Walker(rs, pkt)
        for base in rs.bases:
            outcomes = walker.base(base)
            # Outcomes are a set: sort, so messages and remedies come out the same on every run.
            drops = sorted((rule for kind, rule in outcomes if kind == "drop" and rule is not None), key=_rule_order)
            possible += drops
            if drops and len(drops) == len(outcomes):
                definite += drops
        undecided |= walker.undecided
    return Verdict(tuple(dict.fromkeys(definite)), tuple(dict.fromkeys(possible)), frozenset(undecided))


def _rule_order(rule: Rule) -> tuple[str, str, str, bool, int, str]:
    """A stable order for rules: where they sit, then their text."""
    return (rule.tool, rule.table, rule.chain, rule.policy, rule.handle if rule.handle is not None else -1, rule.text)
