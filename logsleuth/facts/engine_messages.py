"""Which engine's own code holds a failure's message (issue 29, item 3): the message templates of the raise site
index (raise_sites-<engine>.zip), read as patterns.

The index keeps each `raise` and `assert` message as a template, `{}` where the code computes text at run time
(`f"Engine core initialization failed. Failed core proc(s): {finished}"`).  A failure whose type and message
match a template of one engine's code, and of no other engine's, was raised by that engine's code: evidence of
the engine for a paste that shows nothing else (ingest/engine_from_message.py weighs it, last of all).

For speed the index ships, per engine, the templates with enough fixed text to name a check (`MIN_FIXED`), each
filed under one of its words (`anchor_word`) in one of 64 small members: a message reads only the members of its
own words, and looks up only the templates filed under them.
"""

from __future__ import annotations

import builtins
import zlib
from functools import lru_cache
from typing import Any

from logsleuth.facts.message_templates import (
    MAX_MESSAGE,
    MIN_FIXED,
    WORD,
    anchor_word,
    fixed_length,
    short_type,
    template_matches,
)
from logsleuth.facts.raise_sites import read_member

SHARDS = 64  # each engine's templates are split by their word's CRC-32: a message reads the few shards of its words


def shard_of(word: str) -> int:
    return zlib.crc32(word.encode()) % SHARDS


@lru_cache(maxsize=256)
def _shard(engine: str, number: int) -> dict[str, list[list[str]]]:
    """One shard of the engine's templates by anchor word: {word: [[type, template], ...]}, or {} without one."""
    found: Any = read_member(engine, f"messages/{number}.json")
    return dict(found) if isinstance(found, dict) else {}


def engines_raising(type_name: str | None, message: str, engines: tuple[str, ...] = ("sglang", "vllm")) -> set[str]:
    """The engines whose indexed code raises this exception type (any type when None: the paste lost it) with a
    template this message matches."""
    wanted = short_type(type_name) if type_name is not None else None
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    found = set()
    for engine in engines:
        candidates = (entry for word in words for entry in _shard(engine, shard_of(word)).get(word, ()))
        if any(wanted in (None, kind) and template_matches(template, message) for kind, template in candidates):
            found.add(engine)
    return found


def raised_as(message: str, engines: tuple[str, ...] = ("sglang", "vllm")) -> str | None:
    """The exception type an indexed raise site of either engine raises with this message (its text, the type line
    lost: a wrapper logging str(exc)), else None.  Of several, a built-in type first: a release that moved a check
    to its own subclass (vLLM's VLLMValidationError, a ValueError) printed the built-in one before."""
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    found = {kind for engine in engines for word in words for kind, template in _shard(engine, shard_of(word)).get(word, ())
             if template_matches(template, message)}
    return min(found, key=lambda kind: (not isinstance(getattr(builtins, kind, None), type), kind)) if found else None


def filed_templates(sites: list[tuple[str, str]]) -> dict[int, dict[str, list[list[str]]]]:
    """scripts/engine_index/build.py: the (type, template) pairs worth filing, by shard and anchor word, sorted."""
    filed: dict[str, set[tuple[str, str]]] = {}
    for kind, template in sites:
        word = anchor_word(template)
        if kind and word is not None and fixed_length(template) >= MIN_FIXED:
            filed.setdefault(word, set()).add((kind, template))
    shards: dict[int, dict[str, list[list[str]]]] = {number: {} for number in range(SHARDS)}
    for word, pairs in sorted(filed.items()):
        shards[shard_of(word)][word] = [list(pair) for pair in sorted(pairs)]
    return shards
