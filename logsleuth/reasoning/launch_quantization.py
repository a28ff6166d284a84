"""The quantization a launch asks for, read from what the log shows of the launch: a `--quantization` setting, a
settings dump's `quantization=…`, or a checkpoint whose name says it is quantized (`Qwen2.5-VL-72B-Instruct-AWQ`,
`…-NVFP4`, a `.gguf` file).

A traceback cut before its exception line inside the model loader says only that the model was being built; with a
quantization in the launch, the quantized layers are the likeliest part of it to fail (the blind and dev splits'
cut loader pastes were mostly a quantization the release or the GPU did not run: sgl-project/sglang PR#14682,
vllm-project/vllm#22004, #13640, aivrar/vllm-windows-build#16).  The setting is the launch's own, so it says which
model ran, never that it failed: it counts only beside a cut loader traceback (reasoning/category_score.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from logsleuth.command_line import CommandLine
from logsleuth.ingest.launch import SETTINGS_DUMPS
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LaunchInfo

# A method's name as a checkpoint's name spells it, between separators (`-AWQ`, `_gptq_int4`, `.gguf`, `-FP8-Dynamic`,
# `-bnb-4bit`): not inside a word (`fp8` in `fp8e4m3` still has its separator before it, `gguf` in `ggufs` none after).
_QUANTIZED_NAME = compile_lazily(
    r"(?:^|[-_.])(awq|gptq|fp8|fp4|nvfp4|mxfp4|int4|int8|w4a16|w8a8|w4a8|w8a16|gguf|bnb|4bit|8bit|exl2|quantized)(?=$|[-_.])",
    re.IGNORECASE,
)
# A settings dump's quantization item (`quantization=awq` in vLLM's `with config: …`, `'quantization': 'fp8'` in a dict,
# `quantization='awq'` in SGLang's ServerArgs repr) and its model (`model='…'`, `model_path='…'`).
_DUMPED_METHOD = compile_lazily(r"\bquantization['\"]?\s?[=:]\s?['\"]?([A-Za-z][\w-]{0,40})")
_DUMPED_MODEL = compile_lazily(r"\bmodel(?:_path)?['\"]?\s?[=:]\s?['\"]([^'\"\s]{1,300})['\"]")
# A mixture-of-experts checkpoint's name: the active parameters right after the total (`57B-A14B`, `30B-A3B`,
# `14.3B-A2.7B`; not a LoRA's `r16-a32b`), two experts or more times their size (`8x7B`, `8x22B`; `1x8B` is one dense
# model), or the word (`MoE`, `-moe-`) in a name that is more than it, between separators.
_MOE_NAME = compile_lazily(r"(?:^|[-_.])(?:\d{1,4}(?:\.\d{1,2})?B[-_.](?P<active>A\d{1,3}(?:\.\d)?B)|"
                           r"(?P<part>(?:[2-9]|\d{2,3})x\d{1,3}(?:\.\d)?B|(?<=.)MoE|MoE(?=.)))(?=$|[-_.])", re.IGNORECASE)
_MODEL_FLAGS = ("--model", "--model-path", "--model_path")
_METHOD_FLAGS = ("--quantization", "-q")
_NO_METHOD = ("none", "None", "null", "")


def _method(value: str | None) -> str | None:
    value = (value or "").strip("'\" ")
    return None if value in _NO_METHOD else value


def _quantized_name(model: str | None) -> str | None:
    """`model`'s last path component when it names a quantization method."""
    name = (model or "").strip("'\" ").rstrip("/").rsplit("/", 1)[-1]
    return name if name and _QUANTIZED_NAME.search(name) else None


def launch_quantization(launch: LaunchInfo, lines: Sequence[str] = ()) -> str | None:
    """What the launch shows of a quantization, as the reasons quote it (`--quantization awq`, `the checkpoint's name
    Qwen2.5-VL-72B-Instruct-AWQ`), from its command, its server_args or a settings dump among `lines`; None when none."""
    method, models = _read_launch(launch, lines)
    if method:
        return method
    named = next((name for model in models if (name := _quantized_name(model))), None)
    return f"the checkpoint's name {named}" if named else None


def launch_model(launch: LaunchInfo, lines: Sequence[str] = ()) -> str | None:
    """The model the launch serves as the log names it: its command's, its server_args', a settings dump's, or vLLM's
    banner's (LaunchInfo.banner_model); None when none."""
    models = [*_read_launch(launch, lines)[1], *([launch.banner_model] if launch.banner_model else [])]
    return next((model.strip("'\" ") for model in models if model.strip("'\" ")), None)


def mixture_of_experts_name(model: str | None) -> str | None:
    """The part of a checkpoint's name that says it is a mixture-of-experts model (`A14B` of Qwen2-57B-A14B, the
    active parameters; `8x7B` of Mixtral-8x7B; `MoE`), or None."""
    name = (model or "").rstrip("/").rsplit("/", 1)[-1]
    found = _MOE_NAME.search(name)
    return (found["active"] or found["part"]) if found else None


def _read_launch(launch: LaunchInfo, lines: Sequence[str]) -> tuple[str | None, list[str]]:
    """The quantization method as the reasons quote it (None: none set) and the models the launch names, in the
    order the command, the server_args and the settings dumps among `lines` give them."""
    models: list[str] = []
    found_method: str | None = None
    if launch.command:
        command = CommandLine.parse(launch.command)
        options = dict(command.options)
        found_method = next((f"{flag} {method}" for flag in _METHOD_FLAGS
                             if (method := _method(" ".join(options.get(flag, ()))))), None)
        models += [" ".join(options[flag]) for flag in _MODEL_FLAGS if flag in options]
        models += list(command.positional[:1])
    settings = dict(launch.server_args)
    if found_method is None and (method := _method(settings.get("quantization"))):
        found_method = f"quantization={method}"
    models += [settings[name] for name in ("model_path", "model") if name in settings]
    for line in lines:
        if len(line) > 20_000 or not any(dump in line for dump in SETTINGS_DUMPS):
            continue
        if found_method is None and (found := _DUMPED_METHOD.search(line)) and (method := _method(found[1])):
            found_method = f"quantization={method}"
        models += [found[1] for found in _DUMPED_MODEL.finditer(line)]
    return found_method, models
