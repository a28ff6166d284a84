"""Leads for a log that stops during the start-up with no error (issue 28, stops 56-57: a paste cut in its
settings dump, whose failure is in lines it does not hold), each only where what the log names supports it.

- A GGUF file served by SGLang with the default load format: SGLang's --load-format lists gguf only from the release the
  static catalogs name (sglang/srt/server_args.py; sgl-project/sglang#1616, a .gguf path on a release of late 2024
  with load_format='auto').
- A quantization method set on a mixture-of-experts checkpoint (its name says so: `A14B`, `8x7B`, `MoE`): a method's
  support for expert layers comes apart from the dense layers' (sgl-project/sglang#1100, GPTQ on Qwen2-57B-A14B;
  #2362, W4A16 on a DeepSeek MoE), labelled general guidance.
The notice shows them as leads (render/view.py startup_notice), never as the failure."""

from __future__ import annotations

from collections.abc import Sequence

from logsleuth.fixes.rejected_flags import releases_with_choice
from logsleuth.models import ENGINE_NAMES, LaunchInfo
from logsleuth.reasoning.launch_quantization import launch_model, launch_quantization, mixture_of_experts_name

LABEL = "General guidance, not a proven fix:"


def startup_leads(launch: LaunchInfo, lines: Sequence[str] = ()) -> tuple[str, ...]:
    """The leads what the log names supports, for a log that ends during the start-up."""
    model = launch_model(launch, lines)
    leads = (_gguf_lead(launch, model), _moe_quantization_lead(launch, lines, model))
    return tuple(lead for lead in leads if lead)


def _gguf_lead(launch: LaunchInfo, model: str | None) -> str | None:
    """A .gguf file under SGLang with the load format left at auto (its settings dump or its command)."""
    if launch.engine != "sglang" or not model or not model.lower().endswith(".gguf"):
        return None
    settings = dict(launch.server_args)
    load_format = settings.get("load_format", "").strip("'\" ")
    if load_format not in ("auto", "") or (not load_format and "--load-format" in (launch.command or "")):
        return None
    having = releases_with_choice("sglang", "--load-format", "gguf")
    if not having:
        return None
    version = launch.named_version
    if version is not None and version not in having:
        return (f"A fact of SGLang's static catalogs: SGLang {version}'s --load-format has no gguf choice (the indexed "
                f"releases list it from {having[0]}), and the model is a GGUF file ({model}): this release cannot read "
                "it. The original checkpoint (safetensors), or a release that reads GGUF, serves it.")
    return (f"{LABEL} the model is a GGUF file ({model}) and the settings leave the load format at auto: SGLang reads "
            f"GGUF only in releases whose --load-format lists gguf (the indexed releases from {having[0]}, per the "
            "static catalogs); pip show sglang says which release runs, and such a release's --help lists the gguf "
            "load format.")


def _moe_quantization_lead(launch: LaunchInfo, lines: Sequence[str], model: str | None) -> str | None:
    """A quantization method the launch sets (not only the checkpoint's name) on a checkpoint named as a MoE."""
    method = launch_quantization(launch, lines)
    moe = mixture_of_experts_name(model)
    if not method or method.startswith("the checkpoint's name") or not moe:
        return None
    release = f"{ENGINE_NAMES.get(launch.engine or '', 'the engine')} {launch.named_version}" if launch.named_version \
        else "the installed release"
    return (f"{LABEL} the launch sets a quantization ({method}) on a mixture-of-experts checkpoint ({moe} in its name "
            f"{model}). A method's support for expert layers comes apart from, and often later than, its support for "
            f"dense layers: whether {release} runs this method on this model's experts is what its quantization docs "
            "and release notes say; the same model unquantized, or in a method the release lists for MoE models, "
            "tells it apart.")
