"""Where each vendor's tools are on a node: the lookup every vendor shares (``common``), NVIDIA's (``nvidia``) and
Ascend's (``ascend``) side by side, neither importing the other. Below the checks and the domain helpers, which
import them; they import nothing of either.
"""
