"""logsleuth: find why an LLM inference server launch died, and how to fix it."""

__version__ = "0.1.0"
