#!/bin/bash
# A fourth batch of real logs from a GPU node, for `preflight explain` (after gpu_failure_logs_3.sh): the launchers
# users start jobs with, healthy and failing (accelerate launch, a Lightning Trainer with DDP), DDP's own error for a
# parameter that takes no part in the loss (the job's bug, no cluster cause), and NCCL making its communicator in a
# GPU filled to the last megabytes. Healthy logs must be no failure to explain.
#   OUT=/tmp/out bash bench/gpu_failure_logs_4.sh     # $OUT/logs4.tgz: <case>.log; $OUT/cases4.txt: exit codes
# Needs one GPU, torch with CUDA, torchrun, accelerate and lightning. Run on an NVIDIA H200 VM: docs/explain.md.
set -u
: "${OUT:?set OUT to a folder for the results}"
L=/tmp/pf_logs4; rm -rf "$L"; mkdir -p "$L" "$OUT"
JOB=/tmp/pf_job4.py
cat > "$JOB" <<'PY'
import datetime, os
import torch
import torch.distributed as dist
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60))
t = torch.ones(1 << 20, device="cuda")
hold = []
if os.environ.get("JOB_FAULT") == "fullgpu":  # fill the GPU block by block, then NCCL makes its communicator
    for block in (1 << 30, 64 << 20, 2 << 20):
        while True:
            try:
                hold.append(torch.empty(block, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                break
    print("free after filling:", torch.cuda.mem_get_info()[0], flush=True)
dist.all_reduce(t)
torch.cuda.synchronize()
print("all_reduce ok", t[0].item(), flush=True)
dist.destroy_process_group()
PY
DDP=/tmp/pf_ddp4.py
cat > "$DDP" <<'PY'
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.used, self.unused = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.used(x)

torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
model = DistributedDataParallel(Net().cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
for step in range(3):
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    print("step", step, "done", flush=True)
dist.destroy_process_group()
PY
LIT=/tmp/pf_lightning4.py
cat > "$LIT" <<'PY'
import sys
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset

class Model(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, index):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

data = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 1)), batch_size=16)
trainer = pl.Trainer(accelerator="gpu", devices=int(sys.argv[1]), strategy="ddp", max_epochs=1,
                     enable_checkpointing=False, logger=False)
trainer.fit(Model(), data)
print("fit ok", flush=True)
PY
run() {  # case name, then the command
  local name=$1; shift
  timeout 120 "$@" > "$L/$name.log" 2>&1
  echo "$name rc=$?" >> "$OUT/cases4.txt"
}
: > "$OUT/cases4.txt"
run nccl_comm_init_gpu_full env MASTER_ADDR=127.0.0.1 MASTER_PORT=29910 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 \
  JOB_FAULT=fullgpu NCCL_DEBUG=WARN python3 "$JOB"
run accelerate_one_process_no_rank_env accelerate launch --num_processes 1 --main_process_port 29911 "$JOB"
run accelerate_two_processes_one_gpu accelerate launch --multi_gpu --num_processes 2 --main_process_port 29912 "$JOB"
run ddp_unused_parameter torchrun --standalone --nproc_per_node=1 "$DDP"
run lightning_ddp_healthy python3 "$LIT" 1
run lightning_devices_beyond_gpus python3 "$LIT" 2
python3 -c "import torch, accelerate, lightning; print('torch', torch.__version__, 'accelerate', accelerate.__version__, 'lightning', lightning.__version__)" \
  >> "$OUT/cases4.txt" 2>&1
tar czf "$OUT/logs4.tgz" -C "$L" .
