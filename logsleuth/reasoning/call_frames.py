"""Who made a failing call, read from its frames (reasoning/general.py's evidence): the engine's own code, a program
that runs the engine (a wrapper's installed package or checkout) calling into it, a package the engine called, or a
package being imported; and the classes CPython's messages name the failing object by."""

from __future__ import annotations

from functools import lru_cache

from logsleuth.facts import requires
from logsleuth.facts.engine_classes import (
    class_in_message,
    defined_by,
    distinctive,
    engines_defining,
    only_engine_defining,
)
from logsleuth.facts.engine_modules import name_presence
from logsleuth.facts.imports import distributions_of
from logsleuth.facts.message_templates import short_type
from logsleuth.ingest.engine_evidence import WRAPPERS, failure_wrappers, most_specific, wrapper_of_path
from logsleuth.ingest.engine_from_frames import engine_of_frames, shortened
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure, Frame
from logsleuth.reasoning.engine_api_calls import engine_of_frame, package_path

# Frames that are never where an engine bug is raised: torch's own ops and the standard library they run through
# (enum.py raises "'X' is not a valid Name" for the caller that converted the value).
LIBRARY_FRAME = compile_lazily(r"(^|/)(torch|functools|contextlib|enum|<frozen [\w.]+>)(/|\.py$)|^<")
# An installed package's file that is not the engine's: a program that runs the engine (verl, ms-swift, a RAG app).
_INSTALLED_NOT_ENGINE = compile_lazily(r"/(site|dist)-packages/(?!(sglang|vllm)/)[\w.-]+/")
# Packages that dispatch calls into the engine's own code without an API of their own to fit (a web framework
# calling the engine's route, Ray running the engine's worker, a CLI parser calling its main): their frame above the
# engine's says nothing of a wrapper written for another release.
_DISPATCHER = compile_lazily(
    r"/(site|dist)-packages/(ray|starlette|fastapi|uvicorn|anyio|uvloop|zmq|click|typer|fire|hydra|xoscar|concurrent)/"
)
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



def own_frames(failure: Failure) -> list[Frame]:
    """The final exception's frames outside torch and the standard library, outermost first."""
    return [frame for frame in failure.final.frames if not LIBRARY_FRAME.search(frame.file)]


def innermost_own_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The innermost frame outside torch and the standard library: where the failing call was made."""
    return next((frame for frame in reversed(frames) if not LIBRARY_FRAME.search(frame.file)), None)


def engine_code_of(failure: Failure) -> str | None:
    """The engine ("sglang", "vllm") whose own code raised the failure, if its innermost own frame is the engine's
    (a path the paste shortened to `scheduler_metrics_mixin.py` too, when only one engine's indexed code has that file
    and function); with no frame shown, the engine whose code alone defines the class CPython's message names the
    object by."""
    frame = innermost_own_frame(failure.final.frames)
    if frame is not None and (own := engine_of_frame(frame.file)):
        return own
    if frame is not None and (short := shortened(frame)) is not None:
        return _engine_of_shortened(*short)
    named = engine_object_class(failure)
    return only_engine_defining(named) if named else None


@lru_cache(maxsize=256)
def _engine_of_shortened(path: str, function: str) -> str | None:
    """engine_of_frames for one shortened frame, once: engine_code_of is asked for every category row scored, and
    the module and function lookups behind it walk the engines' indexes."""
    return engine_of_frames([(path, function)])


def engine_object_class(failure: Failure) -> str | None:
    """No frame shown, and the message names the failing object by a class an engine's code defines (either
    engine's): that class, the engine's code was running, whichever engine it was."""
    named = class_in_message(failure.final.message) if shows_no_frame(failure) else None
    return named if named and engines_defining(named) else None


def dependency_object_class(failure: Failure) -> tuple[str, str] | None:
    """No frame shown, and CPython's TypeError or AttributeError names the failing object by a class a package the
    engines run defines (transformers' `Qwen2_5_VLProcessor.__init__() got an unexpected keyword argument ...`): the
    class and that package.  A call that does not fit such a class is the installed package's API differing from the
    one the caller was written for: a version mismatch, whoever made the call."""
    if not shows_no_frame(failure) or short_type(failure.final.type) not in SIGNATURE_TYPES:
        return None
    named = class_in_message(failure.final.message)
    if not named or not distinctive(named) or engines_defining(named):
        return None  # an engine's own class (a model class transformers defines too is the engine's, as it runs)
    packages = sorted(defined_by(named) - {"sglang", "vllm"})
    return (named, packages[0]) if packages else None


def names_a_class_no_engine_defines(failure: Failure) -> bool:
    """CPython's TypeError or AttributeError names the failing object's class, a distinctive name that no engine's
    indexed code defines (engine_api_calls.caller_misfit reads the same fact)."""
    if short_type(failure.final.type) not in SIGNATURE_TYPES:
        return False
    named = class_in_message(failure.final.message)
    return named is not None and distinctive(named) and not defined_by(named) & {"sglang", "vllm"}


# CPython's NameError (`name 'LLM' is not defined`): the name the failing line read.
_UNBOUND_NAME = compile_lazily(r"^name '(\w+)' is not defined")


def names_an_engine_export(failure: Failure) -> bool:
    """CPython's NameError names a class an engine's package binds at its top level (`LLM`, `SamplingParams`,
    `AsyncLLMEngine`, SGLang's `Engine`; facts/engine_modules): a program that imports the engine inside try/except
    reads the name its failed import left unset (lm-eval's vllm_causallms.py, arcee-ai/mergekit#524,
    EvolvingLMMs-Lab/lmms-eval#726), not a variable of its own it never bound."""
    if short_type(failure.final.type) != "NameError":
        return False
    found = _UNBOUND_NAME.match(failure.final.message.strip())
    if not found or not found[1][0].isupper():  # a class, not a submodule or a function the package also binds
        return False
    return any((presence := name_presence(engine, engine, found[1])) is not None and bool(presence.having)
               for engine in ("sglang", "vllm"))


def made_by_a_wrapper(failure: Failure, wrapper: str | None = None) -> bool:
    """The failing call was made by a program that runs the engine rather than the engine's own code or the user's
    script: its innermost own frame is an installed package other than the engine, or a known wrapper's code run from
    its checkout (`/workspace/verl/verl/workers/...`).  With no frame shown at all, `wrapper` (the program the log
    shows running the engine: LaunchInfo.wrapper) or the failure's own process prefix (a wrapper's Ray actor) says it."""
    if shows_no_frame(failure):
        return bool(wrapper or failure_wrappers(failure))
    frame = innermost_own_frame(failure.final.frames)
    if frame is None:
        return False
    if wrapper_of_path(frame.file):
        return True
    return bool(_INSTALLED_NOT_ENGINE.search(frame.file)) and not _engine_dependency(frame)


def _engine_dependency(frame: Frame) -> bool:
    """The frame is in a package an engine release declares as its own dependency (transformers, datasets, fastapi:
    facts/requires.json): a library the engines call, which calls neither engine's API.  An engine object failing there
    was handed to it by the caller's own code (vllm-project/vllm#3214: vLLM's SamplingParams passed to a Hugging Face
    model's generate, which reads it as a GenerationConfig), not a wrapper's call written for another release."""
    return _declared_by_an_engine(package_path(frame.file).split("/", 1)[0])


def _declared_by_an_engine(package: str) -> bool:
    """An engine release declares the package's distribution as its dependency (facts/requires.json)."""
    distributions = distributions_of(package) or (requires.normalize(package),)
    return any(requires.declares(engine, distribution) for engine in ("sglang", "vllm") for distribution in distributions)


def wrapper_call_into_engine(failure: Failure) -> Frame | None:
    """The frame of a program that runs the engine whose call into the engine's API failed at once: the innermost
    own frames are the engine's, at most API_ENTRY_FRAMES of them, and the own frame just outside them is a wrapper's
    (an installed package other than the engine and no dispatcher, or a known wrapper's checkout other than Ray's).
    A TypeError or AttributeError there is the wrapper's call not fitting the installed release (a method, attribute
    or keyword the wrapper's release of the engine had), not the engine failing on its own."""
    if short_type(failure.final.type) not in SIGNATURE_TYPES:
        return None
    own = own_frames(failure)
    engine_run = 0
    for frame in reversed(own):
        if not engine_of_frame(frame.file):
            break
        engine_run += 1
    if not 1 <= engine_run <= API_ENTRY_FRAMES or len(own) == engine_run:
        return None
    caller = own[-engine_run - 1]
    if _DISPATCHER.search(caller.file) or wrapper_of_path(caller.file) == "Ray":
        return None
    return caller if _INSTALLED_NOT_ENGINE.search(caller.file) or wrapper_of_path(caller.file) else None


# The files of the engine's API that a program builds and calls itself: vLLM's serving classes and entry points
# (vllm/entrypoints/openai/serving_*.py take the served model names as BaseModelPath objects, ray-project/ray#50275),
# its engines' front classes and their arguments (LLMEngine, AsyncLLMEngine, EngineArgs; v1's LLMEngine, AsyncLLM),
# SGLang's Engine and its entry points.  Not the engines' internals (EngineCore's busy loop in v1/engine/core.py,
# the output processor, the detokenizer): a program never calls them with values of its own, so a failure there is
# the engine's own.
_API_MODULE = compile_lazily(r"(^|/)(vllm/(entrypoints/|engine/(llm_engine|async_llm_engine|arg_utils)\.py$"
                             r"|v1/engine/(llm_engine|async_llm)\.py$)|sglang/(srt/entrypoints/|api\.py$))")
# The programs that run the engine through its Python API (their code builds its objects): every known wrapper but Ray,
# which dispatches the engine's own workers, and llm-d, which runs the engine's own server.  Derived, so that a wrapper
# added to WRAPPERS is a caller unless it is left out here by name.
_API_CALLERS = frozenset(WRAPPERS) - {"Ray", "llm-d"}


def api_entry_under_wrapper(failure: Failure, wrapper: str | None) -> tuple[Frame, str] | None:
    """The engine's API frame a TypeError or AttributeError was raised in, when a program the log names (`wrapper`,
    or one the failure's own process shows) builds the engine's objects through that API and its frame is not shown:
    the innermost own frames are the engine's, at most API_ENTRY_FRAMES of them, all in its API modules, and nothing
    outside them is shown.  The value the API refused came from that program (a plain string where the release takes
    an object of its own), written for another release, as when its frame is shown (wrapper_call_into_engine).
    Returns that frame and the caller: the most specific program among those that call the API (never one that
    _API_CALLERS leaves out, as llm-d named beside a Ray Serve replica)."""
    callers = {name for name in (wrapper, *failure_wrappers(failure)) if name in _API_CALLERS}
    if not callers or short_type(failure.final.type) not in SIGNATURE_TYPES:
        return None
    own = own_frames(failure)
    if not 1 <= len(own) <= API_ENTRY_FRAMES or not all(_API_MODULE.search(frame.file) for frame in own):
        return None
    return own[-1], most_specific(callers) or sorted(callers)[0]


def engine_class_called(failure: Failure) -> str | None:
    """The engine's class CPython's TypeError or AttributeError names the failing object by ('AsyncLLM' object has
    no attribute ..., LLMEngine.step() got an unexpected keyword argument ...), or the engine's module CPython's
    AttributeError names (module 'vllm.distributed.parallel_state' has no attribute ...): the call was made on the
    engine's API."""
    if short_type(failure.final.type) not in SIGNATURE_TYPES:
        return None
    named = class_in_message(failure.final.message)
    if named and engines_defining(named):
        # A class transformers defines under the same name (`LlamaForCausalLM`) is the engine's only when no frame
        # shows who built it: a wrapper's frame may as well hold a Hugging Face model (EleutherAI/lm-evaluation-harness#2586).
        return named if shows_no_frame(failure) or not defined_by(named) - {"sglang", "vllm"} else None
    module = _ENGINE_MODULE_ATTRIBUTE.search(failure.final.message)
    return module[1] if module else None


def imports_own_engine(failure: Failure) -> bool:
    """The engine's own code failed to import a name from a module of the same engine: its installed files disagree
    with each other (a broken or mixed install), not with another package."""
    imported = _IMPORTED_FROM.search(failure.final.message)
    return imported is not None and (imported[1] or imported[2]) == engine_code_of(failure)


# CPython's import system found the parent package and not its submodule (importlib._bootstrap _find_and_load_unlocked:
# "No module named {name!r}", the parent imported first): the dotted name's first part is a package that exists, or
# (with "; 'pkg' is not a package" after it) a plain module that took the package's name.
_NO_SUBMODULE = compile_lazily(r"^No module named '(\w+)\.[\w.]+'(?!; '\w+' is not a package)")
_INSTALLED = compile_lazily(r"/(?:site|dist)-packages/")


def _project_name(name: str) -> str:
    """A directory's or package's name as a project spells both (`CosyVoice` and `cosyvoice`, `my-proj` and `my_proj`)."""
    return name.lower().replace("-", "_")


def imports_own_project(failure: Failure) -> str | None:
    """The package whose own submodule a script run from that project's checkout could not import (a speech project's
    /data/CosyVoice/example.py importing cosyvoice.vllm, a checkout's verl/workers/… importing verl.models): the
    checkout's files and the script disagree, not an installed package's release.  None unless the importing frame runs
    outside site-packages from a directory named like the package, and the package is neither an engine nor a package
    an engine depends on (a script in ~/transformers/ imports the installed transformers).  Never a
    shadowed package (`…; 'utils' is not a package`): the package was not found, and which module took its name (a
    stray transformers.py beside the script, or a project's module) is not in the message: the shadowing row's."""
    final = failure.final
    named = _NO_SUBMODULE.match(final.message.strip()) if short_type(final.type) == "ModuleNotFoundError" else None
    frame = innermost_own_frame(final.frames)
    if named is None or named[1] in ("sglang", "vllm") or frame is None or _INSTALLED.search(frame.file):
        return None
    if _declared_by_an_engine(named[1]):
        return None  # a directory named like an engine's dependency (~/transformers/run.py) imports the installed one
    directories = frame.file.replace("\\", "/").split("/")[:-1]
    return named[1] if any(_project_name(p) == _project_name(named[1]) for p in directories) else None


def package_called_by_engine(failure: Failure) -> tuple[Frame, Frame] | None:
    """The frame of an installed package (not the engine, no wrapper, no dispatcher) that made the failing call, and
    the engine's frame that called into it: the package failed on what the engine handed it (a package at another
    version than the release was written for), not the engine's own line."""
    own = own_frames(failure)
    if not own:
        return None
    failing = own[-1]
    if (not _INSTALLED_NOT_ENGINE.search(failing.file) or wrapper_of_path(failing.file)
            or _DISPATCHER.search(failing.file)):
        return None
    caller = next((frame for frame in reversed(own) if engine_of_frame(frame.file)), None)
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
    if any(engine_of_frame(frame.file) for frame in frames[at + 1:]):
        return None
    return package_path(frames[at].file).split("/", 1)[0]


def shows_no_frame(failure: Failure) -> bool:
    """No exception of the failure's chain shows a frame (a paste of the error line alone)."""
    return not any(block.frames for block in failure.exceptions)
