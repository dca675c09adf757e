"""The diagnose check's plan: what one launch line means for these hosts, and its numbers checked (pure).

``make_plan`` picks the master host and the node ranks; ``launch_findings`` is ``diagnose.launch`` (nodes,
node rank, world size against the hosts) with the options that correct the launch line.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from preflight.checks.base import finding
from preflight.diagnose.launch import Launch, parse_launch
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

BACKENDS = {"npu": "hccl", "gpu": "nccl", "cpu": "gloo"}


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
    found, fix = launch_findings(launch, len(hosts), [n for h in hosts for n in (h.name, h.address)],
                                 local=all(h.address == "localhost" for h in hosts))
    return Plan(master=master, master_addr=addr, port_text=launch.master_port_text,
                ranks={name: i for i, name in enumerate(order)}, launch=launch, backend=backend,
                timeout=timeout, launch_findings=tuple(found), launch_fix=fix)


def launch_findings(launch: Launch, count: int, known: Sequence[str] | None = None,
                    local: bool = False) -> tuple[list[Finding], dict[str, str]]:
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
            if local:  # no --hosts: only this machine is known, so the node count says nothing about the job
                problems.append((Status.WARN, f"{spelling}={shown}: without --hosts preflight checks this machine "
                                 "only, so the other nodes of this launch are not checked", f"{shown} nodes checked",
                                 "preflight diagnose --hosts hosts.yaml -- <the launch line>  # the job's nodes"))
            else:
                problems.append((Status.FAIL, f"{spelling}={shown} but hosts.yaml has {count} "
                                 f"host{'' if count == 1 else 's'}: the rendezvous waits for nodes that never come "
                                 "(or turns extra ones away)", f"{count} nodes", launch.corrected({name: str(count)})))
        rank = launch.node_rank
        if rank is not None and nnodes is not None and rank >= nnodes[1]:
            fix["node_rank"] = "0"
            problems.append((Status.FAIL, f"--node-rank={rank} is not below the number of nodes {nnodes[1]}",
                             f"0..{nnodes[1] - 1}", launch.corrected({"node_rank": "0"})))
        ignored = _deepspeed_ignores_visible_devices(launch)
        if ignored is not None:
            problems.append((Status.WARN, ignored[0], "GPUs chosen with --include", ignored[1]))
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
        return [finding(check, None, Status.PASS, observed, observed=observed)], fix
    status = Status.worst([p[0] for p in problems])
    worst = next(p for p in problems if p[0] == status)
    remedy = worst[3] or "fix the launch line"
    return [finding(check, None, status, "; ".join(p[1] for p in problems) + f"; fix: {remedy}",
                    observed=observed, expected=worst[2], remedy=remedy)], fix


def _deepspeed_ignores_visible_devices(launch: Launch) -> tuple[str, str] | None:
    """(why, fix) when a deepspeed launch sets CUDA_VISIBLE_DEVICES that deepspeed will drop.

    DeepSpeed's runner (deepspeed/launcher/runner.py, ``main``) honours CUDA_VISIBLE_DEVICES only on one node
    with no hostfile and none of --include/--exclude/--num_gpus/--num_nodes: it then turns it into
    ``--include localhost:<list>``. Otherwise it prints "Detected CUDA_VISIBLE_DEVICES=... but ignoring it"
    and deletes it, and every rank gets its GPU from the hostfile and the filters.

    >>> why, fix = _deepspeed_ignores_visible_devices(parse_launch(
    ...     ["CUDA_VISIBLE_DEVICES=0,1", "deepspeed", "--num_gpus", "2", "train.py"]))
    >>> fix
    'deepspeed --include=localhost:0,1 train.py'
    >>> _deepspeed_ignores_visible_devices(parse_launch(["CUDA_VISIBLE_DEVICES=0,1", "deepspeed", "train.py"]))
    """
    visible = launch.env.get("CUDA_VISIBLE_DEVICES")
    if launch.launcher != "deepspeed" or visible is None:
        return None
    nodes = _int_or_none(launch.options.get("num_nodes"))
    filters = [o for o in ("include", "exclude", "num_gpus") if launch.options.get(o, "-1") not in ("", "-1")]
    if not launch.hostfile_hosts and not filters and (nodes is None or nodes <= 1):
        return None  # deepspeed turns it into --include localhost:<list>
    why = ("a hostfile" if launch.hostfile_hosts else "") or ", ".join(f"--{o}" for o in filters) or "--num_nodes"
    text = (f"CUDA_VISIBLE_DEVICES={visible} is ignored by the deepspeed launcher here ({why} given: it deletes the "
            "variable and takes every GPU the hostfile and its filters name)")
    if launch.hostfile_hosts:
        hosts = "@".join(f"{host}:{visible}" for host, _ in launch.hostfile_hosts)
        fix = launch.corrected({"include": hosts})
    else:
        options = {"include": f"localhost:{visible}"}
        fix = launch.corrected(options)
    argv = shlex.split(fix)
    drop = {"--num_gpus", "--num_accelerators", "--num_nodes"}
    kept: list[str] = []
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token in drop:
            skip = True
            continue
        if token.split("=", 1)[0] in drop or token.startswith("CUDA_VISIBLE_DEVICES="):
            continue
        kept.append(token)
    return text, shlex.join(kept)


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().lstrip("-").isdigit() else None


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
