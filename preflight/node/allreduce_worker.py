"""allreduce's worker, one process per rank: ``python -c SOURCE SPEC`` (see preflight.allreduce.worker)."""
import datetime
import json
import os
import socket
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

spec = json.loads(sys.argv[1])
env = dict(os.environ)
out = {"pair": int(env.get("PF_PAIR", "-1")), "rank": int(env.get("RANK", "-1")), "backend": spec["backend"],
       "host_device": int(env.get("PF_DEVICE", "0")), "sizes": [], "error": None}  # type: dict[str, Any]
def emit():  # type: () -> None
    # What the rank ran with, for the report: the collective libraries' and the launch's variables only
    # (the job's whole environment may hold secrets).
    out["env"] = {k: v for k, v in sorted(os.environ.items())
                  if k.startswith(("NCCL_", "HCCL_", "GLOO_", "MASTER_", "PF_", "ASCEND_", "CUDA_VISIBLE"))
                  or k in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    sys.stdout.flush()
def local_iface(peer):  # type: (str) -> str | None
    """The interface whose address routes to ``peer`` (gloo otherwise trusts the hostname)."""
    import fcntl
    import struct
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((peer, 9))
        mine = s.getsockname()[0]
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue
            if socket.inet_ntoa(packed[20:24]) == mine:
                return name
    finally:
        s.close()
    return None
store = None  # type: Any
try:
    backend = spec["backend"]
    peer = env.get("PF_PEER_ADDR") or env["MASTER_ADDR"]
    if backend == "gloo" and "GLOO_SOCKET_IFNAME" not in env:
        iface = local_iface(peer)
        if iface:
            os.environ["GLOO_SOCKET_IFNAME"] = iface
    import torch
    import torch.distributed as dist
    device = int(env.get("PF_DEVICE", "0"))
    sync = lambda: None  # type: Callable[[], Any]  # noqa: E731
    if backend == "nccl":
        torch.cuda.set_device(device)
        dev = torch.device("cuda", device)
        sync = torch.cuda.synchronize
    elif backend == "hccl":
        import torch_npu  # noqa
        torch.npu.set_device(device)
        dev = torch.device("npu", device)
        sync = torch.npu.synchronize
    else:
        dev = torch.device("cpu")
    rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
    bound = datetime.timedelta(seconds=float(spec["init_timeout"]))
    if spec.get("track_arrival"):
        # --bisect: our own store, so that a group that does not finish can say which ranks never arrived
        out["arrived"] = False
        store = dist.TCPStore(env["MASTER_ADDR"], int(env["MASTER_PORT"]), world, rank == 0, timeout=bound,
                              wait_for_workers=False)
        store.set("pf_arrived_%d" % rank, "1")
        out["arrived"] = True
        dist.init_process_group(backend, store=store, rank=rank, world_size=world, timeout=bound)
    else:
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world, timeout=bound)
    start = time.perf_counter()
    budget = float(spec["budget"])
    spent_shared = 0.0
    last_cost = 0.0
    last_size = 0
    for size in spec["sizes"]:
        count = max(1, int(size) // 4)
        if last_size and spent_shared + last_cost * count / max(1, last_size // 4) > budget:
            break  # the next size would not fit the budget: keep what was measured
        t0 = time.perf_counter()
        check = torch.full((count,), float(rank + 1), dtype=torch.float32, device=dev)
        dist.all_reduce(check)
        sync()
        correct = bool((check == world * (world + 1) / 2.0).all().item())
        buf = torch.zeros(count, dtype=torch.float32, device=dev)
        for _ in range(int(spec["warmup"])):
            dist.all_reduce(buf)
        best = None  # type: Any
        trials = 0
        for _ in range(int(spec["trials"])):
            dist.barrier()
            sync()
            t1 = time.perf_counter()
            for _ in range(int(spec["iters"])):
                dist.all_reduce(buf)
            sync()
            elapsed = (time.perf_counter() - t1) / int(spec["iters"])
            # fp32: every backend takes it (HCCL rejects float64 off Ascend 950). The slowest rank counts,
            # and both ranks get the same numbers, so they take the same decisions.
            shared = torch.tensor([elapsed, time.perf_counter() - start], dtype=torch.float32, device=dev)
            dist.all_reduce(shared, op=dist.ReduceOp.MAX)
            on_host = shared.cpu()  # one copy, then host indexing (no device-side indexing kernels)
            slowest, spent_shared = float(on_host[0]), float(on_host[1])
            best = slowest if best is None else min(best, slowest)
            trials += 1
            if spent_shared > budget:
                break
        nbytes = count * 4
        algbw = nbytes / best / 1e9
        out["sizes"].append({"bytes": nbytes, "time_s": best, "algbw_gbps": algbw,
                             "busbw_gbps": algbw * 2 * (world - 1) / world, "correct": correct, "trials": trials})
        cost = torch.tensor([time.perf_counter() - t0], dtype=torch.float32, device=dev)
        dist.all_reduce(cost, op=dist.ReduceOp.MAX)  # the stop decision is shared: no rank leaves alone
        last_cost = float(cost.cpu()[0])
        last_size = int(size)
        if spent_shared > budget:
            break
    out["seconds"] = time.perf_counter() - start
    dist.destroy_process_group()
except BaseException as exc:
    out["error"] = (type(exc).__name__ + ": " + str(exc)).strip()[:500]
    if out.get("arrived") and store is not None:
        try:  # who reached the store by now (the ranks that never arrived are the rest)
            out["seen"] = [r for r in range(int(env["WORLD_SIZE"])) if store.check(["pf_arrived_%d" % r])]
        except BaseException:
            pass
emit()
