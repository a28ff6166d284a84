"""The honest category of a failure no pattern or rule names (issue 28, item 5).

The likeliest category comes from the evidence the failure itself carries, weighed by the table in
facts/categories.toml: its kind (an argparse error, an abort), its exception type, the words of its messages and
the subsystem its innermost frames run through (the model loader, the distributed layer, the quantization
layers, ...).  The answer is that category's general checks, with basis "general": every format labels it
"general guidance, not a proven fix" and shows the text to search for.  When no cue fits, it says so plainly
and gives what the exception type alone says.

The checks are engine-neutral, or scoped to the engine the log decided; a check that names a flag is kept only
when the release's catalog has it (with the version unknown: every shipped release of that engine)."""

from __future__ import annotations

from dataclasses import replace

from logsleuth.diagnosis.grouping import names_no_cause
from logsleuth.diagnosis.match import other_program
from logsleuth.diagnosis.schema import CATEGORIES
from logsleuth.facts.categories import CategoryRow, table
from logsleuth.facts.engine_classes import (
    class_in_message,
    defined_by,
    distinctive,
    engines_defining,
    only_engine_defining,
)
from logsleuth.facts.engine_messages import engines_raising
from logsleuth.facts.message_templates import fixed_text
from logsleuth.fixes import catalog
from logsleuth.ingest.engine_evidence import failure_wrappers, wrapper_of_path
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Failure, Fix, Frame
from logsleuth.reasoning.engine_api_calls import (
    ENGINE_FRAME,
    MisfitCall,
    caller_misfit,
    misfit_engine,
    override_misfit,
    package_path,
)
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.reasoning.parallelism import splits_over_one_gpu
from logsleuth.reasoning.raise_site import given_settings, site_of
from logsleuth.reasoning.setting_paths import settings_on_the_path

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
UNCLASSIFIED = "unclassified"

# Frames that are never where an engine bug is raised: torch's own ops and the standard library they run through
# (enum.py raises "'X' is not a valid Name" for the caller that converted the value).
_LIBRARY_FRAME = compile_lazily(r"(^|/)(torch|functools|contextlib|enum|<frozen [\w.]+>)(/|\.py$)|^<")
# An installed package's file that is not the engine's: a program that runs the engine (verl, ms-swift, a RAG app).
_INSTALLED_NOT_ENGINE = compile_lazily(r"/(site|dist)-packages/(?!(sglang|vllm)/)[\w.-]+/")
_FLAG = compile_lazily(r"(?<![\w-])--[a-z][a-z0-9-]*")
# Packages that dispatch calls into the engine's own code without an API of their own to fit (a web framework
# calling the engine's route, Ray running the engine's worker, a CLI parser calling its main): their frame above the
# engine's says nothing of a wrapper written for another release.
_DISPATCHER = compile_lazily(
    r"/(site|dist)-packages/(ray|starlette|fastapi|uvicorn|anyio|uvloop|zmq|click|typer|fire|hydra|xoscar|concurrent)/"
)
# The categories where a failing check of the engine's code that reads a setting the launch gives is likely that
# setting's combination with the others (a quantized KV cache with one attention backend), a path of the engine
# other releases fixed or broke: the general checks name the settings, a run without them tells.
SETTING_COMBINATION_CATEGORIES = frozenset({"quantization", "engine-bug", "illegal-memory-access", "device-assert",
                                            "cuda-error", "cuda-graph-capture", "parallel-config", "nccl",
                                            "gpu-arch-unsupported", "native-crash", UNCLASSIFIED})
# A wrapper's call into the engine's API that fails at its entry: at most this many engine frames below the
# wrapper's (vLLM's LLM.collective_rpc reading self.llm_engine.model_executor, OpenRLHF/OpenRLHF#922).  Deeper, the
# engine's own code ran on and the failure is the engine's.
API_ENTRY_FRAMES = 2
SIGNATURE_TYPES = ("TypeError", "AttributeError")

# A line that imports a module: `import a.b`, `from a.b import c`.
_IMPORT_STATEMENT = compile_lazily(r"\s*(?:from\s+[\w.]+\s+)?import\s+[\w.]")
# CPython's ImportError naming the module it could not take a name from: "cannot import name 'X' from 'vllm.utils' (…)",
# or an engine's own submodule it could not find: "No module named 'vllm._C'" (its compiled extension included).
# CPython's AttributeError for a name an engine's module lacks (`module 'vllm.utils' has no attribute 'get_ip'`); not the
# circular import of a script named like the engine ("partially initialized module 'vllm' has no attribute ...").
_ENGINE_MODULE_ATTRIBUTE = compile_lazily(r"(?<!initialized )\bmodule '((?:sglang|vllm)(?:\.\w+)*)' has no attribute")
_IMPORTED_FROM = compile_lazily(r"cannot import name '[^']+' from '(sglang|vllm)[.']|No module named '(sglang|vllm)\.")


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _innermost_own_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The innermost frame outside torch and the standard library: where the failing call was made."""
    return next((frame for frame in reversed(frames) if not _LIBRARY_FRAME.search(frame.file)), None)


def engine_code_of(failure: Failure) -> str | None:
    """The engine ("sglang", "vllm") whose own code raised the failure, if its innermost own frame is the engine's;
    with no frame shown, the engine whose code alone defines the class CPython's message names the object by."""
    frame = _innermost_own_frame(failure.final.frames)
    match = ENGINE_FRAME.search(frame.file) if frame is not None else None
    if match:
        return match[2]
    named = _engine_object_class(failure)
    return only_engine_defining(named) if named else None


def _engine_object_class(failure: Failure) -> str | None:
    """No frame shown, and the message names the failing object by a class an engine's code defines (either
    engine's): that class, the engine's code was running, whichever engine it was."""
    named = class_in_message(failure.final.message) if _frameless(failure) else None
    return named if named and engines_defining(named) else None


def _dependency_object_class(failure: Failure) -> tuple[str, str] | None:
    """No frame shown, and CPython's TypeError or AttributeError names the failing object by a class a package the
    engines run defines (transformers' `Qwen2_5_VLProcessor.__init__() got an unexpected keyword argument ...`): the
    class and that package.  A call that does not fit such a class is the installed package's API differing from the
    one the caller was written for: a version mismatch, whoever made the call."""
    if not _frameless(failure) or _short(failure.final.type) not in SIGNATURE_TYPES:
        return None
    named = class_in_message(failure.final.message)
    if not named or not distinctive(named) or engines_defining(named):
        return None  # an engine's own class (a model class transformers defines too is the engine's, as it runs)
    packages = sorted(defined_by(named) - {"sglang", "vllm"})
    return (named, packages[0]) if packages else None


def made_by_a_wrapper(failure: Failure, wrapper: str | None = None) -> bool:
    """The failing call was made by a program that runs the engine rather than the engine's own code or the user's
    script: its innermost own frame is an installed package other than the engine, or a known wrapper's code run from
    its checkout (`/workspace/verl/verl/workers/...`).  With no frame shown at all, `wrapper` (the program the log
    shows running the engine: LaunchInfo.wrapper) or the failure's own process prefix (a wrapper's Ray actor) says it."""
    if _frameless(failure):
        return bool(wrapper or failure_wrappers(failure))
    frame = _innermost_own_frame(failure.final.frames)
    return frame is not None and bool(_INSTALLED_NOT_ENGINE.search(frame.file) or wrapper_of_path(frame.file))


def wrapper_call_into_engine(failure: Failure) -> Frame | None:
    """The frame of a program that runs the engine whose call into the engine's API failed at once: the innermost
    own frames are the engine's, at most API_ENTRY_FRAMES of them, and the own frame just outside them is a wrapper's
    (an installed package other than the engine and no dispatcher, or a known wrapper's checkout other than Ray's).
    A TypeError or AttributeError there is the wrapper's call not fitting the installed release (a method, attribute
    or keyword the wrapper's release of the engine had), not the engine failing on its own."""
    if _short(failure.final.type) not in SIGNATURE_TYPES:
        return None
    own = [frame for frame in failure.final.frames if not _LIBRARY_FRAME.search(frame.file)]
    engine_run = 0
    for frame in reversed(own):
        if not ENGINE_FRAME.search(frame.file):
            break
        engine_run += 1
    if not 1 <= engine_run <= API_ENTRY_FRAMES or len(own) == engine_run:
        return None
    caller = own[-engine_run - 1]
    if _DISPATCHER.search(caller.file) or wrapper_of_path(caller.file) == "Ray":
        return None
    return caller if _INSTALLED_NOT_ENGINE.search(caller.file) or wrapper_of_path(caller.file) else None


def _engine_class_called(failure: Failure) -> str | None:
    """The engine's class CPython's TypeError or AttributeError names the failing object by ('AsyncLLM' object has
    no attribute ..., LLMEngine.step() got an unexpected keyword argument ...), or the engine's module CPython's
    AttributeError names (module 'vllm.distributed.parallel_state' has no attribute ...): the call was made on the
    engine's API."""
    if _short(failure.final.type) not in SIGNATURE_TYPES:
        return None
    named = class_in_message(failure.final.message)
    if named and engines_defining(named):
        return named
    module = _ENGINE_MODULE_ATTRIBUTE.search(failure.final.message)
    return module[1] if module else None


def _imports_own_engine(failure: Failure) -> bool:
    """The engine's own code failed to import a name from a module of the same engine: its installed files disagree
    with each other (a broken or mixed install), not with another package."""
    imported = _IMPORTED_FROM.search(failure.final.message)
    return imported is not None and (imported[1] or imported[2]) == engine_code_of(failure)


def package_called_by_engine(failure: Failure) -> tuple[Frame, Frame] | None:
    """The frame of an installed package (not the engine, no wrapper, no dispatcher) that made the failing call, and
    the engine's frame that called into it: the package failed on what the engine handed it (a package at another
    version than the release was written for), not the engine's own line."""
    own = [frame for frame in failure.final.frames if not _LIBRARY_FRAME.search(frame.file)]
    if not own:
        return None
    failing = own[-1]
    if (not _INSTALLED_NOT_ENGINE.search(failing.file) or wrapper_of_path(failing.file)
            or _DISPATCHER.search(failing.file)):
        return None
    caller = next((frame for frame in reversed(own) if ENGINE_FRAME.search(frame.file)), None)
    return (failing, caller) if caller is not None else None


def _imports(frame: Frame) -> bool:
    """The frame's line imports a module (`import x`, `from x import y`) or is importlib's: the next frame's `<module>`
    is a module being imported, not a program run as the main module (`python -m verl.trainer.main_ppo`, whose
    `<module>` frame follows runpy's _run_code, or is the traceback's first)."""
    return bool(frame.source and _IMPORT_STATEMENT.match(frame.source)) or "importlib" in frame.file


def package_being_imported(failure: Failure) -> str | None:
    """The installed package, other than the engine, whose module was being imported when the failure was raised:
    the innermost `<module>` frame (CPython runs a module's top level at import) is that package's file, and no frame
    of the engine's own code runs below it.  What a package's top level runs fails against the packages beside it
    (transformers' hub_kernels building a kernels LayerRepository that kernels 0.15 refuses; a compiled module built
    for another numpy): none of the engine's launch settings reaches it.  A script's or the engine's own module being
    imported is neither."""
    frames = failure.final.frames
    at = next((i for i in range(len(frames) - 1, -1, -1) if frames[i].function == "<module>"), None)
    if not at or not _INSTALLED_NOT_ENGINE.search(frames[at].file) or not _imports(frames[at - 1]):
        return None
    if any(ENGINE_FRAME.search(frame.file) for frame in frames[at + 1:]):
        return None
    return package_path(frames[at].file).split("/", 1)[0]


def _engine_worded(failure: Failure) -> bool:
    """The failure's type and message are those of a check of an engine's own code: its message template in the raise
    site index (facts/engine_messages.py), whichever engine; the wording is the engine's, not a wrapper's or a script's."""
    final = failure.final
    return bool(final.type and final.message.strip() and engines_raising(final.type, final.message))


def _frameless(failure: Failure) -> bool:
    """No exception of the failure's chain shows a frame (a paste of the error line alone)."""
    return not any(block.frames for block in failure.exceptions)


def _places(row: CategoryRow, frame: Frame) -> str | None:
    """What of `frame` (a path fragment of its file, or its file and function) puts it in `row`'s subsystem, read for
    a traceback cut before its exception line: the row's frames (unless they count only beside given exception
    types) and its cut_frames."""
    if not row.frames_need or "" in row.frames_need:
        fragment = next((f for f in row.frames if f in frame.file), None)
        if fragment:
            return fragment.rstrip("/")
    where = f"{frame.file} {frame.function or ''}()\n{frame.source or ''}"
    said = next((m for pattern in row.cut_frames if (m := pattern.search(where))), None)
    if said is None:
        return None
    placed = f"{package_path(frame.file)} in {frame.function}"
    return f"{placed}, calling {said[0]}" if said.start() > where.index("\n") else placed


def _raised_in(row: CategoryRow, failure: Failure) -> str | None:
    """The fragment of `row`'s raise_frames the raising frame's file holds (the innermost frame of the last exception,
    whose statement raised it), if any."""
    frames = failure.final.frames
    if not row.raise_frames or not frames:
        return None
    return next((fragment for fragment in row.raise_frames if fragment in frames[-1].file), None)


def _cut_subsystem_frame(failure: Failure) -> Frame | None:
    """A traceback cut before its exception line (no type, no message): the innermost own frame, of the innermost
    INNERMOST_FRAMES, whose file or function a row's subsystem names (the model loader, the distributed layer, the KV
    cache's sizing, ...).  With no words and no type, where the process was is the only evidence, and the innermost
    frame that names a subsystem is the most specific; an outer frame's subsystem is only the path the call took."""
    if not names_no_cause(failure):
        return None
    own = [frame for frame in failure.final.frames if not _LIBRARY_FRAME.search(frame.file)][-INNERMOST_FRAMES:]
    rows = table().rows
    return next((frame for frame in reversed(own) if any(_places(row, frame) for row in rows)), None)


def _score(row: CategoryRow, failure: Failure, texts: list[str], files: list[str], wrapped: bool,
           cut_at: Frame | None, word_texts: list[str]) -> tuple[int, list[str]]:
    """How strongly the failure's evidence points to `row`, and what pointed (for the root cause's prose); `wrapped`:
    a program that runs the engine made the failing call (made_by_a_wrapper); `cut_at`: the frame a traceback cut
    before its exception line stopped in whose subsystem a row names (_cut_subsystem_frame); `word_texts`: `texts`
    with the code names CPython quotes masked (_names_masked), the same for every row, so made once by the caller."""
    unplaced = row.in_engine_code and engine_code_of(failure) is None
    if unplaced and not _frameless(failure):
        return 0, []
    if row.in_wrapper_code and not wrapped:
        return 0, []
    if row.not_in_engine_code and engine_code_of(failure) is not None:
        return 0, []
    if row.imports_own_engine and not _imports_own_engine(failure):
        return 0, []
    importing = package_being_imported(failure) if row.at_package_import else None
    if row.at_package_import and importing is None:
        return 0, []
    if row.frameless and (not _frameless(failure) or wrapped):
        return 0, []
    raised_in = _raised_in(row, failure)
    if row.raise_frames and raised_in is None:
        return 0, []
    called = package_called_by_engine(failure) if row.in_package_code else None
    if row.in_package_code and called is None:
        return 0, []
    if row.engine_message and not _engine_worded(failure):
        return 0, []
    if row.other_program and other_program(failure) is None:
        return 0, []
    score, why = 0, []
    if importing:
        score += AT_IMPORT_WEIGHT
        raised = package_path(failure.final.frames[-1].file)
        why.append(f"an error raised while {importing} was being imported ({raised})")
    if raised_in:
        score += WORD_WEIGHT
        why.append(f"the check that raised it, in {raised_in.rstrip('/')}")
    if row.engine_message:
        why.append("the message being one of the engine's own checks (its template in the raise site index)")
    if failure.kind in row.kinds:
        score += KIND_WEIGHT
        why.append("an argument error" if failure.kind == "usage" else f"a failure of kind {failure.kind}")
    types = {_short(block.type) for block in failure.exceptions}
    hit_type = next((t for t in row.types if t in types), None)
    if hit_type:
        score += TYPE_WEIGHT
        why.append(f"the exception type {hit_type}")
    # Words that name a category outright count on the error lines just before the failure too (pip prints
    # "(from versions: none)" on the line above its failure).
    strong = next(
        (m[0] for pattern in row.strong_words for text in (*texts, *failure.context) if (m := pattern.search(text))), None
    )
    if strong:
        score += STRONG_WEIGHT
        why.append(f"the message's words ({strong.strip()!r})")
    engine_class = _engine_class_called(failure) if row.wrapper_call and wrapped and not strong else None
    if engine_class:
        strong = engine_class
        score += STRONG_WEIGHT
        what = "module" if engine_class.split(".", 1)[0] in ENGINE_NAMES else "class"
        why.append(f"a call made by a wrapper's frame on {engine_class}, a {what} of the engine's code")
    word = next((m[0] for pattern in row.words for text in word_texts if (m := pattern.search(text))), None)
    if word and not strong:
        score += WORD_WEIGHT
        why.append(f"the message's words ({word.strip()!r})")
    raising = failure.final.frames[-1].source if failure.final.frames else None
    said = next((m[0] for pattern in row.source_words if raising and (m := pattern.search(raising))), None)
    if said and not strong:
        score += WORD_WEIGHT
        why.append(f"the line that raised it ({said.strip()!r})")
    placed = not row.frames_need or any(t in types for t in row.frames_need)
    if (row.wrapper_call and not score and _short(failure.final.type) in SIGNATURE_TYPES
            and not (wrapper_call_into_engine(failure) or _engine_class_called(failure))):
        # A wrapper's frames and a TypeError or AttributeError say who made the call, not that it was a call into the
        # engine: a wrapper failing on its own object is no sign of another engine release.
        placed = False
    fragment = next((f for f in row.frames for file in files if f in file), None) if placed else None
    subsystem = _places(row, cut_at) if cut_at is not None else None
    if fragment:
        score += FRAME_WEIGHT
        if fragment.rstrip("/") != subsystem:
            why.append(f"frames through {fragment.rstrip('/')}")
    if subsystem:
        # Weighs as words do: the innermost subsystem is the only evidence a traceback cut before its exception line
        # keeps, and it outweighs the outer frames' paths (weight 1 each) the call only went through.
        score += WORD_WEIGHT
        why.append(f"the innermost frame's subsystem ({subsystem}), the exception line being missing from the paste")
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
# keyword argument 'quantization'`, `name 'x' is not defined`) say which identifier the code used, not what went
# wrong: a category's plain words (context length, quantization) must not be read in them.  Strong words, written
# for such shapes on purpose, still see them.
_QUOTED_CODE_NAME = compile_lazily(
    r"(has no attribute |unexpected keyword argument |cannot import name |multiple values for (?:keyword )?argument "
    r"|required (?:positional|keyword-only) arguments?: |(?:^|\s)name )'[^']*'"
)


def _names_masked(text: str) -> str:
    return _QUOTED_CODE_NAME.sub(r"\1'…'", text) if "'" in text else text


def best_row(failure: Failure, leave_out: frozenset[str] = frozenset(), site_words: tuple[str, ...] = (),
             wrapper: str | None = None) -> tuple[CategoryRow, list[str]] | None:
    """The category the evidence points to most strongly (ties: the row written first), with what pointed;
    never one of `leave_out`.  `site_words`: the message the raising check prints, when the paste cut the failure's;
    `wrapper`: the program the log shows running the engine (LaunchInfo.wrapper)."""
    texts = [*exception_lines(failure), *site_words]
    files = [frame.file for frame in failure.final.frames[-INNERMOST_FRAMES:]]
    wrapped = made_by_a_wrapper(failure, wrapper)
    cut_at = _cut_subsystem_frame(failure)
    word_texts = [_names_masked(text) for text in texts]
    best: tuple[int, CategoryRow, list[str]] | None = None
    # An unclassified row's words (a wrapper's "Failed to load model") say no category: it stands only when no other
    # row is reached by more than a frame's path (the wrapper's own frames name no cause either).
    fallback: tuple[int, CategoryRow, list[str]] | None = None
    for row in table().rows:
        if row.category in leave_out:
            continue
        score, why = _score(row, failure, texts, files, wrapped, cut_at, word_texts)
        if not score:
            continue
        if row.category == UNCLASSIFIED:
            fallback = fallback if fallback is not None and fallback[0] >= score else (score, row, why)
        elif best is None or score > best[0]:
            best = (score, row, why)
    chosen = best if best is not None and (fallback is None or best[0] > FRAME_WEIGHT) else fallback
    return (chosen[1], chosen[2]) if chosen else None


def flags_hold(text: str, engine: str, version: str | None) -> bool:
    """Every flag `text` names is one of the engine release's catalog; with the version unknown, one every
    shipped release of that engine has."""
    flags = _FLAG.findall(text)
    if not flags:
        return True
    if version:
        known = catalog.load(engine, version)
        return known is not None and all(known.find(flag) for flag in flags)
    releases = [v for e, v in catalog.available() if e == engine]
    return bool(releases) and all(set(catalog.versions_with(engine, flag)) == set(releases) for flag in flags)


def render_words(text: str, engine: str | None, version: str | None, wrapper: str | None = None) -> str:
    """`{release}`, `{engine}` and `{wrapper}` in a title or check: the engine's name, "<engine> <version>" and
    the program that ran the engine (LaunchInfo.wrapper)."""
    if not engine:  # "another {engine} release" reads "another release of the engine", not "another the engine release"
        text = text.replace("another {engine} release", "another release of the engine").replace("the {engine} release", "the engine release")
        text = text.replace("installed {engine}", "installed engine")
    name = ENGINE_NAMES.get(engine or "", engine or "the engine")
    release = f"{name} {version}" if version else name
    text = text.replace("{wrapper}", wrapper or "a wrapper")
    return text.replace("{release}", release).replace("{engine}", name)


def row_checks(row: CategoryRow, engine: str | None, version: str | None, wrapper: str | None = None,
               texts: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Those of the row's conditional checks whose words are in `texts` (the failure's own lines) first, then its
    neutral checks, then the decided engine's own; a check naming a flag only when the flag holds for the release.
    A conditional check is written for this failure's own shape (an NCCL timeout, an `undefined symbol`): in the
    threads it is the one that resolves that shape more often than the row's general first check, so it leads."""
    shaped = [c.check for c in row.checks_when
              if (c.engine is None or c.engine == engine) and any(c.words.search(text) for text in texts)]
    own = row.engine_checks.get(engine, ()) if engine else ()

    def holds(check: str) -> bool:
        return not engine or flags_hold(check, engine, version)

    ordered = (*filter(holds, shaped), *row.checks, *filter(holds, own))
    return tuple(render_words(check, engine, version, wrapper) for check in ordered)


def failure_texts(failure: Failure) -> tuple[str, ...]:
    """What a conditional check's words are searched in: the failure's exception lines, its native dump's frames
    and the lines printed just before it."""
    return (*exception_lines(failure), *(frame.function or "" for frame in failure.final.frames), *failure.context)


def categorize(evidence: Evidence) -> Diagnosis:
    """The likeliest category and its general checks (basis "general"); "unclassified" with the exception
    type's guidance when no cue fits."""
    failure = evidence.failure
    launch = evidence.launch
    engine = launch.engine
    said = _cut_message_words(evidence)
    found = best_row(failure, site_words=said, wrapper=launch.wrapper)
    if found is not None and found[0].category == "parallel-config" and splits_over_one_gpu(evidence):
        # One GPU splits nothing: a size the message finds indivisible is the kernel's or the checkpoint's
        # limit (a quantization kernel's tile on the full size), not a parallel degree's.
        found = best_row(failure, frozenset({"parallel-config"}), said, launch.wrapper)
        found = (found[0], [*found[1], "a launch with tensor parallelism 1 (nothing split)"]) if found else None
    if (found is not None and found[0].in_engine_code and engine is None and engine_code_of(failure) is None
            and _engine_object_class(failure) is None):
        # A bug of which engine? Neither the frames nor the launch say: not a claim to make.
        found = best_row(failure, frozenset({found[0].category}), said, launch.wrapper)
    found = _root_of_the_chain(failure, found)
    misfit = caller_misfit(failure) or override_misfit(failure, bool(launch.wrapper or failure_wrappers(failure)))
    wrapper_row = table().wrapper_call_row()
    if misfit is not None and wrapper_row is not None and (found is None or found[0].category != wrapper_row.category):
        # A signature the call between the engine's API and another program's code does not fit: that program was
        # written for another release (reasoning/engine_api_calls.py), whatever the words say of a subsystem.
        found = (wrapper_row, [_misfit_why(misfit)])
    dependency = _dependency_object_class(failure)
    dependency_row = table().row("dependency-version")
    if dependency and dependency_row is not None and (found is None or found[0].category == UNCLASSIFIED):
        dependency_class, package = dependency
        owner = f"{package}'" if package.endswith("s") else f"{package}'s"
        found = (dependency_row, [f"the failing object's class ({dependency_class}, defined in {owner} code)"])
    if found is None:
        return _unclassified(evidence)
    if said:
        found = (found[0], [*found[1], "the message template of the engine's check that raised it (the paste cut the message)"])
    row, why = found
    caller = wrapper_call_into_engine(failure) if row.in_engine_code else None
    if caller is not None and wrapper_row is not None and engine_code_of(failure) in (engine, None):
        # The engine's code failed at the entry of the call a wrapper made: the wrapper's call does not fit the
        # installed release (OpenRLHF/OpenRLHF#922, verl-project/verl#2812), not a bug of the release.
        row = wrapper_row
        engine = engine or engine_code_of(failure)
        why = [*why, f"the call into the engine made by a wrapper's frame ({package_path(caller.file)}:{caller.line})"]
    if row.in_engine_code:
        code_of = engine_code_of(failure)
        if engine and code_of is not None and code_of != engine:
            # The other engine's code, run by this one (SGLang releases import vLLM's modules): the two
            # packages' versions do not fit, rather than a bug of either release.
            row = table().row("dependency-version") or row
            why = [*why, f"{ENGINE_NAMES.get(code_of or '', code_of)} code running under {ENGINE_NAMES.get(engine, engine)}"]
        failing = _innermost_own_frame(failure.final.frames)
        if row.category == "engine-bug" and failing is not None and code_of is not None:
            # Which code failed is the reading: the engine's own line, not a package it called (that is the
            # dependency-version row's, package_called_by_engine).
            why = [*why, f"the failing frame in the engine's own code ({package_path(failing.file)}:{failing.line})"]
        if named := _engine_object_class(failure):
            owners = " and ".join(ENGINE_NAMES.get(e, e) for e in sorted(engines_defining(named)))
            why = [*why, f"the failing object's class ({named}, defined in {owners}'s code)"]
        engine = engine or code_of  # the engine's own frames (or its own class, frameless) are positive evidence of it
    if misfit is not None and engine is None:
        engine = misfit_engine(misfit, failure)
    version = launch.engine_version if engine == launch.engine else None
    meaning = CATEGORIES.get(row.category, row.category)
    title = render_words(row.title, engine, version, launch.wrapper)
    return Diagnosis(
        pattern=f"general-{row.category}",
        title=title,
        category=row.category,
        root_cause=(
            f"{title}. No pattern or rule of logsleuth names this failure; the likeliest category is "
            f"{row.category} ({meaning}), read from {_and(why)}."
            if row.category != UNCLASSIFIED else
            f"{title}. No pattern or rule of logsleuth names this failure, and what it shows ({_and(why)}) names the "
            f"stage that failed, not a category."
        ),
        fix=Fix(summary=f"General checks for {row.category}:",
                steps=(*_settings_the_check_reads(evidence, row.category, engine, version),
                       *_misfit_steps(misfit, engine, version),
                       *row_checks(row, engine, version, launch.wrapper, failure_texts(failure)))),
        engine=engine,
        engine_version=version,
        basis="general",
    )


def _settings_the_check_reads(evidence: Evidence, category: str, engine: str | None, version: str | None
                              ) -> tuple[str, ...]:
    """A check naming the settings the launch gives that the engine's failing check reads (the raise site index),
    when the category is one a setting's combination with the others can cause: leave them out to tell, and a newer
    release may have fixed the combination.  Only flags the release's catalog holds (every shipped release's with the
    version unknown)."""
    if category not in SETTING_COMBINATION_CATEGORIES or engine is None:
        return ()
    site = site_of(evidence.failure, evidence.launch)
    given = ([(flag, value) for flag, value in given_settings(site, evidence.launch) if flags_hold(flag, engine, version)]
             if site is not None and site.engine == engine else [])
    name = ENGINE_NAMES.get(engine, engine)
    if given:
        reads = f"the {name} check that raised this reads {_and([flag for flag, _ in given])}, which the launch sets"
    else:
        # No indexed check of the engine's reads one (the failure was raised in torch's collective or a kernel the
        # engine called): the frames' modules still name the feature a setting turned on (reasoning/setting_paths.py).
        given = [(flag, value) for flag, value in settings_on_the_path(evidence.failure, evidence.launch, engine, version)
                 if flags_hold(flag, engine, version)]
        if not given:
            return ()
        reads = f"the failure ran through the code of {_and([flag for flag, _ in given])}, which the launch sets"
    settings = _and([f"{flag} {value}".rstrip() for flag, value in given])
    which = "it" if len(given) == 1 else "them"
    return (
        f"General guidance: {reads} ({settings}). Try the launch without {which} (the default): if it then runs, that "
        f"setting's combination with the others the launch gives is what fails, and a newer {name} release may have "
        "fixed it (search its issues for the failure's first line).",
    )


def _misfit_why(misfit: MisfitCall) -> str:
    where = f"{package_path(misfit.frame.file)}:{misfit.frame.line}"
    if misfit.engine_calls_override:
        return f"the engine's code ({where}) calling {misfit.callee}, a method of a class no indexed package defines, with arguments it does not take"
    return f"a call into the engine's API ({misfit.callee or 'a class of the engine'}) refused at the caller's own frame ({where})"


def _misfit_steps(misfit: MisfitCall | None, engine: str | None, version: str | None) -> tuple[str, ...]:
    """The sentence that names the misfitting call from the frames: who called what, and whose release to align."""
    if misfit is None:
        return ()
    name = ENGINE_NAMES.get(engine or "", "the engine")
    release = f"{name} {version}" if version and engine else f"the installed {name}" if engine else "the installed engine"
    where = f"{package_path(misfit.frame.file)}, line {misfit.frame.line}"
    if misfit.engine_calls_override:
        return (
            f"General guidance: {release}'s own code ({where}) called {misfit.callee}() with an argument that "
            f"method does not take. No indexed package defines its class: it is the wrapper's or a plugin's override of "
            f"the engine's method, written for a release whose signature was older. Upgrade the program that supplies "
            f"it to a release made for {release} (its release notes name the fix), or install the {name} release it "
            "supports.",
        )
    callee = f"{misfit.callee}()" if misfit.callee else "a class of the engine"
    return (
        f"General guidance: the call that failed is made by {where}, not by {name}'s code: it calls {callee} with "
        f"arguments that do not fit the signature of {release} (the message names the keyword or argument). That code "
        f"was written for another {name} release, one whose signature had them: install the {name} release that "
        f"program supports, or a release of that program made for {release}; your own script: change the call to the "
        f"signature of {release}'s API.",
    )


def _cut_message_words(evidence: Evidence) -> tuple[str, ...]:
    """The words of the message the engine's check prints, when the paste cut the failure's message or lost it (a
    traceback cut inside its raising statement): the raise site index (reasoning/raise_site.py) holds the template of
    the check the innermost engine frame stands in, and its fixed text names the category the cut words no longer do.
    None for a message pasted whole: its own words are the evidence."""
    final = evidence.failure.final
    if final.message.strip() and not final.truncated:
        return ()
    site = site_of(evidence.failure, evidence.launch)
    if site is None or not fixed_text(site.message):
        return ()
    return (f"{final.type}: {fixed_text(site.message)}",)


def _root_of_the_chain(
    failure: Failure, found: tuple[CategoryRow, list[str]] | None
) -> tuple[CategoryRow, list[str]] | None:
    """A chain whose later exceptions only report a process that died (a symptom: the parent's "scheduler is
    dead", a kill) is filed under what its first exception says, when that names a cause."""
    symptoms = table().symptoms
    if len(failure.exceptions) < 2 or (found is not None and found[0].category not in symptoms):
        return found
    earlier = best_row(replace(failure, exceptions=failure.exceptions[:1]))
    if earlier is None or earlier[0].category in symptoms:
        return found
    return earlier[0], [*earlier[1], "the chain's first exception (the later ones report a process that died)"]


def _unclassified(evidence: Evidence) -> Diagnosis:
    final = evidence.failure.final
    kind = _short(final.type) or "failure"
    guidance = table().type_guidance(kind)
    return Diagnosis(
        pattern=f"general-{UNCLASSIFIED}",
        title="No pattern or rule fits this failure",
        category=UNCLASSIFIED,
        root_cause=(
            "No pattern or rule of logsleuth names this failure: the exception line is missing from the paste, and "
            "the frames shown pass through no subsystem that names a category. The lines printed before the "
            "traceback, or the rest of the log, hold the error."
            if names_no_cause(evidence.failure) else
            f"No pattern or rule of logsleuth names this failure, and its words, type and frames point to no "
            f"category. What a {kind} generally means is below."
        ),
        fix=Fix(summary=f"General checks for a {kind}:", steps=guidance.checks),
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="general",
    )


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
