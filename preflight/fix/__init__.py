"""``preflight fix``: findings -> a plan of changes per host -> applied safely, verified, journaled, undone
(issue 40; the policy, the journal format and what fix never touches: docs/fix.md).

This package is the *domain* layer (tests/test_architecture.py's LAYERS): pure planning and the executor's logic.
It imports the report model, ``preflight.context`` / ``findings`` / ``ports`` / ``container`` / ``firewall`` /
``interfaces`` / ``inventory`` / ``hostlists`` / ``batch`` and ``preflight.tools``; never a check module, the
engine, the application or a renderer. Whatever needs the network, the terminal or the controller's files is done
by ``preflight/app/fix.py`` (planning) and ``preflight/app/fix_apply.py`` (applying) and handed in. This
``__init__`` imports nothing: import the modules themselves.

The interfaces the three parts build against (agreed in the issue 40 design; an interface changed here is agreed
first, and said in the commit message and here).

``model.py`` (plan)::

    Argv = tuple[str, ...]                      # one command, never a shell string: the executor shlex.quotes each word
    KINDS = ("sysctl", "reserved_ports", "firewall", "print")
    FileEdit(path: str, before: str | None, after: str)
        # the whole file before (None: absent) and after. A host's changes run in order and may edit the same file
        # (the sysctl and reserved_ports changes both edit /etc/sysctl.d/90-preflight.conf): each edit's ``before``
        # is the file as the previous change left it. The executor writes ``after`` only while the file on the host
        # is still ``before`` (else that change is refused: the host changed since it was planned).
        .diff() -> str                          # unified diff (a/PATH, b/PATH)
    Undo(files: tuple[tuple[str, str | None], ...] = (),   # path -> the contents to put back (None: remove the file)
         values: tuple[tuple[str, str], ...] = (),          # sysctl key -> the value in force before (``sysctl -w``)
         commands: tuple[Argv, ...] = ())                   # argv taking the change out (firewall: -D, delete by
                                                            # handle, ufw delete, --remove-rich-rule)
    Change(host: str, fixes: tuple[str, ...], kind: str, summary: str,
           files: tuple[FileEdit, ...] = (), commands: tuple[Argv, ...] = (),
           verify: tuple[str, ...] = (),        # finding ids to re-run after applying (the fixed ones at least)
           expect: tuple[tuple[str, str], ...] = (),   # sysctl key -> the value that must be in force afterwards
                                                # (read back from /proc/sys: a value not in force fails the change)
           undo: Undo = Undo(), notes: tuple[str, ...] = (),  # notes: e.g. a later sysctl file overriding at boot
           remedy: str = "")                    # kind "print": the exact command, shown and never run
        # ``fixes``: the finding ids it fixes (one reserved_ports change answers both ports.reserved and
        # sysctl.port_range). ``applicable``: kind != "print".
    HostPlan(host: str, changes: tuple[Change, ...], state: tuple[tuple[str, str], ...] = (),
             notes: tuple[str, ...] = ())
        # state: part -> sha256 of the facts the changes were made from ("sysctl", "reserved_ports", "firewall"),
        # ``fingerprint``: one hash of them. notes: what could not be planned on the host (an error finding).
        # host "" holds the cluster-wide findings' printed remedies.
    Plan(run_id: str, created: str, policy: str, hosts: tuple[HostPlan, ...], include: tuple[str, ...] = ())
        .to_dict() / Plan.from_dict(data) (ValueError: not a plan of this schema), .dumps() / Plan.loads(text)
        .applicable -> the HostPlans with a change to apply; .without(hosts) -> the plan less those hosts
    digest(data: Any) -> str                    # sha256 of canonical JSON

``policy.py`` (plan): ``POLICY_VERSION``; ``NEVER`` (what fix never touches, as docs/fix.md lists it);
``plan(findings, ctx, *, include=frozenset(), run_id, created) -> Plan`` (pure; ``ctx`` is an EvalContext whose
``other_facts`` hold every check's facts by check ident -> host, and the fix's own state under ``"fix.state"``,
see ``sysctl.STATE_PROBE``); ``host_state(host, changes, ctx) -> tuple[tuple[str, str], ...]`` (what HostPlan.state
holds); ``stale(saved: Plan, ctx) -> dict[str, str]`` (host -> why its state changed since the plan: ``--apply
FILE`` refuses those hosts).

``sysctl.py``, ``ports.py`` (plan): the sysctl and reserved_ports change builders; ``STATE_PROBE`` (the command the
application runs on every host next to the checks: the sysctl configuration files, read-only) and
``parse_state(text) -> dict``. Values are set with ``sysctl -p /etc/sysctl.d/90-preflight.conf`` (that file's keys
only), never ``sysctl --system``, which re-applies every file and resets what others set at runtime (docker's and
kubelet's ip_forward, ...); which file wins at boot is read from the state and said in ``notes``.

``firewall.py`` (firewall engineer)::

    firewall_changes(host: str, findings: Sequence[Finding], ctx: EvalContext, run_id: str = "") -> list[Change]
        # the host's firewall.rules findings that are fail/warn -> kind "firewall" changes (ACCEPT for exactly the
        # job's ports from the cluster's hosts / training subnet, before the dropping rule, in the training
        # interface's zone for firewalld), then kind "print" for what is left (the ephemeral range, other ports);
        # [] when nothing is wrong. ``run_id`` (added; policy passes Plan.run_id): every rule added carries the
        # comment ``preflight-fix:<run_id>`` (ufw, iptables, nft), which is how its undo finds it.
    firewall_state(host: str, ctx: EvalContext) -> Any
        # the part of the firewall facts those changes depend on, JSON-able, without counters: HostPlan.state's
        # "firewall" digest, so ``--apply FILE`` refuses a host whose rules moved

``firewall_commands.py`` (firewall engineer; added): the per-tool argvs, and what the executor must do for nft.
An nft rule is deleted by the handle it got, unknown when planning: its undo argv ends in the word
``firewall_commands.HANDLE`` (``("nft", "delete", "rule", FAMILY, TABLE, CHAIN, "handle", HANDLE)``). The
executor resolves it, after applying (to journal the real handle) or at undo time::

    handle_lookup(argv) -> Argv | None          # ("nft", "-a", "list", "chain", FAMILY, TABLE, CHAIN), or None:
                                                # the argv needs nothing (every non-nft undo)
    resolve_undo(commands, listings: Mapping[Argv, str], run_id) -> (list[Argv], list[str])
        # listings: lookup argv -> its stdout; the undo argvs with the handle of the run's rule in, and what could
        # not be found (the rule is gone: nothing to take out, say so)

``render.py`` (plan): ``render_plan(plan) -> str``: per host block the files as unified diffs and the commands,
hosts with identical plans folded (``sv[1-60]``).

``journal.py``, ``apply.py`` (apply engineer): the journal (JSON per run and host, on the host in
/var/lib/preflight/journal/<run>.json and on the controller in $XDG_STATE_HOME/preflight/fix/<run>/<host>.json;
one ``logger -t preflight-fix`` line per change) and the executor (canary first, batches, ``max_failures``, a fresh
connection after each host's change or roll back, per-host flock /run/lock/preflight-fix.lock, apply twice = no
change, containers with a read-only /proc/sys: print their remedy), over a runner the application hands in.

The application (``preflight/app/``): ``fix.py`` (plan)::

    FixRequest(hosts: Path | None, checks=(), skip=(), options: RunOptions = RunOptions(), accelerator="auto",
               transport="auto", include: frozenset[str] = frozenset(), max_parallel=8, max_failures=1)
    gather(request, checks: Sequence[str] | None = None) -> Gathered  # the checks (``checks``: these instead of
        # the request's, e.g. a change's ``verify`` ids) and the fix state probe, run as ``run`` runs them
        Gathered(report: RedactedReport, findings: tuple[Finding, ...], ctx: EvalContext, complete: bool)
    plan_cluster(request) -> Planned                        # gather, then policy.plan
        Planned(plan: Plan, gathered: Gathered)
    refresh(request, saved: Plan) -> tuple[Plan, dict[str, str], Gathered]
        # ``--apply FILE``: gather the saved plan's hosts again; the plan less the hosts whose state changed,
        # host -> why for those (policy.stale), and what was gathered

``fix_apply.py`` (apply engineer)::

    apply_plan(request: FixRequest, plan: Plan, echo: Callable[[str], None]) -> Outcome
    undo_run(request: FixRequest, run_id: str | None, echo: Callable[[str], None]) -> Outcome  # None: the last run
        Outcome(exit_code: int, ...)            # the exit codes of docs/exit-codes.md ("preflight fix")

``preflight/commands/fix.py`` (plan) parses the options, asks for confirmation on a terminal (unless ``--yes``),
prints ``render_plan`` and calls the above. Exit codes (preflight.exit_codes, docs/exit-codes.md), the worst
that holds, in this order: 4 could not apply or undo on some host (unreachable, failed, rolled back); 5 refused on
purpose (a host changed since the plan, a value changed since the apply, another fix holds the host's lock, the
confirmation declined); 1 something to change or still failing (a plan with changes or printed remedies; after
``--apply``: a fixed finding still not passing); 0 nothing to do, or everything applied (undone) and verified;
2 usage.
"""
