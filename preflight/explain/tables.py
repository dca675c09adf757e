"""Every vendor code table ``explain`` decodes with (``preflight.explain.decode``), in the order they are tried.

A table module adds itself here (one import and one entry of ``DECODERS``); ``tests/test_explain_tables.py``
decodes, for every table, a code that no log sample carries.

>>> all(t.source.startswith("https://") and t.version for t in DECODERS)
True
"""

from __future__ import annotations

from preflight.explain import table_acl, table_cann
from preflight.explain.decode import CodeTable
from preflight.explain.table_hccl import HCCL_RESULTS

DECODERS: tuple[CodeTable, ...] = (
    *table_cann.TABLES,  # Ascend: CANN EE/EH/EI/EJ/EK/EL/EZ codes
    HCCL_RESULTS,  # Ascend: HcclResult
    *table_acl.TABLES,  # Ascend: aclError, aclnnStatus
)
