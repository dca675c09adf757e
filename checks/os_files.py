"""os.files: the open-files limit (``ulimit -n``, soft and hard) of the job's shell against what the job needs.

Every socket is a file descriptor. A rank holds sockets to its peers (NCCL/HCCL bootstrap, the socket
transport, proxy connections), CUDA/driver device files and shared-memory segments; rank 0's process also
holds one store connection per rank (torch's TCPStore). With the stock soft limit of 1024 a 4-node x 8-GPU job
dies in NCCL's bootstrap (``Accept failed: Too many open files``, goodfire-ai/spd PR #957); NCCL raises the
soft limit to the hard one only in its bootstrap root's process, so the soft limit of the job's shell is what
every other rank gets. The limit is read under the job's ``setup:`` (preflight.job_env), where a
``ulimit -n "$(ulimit -Hn)"`` line takes effect. The need (docs/thresholds.md, ``os.files``):

    need = max(FLOOR, BASE + PER_PEER x (ranks - 1)), plus one per rank on the master (the store)

>>> parse_nofile("Limit  Soft Limit  Hard Limit  Units\\nMax open files  1024  1048576  files\\n")
{'soft': 1024, 'hard': 1048576}
>>> need_files(32, master=False).minimum  # spd's 4 nodes x 8 GPUs: the stock 1024 is not enough
1248
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from preflight.checks.base import *
from preflight.job_env import job_command, parse_setup
from preflight.ranks import Ranks, world

# Descriptors a rank holds whatever the job's size: the interpreter and its libraries, CUDA/driver device files
# (/dev/nvidia*, /dev/davinci*), logs, DataLoader pipes, shared-memory segments.
BASE = 256
# Descriptors per peer rank: NCCL connects to every peer for all-to-all/p2p (2 channels per net peer, a send
# and a receive connection each, a control socket plus data sockets on the socket transport, proxy
# connections). Calibrated on the public cases (docs/thresholds.md): 1024 breaks at 32 ranks, not at 16.
PER_PEER = 32
# The stock soft limit: lower was set on purpose; also the whole rule when the rank count is unknown.
FLOOR = 1024
REMEDY_RAISE = 'ulimit -n "$(ulimit -Hn)"  # add to the job\'s setup: (hosts.yaml) or its launch script'
REMEDY_HARD = ("echo '* - nofile 1048576' > /etc/security/limits.d/90-nofile.conf  # log in again; systemd "
               "services: LimitNOFILE=1048576; containers: docker run --ulimit nofile=1048576:1048576")


@dataclass(frozen=True)
class Need:
    """The least soft limit a rank needs, and the reasoning for the message."""

    minimum: int
    why: str


def need_files(ranks: int | None, master: bool, why: str = "", override: int = 0) -> Need:
    """What a rank's open-files limit must be for a job of ``ranks`` (None: unknown).

    >>> need_files(16, master=False)  # 2 nodes x 8 GPUs: the stock 1024 is enough
    Need(minimum=1024, why='the floor 1024 (256 + 32 x 15 peers = 736 is less)')
    >>> need_files(32, master=True, why="4 hosts x 8 devices").why
    '256 + 32 x 31 peers + 32 store connections (4 hosts x 8 devices, this host runs the master)'
    >>> need_files(None, master=False).minimum, need_files(8, master=False, override=4096).minimum
    (1024, 4096)
    """
    if override > 0:
        return Need(override, "the configured minimum (checks: os: min_open_files)")
    if ranks is None:
        return Need(FLOOR, f"the floor {FLOOR} (the rank count is unknown: give `--ranks N`)")
    peers = max(0, ranks - 1)
    store = ranks if master else 0
    total = BASE + PER_PEER * peers + store
    formula = f"{BASE} + {PER_PEER} x {peers} peers" + (f" + {store} store connections" if store else "")
    if total <= FLOOR:
        return Need(FLOOR, f"the floor {FLOOR} ({formula} = {total} is less)")
    detail = f" ({why}{', this host runs the master' if master else ''})" if why else ""
    return Need(total, formula + detail)


def parse_nofile(text: str) -> dict[str, int | str | None]:
    """Soft and hard "Max open files" of /proc/self/limits (an int or "unlimited"); None when not read.

    >>> parse_nofile("...\\nMax open files            unlimited            unlimited            files\\n")
    {'soft': 'unlimited', 'hard': 'unlimited'}
    >>> parse_nofile("cat: /proc/self/limits: No such file or directory\\n")
    {'soft': None, 'hard': None}
    """
    for line in text.splitlines():
        if line.startswith("Max open files"):
            words = line[len("Max open files"):].split()[:2]
            values = [w if w == "unlimited" else int(w) if w.isdigit() else None for w in words]
            if len(values) == 2:
                return {"soft": values[0], "hard": values[1]}
    return {"soft": None, "hard": None}


class OsFilesCheck(Check):
    ids = ("os.files",)
    order = 6
    summary = "open-files limit (ulimit -n) of the job's shell against what its ranks need"
    # 0: the job's need (need_files); N: a fixed minimum instead
    params: ClassVar[Mapping[str, Any]] = {"min_open_files": 0}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        # cat inherits the limits of the shell that ran the job's setup: what a rank started there gets.
        return [Probe("nofile", job_command(host, cluster, ["cat", "/proc/self/limits"]), timeout=15)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        out = outputs.get("nofile", ProbeOutput("", "not run", None))
        facts: Facts = dict(parse_nofile(out.stdout))
        setup = parse_setup(out.stderr)
        if "failed" in setup:
            facts["setup_failed"] = setup["failed"]
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        ranks: Ranks | None = world(ctx.cluster, ctx.hosts)
        override = int(ctx.params.get("min_open_files", 0))
        findings = []
        for host, host_facts in facts.items():
            need = need_files(ranks.count if ranks else None, host == ctx.cluster.master,
                              ranks.why if ranks else "", override)
            findings.append(_judge(host, host_facts, need))
        return findings


def _text(value: int | str | None) -> str:
    return "?" if value is None else str(value)


def _judge(host: str, facts: Facts, need: Need) -> Finding:
    check = "os.files"
    soft, hard = facts.get("soft"), facts.get("hard")
    if soft is None:
        return finding(check, host, Status.ERROR, f"could not read the open-files limit on {host}")
    observed = f"soft {_text(soft)}, hard {_text(hard)}"
    expected = f"soft >= {need.minimum}"
    if soft == "unlimited" or int(soft) >= need.minimum:
        return finding(check, host, Status.PASS, f"{observed}", observed=observed, expected=expected)
    raisable = hard == "unlimited" or (isinstance(hard, int) and hard >= need.minimum)
    note = f" (the job's setup failed: {facts['setup_failed']})" if facts.get("setup_failed") else ""
    return finding(
        check, host, Status.FAIL,
        f"the job's open-files limit on {host} is {soft}, below {need.minimum} = {need.why}: NCCL's "
        "bootstrap and the rendezvous store fail with \"Too many open files\" and init_process_group fails or "
        f"hangs{note}" + ("" if raisable else f"; the hard limit {_text(hard)} does not allow raising it"),
        observed=observed, expected=expected, remedy=REMEDY_RAISE if raisable else REMEDY_HARD)
