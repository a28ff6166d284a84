"""Launch stages of an SGLang server, recognised from its log lines (for `watch`).

Strings checked in the 0.4.10.post2, 0.5.9 and 0.5.23 wheels; not every version prints
every stage (0.5.23 has no "Init torch distributed"), so stages only move forward.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    key: str
    label: str
    pattern: re.Pattern[str]


STAGES: tuple[Stage, ...] = tuple(
    Stage(key, label, re.compile(pattern))
    for key, label, pattern in (
        ("args", "arguments parsed", r"\bserver_args="),
        ("distributed", "initialising torch distributed", r"Init torch distributed begin"),
        ("weights", "loading weights", r"Load weight begin"),
        ("weights-loaded", "weights loaded", r"Load weight end"),
        ("kv-cache", "KV cache allocated", r"KV Cache is allocated|Memory pool end"),
        ("cuda-graph", "capturing CUDA graphs", r"Capture cuda graph (?:begin|bs|num tokens)"),
        ("cuda-graph-done", "CUDA graphs captured", r"Capture cuda graph end"),
        ("http", "HTTP server starting", r"Uvicorn running on|Application startup complete"),
        ("ready", "ready", r"The server is fired up and ready to roll!"),
    )
)
_INDEX = {stage.key: index for index, stage in enumerate(STAGES)}
# Cheap pre-check: every stage line contains one of these words.
_WORDS = ("server_args=", "Init torch", "Load weight", "KV Cache", "Memory pool", "Capture cuda", "Uvicorn",
          "Application startup", "fired up")


def stage_of(text: str) -> Stage | None:
    if not any(word in text for word in _WORDS):
        return None
    for stage in STAGES:
        if stage.pattern.search(text):
            return stage
    return None


def is_later(new: Stage, current: Stage | None) -> bool:
    return current is None or _INDEX[new.key] > _INDEX[current.key]
