"""How probes reach a host: SSH (paramiko), this machine, or one srun.

paramiko imports ``invoke`` at its own import only to run ssh_config's ``Match exec`` lines, and ``invoke``
costs more than the rest of paramiko together (~55 of ~75 ms). It is registered here as a stand-in module
whose first attribute lookup imports the real one (``importlib.util.LazyLoader`` would not do: the import
statement reads ``__spec__``, which loads a lazy module at once).

>>> stand_in = _Deferred("json")
>>> stand_in.dumps([1])
'[1]'
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

_loading = threading.Lock()


class _Deferred(ModuleType):
    """Stands in for module ``name`` in ``sys.modules`` until an attribute is read, then imports it."""

    def __getattr__(self, attr: str) -> Any:  # only called for what the stand-in lacks
        with _loading:
            real = sys.modules.get(self.__name__)
            if real is None or real is self:
                sys.modules.pop(self.__name__, None)
                try:
                    real = importlib.import_module(self.__name__)
                except BaseException:
                    sys.modules[self.__name__] = self
                    raise
        return getattr(real, attr)


def defer_import(name: str) -> None:
    """Make ``import name`` free (the real import on first attribute access); no-op when imported or absent."""
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None:
        return
    stand_in = _Deferred(name)
    stand_in.__spec__ = spec
    sys.modules[name] = stand_in


defer_import("invoke")
