"""known_hosts files read once per run and indexed by host name.

paramiko's ``load_system_host_keys`` parses the whole file for every connection and then scans
every entry for the one host (``HostKeys.load`` is itself quadratic in the file's length): with one
line per node, a 64-host run parsed 4,096 keys and a 1,000-host run would parse a million. Here
each file is parsed once (again only when its size or mtime changes, e.g. after
``--accept-new-host-keys`` appended to it), plain names go into a dict, and only hashed entries
(``|1|salt|hash``) are tried one by one.

>>> import tempfile, os
>>> key = "AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f"
>>> with tempfile.NamedTemporaryFile("w", suffix="_known_hosts", delete=False) as f:
...     _ = f.write(f"# comment\\n10.0.0.1,node1 ssh-ed25519 {key}\\nnot a key line\\nnode2 ssh-ed25519 AAAA=\\n")
>>> sorted(host_keys(f.name, "node1")), host_keys(f.name, "10.0.0.2"), host_keys(f.name, "node2")
(['ssh-ed25519'], {}, {})
>>> os.unlink(f.name)
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import paramiko
from paramiko.hostkeys import HostKeyEntry
from paramiko.util import constant_time_bytes_eq


@dataclass
class _Index:
    stamp: tuple[int, int]  # (size, mtime_ns) the index was built from
    plain: dict[str, dict[str, paramiko.PKey]] = field(default_factory=dict)
    hashed: list[tuple[str, str, paramiko.PKey]] = field(default_factory=list)  # (|1|salt|hash, type, key)


_CACHE: dict[str, _Index] = {}
_LOCK = threading.Lock()


def _build(path: str, stamp: tuple[int, int]) -> _Index:
    """Parse ``path`` like paramiko's ``HostKeys.load`` (unparsable lines skipped; the first key per type wins)."""
    index = _Index(stamp)
    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, raw in enumerate(handle, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            try:
                entry = HostKeyEntry.from_line(line, lineno)
            except Exception:  # a line paramiko cannot read (bad base64, unknown key type) is no key: skip it
                continue
            if entry is None or entry.key is None:
                continue
            for name in entry.hostnames:
                if name.startswith("|1|"):
                    index.hashed.append((name, entry.key.get_name(), entry.key))
                else:
                    index.plain.setdefault(name, {}).setdefault(entry.key.get_name(), entry.key)
    return index


def _index(path: str) -> _Index:
    info = os.stat(path)
    stamp = (info.st_size, info.st_mtime_ns)
    with _LOCK:
        cached = _CACHE.get(path)
        if cached is None or cached.stamp != stamp:
            cached = _CACHE[path] = _build(path, stamp)
        return cached


def host_keys(path: str, name: str) -> dict[str, paramiko.PKey]:
    """Key type -> key recorded for ``name`` (``address`` or ``[address]:port``) in the known_hosts file ``path``.

    Raises OSError when the file cannot be read.
    """
    index = _index(path)
    found = dict(index.plain.get(name, {}))
    for hashed, keytype, key in index.hashed:
        if keytype not in found and constant_time_bytes_eq(paramiko.HostKeys.hash_host(name, hashed), hashed):
            found[keytype] = key
    return found
