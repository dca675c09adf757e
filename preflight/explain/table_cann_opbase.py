"""The operator parameter checks' error codes of CANN's opbase (``EZ0008`` to ``EZ0038``): what an aclnn operator
reports through op_common's ``OP_LOGE_FOR_*`` macros when it rejects a parameter, a shape, a dtype, a format or a
file, decoded even when no log sample of a code exists. ``table_cann`` reads the runtime's error-code JSON, which
has EZ0001-EZ0007 and the EZ1xxx-EZ9xxx codes; these are the ones only opbase's own message list carries.

Source: the predefined messages in hicann/opbase ``src/op_common/log/log.cpp`` (``g_msg``, 62 entries) at aa3cd74
(2026-07-22); the 31 codes that neither ``table_cann`` nor ``table_cann_ops`` holds. An operator rejecting a
parameter (errTitle ``Invalid_Argument*``) is the job's ``app-fault``; an operator's file or configuration item
(``File_Operation_Error_*``, ``Config_Error``) is ``launch-args``.

>>> [(d.code.code, d.code.name, d.code.category) for d in TABLE.decode(
...     "RuntimeError: Invalid_Argument(EZ0027): Parameters query_quant_mode of FusedInferAttentionScore have "
...     "incorrect values 3. Reason: In per-tensor scenario ...")]
[('EZ0027', 'Invalid_Argument', 'app-fault')]
"""

from __future__ import annotations

from preflight.explain.decode import Code, CodeTable
from preflight.explain.table_cann import CHECKS, find
from preflight.explain.table_cann_ops import category_of

SOURCE = ("https://github.com/hicann/opbase/blob/aa3cd74b7f6d772acd64ff48292a7e65a9bc8142/"
          "src/op_common/log/log.cpp")
VERSION = "hicann/opbase aa3cd74 (CANN 9.x op_common)"

# (code, errTitle, ErrMessage), in the file's order; the category follows from the title (table_cann_ops.category_of)
ROWS: tuple[tuple[str, str, str], ...] = (
    ("EZ0008", "Invalid_Argument_Tensor_Shape",
     "Parameter %s of %s has incorrect shape [%s]. It should be [%s]."),
    ("EZ0009", "Invalid_Argument_Tensor_Shape",
     "Parameter %s of %s has incorrect shape [%s]. Reason: %s."),
    ("EZ0010", "Invalid_Argument_Tensor_Shape",
     "Parameters %s of %s have incorrect shapes %s. Reason: %s."),
    ("EZ0011", "Invalid_Argument_Tensor_Shape_Dim",
     "Parameter %s of %s has incorrect shape dim %s. It should be %s."),
    ("EZ0012", "Invalid_Argument_Tensor_Shape_Dim",
     "Parameter %s of %s has incorrect shape dim %s. Reason: %s."),
    ("EZ0013", "Invalid_Argument_Tensor_Shape_Dim",
     "Parameters %s of %s have incorrect shape dims %s. Reason: %s."),
    ("EZ0014", "Invalid_Argument_Tensor_Shape_Size",
     "Parameter %s of %s has incorrect shape size %s. It should be %s."),
    ("EZ0015", "Invalid_Argument_Tensor_Shape_Size",
     "Parameter %s of %s has incorrect shape size %s. Reason: %s."),
    ("EZ0016", "Invalid_Argument_Tensor_Shape_Size",
     "Parameters %s of %s have incorrect shape sizes %s. Reason: %s."),
    ("EZ0017", "Invalid_Argument_Tensor_Format",
     "Parameter %s of %s has incorrect format %s. It should be %s."),
    ("EZ0035", "Invalid_Argument_Tensor_Format",
     "Parameter %s of %s has incorrect format %s. Reason: %s."),
    ("EZ0018", "Invalid_Argument_Tensor_Format",
     "Parameters %s of %s have incorrect formats %s. Reason: %s."),
    ("EZ0019", "Invalid_Argument_Tensor_Dtype",
     "Parameter %s of %s has incorrect dtype %s. It should be %s."),
    ("EZ0020", "Invalid_Argument_Tensor_Dtype",
     "Parameter %s of %s has incorrect dtype %s. Reason: %s."),
    ("EZ0021", "Invalid_Argument_Tensor_Dtype",
     "Parameters %s of %s have incorrect dtypes %s. Reason: %s."),
    ("EZ0022", "Invalid_Argument",
     "Parameter %s of %s has invalid tensor num %ld. It should be %s."),
    ("EZ0023", "Invalid_Argument",
     "Parameters %s of %s have invalid tensor nums %s. Reason: %s."),
    ("EZ0024", "Invalid_Argument",
     "Parameter %s of %s has incorrect value %s. It should be %s."),
    ("EZ0025", "Invalid_Argument",
     "Parameter %s of %s has invalid list size %s. It should be %s."),
    ("EZ0026", "Invalid_Argument",
     "Parameter %s of %s has incorrect value %s. Reason: %s."),
    ("EZ0027", "Invalid_Argument",
     "Parameters %s of %s have incorrect values %s. Reason: %s."),
    ("EZ0028", "Invalid_Argument_Tensor_Stride",
     "Parameter %s of %s has incorrect stride %s, it should be %s."),
    ("EZ0029", "File_Operation_Error_Invalid_Path",
     "Input path %s is invalid. Reason: %s."),
    ("EZ0030", "File_Operation_Error_Open",
     "Failed to open file %s. Reason: %s."),
    ("EZ0031", "File_Operation_Error_Parse",
     "Failed to parse file %s. Reason: %s."),
    ("EZ0032", "Config_Error",
     "Value %s of configuration item %s in configuration file %s is invalid, it should be %s."),
    ("EZ0033", "Config_Error",
     "Value %s of configuration item %s in configuration file %s is invalid. Reason: %s."),
    ("EZ0034", "Config_Error",
     "Values %s of configuration items %s in configuration file %s are invalid. Reason: %s."),
    ("EZ0036", "Invalid_Argument_Graph",
     "The input graph contains an invalid node %s. Reason: %s."),
    ("EZ0037", "Invalid_Argument",
     "Parameter %s of %s is invalid. Reason: %s."),
    ("EZ0038", "Invalid_Argument",
     "Parameter %s of %s has incorrect element nums %s. Reason: %s."),
)

_FIX = {
    "app-fault": "An operator of the job rejected a parameter it was given (the message names the parameter, the "
                 "operator and what it should be): fix the call (shapes, dtypes, formats, values), or use the "
                 "operator's documented constraints; a CANN / torch_npu release that supports the case if it "
                 "should be valid.",
    "launch-args": "The operator could not use a file or configuration item it was pointed at: check the path, "
                   "its permissions and its content (the message names the item and why).",
}


def _code(code: str, title: str, message: str) -> Code:
    category = category_of(code, title)
    return Code(code, title, message, category, _FIX[category], CHECKS.get(category, ()), True)


TABLE = CodeTable("cann_opbase", SOURCE, VERSION, {row[0]: _code(*row) for row in ROWS}, find)
