"""The engine from a failure's own message (issue 29, item 3): the weakest evidence of the engine, read only when
the log shows no other.

A paste that holds a failure and nothing else (no launch command, no banner, no logger header, no frame in either
engine's package) still names its engine when the failure's message is one that only one engine's code raises:
`RuntimeError: Engine core initialization failed. See root cause above. …` is vLLM's (vllm/v1/engine/utils.py),
`RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. …` is SGLang's (its model
runner's KV cache sizing).  The raise site index
holds every raise and assert message template of the indexed releases (facts/engine_messages.py); a message
that matches the templates of one engine and not the other's is evidence for that engine.  So is a message the paste
cut short, when the part kept opens one engine's template with enough fixed text to tell (MIN_FIXED), and a line
with no exception type that one engine's code logs as an error (`logger.error`, `logger.exception`).

Not evidence: a message that only names an engine ("No module named 'vllm'", "please install sglang"): neither
engine's code raises it as it stands, so no template matches, unless one engine's own code does raise it, which is
then that engine's (SGLang's "Please install vllm …" is SGLang's code speaking).  A message both engines raise
decides nothing.  Nor does CPython's own wording, unless it names a class only one engine defines
(`EngineArgs.__init__() got an unexpected keyword argument 'x'`, `'LLMEngine' object has no attribute 'x'`).  An
exception raised as a class only one engine defines (`EngineDeadError: …`, whatever its message) is that engine's.
launch.py asks this only when no other evidence of either engine was seen.
"""

from __future__ import annotations

import re
from functools import lru_cache

from logsleuth.facts.engine_classes import class_in_message, only_engine_defining
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LOGGED_LINE_TYPE, Failure, Frame
from logsleuth.pydantic_display import without_pydantic_display

MAX_MESSAGES = 8  # the first distinct exceptions of a log are enough: a paste with no other evidence is short
# CPython's own wordings, which an engine's code sometimes repeats (a __getattr__ raising `'X' object has no
# attribute 'y'`): any program's error, so no engine's evidence, whichever template they match.
# torch's `_OpNamespace` says it the same way with the namespace added (`'_OpNamespace' '_C' object has no attribute
# 'varlen_fwd'`, torch/_ops.py), which SGLang's `'{}' object has no attribute '{}'` template matched.
CPYTHON_WORDINGS = compile_lazily(
    r"^'[^']*'(?: '[^']*')? object has no attribute '"
    r"|^'[^']*' object is not (?:subscriptable|callable|iterable)"
    r"|^module '[^']*' has no attribute '"
    r"|^(?:No module named|cannot import name) '"
    r"|got an unexpected keyword argument '"
    r"|missing \d+ required (?:positional|keyword-only) arguments?"
    r"|takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:were|was) given"
    r"|^(?:list|tuple|string) index out of range$"
)

# CPython's refusal of a call's arguments names the callee by its qualified name from Python 3.10 on
# (`AsyncEngineArgs.__init__() got an unexpected keyword argument 'x'`: a wrapper passing a setting the installed
# release does not have), and its missing attribute names the instance's class (`'LLMEngine' object has no attribute
# 'driver_worker'`: a wrapper reaching into an engine object of another release, vllm-project/vllm#9318).  A class
# only one engine's code defines, in every indexed release of both and in none of the packages they run, names that
# engine (facts/engine_classes.py: a name of two words or more; `LLM` and `Engine` are each one engine's class but
# also other programs', TensorRT-LLM's `LLM`; `SamplingParams` is both engines').


# The exception's own class, when only one engine's code defines it (facts/engine_classes.py, as above): vLLM's
# `EngineDeadError` (vllm/v1/engine/exceptions.py), `AsyncEngineDeadError` (vllm/engine/async_llm_engine.py),
# `MQEngineDeadError`, SGLang's `KVTransferError` (srt/disaggregation/), whatever message the paste kept with it.  Bare
# or under that engine's package (`vllm.v1.engine.exceptions.EngineDeadError`); under another package's module
# (`lmdeploy.….EngineDeadError`) it is that package's class of the same name.  An exception class is named more
# plainly than other classes, and programs the index does not read define the plain names too (httpx's
# `RequestError`, SQLAlchemy's `IntegrityError`, the openai client's `BadRequestError`, a carrier of the engine's
# answer): three words or more ("Error" one of them), and no carrier's.
MIN_TYPE_WORDS = 3
_TYPE_WORD = compile_lazily(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]+")


def engine_of_type(type_name: str) -> str | None:
    """The one engine whose code defines the exception class the failure was raised as, else None."""
    module, _, name = type_name.rpartition(".")
    if (module and module.split(".", 1)[0] not in ("vllm", "sglang")) or carried(name):
        return None
    return only_engine_defining(name) if len(_TYPE_WORD.findall(name)) >= MIN_TYPE_WORDS else None


def engine_class_named(type_name: str, message: str) -> str | None:
    """The engine whose own class CPython's refusal of a call's arguments (a TypeError), or of an instance's missing
    attribute (an AttributeError), names, else None.  A line with no type (its type lost) counts as either."""
    named = class_in_message(message)
    if named is None:
        return None
    attribute = " has no attribute '" in message
    if type_name not in ("", "AttributeError" if attribute else "TypeError"):
        return None
    return only_engine_defining(named)


# Before 3.10 CPython named no class (`__init__() got an unexpected keyword argument 'x'`); a dataclass's generated
# __init__ (EngineArgs, AsyncEngineArgs and ServerArgs are dataclasses) adds no frame of its own, so the innermost
# frame's line is the call that passed the arguments: `engine_args = AsyncEngineArgs(**kwargs)` in a wrapper's code.
_CONSTRUCTOR_CALL = compile_lazily(r"(?<![\w.])(?P<cls>[A-Z]\w*)\(")


def _named_callee(type_name: str, message: str, frames: tuple[Frame, ...]) -> str:
    """An older CPython's refusal of a constructor's arguments, with the class the innermost frame's line calls put
    back in as 3.10 prints it (`AsyncEngineArgs.__init__() got …`); any other message as it is."""
    if type_name != "TypeError" or not message.startswith("__init__() ") or not frames:
        return message
    m = _CONSTRUCTOR_CALL.search(frames[-1].source or "")
    return f"{m['cls']}.{message}" if m else message


def raised_by(failure: Failure) -> list[tuple[str, str]]:
    """The (type, message) of each exception of the failure's chain that has a message; a line the program logged
    has no type: the line a traceback starts on (`Scheduler hit an exception: Traceback …`, SGLang's
    `logger.error(f"Scheduler hit an exception: {traceback}")`), and a line that says how a process ended (its type,
    `Killed`, is the scanner's word: SGLang's `Received sigquit from a child process. …` is its logger.error)."""
    found = [("" if failure.kind == "killed" else block.type, _named_callee(block.type, block.message, block.frames))
             for block in failure.exceptions if block.message.strip()]
    return [("", failure.header), *found] if failure.header and failure.header.strip() else found


# The openai client's status error quoting the server's answer as a Python dict (openai/_client.py
# _make_status_error: f"Error code: {status} - {body}"); the engines answer with their error's str in 'message'
# (their ErrorResponse; newer vLLM nests it under 'error').
_CLIENT_STATUS = compile_lazily(r"^Error code: \d{3} - (?P<body>\{.*\})\s*$")


def _answered(message: str) -> str:
    """The engine's message inside a client's status error, else the message as it is."""
    m = _CLIENT_STATUS.match(message.strip()) if message.startswith("Error code: ") else None
    if m is None:
        return message
    import ast

    try:
        body = ast.literal_eval(m["body"])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return message
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    said = body.get("message") if isinstance(body, dict) else None
    return said if isinstance(said, str) and said.strip() else message


# The engines' OpenAI servers answer a request they refused with the error's message and its cause, `f"{e}
# {e.__cause__}"` (vLLM's entrypoints/openai/serving_chat.py, serving_tokenization.py and serving_responses.py in
# 0.11.2; SGLang's srt/entrypoints/openai/serving_responses.py): a check raised with no cause answers with ` None`
# after its message (`… Please reduce the length of the messages or completion. None`, vLLM's length check under
# vllm-project/vllm#20409's client).  The message the engine raised is the answer without it.
_NO_CAUSE = " None"


def _without_cause(printed: str, answer: str) -> list[str]:
    """The engine's raised message inside a client's status error whose answer ends with its cause `None`, else no
    message."""
    return [answer.removesuffix(_NO_CAUSE)] if answer != printed and answer.endswith(_NO_CAUSE) else []


# The engines refuse an architecture with their whole model registry listed after it, in the same words (SGLang's
# srt/models/registry.py and vLLM's model_executor/models/registry.py `_raise_for_unsupported`: f"Model architectures
# {architectures} are not supported for now. Supported architectures: {all_supported_archs}", the registry's
# keys): the template fits both, the names listed are one registry's (facts/engine_architectures.engine_registering;
# sgl-project/sglang#5441's `dict_keys([…'DeepseekV3ForCausalLMNextN', 'MultiModalityCausalLM'…])`, vLLM's
# `['AquilaModel', 'ArcticForCausalLM', …]` in vllm-project/vllm#10481).
_REGISTRY_LISTING = compile_lazily(r"\bSupported architectures: (?:dict_keys\()?\[(?P<names>[^\]]*)")
_LISTED_NAME = compile_lazily(r"'(\w+)'")


def engine_of_registry_listing(message: str) -> str | None:
    """The engine whose model registry a refusal of an architecture lists, else None."""
    from logsleuth.facts.engine_architectures import engine_registering

    m = _REGISTRY_LISTING.search(message)
    return engine_registering(_LISTED_NAME.findall(m["names"])) if m else None


# The types under which a program around the engine carries the engine's message, not the type the engine raised it
# as: the server's error answer (the engines' ErrorResponse `type`: BadRequestError, NotFoundError,
# InternalServerError; `HTTPError` when it names none, tracebacks/grammar.http_error_body), the openai client's
# classes for that answer (`openai.BadRequestError: Error code: 400 - {…}`), or no type at all.  A message that
# matches one engine's template is that engine's whatever the carrier.
_CARRIERS = frozenset({"", "HTTPError", "BadRequestError", "NotFoundError", "InternalServerError", "ServiceUnavailableError"})


def carried(type_name: str) -> bool:
    return type_name in _CARRIERS or type_name.startswith("openai.")


def engine_raising(raised: tuple[tuple[str, str], ...]) -> str | None:
    """The one engine whose indexed code raises these exceptions, or None (neither, or both)."""
    engines = engines_raising_any(raised)
    return next(iter(engines)) if len(engines) == 1 else None


def raised_by_both_only(raised: tuple[tuple[str, str], ...]) -> bool:
    """Whether some of these exceptions are raised by both engines' indexed code and none by one engine's alone: an
    engine's own words that leave which engine open (SGLang copied many of vLLM's checks)."""
    each = [engines_raising_any((pair,)) for pair in raised[:MAX_MESSAGES]]
    return any(len(engines) == 2 for engines in each) and not any(len(engines) == 1 for engines in each)


@lru_cache(maxsize=64)
def engines_raising_any(raised: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """Every engine whose indexed code raises one of these exceptions (the first MAX_MESSAGES).  Cached: watch asks
    the engine line by line."""
    engines: set[str] = set()
    for type_name, printed in raised[:MAX_MESSAGES]:
        if type_name and (defining := engine_of_type(type_name)):
            engines.add(defining)
        message = _answered(printed)  # a client's status error: the engine's message in the answer it quotes
        if "architectures: " in message and (registry := engine_of_registry_listing(message)):
            engines.add(registry)  # the engine's own model registry listed (both raise the words around it)
        elif "alidation error" in message and (report := _PYDANTIC_TITLE.match(message.lstrip())):
            engines |= _engines_of_pydantic_report(report["cls"], message)
        elif message.startswith(_PYDANTIC_ITEM_PREFIXES):  # one item of such a report, its title lost
            engines |= _engines_of_pydantic_report("", message)
        elif not CPYTHON_WORDINGS.search(message):
            for said in _rewrapped(message) + _without_cause(printed, message):
                engines |= engines_saying(type_name, said)
        elif called := engine_class_named(type_name, message):
            engines.add(called)
    return frozenset(engines)


# A message a terminal or an issue's code block wrapped at its width: `… leading to a corr` / `upted compilation
# artifact. …` (vllm-project/vllm#21858).  The template matches the line as the engine printed it: the lines joined
# as they were cut (within a word) and with a space (between words).  A message of a few lines only: a longer one is
# a message with lines of its own.
MAX_WRAPPED_LINES = 4


def _rewrapped(message: str) -> list[str]:
    """The message as printed, and, when a paste wrapped it over a few lines, those lines joined back."""
    lines = message.split("\n")
    if not 1 < len(lines) <= MAX_WRAPPED_LINES:
        return [message]
    return [message, "".join(lines), " ".join(line.strip() for line in lines)]


# pydantic's report of a model or dataclass that refused its input (pydantic-core's ValidationError.__str__): a title
# naming the class, `1 validation error for VllmConfig`, then per error a line with the validator's own exception in
# pydantic's words, `  Value error, <str(ValueError)> [type=value_error, input_value=…, input_type=…]` (`Assertion
# failed, …` for an assert).  vLLM's config classes are pydantic dataclasses (vllm/config/, 0.10 on) whose checks
# raise in __post_init__ (vllm-project/vllm-omni#2170, vllm-project/vllm#17376); SGLang's settings are plain
# dataclasses.  The class is evidence as CPython's naming of it is (a class only one engine defines:
# facts/engine_classes.py, `VllmConfig`, `SpeculativeConfig`; `ModelConfig` both engines define), and each item's
# message is the validator's, matched against the templates as a message of that type.
_PYDANTIC_TITLE = compile_lazily(r"\d+ validation errors? for (?P<cls>[A-Za-z_]\w*)")
_PYDANTIC_ITEM = compile_lazily(r"^\s*(?P<kind>Value error|Assertion failed), (?P<said>.+)$", re.MULTILINE)
_PYDANTIC_ITEM_PREFIXES = ("Value error, ", "Assertion failed, ")
_PYDANTIC_RAISED_AS = {"Value error": "ValueError", "Assertion failed": "AssertionError"}


# The config classes both engines define under one name where only vLLM's is a pydantic dataclass (vllm/config/);
# SGLang's are plain classes or dataclasses (sglang/srt/configs/model_config.py, load_config.py, device_config.py,
# lora/lora_config.py, compilation/compilation_config.py; every indexed release, read from the engine index's cache).
# pydantic reports only on its own classes, so an item both engines' code raises (SGLang copied vLLM's checks: "No
# model architectures are specified", vllm-project/vllm-omni#2170) under such a title was vLLM's check.
_PYDANTIC_ONLY_IN_VLLM = frozenset({"ModelConfig", "CacheConfig", "LoadConfig", "DeviceConfig", "LoRAConfig", "CompilationConfig"})


def pydantic_title(line: str) -> str | None:
    """A pydantic report's title the line holds (`1 validation error for VllmConfig`, the exception's type before it
    or not: a paste of the title alone is no failure the scanner reads), from the title on; else None."""
    m = _PYDANTIC_TITLE.search(line) if "alidation error" in line else None
    return line[m.start():].strip() if m else None


def _engines_of_pydantic_report(class_name: str, report: str) -> set[str]:
    """The engines a pydantic validation report shows: the one engine defining the class it names, and the engines
    whose code raises its items' messages."""
    engines = {owner} if class_name and (owner := only_engine_defining(class_name)) else set()
    for item in _PYDANTIC_ITEM.finditer(report):
        said = without_pydantic_display(item["said"])
        if said and not CPYTHON_WORDINGS.search(said):
            raising = engines_saying(_PYDANTIC_RAISED_AS[item["kind"]], said)
            engines |= {"vllm"} if len(raising) > 1 and class_name in _PYDANTIC_ONLY_IN_VLLM else raising
    return engines


def engines_saying(type_name: str, message: str) -> set[str]:
    """The engines whose code raises this message under this type (any type when the type is a carrier's: the
    message was raised under another), whole or as the opening a paste cut it to (a message one engine prints
    whole and the other's longer one opens with is both engines'); for a line with no type at all, whose code
    logs it as an error; for a line typed only by its level (LOGGED_LINE_TYPE), only whose code logs it."""
    # Imported here: only a log that shows nothing else reads the index.
    from logsleuth.facts.engine_messages import engines_logging, engines_raising

    if type_name == LOGGED_LINE_TYPE:
        # matched whole against what the engines log, never as a raise's opening: a wrapper's record quoting torch's
        # `Timed out after 601 seconds waiting for clients. …` opens vLLM's `Timed out after {}s waiting for {} lock`
        # only by letting a hole swallow the rest of a whole sentence (xorbitsai/inference#2486)
        return engines_logging(message)
    engines = engines_raising(None if carried(type_name) else type_name, message, cut=True)
    if not type_name:
        engines |= engines_logging(message)
    return engines
