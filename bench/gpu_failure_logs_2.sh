#!/bin/bash
# A second batch of real failure logs from a GPU node, for `preflight explain` (the first: gpu_failure_logs.sh):
# failures of the job itself (out of memory, a device-side assert, a rank killed by a signal, an exception under
# torchrun), NCCL's network settings naming what the node lacks, and a rendezvous nobody joins; plus a healthy
# run at NCCL_DEBUG=INFO, which explain must not call a failure. One log per case, stdout and stderr together.
#   OUT=/tmp/out bash bench/gpu_failure_logs_2.sh     # $OUT/logs2.tgz: <case>.log; $OUT/cases2.txt: exit codes
# Needs one GPU, torch with CUDA and torchrun. Run on an NVIDIA H100 VM on 2026-11-27: docs/explain.md.
set -u
: "${OUT:?set OUT to a folder for the results}"
L=/tmp/pf_logs2; rm -rf "$L"; mkdir -p "$L" "$OUT"
JOB=/tmp/pf_job2.py
cat > "$JOB" <<'PY'
import datetime, os, signal, time
import torch
import torch.distributed as dist
torch.cuda.set_device(int(os.environ.get("JOB_DEVICE", os.environ.get("LOCAL_RANK", "0"))))
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=float(os.environ.get("JOB_TIMEOUT", "60"))))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
fault = os.environ.get("JOB_FAULT", "")
if fault == "oom":
    x = torch.empty(int(float(os.environ.get("JOB_GIB", "400")) * 2**30), dtype=torch.uint8, device="cuda")
elif fault == "assert":
    y = torch.zeros(4, device="cuda")[torch.tensor([9], device="cuda")]
    torch.cuda.synchronize()
    print(y)
elif fault == "exception":
    raise ValueError("loss is nan at step 12")
elif fault in ("SIGSEGV", "SIGKILL", "SIGABRT"):
    if int(os.environ.get("RANK", "0")) == int(os.environ.get("JOB_FAULT_RANK", "0")):
        os.kill(os.getpid(), getattr(signal, fault))
    time.sleep(5)
print("all_reduce ok", t[0].item(), flush=True)
dist.destroy_process_group()
PY
one() {  # case name, then env assignments; runs the job as rank 0 of WORLD_SIZE (default 1)
  local name=$1; shift
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=29710 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 "$@" \
    timeout 90 python3 "$JOB" > "$L/$name.log" 2>&1
  echo "$name rc=$?" >> "$OUT/cases2.txt"
}
tr1() {  # case name, then env assignments; the job under torchrun, one process
  local name=$1; shift
  env "$@" timeout 120 torchrun --standalone --nproc_per_node=1 "$JOB" > "$L/$name.log" 2>&1
  echo "$name rc=$?" >> "$OUT/cases2.txt"
}
: > "$OUT/cases2.txt"
one healthy_nccl_debug_info NCCL_DEBUG=INFO
one cuda_oom_in_job JOB_FAULT=oom
one cuda_device_side_assert JOB_FAULT=assert
one nccl_net_ib_forced_no_ib NCCL_NET=IB NCCL_DEBUG=WARN
one nccl_ib_hca_no_such_device NCCL_IB_HCA=mlx5_9 NCCL_NET=IB NCCL_DEBUG=WARN
tr1 torchrun_rank_exception JOB_FAULT=exception
tr1 torchrun_rank_sigsegv JOB_FAULT=SIGSEGV
tr1 torchrun_rank_sigkill JOB_FAULT=SIGKILL
tr1 torchrun_rank_sigabrt JOB_FAULT=SIGABRT
# two nodes asked for, one joins: the c10d rendezvous times out
timeout 120 torchrun --nnodes=2 --nproc_per_node=1 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:29720 \
  --rdzv_id=pf --rdzv_conf=join_timeout=20 "$JOB" > "$L/torchrun_rendezvous_second_node_missing.log" 2>&1
echo "torchrun_rendezvous_second_node_missing rc=$?" >> "$OUT/cases2.txt"
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" >> "$OUT/cases2.txt" 2>&1
tar czf "$OUT/logs2.tgz" -C "$L" .
