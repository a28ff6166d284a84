"""A GGUF file whose architecture the GGUF reader does not know (issue 28, stop 40: filed as a model the engine
release lacks, with advice about the release).

Neither engine reads a GGUF file's header itself.  Both build the model's config (and vLLM its weight names) through
transformers' GGUF support, which maps each GGUF architecture it knows to a transformers config: an architecture
missing from that map is refused there, in the installed transformers, before the engine's model registry is asked.
vLLM's own GGUF weight loader maps the model type through the `gguf` package's architecture table instead.  The fix is
on that loader's side (a transformers, or gguf, release that reads the architecture, within what the engine release
accepts), or the model's original checkpoint instead of the GGUF file; never a guessed flag."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.catalog_flags import release_flag
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-gguf-architecture-unknown"
CATEGORY = "unsupported-architecture"
# transformers 4.45-4.57 modeling_gguf_pytorch_utils.load_gguf_checkpoint; 5.x integrations/gguf/utils.py and
# gguf_config_mapping.py (facts/raise_sites-transformers.zip), the name quoted with !r there.
_TRANSFORMERS = compile_lazily(
    r"\bGGUF (?:model with )?architecture '?(?P<arch>[\w.-]+?)'? is not supported yet"
    r"|\bCannot rebuild a config from a GGUF file of architecture '?(?P<arch2>[\w.-]+?)'?\. "
)
# transformers 4.41-4.44 said only "Architecture {architecture} not supported": read only under a GGUF frame.
_TRANSFORMERS_OLD = compile_lazily(r"^ValueError: Architecture (?P<arch>[\w.-]+) not supported\s*$")
_GGUF_FRAME = ("modeling_gguf_pytorch_utils", "integrations/gguf/", "integrations/ggml")
# vLLM's GGUF weight loader: the model type has no entry in the gguf package's MODEL_ARCH_NAMES
# (vllm/model_executor/model_loader/gguf_loader.py "Unknown gguf model_type: {}", facts/raise_sites-vllm.zip).
_GGUF_PACKAGE = compile_lazily(r"\bUnknown gguf model_type: (?P<arch>[\w.-]+)")
SOURCES = (
    "transformers 4.45-4.57 transformers/modeling_gguf_pytorch_utils.py load_gguf_checkpoint: "
    "'GGUF model with architecture {architecture} is not supported yet.' (4.41-4.44: 'Architecture {architecture} not "
    "supported'); 5.x transformers/integrations/gguf/utils.py and gguf_config_mapping.py: 'GGUF architecture {!r} is not "
    "supported yet. Supported: [...]', 'Cannot rebuild a config from a GGUF file of architecture {!r}.'",
    "vllm vllm/model_executor/model_loader/gguf_loader.py: 'Unknown gguf model_type: {}' (the gguf package's "
    "MODEL_ARCH_NAMES)",
    "huggingface/transformers#43366 (vLLM, gpt-oss: resolved by a transformers release that reads it), "
    "huggingface/transformers#37002 and sgl-project/sglang#4894 (SGLang, gemma3)",
)


def gguf_loader(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_TRANSFORMERS)
    loader = "transformers"
    if found is None and _under_a_gguf_frame(evidence):
        found = evidence.first_match(_TRANSFORMERS_OLD)
    if found is None:
        found, loader = evidence.first_match(_GGUF_PACKAGE), "gguf"
    if found is None:
        return None
    architecture = found["arch"] or found.groupdict().get("arch2") or "?"
    launch = evidence.launch
    engine = launch.engine
    name = ENGINE_NAMES.get(engine or "", "the engine")
    release = f"{name} {launch.engine_version}" if engine and launch.engine_version else f"your {name} release"
    if loader == "transformers":
        what = "transformers' GGUF support"
        how = ("builds the model's config from a GGUF file through transformers' GGUF support, which maps each GGUF "
               "architecture it knows to a transformers config")
        newer = "transformers"
    else:
        what = "the gguf package's architecture table"
        how = "maps the model type to GGUF tensor names through the gguf package's architecture table (MODEL_ARCH_NAMES)"
        newer = "gguf"
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{what} does not read GGUF architecture {architecture}",
        category=CATEGORY,
        root_cause=(f"{name} {how}; the installed {newer} has no entry for '{architecture}'. The file was refused by "
                    f"that loader, not by {name}'s list of supported models: a newer {name} release alone does not "
                    f"help unless it brings a {newer} that reads '{architecture}'."),
        fix=Fix(
            summary=(f"Use a {newer} release that reads GGUF architecture '{architecture}', if {release} accepts it, "
                     "or serve the model's original checkpoint instead of the GGUF file."),
            steps=(
                f"check which {newer} release reads '{architecture}' (its release notes; transformers' GGUF "
                "documentation lists the architectures it reads) and whether your engine release's requirements "
                f"allow it{f' (pip show {engine} lists them)' if engine else ''}",
                "or serve the original Hugging Face checkpoint of the model (safetensors, or a quantization the engine "
                "loads natively such as AWQ, GPTQ or FP8) instead of the GGUF file",
                *_config_elsewhere(evidence, loader),
            ),
            needs_input=(f"a {newer} release that reads GGUF architecture '{architecture}' and that {release} accepts",),
        ),
        references=SOURCES,
        engine=engine,
        engine_version=launch.engine_version,
        basis="rule",
        evidence=(f"the GGUF architecture the loader refused: {architecture}", f"refused by {what}"),
    )


def _config_elsewhere(evidence: Evidence, loader: str) -> tuple[str, ...]:
    """vLLM reads the config from another place when told (its own message for a remote GGUF file names
    --hf-config-path, facts/raise_sites-vllm.zip): then transformers does not rebuild it from the GGUF header.  Only
    where the release has the flag, and only for the config's refusal: the weights still go through the GGUF loader."""
    flag = release_flag(evidence.launch, "--hf-config-path") if evidence.launch.engine == "vllm" else None
    if flag is None or loader != "transformers":
        return ()
    return (f"or give vLLM the original model's config with {flag} (the unquantized model's repository or directory), "
            "so that the config is not rebuilt from the GGUF file; the GGUF weights must still be ones vLLM's GGUF "
            "loader maps, which it says when it does not",)


def _under_a_gguf_frame(evidence: Evidence) -> bool:
    return any(
        any(part in frame.file for part in _GGUF_FRAME)
        for block in evidence.failure.exceptions
        for frame in block.frames
    )
