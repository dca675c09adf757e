"""``preflight fix --hosts FILE``: the checks, then a plan of changes per host; nothing changes without ``--apply``.

Examples::

    preflight fix --hosts hosts.yaml                          # print the plan
    preflight fix --hosts hosts.yaml --plan-out plan.json     # and save it
    preflight fix --hosts hosts.yaml --apply plan.json --sudo # apply exactly that plan (hosts changed since: refused)
    preflight fix --hosts hosts.yaml --apply --yes --sudo     # plan and apply at once, no question
    preflight fix --hosts hosts.yaml --undo [RUN]             # put back what a run (default: the last) changed

Exit codes (docs/exit-codes.md, "preflight fix"): 0 nothing to do, or everything applied and verified; 1 a plan
with something to change, or a fixed finding still failing; 4 could not apply on some host; 5 refused on purpose;
2 usage. Several at once: 4, then 5, then 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from preflight import exit_codes
from preflight.cli_options import split_items

if TYPE_CHECKING:
    from preflight.app.fix import FixRequest
    from preflight.fix.model import Plan

INCLUDABLE = ("hccn.ip",)  # what --include may name: fix only prints these otherwise


def register(app: typer.Typer) -> None:
    """Add ``fix`` to the CLI."""

    @app.command()
    def fix(
        target: Annotated[str | None, typer.Argument(
            metavar="[FILE|RUN]", help="with --apply: a plan saved by --plan-out; with --undo: a run id")] = None,
        hosts: Annotated[Path | None, typer.Option("--hosts", "-H", help="hosts.yaml; default: this machine")] = None,
        checks: Annotated[list[str] | None, typer.Option("--checks", "-c", help="only these check families or ids "
                                                         "(comma separated)")] = None,
        skip: Annotated[list[str] | None, typer.Option("--skip", help="skip these check families, checks or "
                                                       "finding ids")] = None,
        plan_out: Annotated[Path | None, typer.Option(help="save the plan here (JSON), for --apply FILE")] = None,
        apply: Annotated[bool, typer.Option("--apply", help="apply the plan (FILE: that saved plan, refusing "
                                            "the hosts whose state changed since)")] = False,
        undo: Annotated[bool, typer.Option("--undo", help="put back what run RUN (default: the last) "
                                           "changed, refusing values changed again since")] = False,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="apply without asking (needed off a terminal)")] = False,
        sudo: Annotated[bool, typer.Option("--sudo", help="read and change as root through `sudo -n` (never "
                                           "asks for a password)")] = False,
        max_parallel: Annotated[int, typer.Option(help="hosts changed at once after the canary", min=1)] = 8,
        max_failures: Annotated[int, typer.Option(help="stop after this many hosts failed", min=1)] = 1,
        include: Annotated[list[str] | None, typer.Option(
            "--include", help=f"also change what fix otherwise only prints: {', '.join(INCLUDABLE)}")] = None,
        parallel: Annotated[int, typer.Option(help="hosts gathered at once", min=1)] = 64,
        connect_timeout: Annotated[float, typer.Option(help="seconds to connect and authenticate", min=0.1)] = 10.0,
        host_timeout: Annotated[float, typer.Option(help="seconds for one host's whole gather", min=1)] = 60.0,
        accept_new_host_keys: Annotated[bool, typer.Option(help="trust and record unknown host keys")] = False,
        accelerator: Annotated[str, typer.Option(help="npu | gpu | cpu | auto")] = "auto",
        transport: Annotated[str, typer.Option(help="ssh | openssh | slurm | auto")] = "auto",
    ) -> None:
        """Plan the changes that fix what the checks found (sysctls, reserved ports, firewall openings); apply
        them with --apply, put them back with --undo.

        Example: preflight fix --hosts hosts.yaml --plan-out plan.json
        """
        from preflight.app import RunOptions, UsageError
        from preflight.app import fix as fix_app

        included = split_items(include)
        problem = usage_problem(target, apply, undo, plan_out, included)
        if problem:
            raise _usage(problem)
        options = RunOptions(parallel=parallel, connect_timeout=connect_timeout, host_timeout=host_timeout,
                             accept_new_host_keys=accept_new_host_keys, sudo=sudo, keep_outputs=False)
        request = fix_app.FixRequest(hosts=hosts, checks=split_items(checks), skip=split_items(skip),
                                     options=options, accelerator=accelerator, transport=transport,
                                     include=frozenset(included), max_parallel=max_parallel,
                                     max_failures=max_failures)
        try:
            if undo:
                raise typer.Exit(undo_run(request, target, yes))
            raise typer.Exit(plan_and_apply(request, target, apply, yes, plan_out))
        except UsageError as exc:
            raise _usage(str(exc)) from None


def usage_problem(target: str | None, apply: bool, undo: bool, plan_out: Path | None,
                  include: list[str]) -> str | None:
    """What is wrong with the options' combination; None when nothing.

    >>> usage_problem("plan.json", False, False, None, [])
    'FILE or RUN goes with --apply or --undo'
    >>> usage_problem(None, True, False, None, []) is None
    True
    """
    if apply and undo:
        return "--apply and --undo cannot go together"
    if target is not None and not (apply or undo):
        return "FILE or RUN goes with --apply or --undo"
    if plan_out is not None and (undo or (apply and target is not None)):
        return "--plan-out saves a new plan: not with --undo or --apply FILE"
    unknown = [item for item in include if item not in INCLUDABLE]
    if unknown:
        return f"--include {', '.join(unknown)}: fix can include only {', '.join(INCLUDABLE)}"
    if include and undo:
        return "--include goes with planning and --apply: undo puts back what the run's journal holds"
    return None


def plan_and_apply(request: FixRequest, target: str | None, apply: bool, yes: bool, plan_out: Path | None) -> int:
    """Plan (or read the saved plan and refuse the hosts changed since), print it, save it, apply it."""
    from preflight import delivery
    from preflight.app import fix as fix_app
    from preflight.fix.render import render_plan

    refused: dict[str, str] = {}
    if apply and target is not None:
        try:
            saved = fix_app.read_plan(Path(target))
        except ValueError as exc:
            raise _usage(str(exc)) from None
        request = fix_app.with_include(request, saved)
        plan, refused, gathered = fix_app.refresh(request, saved)
    else:
        planned = fix_app.plan_cluster(request)
        plan, gathered = planned.plan, planned.gathered
    if not gathered.complete:
        sys.stderr.write("preflight: interrupted while gathering: nothing was planned or changed\n")
        return exit_codes.INTERRUPTED
    _echo(render_plan(plan, applying=apply))
    for host, why in refused.items():
        _echo(f"refused {host}: {why} (plan again)")
    if plan_out is not None:
        written = delivery.write_file(f"the plan {plan_out}", lambda: delivery.write_atomic(plan_out, plan.dumps()))
        if written is None:
            return exit_codes.USAGE
        _echo(f"plan saved: {plan_out}")
    code = plan_code(plan)
    if not apply:
        return code
    if not plan.applicable:
        return exit_codes.for_fix(code, exit_codes.REFUSED if refused else exit_codes.OK)
    if not confirmed(plan, yes):
        _echo("nothing applied")
        return exit_codes.REFUSED
    from preflight.app import fix_apply

    outcome = fix_apply.apply_plan(request, plan, _echo, gathered.findings)
    return exit_codes.for_fix(outcome.exit_code, exit_codes.REFUSED if refused else exit_codes.OK)


def plan_code(plan: Plan) -> int:
    """A printed plan's exit code: 1 with something to change or to do by hand, else 4 when some host could not be
    told, else 0 (as ``run``: a known problem outranks a could-not-tell).

    >>> from preflight.fix.model import Change, HostPlan, Plan
    >>> plan_code(Plan("r", "t", "1", (HostPlan("n1", (), notes=("could not tell: x",)),)))
    4
    >>> plan_code(Plan("r", "t", "1", (HostPlan("n1", (Change("n1", ("os.files",), "print", "m"),)),)))
    1
    """
    if any(h.changes for h in plan.hosts):
        return exit_codes.PROBLEMS
    return exit_codes.COULD_NOT_TELL if any(h.notes for h in plan.hosts) else exit_codes.OK


def confirmed(plan: Plan, yes: bool) -> bool:
    """--yes, or the answer on a terminal; off a terminal without --yes: a usage error (a script must say so)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise _usage("--apply off a terminal needs --yes")
    changes = sum(len(h.applicable) for h in plan.applicable)
    answer = input(f"Apply {changes} change{'s' * (changes != 1)} on {len(plan.applicable)} "
                   f"host{'s' * (len(plan.applicable) != 1)}? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def undo_run(request: FixRequest, run: str | None, yes: bool) -> int:
    """``--undo [RUN]``: confirmation, then the apply part's undo."""
    from preflight.app import fix_apply

    if not yes:
        if not sys.stdin.isatty():
            raise _usage("--undo off a terminal needs --yes")
        if input(f"Undo run {run or '(the last)'}? [y/N] ").strip().lower() not in ("y", "yes"):
            _echo("nothing undone")
            return exit_codes.REFUSED
    return fix_apply.undo_run(request, run, _echo).exit_code


def _echo(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _usage(message: str) -> typer.Exit:
    sys.stderr.write(f"preflight: {message}\n")
    return typer.Exit(exit_codes.USAGE)
