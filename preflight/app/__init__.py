"""The application layer under every command: what a command *is*, once; ``cli`` and ``commands/*`` parse
arguments, call it and render what it hands back.

- ``selection``: ``--checks``/``--skip`` -> the checks to run (with the families they need, transitively) and the
  finding ids to report (:func:`select_checks`);
- ``cluster``: hosts.yaml (or this machine) plus ``--accelerator``, ``--rank-table`` and the job's interpreter ->
  an Inventory (:func:`load_cluster`);
- ``run``: ``preflight run``, a :class:`RunRequest` -> the report (:func:`run_cluster`) and its files
  (:func:`save`);
- ``node``: ``preflight node``, this machine's verdict (``--set``, ranks, the interpreter, the hard time bound);
- ``facts``: ``preflight node --facts``, this machine's raw outputs as a facts file;
- ``judge``: ``preflight judge``, the engine over facts files (``Engine.replay``), judged as ``run`` judges;
- ``diagnose``: ``preflight diagnose``, one launch line's assumptions checked on the live hosts.

Every report the application hands back is redacted once, at this boundary (``Report.redacted()``): renderers
and writers take only a :class:`~preflight.model.RedactedReport`. This package imports the ``run`` path (what
every command shares); ``node``, ``facts``, ``judge`` and ``diagnose`` are imported by their commands.

>>> chosen = select_checks(["sysctl"], [])
>>> [c.ident for c in chosen.checks], chosen.only
(['versions', 'sysctl'], ('sysctl',))
"""

from __future__ import annotations

from preflight.app.cluster import Interpreter, check_accelerator, load_cluster, node_name, this_host
from preflight.app.run import RunRequest, RunResult, finish, prepare, run_cluster, save
from preflight.app.selection import Selection, UsageError, known_items, select_checks, unknown_item
from preflight.engine import RunOptions

__all__ = ["Interpreter", "RunOptions", "RunRequest", "RunResult", "Selection", "UsageError", "check_accelerator",
           "finish", "known_items", "load_cluster", "node_name", "prepare", "run_cluster", "save", "select_checks",
           "this_host", "unknown_item"]
