"""Where the Ascend tools are on a node: shared by the npu.* and hccn.* checks and ``--accelerator auto``.

``npu-smi`` and ``hccn_tool`` are often not on PATH: they are looked up there first, then where the driver
package installs them.
"""

from __future__ import annotations

from preflight.tools.common import Tool

NPU_SMI_PATHS = ("/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/tools/npu-smi")
NPU_SMI = Tool("npu-smi", NPU_SMI_PATHS, without="cannot see the NPUs", home=f"at {NPU_SMI_PATHS[-1]}",
               install="install the Ascend NPU driver package (it ships npu-smi), e.g. "
                       "./Ascend-hdk-*-npu-driver_*.run --full")
HCCN_TOOL_PATH = "/usr/local/Ascend/driver/tools/hccn_tool"
HCCN_TOOL = Tool("hccn_tool", (HCCN_TOOL_PATH,), home=f"at {HCCN_TOOL_PATH}",
                 without="the Ascend driver is not installed, or not where HCCL expects it",
                 install="install the Ascend driver (Ascend-hdk-*-npu-driver_*.run --full), then "
                         f"ls -l {HCCN_TOOL_PATH}")
