#!/bin/bash
# Real failure logs from a GPU node, for `preflight explain`: a small training-style job (init_process_group,
# one all_reduce) started the ways a launch goes wrong, one log per case (stdout and stderr, as a user saves them).
#   OUT=/tmp/out bash bench/gpu_failure_logs.sh     # $OUT/logs.tgz: <case>.log; $OUT/cases.txt: exit codes
# Needs one GPU, torch with CUDA and torchrun. Run on an NVIDIA H200 VM on 2026-11-26: docs/explain.md.
set -u
: "${OUT:?set OUT to a folder for the results}"
L=/tmp/pf_logs; rm -rf "$L"; mkdir -p "$L" "$OUT"
JOB=/tmp/pf_job.py
cat > "$JOB" <<'PY'
import datetime, os
import torch
import torch.distributed as dist
torch.cuda.set_device(int(os.environ.get("JOB_DEVICE", os.environ.get("LOCAL_RANK", "0"))))
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=float(os.environ.get("JOB_TIMEOUT", "60"))))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print("all_reduce ok", t[0].item(), flush=True)
dist.destroy_process_group()
PY
one() {  # case name, then env assignments; runs the job as rank 0 of WORLD_SIZE (default 1)
  local name=$1; shift
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=29610 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 "$@" \
    timeout 120 python3 "$JOB" > "$L/$name.log" 2>&1
  echo "$name rc=$?" >> "$OUT/cases.txt"
}
: > "$OUT/cases.txt"
one healthy_one_rank
one nccl_socket_ifname_no_such_interface NCCL_SOCKET_IFNAME=nosuchif0 NCCL_DEBUG=WARN
one cuda_invalid_device_ordinal LOCAL_RANK=1
one cuda_no_visible_devices CUDA_VISIBLE_DEVICES=
one master_addr_unresolvable MASTER_ADDR=no-such-master.invalid JOB_TIMEOUT=20
one store_client_timeout RANK=1 WORLD_SIZE=2 MASTER_PORT=29611 JOB_TIMEOUT=15
python3 -c "import socket,time; s=socket.socket(); s.bind(('0.0.0.0',29612)); s.listen(); time.sleep(60)" &
HOLD=$!; sleep 1
one master_port_in_use MASTER_PORT=29612 JOB_TIMEOUT=20
kill $HOLD 2>/dev/null
# torchrun, two processes both on GPU 0 (JOB_DEVICE): NCCL refuses them (duplicate GPU); torchrun's summary
JOB_DEVICE=0 JOB_TIMEOUT=30 timeout 180 torchrun --standalone --nproc_per_node=2 "$JOB" \
  > "$L/torchrun_two_ranks_one_gpu.log" 2>&1
echo "torchrun_two_ranks_one_gpu rc=$?" >> "$OUT/cases.txt"
# torchrun, two processes on a one-GPU node: local rank 1 asks for a device that does not exist
JOB_TIMEOUT=30 timeout 180 torchrun --standalone --nproc_per_node=2 "$JOB" > "$L/torchrun_nproc_beyond_gpus.log" 2>&1
echo "torchrun_nproc_beyond_gpus rc=$?" >> "$OUT/cases.txt"
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" >> "$OUT/cases.txt" 2>&1
tar czf "$OUT/logs.tgz" -C "$L" .
