"""diagnose's rendezvous dry-run rank: ``python -c SOURCE SPEC`` (see preflight.diagnose.worker)."""
import datetime
import json
import os
import socket
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

spec = json.loads(sys.argv[1])
t0 = time.time()
out = {"event": "result", "rank": int(os.environ.get("RANK", "-1")), "world": int(os.environ.get("WORLD_SIZE", "0")),
       "hostname": socket.gethostname(), "stage": "import", "error": None, "value": None, "expected": None,
       "backend": None}  # type: dict[str, Any]
def stage(name):  # type: (str) -> None
    out["stage"] = name
    sys.stdout.write(json.dumps({"event": "stage", "stage": name, "t": round(time.time() - t0, 3)}) + "\n")
    sys.stdout.flush()
try:
    stage("import")
    import torch
    import torch.distributed as dist
    def hung():  # type: () -> None
        # torch's own timeouts do not cover every wait (a peer that accepts and never answers): report and go
        out["error"] = "no progress: still waiting after %gs" % (time.time() - t0)
        out["seconds"] = round(time.time() - t0, 3)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        os._exit(3)
    watchdog = threading.Timer(2 * float(spec["timeout"]) + 3, hung)
    watchdog.daemon = True
    watchdog.start()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    timeout = datetime.timedelta(seconds=float(spec["timeout"]))
    stage("store")
    store = dist.TCPStore(addr, port, world, rank == 0, timeout=timeout, wait_for_workers=False)
    stage("init")
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timeout)
    stage("all_reduce")
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)
    out["value"], out["expected"] = float(value.item()), world * (world + 1) / 2.0
    stage("barrier")
    dist.barrier()
    backend = spec.get("backend") or "gloo"
    if backend != "gloo":
        stage("backend")
        have, why = False, ""
        try:
            if backend == "nccl":
                have = bool(torch.cuda.is_available() and dist.is_nccl_available())
                why = "" if have else "no CUDA device or NCCL in this torch"
            elif backend == "hccl":
                import torch_npu  # noqa
                have = bool(torch.npu.is_available())
                why = "" if have else "no NPU visible to torch_npu"
        except Exception as exc:
            why = (type(exc).__name__ + ": " + str(exc))[:200]
        flags = torch.tensor([1.0 if have else 0.0])
        dist.all_reduce(flags, op=dist.ReduceOp.MIN)  # every rank must have it, or none tries (no hang)
        result = {"name": backend, "available": have, "why": why, "ok": None, "error": None}
        if flags.item() > 0:
            try:
                group = dist.new_group(backend=backend)
                if backend == "nccl":
                    torch.cuda.set_device(0)
                    dev = torch.device("cuda", 0)
                else:
                    torch.npu.set_device(0)
                    dev = torch.device("npu", 0)
                t = torch.tensor([float(rank + 1)], device=dev)
                dist.all_reduce(t, group=group)
                dist.barrier(group=group)
                result["ok"] = float(t.item()) == world * (world + 1) / 2.0
            except Exception as exc:
                result["ok"], result["error"] = False, (type(exc).__name__ + ": " + str(exc)).strip()[:400]
        out["backend"] = result
    stage("done")
    watchdog.cancel()
    dist.destroy_process_group()
except BaseException as exc:
    out["error"] = (type(exc).__name__ + ": " + str(exc)).strip()[:600]
out["seconds"] = round(time.time() - t0, 3)
sys.stdout.write(json.dumps(out) + "\n")
sys.stdout.flush()
