"""``preflight fix``'s executor, journal and undo (preflight/fix/apply.py, journal.py, state.py, scripts.py).

The pure parts (the journal's format, the decisions before applying and undoing, the undo's refusals) are tested
directly. The scripts themselves run for real, as root, in a private mount and network namespace that a
``sleep`` process holds (no cluster: /var/lib, /run/lock and /etc/sysctl.d are per-test directories bound over
the real ones there, and the sysctls are the namespace's own), through a transport that enters it with nsenter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight.fix import apply, journal, scripts, state
from preflight.fix.journal import Entry, Journal, UndoRecord, new_journal, read_journal
from preflight.fix.model import Change, FileEdit, HostPlan, Plan, Undo
from preflight.fix.sysctl import setting_change
from preflight.transport.base import Execution, TransportError

CONF = "/etc/sysctl.d/90-preflight.conf"
FIXED = {"net.core.somaxconn": ("4096", True), "net.ipv4.tcp_max_syn_backlog": ("8192", True)}


def somaxconn(before: str | None = None, current: str = "128", value: str = "4096") -> Change:
    return setting_change("n1", ("sysctl.somaxconn",), "net.core.somaxconn", current, value, before, {})


def backlog(before: str | None, current: str = "128", value: str = "8192") -> Change:
    return setting_change("n1", ("sysctl.tcp_max_syn_backlog",), "net.ipv4.tcp_max_syn_backlog", current, value,
                          before, {})


# --- the journal ---------------------------------------------------------------------------------------------------

def test_journal_format_holds_what_changed_and_what_was_before() -> None:
    first = somaxconn()
    j = new_journal("20250101T000000Z-ab12", "n1", [first], controller="ctl", user="root", policy="1",
                    created="2025-01-01T00:00:00+00:00")
    j = j.with_entry(0, state="done", intent_at="T1", done_at="T2", exit_status=0)
    data = json.loads(j.dumps())
    assert data["format"] == "preflight.fix-journal/1"
    assert (data["run"], data["host"], data["controller"], data["user"]) == ("20250101T000000Z-ab12", "n1", "ctl",
                                                                             "root")
    entry = data["entries"][0]
    assert (entry["state"], entry["intent_at"], entry["done_at"], entry["exit_status"]) == ("done", "T1", "T2", 0)
    assert entry["previous"] == {"files": {CONF: None}, "values": {"net.core.somaxconn": "128"}}
    assert entry["change"]["files"][0]["after"].endswith("net.core.somaxconn = 4096\n")
    assert entry["change"]["undo"] == {"files": {CONF: None}, "values": {"net.core.somaxconn": "128"},
                                       "commands": []}
    assert read_journal(j.dumps()) == j


@pytest.mark.parametrize("text", ["", "[]", '{"format": "preflight.fix-journal/1"}',
                                  '{"format": "preflight.fix-journal/1", "run": "r", "host": "h", '
                                  '"entries": [{"state": "exploded", "change": {}}]}'])
def test_an_unreadable_journal_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="journal"):
        read_journal(text)


def test_the_host_fills_in_only_its_slots(tmp_path: Path) -> None:
    """The shell writes the controller's document with the host's states, times and exit statuses: any text in a
    summary (quotes, %, backslashes, $, newlines) comes back as it was."""
    odd = Change("n1", ("x",), "sysctl", "it's 50% \\n \"quoted\" $HOME `id`\nsecond line")
    j = Journal("r1", "n1", (Entry(odd), Entry(somaxconn())))
    path = tmp_path / "j.json"
    script = (journal.shell_writer(j, str(path)) + "\n"
              "pf_state_0='\"done\"'; pf_exit_status_0=3; pf_done_at_0='\"T9\"'; pf_outcome='\"applied\"'\n"
              "pf_journal\n")
    subprocess.run(["sh", "-c", script], check=True)
    back = read_journal(path.read_text())
    assert back.entries[0].change == odd
    assert (back.entries[0].state, back.entries[0].exit_status, back.entries[0].done_at) == ("done", 3, "T9")
    assert back.entries[1].state == "planned" and back.outcome == "applied"


def test_the_controller_copy_of_a_lost_host_says_what_it_saw() -> None:
    j = Journal("r", "h", (Entry(somaxconn()), Entry(backlog(None))))
    stdout = "junk\npf-step N 0 intent T1\npf-step OTHER 1 done T0 0\npf-step N 0 done T2 0\npf-step N 1 intent T3\n"
    lost = journal.seen(j, stdout, "N")
    assert [(e.state, e.intent_at, e.done_at, e.exit_status) for e in lost.entries] == [
        ("done", "T1", "T2", 0), ("intent", "T3", None, None)]
    assert lost.complete is False


def test_syslog_line_is_one_line() -> None:
    j = Journal("r", "h", (Entry(Change("h", ("a",), "sysctl", "multi\nline  summary")),))
    argv = journal.syslog_argv(j, 0, "done")
    assert argv[:4] == ("logger", "-t", "preflight-fix", "--") and "\n" not in argv[4]


# --- before applying -----------------------------------------------------------------------------------------------

def test_two_changes_to_one_file_apply_in_turn_and_twice_is_nothing() -> None:
    one = somaxconn()
    two = backlog(one.files[0].after)
    fresh = state.Inspection(files={CONF: None}, values={"net.core.somaxconn": ("128", True),
                                                         "net.ipv4.tcp_max_syn_backlog": ("128", True)})
    assert [(d.action, d.write) for d in state.apply_decisions([one, two], fresh)] == [("apply", (0,)),
                                                                                       ("apply", (0,))]
    done = state.Inspection(files={CONF: state.sha(two.files[0].after)},
                            values=FIXED)
    assert [d.action for d in state.apply_decisions([one, two], done)] == ["already", "already"]
    # the file as planned, the value not in force (someone ran sysctl -w since): only the command again
    half = state.Inspection(files=done.files, values={**done.values, "net.core.somaxconn": ("128", True)})
    assert [(d.action, d.write) for d in state.apply_decisions([one, two], half)] == [("apply", ()),
                                                                                      ("already", ())]


def test_a_file_not_as_planned_is_refused() -> None:
    now = state.Inspection(files={CONF: state.sha("someone else's\n")}, values={"net.core.somaxconn": ("128", True)})
    decision = state.apply_decisions([somaxconn()], now)[0]
    assert decision.action == "refused" and "changed since the plan" in decision.note


def test_a_read_only_proc_sys_prints_the_container_remedy() -> None:
    now = state.Inspection(files={CONF: None}, values={"net.core.somaxconn": ("128", False)},
                           container={"engine": "docker", "proc_sys_ro": True})
    decision = state.apply_decisions([somaxconn()], now)[0]
    assert decision.action == "container"
    assert "docker run --sysctl net.core.somaxconn=4096" in decision.note
    one = somaxconn()  # two changes to one file: the second builds on the first, which was not written
    both = state.Inspection(files={CONF: None}, values={"net.core.somaxconn": ("128", False),
                                                        "net.ipv4.tcp_max_syn_backlog": ("128", False)})
    assert [d.action for d in state.apply_decisions([one, backlog(one.files[0].after)], both)] == ["container",
                                                                                                   "container"]


def test_a_firewall_change_whose_rules_are_there_is_already_applied() -> None:
    rule = ("iptables", "-D", "INPUT", "-p", "tcp", "--dport", "29500", "-j", "ACCEPT")
    change = Change("n1", ("firewall.rules",), "firewall", "open 29500",
                    commands=(("iptables", "-I", "INPUT", "1", *rule[3:]),), undo=Undo(commands=(rule,)))
    check = state.check_argv(rule)
    assert check is not None
    assert state.apply_decisions([change], state.Inspection(present={check: True}))[0].action == "already"
    assert state.apply_decisions([change], state.Inspection(present={check: False}))[0].action == "apply"


# --- undo ------------------------------------------------------------------------------------------------------------

def applied(*changes: Change) -> Journal:
    return Journal("r", "n1", tuple(Entry(c, "done") for c in changes))


def test_undo_puts_back_files_and_values_last_change_first() -> None:
    one = somaxconn()
    two = backlog(one.files[0].after)
    now = state.Inspection(files={CONF: state.sha(two.files[0].after)},
                           values=FIXED)
    steps = state.undo_steps(applied(one, two), now)
    assert [s.index for s in steps] == [1, 0]
    assert steps[0].files == ((CONF, one.files[0].after),) and steps[0].values == (("net.ipv4.tcp_max_syn_backlog",
                                                                                    "128"),)
    assert steps[1].files == ((CONF, None),) and steps[1].values == (("net.core.somaxconn", "128"),)
    assert not steps[0].refused and not steps[1].refused


def test_undo_refuses_a_value_changed_again_since_the_fix() -> None:
    one = somaxconn()
    now = state.Inspection(files={CONF: state.sha(one.files[0].after)}, values={"net.core.somaxconn": ("1024", True)})
    step = state.undo_steps(applied(one), now)[0]
    assert step.values == ()
    assert step.refused == ("net.core.somaxconn is 1024 now, not the fixed 4096: changed since the fix, left as it is",)
    assert step.files == ((CONF, None),)  # the file is still what fix wrote: put back


def test_undo_refuses_a_file_changed_again_since_the_fix() -> None:
    one = somaxconn()
    now = state.Inspection(files={CONF: state.sha("edited by hand\n")}, values={"net.core.somaxconn": ("4096", True)})
    step = state.undo_steps(applied(one), now)[0]
    assert step.files == () and step.values == (("net.core.somaxconn", "128"),)
    assert step.refused == (f"{CONF}: changed since the fix (not what it wrote): left as it is",)


def test_undo_skips_what_is_back_already_and_what_was_never_applied() -> None:
    one, two = somaxconn(), backlog(None)
    j = Journal("r", "n1", (Entry(one, "done", undo=UndoRecord("undo", "undone")), Entry(two, "refused")))
    assert state.undo_steps(j, state.Inspection()) == []
    gone = state.undo_steps(applied(one), state.Inspection(files={CONF: None},
                                                             values={"net.core.somaxconn": ("128", True)}))[0]
    assert not gone.acts and not gone.refused and len(gone.gone) == 2


def test_undo_of_an_nft_rule_finds_its_handle_by_the_run_comment() -> None:
    undo = ("nft", "delete", "rule", "inet", "filter", "input", "handle", "<handle>")
    change = Change("n1", ("firewall.rules",), "firewall", "open", undo=Undo(commands=(undo,)))
    lookup = ("nft", "-a", "list", "chain", "inet", "filter", "input")
    listing = 'table inet filter {\n chain input {\n  tcp dport 29500 accept comment "preflight-fix:r" # handle 12\n'
    step = state.undo_steps(applied(change), state.Inspection(listings={lookup: listing}))[0]
    assert step.commands == ((*undo[:7], "12"),)


# --- the scripts, for real in a private namespace -------------------------------------------------------------------

def namespace_problem() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("unshare", "nsenter", "flock", "base64", "sha256sum", "sysctl", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    return None


class Namespace:
    """A mount and network namespace held by a sleep: /var/lib, /run/lock and /etc/sysctl.d are directories of
    ``root`` there, and ``logger`` appends to root/syslog."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc = subprocess.Popen(["unshare", "--mount", "--net", "--propagation", "private", "sleep", "600"])
        for _ in range(100):
            if os.readlink(f"/proc/{self.proc.pid}/ns/net") != os.readlink("/proc/self/ns/net"):
                break
            time.sleep(0.02)
        bin_dir = root / "bin"
        bin_dir.mkdir()
        (bin_dir / "logger").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {root}/syslog\n')
        (bin_dir / "logger").chmod(0o755)
        for folder, where in (("var-lib", "/var/lib"), ("lock", "/run/lock"), ("sysctl.d", "/etc/sysctl.d")):
            (root / folder).mkdir()
            self.enter(["mount", "--bind", str(root / folder), where])
        self.enter(["sysctl", "-q", "-w", "net.core.somaxconn=128", "net.ipv4.tcp_max_syn_backlog=128"])
        self.broken = root / "lock" / "ssh-broken"  # a fresh "connection" fails while this exists

    def enter(self, argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PATH": f"{self.root / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        return subprocess.run(["nsenter", "-t", str(self.proc.pid), "-m", "-n", "--", *argv], input=stdin,
                              capture_output=True, text=True, env=env, check=False, timeout=60)

    def value(self, key: str) -> str:
        return self.enter(["cat", state.proc_path(key)]).stdout.strip()

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


class NsTransport:
    """Scripts run in the namespace (each run its own process: as a channel of one SSH connection)."""

    def __init__(self, ns: Namespace, fresh: bool = False) -> None:
        self.ns, self.fresh = ns, fresh
        self.running: list[subprocess.Popen[bytes]] = []

    def connect(self) -> None:
        if self.fresh and self.ns.broken.exists():
            raise TransportError("timeout", "no answer within 1 s (simulated)")

    def run_script(self, script: str, timeout: float, on_stdout: object = None) -> Execution:
        env = {**os.environ, "PATH": f"{self.ns.root / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        start = time.monotonic()
        proc = subprocess.Popen(["nsenter", "-t", str(self.ns.proc.pid), "-m", "-n", "--", "sh", "-s"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.running.append(proc)
        try:
            out, err = proc.communicate(script.encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            return Execution(out, err, None, True, time.monotonic() - start)
        return Execution(out, err, proc.returncode, False, time.monotonic() - start)

    def close(self) -> None:
        for proc in self.running:
            if proc.poll() is None:
                proc.kill()


@pytest.fixture
def ns(tmp_path: Path) -> Iterator[Namespace]:
    problem = namespace_problem()
    if problem:
        pytest.skip(problem)
    space = Namespace(tmp_path)
    try:
        yield space
    finally:
        space.close()


def runner(ns: Namespace, copies: list[Journal], lines: list[str]) -> apply.Runner:
    return apply.Runner(session=lambda host: NsTransport(ns), fresh=lambda host: NsTransport(ns, fresh=True),
                        keep=copies.append, echo=lines.append, timeout=20, connect_timeout=1, controller="ctl",
                        user="root")


def one_host(*changes: Change, run: str = "r1") -> tuple[Plan, HostPlan]:
    host = HostPlan("n1", changes)
    return Plan(run, "2025-01-01T00:00:00+00:00", "1", (host,)), host


def host_journal(ns: Namespace, run: str = "r1") -> Journal:
    return read_journal((ns.root / "var-lib" / "preflight" / "journal" / f"{run}.json").read_text())


def test_apply_writes_sets_journals_and_twice_changes_nothing(ns: Namespace) -> None:
    one = somaxconn()
    two = backlog(one.files[0].after)
    plan, host = one_host(one, two)
    copies: list[Journal] = []
    started = time.monotonic()
    result = apply.apply_host(plan, host, runner(ns, copies, []))
    seconds = time.monotonic() - started
    assert result.status == "applied", result.detail
    assert (ns.value("net.core.somaxconn"), ns.value("net.ipv4.tcp_max_syn_backlog")) == ("4096", "8192")
    assert (ns.root / "sysctl.d" / "90-preflight.conf").read_text() == two.files[0].after
    on_host = host_journal(ns)
    assert [e.state for e in on_host.entries] == ["done", "done"] and on_host.outcome == "applied"
    assert on_host.complete and on_host.started and on_host.finished
    assert copies[-1] == on_host  # the controller's copy is the host's text
    assert copies[0].outcome == "applying"  # written before the script went out
    log = (ns.root / "syslog").read_text().splitlines()
    assert [line.split(" state=")[1].split(":")[0] for line in log] == ["done", "done"]
    assert all(line.startswith("-t preflight-fix -- run=r1 change=") for line in log)
    assert (ns.root / "lock" / "preflight-fix.lock").read_text() == ""  # released
    print(f"one host, two changes, applied in {seconds:.2f} s")

    again = apply.apply_host(*one_host(one, two, run="r2"), runner(ns, copies, []))
    assert again.status == "nothing to do"
    assert [e.state for e in again.journal.entries] == ["already", "already"]  # type: ignore[union-attr]
    assert not (ns.root / "var-lib" / "preflight" / "journal" / "r2.json").exists()
    assert len((ns.root / "syslog").read_text().splitlines()) == 2


def test_undo_restores_and_refuses_what_changed_since(ns: Namespace) -> None:
    one = somaxconn()
    two = backlog(one.files[0].after)
    plan, host = one_host(one, two)
    copies: list[Journal] = []
    assert apply.apply_host(plan, host, runner(ns, copies, [])).status == "applied"
    ns.enter(["sysctl", "-q", "-w", "net.ipv4.tcp_max_syn_backlog=2048"])  # changed again by someone
    result = apply.undo_host("r1", "n1", runner(ns, copies, []))
    assert result.status == "partly undone", result.detail
    assert ns.value("net.core.somaxconn") == "128"
    assert ns.value("net.ipv4.tcp_max_syn_backlog") == "2048"  # left alone
    assert not (ns.root / "sysctl.d" / "90-preflight.conf").exists()  # the file was absent before
    on_host = host_journal(ns)
    assert [e.undo.state for e in on_host.entries if e.undo] == ["undone", "partly"]
    assert any("2048 now, not the fixed 8192" in line for line in result.detail)
    assert on_host.outcome == "partly undone"
    assert apply.undo_host("r1", "n1", runner(ns, copies, [])).status in ("nothing to undo", "partly undone")


def test_a_change_that_breaks_new_connections_is_rolled_back(ns: Namespace) -> None:
    one = somaxconn()
    cut = Change("n1", ("firewall.rules",), "firewall", "cuts ssh (simulated)",
                 commands=(("touch", str(ns.broken)),), undo=Undo(commands=(("rm", "-f", str(ns.broken)),)))
    copies: list[Journal] = []
    result = apply.apply_host(*one_host(one, cut), runner(ns, copies, []))
    assert result.status == "rolled back", result.detail
    assert "a new connection works again" in result.detail
    assert not ns.broken.exists() and ns.value("net.core.somaxconn") == "128"
    on_host = host_journal(ns)
    assert [(e.state, e.undo and e.undo.state, e.undo and e.undo.by) for e in on_host.entries] == [
        ("done", "undone", "rollback"), ("done", "undone", "rollback")]
    assert on_host.outcome == "rolled back"


def test_a_failed_change_is_put_back_and_stops_the_host(ns: Namespace) -> None:
    bad = Change("n1", ("x",), "sysctl", "fails", files=(FileEdit("/etc/sysctl.d/91-x.conf", None, "x\n"),),
                 commands=(("false",),), undo=Undo(files=(("/etc/sysctl.d/91-x.conf", None),)))
    result = apply.apply_host(*one_host(bad, somaxconn()), runner(ns, [], []))
    assert result.status == "failed"
    on_host = host_journal(ns)
    assert [e.state for e in on_host.entries] == ["failed", "planned"]
    assert on_host.entries[0].exit_status == 1 and on_host.entries[0].undo.state == "undone"  # type: ignore[union-attr]
    assert not (ns.root / "sysctl.d" / "91-x.conf").exists() and ns.value("net.core.somaxconn") == "128"


def test_a_second_fix_on_the_host_is_refused_naming_the_first(ns: Namespace) -> None:
    hold = NsTransport(ns)
    first = apply.Lock(hold, "other-run", apply.Runner(lambda h: hold, lambda h: hold, lambda j: None,
                                                      lambda s: None, controller="ctl2", user="bob"))
    try:
        lock = ns.root / "lock" / "preflight-fix.lock"
        for _ in range(50):
            if lock.exists() and "run=other-run" in lock.read_text(errors="replace"):
                break
            time.sleep(0.1)
        started = time.monotonic()
        result = apply.apply_host(*one_host(somaxconn()), runner(ns, [], []))
        assert result.status == "refused"
        assert "another fix holds the host's lock" in result.detail[0] and "run=other-run controller=ctl2 user=bob" \
            in result.detail[0]
        assert time.monotonic() - started < 10
        assert ns.value("net.core.somaxconn") == "128"
    finally:
        first.release()
        hold.close()


def test_rollout_canary_first_and_stops_after_max_failures() -> None:
    order: list[str] = []

    def job(host: str) -> apply.HostResult:
        order.append(host)
        return apply.HostResult(host, "failed" if host in ("b", "c") else "applied")

    quiet = apply.Runner(lambda h: None, lambda h: None, lambda j: None, lambda s: None)  # type: ignore[arg-type,return-value]
    results = apply.rollout(["a", "b", "c", "d", "e"], job, quiet, max_parallel=1, max_failures=2)
    assert [r.status for r in results] == ["applied", "failed", "failed", "not attempted", "not attempted"]
    assert order[0] == "a"
    canary = apply.rollout(["b", "a"], job, quiet, max_parallel=4, max_failures=5)
    assert [r.status for r in canary] == ["failed", "not attempted"]
    assert scripts.owner_line("r", "", "") == "run=r controller=? user=?"
