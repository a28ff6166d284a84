"""The launch's settings whose code the failing frames run through (issue 28: an engine regression on a setting
combination that got only generic checks).

raise_site.given_settings names the settings the engine's failing check reads, when the check is the engine's own and
indexed.  Many such regressions fail elsewhere: in torch's collective that the engine's data-parallel attention calls
(`output tensor size must be equal to world_size times input tensor size` from sglang/srt/layers/dp_attention.py,
sgl-project/sglang#3658 and the fix in #19760), or in a Triton kernel that only prefix caching runs
(vllm/attention/ops/prefix_prefill.py, vllm-project/vllm#3944 and #6099).  The frames still say which feature's code
ran: a module or function named after a setting the launch turned on (`dp_attention.py` for --enable-dp-attention,
`prefix_prefill.py` for --enable-prefix-caching, `speculative/` for --speculative-algorithm), or after the choice a
backend setting made (`triton_backend.py` for --attention-backend triton).  Only settings the release's catalog holds,
with a default to fall back on, and never one a checkpoint needs to load (raise_site._NO_DEFAULT_RUN)."""

from __future__ import annotations

from logsleuth.command_line import CommandLine
from logsleuth.fixes import catalog as catalogs
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure, LaunchInfo
from logsleuth.reasoning.raise_site import settable_given

# A switch's verb (`--enable-lora`, `--disable-custom-all-reduce`, `--use-v2-block-manager`), after a boolean's
# negation (`--no-enable-prefix-caching`), is no word of the feature it turns on or off.
_NEGATION = "no-"
_SWITCH_PREFIXES = ("enable-", "disable-", "use-")
# Words of a flag's name that name no feature's code: every module has sizes, modes and backends.
GENERIC_WORDS = frozenset({
    "size", "mode", "path", "backend", "model", "max", "min", "num", "type", "dtype", "len", "length", "config",
    "cache", "port", "host", "static", "fraction", "memory", "gpu", "cuda", "kernel", "impl", "level", "tokens",
    "chunked", "prefill", "decode", "batch", "server", "engine", "runner", "worker", "layer", "layers", "attention",
    "torch", "python", "models", "utils", "distributed", "parallel", "load", "method", "name", "file", "format", "policy",
    "init", "weight", "weights", "request", "requests", "time", "timeout", "stream", "output", "input", "group",
    # verbs and qualifiers of switches (`--enable-p2p-check`, `--disable-custom-all-reduce`): no feature's name
    "check", "custom", "debug", "auto", "force", "skip", "allow", "async", "sync", "overlap", "reduce", "all",
})
MIN_WORD = 4  # a single word names a feature from this length on (`lora`, `prefix`, `speculative`), as a whole token
# Choice settings whose value names a module (`--attention-backend triton` runs triton_backend.py).
_BACKEND_FLAG = compile_lazily(r"-(backend|impl|runner)$")
MIN_VALUE = 4


_TOKEN_SPLIT = compile_lazily(r"[/_.\s-]+")


def _path_words(failure: Failure) -> str:
    """The frames' module paths and functions, lower case, as one text to search."""
    parts = []
    for frame in failure.final.frames:
        parts.append(frame.file.rsplit("-packages/", 1)[-1].lower())
        parts.append((frame.function or "").lower())
    return "\n".join(parts)


def _module_tokens(failure: Failure) -> set[str]:
    """The words of the frames' module paths alone: a single word of a flag names a feature's code only as a module
    or package (`speculative/`, `lora/`); a function's name is too often a common word (`check_memory`)."""
    return {token for frame in failure.final.frames
            for token in _TOKEN_SPLIT.split(frame.file.rsplit("-packages/", 1)[-1].lower())}


def switch_key(flag: str) -> str:
    """The flag's name without its dashes, negation and switch verb: the words of the feature it sets
    (`--no-enable-prefix-caching` -> `prefix-caching`)."""
    key = flag.lstrip("-").removeprefix(_NEGATION)
    for prefix in _SWITCH_PREFIXES:
        key = key.removeprefix(prefix)
    return key


def _names_feature(flag: str, value: str, paths: str, tokens: set[str]) -> bool:
    words = switch_key(flag).split("-")
    joined = "_".join(words)
    if len(words) > 1 and not all(word in GENERIC_WORDS for word in words) and joined in paths:
        return True
    if any(len(word) >= MIN_WORD and word not in GENERIC_WORDS and word in tokens for word in words):
        return True
    return bool(_BACKEND_FLAG.search(flag) and len(value) >= MIN_VALUE and value.lower() in tokens)


def settings_on_the_path(failure: Failure, launch: LaunchInfo, engine: str, version: str | None
                         ) -> list[tuple[str, str]]:
    """The settings the launch gives whose feature's code the failure's frames run through, with their values."""
    if launch.command is None:
        return []
    paths = _path_words(failure)
    options = dict(CommandLine.parse(launch.command).options)
    flags = list(options)
    # The release's catalog; with the version unknown, a setting any shipped release can leave out counts (general.py's
    # flags_hold then keeps only those every shipped release has).
    releases = [version] if version else [v for e, v in catalogs.available() if e == engine]
    found: dict[str, str] = {}
    for release in releases:
        for flag, value in settable_given(catalogs.load(engine, release), options, flags):
            found.setdefault(flag, value)
    tokens = _module_tokens(failure)
    return [(flag, found[flag]) for flag in flags if flag in found and _names_feature(flag, found[flag], paths, tokens)]
