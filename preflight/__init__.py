"""preflight: cluster preflight checks and diagnostics for distributed deep-learning training."""

__version__ = "0.1.0"
