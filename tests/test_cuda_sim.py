"""The CUDA/NCCL simulator (tests/sim/python_cuda) refuses what CUDA and NCCL refuse and runs each link at its
class's rate: two ranks on this machine, as the GPU all_reduce cluster test runs them on its nodes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gpu_sim

CUDA_SIM = gpu_sim.SIM_DIR / "python_cuda"
RANK = """
import json, os, time, torch, torch.distributed as dist
out = {}
try:
    d = int(os.environ["DEV"])
    torch.cuda.set_device(d)
    out["count"] = torch.cuda.device_count()
    dev = torch.device("cuda", d)
    dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=2, init_method="env://",
                            timeout=__import__("datetime").timedelta(seconds=10))
    t = torch.full((1 << 18,), float(os.environ["RANK"]) + 1, dtype=torch.float32, device=dev)
    dist.barrier()
    start = time.perf_counter()
    dist.all_reduce(t)
    torch.cuda.synchronize()
    out["gbps"] = (1 << 20) / (time.perf_counter() - start) / 1e9
    out["sum"], out["device"] = float(t.cpu()[0]), str(t.device)
    try:
        dist.all_reduce(torch.ones(2))
    except RuntimeError as exc:
        out["cpu_tensor"] = str(exc)
    for dtype in ("int16", "uint64"):
        try:
            dist.all_reduce(torch.full((2,), 1, dtype=getattr(torch, dtype), device=dev))
            out[dtype] = "reduced"
        except TypeError as exc:
            out[dtype] = str(exc)
    dist.destroy_process_group()
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""
LINKS = {"0-1": "NV2", "0-2": "PIX", "0-3": "SYS", "1-2": "SYS", "1-3": "PIX", "2-3": "NV2"}


def pair(tmp_path: Path, devices: tuple[int, int], port: int, visible: str | None = None,
         degraded: dict[str, float] | None = None) -> list[dict[str, object]]:
    state = gpu_sim.healthy_state(4, hcas=0)
    state.update(links=LINKS, sim_degraded=degraded or {})
    path = tmp_path / f"state{port}.json"
    path.write_text(json.dumps(state))
    procs = []
    for rank, device in enumerate(devices):
        env = {**os.environ, "PYTHONPATH": str(CUDA_SIM), "PF_SIM_GPU_STATE": str(path), "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port), "RANK": str(rank), "DEV": str(device)}
        env.pop("CUDA_VISIBLE_DEVICES", None)
        if visible is not None:
            env["CUDA_VISIBLE_DEVICES"] = visible
        procs.append(subprocess.Popen([sys.executable, "-c", RANK], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True))
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=60)[0])
        except subprocess.TimeoutExpired:
            p.kill()
            outs.append(p.communicate()[0])
    return [json.loads(o.strip().splitlines()[-1]) if o.strip() else {} for o in outs]


def test_cuda_tensors_and_nccl_sum_across_ranks_at_each_links_rate(tmp_path: Path) -> None:
    nvlink, pcie, sockets = (pair(tmp_path, d, p) for d, p in (((0, 1), 29881), ((0, 2), 29882), ((0, 3), 29883)))
    for out, device in ((nvlink[1], "cuda:1"), (pcie[1], "cuda:2"), (sockets[1], "cuda:3")):
        assert out["count"] == 4 and out["sum"] == 3.0 and out["device"] == device, out
        assert out["cpu_tensor"] == "No backend type associated with device type cpu"
        # the dtypes a real NCCL process group refuses (recorded_h200_3/nccl_allreduce_dtypes.txt), in its words
        assert out["int16"] == "Input tensor data type is not supported for NCCL process group: Short"
        assert out["uint64"] == "Input tensor data type is not supported for NCCL process group: UInt64"
    rates = [float(str(out[0]["gbps"])) for out in (nvlink, pcie, sockets)]
    assert rates[0] > rates[1] > rates[2], rates  # NV2 > PIX > SYS
    degraded = pair(tmp_path, (2, 3), 29884, degraded={"2-3": 0.25})
    assert float(str(degraded[0]["gbps"])) < 0.5 * rates[0], "a degraded NVLink runs below its class"


def test_the_simulator_refuses_what_cuda_and_nccl_refuse(tmp_path: Path) -> None:
    duplicate = pair(tmp_path, (1, 1), 29885)
    for rank, out in enumerate(duplicate):  # NCCL's init.cc text, device = the GPU's busId (00000000:28:00.0)
        assert str(out["error"]).startswith(  # as recorded on a real H200 (pf_cuda_sim's docstring)
            "DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, invalid usage "
            "(run with NCCL_DEBUG=WARN for details), NCCL version 2.28.9\nncclInvalidUsage: This usually reflects "
            "invalid usage of NCCL library.\nLast error:\nDuplicate GPU detected : "
            f"rank {rank} and rank {1 - rank} both on CUDA device 28000"), out
    narrowed = pair(tmp_path, (0, 1), 29886, visible="2,3")  # CUDA_VISIBLE_DEVICES: two devices, ordinals 0-1
    assert [out["count"] for out in narrowed] == [2, 2] and narrowed[0]["sum"] == 3.0
    ordinal = pair(tmp_path, (0, 2), 29887, visible="2,3")  # ordinal 2 of 2 visible devices
    assert str(ordinal[1]["error"]).startswith("RuntimeError: CUDA error: invalid device ordinal"), ordinal
