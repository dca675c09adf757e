"""What a known failure signature is (``Signature``) and the categories they fall in; the entries are in
``catalog_network`` and ``catalog_hosts``, gathered by ``catalog``.

A signature matches its patterns as written first, then their tolerant forms (``tolerant``: another case,
spacing, quotes or sentence punctuation of the same words):

>>> sig = Signature("x.reset", "fabric", (r"Net : Connection closed by remote peer",), "c", "f", (), "https://x")
>>> bool(sig.search("NET: connection closed by remote peer 10.0.0.2<50312>"))
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from preflight.explain.tolerant import compile_tolerant

CATEGORIES = (
    "port-in-use", "privileged-port", "master-unreachable", "name-resolution", "hostname-loopback",
    "wrong-interface", "address-family", "firewall", "rendezvous", "store-timeout", "launch-args",
    "version-mismatch", "shm", "memlock", "rdma", "fabric", "mtu", "p2p", "device-mapping", "oom",
    "hccl-timeout", "hccl-port", "hccl-stale-process", "hccl-link", "ssh", "hostfile", "driver",
    "collective-mismatch", "open-files", "app-fault", "unknown",
)
# "app-fault" (issue 38, the vendor code tables): the job's own device code failed - a kernel/operator bug or
# rejected inputs, a runtime API misused (CUDA 710 cudaErrorAssert, Xid 13/31/43, CANN EZxxxx, ACL 507015
# AI Core exception, aclnn 561xxx): the model code or its op library, not the cluster, so no other category
# (and no host check) fits it.


@dataclass(frozen=True)
class Signature:
    """One known failure: the regexes that recognise its log line and what to do about it."""

    id: str
    category: str
    patterns: tuple[str, ...]
    cause: str
    fix: str
    checks: tuple[str, ...]
    source: str
    weight: int = 50
    root_cause: bool = True
    near: tuple[str, ...] = ()  # one of these must occur in the line or the 3 lines before it
    when: Callable[[re.Match[str]], bool] | None = None  # extra condition on the match
    unless: tuple[str, ...] = ()  # a line of the same log matching one of these makes the match moot
    compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    compiled_near: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    compiled_tolerant: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    compiled_unless: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", tuple(re.compile(p) for p in self.patterns))
        object.__setattr__(self, "compiled_near", tuple(re.compile(p, re.IGNORECASE) for p in self.near))
        object.__setattr__(self, "compiled_tolerant", tuple(compile_tolerant(p) for p in self.patterns))
        object.__setattr__(self, "compiled_unless", tuple(re.compile(p, re.IGNORECASE) for p in self.unless))

    def search(self, line: str) -> re.Match[str] | None:
        """The first pattern match in ``line`` that also satisfies ``when`` (None when there is none): the
        patterns as written, then their tolerant forms."""
        for patterns in (self.compiled, self.compiled_tolerant):
            for pattern in patterns:
                m = pattern.search(line)
                if m and (self.when is None or self.when(m)):
                    return m
        return None
