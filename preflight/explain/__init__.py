"""``preflight explain``: known failure signatures of distributed launches, matched against logs.

The catalog (:mod:`preflight.explain.catalog`) holds the signatures, :mod:`preflight.explain.timeouts`
decodes timeout values into the layer that timed out, :mod:`preflight.explain.matcher` reads logs
(one per rank) and orders the matches so the root cause comes first.

>>> from preflight.explain.matcher import explain_texts
>>> result = explain_texts({"rank0.log": "RuntimeError: CUDA error: invalid device ordinal"})
>>> result.matches[0].signature.category
'device-mapping'
"""
