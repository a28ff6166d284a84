"""A multimodal model's encoder whose attention failed: its backend is not the language model's.

Both engines choose the vision encoder's attention apart from the LLM's: SGLang with --mm-attention-backend
(0.4.6.post3 and later; sglang/srt/layers/attention/vision.py reads it), vLLM with --mm-encoder-attn-backend (0.11.1
and later; vllm/attention/layers/mm_encoder_attention.py, earlier the model's own `flash_attn_varlen_func` call).
--attention-backend changes nothing the encoder runs, so advice to change it for a failure the frames place in the
encoder (a ViT block, `VisionAttention`, `get_image_feature`, `self.visual(`) is harmful: the user switches the
language model's kernels and the encoder fails again.  Every diagnosis passes through `for_encoder`: a flag
operation on --attention-backend becomes the release's encoder flag (its choice from the release's catalog), or,
where the release has none or its choices are not known, a step that says so (needs_input), never the LLM's flag.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Failure, Fix, FlagOp, LaunchInfo

LLM_FLAG = "--attention-backend"
ENCODER_FLAGS = {"sglang": "--mm-attention-backend", "vllm": "--mm-encoder-attn-backend"}

# A frame of the encoder: its attention module (SGLang layers/attention/vision.py, vLLM's MMEncoderAttention), a
# vision model's own file (siglip.py, clip.py, intern_vit.py, idefics2_vision_model.py, a *_vit.py), or a frame whose
# function or line hands the images to the encoder.
_ENCODER_FILE = compile_lazily(
    r"(?:^|/)(?:attention/vision\.py|mm_encoder_attention\.py|\w*vision(?:_model|_encoder|_tower)?\w*\.py|siglip\w*\.py|"
    r"clip\.py|intern_?vit\w*\.py|\w+_vit\.py)$")
_ENCODER_FUNCTION = compile_lazily(
    r"^(?:get_image_features?|get_video_features?|get_multimodal_embeddings?|embed_multimodal|_process_image_input|"
    r"_process_video_input|encode_images?|_image_pixels_to_features|\w*vision\w*|\w*visual\w*|\w*_vit_\w*)$")
_ENCODER_SOURCE = compile_lazily(r"\bself\.(?:visual|vision_tower|vision_model|vision_encoder|vit|mm_encoder)\b\s*\(|"
                                 r"\bVisionAttention\b|\bmm_encoder\w*")
_ENCODER_MESSAGE = compile_lazily(r"\bVision\w*Attention\b|\bmm_encoder\w*|\bvision_tower\b|\bvisual\.blocks\b")
# The language model's attention backends: a frame there, deeper than any encoder frame, is the LLM's attention.
_LLM_BACKEND_FILE = compile_lazily(r"vllm/(?:v1/)?attention/backends/|sglang/srt/layers/attention/(?!vision\.py)\w+\.py")


def in_encoder(failure: Failure) -> bool:
    """The failing call runs in a multimodal model's encoder: an encoder frame with no LLM attention backend's frame
    below it, or, with no frames, a message naming the encoder's attention."""
    frames = [frame for block in failure.exceptions for frame in block.frames]
    deepest = None
    for index, frame in enumerate(frames):
        file = frame.file.replace("\\", "/")
        if (_ENCODER_FILE.search(file) or _ENCODER_FUNCTION.match(frame.function or "")
                or _ENCODER_SOURCE.search(frame.source or "")):
            deepest = index
    if deepest is not None:
        return not any(_LLM_BACKEND_FILE.search(frame.file.replace("\\", "/")) for frame in frames[deepest + 1:])
    return not frames and bool(_ENCODER_MESSAGE.search(failure.final.message))


def encoder_choice(engine: str, version: str | None) -> tuple[str | None, str | None]:
    """(flag, choice) to set the encoder's attention to a backend compiled for the GPU at run time (SGLang's
    triton_attn, else sdpa), from the release's catalog; (flag, None) when the release has the flag but its choices
    are not listed (vLLM's enum); (None, None) when the release lacks it."""
    flag = ENCODER_FLAGS.get(engine)
    catalog = catalogs.load(engine, version) if flag else None
    info = catalog.find(flag) if catalog is not None and flag else None
    if flag is None or (catalog is not None and info is None):
        return None, None
    choices = info.choices if info is not None else ()
    return flag, next((choice for choice in ("triton_attn", "sdpa") if choice in choices), None)


def releases_with_encoder_flag(engine: str) -> str:
    """"SGLang 0.4.6.post3 and later" for the engine's encoder flag, from the static catalogs."""
    flag = ENCODER_FLAGS.get(engine)
    having = static_catalogs.releases_with(engine, flag) if flag else ()
    if not having:
        return ""
    every = static_catalogs.releases(engine)
    last = "" if having[-1] == every[-1] else f" to {having[-1]}"
    return f"{ENGINE_NAMES[engine]} {having[0]}{last or ' and later'}"


def encoder_fix(engine: str | None, version: str | None, summary: str) -> dict[str, Any]:
    """Fix data for a failure in the encoder's attention: the release's encoder flag, else what is unknown."""
    lead = summary + " The failing attention is the vision encoder's, which has a setting of its own, apart from the language model's."
    if engine not in ENCODER_FLAGS:
        return {"summary": lead + " Each engine has its own setting for the encoder's attention (SGLang "
                "--mm-attention-backend, vLLM --mm-encoder-attn-backend in the releases that have them).",
                "steps": []}
    flag, choice = encoder_choice(engine, version)
    span = releases_with_encoder_flag(engine)
    if flag is None:
        return {"summary": lead + f" {ENGINE_NAMES[engine]} {version} has no setting of its own for it.",
                "steps": [f"a release with {ENCODER_FLAGS[engine]} ({span}) chooses the encoder's attention apart from "
                          "the language model's; on this release the model's encoder picks its own kernel"],
                "needs_input": [f"whether to move to a release with {ENCODER_FLAGS[engine]}"]}
    if choice is None:
        return {"summary": lead + f" {flag} sets it.",
                "flags": [{"op": "set", "flag": flag, "value": None}],
                "steps": [f"its choices are listed by the release's --help ({flag}): pick one that runs on this GPU "
                          "(PyTorch's own SDPA runs on any CUDA GPU)"],
                "needs_input": [f"{flag}'s value: a backend the vision encoder supports on this GPU"]}
    return {"summary": lead + f" {flag} sets it.",
            "flags": [{"op": "set", "flag": flag, "value": choice}], "steps": []}


def for_encoder(diagnosis: Diagnosis | None, failure: Failure, launch: LaunchInfo) -> Diagnosis | None:
    """`diagnosis` with every flag operation on --attention-backend moved to the encoder's flag, when the failure
    runs in a multimodal encoder; unchanged otherwise."""
    if diagnosis is None or diagnosis.fix is None or not _touches_llm_flag(diagnosis.fix) or not in_encoder(failure):
        return diagnosis
    engine = diagnosis.engine or launch.engine
    return replace(diagnosis, fix=_moved(diagnosis.fix, engine, launch.named_version))


def _touches_llm_flag(fix: Fix) -> bool:
    return any(op.flag == LLM_FLAG for op in fix.flags) or any(_touches_llm_flag(alt) for alt in fix.alternatives)


def _moved(fix: Fix, engine: str | None, version: str | None) -> Fix:
    alternatives = tuple(_moved(alternative, engine, version) for alternative in fix.alternatives)
    if not any(op.flag == LLM_FLAG for op in fix.flags):
        return replace(fix, alternatives=alternatives)
    data = encoder_fix(engine, version, fix.summary)
    ops = [op for op in fix.flags if op.flag != LLM_FLAG]
    ops += [FlagOp(op["op"], op["flag"], op.get("value")) for op in data.get("flags", ())]
    return replace(
        fix,
        summary=str(data["summary"]),
        flags=tuple(ops),
        steps=(*fix.steps, *data.get("steps", ())),
        needs_input=(*fix.needs_input, *data.get("needs_input", ())),
        command=None,  # built on the LLM's flag: no command rather than a wrong one
        alternatives=alternatives,
    )
