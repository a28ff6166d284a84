"""The serving environment failing (issue 11): memory exhausted while serving, host memory, NCCL's own
wording, ports held by others, installs that do not match (sgl-kernel ABI, CUDA libraries, flashinfer,
removed vLLM modules, transformers), checkpoints the engine cannot load, features that cannot run together.

Patterns: listed in each case's `pattern`.
"""

from __future__ import annotations

from ..engine import Case

CASES: tuple[Case, ...] = ()
