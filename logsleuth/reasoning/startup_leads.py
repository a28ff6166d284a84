"""Leads for a log that stops during the start-up with no error (issue 28, stops 56-57: a paste cut in its
settings dump, whose failure is in lines it does not hold), each only where what the log names supports it.

- A quantization method set on a mixture-of-experts checkpoint (its name says so: `A14B`, `8x7B`, `MoE`): a method's
  support for expert layers comes apart from the dense layers' (sgl-project/sglang#1100, GPTQ on Qwen2-57B-A14B;
  #2362, W4A16 on a DeepSeek MoE), labelled general guidance.
The notice shows them as leads (render/view.py startup_notice), never as the failure.  No lead for a .gguf model under
SGLang's default load format: the release that added the gguf choice also switches a .gguf file to it by itself
(server_args.py __post_init__, later _handle_load_format: `check_gguf_file(self.model_path)`): a .gguf path with the
load format left at auto is what those releases expect."""

from __future__ import annotations

from collections.abc import Sequence

from logsleuth.models import ENGINE_NAMES, LaunchInfo
from logsleuth.reasoning.cut_startup import LABEL
from logsleuth.reasoning.launch_quantization import launch_model, launch_quantization, mixture_of_experts_name


def startup_leads(launch: LaunchInfo, lines: Sequence[str] = ()) -> tuple[str, ...]:
    """The leads what the log names supports, for a log that ends during the start-up."""
    model = launch_model(launch, lines)
    lead = _moe_quantization_lead(launch, lines, model)
    return (lead,) if lead else ()


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
