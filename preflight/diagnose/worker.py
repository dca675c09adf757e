"""The rendezvous dry-run rank, shipped to every host as text from preflight/node/dryrun.py (the controller
never imports torch).

One process per host, started in the job's environment (preflight.job_env) with MASTER_ADDR and MASTER_PORT, RANK
(the host's node rank) and WORLD_SIZE (the number of hosts) set (the login environment, the
host's setup: lines and its hosts.yaml env come first). argv[1] is a JSON spec: ``timeout`` (seconds
for the store and for the process group) and ``backend`` (the job's own backend: nccl, hccl, or gloo).

It prints one JSON line per stage reached, ``{"event": "stage", "stage": ..., "t": seconds}``, so a
rank killed at the probe's timeout still tells where it stopped, and finally ``{"event": "result",
...}``: the stage it stopped at (or "done"), the error, the all_reduce value and the job backend's
outcome. Stages: import, store, init, all_reduce, barrier, backend, done.

>>> "TCPStore" in DRYRUN and "all_reduce" in DRYRUN
True
"""

from __future__ import annotations

from preflight.node import source

STAGES = ("import", "store", "init", "all_reduce", "barrier", "backend", "done")

DRYRUN = source("dryrun")
