"""The torch_npu simulator refuses what real torch_npu and HCCL refuse, so that the allreduce check's avoidance
(fp32 only, no 910A group HCCL refuses: a pair across the HCCS groups, 3 devices of a server; CANN's environment
sourced) is tested against something that would fail.

Ranks run here on loopback, real torch (CPU) with the simulator on PYTHONPATH and a state file as npu-smi's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ascend_sim
import pytest

RANK = """
import datetime, json, os, torch, torch.distributed as dist
out = {}
try:
    import torch_npu
    out["count"] = torch.npu.device_count()
    torch.npu.set_device(int(os.environ["DEV"]))
    dist.init_process_group("hccl", rank=int(os.environ["RANK"]), world_size=int(os.environ.get("WORLD", "2")),
                            timeout=datetime.timedelta(seconds=20))
    for dtype in (torch.float32, torch.float64):
        t = torch.ones(4, dtype=dtype, device=torch.device("npu", int(os.environ["DEV"])))
        try:
            dist.all_reduce(t)
            out[str(dtype)] = t.cpu().tolist()
        except RuntimeError as exc:
            out[str(dtype)] = str(exc)
    dist.destroy_process_group()
except Exception as exc:
    out["error"] = type(exc).__name__ + ": " + str(exc)
print(json.dumps(out))
"""


@pytest.fixture()
def toolkit(tmp_path: Path) -> Path:
    lib64 = tmp_path / "latest" / "lib64"
    lib64.mkdir(parents=True)
    for lib in ("libhccl.so", "libascendcl.so"):
        (lib64 / lib).write_bytes(b"")
    return lib64


def start(tmp_path: Path, chip: str, rank: int, device: int, port: int, lib64: Path | None,
          world: int = 2) -> subprocess.Popen[str]:
    state = tmp_path / f"{chip}.json"
    state.write_text(json.dumps(ascend_sim.healthy_state(chip, [f"192.168.1.{10 + i}" for i in range(8)])))
    env = {**os.environ, "PYTHONPATH": str(ascend_sim.TORCH_NPU_SIM), "PF_SIM_NPU_STATE": str(state),
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank), "DEV": str(device),
           "LD_LIBRARY_PATH": str(lib64) if lib64 else "", "WORLD": str(world)}
    return subprocess.Popen([sys.executable, "-c", RANK], env=env, stdout=subprocess.PIPE, text=True)


def results(procs: list[subprocess.Popen[str]]) -> list[dict[str, object]]:
    # a hang guard, not a speed bound: at load ~100 importing torch in four processes took past 120 s
    outs = [p.communicate(timeout=600)[0] for p in procs]
    return [json.loads(o.strip().splitlines()[-1]) for o in outs]


def test_simulator_refuses_what_hccl_refuses(tmp_path: Path, toolkit: Path) -> None:
    procs = [start(tmp_path, "910B3", r, d, 29871, toolkit) for r, d in ((0, 0), (1, 1))]
    procs += [start(tmp_path, "910ProB", r, d, 29872, toolkit) for r, d in ((0, 3), (1, 4))]
    procs += [start(tmp_path, "910B3", 0, 0, 29873, None)]
    procs += [start(tmp_path, "910ProB", r, r, 29874, toolkit, world=3) for r in range(3)]
    same_group, cross_group, no_cann = results(procs[:2]), results(procs[2:4]), results(procs[4:5])[0]
    three = results(procs[5:])
    for out in same_group:
        assert out["count"] == 8
        assert out["torch.float32"] == [2.0] * 4, "fp32 is summed across the two ranks"
        assert "HCCL AllReduce & Reduce: Unsupported data type at::kDouble" in str(out["torch.float64"])
    for out in cross_group + three:  # 910A: devices 3 and 4 are in different HCCS groups; 3 devices of a server
        assert "HCCL function error: hcclCommInitRootInfoConfig" in str(out["error"])
        assert "error code is 5" in str(out["error"])
    assert str(no_cann["error"]).startswith("ImportError: libhccl.so: cannot open shared object file")
    assert "Please run 'source set_env.sh' in the CANN installation path." in str(no_cann["error"])
