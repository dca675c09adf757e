#!/bin/bash
# A third batch of real failure logs from a GPU node, for `preflight explain` (the first two: gpu_failure_logs.sh,
# gpu_failure_logs_2.sh): NCCL's process-group watchdog firing on a collective held up by a busy GPU, NCCL unable to
# make its communicator in a full GPU, an illegal memory access in the job's own kernel under torchrun, NCCL asked
# for an address family or a network the node lacks, a bogus NCCL_ALGO, and a healthy torchrun run at the loudest
# debug settings (which explain must not call a failure); plus which dtypes torch's nccl all_reduce refuses.
#   OUT=/tmp/out bash bench/gpu_failure_logs_3.sh     # $OUT/logs3.tgz: <case>.log; $OUT/cases3.txt: exit codes
# Needs one GPU, torch with CUDA, torchrun and CuPy (the illegal access). Run on an NVIDIA H200 VM: docs/explain.md.
set -u
: "${OUT:?set OUT to a folder for the results}"
L=/tmp/pf_logs3; rm -rf "$L"; mkdir -p "$L" "$OUT"
JOB=/tmp/pf_job3.py
cat > "$JOB" <<'PY'
import datetime, os
import torch
import torch.distributed as dist
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=float(os.environ.get("JOB_TIMEOUT", "60"))))
fault = os.environ.get("JOB_FAULT", "")
t = torch.ones(1 << 20, device="cuda")
hold = None
if fault == "fullgpu":  # the GPU is full before NCCL makes its communicator (at the first collective)
    free, _total = torch.cuda.mem_get_info()
    hold = torch.empty(free - (2 << 20), dtype=torch.uint8, device="cuda")
    print("free after filling:", torch.cuda.mem_get_info()[0], flush=True)
dist.all_reduce(t)
torch.cuda.synchronize()
if fault == "busy":  # a kernel runs past the process group's timeout; the collective queued behind it waits
    torch.cuda._sleep(int(float(os.environ.get("JOB_CYCLES", "4e10"))))
    dist.all_reduce(t)
    torch.cuda.synchronize()
elif fault == "illegal":  # the job's own kernel writes far outside its buffer, then a collective is queued
    import cupy
    bad = cupy.RawKernel(r'extern "C" __global__ void bad(float* p) { p[1ull << 40] = 1.0f; }', "bad")
    bad((1,), (1,), (cupy.uint64(t.data_ptr()),))
    dist.all_reduce(t)
    torch.cuda.synchronize()
print("all_reduce ok", t[0].item(), flush=True)
dist.destroy_process_group()
PY
DTYPES=/tmp/pf_dtypes3.py
cat > "$DTYPES" <<'PY'
import os
import torch
import torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl")
for name in ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
             "bfloat16", "float32", "float64", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2"):
    dtype = getattr(torch, name, None)
    if dtype is None:
        print(f"{name}: no such dtype in this torch"); continue
    for op in ("SUM", "MAX"):
        try:
            x = torch.ones(8, device="cuda").to(dtype)
            dist.all_reduce(x, op=getattr(dist.ReduceOp, op))
            torch.cuda.synchronize()
            print(f"{name} {op}: ok")
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            print(f"{name} {op}: {type(exc).__module__}.{type(exc).__name__}: {first}")
print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())
dist.destroy_process_group()
PY
one() {  # case name, then env assignments; the job as rank 0 of 1, started directly
  local name=$1; shift
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=29810 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 "$@" \
    timeout 90 python3 "$JOB" > "$L/$name.log" 2>&1
  echo "$name rc=$?" >> "$OUT/cases3.txt"
}
tr1() {  # case name, then env assignments; the job under torchrun, one process
  local name=$1; shift
  env "$@" timeout 120 torchrun --standalone --nproc_per_node=1 "$JOB" > "$L/$name.log" 2>&1
  echo "$name rc=$?" >> "$OUT/cases3.txt"
}
: > "$OUT/cases3.txt"
tr1 nccl_watchdog_timeout_busy_gpu JOB_FAULT=busy JOB_TIMEOUT=5
one nccl_init_gpu_memory_full JOB_FAULT=fullgpu
tr1 cuda_illegal_address_torchrun JOB_FAULT=illegal
one nccl_socket_family_inet6 NCCL_SOCKET_FAMILY=AF_INET6 NCCL_DEBUG=WARN
one nccl_net_aws_libfabric_missing "NCCL_NET=AWS Libfabric" NCCL_DEBUG=WARN
one nccl_algo_bogus NCCL_ALGO=Bogus NCCL_DEBUG=WARN
tr1 healthy_torchrun_debug_detail TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_CPP_LOG_LEVEL=INFO NCCL_DEBUG=INFO
env MASTER_ADDR=127.0.0.1 MASTER_PORT=29811 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 timeout 90 python3 "$DTYPES" \
  > "$L/nccl_allreduce_dtypes.txt" 2>&1
echo "nccl_allreduce_dtypes rc=$?" >> "$OUT/cases3.txt"
python3 -c "import torch, cupy; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), 'cupy', cupy.__version__)" \
  >> "$OUT/cases3.txt" 2>&1
tar czf "$OUT/logs3.tgz" -C "$L" .
