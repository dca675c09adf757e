"""SlurmBatch without Slurm: a stand-in ``srun`` that records each call and prints labelled lines as srun's
``--label`` does (``task: line``), so the round logic is tested on its own: one srun per round whatever the
host count, every host gets its own part, late hosts do not wait for hosts that never come.
"""

from __future__ import annotations

import stat
import threading
from pathlib import Path

from preflight.inventory import Host
from preflight.transport.base import Execution
from preflight.transport.slurm import SlurmBatch

# After recording the call, prints for every node of --nodelist what srun --label shows of the payload:
# task i's header line naming its node (the payload prints it first), then one line of output.
FAKE_SRUN = """#!/bin/sh
echo call >> "{calls}"
cat > /dev/null
for arg in "$@"; do
  case "$arg" in --nodelist=*) list="${{arg#--nodelist=}}" ;; esac
done
python3 -c 'import sys; from ClusterShell.NodeSet import NodeSet
for i, n in enumerate(NodeSet(sys.argv[1])): print(f"{{i}}: @@PF-NODE {{n}}"); print(f"{{i}}: hello {{n}}")' "$list"
"""


def fake_srun(tmp_path: Path) -> tuple[str, Path]:
    calls = tmp_path / "calls"
    script = tmp_path / "srun"
    script.write_text(FAKE_SRUN.format(calls=calls))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script), calls


def test_one_srun_for_a_round_of_many_hosts_each_gets_its_part(tmp_path: Path) -> None:
    srun, calls = fake_srun(tmp_path)
    names = [f"n{i}" for i in range(300)]
    batch = SlurmBatch([Host(n, n) for n in names], srun=srun, wait=30.0, environ={})
    results: dict[str, Execution] = {}

    def submit(name: str) -> None:
        results[name] = batch.submit(name, "echo hi", timeout=30.0)

    threads = [threading.Thread(target=submit, args=(n,)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert calls.read_text().count("call") == 1, "one srun for the whole round"
    assert set(results) == set(names)
    assert all(results[n].stdout.decode().strip() == f"hello {n}" for n in names)


def test_a_round_missing_a_host_starts_after_the_wait(tmp_path: Path) -> None:
    srun, calls = fake_srun(tmp_path)
    batch = SlurmBatch([Host("a", "a"), Host("b", "b"), Host("gone", "gone")], srun=srun, wait=0.5, environ={})
    results: dict[str, Execution] = {}
    threads = [threading.Thread(target=lambda n=n: results.update({n: batch.submit(n, "x", 10.0)}))
               for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert set(results) == {"a", "b"} and calls.read_text().count("call") == 1
