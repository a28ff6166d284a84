"""The evidence→category table (categories.toml): for each category, the cues that point to it (failure kinds,
exception types, words, frame path fragments) and its general checks; and what an exception type alone says.

Read once per run; its regexes are compiled at the first search whose text may hold a match (lazyre.compile_gated:
most rows' words are never compiled).  Reasoning about a failure with it is reasoning/general.py's; this module only loads."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from logsleuth.lazyre import compile_gated


@dataclass(frozen=True)
class CategoryRow:
    """One category's cues and checks (the field comments in categories.toml say what each is)."""

    category: str
    title: str
    kinds: tuple[str, ...]
    types: tuple[str, ...]
    words: tuple[re.Pattern[str], ...]
    strong_words: tuple[re.Pattern[str], ...]  # words that name the category outright
    frames: tuple[str, ...]
    frames_need: tuple[str, ...]  # when given: the frames cue counts only with one of these exception types
    source_words: tuple[re.Pattern[str], ...]  # searched in the source line of the innermost frame (the raising line)
    in_engine_code: bool
    in_wrapper_code: bool  # counts only when an installed package other than the engine's made the failing call
    wrapper_call: bool  # the row of a wrapper's call that does not fit the installed engine release
    not_in_engine_code: bool  # never counts when the engine's own code made the failing call (an engine bug's shape)
    imports_own_engine: bool  # counts only when the engine's own code failed to import a module of that same engine
    imports_own_project: bool  # counts only when a script in a project's checkout lacks a submodule of that project
    at_package_import: bool  # counts only when raised while an installed package other than the engine was imported
    in_package_code: bool  # counts only when an installed package the engine's code called made the failing call
    frameless: bool  # counts only when no exception of the chain shows a frame and no wrapper is known to run the engine
    no_own_script: bool  # counts only wrapped, frameless, or when the innermost own frame is the engine's
    cause_words: tuple[re.Pattern[str], ...]  # on an error line before a crash: this row is the crash's cause
    checks: tuple[str, ...]  # engine-neutral
    engine_checks: dict[str, tuple[str, ...]]  # engine -> its own checks (flags still to be checked)
    sources: tuple[str, ...]
    checks_when: tuple[ConditionalCheck, ...] = ()  # checks for one shape of the failure, shown when its words are there
    raise_frames: tuple[str, ...] = ()  # path fragments of the raising (innermost) frame's file: the row counts only with one
    cut_frames: tuple[re.Pattern[str], ...] = ()  # "file function" of the frame a traceback cut before its exception line stopped in
    engine_message: bool = False  # counts only when the failure's type and message are an engine's own check's (its template)
    other_program: bool = False  # counts only for a usage error whose argparse program is not the engine's
    # counts only when the failure's type is one of `types` (a row whose raise_frames hold other checks too)
    types_needed: bool = False
    source_needed: bool = False  # the row counts only when one of its source_words is on the raising line
    words_needed: bool = False  # the row counts only when one of its words or strong words is in the failure's messages
    # its frames and cut_frames also read the module an engine's message shown without frames is raised in
    # (reasoning/message_site.py): a check raised in that subsystem is a failure of this category
    raising_module: bool = False
    # when given: a memory-budget line logged before the failure (tracebacks/grammar.BUDGET_LINE: no room left for the
    # KV cache) names this category, but only for a traceback cut before its exception line or one whose frames are in
    # these functions (the start-up step that logged it); never over a whole exception line of another matter
    budget_frames: tuple[str, ...] = ()
    # counts only when the last exception's frames show the model being built or its weights loaded, and no step after
    # it (a forward pass, the profiling run, the KV cache's sizing, graph capture): reasoning/category_score.py
    building_model: bool = False
    # functions of the raising frame: with raise_frames, the row counts only when the raising frame is one of them (a
    # function whose every check is about one matter: vLLM's and SGLang's get_quant_config, the checkpoint's
    # quantization config against the launch's quantization setting)
    raise_functions: tuple[str, ...] = ()
    # regexes searched in the file of the frame that read the attribute an AttributeError names (the innermost frame
    # outside transformers' configuration_utils.py, whose __getattribute__ only looks the field up): the row counts
    # only when one is there (reasoning/category_score.py attribute_reader)
    read_in: tuple[re.Pattern[str], ...] = ()


@dataclass(frozen=True)
class ConditionalCheck:
    """A check that concerns one shape of the category's failures only: shown when its words are in the failure's
    text (and, with `engine`, for that engine only), so that no other failure of the category carries it."""

    words: re.Pattern[str]
    check: str
    engine: str | None = None
    # Launch settings (flags, and the names the engine's settings dump gives them) the check is about: shown only when
    # the launch gives one of them, or when the paste shows no launch settings at all (the check then says "if").
    given: tuple[str, ...] = ()
    # A check for a multimodal model alone: shown only when the log's architecture is one some indexed release
    # registers as multimodal (facts/engine_architectures.json.gz), never on the message's words alone.
    multimodal_model: bool = False


@dataclass(frozen=True)
class TypeGuidance:
    """What an exception type alone says (the empty `types` row: any other type)."""

    types: tuple[str, ...]
    checks: tuple[str, ...]


@dataclass(frozen=True)
class CategoryTable:
    """facts/categories.toml, read: the evidence->category rows and the per-type guidance."""
    rows: tuple[CategoryRow, ...]
    by_type: tuple[TypeGuidance, ...]
    symptoms: frozenset[str] = frozenset()  # categories that say what happened to a process, not why
    causes: tuple[str, ...] = ()  # the categories that can be a symptom's cause, most specific first
    wrappers: frozenset[str] = frozenset()  # categories whose message wraps an inner error

    def row(self, category: str) -> CategoryRow | None:
        return next((row for row in self.rows if row.category == category), None)

    def wrapper_call_row(self) -> CategoryRow | None:
        """The row of a wrapper's call on the engine's API that the installed release does not fit."""
        return next((row for row in self.rows if row.wrapper_call), None)

    def type_guidance(self, short_type: str) -> TypeGuidance:
        for guidance in self.by_type:
            if short_type in guidance.types:
                return guidance
        return next(g for g in self.by_type if not g.types)


ENGINES = ("sglang", "vllm")


def _row(entry: dict[str, object], patterns: dict[str, str] | None = None) -> CategoryRow:
    def strings(key: str) -> tuple[str, ...]:
        value = entry.get(key, ())
        assert isinstance(value, list | tuple)
        return tuple(_named(str(item), patterns or {}) for item in value)

    return CategoryRow(
        category=str(entry["category"]),
        title=str(entry["title"]),
        kinds=strings("kinds"),
        types=strings("types"),
        words=tuple(compile_gated(word, re.IGNORECASE) for word in strings("words")),
        strong_words=tuple(compile_gated(word, re.IGNORECASE) for word in strings("strong_words")),
        frames=strings("frames"),
        frames_need=strings("frames_need"),
        source_words=tuple(compile_gated(word) for word in strings("source_words")),
        in_engine_code=bool(entry.get("in_engine_code", False)),
        in_wrapper_code=bool(entry.get("in_wrapper_code", False)),
        wrapper_call=bool(entry.get("wrapper_call", False)),
        not_in_engine_code=bool(entry.get("not_in_engine_code", False)),
        imports_own_engine=bool(entry.get("imports_own_engine", False)),
        imports_own_project=bool(entry.get("imports_own_project", False)),
        at_package_import=bool(entry.get("at_package_import", False)),
        in_package_code=bool(entry.get("in_package_code", False)),
        frameless=bool(entry.get("frameless", False)),
        no_own_script=bool(entry.get("no_own_script", False)),
        cause_words=tuple(compile_gated(word, re.IGNORECASE) for word in strings("cause_words")),
        checks=strings("checks"),
        engine_checks={engine: strings(engine) for engine in ENGINES if engine in entry},
        sources=strings("sources"),
        checks_when=tuple(_conditional(item) for item in _tables(entry.get("checks_when", ()))),
        raise_frames=strings("raise_frames"),
        cut_frames=tuple(compile_gated(word, re.MULTILINE) for word in strings("cut_frames")),
        engine_message=bool(entry.get("engine_message", False)),
        other_program=bool(entry.get("other_program", False)),
        types_needed=bool(entry.get("types_needed", False)),
        source_needed=bool(entry.get("source_needed", False)),
        words_needed=bool(entry.get("words_needed", False)),
        raising_module=bool(entry.get("raising_module", False)),
        budget_frames=strings("budget_frames"),
        building_model=bool(entry.get("building_model", False)),
        raise_functions=strings("raise_functions"),
        read_in=tuple(compile_gated(word) for word in strings("read_in")),
    )


def _named(text: str, patterns: dict[str, str]) -> str:
    """`text` with each `{{name}}` replaced by the table's shared pattern of that name (categories.toml's [patterns])."""
    for name, pattern in patterns.items():
        text = text.replace("{{" + name + "}}", pattern)
    assert "{{" not in text, f"no shared pattern for {text!r}"
    return text


def _tables(value: object) -> list[dict[str, object]]:
    assert isinstance(value, list | tuple)
    return [dict(item) for item in value]


def _conditional(item: dict[str, object]) -> ConditionalCheck:
    engine = item.get("engine")
    given = item.get("given", ())
    return ConditionalCheck(compile_gated(str(item.get("words", "")), re.IGNORECASE), str(item["check"]),
                            str(engine) if engine else None, tuple(str(name) for name in given) if isinstance(given, list) else (),
                            bool(item.get("multimodal_model", False)))


@lru_cache(maxsize=1)
def table() -> CategoryTable:
    from logsleuth.facts.table import (
        parsed_toml,  # the file by its path (not importlib.resources), cached as JSON
    )

    data = parsed_toml("categories.toml")
    return CategoryTable(
        rows=tuple(_row(entry, dict(data.get("patterns", {}))) for entry in data["category"]),
        by_type=tuple(TypeGuidance(tuple(g["types"]), tuple(g["checks"])) for g in data["by_type"]),
        symptoms=frozenset(data.get("symptoms", ())),
        causes=tuple(data.get("causes", ())),
        wrappers=frozenset(data.get("wrappers", ())),
    )


def neutral_checks(category: str, texts: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A category's engine-neutral general checks (none for a category the table does not cover), led by those of its
    conditional checks that name no engine, no launch setting and no model kind whose words are in `texts` (the
    failure's own lines), as row_checks leads with them: NCCL's `unhandled cuda error` has its own, whichever engine
    ran."""
    row = table().row(category)
    if row is None:
        return ()
    worded = tuple(c.check for c in row.checks_when
                   if c.engine is None and not c.given and not c.multimodal_model and c.words.pattern
                   and any(c.words.search(text) for text in texts))
    return (*worded, *row.checks)
