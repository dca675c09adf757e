"""Where the NVIDIA tools are found on a node: shared by gpu.devices and gpu.fabric.

``nvidia-smi`` and the RDMA tools are looked up on PATH, then in /usr/local/nvidia/bin (where NVIDIA's
container toolkit mounts the driver's tools; an SSH session into a container does not get the image's
PATH), then /usr/bin and /usr/sbin.
"""

from __future__ import annotations

import shlex

from preflight.ascend.hccn_tool import find_tool_snippet

NVIDIA_BIN = "/usr/local/nvidia/bin"


def tool_paths(name: str) -> tuple[str, ...]:
    """Where a tool is looked for after PATH: the container toolkit's folder, then the system's.

    >>> tool_paths("ibstat")
    ('/usr/local/nvidia/bin/ibstat', '/usr/bin/ibstat', '/usr/sbin/ibstat')
    """
    return (f"{NVIDIA_BIN}/{name}", f"/usr/bin/{name}", f"/usr/sbin/{name}")


def tool_command(name: str, *args: str) -> str:
    """Shell running ``name ARGS`` from PATH or the usual folders; exit 127 when it is nowhere."""
    return f't=$({find_tool_snippet(name, tool_paths(name))}) || exit 127; "$t" {shlex.join(args)}'.rstrip()
