"""The worker script shipped to the nodes (as text, from preflight/node/allreduce_worker.py: the controller never
imports torch).

One process per rank, started by the probe command in the job's environment (preflight.job_env) with
MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, PF_PAIR and PF_DEVICE set explicitly; argv[1] is a
JSON spec: backend, sizes (bytes), warmup, iters, trials, budget (seconds), init_timeout.
It prints ONE JSON line (also on failure): pair, rank, backend, env, error, and per size:
bytes, time_s (slowest rank, best trial), algbw_gbps, busbw_gbps (GB = 1e9), correct.

>>> "init_process_group" in WORKER
True
"""

from __future__ import annotations

from preflight.node import source

WORKER = source("allreduce_worker")
