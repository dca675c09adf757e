"""Megatron-LM's checks of its launch arguments and model config as a code table (MindSpeed on Ascend and NeMo run the
same checks): each message of ``table_megatron_rows`` and ``table_megatron_core_rows`` keyed by its normalized
template and found tolerantly (``table_templates``), so a check that no log sample shows is still read as the job's
own settings.

Source: NVIDIA/Megatron-LM ``megatron/training/arguments.py``, ``megatron/core/transformer/transformer_config.py``,
``megatron/core/model_parallel_config.py`` and ``megatron/core/parallel_state.py`` at main d98e8a6, with the older
wordings of core_r0.10.0, core_r0.8.0 and 23.04 (``megatron/arguments.py``).

>>> [(d.code.code, d.code.category) for d in TABLE.decode(
...     "AssertionError: world size is not divisible by tensor parallel size (3) times pipeline parallel size (1)")][0]
('world size is not divisible by tensor parallel size {} times pipeline parallel size {}', 'launch-args')
>>> [d.code.category for d in TABLE.decode(
...     "ValueError: fused permutation is not available. Please install TE >= 2.1.0.")]
['version-mismatch']
>>> TABLE.find("num_query_groups (8) must be a multiple or divisor of tensor_model_parallel_size (3).")  # not raised
[]
"""

from __future__ import annotations

from preflight.explain.table_megatron_core_rows import CONFIG_CHECKS
from preflight.explain.table_megatron_rows import ARGUMENT_CHECKS
from preflight.explain.table_templates import Row, build

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
SOURCE = f"https://github.com/NVIDIA/Megatron-LM/blob/{COMMIT}/megatron/training/arguments.py"
VERSION = "Megatron-LM main d98e8a6 (2026-08-22), with the wordings of core_r0.10.0, core_r0.8.0 and 23.04"

_MEANING = {
    "launch-args": "Megatron refused the job's launch arguments or model config: two settings do not fit together, "
                   "or a size does not divide by the parallel layout ({version}: \"{template}\").",
    "version-mismatch": "Megatron needs another version of a package for the settings the job chose ({version}: "
                        "\"{template}\").",
}
_FIX = {
    "launch-args": "Change the arguments the message names in the launch script (or the model's config) so they agree: "
                   "parallel sizes that divide the world size (nnodes x nproc_per_node), the layers and the heads; "
                   "options that Megatron accepts together.",
    "version-mismatch": "Install the package version the message names (Transformer Engine, PyTorch...) in the job's "
                        "image on every node, or turn off the option that needs it.",
}


def _name(template: str) -> str:
    words = template.replace("{}", "N").split()
    return "Megatron: " + " ".join(words[:8]) + (" ..." if len(words) > 8 else "")


ROWS: tuple[Row, ...] = tuple(
    Row(_name(template), category, _MEANING[category].format(version=version, template=template), _FIX[category],
        (template,))
    for template, category, version in (*ARGUMENT_CHECKS, *CONFIG_CHECKS))

# Every check is a raised exception, so its line carries the exception's name (``AssertionError: ...``,
# ``[rank0]: ValueError: ...``): required of a line, and the gate, that keeps Megatron's own progress lines
# (``consumed samples``, ``learning rate``) from being asked about 468 templates
_EXCEPTIONS = ("assertionerror", "valueerror", "runtimeerror", "notimplementederror", "exception")
TABLE = build("megatron", SOURCE, VERSION, ROWS, required=_EXCEPTIONS)
