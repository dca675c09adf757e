"""The plan of ``preflight fix``: changes per host, and their JSON (``--plan-out FILE``, ``--apply FILE``).

Immutable data only; what a change is for and how it is built: ``policy.py`` and the builders beside it.

>>> edit = FileEdit("/etc/sysctl.d/90-preflight.conf", None, "net.core.somaxconn = 4096\\n")
>>> change = Change("n1", ("sysctl.somaxconn",), "sysctl", "net.core.somaxconn 128 -> 4096", files=(edit,),
...                 commands=(("sysctl", "-p", edit.path),))
>>> plan = Plan("r1", "2025-01-01T00:00:00+00:00", POLICY_VERSION, (HostPlan("n1", (change,)),))
>>> Plan.loads(plan.dumps()) == plan
True
>>> print(edit.diff(), end="")
--- /dev/null
+++ b/etc/sysctl.d/90-preflight.conf
@@ -0,0 +1 @@
+net.core.somaxconn = 4096
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

Argv = tuple[str, ...]
KINDS = ("sysctl", "reserved_ports", "firewall", "device_ip", "print")
SCHEMA = "preflight.fix-plan/1"
POLICY_VERSION = "1"  # docs/fix.md's policy; raised whenever what fix may change changes


def digest(data: Any) -> str:
    """sha256 of ``data`` as canonical JSON (sorted keys, no spaces).

    >>> digest({"b": 1, "a": [1, 2]}) == digest({"a": [1, 2], "b": 1})
    True
    >>> len(digest(None))
    64
    """
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class FileEdit:
    """One file written whole: ``before`` (None: it does not exist) becomes ``after``."""

    path: str
    before: str | None
    after: str

    def diff(self) -> str:
        """A unified diff, ``--- a/PATH`` (or /dev/null for a new file) ``+++ b/PATH``; "" when nothing changes."""
        name = self.path.lstrip("/")
        old = "/dev/null" if self.before is None else f"a/{name}"
        lines = difflib.unified_diff((self.before or "").splitlines(keepends=True),
                                     self.after.splitlines(keepends=True), old, f"b/{name}")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


@dataclass(frozen=True)
class Undo:
    """What takes a change out again: files put back (None: remove it), sysctl values put back in /proc/sys, and
    commands (a firewall rule deleted)."""

    files: tuple[tuple[str, str | None], ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    commands: tuple[Argv, ...] = ()


@dataclass(frozen=True)
class DeviceIp:
    """An NPU device's IP set with hccn_tool (``--include hccn.ip``): the tool and npu-smi as the checks found them,
    the device (hccn_tool's ``-i``), the address and netmask to set, what it had when planned (None: no IP).

    >>> ip = DeviceIp("/t/hccn_tool", "/t/npu-smi", 1, "10.0.1.21", "255.255.255.0", ("10.0.9.21", "255.255.255.0"))
    >>> DeviceIp.from_dict(ip.to_dict()) == ip
    True
    """

    tool: str
    smi: str
    device: int
    address: str
    netmask: str
    before: tuple[str, str] | None  # (address, netmask) when planned

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "smi": self.smi, "device": self.device, "address": self.address,
                "netmask": self.netmask, "before": list(self.before) if self.before else None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeviceIp:
        before = data.get("before")
        device = data["device"]
        if not isinstance(device, int) or isinstance(device, bool):
            raise TypeError(f"expected a device number, got {type(device).__name__}")
        return cls(_str(data["tool"]), _str(data["smi"]), device, _str(data["address"]), _str(data["netmask"]),
                   None if before is None else (_str(before[0]), _str(before[1])))


@dataclass(frozen=True)
class Change:
    """One change on one host: the files it writes, the commands it runs, what must hold afterwards, its undo.

    ``kind`` "print": nothing is applied; ``remedy`` is the exact command for a person to run.
    """

    host: str
    fixes: tuple[str, ...]  # the finding ids it answers
    kind: str
    summary: str
    files: tuple[FileEdit, ...] = ()
    commands: tuple[Argv, ...] = ()
    verify: tuple[str, ...] = ()  # finding ids to re-run after applying
    expect: tuple[tuple[str, str], ...] = ()  # sysctl key -> value that must be in force afterwards
    undo: Undo = field(default_factory=Undo)
    notes: tuple[str, ...] = ()
    remedy: str = ""
    device_ip: DeviceIp | None = None  # kind "device_ip": the device, read and checked by its own probes

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown change kind {self.kind!r} (one of {', '.join(KINDS)})")

    @property
    def applicable(self) -> bool:
        return self.kind != "print"

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "fixes": list(self.fixes), "kind": self.kind, "summary": self.summary,
                "files": [{"path": f.path, "before": f.before, "after": f.after} for f in self.files],
                "commands": [list(c) for c in self.commands], "verify": list(self.verify),
                "expect": dict(self.expect), "notes": list(self.notes), "remedy": self.remedy,
                "undo": {"files": dict(self.undo.files), "values": dict(self.undo.values),
                         "commands": [list(c) for c in self.undo.commands]},
                **({"device_ip": self.device_ip.to_dict()} if self.device_ip else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Change:
        undo = data.get("undo") or {}
        return cls(
            host=_str(data["host"]), fixes=_strs(data.get("fixes", ())), kind=_str(data["kind"]),
            summary=_str(data.get("summary", "")),
            files=tuple(FileEdit(_str(f["path"]), None if f.get("before") is None else _str(f["before"]),
                                 _str(f["after"])) for f in data.get("files", ())),
            commands=tuple(_strs(c) for c in data.get("commands", ())), verify=_strs(data.get("verify", ())),
            expect=_pairs(data.get("expect", {})), notes=_strs(data.get("notes", ())),
            remedy=_str(data.get("remedy", "")),
            undo=Undo(files=tuple((_str(k), None if v is None else _str(v)) for k, v in undo.get("files", {}).items()),
                      values=_pairs(undo.get("values", {})),
                      commands=tuple(_strs(c) for c in undo.get("commands", ()))),
            device_ip=DeviceIp.from_dict(data["device_ip"]) if data.get("device_ip") else None)


@dataclass(frozen=True)
class HostPlan:
    """A host's changes, in the order they run, and the state they were planned from.

    ``state``: part ("sysctl", "reserved_ports", "firewall") -> the digest of the facts that part's changes were
    made from; ``--apply FILE`` refuses the host when one differs now. ``notes``: what could not be planned.
    """

    host: str  # "": the cluster-wide findings (their remedies are printed only)
    changes: tuple[Change, ...]
    state: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        """One digest of ``state``."""
        return digest(sorted(self.state))

    @property
    def applicable(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.applicable)

    def same_as(self, other: HostPlan) -> bool:
        """Whether the two hosts' plans read the same once the host's name is taken out (render folds them).

        >>> HostPlan("a", (Change("a", ("x",), "print", "s", remedy="r a"),)).same_as(
        ...     HostPlan("b", (Change("b", ("x",), "print", "s", remedy="r b"),)))
        True
        """
        return self.shape() == other.shape()

    def shape(self) -> str:
        """This plan as JSON with the host's own name replaced by HOST (for folding identical hosts)."""
        data = [c.to_dict() for c in self.changes], list(self.notes)
        text = json.dumps(data, sort_keys=True)
        name = re.escape(json.dumps(self.host)[1:-1])
        return re.sub(rf"(?<![\w.-]){name}(?![\w-]|\.\w)", "HOST", text) if self.host else text


@dataclass(frozen=True)
class Plan:
    """Every host's plan, as ``--plan-out`` writes it and ``--apply FILE`` reads it back."""

    run_id: str
    created: str  # ISO 8601, UTC
    policy: str
    hosts: tuple[HostPlan, ...]
    include: tuple[str, ...] = ()

    @property
    def applicable(self) -> tuple[HostPlan, ...]:
        """The hosts with a change to apply."""
        return tuple(h for h in self.hosts if h.applicable)

    def host(self, name: str) -> HostPlan | None:
        return next((h for h in self.hosts if h.host == name), None)

    def without(self, hosts: Iterable[str]) -> Plan:
        """The plan less ``hosts``."""
        drop = set(hosts)
        return replace(self, hosts=tuple(h for h in self.hosts if h.host not in drop))

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "run_id": self.run_id, "created": self.created, "policy": self.policy,
                "include": list(self.include),
                "hosts": [{"host": h.host, "state": dict(h.state), "fingerprint": h.fingerprint,
                           "notes": list(h.notes), "changes": [c.to_dict() for c in h.changes]}
                          for h in self.hosts]}

    @classmethod
    def from_dict(cls, data: Any) -> Plan:
        """The plan of :meth:`to_dict`; ValueError on anything else (another schema, a field of the wrong type).

        >>> Plan.from_dict({"schema": "preflight.report/1"})
        Traceback (most recent call last):
        ValueError: not a preflight fix plan (schema 'preflight.report/1', expected 'preflight.fix-plan/1')
        """
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
            schema = data.get("schema") if isinstance(data, Mapping) else type(data).__name__
            raise ValueError(f"not a preflight fix plan (schema {schema!r}, expected {SCHEMA!r})")
        try:
            hosts = []
            for h in data["hosts"]:
                host = HostPlan(_str(h["host"]), tuple(Change.from_dict(c) for c in h.get("changes", ())),
                                _pairs(h.get("state", {})), _strs(h.get("notes", ())))
                if h.get("fingerprint") not in (None, host.fingerprint):
                    raise ValueError(f"host {host.host}: its fingerprint does not match its state (edited?)")
                hosts.append(host)
            return cls(_str(data["run_id"]), _str(data["created"]), _str(data["policy"]), tuple(hosts),
                       _strs(data.get("include", ())))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a readable preflight fix plan: {type(exc).__name__}: {exc}") from None

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def loads(cls, text: str) -> Plan:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not a preflight fix plan: not JSON ({exc})") from None
        return cls.from_dict(data)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _strs(values: Any) -> tuple[str, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise TypeError(f"expected a list of strings, got {type(values).__name__}")
    return tuple(_str(v) for v in values)


def _pairs(data: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(data, Mapping):
        raise TypeError(f"expected an object, got {type(data).__name__}")
    return tuple((_str(k), _str(v)) for k, v in data.items())
