"""Builders for a checkpoint's quantization tensors the model has no parameter for (KeyError 'qweight',
'weight_scale', ... in load_weights).

The two causes want opposite advice: a --quantization that overrides the checkpoint's own method is dropped; with
no such flag the engine already took the method from the checkpoint's config.json, and this release does not load
that method's tensors for this architecture.  A fix never removes or changes a flag the launch does not give
(issue 28, the blind split of stop 38): the launch's command or settings dump decides which advice is given, and
with neither the advice stays conditional."""

from __future__ import annotations

from typing import Any

from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Fix, FlagOp

QUANTIZATION_FLAGS = ("--quantization", "-q")
# The checkpoint's method where the log prints it: config.json's quantization_config ('quant_method': 'awq'), or
# vLLM's engine config line, which shows the method it resolved (quantization=awq).
_QUANT_METHOD = compile_lazily(r"""['"]?quant_method['"]?\s*[:=]\s*['"]?(?P<method>[\w-]+)""")
_RESOLVED = compile_lazily(r"with config:.*?\bquantization=(?P<method>[\w-]+)")


def _given_quantization(ctx: FixContext) -> tuple[bool | None, str | None]:
    """Whether the launch gives a quantization method, and which: None when neither its command nor its settings
    dump is in the log."""
    if ctx.command is not None:
        flag = next((flag for flag in QUANTIZATION_FLAGS if ctx.command.has(flag)), None)
        return (flag is not None, ctx.command.value(flag) if flag else None)
    dumped = dict(ctx.launch.server_args).get("quantization")
    if dumped is not None:
        value = dumped.strip("'\"")
        return (value not in ("None", ""), value if value not in ("None", "") else None)
    return None, None


# What a checkpoint's quantization tensor says of its method (the names the methods' loaders read): GPTQ and AWQ pack
# int4 weights as qweight/qzeros/scales (GPTQ adds g_idx); FP8 keeps weight_scale and input_scale (block FP8:
# weight_scale_inv); compressed-tensors packs as weight_packed.  KV-cache scales (k_scale, v_scale) name no method.
_METHODS_BY_TENSOR = (
    (compile_lazily(r"(?:qweight|qzeros|\.scales)$"), ("awq", "gptq")),
    (compile_lazily(r"g_idx$"), ("gptq",)),
    (compile_lazily(r"weight_scale_inv$"), ("fp8",)),
    (compile_lazily(r"weight_packed$"), ("compressed-tensors",)),
    (compile_lazily(r"(?:weight_scale|input_scale)$"), ("fp8", "compressed-tensors", "modelopt")),
)
# A method a model's own name carries (Qwen2.5-72B-Instruct-AWQ, Llama-3.1-8B-GPTQ-Int4).  Not "FP8": ModelOpt's and
# compressed-tensors' FP8 checkpoints are named so too (nvidia/Llama-3.1-8B-Instruct-FP8 is method modelopt), so an
# FP8 name does not tell the method.
_METHOD_IN_NAME = compile_lazily(r"(?i)(?<![a-z0-9])(awq|gptq)(?![a-z])")
_MODEL_FLAGS = ("--model-path", "--model")


def _candidate_methods(ctx: FixContext) -> tuple[str, ...]:
    """The methods the tensor's name points to that the release's --quantization accepts (its catalog's choices):
    none when the catalog lists no choices, so no method is named that the release may not have."""
    key = ctx.captures.get("key", "")
    info = ctx.catalog.find("--quantization") if ctx.catalog is not None else None
    if info is None or not info.choices:
        return ()
    named = next((methods for pattern, methods in _METHODS_BY_TENSOR if pattern.search(key)), ())
    return tuple(method for method in named if method in info.choices)


def _method_in_model_name(ctx: FixContext, candidates: tuple[str, ...]) -> str | None:
    """The one candidate method the model's name carries, else None."""
    model = next((value for flag in _MODEL_FLAGS if ctx.command is not None and (value := ctx.command.value(flag))), None)
    if model is None:
        dumped = dict(ctx.launch.server_args)
        model = dumped.get("model_path") or dumped.get("model")
    if not model:
        return None
    found = {m.group(1).lower() for m in _METHOD_IN_NAME.finditer(model.rstrip("/").rsplit("/", 1)[-1])}
    named = [method for method in candidates if method in found]
    return named[0] if len(named) == 1 else None


def _method_not_passed(ctx: FixContext, engine: str) -> Fix:
    """No --quantization and no method in the log: the tensor says the checkpoint is quantized, and the engine
    detects the method only from config.json's quantization_config, so a checkpoint saved without one is built
    unquantized.  The method is passed explicitly: the one the model's name carries, else asked for."""
    key = ctx.captures.get("key", "the tensor")
    candidates = _candidate_methods(ctx)
    named = _method_in_model_name(ctx, candidates)
    hinted = named or (candidates[0] if len(candidates) == 1 else None)
    flagged = bool(candidates)  # a flag operation only where the catalog lists the methods (vLLM's lists none: text)
    which = (f" ({named}, the method the model's name carries: check it against the checkpoint's model card)" if named
             else f" ({hinted}, the only method its tensors point to)" if hinted
             else f" (one of {', '.join(candidates)}, by its tensors)" if candidates else "")
    summary = (f"The checkpoint is quantized ({key} is a quantized checkpoint's tensor) but the launch gives no "
               f"--quantization, and {engine} built an unquantized model: it detects the method from the checkpoint's "
               "quantization config (config.json's quantization_config; ModelOpt's hf_quant_config.json), which this "
               f"checkpoint likely lacks. Pass the checkpoint's method with --quantization{which}.")
    needs = () if hinted else (
        "the checkpoint's quantization method (its model card or the tool that quantized it)"
        + (f": {' or '.join(candidates)} by its tensors" if candidates else ""),)
    return Fix(
        summary=summary,
        flags=(FlagOp("set", "--quantization", hinted),) if flagged else (),
        steps=(
            "read the checkpoint's config.json: without a quantization_config, auto-detection has nothing to read; "
            "the method given with --quantization (or the quantization_config the quantizing tool writes, restored) "
            "tells the engine how to build the layers",
            f"if config.json does have a quantization_config, {engine}'s release builds no parameter for this tensor "
            "under that method for this architecture: a newer release, or the model in another format, may load it",
        ),
        needs_input=needs,
    )


# A KV cache's scaling factors (and the FP8 attention's query and softmax scales): `.k_scale`, `.v_scale`, the
# deprecated single `.kv_scale`, `.q_scale`, `.prob_scale`.  Two shapes of name, two causes:
# - the checkpoint's own name (`.self_attn.kv_scale`, `.k_proj.k_scale`, `.self_attn.k_scale`, `qkv_proj.k_scale`): the
#   engines place these on the attention layer with weight_utils.maybe_remap_kv_scale_name (`.kv_scale` and `.k_scale`
#   onto `.attn.k_scale`; vllm and sglang model_loader/weight_utils.py), called from each model's load_weights.  A
#   model whose loader does not call it at that release, or renames the name onto the fused qkv_proj first
#   (vllm-project/vllm#34293's `qkv_proj.k_scale`), raises KeyError on `params_dict[name]` (sgl-project/sglang PR#1559
#   and PR#1835: llama.py and mixtral.py then skipped `.kv_scale`).  Which release's loader for a given model maps them
#   is not known here (sglang's qwen3_moe.py calls maybe_remap_kv_scale_name in no indexed release), so it is asked.
# - the attention layer's own name (`.attn.k_scale`, after the remapping): the layer has that parameter only when the
#   model's quantization config gives it a KV-cache method (sglang 0.5.9 layers/radix_attention.py: `k_scale = None`,
#   then `quant_config.get_quant_method(self)` and its create_weights; vllm 0.11.2 attention/layer.py the same, with a
#   BaseKVCacheMethod).  The model was built without the checkpoint's KV-cache quantization: a --quantization that
#   overrides config.json's quantization_config, or a config.json without one (or without its KV-cache part).
KV_CACHE_SCALE = compile_lazily(r"(?:^|\.)(?:[kvq]|kv|prob)_scale$")
_LAYER_SCALE = compile_lazily(r"(?:^|\.)attn\.(?:[kvq]|prob)_scale$")


def _kv_cache_scale(ctx: FixContext, engine: str) -> Fix:
    """A KV-cache scale the model has no parameter for: the layer's own name (built without a KV-cache method) or the
    checkpoint's name the release's loader for this model does not remap."""
    key = ctx.captures.get("key", "the tensor")
    given, value = _given_quantization(ctx)
    if _LAYER_SCALE.search(key):
        return _layer_scale_missing(key, engine, given, value)
    steps = [
        "leave the KV-cache scales out of the checkpoint (its k_scale/v_scale/kv_scale tensors and their entries in "
        "model.safetensors.index.json): the engine then uses a scale of 1.0, which costs accuracy only with an FP8 "
        "KV cache",
        f"or a {engine} release whose models/<model>.py load_weights passes such names through "
        "maybe_remap_kv_scale_name (or skips them) before params_dict[name]; which release does so for this model is "
        "not known here",
        "the scales are read for an FP8 KV cache (--kv-cache-dtype); changing --kv-cache-dtype does not change "
        "whether the loader places the tensor, so it does not avoid this error",
    ]
    if given:
        steps.append(f"the launch's --quantization {value or ''} decides the weights' method, not where the checkpoint's "
                     "KV-cache scale names are mapped: keep it as the checkpoint's method (config.json's "
                     "quantization_config)")
    return Fix(
        summary=(f"{key} is a KV-cache scale (the attention layer's FP8 scaling factor) under the checkpoint's own name: "
                 f"this {engine} release's loader for this model does not map it onto the attention layer "
                 "(maybe_remap_kv_scale_name), so params_dict has no such name."),
        steps=tuple(steps),
        needs_input=(f"whether some {engine} release's loader for this model maps KV-cache scales",),
    )


def _layer_scale_missing(key: str, engine: str, given: bool | None, value: str | None) -> Fix:
    """`.attn.k_scale` missing: the attention layer was built without a KV-cache quantization method."""
    summary = (f"{key} is the attention layer's KV-cache scale, which {engine} creates only when the model's "
               "quantization config gives the attention a KV-cache method: the model was built without the "
               "checkpoint's KV-cache quantization.")
    if given:
        return Fix(
            summary=summary + (f" The launch's --quantization {value or ''} overrides the checkpoint's config.json "
                               "quantization_config, which would give it: compare the two."),
            steps=("read config.json's quantization_config (its quant_method and KV-cache part, kv_cache_scheme or "
                   "kv_cache_quant_algo): if it names another method than the launch's --quantization, launch without "
                   "--quantization so that the engine builds the model from the checkpoint's config",),
        )
    return Fix(
        summary=summary + " Its config.json's quantization_config (with a KV-cache part) is what gives it.",
        steps=("read config.json: without a quantization_config, or with one that has no KV-cache part "
               "(kv_cache_scheme, kv_cache_quant_algo), the attention has no scale parameter; the quantizing tool "
               "writes that config, or the checkpoint without its KV-cache scale tensors loads with a scale of 1.0",),
        needs_input=("the checkpoint's config.json quantization_config",),
    )


def _checkpoint_method(ctx: FixContext) -> str | None:
    for line in ctx.failure.context:
        found = _QUANT_METHOD.search(line) or _RESOLVED.search(line)
        if found is not None and found["method"] != "None":
            return found["method"]
    return None


def checkpoint_quantization(ctx: FixContext, data: dict[str, Any]) -> Fix:
    engine = ENGINE_NAMES.get(ctx.launch.engine or "", "the engine")
    if KV_CACHE_SCALE.search(ctx.captures.get("key", "")):
        return _kv_cache_scale(ctx, engine)
    given, value = _given_quantization(ctx)
    method = _checkpoint_method(ctx)
    if given:
        return Fix(
            summary=(f"The launch's --quantization {value or ''} overrides the checkpoint's own method: launch without "
                     f"it, so that {engine} reads the method from the checkpoint's config.json "
                     "(quantization_config.quant_method)."),
            steps=("if config.json's quant_method is the same method, this release does not load it for this "
                   f"architecture: a newer {engine} release, or a checkpoint in another format",),
        )
    named = f" ({method}, as the log shows)" if method else ""
    if given is False and not method:
        return _method_not_passed(ctx, engine)
    if given is False:
        return Fix(
            summary=(f"The launch gives no --quantization, so {engine} took the method from the checkpoint's "
                     f"config.json{named}; this release builds no parameter for the tensor the checkpoint holds under "
                     "that method for this architecture. Nothing to remove from the command."),
            steps=(
                "read quantization_config.quant_method in the checkpoint's config.json (and its other fields: bits, "
                "group size, the format of its scales)",
                f"check that {engine}'s release supports that method for this model's architecture (its list of "
                "supported quantization methods); a newer release, or the same model in another format, may load it",
            ),
            needs_input=() if method else ("the checkpoint's quantization method (config.json: quantization_config.quant_method)",),
        )
    return Fix(
        summary=(f"Let {engine} take the quantization method from the checkpoint's config.json{named}: if the launch "
                 "gives a --quantization that names another method, launch without it; if it gives none, this release "
                 "does not load that method's tensors for this architecture."),
        steps=tuple(data.get("steps", ())),
        needs_input=() if method else ("the checkpoint's quantization method (config.json: quantization_config.quant_method)",),
    )
