"""A call between the engine's API and a program written for another release of it (issue 28: a wrapper's call bug
blamed on the engine).

Two shapes the frames show, beside reasoning/call_frames.py's wrapper_call_into_engine (a wrapper's frame right above at
most two engine frames):

- **the caller's own frame refuses the call**: the innermost frame outside torch and the standard library is not the
  engine's (an installed package, a checkout of a wrapper, or the user's own script) and its call into the engine's
  API does not fit the signature: CPython's `SamplingParams.__init__() got an unexpected keyword argument 'x'`,
  `resolve_hf_chat_template() missing 1 required keyword-only argument: 'model_config'`, or msgspec's `Unexpected
  keyword argument 'use_beam_search'` (vLLM's SamplingParams is a msgspec Struct).  That the call was into the engine
  is read from the frame: a module made to run one engine (`vllm_causallms.py`, `vllm_worker.py`, `fsdp_sglang.py`:
  its name holds the engine's), or a raising line that calls a class only the engines define (`SamplingParams(`).
  lm-sys/FastChat#3600, hiyouga/LlamaFactory#5966, zai-org/GLM-4#606, vllm-project/vllm#18259 (lm-eval).
- **the engine calls the program's override**: the engine's own code calls a method of a class no indexed package
  defines (a wrapper's subclass of the engine's executor or worker) with an argument the override lacks:
  `ExternalZeroMQDistributedExecutor.collective_rpc() got an unexpected keyword argument 'non_block'` when vLLM 0.11
  added the keyword (verl-project/verl#3934, rllm-org/rllm#240).  The wrapper's override was written for an older
  release; the engine is not at fault.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from logsleuth.facts.categories import table
from logsleuth.facts.engine_classes import class_in_message, defined_by, distinctive, engines_defining
from logsleuth.facts.engine_drivers import package_names as driver_packages
from logsleuth.facts.engine_modules import module_presence
from logsleuth.facts.imports import module_names as import_names
from logsleuth.facts.message_templates import short_type
from logsleuth.fixes import static_catalogs
from logsleuth.ingest.engine_evidence import wrapper_directory_names
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure, Frame, engine_subpackage_host

# Frames that are never the caller: torch's own ops and the standard library (as call_frames.py's LIBRARY_FRAME).
_LIBRARY_FRAME = compile_lazily(r"(^|/)(torch|functools|contextlib|enum|asyncio|threading|concurrent|<frozen [\w.]+>)(/|\.py$)|^<")
ENGINE_FRAME = compile_lazily(r"(^|/)(sglang|vllm)/")


def engine_of_frame(path: str) -> str | None:
    """The engine ("sglang", "vllm") whose own code a frame's file is, else None: a directory named after the engine,
    not one inside another package (a wrapper's code for the engine, models.engine_subpackage_host), nor one above the
    install directory the file's package sits in (`/home/u/vllm/.venv/…/site-packages/torch/`)."""
    match = ENGINE_FRAME.search(package_path(path))
    return match[2] if match and engine_subpackage_host(path) is None else None
_SITE_PREFIX = compile_lazily(r"^.*/(site|dist)-packages/")
_STDLIB = compile_lazily(r"^.*/lib/python3(?:\.\d+)?/")
_WINDOWS_DRIVE = compile_lazily(r"^[A-Za-z]:/")
# Packages that only dispatch a call (a web framework, Ray, a CLI parser): never the program that wrote the call.
DISPATCHER = compile_lazily(
    r"(^|/)(ray|starlette|fastapi|uvicorn|anyio|uvloop|zmq|click|typer|fire|hydra|xoscar|msgspec|pydantic)/"
)
# A module made to run one engine, named after it: lm-eval's `vllm_causallms.py`, FastChat's `vllm_worker.py`,
# LLaMA-Factory's `vllm_engine.py`, verl's `fsdp_sglang.py` and `vllm_rollout/`, a demo's `vllm_cli_demo.py`.
_ENGINE_NAMED_MODULE = compile_lazily(r"(?:^|[/_])(?P<engine>vllm|sglang)(?:_[\w]*)?(?:\.py$|/)|_(?P<suffix>vllm|sglang)\.py$")
# A call's signature refused, in CPython's words (the callee named: `Name()` or `Class.method()`) and in msgspec's
# (a Struct such as vLLM's SamplingParams names no callee).
SIGNATURE = compile_lazily(
    r"^(?:(?P<callee>[\w.]+)\(\) (?:got an unexpected keyword argument|got multiple values for argument"
    r"|missing \d+ required (?:positional|keyword-only) arguments?|takes (?:from \d+ to )?\d+ (?:positional )?arguments?)"
    r"|(?P<msgspec>Unexpected keyword argument|Missing required argument) ')"
)
# The classes a raising line calls: `SamplingParams(`, `vllm.LLM(`, `EngineArgs.from_cli_args(`.
_ENGINES = frozenset({"sglang", "vllm"})
_CALLED_CLASS = compile_lazily(r"(?<![\w])([A-Z]\w+)\s*(?:\(|\.\w+\()")


@dataclass(frozen=True)
class MisfitCall:
    """A call between the engine's API and another program's code that does not fit the installed release."""

    frame: Frame  # the frame that made the call (the caller's, or the engine's for an override)
    callee: str | None  # what was called, as the message or the raising line names it
    engine_calls_override: bool  # the engine's code called the other program's override


def package_path(file: str) -> str:
    """A frame's file from its package on: an environment's directory (`envs/vllm/lib/…`) names no package."""
    return _SITE_PREFIX.sub("", file)


@lru_cache(maxsize=1)
def _package_directory() -> re.Pattern[str]:
    """A directory named like a package whose directories name code wherever it sits: the engines, the packages
    facts/imports.toml and facts/engine_drivers.toml know (kernel and grammar libraries, torch, wrappers, hardware
    plugins), the wrappers' code directories, and the first directory of every `frames`/`raise_frames` fragment of
    facts/categories.toml (lmcache/, nixl/, aiter/): one list read from the facts, none kept here."""
    names = {*_ENGINES, *(module.split(".")[0] for module in import_names()), *driver_packages(),
             *wrapper_directory_names()}
    names |= {fragment.split("/")[0] for row in table().rows for fragment in (*row.frames, *row.raise_frames)
              if "/" in fragment and fragment.split("/")[0].isidentifier()}
    alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(rf"(?<![^/])(?P<package>{alternatives})/")


# The directory a package's checkout keeps it in: the repository's own (`vllm/vllm/`, `vLLM-Kunlun/vllm_kunlun/`,
# `vllm-ascend/vllm_ascend/`, vllm-project/vllm-ascend#2280; `pytorch/torch/`; a downloaded archive's `verl-main/verl/`)
# or a source layout's (`sglang/python/sglang/`, `LLaMA-Factory/src/llamafactory/`).
_SOURCE_LAYOUT = frozenset({"python", "src"})
_CHECKOUT_SUFFIX = compile_lazily(r"^(?:main|master|dev|v?\d\w*)?$")


# A person's home directory: the folders below it are that person's names, a package's name among them no package
# unless its checkout's shape or the engine's index says so.  Elsewhere (/opt, /srv, /app, /workspace: where images
# and deployments put code) a directory named like a package is that package's.
_HOME = compile_lazily(r"^(?:~|/home/|/root/|/Users/)")


def _checkout_of(parent: str, package: str) -> bool:
    """Whether a directory named `parent` is the checkout that holds `package` (a person's `/home/alice/vllm/` is not)."""
    key, name = re.sub(r"[^a-z0-9]", "", parent.lower()), re.sub(r"[^a-z0-9]", "", package.lower())
    if parent in _SOURCE_LAYOUT:
        return True
    rest = key.removeprefix("py") if key.startswith("py" + name) else key
    return rest.startswith(name) and bool(_CHECKOUT_SUFFIX.match(rest[len(name):]))


def _engine_module(path: str, package: str) -> bool:
    """`path` (from the package's directory on) is a module some indexed release of that engine has."""
    if package not in _ENGINES or not path.endswith(".py"):
        return False
    dotted = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    presence = module_presence(package, dotted)
    return presence is not None and bool(presence.having)


def code_path(file: str) -> str:
    """The part of a frame's path that names code, as the category rows read it: from the installed package on, from a
    package's directory on (in its repository's checkout, an engine module the index knows, or any outside a person's
    home), the standard library's module, else (a person's own script) the file's name alone: a person's directories are that
    person's names (`/home/alice/quantization/serve.py`, `/home/alice/vllm/lora/app.py`), not a subsystem.  A path the
    paste shortened (`…/layers/quantization/fp8.py`, `layers/quantization/fp8.py`) is a module's, read whole."""
    if not file.startswith(("/", "~")) and not _WINDOWS_DRIVE.match(file):
        return file
    if "-packages/" in file:
        return package_path(file)
    # (a checkout's package directory or an engine's module first: `/workspace/verl/verl/…` reads from the inner one)
    elsewhere = None
    for found in _package_directory().finditer(file):
        start, package = found.start("package"), found["package"]
        parent = file[:start].rstrip("/").rsplit("/", 1)[-1]
        if _checkout_of(parent, package) or _engine_module(file[start:], package):
            return file[start:]
        if elsewhere is None and not _HOME.match(file):
            elsewhere = file[start:]
    if elsewhere is not None:
        return elsewhere
    stdlib = _STDLIB.match(file)
    return file[stdlib.end():] if stdlib else file.rsplit("/", 1)[-1]


def _own_frames(failure: Failure) -> list[Frame]:
    return [frame for frame in failure.final.frames if not _LIBRARY_FRAME.search(package_path(frame.file))]


def _is_engine(frame: Frame) -> bool:
    return engine_of_frame(frame.file) is not None


def engine_named_module(path: str) -> str | None:
    """The engine a module outside the engine was made to run, by its name (`lm_eval/models/vllm_causallms.py`)."""
    if engine_of_frame(path):
        return None
    match = _ENGINE_NAMED_MODULE.search(package_path(path))
    return (match["engine"] or match["suffix"]) if match else None


def _engine_class_called(source: str | None) -> str | None:
    """A class only the engines define that the raising line calls (`sampling_params = SamplingParams(**params)`)."""
    return next((name for name in _CALLED_CLASS.findall(source or "")
                 if engines_defining(name) and not _also_a_package_class(name)), None)


def _also_a_package_class(name: str) -> bool:
    """A class a package the engines run defines under the same name (transformers' `LlamaForCausalLM`, which both
    engines also define): the message alone does not say the engine's was called; a program building a Hugging Face
    model (lm-evaluation-harness's hf backend, EleutherAI/lm-evaluation-harness#2586) calls transformers'."""
    return bool(defined_by(name) - _ENGINES)


def caller_misfit(failure: Failure) -> MisfitCall | None:
    """The caller's own frame refused its call into the engine's API (the first shape in the module's docstring)."""
    final = failure.final
    signature = SIGNATURE.match(final.message.strip())
    if short_type(final.type) != "TypeError" or signature is None:
        return None
    own = _own_frames(failure)
    if not own:
        return None
    frame = own[-1]
    if _is_engine(frame) or DISPATCHER.search(package_path(frame.file)):
        return None
    callee = signature["callee"]
    named_class = class_in_message(final.message)
    if named_class is not None and distinctive(named_class) and not defined_by(named_class) & _ENGINES:
        # The call names a class no engine defines (a wrapper's own `vLLMRollout`, `AsyncvLLMServer`): the caller's
        # own code refused, even in a module named after the engine; no engine API was called.
        return None
    into_engine = (
        (named_class is not None and bool(engines_defining(named_class)) and not _also_a_package_class(named_class))
        or engine_named_module(frame.file) is not None
        or _engine_class_called(frame.source) is not None
    )
    if not into_engine:
        return None
    return MisfitCall(frame=frame, callee=callee or _engine_class_called(frame.source), engine_calls_override=False)


def override_misfit(failure: Failure, wrapper_shown: bool) -> MisfitCall | None:
    """The engine's own code called a method of a class no indexed package defines, and the signature did not fit (the
    second shape in the module's docstring); only when the log shows a program that runs the engine (`wrapper_shown`)."""
    final = failure.final
    signature = SIGNATURE.match(final.message.strip())
    if not wrapper_shown or short_type(final.type) != "TypeError" or signature is None or not signature["callee"]:
        return None
    owner = signature["callee"].split(".")[0]
    if "." not in signature["callee"] or not distinctive(owner) or defined_by(owner):
        return None
    own = _own_frames(failure)
    if not own or not _is_engine(own[-1]):
        return None
    return MisfitCall(frame=own[-1], callee=signature["callee"], engine_calls_override=True)


def misfit_engine(misfit: MisfitCall, failure: Failure) -> str | None:
    """The engine the misfitting call went to, when the log decided none: the engine's own frame, the module made for
    it, or the one engine defining the class the message or the raising line names."""
    if misfit.engine_calls_override:
        return engine_of_frame(misfit.frame.file)
    if module := engine_named_module(misfit.frame.file):
        return module
    named = class_in_message(failure.final.message) or _engine_class_called(misfit.frame.source)
    owners = engines_defining(named) if named else frozenset()
    return next(iter(owners)) if len(owners) == 1 else None


# A class that parses a command line (argparse's ArgumentParser, a program's own parser): a refusal of its call is the
# program's argument handling, not a call between two releases.
_PARSER_CLASS = compile_lazily(r"(?:Parser|Namespace)$")
_REFUSED_KEYWORD = compile_lazily(r"got an unexpected keyword argument '(?P<keyword>[^'\n]{1,200})'")
_IDENTIFIER = compile_lazily(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class UnseenCaller:
    """CPython refused a call on `refused_class`'s signature and no frame shows who made the call."""

    refused_class: str
    keyword: str | None  # the keyword refused (`got an unexpected keyword argument 'k'`); None for a count of arguments
    packages: frozenset[str]  # the indexed packages defining the class (empty when the class index does not know it)


def refusal_without_caller(failure: Failure) -> UnseenCaller | None:
    """CPython's refusal of a call by the callee's signature (`X.__init__() got an unexpected keyword argument 'k'`,
    `missing 1 required positional argument`, `takes 2 positional arguments but 3 were given`) pasted alone or with
    only the receiving side's frames (vLLM's `LLM.__init__` handing its keywords to `EngineArgs(`: vllm-project/vllm#9398;
    the line alone: rllm-org/rllm#208).  CPython raises it at a call between two pieces of code: with the caller out
    of sight, the likeliest reading is a caller written for another release of the class's package.  None when a frame
    outside the class's package shows the caller (the user's script, a wrapper: caller_misfit and the table read those)
    or when the class parses a command line."""
    signature = SIGNATURE.match(failure.final.message.strip())
    callee = signature["callee"] if signature else None
    if not callee or "." not in callee:
        return None
    refused_class = callee.split(".")[0]
    if not refused_class[:1].isupper() or _PARSER_CLASS.search(refused_class):
        return None
    packages = defined_by(refused_class)
    receiving = re.compile(r"(?:^|/)(?:" + "|".join(map(re.escape, sorted(packages))) + r")/") if packages else None
    if any(receiving is None or not receiving.search(package_path(frame.file)) for frame in _own_frames(failure)):
        return None  # a frame of another program (the user's script, a wrapper): the caller is shown
    keyword = _REFUSED_KEYWORD.search(failure.final.message)
    return UnseenCaller(refused_class, keyword["keyword"] if keyword else None, packages)


def keyword_is_a_value(unseen: UnseenCaller) -> bool:
    """A refused keyword that is no Python name (`temperature:0.6`): no Python call spells it, so a program split a
    string the user wrote into keywords (a wrapper's `key=value,...` model arguments), and the user's syntax of that
    value is what the installed release does not read (huggingface/open-r1#408: lighteval's generation_parameters)."""
    return unseen.keyword is not None and not _IDENTIFIER.match(unseen.keyword)


def keyword_given_by_user(unseen: UnseenCaller, lines: list[str]) -> bool:
    """The refused keyword set in a command the log shows (`--gpu-memory-utilization 0.8`, `gpu_memory_utilization=0.8`
    in a wrapper's model arguments: huggingface/lighteval#612): the user's own argument, an unknown flag to fix in the
    command rather than two releases to align."""
    if unseen.keyword is None or not _IDENTIFIER.match(unseen.keyword):
        return False
    dashed = unseen.keyword.replace("_", "-")
    given = re.compile(rf"(?<![\w-])(?:--{re.escape(dashed)}\b|--{re.escape(unseen.keyword)}\b"
                           rf"|{re.escape(unseen.keyword)}=)")
    return any(given.search(line) for line in lines if "got an unexpected keyword argument" not in line)


def misspelt_engine_flag(unseen: UnseenCaller) -> str | None:
    """The engine flag a refused keyword misspells (`max_num_batched_token` for `--max-num-batched-tokens`): a keyword no
    release of the class's engine has, a letter or two from one that every catalogued release has.  A typo is the
    caller's own, whatever release it runs, so no two releases to align; a keyword some release has (a field the
    installed release removed or has not yet: `num_scheduler_steps`, vLLM 0.6.0 to 0.10.0) is not read so."""
    engines = engines_defining(unseen.refused_class)
    if unseen.keyword is None or len(engines) != 1 or not _IDENTIFIER.match(unseen.keyword):
        return None
    engine = next(iter(engines))
    flag = "--" + unseen.keyword.replace("_", "-")
    if static_catalogs.releases_with(engine, flag):
        return None
    close = difflib.get_close_matches(flag, sorted(static_catalogs.all_flags(engine)), n=1, cutoff=0.9)
    return close[0] if close else None
