#!/bin/bash
# A fifth batch of real logs from a GPU node, for `preflight explain` (after gpu_failure_logs_4.sh): gloo's own
# failures (a collective mismatch seen by TORCH_DISTRIBUTED_DEBUG=DETAIL and without it, a socket interface that does
# not exist, a peer that is late), the first cause behind a louder symptom (a rank dies of CUDA out-of-memory while
# its peer waits in a gloo collective), a DataLoader in a tiny /dev/shm, nccl given a CPU tensor, a MASTER_PORT out of
# range, a rendezvous endpoint nobody answers, few file descriptors, and two healthy runs (gloo at INFO, FSDP2).
#   OUT=/tmp/out bash bench/gpu_failure_logs_5.sh     # $OUT/logs5.tgz: <case>.log; $OUT/cases5.txt: exit codes
# Needs one GPU, torch with CUDA and torchrun; unshare(1) for the /dev/shm case. Run on an NVIDIA H200 VM.
set -u
: "${OUT:?set OUT to a folder for the results}"
L=/tmp/pf_logs5; rm -rf "$L"; mkdir -p "$L" "$OUT"
JOB=/tmp/pf_job5.py
cat > "$JOB" <<'PY'
import datetime, os, sys, time
import torch
import torch.distributed as dist
fault = os.environ.get("JOB_FAULT", "")
backend = os.environ.get("JOB_BACKEND", "gloo")
rank = int(os.environ.get("RANK", "0"))
if backend == "nccl":
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
dist.init_process_group(backend, timeout=datetime.timedelta(seconds=int(os.environ.get("JOB_TIMEOUT", "60"))))
device = "cuda" if backend == "nccl" else "cpu"
t = torch.ones(1 << 16, device=device)
if fault == "mismatch":  # rank 0 reduces, rank 1 broadcasts
    if rank == 0:
        dist.all_reduce(t)
    else:
        dist.broadcast(t, src=0)
elif fault == "shapes":  # both reduce, with tensors of different lengths
    dist.all_reduce(torch.ones(1000 + 24 * rank))
elif fault == "late":  # rank 1 comes 40 s late to the collective
    if rank == 1:
        time.sleep(40)
    dist.all_reduce(t)
elif fault == "peer_oom":  # rank 1 asks its GPU for 400 GiB; rank 0 waits in the collective
    if rank == 1:
        torch.empty(400 << 30, dtype=torch.uint8, device="cuda")
    dist.all_reduce(t)
elif fault == "cpu_tensor":  # the nccl backend handed a tensor on the CPU
    dist.all_reduce(torch.ones(8))
else:
    dist.all_reduce(t)
print("all_reduce ok", t[0].item(), flush=True)
dist.destroy_process_group()
PY
SHM=/tmp/pf_shm5.py
cat > "$SHM" <<'PY'
import torch
from torch.utils.data import DataLoader, Dataset

class Big(Dataset):
    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.ones(4 << 20)  # 16 MiB per sample, handed through /dev/shm

for step, batch in enumerate(DataLoader(Big(), batch_size=4, num_workers=2)):
    print("batch", step, batch.shape, flush=True)
print("epoch ok", flush=True)
PY
FSDP=/tmp/pf_fsdp5.py
cat > "$FSDP" <<'PY'
import os
import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).cuda()
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    loss = model(torch.randn(16, 64, device="cuda")).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    print("step", step, "loss", round(loss.item(), 4), flush=True)
dist.destroy_process_group()
PY
run() {  # case name, seconds, then the command
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$@" > "$L/$name.log" 2>&1
  echo "$name rc=$?" >> "$OUT/cases5.txt"
  tar czf "$OUT/logs5.tgz" -C "$L" .  # after each case: a run stopped at its limit still brings back the rest
}
TR=(torchrun --standalone --nproc_per_node=2)
: > "$OUT/cases5.txt"
run gloo_collective_mismatch_debug_detail 60 env JOB_FAULT=mismatch TORCH_DISTRIBUTED_DEBUG=DETAIL "${TR[@]}" "$JOB"
run gloo_allreduce_shape_mismatch 60 env JOB_FAULT=shapes JOB_TIMEOUT=15 "${TR[@]}" "$JOB"
run gloo_socket_ifname_no_such_interface 60 env GLOO_SOCKET_IFNAME=nosuchif0 "${TR[@]}" "$JOB"
run gloo_peer_late_timeout 60 env JOB_FAULT=late JOB_TIMEOUT=10 "${TR[@]}" "$JOB"
run gloo_peer_cuda_oom_first 60 env JOB_FAULT=peer_oom JOB_TIMEOUT=30 "${TR[@]}" "$JOB"
run nccl_cpu_tensor 60 env JOB_FAULT=cpu_tensor JOB_BACKEND=nccl torchrun --standalone --nproc_per_node=1 "$JOB"
run master_port_out_of_range 60 env MASTER_ADDR=127.0.0.1 MASTER_PORT=70000 RANK=0 WORLD_SIZE=1 python3 "$JOB"
run torchrun_rdzv_endpoint_unreachable 100 torchrun --nnodes=2 --nproc_per_node=1 --rdzv-backend=c10d \
  --rdzv-endpoint=10.255.255.1:29400 --rdzv-id=pf5 --rdzv-conf=join_timeout=20,read_timeout=20 "$JOB"
run nccl_few_file_descriptors 60 bash -c "ulimit -n 48; exec env JOB_BACKEND=nccl NCCL_DEBUG=WARN torchrun --standalone --nproc_per_node=1 $JOB"
if command -v unshare > /dev/null; then
  run dataloader_tiny_dev_shm 120 unshare -m bash -c "mount -t tmpfs -o size=2m tmpfs /dev/shm && exec python3 $SHM"
fi
run healthy_gloo_torchrun_info 60 env NCCL_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO "${TR[@]}" "$JOB"
run healthy_fsdp2_one_gpu 90 torchrun --standalone --nproc_per_node=1 "$FSDP"
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" >> "$OUT/cases5.txt" 2>&1
tar czf "$OUT/logs5.tgz" -C "$L" .
