"""The commands that open the job's ports in front of a dropping rule, and take them out again, one tool each:
iptables (``-I CHAIN POS`` / ``-D CHAIN`` the same spec), nftables (``insert rule ... position HANDLE`` / ``delete
rule ... handle`` of the handle the rule got), ufw (``insert N allow`` / ``delete allow``), firewalld (a rich rule,
runtime and ``--permanent`` / ``--remove-rich-rule``). Every command is an argv tuple (no shell); every rule added
carries the comment ``preflight-fix:<run>`` where the tool has comments (firewalld's rich rules have none: they are
taken out by their exact text).

Never here: a change of default policy, enabling or disabling ufw or firewalld, ``firewall-cmd --reload`` (it drops
every runtime rule another tool added), saving whole tables (``iptables-save``, ``nft list ruleset`` to a file:
that would persist the rules of container runtimes and kube-proxy).

>>> opening = Opening("iptables", "ipv4", ("10.0.0.0/24",), ((29500, 29500),), "filter", "INPUT", position=3)
>>> apply, undo = commands(opening, "r1")
>>> " ".join(apply[0])
'iptables -I INPUT 3 -p tcp -s 10.0.0.0/24 --dport 29500 -m comment --comment preflight-fix:r1 -j ACCEPT'
>>> " ".join(undo[0])
'iptables -D INPUT -p tcp -s 10.0.0.0/24 --dport 29500 -m comment --comment preflight-fix:r1 -j ACCEPT'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from preflight.ports import Range

Argv = tuple[str, ...]
COMMENT = "preflight-fix:"  # + the run id: the comment every rule fix adds carries
HANDLE = "<handle>"  # in an nft undo argv: the handle the added rule got, read back after applying (resolve_undo)
MULTIPORT_SLOTS = 15  # iptables multiport and ufw take at most 15 ports, a range counting as two


def comment(run_id: str) -> str:
    """The comment of the rules a run adds (``'`` and ``"`` left out: ufw refuses ``'``, nft quotes with ``"``).

    >>> comment("20260101T000000Z-ab12")
    'preflight-fix:20260101T000000Z-ab12'
    """
    return COMMENT + re.sub(r"[^\w.:@+-]", "", run_id)


@dataclass(frozen=True)
class Opening:
    """One ACCEPT to add: for ``ports`` from ``sources`` (networks or addresses of one family), before a dropping
    rule.

    ``manager``: the command that adds it: iptables, ip6tables, iptables-legacy, ip6tables-legacy, nft, ufw or
    firewalld. ``table``: "filter" for iptables, "<family> <name>" for nft. ``position`` (iptables): the rule
    number to insert at; ``handle`` (nft): the rule to insert before (None: the chain's policy, so appended).
    ``zone`` and ``priority``: firewalld's zone and the rich rule's priority (None: the default, 0). ``ufw_position``:
    the rule number for ``ufw insert`` (None: ufw has no rule of that family yet, so ``ufw allow`` appends).
    """

    manager: str
    family: str  # "ipv4" | "ipv6"
    sources: tuple[str, ...]
    ports: tuple[Range, ...]
    table: str
    chain: str
    position: int | None = None
    handle: int | None = None
    zone: str | None = None
    priority: int | None = None
    ufw_position: int | None = None


def chunks(ranges: Sequence[Range], slots: int = MULTIPORT_SLOTS) -> list[tuple[Range, ...]]:
    """Port ranges in groups a multiport match (or ufw) takes: at most ``slots`` ports, a range counting as two.

    >>> chunks([(1, 1), (3, 9)], slots=3)
    [((1, 1), (3, 9))]
    >>> chunks([(1, 1), (3, 9), (11, 11)], slots=3)
    [((1, 1), (3, 9)), ((11, 11),)]
    """
    groups: list[tuple[Range, ...]] = []
    current: list[Range] = []
    used = 0
    for low, high in ranges:
        cost = 1 if low == high else 2
        if current and used + cost > slots:
            groups.append(tuple(current))
            current, used = [], 0
        current.append((low, high))
        used += cost
    if current:
        groups.append(tuple(current))
    return groups


def _ports(ranges: Iterable[Range], separator: str, range_mark: str) -> str:
    return separator.join(str(low) if low == high else f"{low}{range_mark}{high}" for low, high in ranges)


# --- iptables ----------------------------------------------------------------------------------------------------

def iptables_spec(opening: Opening, ports: Sequence[Range], run_id: str) -> Argv:
    """The rule spec after ``-I CHAIN POS`` / ``-D CHAIN``: a comma list of sources adds one rule per source.

    >>> " ".join(iptables_spec(Opening("iptables", "ipv4", ("10.0.0.2", "10.0.0.3"), (), "filter", "INPUT"),
    ...                        [(29500, 29500), (60000, 60015)], "r"))
    '-p tcp -s 10.0.0.2,10.0.0.3 -m multiport --dports 29500,60000:60015 -m comment --comment preflight-fix:r -j ACCEPT'
    """
    match = ("--dport", _ports(ports, ",", ":")) if len(ports) == 1 else \
        ("-m", "multiport", "--dports", _ports(ports, ",", ":"))
    return ("-p", "tcp", "-s", ",".join(opening.sources), *match, "-m", "comment", "--comment", comment(run_id),
            "-j", "ACCEPT")


def _iptables(opening: Opening, run_id: str) -> tuple[list[Argv], list[Argv]]:
    apply: list[Argv] = []
    undo: list[Argv] = []
    position = opening.position or 1
    for group in chunks(opening.ports):
        spec = iptables_spec(opening, group, run_id)
        apply.append((opening.manager, "-I", opening.chain, str(position), *spec))
        undo.append((opening.manager, "-D", opening.chain, *spec))
    return apply, undo


# --- nftables ----------------------------------------------------------------------------------------------------

def nft_rule(opening: Opening, run_id: str) -> str:
    """The rule's text after the chain, as ``nft -a list chain`` prints it back (so it can be found there).

    >>> nft_rule(Opening("nft", "ipv4", ("10.0.0.0/24",), ((29500, 29500), (60000, 60015)), "inet t", "input"), "r")
    'ip saddr 10.0.0.0/24 tcp dport { 29500, 60000-60015 } accept comment "preflight-fix:r"'
    """
    selector = "ip6 saddr" if opening.family == "ipv6" else "ip saddr"
    sources = opening.sources[0] if len(opening.sources) == 1 else "{ " + ", ".join(opening.sources) + " }"
    ports = _ports(opening.ports, ", ", "-")
    ports = ports if len(opening.ports) == 1 else "{ " + ports + " }"
    return f'{selector} {sources} tcp dport {ports} accept comment "{comment(run_id)}"'


def _nft(opening: Opening, run_id: str) -> tuple[list[Argv], list[Argv]]:
    family, _, table = opening.table.partition(" ")
    words = tuple(nft_rule(opening, run_id).split(" "))
    if opening.handle is None:  # before the policy: at the end of the chain
        apply: Argv = ("nft", "add", "rule", family, table, opening.chain, *words)
    else:
        apply = ("nft", "insert", "rule", family, table, opening.chain, "position", str(opening.handle), *words)
    return [apply], [("nft", "delete", "rule", family, table, opening.chain, "handle", HANDLE)]


def handle_lookup(argv: Argv) -> Argv | None:
    """For an nft undo argv still holding ``HANDLE``: the command that lists its chain with handles.

    >>> handle_lookup(("nft", "delete", "rule", "inet", "t", "input", "handle", HANDLE))
    ('nft', '-a', 'list', 'chain', 'inet', 't', 'input')
    >>> handle_lookup(("iptables", "-D", "INPUT")) is None
    True
    """
    if len(argv) == 8 and argv[:3] == ("nft", "delete", "rule") and argv[7] == HANDLE:
        return ("nft", "-a", "list", "chain", *argv[3:6])
    return None


def find_handles(listing: str, marker: str) -> list[int]:
    """Handles of the rules of ``nft -a list chain`` output whose comment is ``marker``.

    >>> listing = ('table inet t {\\n\\tchain input { # handle 1\\n\\t\\tip saddr 10.0.0.0/24 tcp dport 29500 '
    ...            'accept comment "preflight-fix:r" # handle 7\\n\\t\\ttcp dport 29500 drop # handle 2\\n')
    >>> find_handles(listing, "preflight-fix:r")
    [7]
    """
    found = []
    for line in listing.splitlines():
        text = line.strip()
        match = re.search(r'\bcomment "([^"]*)"\s*# handle (\d+)$', text)
        if match and match[1] == marker:
            found.append(int(match[2]))
    return found


def resolve_undo(commands_: Sequence[Argv], listings: Mapping[Argv, str], run_id: str) -> tuple[list[Argv], list[str]]:
    """Undo argvs with every ``HANDLE`` replaced by the handle the run's rule got in that chain (``listings``:
    lookup argv -> its output), and what could not be found (the rule is gone: nothing to take out).

    >>> undo = [("nft", "delete", "rule", "inet", "t", "input", "handle", HANDLE)]
    >>> listing = 'chain input {\\n tcp dport 29500 accept comment "preflight-fix:r" # handle 9\\n}'
    >>> resolve_undo(undo, {handle_lookup(undo[0]): listing}, "r")
    ([('nft', 'delete', 'rule', 'inet', 't', 'input', 'handle', '9')], [])
    >>> resolve_undo(undo, {handle_lookup(undo[0]): ""}, "r")[1]
    ['no rule with comment preflight-fix:r in nft chain inet t input']
    """
    resolved: list[Argv] = []
    missing: list[str] = []
    used: set[tuple[Argv, int]] = set()
    for argv in commands_:
        lookup = handle_lookup(argv)
        if lookup is None:
            resolved.append(argv)
            continue
        handles = [h for h in find_handles(listings.get(lookup, ""), comment(run_id)) if (lookup, h) not in used]
        if not handles:
            missing.append(f"no rule with comment {comment(run_id)} in nft chain {' '.join(argv[3:6])}")
            continue
        used.add((lookup, handles[0]))
        resolved.append((*argv[:7], str(handles[0])))
    return resolved, missing


# --- ufw ---------------------------------------------------------------------------------------------------------

def _ufw(opening: Opening, run_id: str) -> tuple[list[Argv], list[Argv]]:
    apply: list[Argv] = []
    undo: list[Argv] = []
    position = opening.ufw_position
    for source in opening.sources:
        for group in chunks(opening.ports):
            rule = ("allow", "proto", "tcp", "from", source, "to", "any", "port", _ports(group, ",", ":"),
                    "comment", comment(run_id))
            apply.append(("ufw", "insert", str(position), *rule) if position is not None else ("ufw", *rule))
            undo.append(("ufw", "delete", *rule))
    return apply, undo


# --- firewalld ---------------------------------------------------------------------------------------------------

def rich_rule(opening: Opening, source: str, ports: Range) -> str:
    """A firewalld rich rule as ``firewall-cmd --list-rich-rules`` prints it.

    >>> rich_rule(Opening("firewalld", "ipv4", (), (), "", "", zone="public"), "10.0.0.0/24", (60000, 60015))
    'rule family="ipv4" source address="10.0.0.0/24" port port="60000-60015" protocol="tcp" accept'
    """
    low, high = ports
    priority = f'priority="{opening.priority}" ' if opening.priority else ""
    port = str(low) if low == high else f"{low}-{high}"
    return (f'rule {priority}family="{opening.family}" source address="{source}" port port="{port}" '
            f'protocol="tcp" accept')


def _firewalld(opening: Opening) -> tuple[list[Argv], list[Argv]]:
    zone = (f"--zone={opening.zone}",) if opening.zone else ()
    apply: list[Argv] = []
    undo: list[Argv] = []
    for source in opening.sources:
        for ports in opening.ports:
            rule = rich_rule(opening, source, ports)
            apply += [("firewall-cmd", *zone, f"--add-rich-rule={rule}"),
                      ("firewall-cmd", "--permanent", *zone, f"--add-rich-rule={rule}")]
            undo += [("firewall-cmd", "--permanent", *zone, f"--remove-rich-rule={rule}"),
                     ("firewall-cmd", *zone, f"--remove-rich-rule={rule}")]
    return apply, undo


def commands(opening: Opening, run_id: str) -> tuple[list[Argv], list[Argv]]:
    """The argvs that add the opening, and those that take it out again (to run in that order)."""
    if opening.manager == "nft":
        return _nft(opening, run_id)
    if opening.manager == "ufw":
        return _ufw(opening, run_id)
    if opening.manager == "firewalld":
        return _firewalld(opening)
    return _iptables(opening, run_id)


# What survives a reboot, per tool (docs/fix.md says the same).
PERSISTENCE = {
    "iptables": "runtime only: the rule is gone after a reboot (preflight never saves whole tables, which would "
                "persist the rules of container runtimes and kube-proxy); to keep it, add the same rule to the "
                "file your firewall loads at boot (/etc/iptables/rules.v4, /etc/sysconfig/iptables)",
    "nft": "runtime only: the rule is gone after a reboot or `nft -f /etc/nftables.conf` (preflight never saves "
           "the whole ruleset); to keep it, add the same rule to /etc/nftables.conf",
    "ufw": "kept by ufw in /etc/ufw/user.rules (user6.rules for IPv6): it survives a reboot",
    "firewalld": "added to the runtime and the permanent configuration of the zone: it survives a reboot and "
                 "a firewall-cmd --reload",
}


def persistence(manager: str) -> str:
    """What survives a reboot of a rule ``manager`` adds (the iptables tools alike)."""
    return PERSISTENCE.get(manager, PERSISTENCE["iptables"])
