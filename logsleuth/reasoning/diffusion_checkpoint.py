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
diffusion runtime has a pipeline config for (sglang/multimodal_gen/configs/pipeline_configs/<family>.py, 0.5.6 and later;
configs/pipelines/<family>.py in 0.5.5), each family with the releases whose module index has its config.  Stable
Diffusion 1.x/2.x/XL have no config of their own (at most the generic diffusers one, 0.5.8 and later): not read.
A launch through `sglang serve` itself is left alone: its diffusion detection (a reachable model_index.json) sent the
model to the LLM server, and naming `sglang serve` as the cure would name the user's own command.
"""

from __future__ import annotations

from logsleuth.facts.engine_modules import module_presence, spans_of
from logsleuth.facts.requires import is_known, releases_with_extra
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.model_files import model_path
from logsleuth.versions import version_key

RULE_ID = "rule-diffusion-checkpoint-to-llm-server"
ENTRY_MODULE = "sglang.cli.serve"
DIFFUSION_EXTRA = "diffusion"
# The last part of a model path naming a family of SGLang's diffusion pipeline configs, spelt as their hub repositories
# are, with the config module's name (sglang/multimodal_gen/configs/pipeline_configs/<module>.py).
_FAMILIES = (
    (compile_lazily(r"(?i)^flux(?:\.\d+)?(?:[-_.]|$)"), "flux"),
    (compile_lazily(r"(?i)^wan2(?:\.\d+)?[-_]"), "wan"),
    (compile_lazily(r"(?i)^hunyuanvideo"), "hunyuan"),
    (compile_lazily(r"(?i)^qwen-image"), "qwen_image"),
    (compile_lazily(r"(?i)^z-image"), "zimage"),
    (compile_lazily(r"(?i)^(?:sd3(?:\.5)?[-_]|stable-diffusion-3)"), "stablediffusion3"),
    (compile_lazily(r"(?i)^ltx-?2"), "ltx_2"),
)
CONFIG_PACKAGES = ("sglang.multimodal_gen.configs.pipelines", "sglang.multimodal_gen.configs.pipeline_configs")
# The LLM server's start-up: its launcher, its server arguments, its model config (not the diffusion runtime's).
_LLM_START = compile_lazily(
    r"sglang/(?:launch_server\.py|srt/server_args\.py|srt/configs/model_config\.py|srt/utils/hf_transformers_utils\.py"
    r"|srt/hf_transformers_utils\.py)$"
)
# `sglang serve` (sglang/cli/main.py -> sglang/cli/serve.py): the diffusion entry point itself ran.
_SERVE_FRAME = compile_lazily(r"sglang/cli/(?:serve|main)\.py$")
_SERVE_COMMAND = compile_lazily(r"(?:^|[\s/])sglang\s+serve\b")
SOURCES = (
    "sglang/cli/serve.py (sglang serve): the 'diffusion' backend, detected from the model (sglang/cli/utils.py "
    "get_is_diffusion_model: a diffusers model_index.json with _diffusers_version), runs sglang.multimodal_gen; "
    "other models run the LLM server (sglang.launch_server's prepare_server_args)",
    "facts/engine_modules.json.gz: the releases with sglang.cli.serve and each family's pipeline config, "
    "sglang/multimodal_gen/configs/pipeline_configs/{flux,wan,hunyuan,qwen_image,zimage,stablediffusion3,ltx_2}.py "
    "(configs/pipelines/ in 0.5.5)",
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
    if any(_SERVE_FRAME.search(file) for file in files) or _SERVE_COMMAND.search(launch.command or ""):
        return None
    given = model_path(launch)
    name = given.rstrip("/").rsplit("/", 1)[-1] if given else ""
    family = next((module for pattern, module in _FAMILIES if pattern.search(name)), None) if name else None
    if family is None:
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
        fix=_entry_point_fix(launch.engine_version, family),
        references=SOURCES, engine="sglang", engine_version=launch.engine_version, basis="rule",
        evidence=(f"{why}; the failure is in the LLM server's start-up ({_first_llm_frame(files)})",),
    )


def _family_releases(family: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The indexed SGLang releases with the family's pipeline config (under either package name), and every one."""
    having: set[str] = set()
    indexed: tuple[str, ...] = ()
    for package in CONFIG_PACKAGES:
        found = module_presence("sglang", f"{package}.{family}")
        if found is not None:
            having.update(found.having)
            indexed = found.indexed
    return tuple(release for release in indexed if release in having), indexed


def _entry_point_fix(version: str | None, family: str) -> Fix:
    """`sglang serve` for the releases whose module index has it and the family's pipeline config; else those that do."""
    entry = module_presence("sglang", ENTRY_MODULE)
    having, indexed = _family_releases(family)
    if entry is None or entry.in_none or not having:
        return Fix(summary="Serve it with an engine release that serves diffusion models; this index knows of none.")
    releases = tuple(release for release in having if entry.has(release))
    spans = spans_of(releases, indexed)
    steps = ("a language model's checkpoint has a config.json with its architectures; a diffusers pipeline has "
             "model_index.json and a folder per component (transformer, vae, text_encoder, scheduler)",
             "the diffusion server takes its own options (`sglang serve --help` with the model lists them); the "
             "LLM server's flags are not all among them",
             *_extra_step(version))
    if version is not None and version_key(version) is not None and version in indexed and version not in releases:
        return Fix(summary=(f"SGLang {version} has no diffusion entry point for this model family: sglang serve with "
                            f"its pipeline config ({family}) is in SGLang {spans} of the indexed releases. Upgrade to "
                            "one of those, then serve the model with sglang serve --model-path <the model>."), steps=steps)
    return Fix(summary=("Serve it with SGLang's diffusion entry point: sglang serve --model-path <the model> picks "
                        f"the diffusion runtime for a diffusion pipeline (this family's pipeline config, {family}, is "
                        f"in SGLang {spans} of the indexed releases), not python -m sglang.launch_server."),
               steps=steps,
               needs_input=() if version else ("the SGLang version: releases before the first listed have no "
                                               "diffusion entry point for this family",))


def _extra_step(version: str | None) -> tuple[str, ...]:
    """The diffusion runtime's packages come with an extra (sglang/cli/serve.py's help: pip install "sglang[diffusion]"),
    named for the releases whose wheel metadata declares it."""
    having = releases_with_extra("sglang", DIFFUSION_EXTRA)
    if not having or (version is not None and is_known("sglang", version) and version not in having):
        return ()
    return (f'the diffusion runtime\'s own packages come with the extra: pip install "sglang[{DIFFUSION_EXTRA}]==<the '
            f'release>" (declared by SGLang {having[0]} and later releases\' metadata)',)


def _first_llm_frame(files: list[str]) -> str:
    return next((file.rsplit("sglang/", 1)[-1] for file in files if _LLM_START.search(file)), "")
