"""A multimodal model's encoder whose attention failed: its backend is not the language model's.

Both engines choose the vision encoder's attention apart from the LLM's: SGLang with --mm-attention-backend
(0.4.6.post3 and later; sglang/srt/layers/attention/vision.py reads it), vLLM with --mm-encoder-attn-backend (0.11.1
and later; vllm/attention/layers/mm_encoder_attention.py, earlier the model's own `flash_attn_varlen_func` call).
--attention-backend changes nothing the encoder runs, so advice to change it for a failure the frames place in the
encoder (a ViT block, `VisionAttention`, `get_image_feature`, `self.visual(`) is harmful: the user switches the
language model's kernels and the encoder fails again.  Every diagnosis passes through `for_encoder`: a flag
operation on --attention-backend becomes the release's encoder flag (its choice from the release's catalog, or the
engine's value spelled as the release parses it where the catalog lists none), or, where the release has none, what
the release's code shows choosing the encoder's backend (vLLM before 0.11.1: VLLM_ATTENTION_BACKEND) or a step that
says what is unknown (needs_input), never the LLM's flag.  A fault the GPU reports asynchronously is left alone: the
frame it surfaced in is not where it happened.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from logsleuth.command_line import flag_value
from logsleuth.fixes import catalog as catalogs
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Failure, Fix, FlagOp, LaunchInfo
from logsleuth.versions import version_key

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


# The encoder's backend to set where the release's catalog lists no choices (vLLM's enum: `_compute_kwargs` gives it
# `type=str` and no choices, so --help lists none), spelled as the release parses it
# (MultiModalConfig._validate_mm_encoder_attn_backend: `AttentionBackendEnum[value.upper()]`, so `sdpa` is a KeyError).
# vLLM's TORCH_SDPA: platforms/cuda.py get_vit_attn_backend's Blackwell default in 0.11.2, and in
# get_supported_vit_attn_backends from 0.13.0 to 0.34.0 (every indexed release with the flag).
_UNLISTED_CHOICE = {"vllm": "TORCH_SDPA"}


def encoder_choice(engine: str, version: str | None) -> tuple[str | None, str | None]:
    """(flag, choice) to set the encoder's attention to a backend that runs on any CUDA GPU (SGLang's triton_attn,
    compiled at run time, else sdpa, from the release's catalog; vLLM's TORCH_SDPA, _UNLISTED_CHOICE); (flag, None)
    when the release has the flag but no such choice is known; (None, None) when the release lacks it."""
    flag = ENCODER_FLAGS.get(engine)
    catalog = catalogs.load(engine, version) if flag else None
    info = catalog.find(flag) if catalog is not None and flag else None
    if flag is None or (catalog is not None and info is None):
        return None, None
    choices = info.choices if info is not None else ()
    if not choices:
        return flag, _UNLISTED_CHOICE.get(engine)
    return flag, next((choice for choice in ("triton_attn", "sdpa") if choice in choices), None)


# vLLM's vision encoder follows VLLM_ATTENTION_BACKEND, the LLM's variable, before --mm-encoder-attn-backend:
# model_executor/models/vision.py get_vit_attn_backend reads it (envs.VLLM_ATTENTION_BACKEND in 0.7.3 to 0.9.2,
# get_env_variable_attn_backend in 0.10.1.1 and 0.11.0) before the platform's own choice for the GPU.  Releases
# indexed before 0.7.3 have no such function: there it is not known, and not said.
_VIT_FOLLOWS_ENV = ("0.7.3", "0.11.0")
# vLLM 0.11.1 and 0.11.2: attention/layer.py maybe_get_vit_flash_attn_backend, on CUDA, switches the encoder to the
# flash-attn package's FlashAttention whenever that package is usable (sm_80 and newer), whatever the flag says (the
# ROCm branch checks attn_backend_override, the CUDA branch does not); 0.13.0 reworked it.
_FLAG_OVERRIDDEN_BY_PACKAGE = ("0.11.1", "0.11.2")


def _within(version: str | None, span: tuple[str, str]) -> bool:
    key, low, high = (version_key(version) if version else None), version_key(span[0]), version_key(span[1])
    return key is not None and low is not None and high is not None and low <= key <= high


def encoder_fix(engine: str | None, version: str | None, summary: str, llm_backend: str | None = None,
                message: str = "") -> dict[str, Any]:
    """Fix data for a failure in the encoder's attention: the release's encoder flag, else what is unknown.
    `llm_backend`: the launch's own --attention-backend; when the failing message refuses that backend on this GPU,
    the language model's start fails on it too, so its replacement is asked (review harm17: `fa3` on Blackwell)."""
    lead = summary + " The failing attention is the vision encoder's, which has a setting of its own, apart from the language model's."
    data = _encoder_setting(engine, version, lead)
    if llm_backend and re.search(rf"(?<![\w-]){re.escape(llm_backend)}(?![\w-])", message):
        data["steps"] = [*data.get("steps", ()),
                         f"the launch also gives the language model --attention-backend {llm_backend}, the backend the "
                         "message refuses on this GPU: its start fails on it too, so choose another for it as well"]
        data["needs_input"] = [*data.get("needs_input", ()),
                               "a --attention-backend for the language model that runs on this GPU"]
    return data


def _encoder_setting(engine: str | None, version: str | None, lead: str) -> dict[str, Any]:
    if engine not in ENCODER_FLAGS:
        return {"summary": lead + " Each engine has its own setting for the encoder's attention (SGLang "
                "--mm-attention-backend, vLLM --mm-encoder-attn-backend in the releases that have them).",
                "steps": []}
    flag, choice = encoder_choice(engine, version)
    if flag is None:
        return {"summary": lead + f" {ENGINE_NAMES[engine]} {version} has no setting of its own for it.",
                **_without_flag(engine, version)}
    steps = []
    if engine == "vllm" and _within(version, _FLAG_OVERRIDDEN_BY_PACKAGE):
        steps.append(f"vLLM {version} ignores {flag} on Ampere and newer GPUs when the flash-attn package is installed "
                     "(attention/layer.py maybe_get_vit_flash_attn_backend): uninstall flash-attn, or use vLLM 0.13.0 "
                     "or later")
    if choice is None:
        return {"summary": lead + f" {flag} sets it.",
                "flags": [{"op": "set", "flag": flag, "value": None}], "steps": steps,
                "needs_input": [f"{flag}'s value: a backend the vision encoder supports on this GPU"]}
    return {"summary": lead + f" {flag} sets it.",
            "flags": [{"op": "set", "flag": flag, "value": choice}], "steps": steps}


def _without_flag(engine: str, version: str | None) -> dict[str, Any]:
    """A release before the encoder's flag: vLLM's encoder follows VLLM_ATTENTION_BACKEND there (where the code shows
    it); otherwise only the release with the flag is known."""
    # the release that added the flag is said by with_release_flags (fixes/release_flags.py), once
    later = f"or a release with {ENCODER_FLAGS[engine]}, which chooses the encoder's attention apart from the language model's"
    if engine == "vllm" and _within(version, _VIT_FOLLOWS_ENV):
        return {"steps": [f"vLLM {version}'s vision encoder takes its attention backend from VLLM_ATTENTION_BACKEND, the "
                          "language model's variable (model_executor/models/vision.py get_vit_attn_backend), before its "
                          "own choice for the GPU: if it is set (to FLASH_ATTN on a GPU older than Ampere), unset it",
                          later]}
    return {"steps": [later],
            "needs_input": [f"how {ENGINE_NAMES[engine]} {version or ''} chooses the encoder's attention, or whether to "
                            f"move to a release with {ENCODER_FLAGS[engine]}"]}


# A fault the GPU reports asynchronously (torch c10/cuda/CUDAException.cpp: "CUDA kernel errors might be asynchronously
# reported at some other API call"): an illegal memory access, a misaligned address, an unspecified launch failure, a
# device-side assert.  The frame it surfaced in is not the kernel that faulted (patterns/sglang/illegal-memory-access
# says so), so an encoder frame there does not place the failure in the encoder's attention.
_ASYNCHRONOUS_FAULT = compile_lazily(
    r"illegal memory access|CUDA_ERROR_ILLEGAL_ADDRESS|misaligned address|unspecified launch failure|"
    r"device-side assert|illegal instruction|asynchronously reported")


def for_encoder(diagnosis: Diagnosis | None, failure: Failure, launch: LaunchInfo) -> Diagnosis | None:
    """`diagnosis` with every flag operation on --attention-backend moved to the encoder's flag, when the failure
    runs in a multimodal encoder (and is not a fault the GPU reports asynchronously); unchanged otherwise."""
    if diagnosis is None or diagnosis.fix is None or not _touches_llm_flag(diagnosis.fix) or not in_encoder(failure):
        return diagnosis
    message = "\n".join(block.message for block in failure.exceptions)
    if _ASYNCHRONOUS_FAULT.search(message):
        return diagnosis
    engine = diagnosis.engine or launch.engine
    return replace(diagnosis, fix=_moved(diagnosis.fix, engine, launch.named_version, llm_backend(launch), message))


def llm_backend(launch: LaunchInfo) -> str | None:
    """The launch's own --attention-backend (the language model's), when its command or settings dump gives one."""
    try:
        return flag_value(launch, LLM_FLAG) or None
    except ValueError:  # a command line that does not parse
        return None


def _touches_own_llm_flag(fix: Fix) -> bool:
    return any(op.flag == LLM_FLAG for op in fix.flags)


def _touches_llm_flag(fix: Fix) -> bool:
    return _touches_own_llm_flag(fix) or any(_touches_llm_flag(alt) for alt in fix.alternatives)


def _moved(fix: Fix, engine: str | None, version: str | None, llm_backend: str | None, message: str) -> Fix:
    """The fix with its --attention-backend operations moved.  An alternative that gets no encoder flag in their place
    is dropped: what is left of it (a sampling backend beside the attention's) does nothing for the encoder."""
    alternatives = tuple(_moved(alternative, engine, version, llm_backend, message) for alternative in fix.alternatives
                         if not _touches_own_llm_flag(alternative) or encoder_choice(engine or "", version)[0])
    if not _touches_own_llm_flag(fix):
        return replace(fix, alternatives=alternatives)
    data = encoder_fix(engine, version, fix.summary, llm_backend, message)
    kept = [op for op in fix.flags if op.flag != LLM_FLAG]
    added = [FlagOp(op["op"], op["flag"], op.get("value")) for op in data.get("flags", ())]
    return replace(
        fix,
        summary=str(data["summary"]),
        flags=(*kept, *added),
        steps=(*fix.steps, *data.get("steps", ())),
        needs_input=(*fix.needs_input, *data.get("needs_input", ())),
        command=None,  # built on the LLM's flag: no command rather than a wrong one
        alternatives=alternatives,
    )
