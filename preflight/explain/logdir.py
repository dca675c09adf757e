"""The rank logs under a directory: what ``preflight explain DIR`` reads.

Taken recursively, in path order: ``*.log``, ``*.txt``, ``*.out``, ``*.err`` (Slurm's ``slurm-<job>.out`` /
``slurm-<job>_<task>.out``, torchrun's ``--log-dir`` layout ``<run>/attempt_<n>/<local rank>/stdout.log`` and
``stderr.log``, ``kubectl cluster-info dump``'s ``<namespace>/<pod>/logs.txt``, files saved one per pod or node);
hidden files and folders are skipped, symbolic links to folders are not followed.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> for p in ("run/attempt_0/1/stderr.log", "run/attempt_0/1/error.json", "slurm-7.out", ".hidden/x.log"):
...     (root / p).parent.mkdir(parents=True, exist_ok=True); _ = (root / p).write_text("x")
>>> [p.relative_to(root).as_posix() for p in log_files(root)]
['run/attempt_0/1/stderr.log', 'slurm-7.out']
"""

from __future__ import annotations

import os
from pathlib import Path

SUFFIXES = (".log", ".txt", ".out", ".err")
MAX_FILES = 4096  # a directory of more files than this is cut (and says so)


def log_files(root: Path, limit: int = MAX_FILES) -> list[Path]:
    """The log files under ``root`` in path order, at most ``limit`` of them."""
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if not d.startswith(".")]
        found.extend(Path(folder) / n for n in names if not n.startswith(".") and n.lower().endswith(SUFFIXES))
    return sorted(found, key=lambda p: p.as_posix())[:limit]
