"""What an evaluator sees: the facts a check gathered, and the cluster around them.

Below the check registry (``preflight.checks``), so the helpers the checks share (``preflight.firewall``,
``preflight.ascend``, ``preflight.ports``) can name these types without importing the registry, which imports
every check, which import those helpers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.findings import Facts as Facts
from preflight.inventory import ClusterSpec, Host


@dataclass(frozen=True)
class EvalContext:
    """Everything an evaluator may look at besides the facts."""

    cluster: ClusterSpec
    hosts: Sequence[Host]
    params: Mapping[str, Any] = field(default_factory=dict)
    # Facts of the other checks that ran: family -> host -> facts (e.g. the CANN version from versions).
    other_facts: Mapping[str, Mapping[str, Facts]] = field(default_factory=dict)
