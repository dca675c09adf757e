"""NVIDIA's Xid catalog as data: every code's mnemonic, description and recommended action, and how to read a line.

Source: NVIDIA, "Analyzing Xid Errors with the Xid Catalog",
https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html: its table "Xids" (Code, Mnemonic, Description,
"Resolution Bucket (Immediate Action)", "Resolution Bucket (Investigatory Action)") for codes 1-172, the "XID
144-150 Decode" table (whose Severity column the NVLink lines print: ``Fatal`` rows are RESET_GPU, ``Nonfatal`` rows
IGNORE or XID_154_EVAL) and the "Guidance Class" table (``ACTIONS`` below, shortened). Catalog version: the r590
catalog as NVIDIA's spreadsheet (Xid-Catalog.xlsx) stood on 2025-10-29, the day leptonai/gpud generated
https://github.com/leptonai/gpud/blob/b9842de2b11177a482560391805f1691c9ef9607/components/accelerator/nvidia/xid/catalog_generated.go
from it; the rows below are that file's, read against the page. Cross-checked with NVIDIA/NVSentinel's
https://github.com/NVIDIA/NVSentinel/blob/6f8b0fcfa8e502bdda78fabf96facef729a9285b/distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv
(codes 1-162), which differs only where the page is followed here: 160 (it says RESTART_BM, the page IGNORE), 162
(RESET_GPU; the page gives no action), 108 and the unused codes (UNEXPECTED_ERR_REPORT_ISSUE for CONTACT_SUPPORT).
Codes 162-172 have no action in the catalog yet.

Neutral: data and pure look-ups, no check or explain imports (``gpu.xid`` judges with it; ``explain`` may name
codes with ``describe``).

>>> XIDS[79].action, XIDS[79].category, assess(79).level
('RESTART_BM', 'bus', 'fatal')
>>> line = parse_line("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 "
...                   "caused by previous Xid 149")
>>> line.bus, line.code, line.cause, assess(45, line.text).level, assess(line.cause or 0).level
('0000:dc:00', 45, 149, 'benign', 'fatal')
>>> assess(145, "RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008)").level
'benign'
>>> assess(154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)").action
'GPU Reset Required'
>>> describe(119)
'Xid 119 GSP_RPC_TIMEOUT (GSP RPC Timeout): RESET_GPU'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

SOURCE = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
VERSION = "NVIDIA Xid catalog r590, spreadsheet of 2025-10-29"

# (code, mnemonic, description, immediate action, investigatory action), the catalog's rows in order.
_ROWS: tuple[tuple[int, str, str, str, str], ...] = (
    (1, "ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD", "Unused", "CONTACT_SUPPORT", ""),
    (2, "ROBUST_CHANNEL_FIFO_ERROR_SW_METHOD", "Unused", "CONTACT_SUPPORT", ""),
    (3, "ROBUST_CHANNEL_FIFO_ERROR_UNK_METHOD", "Unused", "CONTACT_SUPPORT", ""),
    (4, "ROBUST_CHANNEL_FIFO_ERROR_CHANNEL_BUSY", "Unused", "CONTACT_SUPPORT", ""),
    (5, "ROBUST_CHANNEL_FIFO_ERROR_RUNOUT_OVERFLOW", "Unused", "CONTACT_SUPPORT", ""),
    (6, "ROBUST_CHANNEL_FIFO_ERROR_PARSE_ERR", "Unused", "CONTACT_SUPPORT", ""),
    (7, "ROBUST_CHANNEL_FIFO_ERROR_PTE_ERR", "Unused", "CONTACT_SUPPORT", ""),
    (8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", "RESTART_APP", "CONTACT_SUPPORT"),
    (9, "ROBUST_CHANNEL_GR_ERROR_INSTANCE", "Unused", "CONTACT_SUPPORT", ""),
    (10, "ROBUST_CHANNEL_GR_ERROR_SINGLE_STEP", "Unused", "CONTACT_SUPPORT", ""),
    (11, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW",
     "Invalid or corrupted push buffer stream",
     "RESTART_APP", "CHECK_APP/CUDA"),
    (12, "ROBUST_CHANNEL_GR_ERROR_SW_METHOD", "Unused", "CONTACT_SUPPORT", ""),
    (13, "ROBUST_CHANNEL_GR_EXCEPTION / ROBUST_CHANNEL_GR_ERROR_SW_NOTIFY",
     "Graphics Engine Exception",
     "RESTART_APP", "WORKFLOW_XID_13"),
    (14, "ROBUST_CHANNEL_FAKE_ERROR", "Unused", "IGNORE", "CONTACT_SUPPORT"),
    (15, "ROBUST_CHANNEL_SCANLINE_TIMEOUT", "Unused", "CONTACT_SUPPORT", ""),
    (16, "ROBUST_CHANNEL_VBLANK_CALLBACK_TIMEOUT", "Unused", "CONTACT_SUPPORT", "CONTACT_SUPPORT"),
    (17, "ROBUST_CHANNEL_PARAMETER_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (18, "ROBUST_CHANNEL_BUS_MASTER_TIMEOUT_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (19, "ROBUST_CHANNEL_DISP_MISSED_NOTIFIER", "Unused", "CONTACT_SUPPORT", ""),
    (20, "ROBUST_CHANNEL_MPEG_ERROR_SW_METHOD", "Unused", "CONTACT_SUPPORT", ""),
    (21, "ROBUST_CHANNEL_ME_ERROR_SW_METHOD", "Unused", "CONTACT_SUPPORT", ""),
    (22, "ROBUST_CHANNEL_VP_ERROR_SW_METHOD", "Unused", "CONTACT_SUPPORT", ""),
    (23, "ROBUST_CHANNEL_RC_LOGGING_ENABLED", "Unused", "CONTACT_SUPPORT", ""),
    (24, "ROBUST_CHANNEL_GR_SEMAPHORE_TIMEOUT", "Unused", "CONTACT_SUPPORT", ""),
    (25, "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY", "Invalid or illegal push buffer stream", "RESTART_APP", "CHECK_APP/CUDA"),
    (26, "ROBUST_CHANNEL_FIFO_ERROR_FBISTATE_TIMEOUT", "Unused", "CONTACT_SUPPORT", ""),
    (27, "ROBUST_CHANNEL_VP_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (28, "ROBUST_CHANNEL_VP2_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (29, "ROBUST_CHANNEL_BSP_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (30, "ROBUST_CHANNEL_BAD_ADDR_ACCESS", "Unused", "CONTACT_SUPPORT", ""),
    (31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP", "WORKFLOW_XID_31"),
    (32, "ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", "RESTART_APP", "CHECK_APP/CUDA"),
    (33, "ROBUST_CHANNEL_SEC_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (34, "ROBUST_CHANNEL_MSVLD_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (35, "ROBUST_CHANNEL_MSPDEC_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (36, "ROBUST_CHANNEL_MSPPP_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (37, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD", "Driver firmware error", "IGNORE", "CHECK_APP/CUDA"),
    (38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "Driver firmware error", "IGNORE", "CONTACT_SUPPORT"),
    (39, "ROBUST_CHANNEL_CE0_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT"),
    (40, "ROBUST_CHANNEL_CE1_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT"),
    (41, "ROBUST_CHANNEL_CE2_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT"),
    (42, "ROBUST_CHANNEL_VIC_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE", "CONTACT_SUPPORT"),
    (44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW",
     "Graphics Engine fault during context switch",
     "IGNORE", "CONTACT_SUPPORT"),
    (45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
     "Preemptive cleanup, due to previous errors – Most likely to see when running multiple cuda applications "
     "and hitting a DBE",
     "WORKFLOW_XID_45", "Solo: RESTART_FM Not Solo: IGNORE (follow other Xid)"),
    (46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", "RESET_GPU", "CONTACT_SUPPORT"),
    (47, "ROBUST_CHANNEL_NVENC0_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48", "WORKFLOW_XID_48"),
    (49, "SILENT_RUNNING_CONSTANT_LEVEL_SET_BY_REGISTRY", "Unused", "CONTACT_SUPPORT", ""),
    (50, "SILENT_RUNNING_LEVEL_TRANSITION_DUE_TO_RC_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (51, "SILENT_RUNNING_STRESS_TEST_FAILURE", "Unused", "CONTACT_SUPPORT", ""),
    (52, "SILENT_RUNNING_LEVEL_TRANS_DUE_TO_TEMP_RISE", "Unused", "CONTACT_SUPPORT", ""),
    (53, "SILENT_RUNNING_TEMP_REDUCED_CLOCKING", "Unused", "CONTACT_SUPPORT", ""),
    (54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING",
     "Auxiliary power is not connected to the GPU board",
     "CHECK_MECHANICALS", "CONTACT_SUPPORT"),
    (55, "SILENT_RUNNING_TEMPERATURE_READ_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (56, "DISPLAY_CHANNEL_EXCEPTION", "Unused", "CONTACT_SUPPORT", ""),
    (57, "FB_LINK_TRAINING_FAILURE_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (58, "FB_MEMORY_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (59, "PMU_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (60, "ROBUST_CHANNEL_SEC2_ERROR", "Video processor exception", "RESTART_APP", "INVESTIGATE_SW"),
    (61, "PMU_BREAKPOINT", "Unused", "CONTACT_SUPPORT", ""),
    (62, "PMU_HALT_ERROR", "Internal micro-controller halt (newer drivers)", "RESET_GPU", "CONTACT_SUPPORT"),
    (63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE", "IGNORE"),
    (64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU", "CONTACT_SUPPORT"),
    (65, "ROBUST_CHANNEL_NVENC1_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (66, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", "Illegal access by driver", "IGNORE", "INVESTIGATE_SW"),
    (67, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", "Illegal access by driver", "IGNORE", "CONTACT_SUPPORT"),
    (68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 Exception", "RESTART_APP", "CONTACT_SUPPORT"),
    (69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "Graphics Engine class error", "RESTART_APP", "CHECK_APP/CUDA"),
    (70, "ROBUST_CHANNEL_CE3_ERROR", "CE3: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (71, "ROBUST_CHANNEL_CE4_ERROR", "CE4: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (72, "ROBUST_CHANNEL_CE5_ERROR", "CE5: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (73, "ROBUST_CHANNEL_NVENC2_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (74, "NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT"),
    (75, "ROBUST_CHANNEL_CE6_ERROR", "CE6: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (76, "ROBUST_CHANNEL_CE7_ERROR", "CE7: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (77, "ROBUST_CHANNEL_CE8_ERROR", "CE8: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (78, "VGPU_START_ERROR", "vGPU Start Error", "UPDATE_SWFW", "UPDATE_SWFW"),
    (79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM", "CONTACT_SUPPORT"),
    (80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "Corrupted data sent to GPU", "RESTART_APP", "CHECK_APP/CUDA"),
    (81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (82, "ROBUST_CHANNEL_NVJPG0_ERROR", "NVJPG0 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (83, "ROBUST_CHANNEL_NVDEC1_ERROR", "NVDEC1 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (84, "ROBUST_CHANNEL_NVDEC2_ERROR", "NVDEC2 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (85, "ROBUST_CHANNEL_CE9_ERROR", "CE9: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (86, "ROBUST_CHANNEL_OFA0_ERROR", "OFA Exception", "RESTART_APP", "CONTACT_SUPPORT"),
    (87, "NVTELEMETRY_DRIVER_REPORT", "Unused", "CONTACT_SUPPORT", ""),
    (88, "ROBUST_CHANNEL_NVDEC3_ERROR", "NVDEC3 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (89, "ROBUST_CHANNEL_NVDEC4_ERROR", "NVDEC4 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (90, "LTC_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (91, "RESERVED_XID", "Unused", "CONTACT_SUPPORT", ""),
    (92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "IGNORE", "CONTACT_SUPPORT"),
    (93, "INFOROM_ERASE_LIMIT_EXCEEDED",
     "Non-fatal violation of provisioned InfoROM wear limit",
     "IGNORE", "CONTACT_SUPPORT"),
    (94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP", "IGNORE (sympathetic)"),
    (95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU", "IGNORE (sympathetic)"),
    (96, "ROBUST_CHANNEL_NVDEC5_ERROR", "NVDEC5 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (97, "ROBUST_CHANNEL_NVDEC6_ERROR", "NVDEC6 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (98, "ROBUST_CHANNEL_NVDEC7_ERROR", "NVDEC7 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (99, "ROBUST_CHANNEL_NVJPG1_ERROR", "NVJPG1 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (100, "ROBUST_CHANNEL_NVJPG2_ERROR", "NVJPG2 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (101, "ROBUST_CHANNEL_NVJPG3_ERROR", "NVJPG3 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (102, "ROBUST_CHANNEL_NVJPG4_ERROR", "NVJPG4 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (103, "ROBUST_CHANNEL_NVJPG5_ERROR", "NVJPG5 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (104, "ROBUST_CHANNEL_NVJPG6_ERROR", "NVJPG6 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (105, "ROBUST_CHANNEL_NVJPG7_ERROR", "NVJPG7 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (106, "SMBPBI_TEST_MESSAGE", "SMBPBI Test Message", "IGNORE", "IGNORE"),
    (107, "SMBPBI_TEST_MESSAGE_SILENT", "SMBPBI Test Message Silent", "IGNORE", "IGNORE"),
    (108, "NVLINK_REMOTE_TRANSLATION_ERROR", "Unused", "IGNORE", "XID_137_FLOW"),
    (109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", "RESET_GPU", "CONTACT_SUPPORT"),
    (110, "SEC_FAULT_ERROR", "Security Fault Error", "RESET_GPU", "INVESTIGATE_SW"),
    (111, "BUNDLE_ERROR_EVENT", "Unused", "CONTACT_SUPPORT", ""),
    (112, "DISP_SUPERVISOR_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (113, "DP_LT_FAILURE", "Unused", "CONTACT_SUPPORT", ""),
    (114, "HEAD_RG_UNDERFLOW", "Unused", "CONTACT_SUPPORT", ""),
    (115, "CORE_CHANNEL_REGS", "Unused", "CONTACT_SUPPORT", ""),
    (116, "WINDOW_CHANNEL_REGS", "Unused", "CONTACT_SUPPORT", ""),
    (117, "CURSOR_CHANNEL_REGS", "Unused", "CONTACT_SUPPORT", ""),
    (118, "HEAD_REGS", "Unused", "CONTACT_SUPPORT", ""),
    (119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU", "INVESTIGATE_SW"),
    (120, "GSP_ERROR", "GSP Error", "RESET_GPU", "INVESTIGATE_SW"),
    (121, "C2C_ERROR", "C2C Error", "IGNORE", "CONTACT_SUPPORT"),
    (122, "SPI_PMU_RPC_READ_FAIL", "Unused", "CONTACT_SUPPORT", ""),
    (123, "SPI_PMU_RPC_WRITE_FAIL", "Unused", "CONTACT_SUPPORT", ""),
    (124, "SPI_PMU_RPC_ERASE_FAIL", "Unused", "CONTACT_SUPPORT", ""),
    (125, "INFOROM_FS_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (126, "ROBUST_CHANNEL_CE10_ERROR", "CE10: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (127, "ROBUST_CHANNEL_CE11_ERROR", "CE11: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (128, "ROBUST_CHANNEL_CE12_ERROR", "CE12: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (129, "ROBUST_CHANNEL_CE13_ERROR", "CE13: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (130, "ROBUST_CHANNEL_CE14_ERROR", "CE14: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (131, "ROBUST_CHANNEL_CE15_ERROR", "CE15: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (132, "ROBUST_CHANNEL_CE16_ERROR", "CE16: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (133, "ROBUST_CHANNEL_CE17_ERROR", "CE17: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (134, "ROBUST_CHANNEL_CE18_ERROR", "CE18: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (135, "ROBUST_CHANNEL_CE19_ERROR", "CE19: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (136, "ALI_TRAINING_FAIL", "Link Training Failed", "RESET_GPU", "INVESTIGATE_LINK_SI"),
    (137, "NVLINK_PRIV_ERR", "NVLink Privilege Error", "IGNORE", "XID_137_FLOW"),
    (138, "ROBUST_CHANNEL_DLA_ERROR", "Unused", "CONTACT_SUPPORT", ""),
    (139, "ROBUST_CHANNEL_OFA1_ERROR", "OFA1 Error", "RESTART_APP", "CONTACT_SUPPORT"),
    (140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", "RESET_GPU", "CONTACT_SUPPORT"),
    (141, "ROBUST_CHANNEL_FAST_PATH_ERROR", "CUDA Fast Path Error", "IGNORE", "CONTACT_SUPPORT"),
    (142, "ROBUST_CHANNEL_NVENC3_ERROR", "NVENC3 Error", "CONTACT_SUPPORT", ""),
    (143, "GPU_INIT_ERROR", "GPU Initialization Error", "RESET_GPU", "CONTACT_SUPPORT"),
    (144, "NVLINK_SAW_ERROR", "NVLINK: SAW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
    (145, "NVLINK_RLW_ERROR", "NVLINK: RLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
    (146, "NVLINK_TLW_ERROR", "NVLINK: TLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
    (147, "NVLINK_TREX_ERROR", "NVLINK: TREX Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
    (148, "NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
    (149, "NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
    (150, "NVLINK_MSE_ERROR", "NVLINK: MSE Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
    (151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "Key rotation Error", "RESTART_VM", "CONTACT_SUPPORT"),
    (152, "ROBUST_CHANNEL_DLA_SMMU_ERROR", "DLA SMMU Error", "IGNORE", "CONTACT_SUPPORT"),
    (153, "ROBUST_CHANNEL_DLA_TIMEOUT", "DLA timeout Error", "IGNORE", "CONTACT_SUPPORT"),
    (154, "GPU_RECOVERY_ACTION_CHANGED",
     "GPU Recovery Action Changed",
     "XID_154", "N/A Informational only regarding another Xid"),
    (155, "NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", "RESET_GPU", "INVESTIGATE_SW_USER"),
    (156, "RESOURCE_RETIREMENT_EVENT", "Resource Retirement Event", "RESET_GPU", "IGNORE"),
    (157, "RESOURCE_RETIREMENT_FAILURE", "Resource Retirement Failure", "IGNORE", "CONTACT_SUPPORT"),
    (158, "GPU_FATAL_TIMEOUT", "GPU Fatal Timeout", "RESET_GPU", "CONTACT_SUPPORT"),
    (159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI Non-Data Error", "CHECK_UVM", "SYMPATHETIC_REPORT_SOLO"),
    (160, "CHANNEL_RETIREMENT_EVENT", "Channel Retirement Event", "IGNORE", "INVESTIGATE_SW"),
    (161, "CHANNEL_RETIREMENT_FAILURE", "Channel Retirement Failure", "IGNORE", "INVESTIGATE_SW"),
    (162, "PSHC_REENGAGED", "Power Smoothing HW Circuitry capability reengaged", "", ""),
    (163, "PSHC_DISENGAGED", "Power Smoothing HW Circuitry capability disengaged", "", ""),
    (164, "PSHC_LOW_LIFETIME", "Power Smoothing HW Circuitry low lifetime reached", "", ""),
    (165, "PSHC_ZERO_LIFETIME", "Power Smoothing HW Circuitry lifetime exhausted", "", ""),
    (166, "NVLINK_SECURE_CRYPTO_ERR",
     "CC traffic seen prior to link properly being configured for encrypted traffic",
     "", ""),
    (167, "PCIE_FATAL_TIMEOUT", "PCIE_FATAL_TIMEOUT", "", ""),
    (168, "REDUCED_GPU_MEMORY_CAPACITY", "Errors found in WPR (write protected region)", "", ""),
    (169, "SEC2_HALT_ERROR", "Internal micro-controller halt", "", ""),
    (170, "NVLINK_SECURE_OTHER", "Interrupt seen in CC mode", "", ""),
    (171, "UNCORRECTABLE_DRAM_ERROR",
     "Additional to Xid 48 providing more details on particulars of fault to differentiate DRAM/SRAM",
     "", ""),
    (172, "UNCORRECTABLE_SRAM_ERROR",
     "Additional to Xid 48 providing more details on particulars of fault to differentiate DRAM/SRAM",
     "", ""),
)

# The catalog's "Guidance Class" table, shortened: what each immediate action asks for.
ACTIONS: Mapping[str, str] = {
    "RESET_GPU": "reset the GPU (nvidia-smi -r) or reboot the node",
    "RESTART_BM": "reboot the node (power cycle the bare metal)",
    "RESTART_VM": "restart the VM that owns the GPU",
    "CONTACT_SUPPORT": "contact your support organization (hardware vendor / RMA)",
    "CHECK_MECHANICALS": "check the GPU's seating and power connections",
    "UPDATE_SWFW": "update the driver and firmware",
    "WORKFLOW_XID_48": "reset the GPU (with Xid 63/64: drain and reset), then run field diagnostics",
    "WORKFLOW_NVLINK_ERR": "reset the GPU or reboot the node; nvidia-smi nvlink -e shows the link's errors",
    "WORKFLOW_NVLINK5_ERR": "reset the GPU unless its NVLink line says Nonfatal (the catalog's 144-150 decode)",
    "XID_154": "follow the recovery action the Xid 154 line names",
    "RESTART_APP": "restart the application",
    "IGNORE": "no action required",
    "WORKFLOW_XID_45": "follow the Xid that caused it; alone: restart the application",
    "CHECK_UVM": "with UVM/vGPU in use reset the GPU, otherwise ignore",
    "": "no action in the catalog yet",
}
FATAL_ACTIONS = frozenset({"RESET_GPU", "RESTART_BM", "RESTART_VM", "CONTACT_SUPPORT", "CHECK_MECHANICALS",
                           "UPDATE_SWFW", "WORKFLOW_XID_48", "WORKFLOW_NVLINK_ERR", "WORKFLOW_NVLINK5_ERR", "XID_154"})
BENIGN_ACTIONS = frozenset({"RESTART_APP", "IGNORE", "WORKFLOW_XID_45"})
NVLINK5 = range(144, 151)  # decoded from the line: "<code>, <unit> Fatal|Nonfatal XC0 i0 Link N (...)"
_CATEGORIES: tuple[tuple[str, frozenset[int]], ...] = (
    ("nvlink", frozenset({74, 108, 136, 137, *NVLINK5, 155, 166, 170})),
    ("memory", frozenset({48, 63, 64, 92, 94, 95, 140, 156, 157, 168, 171, 172})),
    ("firmware", frozenset({37, 38, 61, 62, 66, 67, 119, 120, 169})),
    ("bus", frozenset({79, 167})),
    ("power", frozenset({54, 162, 163, 164, 165})),
    ("recovery", frozenset({154})),
    ("app", frozenset({43, 45})),
)


@dataclass(frozen=True)
class Xid:
    """One row of the catalog."""

    code: int
    mnemonic: str
    description: str
    action: str  # Resolution Bucket (Immediate Action); "" where the catalog gives none
    investigate: str  # Resolution Bucket (Investigatory Action)

    @property
    def name(self) -> str:
        """A short name: the description up to its first comma, or the mnemonic where that is "Unused" or long."""
        short = self.description.split(", ")[0]
        return self.mnemonic if short == "Unused" or len(short) > 60 else short

    @property
    def category(self) -> str:
        """nvlink, memory, firmware, bus, power, recovery, app, unused (not seen on Ampere and newer) or other."""
        for name, codes in _CATEGORIES:
            if self.code in codes:
                return name
        if self.description == "Unused":
            return "unused"
        return "app" if self.action == "RESTART_APP" else "other"


XIDS: Mapping[int, Xid] = {row[0]: Xid(*row) for row in _ROWS}


@dataclass(frozen=True)
class Assessment:
    """What one Xid line asks for: level ``fatal`` (reset, reboot, support), ``check`` (no catalog action, or one
    that depends on the setup) or ``benign`` (the application's own fault, or nothing to do)."""

    level: str
    action: str  # the catalog's bucket, or what the line itself names (Xid 154's recovery action)
    why: str


@dataclass(frozen=True)
class XidLine:
    """One ``NVRM: Xid (PCI:DDDD:BB:DD[ GPU-I:..]): CODE, TEXT`` kernel line."""

    bus: str  # DDDD:BB:DD, lower case
    code: int
    text: str  # what follows "CODE, "
    cause: int | None  # Xid 45's "caused by previous Xid N"


_LINE = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})[^)]*\): (\d+),?\s*(.*)")
_CAUSE = re.compile(r"caused by previous Xid (\d+)")
_SEVERITY = re.compile(r"^\S+ (Fatal|Nonfatal) ")
_RECOVERY = re.compile(r"recovery action changed from \S+ \([^)]*\) to \S+ \(([^)]*)\)")
_SEVERE = {"fatal": 2, "check": 1, "benign": 0}


def parse_line(line: str) -> XidLine | None:
    """An ``NVRM: Xid`` kernel line (any prefix: dmesg, journalctl, syslog) -> its parts; None for anything else."""
    match = _LINE.search(line)
    if not match:
        return None
    text = match[3].strip()
    cause = _CAUSE.search(text)
    return XidLine(match[1].lower(), int(match[2]), text, int(cause[1]) if cause else None)


def nvlink_severity(text: str) -> str | None:
    """``Fatal`` or ``Nonfatal`` from an NVLink5 (Xid 144-150) line's text; None when it names neither."""
    match = _SEVERITY.search(text)
    return match[1] if match else None


def recovery_action(text: str) -> str | None:
    """The action an Xid 154 line changes to (``GPU Reset Required``, ``Node Reboot Required``, ``None``...)."""
    match = _RECOVERY.search(text)
    return match[1] if match else None


def assess(code: int, text: str = "") -> Assessment:
    """What the catalog asks for one Xid, read with its line where the catalog says to (154, 144-150)."""
    entry = XIDS.get(code)
    if entry is None:
        return Assessment("check", "", f"not in NVIDIA's Xid catalog ({VERSION})")
    if code == 154:
        action = recovery_action(text)
        if action is not None and action.strip().lower() == "none":
            return Assessment("benign", "None", "recovery action changed to None")
        return Assessment("fatal", action or "XID_154", f"GPU recovery action: {action or 'changed'}")
    severity = nvlink_severity(text) if code in NVLINK5 else None
    if severity == "Nonfatal":
        return Assessment("benign", "IGNORE", "a non-fatal NVLink error (the catalog's 144-150 decode: ignore it, "
                                              "or follow an Xid 154 when one comes with it)")
    if severity == "Fatal":
        return Assessment("fatal", "RESET_GPU", "a fatal NVLink error (the catalog's 144-150 decode: reset the GPU)")
    level = "fatal" if entry.action in FATAL_ACTIONS else "benign" if entry.action in BENIGN_ACTIONS else "check"
    return Assessment(level, entry.action, ACTIONS.get(entry.action, entry.action))


def worst(assessments: list[Assessment]) -> Assessment:
    """The most severe of several assessments (fatal over check over benign; the first among equals)."""
    return max(assessments, key=lambda a: _SEVERE[a.level])


def describe(code: int) -> str:
    """``Xid N MNEMONIC (description): ACTION`` for messages and explain; the code alone when it is unknown."""
    entry = XIDS.get(code)
    if entry is None:
        return f"Xid {code} (not in NVIDIA's Xid catalog)"
    return f"Xid {code} {entry.mnemonic} ({entry.description}): {entry.action or 'no action in the catalog'}"
