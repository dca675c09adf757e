"""Where the NVIDIA tools are on a node: shared by the gpu.* checks and ``--accelerator auto``.

``nvidia-smi`` and the RDMA tools are looked up on PATH, then in /usr/local/nvidia/bin (where NVIDIA's
container toolkit mounts the driver's tools; an SSH session into a container does not get the image's
PATH), then /usr/bin and /usr/sbin.
"""

from __future__ import annotations

from preflight.tools.common import Tool

NVIDIA_BIN = "/usr/local/nvidia/bin"
FOLDERS = f"PATH, {NVIDIA_BIN}, /usr/bin, /usr/sbin"  # where tool_paths looks, for a finding


def tool_paths(name: str) -> tuple[str, ...]:
    """Where a tool is looked for after PATH: the container toolkit's folder, then the system's.

    >>> tool_paths("ibstat")
    ('/usr/local/nvidia/bin/ibstat', '/usr/bin/ibstat', '/usr/sbin/ibstat')
    """
    return (f"{NVIDIA_BIN}/{name}", f"/usr/bin/{name}", f"/usr/sbin/{name}")


NVIDIA_SMI = Tool("nvidia-smi", tool_paths("nvidia-smi"), without="cannot see the GPUs", home="in /usr/bin",
                  install="install the NVIDIA driver (it ships nvidia-smi), e.g. apt-get install "
                          "nvidia-driver-<version>-server; in a container use the NVIDIA container toolkit")
IBSTAT = Tool("ibstat", tool_paths("ibstat"))
IBV_DEVINFO = Tool("ibv_devinfo", tool_paths("ibv_devinfo"))
