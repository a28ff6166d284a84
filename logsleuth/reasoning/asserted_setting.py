"""A bare assertion of the engine's code whose condition reads a server setting (`assert not
get_global_server_args().disable_chunked_prefix_cache`, `assert server_args.speculative_num_draft_tokens is not None`):
the setting's value in the running process does not fit the code path that ran.  The launch may not set it at all: the
engines adjust settings themselves at start-up, per model and per part (sglang-0.5.9 srt/model_executor/model_runner.py
model_specific_adjustment sets `server_args.disable_chunked_prefix_cache = True` for a runner without MLA or with an
attention backend outside CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS), and a second model in the process (a
speculative-decoding draft) can change the process-wide value (sgl-project/sglang#22780, #22682).  The honest answer
names the setting and its flag, the features that adjust settings, a newer release and the assertion as search words."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure
from logsleuth.reasoning.guidance_text import flags_hold

# `assert [not] <server settings>.<field>` : SGLang's get_global_server_args() (0.5.x), global_server_args_dict["…"]
# (0.4.x), a runner's or worker's server_args; vLLM's config objects (self.vllm_config.<part>_config.<field>)
_ASSERTED = compile_lazily(
    r"^assert\s+(?P<negated>not\s+)?\(?\s*(?:[\w.]+\.)?(?:get_global_server_args\(\)\.(?P<field>\w+)"
    r"|global_server_args_dict\[['\"](?P<key>\w+)['\"]\]|server_args\.(?P<attr>\w+)"
    r"|vllm_config\.\w+_config\.(?P<config>\w+))"
)


def asserted_setting(failure: Failure) -> str | None:
    """The server setting a bare assertion at the raising line reads, or None."""
    frames = failure.final.frames
    source = (frames[-1].source or "").strip() if frames else ""
    found = _ASSERTED.match(source) if source.startswith("assert") else None
    if found is None or failure.final.message.strip():
        return None
    return found["field"] or found["key"] or found["attr"] or found["config"]


def asserted_setting_steps(failure: Failure, engine: str | None, version: str | None) -> tuple[str, ...]:
    """What to do about a bare assertion on a server setting (none when the raising line is no such assertion)."""
    field = asserted_setting(failure)
    if field is None:
        return ()
    flag = f"--{field.replace('_', '-')}"
    name = ENGINE_NAMES.get(engine or "", "the engine")
    given = f" (the flag {flag})" if engine and flags_hold(flag, engine, version) else ""
    example = (" (SGLang's model runner turns the chunked prefix cache off for a model without MLA attention or an "
               "attention backend without it, for one)" if engine == "sglang" else "")
    return (
        f"The assertion that failed reads the server setting {field}{given}: this code path expected another value. "
        f"The launch need not set it: the engine adjusts settings itself at start-up for the model and its parts{example}, "
        "and a second model in the same process, such as a speculative-decoding draft model, or another optional "
        "feature can change the value the whole process reads.",
        "Compare the server_args the log prints at start-up with the launch, then launch without the optional features "
        "(speculative decoding, a chosen attention backend, the others the launch turns on) one at a time to find the "
        f"one that changes it. It is a combination {name}'s code does not handle: a newer release may fix it; search "
        "its issues for the assertion's line.",
    )
