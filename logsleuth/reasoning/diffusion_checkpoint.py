"""A diffusion model's checkpoint given to SGLang's language-model server (sgl-project/sglang#19104).

`python -m sglang.launch_server --model-path black-forest-labs/FLUX.2-klein-4B` builds the LLM server's arguments for a
diffusers pipeline repository (model_index.json and a folder per component, no language model's config.json), and
start-up fails while the server arguments or the model config are read.  The LLM server does not serve such a model:
SGLang serves diffusion models through its own runtime, `sglang.multimodal_gen`, which `sglang serve` picks when the
model is a diffusion pipeline (sglang/cli/serve.py: a `diffusion` backend detected by sglang/cli/utils.py
get_is_diffusion_model, a model_index.json with `_diffusers_version`; early releases read the model path's words,
"flux", "wan", "hunyuan").  Which releases have that entry point is read from the module index
(facts/engine_modules.json.gz: `sglang.cli.serve` and `sglang.multimodal_gen`), never assumed.

The checkpoint is told apart only by positive evidence: the model path's last part naming a diffusion family SGLang's
diffusion runtime has a pipeline config for (sglang/multimodal_gen/configs/pipeline_configs: flux, wan, hunyuan, qwen_image,
zimage, stablediffusion3, ltx_2; 0.5.6 and later).
"""

from __future__ import annotations

from logsleuth.facts.engine_modules import module_presence
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.model_files import model_path
from logsleuth.versions import version_key

RULE_ID = "rule-diffusion-checkpoint-to-llm-server"
ENTRY_MODULE = "sglang.cli.serve"
RUNTIME_MODULE = "sglang.multimodal_gen"
# The last part of a model path naming a family of sglang/multimodal_gen/configs/pipeline_configs (flux.py, wan.py,
# hunyuan.py, qwen_image.py, zimage.py, stablediffusion3.py, ltx_2.py), spelt as their hub repositories are.
_DIFFUSION_FAMILY = compile_lazily(
    r"(?i)^(?:flux(?:\.\d+)?(?:[-_.]|$)|wan2(?:\.\d+)?[-_]|hunyuanvideo|hunyuan-?image|qwen-image|z-image|"
    r"stable-diffusion|sdxl|sd3(?:\.5)?[-_]|ltx-?(?:video|2))"
)
# The LLM server's start-up: its launcher, its server arguments, its model config (not the diffusion runtime's).
_LLM_START = compile_lazily(
    r"sglang/(?:launch_server\.py|srt/server_args\.py|srt/configs/model_config\.py|srt/utils/hf_transformers_utils\.py"
    r"|srt/hf_transformers_utils\.py)$"
)
SOURCES = (
    "sglang/cli/serve.py (sglang serve): the 'diffusion' backend, detected from the model (sglang/cli/utils.py "
    "get_is_diffusion_model: a diffusers model_index.json with _diffusers_version), runs sglang.multimodal_gen; "
    "other models run the LLM server (sglang.launch_server's prepare_server_args)",
    "facts/engine_modules.json.gz: the releases with sglang.cli.serve and sglang.multimodal_gen; "
    "sglang/multimodal_gen/configs/pipeline_configs/{flux,wan,hunyuan,qwen_image,zimage,stablediffusion3,ltx_2}.py",
    "sgl-project/sglang#19104 (FLUX.2-klein-4B given to python -m sglang.launch_server: dies in ServerArgs.__post_init__)",
)


def diffusion_checkpoint(evidence: Evidence) -> Diagnosis | None:
    launch = evidence.launch
    failure = evidence.failure
    if launch.engine not in ("sglang", None):
        return None
    files = [frame.file for block in failure.exceptions for frame in block.frames]
    if not any(_LLM_START.search(file) for file in files) or any("multimodal_gen/" in file for file in files):
        return None
    given = model_path(launch)
    name = given.rstrip("/").rsplit("/", 1)[-1] if given else ""
    if not name or _DIFFUSION_FAMILY.search(name) is None:
        return None
    why = f"the model path's name ({name}) is a diffusion model family's"
    return Diagnosis(
        pattern=RULE_ID,
        title="A diffusion model's checkpoint was given to SGLang's language-model server",
        category="model-path",
        root_cause=(f"The model is a diffusion (image or video generation) pipeline, not a language model: {why}. "
                    "SGLang's LLM server (python -m sglang.launch_server) reads a language model's config and "
                    "arguments, and its start-up failed on this checkpoint. Diffusion models are served by SGLang's "
                    "diffusion runtime, through another entry point."),
        fix=_entry_point_fix(launch.engine_version),
        references=SOURCES, engine="sglang", engine_version=launch.engine_version, basis="rule",
        evidence=(f"{why}; the failure is in the LLM server's start-up ({_first_llm_frame(files)})",),
    )


def _entry_point_fix(version: str | None) -> Fix:
    """`sglang serve` for releases whose module index has it and the diffusion runtime; else the release that does."""
    entry, runtime = module_presence("sglang", ENTRY_MODULE), module_presence("sglang", RUNTIME_MODULE)
    if entry is None or runtime is None or entry.in_none or runtime.in_none:
        return Fix(summary="Serve it with an engine release that serves diffusion models; this index knows of none.")
    spans = runtime.spans()
    steps = ("a language model's checkpoint has a config.json with its architectures; a diffusers pipeline has "
             "model_index.json and a folder per component (transformer, vae, text_encoder, scheduler)",
             "the diffusion server takes its own options (`sglang serve --help` with the model lists them); the "
             "LLM server's flags are not all among them")
    if version is not None and version_key(version) is not None and entry.has(version) is False:
        return Fix(summary=(f"SGLang {version} has no diffusion entry point: sglang serve and its diffusion runtime "
                            f"are in SGLang {spans} of the indexed releases. Upgrade to one of those, then serve the "
                            "model with sglang serve --model-path <the model>."), steps=steps)
    return Fix(summary=("Serve it with SGLang's diffusion entry point: sglang serve --model-path <the model> picks "
                        f"the diffusion runtime for a diffusion pipeline (in SGLang {spans} of the indexed releases), "
                        "not python -m sglang.launch_server."),
               steps=steps,
               needs_input=() if version else ("the SGLang version: releases before the first listed have no "
                                               "diffusion entry point",))


def _first_llm_frame(files: list[str]) -> str:
    return next((file.rsplit("sglang/", 1)[-1] for file in files if _LLM_START.search(file)), "")
