"""NCCL's ``NCCL WARN`` messages as a code table, keyed by their message template: the failures of the subsystems a
launch trips on (NET/IB, NET/Socket and the socket layer under it, Bootstrap, SHM, P2P and the cuMem handle exchange,
Proxy, RAS, and init's device, version and allocation checks), each family with its category and fix.

Source: every ``WARN("...")`` of NVIDIA/nccl's ``src/`` read at each release tag from v2.3.5-5 to v2.30.7-1
(``transport/net_ib.cc`` and ``transport/net_ib/``, ``transport/net_socket.cc``, ``misc/socket.cc`` /
``include/socket.h`` / ``os/linux.cc``, ``misc/ibvwrap.cc``, ``bootstrap.cc``, ``misc/shmutils.cc`` /
``include/shm.h``, ``transport/p2p.cc``, ``misc/ipcsocket.cc``, ``proxy.cc``, ``ras/ras.cc``, ``init.cc``,
``include/alloc.h``, ``include/checks.h``, ``misc/cudawrap.cc``, ``misc/nvmlwrap.cc``; before 2.10 ``include/core.h``'s
SYSCHECK ``Call to <call> failed``); the wordings of older and newer versions are kept
side by side (``table_nccl_warn_rows``). Left out: NCCL's internal consistency checks (``pass NULL socket``, ``Proxy
append out of bounds``...), settings it only clamps, and ``Cuda failure '...'`` (the CUDA table decodes its text).

A template is matched tolerantly: case, runs of spaces and the spacing around ``:`` and ``,`` do not matter (NCCL
printed ``Net : Connect to`` and ``socketStartConnect: Connect to``), and each ``%s``/``%d``/``%p``/``%x`` stands for
whatever the log has there (addresses, device names, errno texts). A leading ``%s:`` is a function name.

>>> [d.code.name for d in TABLE.decode("host:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion "
...     "from peer 10.0.0.2<46532> with error 12, opcode 0, len 0, vendor err 129")]
['NET/IB: completion error']
>>> [d.code.category for d in TABLE.decode("NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory")]
['memlock']
>>> [d.code.name for d in TABLE.decode("socketStartConnect: connect to 10.1.1.5<38211> FAILED:   No route to host")]
['NET/Socket: connect failed']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_nccl_warn_rows import FIXES, ROWS

SOURCE = "https://github.com/NVIDIA/nccl/tree/v2.30.7-1/src"
VERSION = "NCCL 2.30.7-1 (WARN messages of 2.3-2.30)"

CHECKS: dict[str, tuple[str, ...]] = {
    "rdma": ("gpu.fabric.devices", "gpu.fabric.ports", "nccl.ib_hca"), "memlock": ("os.memlock",),
    "fabric": ("net.reachability", "gpu.fabric.ports"), "firewall": ("firewall.rules", "net.reachability"),
    "wrong-interface": ("net.interface",), "address-family": ("net.address_family", "net.interface"),
    "name-resolution": ("net.master_resolution", "net.hostname"), "open-files": ("os.files",),
    "port-in-use": ("ports.listening",), "shm": ("os.shm",), "p2p": ("allreduce",),
    "launch-args": ("gpu.devices.count", "nccl.visible_devices"), "device-mapping": ("gpu.devices.count",
                                                                                    "nccl.visible_devices"),
    "collective-mismatch": ("versions.nccl", "nccl.conf"), "version-mismatch": ("versions.nccl",),
    "driver": ("gpu.devices.driver", "versions.gpu_driver"), "oom": ("gpu.devices.processes",),
}
_SPEC = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?([sdiuxXpmfgc%])")
_PIECE = {"s": ".*?", "m": ".*?", "d": r"-?\d+", "i": r"-?\d+", "u": r"\d+", "x": r"(?:0x)?[0-9a-f]+",
          "X": r"(?:0x)?[0-9a-f]+", "p": r"\S+", "f": r"[-+\d.e]+", "g": r"[-+\d.e]+", "c": ".", "%": "%"}


def normalize(text: str) -> str:
    """Lower case, one space for any run of blanks, and ``:`` / ``,`` written ``x: y`` / ``x, y``.

    >>> normalize("Net : Connect to  10.0.0.1<1234> failed :Connection refused")
    'net: connect to 10.0.0.1<1234> failed: connection refused'
    """
    text = re.sub(r"\s+", " ", text.lower())
    return re.sub(r" ?([:,]) ?", r"\1 ", text).strip()


def _regex(template: str) -> re.Pattern[str]:
    """A template's printf text as a regex over normalized lines (a leading ``%s`` is a function name)."""
    norm = normalize(template)
    out, at = [], 0
    for m in _SPEC.finditer(norm):
        out.append(re.escape(norm[at:m.start()]))
        out.append(r"\w+" if m.start() == 0 and m[1] == "s" else _PIECE[m[1]])
        at = m.end()
    out.append(re.escape(norm[at:]))
    return re.compile("".join(out).replace(r"\ ", " "))


_TOKEN = re.compile(r"[a-z0-9_]+")


def _word(template: str) -> str:
    """The longest whole word of a template's literal text: a line without that word cannot match (a cheap test
    before the regex). Words touching a ``%`` field are not whole (``0x%lx``)."""
    pieces = _SPEC.sub("\0", normalize(template)).split("\0")
    words = [w[0] for i, piece in enumerate(pieces) for w in _TOKEN.finditer(piece)
             if not (i > 0 and w.start() == 0) and not (i < len(pieces) - 1 and w.end() == len(piece))]
    return max(words, key=len)


def _codes() -> tuple[dict[str, Code], dict[str, list[tuple[re.Pattern[str], str]]]]:
    entries: dict[str, Code] = {}
    patterns: dict[str, list[tuple[re.Pattern[str], str]]] = {}
    for family, short, category, root, fix, meaning, templates in ROWS:
        key = normalize(templates[0][0])
        entries[key] = Code(key, f"{family}: {short}", meaning, category, FIXES[fix], CHECKS[category], root)
        for template, _versions in templates:
            patterns.setdefault(_word(template), []).append((_regex(template), key))
    return entries, patterns


ENTRIES, _PATTERNS = _codes()


def find(line: str) -> list[str]:
    """The WARN templates a line carries (each once, in the order they appear in the line)."""
    words = set(_TOKEN.findall(line.lower())) & _PATTERNS.keys()
    if not words:
        return []
    norm = normalize(line)
    found = sorted((m.start(), -len(m[0]), key) for word in words for pattern, key in _PATTERNS[word]
                   if (m := pattern.search(norm)))
    out: list[str] = []
    for _, _, key in found:
        if key not in out:
            out.append(key)
    return out


TABLE = CodeTable("nccl_warn", SOURCE, VERSION, ENTRIES, find)
