"""allreduce on gpu clusters (nccl), offline: the rank commands' environment and the worker's device mapping.

No GPU machine is lent to this session, so the nccl run on real GPUs is not exercised (the simulated mesh is:
tests/test_allreduce_gpu_cluster.py); these tests check
what the controller ships (``NCCL_ALGO=Ring`` for link tests, device k <-> ``LOCAL_RANK`` k <-> cuda:k, the
job's own environment with only the test's variables overridden) and that the worker, run for real where
CUDA is missing, reports one JSON error line.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

from preflight.allreduce.worker import WORKER
from preflight.checks.allreduce import AllreduceCheck
from preflight.checks.base import EvalContext, Facts
from preflight.inventory import ClusterSpec, Host

CHECK = AllreduceCheck()
USER_ENV = {"NCCL_ALGO": "Tree", "NCCL_P2P_DISABLE": "1", "NCCL_SOCKET_IFNAME": "=eth0"}


def gpu_context(n: int = 2, devices: int = 4) -> EvalContext:
    hosts = [Host(name=f"n{i}", address=f"10.0.0.{i}", env=USER_ENV, python=sys.executable) for i in range(1, n + 1)]
    return EvalContext(ClusterSpec(accelerator="gpu", devices_per_host=devices, master="n1"), hosts,
                       {**CHECK.params, "init_timeout_s": 2.0})


def facts(ctx: EvalContext) -> dict[str, Facts]:
    return {h.name: {"torch": True, "torch_npu": False} for h in ctx.hosts}


def rank_env(command: str) -> tuple[dict[str, str], dict[str, object]]:
    """The variables ``env`` sets for one rank (the job's, then the test's), and the worker's JSON spec."""
    words = shlex.split(command)
    assert words[0] == "env" and "-i" not in words[:2], "the job's environment is kept, not cleared"
    python = next(i for i, w in enumerate(words) if w == sys.executable)
    variables = dict(w.split("=", 1) for w in words[1:python])
    assert words[python + 1] == "-c" and words[python + 2] == WORKER
    return variables, json.loads(words[python + 3])


def test_nccl_ranks_use_ring_and_map_device_k_to_local_rank_k() -> None:
    ctx = gpu_context()
    seen = set()
    for step in CHECK.steps(facts(ctx), ctx):
        for host, probes in step.foreground.items():
            (probe,) = probes
            for command in probe.command.removesuffix(" & wait").split(" & "):
                variables, spec = rank_env(command)
                assert spec["backend"] == "nccl"
                assert variables["NCCL_ALGO"] == "Ring", "the link test pins the ring algorithm"
                assert variables["NCCL_SOCKET_IFNAME"] == "=eth0", "the job's interface choice is kept"
                assert variables["NCCL_P2P_DISABLE"] == "1", "the job's own settings are what the test measures"
                assert variables["LOCAL_RANK"] == variables["PF_DEVICE"]
                assert variables["WORLD_SIZE"] == "2" and variables["RANK"] in ("0", "1")
                seen.add((host, int(variables["PF_DEVICE"]), variables["PF_PAIR"]))
    assert {(h, d) for h, d, _ in seen} == {(h, d) for h in ("n1", "n2") for d in range(4)}, "every device tested"


def test_inter_host_pairs_join_the_same_device_index() -> None:
    ctx = gpu_context(devices=2)
    pairs = [p for r in CHECK.rounds(facts(ctx), ctx) for p in r if p.kind == "inter"]
    assert sorted((p.device, p.peer_device) for p in pairs) == [(0, 0), (1, 1)]
    hosts = {h.name: h for h in ctx.hosts}
    for pair in pairs:
        for rank in (0, 1):
            variables, _ = rank_env(CHECK.rank_command(pair, rank, hosts, ctx))
            assert variables["PF_DEVICE"] == str(pair.device)
            assert variables["MASTER_ADDR"] == hosts[pair.host].address


def test_worker_puts_each_rank_on_its_cuda_device_and_synchronises() -> None:
    assert 'device = int(env.get("PF_DEVICE", "0"))' in WORKER
    assert "torch.cuda.set_device(device)" in WORKER and 'torch.device("cuda", device)' in WORKER
    assert "sync = torch.cuda.synchronize" in WORKER
    assert WORKER.index("sync()\n            t1 = time.perf_counter()") < WORKER.index("elapsed ="), \
        "the timed loop starts and ends on a synchronised device"


def test_worker_without_cuda_prints_one_error_line() -> None:
    """Run one real nccl rank here (no CUDA): it must end quickly with a JSON line naming its device."""
    ctx = gpu_context(n=2, devices=2)
    pair = next(p for r in CHECK.rounds(facts(ctx), ctx) for p in r if p.device == 1)
    hosts = {h.name: Host(name=h.name, address="127.0.0.1", env=h.env, python=sys.executable) for h in ctx.hosts}
    command = CHECK.rank_command(pair, 1, hosts, ctx)
    proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120, check=False)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, proc.stdout + proc.stderr
    out = lines[0]
    assert out["backend"] == "nccl" and out["rank"] == 1 and out["host_device"] == 1 and out["pair"] == pair.index
    assert out["error"] and out["sizes"] == []
    assert out["env"]["NCCL_ALGO"] == "Ring" and out["env"]["LOCAL_RANK"] == "1"
