"""versions' python probe, run on a node as ``python -S -c SOURCE [more distribution names]``.

-S skips site's start-up work (.pth files and all), and package versions come from the dist-info /
egg-info directory names on the interpreter's search path instead of importlib.metadata. It imports
neither json nor re (each costs as much as the interpreter's own start): ~9 ms instead of ~60 ms per
host. The site dirs are rebuilt as `site` would. Must work on python >= 3.6 and never import torch.
Prints one JSON object.
"""
import os
import sys

from preflight.node.json_writer import js  # JSON_WRITER: this line is replaced by js() itself when shipped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
dirs = list(sys.path)
try:
    import site
    # With -S, site has not applied the venv: find its pyvenv.cfg the way site.venv() does.
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    cfgs = [c for c in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(os.path.dirname(exe_dir), "pyvenv.cfg"))
            if os.path.isfile(c)]
    if cfgs:
        # A venv's own dir, as venv lays it out. site.getsitepackages([venv]) alone is not enough: Debian's and
        # Ubuntu's site.py adds lib/pythonX.Y/site-packages only once sys.prefix is the venv, which -S leaves
        # at the base interpreter's (their system python lists dist-packages dirs only).
        venv_dir = os.path.dirname(cfgs[0])
        for libdir in (getattr(sys, "platlibdir", "lib"), "lib"):
            dirs.append(os.path.join(venv_dir, libdir, "python%d.%d" % sys.version_info[:2], "site-packages"))
        dirs += site.getsitepackages([venv_dir])
        with open(cfgs[0]) as cfg:
            for line in cfg:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages" and value.strip().lower() == "true":
                    dirs += site.getsitepackages([sys.base_prefix])
    else:
        dirs += site.getsitepackages()
        if site.check_enableusersite():
            dirs.append(site.getusersitepackages())
except Exception:
    pass
found_dirs = []  # type: list[str]
for d in dirs:
    if d and d not in found_dirs and os.path.isdir(d):
        found_dirs.append(d)
listing = {}  # type: dict[str, list[str]]
def entries(d):  # type: (str) -> list[str]
    if d not in listing:
        try:
            listing[d] = os.listdir(d)
        except OSError:
            listing[d] = []
    return listing[d]
def norm(name):  # type: (str) -> str
    out, sep = [], False
    for ch in name.lower():
        if ch in "-_.":
            if not sep:
                out.append("_")
            sep = True
        else:
            out.append(ch)
            sep = False
    return "".join(out)
def name_version(entry):  # type: (str) -> tuple[str, str] | None
    for suffix in (".dist-info", ".egg-info"):
        if entry.endswith(suffix):
            parts = entry[:-len(suffix)].split("-")
            tag = parts[-1]
            if len(parts) > 2 and tag[:2] == "py" and len(tag) > 2 and not tag[2:].strip("0123456789."):
                parts = parts[:-1]
            if len(parts) > 1 and parts[-1] and all(parts[:-1]):
                return "-".join(parts[:-1]), parts[-1]
    return None
index = {}  # type: dict[str, tuple[int, str]]  # name -> (search order, version): one pass over the dirs
for d in found_dirs:
    for entry in entries(d):
        found = name_version(entry)  # None unless a .dist-info / .egg-info name
        if found:
            index.setdefault(norm(found[0]), (len(index), found[1]))
def dist(*names):  # type: (*str) -> str | None
    hits = [index[n] for n in set(norm(n) for n in names) if n in index]
    return min(hits)[1] if hits else None
def cuda_of(text):  # type: (str) -> str | None
    for line in text.splitlines():
        head, sep, value = line.partition("=")
        head = head.rstrip()
        if sep and (head == "cuda" or (head[:4] == "cuda" and head[4:].lstrip()[:1] == ":")):
            value = value.strip()
            end = min([i for i in (value.find("'", 1), value.find('"', 1)) if i > 1] or [0])
            return value[1:end] if value[:1] in "'\"" and end else None
    return None
out = {"python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable}  # type: dict[str, Any]
out["torch"] = dist("torch")
out["torch_npu"] = dist("torch_npu")
out["nccl"] = dist("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11")
out["extra"] = dict((name, dist(name)) for name in sys.argv[1:])  # more names: used by the tests
out["cuda"] = None
for d in found_dirs:
    if "torch" in entries(d) and os.path.isfile(os.path.join(d, "torch", "version.py")):
        try:
            with open(os.path.join(d, "torch", "version.py")) as handle:
                out["cuda"] = cuda_of(handle.read())
        except Exception:
            pass
        break
print(js(out))
