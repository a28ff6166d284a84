"""GPU and native faults users hit while serving (issue 11): device-side asserts, illegal memory accesses as
C++ aborts and kernel prints, missing kernel images and architecture gaps, torch.compile with CUDA-graph
capture, segfaults and aborts, scheduler watchdog timeouts.

Patterns: listed in each case's `pattern`.
"""

from __future__ import annotations

from ..engine import Case

CASES: tuple[Case, ...] = ()
