"""How strongly a failure's evidence points to each row of facts/categories.toml, and the best row
(reasoning/general.py's category): the words of its messages, its type and kind, the line that raised it, the
subsystems its frames run through, each weighed as the table's header says."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from logsleuth.diagnosis.grouping import names_no_cause
from logsleuth.diagnosis.match import other_program
from logsleuth.facts.categories import CategoryRow, table
from logsleuth.facts.engine_messages import engines_raising
from logsleuth.facts.gpu_error_names import with_status_names
from logsleuth.facts.message_templates import short_type
from logsleuth.fixes import static_catalogs
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure, Frame
from logsleuth.pydantic_display import checked_as
from logsleuth.reasoning.call_frames import (
    SIGNATURE_TYPES,
    engine_class_called,
    engine_code_of,
    imports_own_engine,
    imports_own_project,
    made_by_a_wrapper,
    names_a_class_no_engine_defines,
    names_an_engine_export,
    own_frames,
    package_being_imported,
    package_called_by_engine,
    shows_no_frame,
    wrapper_call_into_engine,
)
from logsleuth.reasoning.engine_api_calls import code_path, package_path
from logsleuth.reasoning.evidence import exception_lines
from logsleuth.reasoning.message_site import raising_frame, site_cue, site_reason
from logsleuth.tracebacks.grammar import BUDGET_LINE
from logsleuth.tracebacks.native_errors import is_companion_failure
from logsleuth.tracebacks.raising_statement import imported_type

# How much each kind of cue weighs: the words a message says are the strongest evidence, a frame's subsystem
# the weakest (a failure passes through many subsystems on its way up).
WORD_WEIGHT = 4
STRONG_WEIGHT = 8  # words that name a category outright: more than another row's words and type together
TYPE_WEIGHT = 3
KIND_WEIGHT = 3
FRAME_WEIGHT = 1
# Raised while an installed package was being imported: as strong as a message's words, more than a type or a frame;
# its row is the table's last, so a row whose words fit wins the tie (torch's "No CUDA GPUs are available" at import).
AT_IMPORT_WEIGHT = WORD_WEIGHT
INNERMOST_FRAMES = 6  # the frames whose files name the subsystem: the innermost ones
QUOTED_ABOVE = 120  # characters of a line before a cut traceback quoted in the reasons
# What a reading of a traceback cut before its exception line says of that line: which one to look for.
MISSING_LINE = ("the exception line being missing from the paste (the `Type: message` line CPython prints right after "
                "the last frame, the first line at the left margin below it)")
UNCLASSIFIED = "unclassified"


# The first call on a source line (`self.model = get_model(`, `self._initialize_kv_caches(vllm_config)`,
# `return loader.load_model(`): on the innermost frame a paste kept, the function the error came from.
_FIRST_CALL = compile_lazily(r"(?:^|[\s=(.,])([A-Za-z_]\w*+)\(")


def called_by(frame: Frame) -> str | None:
    """The function the source line of `frame` calls first, if it shows one."""
    found = _FIRST_CALL.search(frame.source) if frame.source else None
    return found[1] if found and found[1] not in ("super", "getattr", "len", "int", "str") else None


def _places(row: CategoryRow, frame: Frame, innermost: bool = False) -> str | None:
    """What of `frame` (a path fragment of its file, or its file and function) puts it in `row`'s subsystem, read for
    a traceback cut before its exception line: the row's frames (unless they count only beside given exception
    types) and its cut_frames.  `innermost`: the last frame the paste kept, whose line's call is the frame the paste
    lost, so its callee is read as a function of the same file (a cut right after `self._initialize_kv_caches(…)`
    stopped in the KV cache's sizing)."""
    if not row.frames_need or "" in row.frames_need:
        fragment = next((f for f in row.frames if f in code_path(frame.file)), None)
        if fragment:
            return fragment.rstrip("/")
    where = f"{code_path(frame.file)} {frame.function or ''}()\n{frame.source or ''}"
    said = next((m for pattern in row.cut_frames if (m := pattern.search(where))), None)
    placed = f"{package_path(frame.file)} in {frame.function}"
    if said is None:
        callee = called_by(frame) if innermost and row.cut_frames else None
        calling = f"{code_path(frame.file)} {callee}()\n" if callee else None
        if calling and any(pattern.search(calling) for pattern in row.cut_frames):
            return f"{placed}, calling {callee}()"
        return None
    return f"{placed}, calling {said[0]}" if said.start() > where.index("\n") else placed


# The model loader's stage: its modules (vllm/model_executor/model_loader/, sglang/srt/model_loader/), a model class's
# (…/models/<model>.py: the model being built layer by layer) and the calls both engines' workers and runners make
# into it.  The weight-loading row's cut_frames place the reading of the weights themselves (load_weights,
# weight_loader): a cut there stays weight-loading (its row is written first and wins the tie).
_LOADER_FILES = ("model_loader/", "model_executor/models/", "srt/models/")
_LOADER_CALLS = frozenset({"load_model", "get_model", "initialize_model", "_initialize_model", "model_class", "make_layers"})


def cut_in_model_loader(failure: Failure) -> Frame | None:
    """A traceback cut before its exception line whose innermost own frames run in the model loader's stage: the
    innermost such frame, else None."""
    if not names_no_cause(failure):
        return None
    own = own_frames(failure)[-INNERMOST_FRAMES:]
    return next((frame for frame in reversed(own)
                 if any(part in frame.file for part in _LOADER_FILES)
                 or frame.function in _LOADER_CALLS or called_by(frame) in _LOADER_CALLS), None)


# The model being built or its weights read: a model class's or a layer's constructor (the parameters allocated layer by
# layer), and the loaders' calls.  A step after it in the same frames (a forward pass, the profiling run, the KV cache's
# sizing, CUDA graph capture, serving) means the weights were already in place when it failed.
_BUILD_FILES = ("model_executor/models/", "srt/models/", "model_executor/layers/", "srt/layers/", "parallel_utils/",
                "model_loader/")
_BUILD_CALLS = frozenset({*_LOADER_CALLS, "load_weights", "_load_weights", "weight_loader", "create_weights",
                          "load_weights_and_postprocess", "init_model"})
_CONSTRUCTORS = frozenset({"__init__", "<listcomp>", "<genexpr>", "<lambda>"})
AFTER_BUILD_CALLS = frozenset({
    "forward", "profile_run", "_dummy_run", "_dummy_sampler_run", "determine_num_available_blocks",
    "determine_available_memory", "profile_max_num_token", "init_memory_pool", "_initialize_kv_caches",
    "initialize_kv_cache", "initialize_cache", "init_cache_engine", "_init_cache", "_allocate_kv_cache",
    "capture", "capture_model", "capture_one_batch_size", "init_cuda_graphs", "execute_model", "warmup_model",
    "compile_or_warm_up_model", "generate", "step", "run_batch", "forward_batch_generation", "profile_num_available_blocks",
})


def building_model_frame(failure: Failure) -> Frame | None:
    """The innermost frame of the last exception that builds the model or loads its weights, when no frame shows a step
    after that (the weights then were not all in place yet: what ran out was the weights' own room), else None."""
    frames = failure.final.frames
    if any(frame.function in AFTER_BUILD_CALLS for frame in frames):
        return None
    return next((frame for frame in reversed(frames)
                 if frame.function in _BUILD_CALLS
                 or (frame.function in _CONSTRUCTORS and any(part in code_path(frame.file) for part in _BUILD_FILES))),
                None)


def _raised_by_source_words(row: CategoryRow, failure: Failure) -> bool:
    """Whether the raising line (the innermost frame's source) holds one of the row's source words."""
    raising = failure.final.frames[-1].source if failure.final.frames else None
    return raising is not None and any(pattern.search(raising) for pattern in row.source_words)


def _raised_in(row: CategoryRow, failure: Failure) -> str | None:
    """The fragment of `row`'s raise_frames the raising frame's file holds (the innermost frame of the last exception,
    whose statement raised it), if any; with raise_functions, only when the raising frame is one of them."""
    frames = failure.final.frames
    if not row.raise_frames or not frames:
        return None
    if row.raise_functions and frames[-1].function not in row.raise_functions:
        return None
    fragment = next((fragment for fragment in row.raise_frames if fragment in code_path(frames[-1].file)), None)
    return f"{fragment.rstrip('/')} {frames[-1].function}()" if fragment and row.raise_functions else fragment


# transformers' PretrainedConfig looks every attribute up through its own __getattribute__ (attribute_map), so an
# AttributeError on a model config's field is raised in that frame; the frame above it is the code that read the field.
_CONFIG_LOOKUP = "transformers/configuration_utils.py"


def attribute_reader(failure: Failure) -> Frame | None:
    """For an AttributeError, the frame that read the missing attribute: the innermost frame of the last exception
    outside transformers' config lookup; None for another type or no frame."""
    if short_type(failure.final.type) != "AttributeError":
        return None
    return next((frame for frame in reversed(failure.final.frames) if _CONFIG_LOOKUP not in code_path(frame.file)), None)


def _read_in(row: CategoryRow, failure: Failure) -> str | None:
    """The file of the frame that read the missing attribute, when one of `row`'s read_in regexes is in it."""
    reader = attribute_reader(failure) if row.read_in else None
    if reader is None:
        return None
    path = code_path(reader.file)
    return path if any(pattern.search(path) for pattern in row.read_in) else None


def _cut_subsystem_frame(failure: Failure, site_words: tuple[str, ...] = ()) -> Frame | None:
    """A traceback cut before its exception line (no type, no message): the innermost own frame, of the innermost
    INNERMOST_FRAMES, whose file or function a row's subsystem names (the model loader, the distributed layer, the KV
    cache's sizing, ...).  With no words and no type, where the process was is the only evidence, and the innermost
    frame that names a subsystem is the most specific; an outer frame's subsystem is only the path the call took.
    So is the raising frame of a type read from its raising statement alone (no message, and no template of the
    check in `site_words`, the raise site index's message that names more)."""
    final = failure.final
    raising = final.frames[-1].source if final.frames else None
    # (an import the paste cut at failed as an import, whatever the importing module's subsystem: ImportError's own row)
    typed_by_its_place = (final.typed_from_statement and not final.message.strip() and not site_words
                          and not imported_type(raising or ""))
    if not (names_no_cause(failure) or typed_by_its_place):
        return None
    own = own_frames(failure)[-INNERMOST_FRAMES:]
    if not names_no_cause(failure):
        # A type read from the raising statement alone (no message, no template of its check): the raising frame's
        # subsystem is the only evidence; the frames above it are only the way the call went.
        own = own[-1:] if own and own[-1] is final.frames[-1] else []
    rows, last = table().rows, final.frames[-1] if final.frames else None
    return next((frame for frame in reversed(own) if any(_places(row, frame, frame is last) for row in rows)), None)


# Ray re-raises a task's or an actor's exception as a class it names after the cause's class on the fly
# (ray/exceptions.py RayTaskError.as_instanceof_cause: f"RayTaskError({cause_cls.__name__})"): verl, OpenRLHF and Ray
# Serve print `ray.exceptions.RayTaskError(ModuleNotFoundError): ray::TaskRunner.run() (pid=…)`, whose message is
# only the actor's address.  The name in parentheses is the failure's own type.
_RAY_CAUSE = compile_lazily(r"^RayTaskError\((\w+)\)$")


def type_names(name: str) -> set[str]:
    """The short names a row's `types` may name the exception type `name` by: its own, and the cause's class inside
    Ray's RayTaskError(…)."""
    short = short_type(name)
    cause = _RAY_CAUSE.match(short)
    return {short, cause[1]} if cause else {short}


def _engine_worded(failure: Failure) -> bool:
    """The failure's type and message are those of a check of an engine's own code: its message template in the raise
    site index (facts/engine_messages.py), whichever engine; the wording is the engine's, not a wrapper's or a script's."""
    type_name, message = checked_as(failure.final)
    return bool(type_name and message.strip() and engines_raising(type_name, message))


# A person's sentence names a checkpoint by its repository or file name (`Qwen/Qwen3.5-397B-A17B-FP8`,
# `Llama-4-Scout-17B-16E-Instruct`): a quantization or model word inside it says which model ran, not what failed
# (sgl-project/sglang#28312: a serving crash after an upgrade, its model an FP8 checkpoint).  And it hyphenates
# what a log spells with spaces ("an out-of-memory (OOM) issue", sgl-project/sglang PR#6744).
_HYPHEN_BETWEEN_WORDS = compile_lazily(r"(?<=[A-Za-z])-(?=[A-Za-z])")
# A record of a lower level than an error says what went on around the failure, not what failed: its logger's module
# (`WARN tokenizer_manager.sigterm_handler: SIGTERM received …`, ai-dynamo/dynamo#2294) names no category.
_NOT_AN_ERROR = compile_lazily(r"\b(?:WARN(?:ING)?|INFO|DEBUG)\b")


# The record a vLLM process logs just before its own fatal traceback (logger.exception in v1/executor/multiproc_executor.py
# worker_main: `WorkerProc failed to start.`, `WorkerProc hit an exception.`; v1/engine/core.py run_engine_core:
# `EngineCore failed to start.`, `EngineCore encountered a fatal error.`): a paste cut before the traceback's own
# exception line keeps it as the failure's message, but it says only which process died, not why (vllm-project/vllm#26328:
# the person's sentence above it, "when I add the speculative decoding bits", says what the launch changed).
_DEATH_NOTICE = compile_lazily(r"^(?:EngineCore failed to start|EngineCore encountered a fatal error|WorkerProc failed to "
                               r"start|WorkerProc hit an exception)\.?$")


def _says_no_cause(failure: Failure, texts: list[str]) -> bool:
    """A traceback cut before its exception line whose words (if any) are only a process's notice of its own death."""
    if names_no_cause(failure):
        return not any(text.strip(": ") for text in texts)
    final = failure.final
    return (failure.kind == "traceback" and final.truncated and len(texts) == 1
            and bool(_DEATH_NOTICE.match(final.message.strip())))


def _names_a_thing(word: str) -> bool:
    """A repository, file or model name: a word with a slash, or with a hyphen and a digit."""
    return "/" in word or ("-" in word and any(c.isdigit() for c in word))


def _as_words(sentence: str) -> str:
    """`sentence` with its model, file and path names masked and its hyphenated words spelt with spaces."""
    words = " ".join("…" if _names_a_thing(word) else word for word in sentence.split())
    return _HYPHEN_BETWEEN_WORDS.sub(" ", words)


def _said_above(row: CategoryRow, said_texts: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The words of `row` in one of `said_texts` (the lines kept just before a traceback cut before its exception
    line, each with its words as _as_words reads them), with that line shortened for the prose; None when none holds
    them."""
    for text, words in said_texts:
        found = next((m[0] for pattern in row.words if (m := pattern.search(words))), None)
        if found:
            return found.strip(), text if len(text) <= QUOTED_ABOVE else text[: QUOTED_ABOVE - 1] + "…"
    return None


def _budget_said(row: CategoryRow, failure: Failure) -> str | None:
    """The words of a memory-budget line before the failure that leaves the KV cache no room (grammar.BUDGET_LINE),
    for a row that reads them (`budget_frames`): only when the traceback was cut before its exception line, or its
    frames are in the start-up step that logged the line.  A whole exception line of its own (an illegal memory access
    while serving) is that failure's, not the budget's."""
    if not row.budget_frames:
        return None
    final = failure.final
    cut = failure.kind == "traceback" and not final.type and not final.message
    if not cut and not any(frame.function in row.budget_frames for block in failure.exceptions for frame in block.frames):
        return None
    return next((m[0] for text in failure.context if (m := BUDGET_LINE.search(text))), None)


def _has_own_words(row: CategoryRow, failure: Failure, texts: list[str], word_texts: list[str],
                   said_texts: Sequence[tuple[str, str]]) -> bool:
    """One of the row's words or strong words is where _score reads it: strong words in the messages and the error
    lines just before the failure, words in the masked messages and in the lines kept before a cut traceback."""
    return (any(pattern.search(text) for pattern in row.strong_words for text in (*texts, *failure.context))
            or _budget_said(row, failure) is not None
            or any(pattern.search(text) for pattern in row.words for text in word_texts)
            or any(pattern.search(words) for pattern in row.words for _, words in said_texts))


def _score(row: CategoryRow, failure: Failure, texts: list[str], files: list[str], wrapped: bool,
           cut_at: Frame | None, word_texts: list[str], said_texts: Sequence[tuple[str, str]] = (),
           site: Frame | None = None) -> tuple[int, list[str]]:
    """How strongly the failure's evidence points to `row`, and what pointed (for the root cause's prose); `wrapped`:
    a program that runs the engine made the failing call (made_by_a_wrapper); `cut_at`: the frame a traceback cut
    before its exception line stopped in whose subsystem a row names (_cut_subsystem_frame); `word_texts`: `texts`
    with the code names CPython quotes masked (_names_masked), the same for every row, so made once by the caller;
    `said_texts`: for a traceback cut before its exception line, the lines kept just before it (an error record above
    it, the sentence a person wrote to say what failed), whose plain words then count as the message's would;
    `site`: the module the
    engine's code raises the message from, when the paste does not show it (message_site.raising_frame), read as the
    raising frame by the row's `frames`, `raise_frames` and `cut_frames`."""
    types = {name for block in failure.exceptions for name in type_names(block.type)}
    site_placed = site_cue(row, site, types) if site is not None else None
    if row.in_engine_code and is_companion_failure(failure.final.type):
        return 0, []  # a companion tool's record says the tool failed, not the engine's code (REVIEW4 M3)
    unplaced = row.in_engine_code and engine_code_of(failure) is None
    if unplaced and not shows_no_frame(failure):
        return 0, []
    if row.in_wrapper_code and (not wrapped or names_an_engine_export(failure)):
        return 0, []  # (an engine's class left unbound by a guarded import: the dependency-version row's)
    if (row.wrapper_call or row.in_wrapper_code) and names_a_class_no_engine_defines(failure):
        # CPython names the class whose call failed, and no engine defines it (a wrapper's own `vLLMRollout`, in a
        # module named after the engine): the wrapper failing on its own object, no sign of another engine release.
        return 0, []
    if row.not_in_engine_code and engine_code_of(failure) is not None:
        return 0, []
    if row.imports_own_engine and not imports_own_engine(failure):
        return 0, []
    if row.imports_own_project and imports_own_project(failure) is None:
        return 0, []
    importing = package_being_imported(failure) if row.at_package_import else None
    if row.at_package_import and importing is None:
        return 0, []
    if row.frameless and (not shows_no_frame(failure) or wrapped):
        return 0, []
    if row.no_own_script and not (wrapped or shows_no_frame(failure) or engine_code_of(failure) is not None):
        return 0, []
    raised_in = _raised_in(row, failure)
    site_raised = site_placed if site is not None and raised_in is None and row.raise_frames else None
    if site_raised is not None and not any(f.rstrip("/") == site_raised for f in row.raise_frames):
        site_raised = None  # placed by the row's other cues, not its raise_frames
    if row.raise_frames and raised_in is None and site_raised is None:
        return 0, []
    read_in = _read_in(row, failure)
    if row.read_in and read_in is None:
        return 0, []
    called = package_called_by_engine(failure) if row.in_package_code else None
    if row.in_package_code and called is None:
        return 0, []
    if row.engine_message and not _engine_worded(failure):
        return 0, []
    if row.other_program and other_program(failure) is None:
        return 0, []
    if row.types_needed and not any(t in row.types for block in failure.exceptions for t in type_names(block.type)):
        return 0, []
    if row.source_needed and not _raised_by_source_words(row, failure):
        return 0, []
    if row.words_needed and not _has_own_words(row, failure, texts, word_texts, said_texts):
        return 0, []  # its place alone (a configuration module) says which check, not that it ties two settings
    if row.building_model and building_model_frame(failure) is None:
        return 0, []
    score, why = 0, []
    if importing:
        score += AT_IMPORT_WEIGHT
        raised = package_path(failure.final.frames[-1].file)
        why.append(f"an error raised while {importing} was being imported ({raised})")
    if raised_in:
        score += WORD_WEIGHT
        why.append(f"the check that raised it, in {raised_in.rstrip('/')}")
    if site_raised is not None and site is not None:
        score += WORD_WEIGHT
        why.append(site_reason(site))
    if read_in:
        score += WORD_WEIGHT
        why.append(f"the field read by {read_in}")
    if row.engine_message:
        why.append("the message being one of the engine's own checks (its template in the raise site index)")
    if failure.kind in row.kinds:
        score += KIND_WEIGHT
        why.append("an argument error" if failure.kind == "usage" else f"a failure of kind {failure.kind}")
    hit_type = next((t for t in row.types if t in types), None)
    if hit_type:
        score += TYPE_WEIGHT
        why.append(f"the exception type {hit_type}")
    # Words that name a category outright count on the error lines just before the failure too (pip prints
    # "(from versions: none)" on the line above its failure).
    strong = next(
        (m[0] for pattern in row.strong_words for text in (*texts, *failure.context) if (m := pattern.search(text))), None
    ) or _budget_said(row, failure)
    # a class a person stated in words was typed by logsleuth (tracebacks/stated_failures.py): the words are inferred
    inferred = "; inferred from the user's sentence" if failure.final.read_from_prose == "stated" else ""
    if strong:
        score += STRONG_WEIGHT
        above = not any(pattern.search(text) for pattern in row.strong_words for text in texts)
        # a line before the failure (a budget line, pip's note): said as such, not as the message's
        why.append(f"the words of a line just before it ({strong.strip()!r})" if above else
                   f"the message's words ({strong.strip()!r}{inferred})")
    engine_class = engine_class_called(failure) if row.wrapper_call and wrapped and not strong else None
    if engine_class:
        strong = engine_class
        score += STRONG_WEIGHT
        what = "module" if engine_class.split(".", 1)[0] in ENGINE_NAMES else "class"
        why.append(f"a call made by a wrapper's frame on {engine_class}, a {what} of the engine's code")
    word = next((m[0] for pattern in row.words for text in word_texts if (m := pattern.search(text))), None)
    if word and not strong:
        score += WORD_WEIGHT
        why.append(f"the message's words ({word.strip()!r}{inferred})")
    said_above = _said_above(row, said_texts) if said_texts and not (word or strong) else None
    if said_above:
        score += WORD_WEIGHT
        why.append(f"the words of a line just before it ({said_above[1]!r}: {said_above[0]!r}), {MISSING_LINE}")
    raising = failure.final.frames[-1].source if failure.final.frames else None
    said = next((m[0] for pattern in row.source_words if raising and (m := pattern.search(raising))), None)
    if said and not strong:
        score += WORD_WEIGHT
        why.append(f"the line that raised it ({said.strip()!r})")
    placed = not row.frames_need or any(t in types for t in row.frames_need)
    if (row.wrapper_call and not score and short_type(failure.final.type) in SIGNATURE_TYPES
            and not (wrapper_call_into_engine(failure) or engine_class_called(failure))):
        # A wrapper's frames and a TypeError or AttributeError say who made the call, not that it was a call into the
        # engine: a wrapper failing on its own object is no sign of another engine release.
        placed = False
    fragment = next((f for f in row.frames for file in files if f in file), None) if placed else None
    subsystem = _places(row, cut_at, cut_at is failure.final.frames[-1]) if cut_at is not None else None
    if fragment:
        score += FRAME_WEIGHT
        if fragment.rstrip("/") != subsystem:
            why.append(f"frames through {fragment.rstrip('/')}")
    elif site_placed is not None and site_raised is None and site is not None:
        # The module that raises the message, read as the innermost frame a traceback would have shown: a frame's
        # subsystem, weighed as one (its row's words or type, if any, say more).
        score += FRAME_WEIGHT
        why.append(site_reason(site))
    if subsystem:
        # Weighs as words do: the innermost subsystem is the only evidence a traceback cut before its exception line
        # keeps, and it outweighs the outer frames' paths (weight 1 each) the call only went through.
        score += WORD_WEIGHT
        why.append(f"the innermost frame's subsystem ({subsystem}), {MISSING_LINE}")
    if score and called is not None:
        failing, caller = called
        why.append(f"the failing frame in an installed package ({package_path(failing.file)}:{failing.line}), "
                   f"called by the engine's code ({package_path(caller.file)}:{caller.line})")
    if score and unplaced:
        # No frame shown at all (the paste kept only the error line): where it was raised is unknown, so the
        # engine's own code is as likely as any package's; the root cause says the frames were missing.
        why.append("no frames shown to say which package raised it")
    return score, why


# The code names CPython's messages quote (`'NoneType' object has no attribute 'max_model_len'`, `got an unexpected
# keyword argument 'quantization'`, `name 'x' is not defined`, dataclasses' `cannot assign to field 'max_model_len'`) say
# which identifier the code used, not what went wrong: a category's plain words (context length, quantization) must
# not be read in them.  Strong words, written for such shapes on purpose, still see them.
_QUOTED_CODE_NAME = compile_lazily(
    r"(has no attribute |unexpected keyword argument |cannot import name |multiple values for (?:keyword )?argument "
    r"|required (?:positional|keyword-only) arguments?: |(?:^|\s)name |cannot assign to field )'[^']*'"
)


# A file path or a storage URI a message quotes (torch's MapAllocator: `unable to mmap N bytes from file <…/hub/
# models--Qwen--Qwen3-30B-A3B-GPTQ-Int4/…/model.safetensors>: Cannot allocate memory (12)`) names where the user keeps a
# model, not what went wrong: a quantization word in a directory's name must not decide the category.  A path to code
# stays readable, since it names the code that raised (a native check's source location, `[../third_party/gloo/gloo/
# transport/tcp/unbound_buffer.cc:81]`; a package's shared library that failed to load, `…/flash_attn_2_cuda….so`), and
# so do the system's own trees (/dev/shm, /proc, /sys: the OS's names, host-memory's `/dev/shm`).
_QUOTED_PATH = compile_lazily(
    r"(?<![\w.:/])(?:~|\.{1,2})?/(?!dev/|proc/|sys/|dev\b)[^\s'\"<>()\[\]{},;:]*+"
    r"|\b(?:s3|gs|gcs|oss|az|abfss?|hdfs)://[^\s'\"<>()\[\]{},;]*+"
)
_CODE_FILE = compile_lazily(r"(?:/(?:site|dist)-packages/|\.(?:py|pyx|so(?:\.\d+)*|c|cc|cpp|cxx|cu|cuh|h|hpp|rs)$)")


# A model's name a message quotes (`The model Qwen2.5-7B-Instruct-AWQ does not exist.`, `Failed to start server for
# TheBloke/Llama-2-13B-chat-GPTQ`): a Hugging Face repository id (owner/name, the name hyphenated), or a hyphenated name
# with a part that gives the model's size (7B, 0.5B, 8x7B, A3B).  It says which model ran, not what failed: a
# quantization method in it must not decide the category (the failure's own words, its type and frames do).
_MODEL_NAME = compile_lazily(r"(?<![\w./-])(?:[A-Za-z0-9][\w.-]*/)?[\w.]+(?:-[\w.]+)+(?![\w/])")
_SIZE_PART = compile_lazily(r"^(?:\d+(?:\.\d+)?[BbMm]|\d+x\d+(?:\.\d+)?[Bb]|A\d+(?:\.\d+)?B)$")


def _model_name_masked(found: re.Match[str]) -> str:
    name = found[0].rstrip(".")
    owner, _, rest = name.rpartition("/")
    is_model = bool(owner) or any(_SIZE_PART.match(part) for part in rest.split("-"))
    return "…" + found[0][len(name):] if is_model and not _CODE_FILE.search(name) else found[0]


def _data_path_masked(found: re.Match[str]) -> str:
    return found[0] if _CODE_FILE.search(found[0]) else "…"


# A settings dump a message carries (`ServerArgs(model_path='…', tokenizer_path='…', …)`, a pydantic error's
# `input_value={'model': …, 'tokenizer': …}`, vLLM's `model='…', tokenizer='…', skip_tokenizer_init=False, …`): three or
# more `name=value` or `'name': value` pairs in a row, one of them named as a launch setting (`--model-path`,
# `--tokenizer`: a flag of some release's catalog).  It lists every setting the launch has, so a row's word in it
# (tokenizer, quantization, lora) says what the launch holds, not where the failure is (issue 28: guidance that
# follows a keyword, not the failing site).  An error body printed as a dict (the openai client's `{'error':
# {'message': …, 'type': …, 'code': 400}}`) is the server's own account of the failure, not a dump: it stays.
# A value never holds `=` or a quote outside its quotes, and a quoted or bracketed one is at most _LONGEST_VALUE long,
# so a pair cannot restart inside the previous one's value (`a=a=a=…` or an unclosed `x='` over a 64 KiB line took a
# minute, quadratic backtracking).
_LONGEST_VALUE = 400
_VALUE = (rf"""(?:'[^'\n]{{0,{_LONGEST_VALUE}}}'|"[^"\n]{{0,{_LONGEST_VALUE}}}"|\[[^\]]{{0,{_LONGEST_VALUE}}}\]"""
          rf"""|\{{[^{{}}]{{0,{_LONGEST_VALUE}}}\}}|[^\s,(){{}}\[\]='"]*+)""")
_SETTINGS_DUMP = compile_lazily(
    rf"(?<![\w=])\w+={_VALUE}(?:\s*,\s*\w+={_VALUE}){{2,}}|'\w+':\s*{_VALUE}(?:\s*,\s*'\w+':\s*{_VALUE}){{2,}}")
_DUMP_KEY = compile_lazily(r"(?<![\w'])'?(\w+)'?(?==|':)")
_ERROR_BODY_KEYS = frozenset({"message", "detail", "error", "msg"})


def _settings_dump_masked(found: re.Match[str]) -> str:
    keys = {key.lower() for key in _DUMP_KEY.findall(found[0])}
    if keys & _ERROR_BODY_KEYS or not any(f"--{key.replace('_', '-')}" in _launch_flags() for key in keys):
        return found[0]
    return "…"


@lru_cache(maxsize=1)
def _launch_flags() -> frozenset[str]:
    return frozenset().union(*(static_catalogs.all_flags(engine) for engine in ("sglang", "vllm")))


def _names_masked(text: str) -> str:
    masked = _QUOTED_CODE_NAME.sub(r"\1'…'", text) if "'" in text else text
    masked = _SETTINGS_DUMP.sub(_settings_dump_masked, masked) if "=" in masked or "':" in masked else masked
    masked = _QUOTED_PATH.sub(_data_path_masked, masked) if "/" in masked else masked
    return _MODEL_NAME.sub(_model_name_masked, masked) if "-" in masked else masked


def _logged_words(failure: Failure) -> list[str]:
    """The failure's exception lines, a companion tool's failed start read as its record's text alone: the type
    (`sgl-router failed`) is logsleuth's name for it, and its words name no category (REVIEW4 M2)."""
    lines = exception_lines(failure)
    return [line.split(": ", 1)[1] if is_companion_failure(line.split(": ", 1)[0]) else line for line in lines]


def best_row(failure: Failure, leave_out: frozenset[str] = frozenset(), site_words: tuple[str, ...] = (),
             wrapper: str | None = None, engine: str | None = None
             ) -> tuple[CategoryRow, list[str]] | None:
    """The category the evidence points to most strongly (ties: the row written first), with what pointed;
    never one of `leave_out`.  `site_words`: the message the raising check prints, when the paste cut the failure's;
    `wrapper`: the program the log shows running the engine (LaunchInfo.wrapper); `engine`: the decided engine, whose code alone says where a
    message the paste shows no frame of was raised (message_site.raising_frame)."""
    # a CUDA status printed by its number read as its name too (`Error 804: …`, cudaErrorCompatNotSupportedOnDevice)
    texts = [with_status_names(text) for text in (*_logged_words(failure), *site_words)]
    files = [code_path(frame.file) for frame in failure.final.frames[-INNERMOST_FRAMES:]]
    wrapped = made_by_a_wrapper(failure, wrapper)
    cut_at = _cut_subsystem_frame(failure, site_words)
    site = raising_frame(failure, engine, {t for block in failure.exceptions for t in type_names(block.type)})
    word_texts = [_names_masked(text) for text in texts]
    # A traceback cut before its exception line keeps no words of its own: the lines just before it (the person's
    # sentence, an error record) are the only words of the failure the paste shows (grammar.CONTEXT_WORDS).
    said_texts = ([(text, _as_words(_names_masked(text))) for text in failure.context if not _NOT_AN_ERROR.search(text)]
                  if _says_no_cause(failure, texts) else [])
    best: tuple[int, CategoryRow, list[str]] | None = None
    # An unclassified row's words (a wrapper's "Failed to load model") say no category: it stands only when no other
    # row is reached by more than a frame's path (the wrapper's own frames name no cause either).
    fallback: tuple[int, CategoryRow, list[str]] | None = None
    for row in table().rows:
        if row.category in leave_out:
            continue
        score, why = _score(row, failure, texts, files, wrapped, cut_at, word_texts, said_texts, site)
        if not score:
            continue
        if row.category == UNCLASSIFIED:
            fallback = fallback if fallback is not None and fallback[0] >= score else (score, row, why)
        elif best is None or score > best[0]:
            best = (score, row, why)
    chosen = best if best is not None and (fallback is None or best[0] > FRAME_WEIGHT) else fallback
    return (chosen[1], chosen[2]) if chosen else None
