#!/bin/bash
# preflight on a real GPU node, from a checkout: `preflight node`, a recorded local `preflight run`, and the
# allreduce worker on the nccl backend (one rank; then two ranks on GPU 0, which NCCL must refuse).
#   OUT=/tmp/out bash bench/gpu_node.sh     # results in $OUT: env.txt node.json run.json rec.tgz ar1.txt ar2.txt
# A node without network: put the wheels preflight needs (typer, ClusterShell, paramiko and theirs) in .whl/.
# Run on an NVIDIA H200 VM on 2026-11-26: docs/hardware.md ("On a real GPU node").
set -u
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to a folder for the results}"
mkdir -p "$OUT"; : > "$OUT/errs.txt"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    >> "$OUT/errs.txt" 2>&1 || { echo pip failed; cat "$OUT/errs.txt"; exit 3; }
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
{
  date -u; nvidia-smi; nvidia-smi -L
  python3 -c "import sys,torch;print(sys.version);print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version(), torch.cuda.get_device_name(0), torch.cuda.device_count())"
  python3 -m preflight version
} > $OUT/env.txt 2>&1
echo "== node" >> $OUT/errs.txt
timeout 150 python3 -m preflight node --json > $OUT/node.json 2>> $OUT/errs.txt; echo "node rc=$?" >> $OUT/env.txt
echo "== run" >> $OUT/errs.txt
mkdir -p /tmp/rec /tmp/rd
timeout 200 python3 -m preflight run --json --record /tmp/rec --report-dir /tmp/rd > $OUT/run.json 2>> $OUT/errs.txt; echo "run rc=$?" >> $OUT/env.txt
tar czf $OUT/rec.tgz -C /tmp/rec . 2>> $OUT/errs.txt
W=$(python3 -c 'from preflight.allreduce.worker import WORKER; print(WORKER)')
SPEC='{"backend":"nccl","sizes":[1048576,16777216,268435456],"warmup":3,"iters":20,"trials":3,"budget":30,"init_timeout":60}'
env MASTER_ADDR=127.0.0.1 MASTER_PORT=29555 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 PF_DEVICE=0 PF_PAIR=0 \
  timeout 120 python3 -c "$W" "$SPEC" > $OUT/ar1.txt 2>&1; echo "ar1 rc=$?" >> $OUT/env.txt
for r in 0 1; do
  ( env MASTER_ADDR=127.0.0.1 MASTER_PORT=29556 RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r PF_DEVICE=0 PF_PAIR=0 \
      timeout 120 python3 -c "$W" "$SPEC" > /tmp/ar2_$r.txt 2>&1; echo "ar2 rank $r rc=$?" >> /tmp/ar2_$r.txt ) &
done
wait
{ echo "== rank 0"; cat /tmp/ar2_0.txt; echo "== rank 1"; cat /tmp/ar2_1.txt; } > $OUT/ar2.txt
echo done >> $OUT/env.txt
