"""``preflight diagnose`` without a cluster: launch-line parsing, corrected lines, the parser and the judge.

The judge is fed facts in the net / ports checks' formats (as recorded on the namespace cluster) and
dry-run outputs in the worker's format; expected verdicts are written by hand.
"""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path
from typing import Any

import pytest

from preflight.app.diagnose import prepare, read_launch
from preflight.batch import ProbeOutput
from preflight.checks.base import EvalContext, StepOutcome
from preflight.diagnose.check import DiagnoseCheck, Plan, launch_findings, make_plan, parse_dryrun
from preflight.diagnose.launch import parse_hostfile, parse_launch
from preflight.inventory import ClusterSpec, Host, parse_inventory
from preflight.model import Status

GETENT_N1 = "10.0.0.1        STREAM n1\n10.0.0.1        DGRAM  \n10.0.0.1        RAW    \n"
HOSTS = [Host("n1", "10.0.0.1"), Host("n2", "10.0.0.2"), Host("n3", "10.0.0.3")]


# --- launch lines -------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "launcher", "addr", "port", "nnodes", "nproc", "node_rank"), [
    ("torchrun --nnodes=2 --nproc-per-node=8 --master-addr=n1 --master-port=29501 train.py",
     "torchrun", "n1", 29501, (2, 2), "8", None),
    ("torchrun --nnodes 2 --nproc_per_node 8 --master_addr n1 --master_port 29501 --node_rank 1 train.py --x 1",
     "torchrun", "n1", 29501, (2, 2), "8", 1),
    ("python -m torch.distributed.run --nnodes=1:4 --rdzv-backend=c10d --rdzv-endpoint=n2:29400 t.py",
     "torch.distributed.run", "n2", 29400, (1, 4), "1", None),
    ("python3 -u -m torch.distributed.launch --use_env --nproc_per_node=4 --nnodes=2 --node_rank=0 "
     "--master_addr=10.0.0.1 --master_port=1234 t.py", "torch.distributed.launch", "10.0.0.1", 1234, (2, 2), "4", 0),
    ("torchrun --rdzv_backend c10d --rdzv_endpoint [fd00::1]:29600 --nnodes 2 t.py",
     "torchrun", "fd00::1", 29600, (2, 2), "1", None),
    ("torchrun --rdzv-backend=c10d --rdzv-endpoint=n3 --nnodes=2 t.py", "torchrun", "n3", 29400, (2, 2), "1", None),
    ("torchrun --nnodes=2 t.py", "torchrun", "127.0.0.1", 29500, (2, 2), "1", None),  # torchrun's defaults
    ("torchrun --nproc gpu --nnodes=2 t.py", "torchrun", "127.0.0.1", 29500, (2, 2), "gpu", None),  # a prefix
    ("/opt/venv/bin/torchrun --standalone --nproc-per-node=auto t.py", "torchrun", "127.0.0.1", 29500, (1, 1),
     "auto", None),
    ("deepspeed --num_nodes 2 --num_gpus 8 --master_addr n1 --master_port 29700 train.py --deepspeed ds.json",
     "deepspeed", "n1", 29700, (2, 2), "8", None),
])
def test_parse_launch(argv: str, launcher: str, addr: str, port: int, nnodes: tuple[int, int], nproc: str,
                      node_rank: int | None) -> None:
    launch = parse_launch(shlex.split(argv))
    assert (launch.launcher, launch.master_addr, launch.master_port, launch.nnodes, launch.nproc_per_node,
            launch.node_rank) == (launcher, addr, port, nnodes, nproc, node_rank)
    assert launch.problems == []


def test_script_arguments_are_not_launcher_options() -> None:
    launch = parse_launch(["torchrun", "--nnodes=2", "train.py", "--master-addr=x", "--nnodes", "9"])
    assert launch.master_addr == "127.0.0.1" and launch.nnodes == (2, 2)
    assert launch.argv[launch.script_at:] == ["train.py", "--master-addr=x", "--nnodes", "9"]


def test_env_prefix_and_env_mode() -> None:
    launch = parse_launch(["env", "NCCL_SOCKET_IFNAME=eth0", "GLOO_SOCKET_IFNAME=eth0", "torchrun", "t.py"])
    assert launch.launcher == "torchrun" and launch.env == {"NCCL_SOCKET_IFNAME": "eth0", "GLOO_SOCKET_IFNAME": "eth0"}
    env = parse_launch([], {"MASTER_ADDR": "n1", "MASTER_PORT": "29500", "WORLD_SIZE": "16", "RANK": "0",
                            "PATH": "/bin"})
    assert (env.launcher, env.master_addr, env.master_port, env.world_size, env.rank) == ("env", "n1", 29500, 16, 0)
    assert "PATH" not in env.env
    plain = parse_launch(["MASTER_PORT=29600", "python", "train.py"], {"MASTER_ADDR": "n2", "MASTER_PORT": "1"})
    assert (plain.launcher, plain.master_addr, plain.master_port) == ("env", "n2", 29600)  # the line wins
    missing = parse_launch(["python", "train.py"], {})
    assert missing.problems == [
        "MASTER_ADDR is not set (no torchrun/deepspeed launch line, and not in the environment)",
        "MASTER_PORT is not set (no torchrun/deepspeed launch line, and not in the environment)"]


@pytest.mark.parametrize(("argv", "problem"), [
    ("torchrun --nnodes", "--nnodes has no value"),
    ("torchrun --bogus t.py", "unknown torchrun option --bogus"),
    ("torchrun --nnodes=2", "no training script after the launcher's options"),
])
def test_launch_problems(argv: str, problem: str) -> None:
    assert problem in parse_launch(shlex.split(argv)).problems


def test_corrected_lines_keep_every_other_token() -> None:
    launch = parse_launch(shlex.split("NCCL_SOCKET_IFNAME=ib torchrun --nnodes 2 --master_port=80 t.py --lr 1"))
    assert launch.corrected({"master_port": "29500", "master_addr": "10.0.0.1"}, {"NCCL_SOCKET_IFNAME": "=eth0"}) \
        == "NCCL_SOCKET_IFNAME==eth0 torchrun --nnodes 2 --master_port=29500 --master_addr=10.0.0.1 t.py --lr 1"
    c10d = parse_launch(shlex.split("torchrun --rdzv-backend=c10d --rdzv-endpoint=n1:29400 t.py"))
    assert c10d.corrected({"master_addr": "10.0.0.1"}) == \
        "torchrun --rdzv-backend=c10d --rdzv-endpoint=10.0.0.1:29400 t.py"
    ds = parse_launch(shlex.split("deepspeed --hostfile hf t.py"))
    assert ds.corrected({"master_addr": "n1"}) == "deepspeed --hostfile hf --master_addr=n1 t.py"
    env = parse_launch([], {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"})
    assert env.corrected({"master_addr": "10.0.0.1"}, {"GLOO_SOCKET_IFNAME": "eth0"}) == \
        "export GLOO_SOCKET_IFNAME=eth0 MASTER_ADDR=10.0.0.1"
    quoted = parse_launch(["torchrun", "t.py", "a b"])
    assert quoted.corrected({"nnodes": "2"}) == "torchrun --nnodes=2 t.py 'a b'"


def test_deepspeed_hostfile(tmp_path: Path) -> None:
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("# DeepSpeed\nworker-1 slots=8\nworker-2 slots=8\n")
    launch = read_launch(["deepspeed", "--hostfile", str(hostfile), "train.py"], {})
    assert (launch.master_addr, launch.nnodes, launch.nproc_per_node) == ("worker-1", (2, 2), "8")
    missing = read_launch(["deepspeed", "-H", str(tmp_path / "nope"), "train.py"], {})
    assert missing.nnodes == (1, 1) and missing.problems[0].startswith(f"hostfile {tmp_path / 'nope'} cannot be read")
    found, _ = launch_findings(missing, 2)
    assert found[0].status == Status.FAIL and "deepspeed falls back to this machine alone" in found[0].message
    assert parse_hostfile("garbage line\n\n#\n  \n") == [("garbage", None)]
    strangers, _ = launch_findings(launch, 2, ["worker-1", "10.0.0.1"])
    assert strangers[0].status == Status.WARN and "names worker-2, not in hosts.yaml" in strangers[0].message


def test_cuda_visible_devices_with_the_deepspeed_launcher(tmp_path: Path) -> None:
    # DeepSpeed's runner drops CUDA_VISIBLE_DEVICES when a hostfile or --include/--exclude/--num_gpus/--num_nodes
    # is given (it prints "Detected CUDA_VISIBLE_DEVICES=... but ignoring it"): the job would use other GPUs.
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("worker-1 slots=8\nworker-2 slots=8\n")
    multi = read_launch(["CUDA_VISIBLE_DEVICES=0,1", "deepspeed", "--hostfile", str(hostfile), "train.py"], {})
    (found,), _ = launch_findings(multi, 2)
    assert found.status == Status.WARN
    assert "CUDA_VISIBLE_DEVICES=0,1 is ignored by the deepspeed launcher" in found.message
    assert found.remedy == f"deepspeed --hostfile {hostfile} --include=worker-1:0,1@worker-2:0,1 train.py"
    local = read_launch(["CUDA_VISIBLE_DEVICES=2,3", "deepspeed", "--num_gpus=2", "train.py"], {})
    (found,), _ = launch_findings(local, 1)
    assert found.status == Status.WARN and found.remedy == "deepspeed --include=localhost:2,3 train.py"
    honoured = read_launch(["CUDA_VISIBLE_DEVICES=2,3", "deepspeed", "train.py"], {})  # one node, no filters
    assert [f.status for f in launch_findings(honoured, 1)[0]] == [Status.PASS]


@pytest.mark.parametrize(("argv", "environ", "hosts", "status", "fix"), [
    ("torchrun --nnodes=3 t.py", {}, 3, "pass", {}),
    ("torchrun --nnodes=1:4 t.py", {}, 3, "pass", {}),
    ("torchrun --nnodes=2 t.py", {}, 3, "fail", {"nnodes": "3"}),
    ("torchrun --nnodes=x t.py", {}, 3, "fail", {"nnodes": "3"}),
    ("torchrun --nnodes=2 --node-rank=2 t.py", {}, 2, "fail", {"node_rank": "0"}),
    ("torchrun --nnodes=2 --nproc-per-node=0 t.py", {}, 2, "fail", {"nproc_per_node": "1"}),
    ("torchrun --nnodes=2 --bogus t.py", {}, 2, "warn", {}),
    ("deepspeed --num_nodes 4 t.py", {}, 2, "fail", {"num_nodes": "2"}),
    ("python t.py", {"MASTER_ADDR": "a", "MASTER_PORT": "1", "WORLD_SIZE": "1"}, 2, "fail", {}),
    ("python t.py", {"MASTER_ADDR": "a", "MASTER_PORT": "1", "WORLD_SIZE": "x"}, 2, "fail", {}),
    ("python t.py", {"MASTER_ADDR": "a", "MASTER_PORT": "1", "WORLD_SIZE": "16", "RANK": "3"}, 2, "pass", {}),
])
def test_launch_findings(argv: str, environ: dict[str, str], hosts: int, status: str, fix: dict[str, str]) -> None:
    found, options = launch_findings(parse_launch(shlex.split(argv), environ), hosts)
    assert [f.status.value for f in found] == [status] and options == fix
    assert found[0].check == "diagnose.launch" and found[0].host is None
    assert found[0].message.startswith("diagnose.launch: ")
    if status == "fail":
        assert found[0].remedy and found[0].message.endswith(found[0].remedy)


def test_make_plan_picks_the_master() -> None:
    cluster = ClusterSpec(master="n3")
    assert make_plan(parse_launch(["torchrun", "--master-addr=n2", "t.py"]), HOSTS, cluster).master == "n2"
    assert make_plan(parse_launch(["torchrun", "--master-addr=10.0.0.1", "t.py"]), HOSTS, cluster).master == "n1"
    plan = make_plan(parse_launch(["torchrun", "--master-addr=elsewhere", "t.py"]), HOSTS, cluster)
    assert plan.master == "n3" and dict(plan.ranks) == {"n3": 0, "n1": 1, "n2": 2}


def test_prepare_passes_the_launch_to_the_checks() -> None:
    inventory = parse_inventory("hosts:\n  - name: n1\n    address: 10.0.0.1\n    env: {NCCL_SOCKET_IFNAME: ib0}\n"
                                "  - name: n2\n    address: 10.0.0.2\n")
    prepared, plan = prepare(inventory, ["GLOO_SOCKET_IFNAME=eth1", "MASTER_ADDR=x", "torchrun",
                                         "--master-addr=n2", "--master-port=80", "t.py"], {}, timeout=3)
    assert prepared.cluster.master == "n2" and prepared.cluster.master_port == 80 and plan.timeout == 3
    assert prepared.hosts[0].env == {"NCCL_SOCKET_IFNAME": "ib0", "GLOO_SOCKET_IFNAME": "eth1"}
    bad_port, _ = prepare(inventory, ["torchrun", "--master-port=99999", "t.py"], {})
    assert bad_port.cluster.master_port == 29500  # an invalid port is judged, not passed on


# --- parse ----------------------------------------------------------------------------------------

def test_parse_real_outputs() -> None:
    check = DiagnoseCheck(Plan("n1", "n1", "29500", {"n1": 0}))
    facts = check.parse({
        "master_addr": ProbeOutput(GETENT_N1),
        "devices": ProbeOutput("/dev/nvidia0\n/dev/nvidia1\n"),
        "torch": ProbeOutput('{"torch": true, "torch_npu": false}\n'),
    })
    assert facts == {"master_addr": {"addrs": ["10.0.0.1"], "error": None}, "torch": True, "torch_error": None,
                     "devices": {"gpu": 2, "npu": 0}}
    unresolved = check.parse({"master_addr": ProbeOutput("", "", 2), "devices": ProbeOutput(""),
                              "torch": ProbeOutput("", "/usr/bin/python3: No module named x\n", 1)})
    assert unresolved == {"master_addr": {"addrs": [], "error": "not found"}, "torch": None,
                          "torch_error": "/usr/bin/python3: No module named x", "devices": {"gpu": 0, "npu": 0}}


def test_parse_never_raises_on_junk() -> None:
    check = DiagnoseCheck(Plan("n1", "n1", "29500", {"n1": 0}))
    rng = random.Random(7)
    samples = ["", "\x00\xff", "{", "[]", '{"torch": "yes"}', "null", "a b c\n" * 3, "::::", "1e999"]
    for _ in range(200):
        outputs = {key: ProbeOutput(rng.choice(samples), rng.choice(samples), rng.choice([0, 1, 2, 124, None]))
                   for key in rng.sample(["master_addr", "devices", "torch"], rng.randint(0, 3))}
        facts = check.parse(outputs)
        json.dumps(facts)
    assert check.parse({})["master_addr"]["error"] == "not run"


def test_parse_dryrun_killed_and_garbage() -> None:
    lines = '{"event": "stage", "stage": "import", "t": 0}\n{"event": "stage", "stage": "init", "t": 3}\n[1]\n'
    assert parse_dryrun(lines) == {"stage": "init", "error": None, "finished": False,
                                   "times": {"import": 0.0, "init": 3.0}}
    assert parse_dryrun("")["stage"] is None
    done = parse_dryrun('{"event": "result", "rank": 0, "stage": "done", "value": 3.0, "expected": 3.0}')
    assert done["finished"] and done["stage"] == "done"


def test_rank_command_quotes_hostile_values() -> None:
    host = Host("n1", "n1", python="python3; touch /tmp/pwned", env={"NCCL_SOCKET_IFNAME": "eth0; reboot"})
    check = DiagnoseCheck(Plan("n1", "n1$(reboot)", "29500", {"n1": 0}))
    command = check.rank_command(host, 0, 1)
    assert "'python3; touch /tmp/pwned'" in command and "'NCCL_SOCKET_IFNAME=eth0; reboot'" in command
    assert "'MASTER_ADDR=n1$(reboot)'" in command
    assert check.probes(host, ClusterSpec(master="n1"))[0].command == "getent ahosts 'n1$(reboot)'"


# --- judging ------------------------------------------------------------------------------------

def net_facts(name: str, address: str, master_addrs: list[str], env: dict[str, Any] | None = None,
              self_addrs: list[str] | None = None) -> dict[str, Any]:
    """The net check's facts of a host with lo and eth0 (the format recorded on the namespace cluster)."""
    return {"hostname": name, "self": {"addrs": self_addrs or [address], "error": None},
            "master": {"name": "n1", "addrs": master_addrs, "error": None},
            "route": {"dst": master_addrs[0] if master_addrs else None, "dev": "eth0", "src": address},
            "interfaces": {"eth0": {"ifindex": 2, "mtu": 1500, "operstate": "up", "flags": 4099, "carrier": 1,
                                    "addrs": [f"{address}/24"]},
                           "lo": {"ifindex": 1, "mtu": 65536, "operstate": "unknown", "flags": 9, "carrier": 1,
                                  "addrs": ["127.0.0.1/8", "::1/128"]}},
            "interfaces_error": None, "addrs_error": None, "env": env or {}}


def own(resolved: str, torch: bool | None = True, devices: dict[str, int] | None = None) -> dict[str, Any]:
    return {"master_addr": {"addrs": [resolved], "error": None}, "torch": torch, "torch_error": None,
            "devices": devices or {"gpu": 0, "npu": 0}}


def result(rank: int, stage: str = "done", value: float = 6.0, error: str | None = None,
           backend: dict[str, Any] | None = None) -> ProbeOutput:
    data = {"event": "result", "rank": rank, "world": 3, "stage": stage, "error": error, "value": value,
            "expected": 6.0, "backend": backend}
    return ProbeOutput('{"event": "stage", "stage": "import", "t": 0.0}\n' + json.dumps(data) + "\n")


def judge(argv: list[str], own_facts: dict[str, dict[str, Any]], outcomes: list[StepOutcome],
          accelerator: str = "cpu", listeners: dict[str, list[dict[str, Any]]] | None = None,
          net: dict[str, dict[str, Any]] | None = None,
          npu: dict[str, dict[str, Any]] | None = None) -> dict[tuple[str, str | None], str]:
    cluster = ClusterSpec(accelerator=accelerator, master="n1")
    plan = make_plan(parse_launch(argv), HOSTS, cluster)
    net = net or {h.name: net_facts(h.name, h.address, ["10.0.0.1"]) for h in HOSTS}
    ports = {h.name: {"listeners": (listeners or {}).get(h.name, [])} for h in HOSTS}
    ctx = EvalContext(cluster, HOSTS, {}, {"net": net, "ports": ports, "npu": npu or {}})
    findings = DiagnoseCheck(plan).judge(own_facts, outcomes, ctx)
    for f in findings:
        assert f.message.startswith(f.check)
        if f.status in (Status.FAIL, Status.WARN) and f.remedy and f.check != "diagnose.launch":
            assert f.message.endswith(f.remedy.split("; or ")[0]) or f.remedy in f.message, f
    return {(f.check, f.host): f.status.value for f in findings}


LAUNCH = ["torchrun", "--nnodes=3", "--master-addr=n1", "--master-port=29500", "t.py"]
ALL_JOINED = [StepOutcome({}, {"n1": {"dryrun": result(0)}, "n2": {"dryrun": result(1)},
                               "n3": {"dryrun": result(2)}})]


def test_healthy_cluster_passes_everything() -> None:
    facts = {h.name: own("10.0.0.1") for h in HOSTS}
    reach = StepOutcome({"n1": {"listen": ProbeOutput('{"listeners": [{"port": 29500, "bound": true}]}')}},
                        {"n2": {"connect": ProbeOutput('{"results": [{"target": "n1", "address": "10.0.0.1", '
                                                       '"port": 29500, "result": "ok"}]}')},
                         "n3": {"connect": ProbeOutput('{"results": [{"target": "n1", "address": "10.0.0.1", '
                                                       '"port": 29500, "result": "ok"}]}')}})
    got = judge(LAUNCH, facts, [reach, *ALL_JOINED])
    assert {k: v for k, v in got.items() if v != "pass"} == {("diagnose.master_port", "n2"): "skip",
                                                            ("diagnose.master_port", "n3"): "skip"}
    assert got[("diagnose.reachability", "n1")] == "pass" and got[("diagnose.rendezvous", "n3")] == "pass"
    plan = make_plan(parse_launch(LAUNCH), HOSTS, ClusterSpec(master="n1"))
    ctx = EvalContext(ClusterSpec(master="n1"), HOSTS, {},
                      {"net": {h.name: net_facts(h.name, h.address, ["10.0.0.1"]) for h in HOSTS}, "ports": {}})
    assert DiagnoseCheck(plan).corrected_launch(facts, [reach, *ALL_JOINED], ctx) is None


def test_wrong_and_loopback_master_addr() -> None:
    wrong = judge(LAUNCH, {"n1": own("10.0.0.9"), "n2": own("10.0.0.9"), "n3": own("10.0.0.1")}, ALL_JOINED)
    assert [wrong[("diagnose.master_addr", h)] for h in ("n1", "n2", "n3")] == ["fail", "fail", "fail"]
    loop = judge(LAUNCH, {"n1": own("127.0.1.1"), "n2": own("10.0.0.1"), "n3": own("10.0.0.1")}, ALL_JOINED)
    assert [loop[("diagnose.master_addr", h)] for h in ("n1", "n2", "n3")] == ["fail", "pass", "pass"]
    other = judge(LAUNCH, {"n1": own("10.0.0.2"), "n2": own("10.0.0.2"), "n3": own("10.0.0.2")}, ALL_JOINED)
    assert other[("diagnose.master_addr", "n3")] == "fail"  # n2's address, but the master is n1
    unresolved = {"master_addr": {"addrs": [], "error": "not found"}, "torch": True, "devices": {}}
    gone = judge(LAUNCH, {"n1": own("10.0.0.1"), "n2": unresolved, "n3": own("10.0.0.1")}, ALL_JOINED)
    assert gone[("diagnose.master_addr", "n2")] == "fail" and gone[("diagnose.master_addr", "n1")] == "pass"


def test_port_invalid_or_held() -> None:
    facts = {h.name: own("10.0.0.1") for h in HOSTS}
    low = judge(["torchrun", "--nnodes=3", "--master-addr=n1", "--master-port=80", "t.py"], facts, [])
    assert low[("diagnose.master_port", "n1")] == "fail"
    junk = judge(["torchrun", "--nnodes=3", "--master-addr=n1", "--master-port=http", "t.py"], facts, [])
    assert junk[("diagnose.master_port", "n1")] == "fail" and junk[("diagnose.rendezvous", "n1")] == "skip"
    held = judge(LAUNCH, facts, [], listeners={"n1": [{"port": 29500, "address": "0.0.0.0",
                                                       "processes": [{"name": "python3", "pid": 42}]}]})
    assert held[("diagnose.master_port", "n1")] == "fail"


def test_reachability_blames_the_master_when_nobody_connects() -> None:
    facts = {h.name: own("10.0.0.1") for h in HOSTS}
    listen = {"n1": {"listen": ProbeOutput('{"listeners": [{"port": 29500, "bound": true, "peers": []}]}')}}

    def connect(outcome: str) -> ProbeOutput:
        return ProbeOutput(json.dumps({"results": [{"target": "n1", "address": "10.0.0.1", "port": 29500,
                                                    "result": outcome}]}))

    everyone = judge(LAUNCH, facts, [StepOutcome(listen, {"n2": {"connect": connect("timeout")},
                                                          "n3": {"connect": connect("timeout")}})])
    assert [everyone.get(("diagnose.reachability", h)) for h in ("n1", "n2", "n3")] == ["fail", None, None]
    one = judge(LAUNCH, facts, [StepOutcome(listen, {"n2": {"connect": connect("ok")},
                                                     "n3": {"connect": connect("refused")}})])
    assert [one.get(("diagnose.reachability", h)) for h in ("n1", "n2", "n3")] == ["pass", "pass", "fail"]
    unbound = StepOutcome({"n1": {"listen": ProbeOutput('{"listeners": [{"port": 29500, "bound": false, '
                                                        '"error": "EADDRINUSE"}]}')}}, {})
    assert judge(LAUNCH, facts, [unbound])[("diagnose.reachability", "n1")] == "skip"


def test_interface_and_hostname_come_from_the_net_facts() -> None:
    env = {"NCCL_SOCKET_IFNAME": {"value": "nosuch0", "source": "hosts.yaml env"}}
    net = {h.name: net_facts(h.name, h.address, ["10.0.0.1"], env=env if h.name == "n2" else None) for h in HOSTS}
    net["n3"] = net_facts("n3", "10.0.0.3", ["10.0.0.1"], self_addrs=["127.0.1.1"])
    got = judge(LAUNCH, {h.name: own("10.0.0.1") for h in HOSTS}, ALL_JOINED, net=net)
    assert [got[("diagnose.interface", h)] for h in ("n1", "n2", "n3")] == ["pass", "fail", "pass"]
    assert [got[("diagnose.hostname", h)] for h in ("n1", "n2", "n3")] == ["pass", "pass", "fail"]


def test_devices_fit_nproc_per_node() -> None:
    facts = {"n1": own("10.0.0.1", devices={"gpu": 8, "npu": 0}), "n2": own("10.0.0.1", devices={"gpu": 4, "npu": 0}),
             "n3": own("10.0.0.1", devices={"gpu": 0, "npu": 0})}
    got = judge([*LAUNCH[:-1], "--nproc-per-node=8", "t.py"], facts, ALL_JOINED, accelerator="gpu")
    assert [got[("diagnose.devices", h)] for h in ("n1", "n2", "n3")] == ["pass", "fail", "fail"]
    assert judge(LAUNCH, facts, ALL_JOINED)[("diagnose.devices", "n3")] == "pass"  # cpu: gloo, any count


def test_rendezvous_verdicts() -> None:
    facts = {"n1": own("10.0.0.1"), "n2": own("10.0.0.1"), "n3": own("10.0.0.1", torch=False)}
    killed = ProbeOutput('{"event": "stage", "stage": "store", "t": 2}\n', "", 124)
    outcome = StepOutcome({}, {"n1": {"dryrun": result(0, "init", error="DistNetworkError: timed out")},
                               "n2": {"dryrun": killed}})
    got = judge(["torchrun", "--nnodes=3", "--master-addr=n1", "t.py"], facts, [outcome])
    assert [got[("diagnose.rendezvous", h)] for h in ("n1", "n2", "n3")] == ["fail", "fail", "error"]
    wrong_sum = judge(LAUNCH, {h.name: own("10.0.0.1") for h in HOSTS},
                      [StepOutcome({}, {"n1": {"dryrun": result(0, value=5.0)}, "n2": {"dryrun": result(1)},
                                        "n3": {"dryrun": result(2)}})])
    assert wrong_sum[("diagnose.rendezvous", "n1")] == "fail"
    nccl = {"name": "nccl", "available": False, "why": "no CUDA device", "ok": None, "error": None}
    no_gpu = judge(LAUNCH, {h.name: own("10.0.0.1", devices={"gpu": 1, "npu": 0}) for h in HOSTS},
                   [StepOutcome({}, {"n1": {"dryrun": result(0, backend=nccl)}, "n2": {"dryrun": result(1)},
                                     "n3": {"dryrun": result(2)}})], accelerator="gpu")
    assert no_gpu[("diagnose.rendezvous", "n1")] == "warn" and no_gpu[("diagnose.rendezvous", "n2")] == "pass"


def test_rank_zero_importing_late_is_inconclusive_not_a_failure() -> None:
    def run(rank: int, store_at: float, stage: str, error: str | None) -> ProbeOutput:
        data = {"event": "result", "rank": rank, "stage": stage, "error": error, "value": None, "expected": 6.0}
        return ProbeOutput(f'{{"event": "stage", "stage": "import", "t": 0}}\n'
                           f'{{"event": "stage", "stage": "store", "t": {store_at}}}\n' + json.dumps(data) + "\n")

    facts = {h.name: own("10.0.0.1") for h in HOSTS}
    slow_master = StepOutcome({}, {"n1": {"dryrun": run(0, 25.0, "init", "timed out")},
                                   "n2": {"dryrun": run(1, 3.0, "store", "DistNetworkError: timed out")},
                                   "n3": {"dryrun": run(2, 3.0, "store", "DistNetworkError: timed out")}})
    got = judge(LAUNCH, facts, [slow_master])
    assert [got[("diagnose.rendezvous", h)] for h in ("n1", "n2", "n3")] == ["warn", "warn", "warn"]
    on_time = StepOutcome({}, {"n1": {"dryrun": run(0, 3.2, "store", "DistNetworkError: timed out")},
                               "n2": {"dryrun": run(1, 3.0, "store", "DistNetworkError: timed out")},
                               "n3": {"dryrun": run(2, 3.1, "store", "DistNetworkError: timed out")}})
    got = judge(LAUNCH, facts, [on_time])
    assert [got[("diagnose.rendezvous", h)] for h in ("n1", "n2", "n3")] == ["fail", "fail", "fail"]


def test_summary_and_combined_fix() -> None:
    plan = make_plan(parse_launch(["torchrun", "--nnodes=2", "--master-addr=10.0.0.9", "t.py"]), HOSTS,
                     ClusterSpec(master="n1"))
    check = DiagnoseCheck(plan)
    facts = {h.name: own("10.0.0.9") for h in HOSTS}
    outcome = StepOutcome({}, {"n1": {"dryrun": result(0, "store", error="DistNetworkError: no route")},
                               "n2": {"dryrun": result(1)}, "n3": {"dryrun": result(2, "store")}})
    summary = check.summary_of(facts, [outcome])
    assert [j["host"] for j in summary["joined"]] == ["n2"]
    assert summary["missing"][0] == {"host": "n1", "rank": 0, "error": "DistNetworkError: no route",
                                     "stopped_at": "connecting to the rendezvous store at 10.0.0.9:29500"}
    ctx = EvalContext(ClusterSpec(master="n1"), HOSTS, {},
                      {"net": {h.name: net_facts(h.name, h.address, ["10.0.0.1"]) for h in HOSTS}, "ports": {}})
    assert check.corrected_launch(facts, [outcome], ctx) == "torchrun --nnodes=3 --master-addr=10.0.0.1 t.py"


def test_910a_takes_1_2_4_or_8_npus_and_2_or_4_inside_one_hccs_group() -> None:
    facts = {h.name: own("10.0.0.1", devices={"gpu": 0, "npu": 8}) for h in HOSTS}
    a910 = {h.name: {"generation": "910A"} for h in HOSTS}
    a2 = {h.name: {"generation": "A2"} for h in HOSTS}

    def devices(argv: list[str], npu: dict[str, dict[str, Any]]) -> list[str]:
        got = judge([*LAUNCH[:-1], *argv, "t.py"], facts, ALL_JOINED, accelerator="npu", npu=npu)
        return [got[("diagnose.devices", h)] for h in ("n1", "n2", "n3")]

    assert devices(["--nproc-per-node=8"], a910) == ["pass"] * 3
    assert devices(["--nproc-per-node=6"], a910) == ["fail"] * 3, "910A: 1, 2, 4 or 8 NPUs a node"
    assert devices(["--nproc-per-node=6"], a2) == ["pass"] * 3, "A2: one HCCS mesh, any count"
    assert devices(["--nproc-per-node=4"], a910) == ["pass"] * 3  # 0-3 by default
    crossing = judge(["ASCEND_RT_VISIBLE_DEVICES=2,3,4,5", *LAUNCH[:-1], "--nproc-per-node=4", "t.py"], facts,
                     ALL_JOINED, accelerator="npu", npu=a910)
    assert [crossing[("diagnose.devices", h)] for h in ("n1", "n2", "n3")] == ["fail"] * 3
    plan = make_plan(parse_launch(["ASCEND_RT_VISIBLE_DEVICES=2,3,4,5", *LAUNCH[:-1], "--nproc-per-node=4", "t.py"]),
                     HOSTS, ClusterSpec(accelerator="npu", master="n1"))
    ctx = EvalContext(ClusterSpec(accelerator="npu", master="n1"), HOSTS, {},
                      {"net": {h.name: net_facts(h.name, h.address, ["10.0.0.1"]) for h in HOSTS},
                       "ports": {h.name: {"listeners": []} for h in HOSTS}, "npu": a910})
    found = next(f for f in DiagnoseCheck(plan).judge(facts, ALL_JOINED, ctx) if f.check == "diagnose.devices")
    assert "span the HCCS groups 0-3 and 4-7" in found.message
    assert "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3" in (found.remedy or "")
