"""CANN's Graph Engine error codes (``E10001``-``E19999``): the GE family that neither ``table_cann`` nor
``table_cann_ops`` takes, decoded even when no log sample of a code exists. GE prints them when it checks the
options a job (or ATC, torchair's graph mode, MindSpore on Ascend) passes - parameters, shapes, paths,
environment variables, ranktable values - and when it parses a model or registers an operator.

The entries are ``table_ge_codes.ROWS`` (hicann/ge ``base/common/error_registry/error_registry.cc``). Their category
follows from the registry's errTitle (``category_of``): an option, a parameter, a shape, a path or an environment
variable the job set is ``launch-args`` (E10xxx, ``File_Operation_Error*``, ``Config_Error*``); an operator or a
model GE cannot take is the job's ``app-fault``; a peer address GE cannot connect to is ``master-unreachable``;
the inner error E19999 and a failed call into the system claim nothing (they report a failure logged elsewhere).

Codes are found in any case and wrapping: ``E10014:``, ``Config_Error_Ranktable(E10014)``, ``[E19999]``.

>>> [(d.code.name, d.code.category) for d in TABLE.decode("E10001: Value [abc] for parameter [--soc] is invalid.")]
[('Invalid_Argument', 'launch-args')]
>>> category_of("E13010", "Not_Supported_Operator"), category_of("E19999", "Inner_Error")
('app-fault', 'unknown')
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_cann import CHECKS
from preflight.explain.table_ge_codes import ROWS

_SOURCE = "https://github.com/hicann/ge/blob/ffdcbc9f7496c17a98c1d12762c61ed608ef3503/base/common/error_registry/" \
          "error_registry.cc"
_VERSION = "CANN 9.2 (hicann/ge ffdcbc9, 2026-08-21)"

_APP = ("Not_Supported", "Invalid_Argument_Operator", "Invalid_Argument_Caffe", "Invalid_Argument_ONNX",
        "Invalid_Argument_TensorFlow", "Invalid_Argument_Model", "Invalid_Argument_OM_Model",
        "Invalid_Argument_API_Call_Sequence", "Invalid_Argument_Tensor_Attribute", "Compilation_Error",
        "Initialization_Error")
_SILENT = ("Inner_Error", "Environment_Error")  # "Unknown error occurred", "Failed to call the %s API of the system"

FIXES: dict[str, str] = {
    "launch-args": "Fix the option, shape, path, environment variable or ranktable value the message names (its "
                   "valid form is in the message, CANN's GE error reference or the ATC / environment-variable "
                   "guide), the same on every node.",
    "app-fault": "GE cannot take the model or operator the job gives it (an operator with no plugin or "
                 "implementation, a model file it cannot parse, an API called out of order): fix the model or "
                 "its export, or use a CANN version that supports the operator.",
    "master-unreachable": "Check the peer address, port and token in the configuration file (the ranktable or "
                          "deployment file) and that the peer is up and reachable.",
    "unknown": "Read the lines logged before this code: the inner error only reports a failure GE logged there.",
}


def category_of(code: str, title: str) -> str:
    """The category of a GE entry from its errTitle (``code`` kept for the shape ``table_cann_ops`` uses)."""
    if title.startswith(_SILENT):
        return "unknown"
    if title == "Invalid_Argument_Network_Connection":
        return "master-unreachable"
    if title.startswith(_APP):
        return "app-fault"
    return "launch-args"  # Invalid_Argument (an option's value), *_Tensor_*Shape*, File_Operation_Error*, Config_Error*


def _code(code: str, title: str, message: str) -> Code:
    category = category_of(code, title)
    return Code(code, title, message, category, FIXES[category], CHECKS.get(category, ()), category != "unknown")


_SHAPE = re.compile(r"(?<![A-Za-z0-9])(E1[0-9]{4})(?![0-9])", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The GE error codes on a line, upper-cased, in order, once each.

    >>> find("Config_Error_Ranktable(E10014): ... [e19999] E1001 E100010 0xE10001")
    ['E10014', 'E19999']
    """
    return list(dict.fromkeys(m.group(1).upper() for m in _SHAPE.finditer(line)))


TABLE = CodeTable("ge", _SOURCE, _VERSION, {row[0]: _code(*row) for row in ROWS}, find)
