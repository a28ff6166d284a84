"""Which engine's own code holds a failure's message (issue 29, item 3): the message templates of the raise site
index (raise_sites-<engine>.zip), read as patterns.

The index keeps each `raise` and `assert` message as a template, `{}` where the code computes text at run time
(`f"Engine core initialization failed. Failed core proc(s): {finished}"`).  A failure whose type and message
match a template of one engine's code, and of no other engine's, was raised by that engine's code: evidence of
the engine for a paste that shows nothing else (ingest/engine_from_message.py weighs it, last of all).

For speed the index ships, per engine, the templates with enough fixed text to name a check (`MIN_FIXED`), each
filed under one of its words (`anchor_word`) in one of 64 small members: a message reads only the members of its
own words, and looks up only the templates filed under them.  Three sets of members:
- `messages/<N>.json`: what the code raises or builds as an exception (raise, assert, and "build" sites: an
  exception returned by a function its caller raises, an exception class's own message), each template with the
  modules that raise it, `[type, template, [[file, function], ...]]` (raising_modules: where a message shown
  without frames was raised, as a traceback's raising frame would say);
- `logged/<N>.json`: what the code logs as an error (`logger.error` / `logger.exception` / `logger.critical`),
  evidence only for a failure that is such a line (no exception type);
- `openings/<N>.json`: for a message the paste cut short, which may have lost a template's anchor word: under a
  word of a template's opening (`opening_word`), the anchor words of the templates that open with it, whose
  `messages/` members are then read.  Only templates whose anchor word is not in their opening, and with more fixed
  text than an opening needs (a cut of a shorter one tells nothing).
"""

from __future__ import annotations

import builtins
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from logsleuth.facts.message_templates import (
    HOLE,
    MAX_MESSAGE,
    MIN_FIXED,
    PLACEHOLDER,
    WORD,
    anchor_word,
    fixed_length,
    fixed_text,
    opening_matched,
    opening_word,
    short_type,
    template_matches,
)
from logsleuth.facts.raise_sites import PACKAGE_MESSAGES, read_member, read_package_messages

SHARDS = 64  # each engine's templates are split by their word's CRC-32: a message reads the few shards of its words


def shard_of(word: str) -> int:
    return zlib.crc32(word.encode()) % SHARDS


RAISED, LOGGED, OPENINGS = "messages", "logged", "openings"  # the three sets of members (see above)
# A template is filed under its opening too when it has this much more fixed text than a cut needs to tell.
OPENING_MARGIN = 16


@lru_cache(maxsize=256)
def _shard(engine: str, number: int, members: str = RAISED) -> dict[str, Any]:
    """One shard of the engine's templates by word: {word: [[type, template, [[file, function], ...]], ...]}
    (`openings`: {word: [anchor word, ...]}), or {} without one."""
    name = f"{members}/{number}.json"
    found: Any = read_package_messages(name) if engine == PACKAGE_MESSAGES else read_member(engine, name)
    return dict(found) if isinstance(found, dict) else {}


def _candidates(engine: str, words: set[str], members: str) -> list[tuple[str, str]]:
    """(type, template) of the templates filed under the words."""
    return [(entry[0], entry[1]) for word in words for entry in _shard(engine, shard_of(word), members).get(word, ())]


def engines_raising(type_name: str | None, message: str, engines: tuple[str, ...] = ("sglang", "vllm"), *,
                    cut: bool = False) -> set[str]:
    """The engines whose indexed code raises this exception type (any type when None: the paste lost it) with a
    template this message matches; with `cut`, a template whose opening, holes filled in, the message is (a paste
    that stopped short), when that opening has MIN_FIXED characters of fixed text."""
    wanted = short_type(type_name) if type_name is not None else None
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    found = set()
    for engine in engines:
        if cut:
            anchors = {anchor for word in words for anchor in _shard(engine, shard_of(word), OPENINGS).get(word, ())}
            candidates = _candidates(engine, words | anchors, RAISED)
            if any(wanted in (None, kind) and opening_matched(template, message) >= MIN_FIXED for kind, template in candidates):
                found.add(engine)
        elif any(wanted in (None, kind) and template_matches(template, message)
                 for kind, template in _candidates(engine, words, RAISED)):
            found.add(engine)
    return found


def raising_modules(type_name: str | None, message: str, engines: tuple[str, ...] = ("sglang", "vllm")
                    ) -> dict[str, set[tuple[str, str]]]:
    """Where the engines' code raises this exception type (any type when None: the paste lost it, or the failure is
    an error record, then what the code logs too) with this message: engine -> the (file, function) of each check
    whose template the message matches, of the templates with the most fixed text (a longer template that matches
    is the check that printed it; a shorter one also matching only shares its words)."""
    wanted = short_type(type_name) if type_name is not None else None
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    sets = (RAISED,) if wanted is not None else (RAISED, LOGGED)
    matched = [(engine, fixed_length(entry[1]), entry[2]) for engine in engines for members in sets for word in words
               for entry in _shard(engine, shard_of(word), members).get(word, ())
               if wanted in (None, entry[0]) and len(entry) > 2 and template_matches(entry[1], message)]
    longest = max((length for _, length, _ in matched), default=0)
    found: dict[str, set[tuple[str, str]]] = {}
    for engine, length, modules in matched:
        if length == longest:
            found.setdefault(engine, set()).update((file, function) for file, function in modules)
    return found


def engines_logging(message: str, engines: tuple[str, ...] = ("sglang", "vllm")) -> set[str]:
    """The engines whose indexed code logs this message as an error (logger.error, .exception, .critical)."""
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    return {engine for engine in engines
            if any(template_matches(template, message) for _, template in _candidates(engine, words, LOGGED))}


# The packages the engines run (flashinfer, sgl-kernel, xgrammar, transformers), as one source of message shards
# (raise_sites-package_messages.zip, scripts/engine_index/package_messages.py): transformers' `The checkpoint you are
# trying to load has model type …` printed by a wrapper as str(exc) is typed from transformers' statement.  A package's
# message names no engine (engines_raising reads the engines' members only).
PACKAGES = (PACKAGE_MESSAGES,)


def logs_an_error_text(message: str, engines: tuple[str, ...] = ("sglang", "vllm")) -> bool:
    """Whether an engine's code logs this message as an error with the error's own text in it: a logged template
    with a hole (`Piecewise CUDA Graph failed with error: {}`) that the message fills with MIN_HOLE characters or
    more.  An error logged in fixed words (`EngineCore failed to start.`) announces a failure and names none."""
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    return any("{}" in template and len(message) - fixed_length(template) >= MIN_HOLE and template_matches(template, message)
               for engine in engines for _, template in _candidates(engine, words, LOGGED))


MIN_HOLE = 8  # characters of the error's own text in a logged template's hole


def package_raised_as(message: str, *, cut: bool = False) -> str | None:
    """The exception type a raise site of a package the engines run raises with this message, else None (raised_as)."""
    return raised_as(message, PACKAGES, cut=cut)


def raised_as(message: str, engines: tuple[str, ...] = ("sglang", "vllm"), *, cut: bool = False) -> str | None:
    """The exception type an indexed raise site of either engine raises with this message (its text, the type line
    lost: a wrapper logging str(exc)), else None.  Of several, a built-in type first: a release that moved a check
    to its own subclass (vLLM's VLLMValidationError, a ValueError) printed the built-in one before.  With `cut`, the
    message may stop short of the template's end (a paste ending at "… are not supported for now."): a template whose
    opening, holes filled in, it is, with MIN_FIXED characters of fixed text matched (as engines_raising's); a
    template both engines hold with different types then picks nothing (which one printed it is unknown)."""
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    if not cut:
        found = {kind for engine in engines for kind, template in _candidates(engine, words, RAISED)
                 if template_matches(template, message)}
        return min(found, key=_builtin_first) if found else None
    kinds_by_text: dict[str, set[tuple[str, str]]] = {}
    for engine in engines:
        anchors = {anchor for word in words for anchor in _shard(engine, shard_of(word), OPENINGS).get(word, ())}
        for kind, template in _candidates(engine, words | anchors, RAISED):
            if opening_matched(template, message) >= MIN_FIXED:
                kinds_by_text.setdefault(fixed_text(template), set()).add((engine, kind))
    agreed = set()
    for held in kinds_by_text.values():
        if len({engine for engine, _ in held}) > 1 and len({kind for _, kind in held}) > 1:
            continue  # both engines hold this template, with different types
        agreed |= {kind for _, kind in held}
    return min(agreed, key=_builtin_first) if agreed else None


def retyped_raised_as(message: str, engines: tuple[str, ...] = ("sglang", "vllm")) -> str | None:
    """`Type: the engine's own text` of an indexed message in fixed words (a template with no hole) that this message
    is once letter case and white space are set aside, else None: the engine's refusal a person retyped into a
    sentence rather than pasted (`报错信息：SGlang only supports sm 75 and  above`, opendatalab/MinerU#3416, for
    SGLang's `RuntimeError("SGLang only supports sm75 and above.")`, srt/model_executor/model_runner.py load_model).
    Only a whole message of MIN_FIXED characters or more, and only when a single type is raised with it."""
    squashed = _squashed(message)
    if len(squashed) < MIN_FIXED:
        return None
    words = set(WORD.findall(message[:MAX_MESSAGE]))
    found = {(kind, template) for engine in engines for kind, template in _candidates(engine, words, RAISED)
             if HOLE not in template and not PLACEHOLDER.search(template) and _squashed(template) == squashed}
    kinds = {kind for kind, _ in found}
    if len(kinds) != 1:
        return None  # none, or a text two checks raise with different types
    kind, template = min(found)
    return f"{kind}: {template}"


def _squashed(text: str) -> str:
    """The text with its letter case, its white space and its closing full stop set aside."""
    return "".join(text.split()).casefold().rstrip(".")


def banner_raised_as(line: str, engines: tuple[str, ...] = ("sglang", "vllm", *PACKAGES)) -> str | None:
    """The exception type an indexed raise site raises with a message of several lines whose first line this line is,
    whole (holes filled in), else None: a compiled-kernel package's banner that it could not load its library, printed
    with its type line lost (sgl_kernel's `[sgl_kernel] CRITICAL: Could not load any common_ops library!` over the
    places it tried, sgl_kernel/load_utils.py; flashinfer's `Failed to load BGMV MoE CUDA extension via JIT. …` over
    `Error: …`, flashinfer/fused_moe/bgmv_moe.py).  Only such a first line with MIN_FIXED characters of fixed text:
    one line of a banner is what a person scanning the paste points at, and no one-line message is read here."""
    words = set(WORD.findall(line[:MAX_MESSAGE]))
    found = set()
    for engine in engines:
        anchors = {anchor for word in words for anchor in _shard(engine, shard_of(word), OPENINGS).get(word, ())}
        for kind, template in _candidates(engine, words | anchors, RAISED):
            first, _, rest = template.strip().partition("\n")
            if rest.strip() and fixed_length(first) >= MIN_FIXED and template_matches(first.strip(), line):
                found.add(kind)
    return min(found, key=_builtin_first) if found else None


def _builtin_first(kind: str) -> tuple[bool, str]:
    return not isinstance(getattr(builtins, kind, None), type), kind


def filed_templates(sites: list[tuple[str, str, str, str]]) -> dict[int, dict[str, list[list[Any]]]]:
    """scripts/engine_index/build.py: the (type, template, file, function) sites worth filing, by shard and anchor
    word, sorted: [type, template, [[file, function], ...]] (the modules that raise the same template, sorted)."""
    filed: dict[str, dict[tuple[str, str], set[tuple[str, str]]]] = {}
    for kind, template, file, function in sites:
        word = anchor_word(template)
        if kind and word is not None and fixed_length(template) >= MIN_FIXED:
            filed.setdefault(word, {}).setdefault((kind, template), set()).add((file, function))
    shards: dict[int, dict[str, list[list[Any]]]] = {number: {} for number in range(SHARDS)}
    for word, templates in sorted(filed.items()):
        shards[shard_of(word)][word] = [[kind, template, [list(module) for module in sorted(modules)]]
                                        for (kind, template), modules in sorted(templates.items())]
    return shards


def filed_openings(sites: Sequence[tuple[str, ...]]) -> dict[int, dict[str, list[str]]]:
    """scripts/engine_index/build.py: the anchor words of the templates a cut message may open, by shard and opening
    word, sorted (see above)."""
    filed: dict[str, set[str]] = {}
    for kind, template, *_ in sites:
        anchor, opening = anchor_word(template), opening_word(template)
        if kind and anchor is not None and opening is not None and opening != anchor and fixed_length(template) >= MIN_FIXED + OPENING_MARGIN:
            filed.setdefault(opening, set()).add(anchor)
    shards: dict[int, dict[str, list[str]]] = {number: {} for number in range(SHARDS)}
    for word, anchors in sorted(filed.items()):
        shards[shard_of(word)][word] = sorted(anchors)
    return shards
