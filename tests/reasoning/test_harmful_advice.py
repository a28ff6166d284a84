"""Advice that harms (issue 28, the blind split of stop 53): flag changes whose trigger is not the failing site.

- a multimodal encoder's attention failing, told to change the language model's --attention-backend: the encoder has
  its own setting (SGLang --mm-attention-backend, 0.4.6.post3 and later, read by sglang/srt/layers/attention/vision.py;
  vLLM --mm-encoder-attn-backend, 0.11.1 and later, vllm/attention/layers/mm_encoder_attention.py after
  vllm-project/vllm PR#30125; before it the ViT's backend came from vllm/model_executor/models/vision.py, PR#17413),
  read from the release's catalog (fixes/encoder_attention.py);
- a KV-cache scale the loader does not place (KeyError on `params_dict[name]` for `.kv_scale`, `.k_scale`) told to
  pass --quantization: the engines place those scales with weight_utils.maybe_remap_kv_scale_name, per model
  (sgl-project/sglang PR#1559 and PR#1835 skipped `.kv_scale` in llama.py and mixtral.py);
- a category picked by a word of a settings dump the message carries, not by what failed.

Tracebacks are real CPython's, from site-packages trees laid out as the engines' own; the messages are the engines'
and the kernels' templates, rebuilt in our own code."""

from __future__ import annotations

from pathlib import Path

from logsleuth.models import Diagnosis, Fix
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

# A ViT block calling a flash-attention kernel that refuses the GPU (the kernel's own check: "FlashAttention only
# supports Ampere GPUs or newer.", flash_attn's csrc/flash_api.cpp).
_KERNEL = '''
def flash_attn_varlen_func(q, k, v, cu_seqlens):
    raise RuntimeError("FlashAttention only supports Ampere GPUs or newer.")
'''
_VLLM_VIT = '''
from vllm.vllm_flash_attn.flash_attn_interface import flash_attn_varlen_func


class Qwen2_5_VisionAttention:
    def forward(self, x, cu_seqlens):
        return flash_attn_varlen_func(x, x, x, cu_seqlens=cu_seqlens)


class Qwen2_5_VisionTransformer:
    def forward(self, x, cu_seqlens):
        return Qwen2_5_VisionAttention().forward(x, cu_seqlens)


class Qwen2_5_VLForConditionalGeneration:
    visual = Qwen2_5_VisionTransformer()

    def _process_image_input(self, pixels):
        return self.visual.forward(pixels, cu_seqlens=[0, 4])
'''
_VLLM_LLM = '''
from vllm.vllm_flash_attn.flash_attn_interface import flash_attn_varlen_func


class FlashAttentionImpl:
    def forward(self, q):
        return flash_attn_varlen_func(q, q, q, cu_seqlens=[0, 4])
'''
# SGLang's ViT: the model's vision block calling layers/attention/vision.py, which calls sgl-kernel's flash attention.
_SGLANG_KERNEL = '''
def flash_attn_varlen_func(q, k, v, cu_seqlens_q):
    raise RuntimeError("CUDA error: no kernel image is available for execution on the device")
'''
_SGLANG_VISION = '''
from sgl_kernel.flash_attn import flash_attn_varlen_func


class VisionFlash3Attention:
    def forward(self, q, cu_seqlens):
        return flash_attn_varlen_func(q, q, q, cu_seqlens_q=cu_seqlens)


class VisionAttention:
    def forward(self, x, cu_seqlens):
        return VisionFlash3Attention().forward(x, cu_seqlens)
'''
_SGLANG_QWEN_VL = '''
from sglang.srt.layers.attention.vision import VisionAttention


class Qwen2_5_VisionBlock:
    def forward(self, x, cu_seqlens):
        return VisionAttention().forward(x, cu_seqlens=cu_seqlens)


class Qwen2_5_VLForConditionalGeneration:
    def get_image_feature(self, pixels):
        return Qwen2_5_VisionBlock().forward(pixels, cu_seqlens=[0, 4])
'''


def _ops(fix: Fix | None) -> list[tuple[str, str, str | None]]:
    """Every flag operation of the fix and its alternatives."""
    if fix is None:
        return []
    return [*((op.op, op.flag, op.value) for op in fix.flags), *(op for alt in fix.alternatives for op in _ops(alt))]


def _vllm_vit(tmp_path: Path) -> str:
    run = traceback_of_installed(
        tmp_path, {"vllm/vllm_flash_attn/flash_attn_interface.py": _KERNEL,
                   "vllm/model_executor/models/qwen2_5_vl.py": _VLLM_VIT},
        "from vllm.model_executor.models.qwen2_5_vl import Qwen2_5_VLForConditionalGeneration\n"
        "Qwen2_5_VLForConditionalGeneration()._process_image_input([1])\n")
    assert "Ampere" in run.stderr
    return run.stderr


def _sglang_vit(tmp_path: Path, kernel: str = _SGLANG_KERNEL, says: str = "no kernel image") -> str:
    run = traceback_of_installed(
        tmp_path, {"sgl_kernel/flash_attn.py": kernel, "sglang/srt/layers/attention/vision.py": _SGLANG_VISION,
                   "sglang/srt/models/qwen2_5_vl.py": _SGLANG_QWEN_VL},
        "from sglang.srt.models.qwen2_5_vl import Qwen2_5_VLForConditionalGeneration\n"
        "Qwen2_5_VLForConditionalGeneration().get_image_feature([1])\n")
    assert says in run.stderr
    return run.stderr


def _flags(diagnosis: Diagnosis) -> set[str]:
    return {flag for _, flag, _ in _ops(diagnosis.fix)}


def test_a_vllm_vision_encoder_is_given_the_encoder_flag_of_its_release(tmp_path: Path) -> None:
    """--mm-encoder-attn-backend's choices are not listed (an enum parsed as `AttentionBackendEnum[value.upper()]`):
    the value is TORCH_SDPA, a ViT backend on CUDA in every release with the flag, never `sdpa` (a KeyError).  vLLM
    0.11.2's CUDA branch of maybe_get_vit_flash_attn_backend ignores the flag when flash-attn is installed: said."""
    log = "$ vllm serve Qwen/Qwen2.5-VL-7B-Instruct\nINFO 05-01 10:00:00 api_server.py:1] vLLM API server version 0.11.2\n"
    diagnosis = first_diagnosis(log + _vllm_vit(tmp_path))
    fix = diagnosis.fix
    assert fix is not None and "--attention-backend" not in _flags(diagnosis)
    assert ("set", "--mm-encoder-attn-backend", "TORCH_SDPA") in _ops(fix)
    assert "--help" not in " ".join(fix.steps) and "uninstall flash-attn" in " ".join(fix.steps)
    later = first_diagnosis(log.replace("0.11.2", "0.13.0") + _vllm_vit(tmp_path)).fix
    assert later is not None and ("set", "--mm-encoder-attn-backend", "TORCH_SDPA") in _ops(later)
    assert "flash-attn" not in " ".join(later.steps)


def test_a_vllm_release_without_the_encoder_flag_is_told_its_encoder_follows_the_variable(tmp_path: Path) -> None:
    """vLLM 0.7.3 to 0.11.0: model_executor/models/vision.py get_vit_attn_backend reads VLLM_ATTENTION_BACKEND, so a
    FLASH_ATTN set there is what sends the ViT to a kernel the GPU lacks; a flag the release lacks is never given."""
    log = "$ vllm serve Qwen/Qwen2.5-VL-7B-Instruct\nINFO 05-01 10:00:00 api_server.py:1] vLLM API server version 0.9.2\n"
    diagnosis = first_diagnosis(log + _vllm_vit(tmp_path))
    fix = diagnosis.fix
    assert fix is not None and not _ops(fix) and "has no setting of its own" in fix.summary
    assert any("VLLM_ATTENTION_BACKEND" in step and "unset it" in step for step in fix.steps)
    assert any("--mm-encoder-attn-backend" in step for step in fix.steps)
    older = first_diagnosis(log.replace("0.9.2", "0.6.3") + _vllm_vit(tmp_path)).fix  # no vision.py selector: asked
    assert older is not None and not _ops(older) and older.needs_input
    assert "VLLM_ATTENTION_BACKEND" not in " ".join(older.steps)


def test_the_language_model_attention_keeps_the_llm_flag(tmp_path: Path) -> None:
    """The same kernel refusal from the LLM's attention backend: --attention-backend is the right setting there."""
    run = traceback_of_installed(
        tmp_path, {"vllm/vllm_flash_attn/flash_attn_interface.py": _KERNEL,
                   "vllm/v1/attention/backends/flash_attn.py": _VLLM_LLM},
        "from vllm.v1.attention.backends.flash_attn import FlashAttentionImpl\nFlashAttentionImpl().forward([1])\n")
    log = "$ vllm serve Qwen/Qwen3-8B\nINFO 05-01 10:00:00 api_server.py:1] vLLM API server version 0.33.0\n" + run.stderr
    diagnosis = first_diagnosis(log)
    assert ("set", "--attention-backend", "TRITON_ATTN") in _ops(diagnosis.fix)
    assert "--mm-encoder-attn-backend" not in _flags(diagnosis)


def test_an_sglang_vision_block_moves_the_pattern_alternative_to_the_encoder_flag(tmp_path: Path) -> None:
    log = ("[2025-05-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-VL-7B-Instruct', tp_size=1)\n"
           "[2025-05-01 10:00:01] sglang version 0.5.9\n" + _sglang_vit(tmp_path))
    diagnosis = first_diagnosis(log)
    assert "--attention-backend" not in _flags(diagnosis)
    assert ("set", "--mm-attention-backend", "triton_attn") in _ops(diagnosis.fix)  # a choice of 0.5.9's catalog


def test_an_sglang_release_before_the_encoder_flag_gets_no_attention_flag(tmp_path: Path) -> None:
    log = "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-VL-7B-Instruct\nsglang version 0.4.5\n" + _sglang_vit(tmp_path)
    diagnosis = first_diagnosis(log)
    fix = diagnosis.fix
    assert fix is not None and not {"--attention-backend", "--mm-attention-backend"} & _flags(diagnosis)
    # an alternative whose attention change was taken out keeps nothing that touches the encoder: dropped
    assert all(alternative.flags or alternative.steps for alternative in fix.alternatives)
    assert not any({op.flag for op in alternative.flags} == {"--sampling-backend"} for alternative in fix.alternatives)


# sglang 0.5.9 layers/attention/vision.py VisionAttention._determine_attention_backend refuses fa3 on Blackwell; the
# LLM's fa3 backend then fails too (layers/attention/attention_registry.py create_flashattention_v3_backend: SM 80-90).
_SGLANG_VISION_BLACKWELL = '''
class VisionAttention:
    def __init__(self, backend):
        self.qkv_backend = self._determine_attention_backend(backend)

    def _determine_attention_backend(self, backend):
        raise ValueError(f"The {backend!r} backend is not supported on Blackwell GPUs")
'''
_SGLANG_QWEN_VL_INIT = '''
from sglang.srt.layers.attention.vision import VisionAttention


class Qwen2_5_VisionBlock:
    def __init__(self):
        self.attn = VisionAttention("fa3")
'''


def test_the_launchs_own_llm_backend_refused_by_the_same_message_is_not_kept(tmp_path: Path) -> None:
    run = traceback_of_installed(
        tmp_path, {"sglang/srt/layers/attention/vision.py": _SGLANG_VISION_BLACKWELL,
                   "sglang/srt/models/qwen2_5_vl.py": _SGLANG_QWEN_VL_INIT},
        "from sglang.srt.models.qwen2_5_vl import Qwen2_5_VisionBlock\nQwen2_5_VisionBlock()\n")
    assert "Blackwell" in run.stderr
    log = ("python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-VL-7B-Instruct --attention-backend fa3 "
           "--mm-attention-backend fa3\nsglang version 0.5.9\n" + run.stderr)
    fix = first_diagnosis(log).fix
    assert fix is not None and ("set", "--mm-attention-backend", "triton_attn") in _ops(fix)
    assert any("--attention-backend fa3" in step for step in fix.steps) and fix.command is None
    assert any("--attention-backend" in need for need in fix.needs_input)


_SGLANG_KERNEL_FAULT = '''
def flash_attn_varlen_func(q, k, v, cu_seqlens_q):
    raise RuntimeError("CUDA error: an illegal memory access was encountered\\nCUDA kernel errors might be "
                       "asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
'''


def test_an_asynchronous_fault_in_an_encoder_frame_keeps_the_llm_alternative(tmp_path: Path) -> None:
    """torch's own words: the frame an illegal memory access surfaces in may not be the faulting kernel, so the
    encoder's frames do not move the advice to the encoder's flag."""
    stderr = _sglang_vit(tmp_path, _SGLANG_KERNEL_FAULT, "illegal memory access")
    log = "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-VL-7B-Instruct --tp 2\nsglang version 0.5.9\n"
    diagnosis = first_diagnosis(log + stderr)
    assert "--mm-attention-backend" not in _flags(diagnosis) and "--attention-backend" in _flags(diagnosis)


_KV_TRACEBACK = (Path(__file__).parent.parent / "fixtures" / "patterns" / "sglang-weight-key-quant-scale"
                 / "positive-0.5.9-fp8-scale.log")


def _kv_scale_log(key: str, launch: str) -> str:
    text = "".join(_KV_TRACEBACK.read_text().splitlines(keepends=True)[1:])
    assert "model.layers.0.mlp.experts.w13_weight_scale_inv" in text
    return launch + text.replace("model.layers.0.mlp.experts.w13_weight_scale_inv", key)


def test_a_kv_cache_scale_is_never_answered_with_a_quantization_flag() -> None:
    """The checkpoint's own names: the release's loader for this model does not remap them.  Which release's loader
    does is not known (sglang's qwen3_moe.py, this traceback's model, remaps them in no indexed release): asked."""
    for key in ("model.layers.0.self_attn.kv_scale", "model.layers.3.self_attn.qkv_proj.k_scale"):
        diagnosis = first_diagnosis(_kv_scale_log(key, "python3 -m sglang.launch_server --model-path /m/Llama-FP8-KV\n"))
        fix = diagnosis.fix
        assert fix is not None and diagnosis.category == "weight-loading"
        assert not _ops(fix) and "KV-cache scale" in fix.summary
        assert "Pass the checkpoint's method" not in fix.summary and "maybe_remap_kv_scale_name" in " ".join(fix.steps)
        assert "newer" not in " ".join(fix.steps) and any("release's loader" in need for need in fix.needs_input)


def test_the_attention_layers_own_scale_missing_is_the_kv_cache_method_not_the_loader() -> None:
    """`.attn.v_scale` is the name after maybe_remap_kv_scale_name: the layer has it only when the quantization config
    gives it a KV-cache method (sglang 0.5.9 layers/radix_attention.py, vllm 0.11.2 attention/layer.py), so a
    --quantization that overrides the checkpoint's config is a cause, to compare, not a setting to keep."""
    key = "model.layers.3.self_attn.attn.v_scale"
    given = first_diagnosis(_kv_scale_log(key, "python3 -m sglang.launch_server --model-path /m/L-FP8 --quantization fp8\n"))
    fix = given.fix
    assert fix is not None and given.category == "weight-loading" and not _ops(fix)
    assert "built without the checkpoint's KV-cache quantization" in fix.summary and "--quantization fp8" in fix.summary
    assert "launch without --quantization" in " ".join(fix.steps) and "loader for this model" not in fix.summary
    bare = first_diagnosis(_kv_scale_log(key, "python3 -m sglang.launch_server --model-path /m/L-FP8 --tp 2\n")).fix
    assert bare is not None and not _ops(bare) and any("config.json" in need for need in bare.needs_input)


def test_a_kv_cache_scale_keeps_the_launchs_own_quantization() -> None:
    log = _kv_scale_log("model.layers.0.self_attn.k_scale",
                        "python3 -m sglang.launch_server --model-path /m/Llama-FP8 --quantization fp8\n")
    fix = first_diagnosis(log).fix
    assert fix is not None and not _ops(fix) and "without it" not in fix.summary


def test_a_weight_scale_still_names_the_method() -> None:
    """The class the KV-cache branch leaves alone: a weight's own scale does point to its method."""
    log = _kv_scale_log("model.layers.0.mlp.experts.w13_weight_scale_inv",
                        "python3 -m sglang.launch_server --model-path /m/Qwen3-8B --tp 2\n")
    assert ("set", "--quantization", "fp8") in _ops(first_diagnosis(log).fix)


_RADIX = '''
class RadixCache:
    def reset(self, server_args):
        raise RuntimeError(f"radix cache reset failed for {server_args}")
'''


def test_a_settings_dump_in_the_message_picks_no_category_by_its_words(tmp_path: Path) -> None:
    """The message prints the whole ServerArgs: tokenizer_path and tokenizer_mode are in it whatever failed."""
    dump = ("ServerArgs(model_path='/m/x', tokenizer_path='/m/x', tokenizer_mode='auto', skip_tokenizer_init=False, "
            "tp_size=2)")
    run = traceback_of_installed(
        tmp_path, {"sglang/srt/mem_cache/radix_cache.py": _RADIX},
        f"from sglang.srt.mem_cache.radix_cache import RadixCache\nRadixCache().reset({dump!r})\n")
    assert "tokenizer_mode" in run.stderr
    diagnosis = first_diagnosis("sglang version 0.5.9\n" + run.stderr)
    assert diagnosis.category != "tokenizer"
    assert "--tokenizer-path" not in " ".join((diagnosis.fix.summary, *diagnosis.fix.steps) if diagnosis.fix else ())


def test_a_servers_error_body_printed_as_a_dict_keeps_its_words() -> None:
    """The openai client prints the server's error body as a dict (`{'error': {'message': …, 'type': …, 'code': 400}}`):
    three `'name': value` pairs, but the server's account of the failure, not a settings dump, so it is not masked."""
    body = ("{'error': {'message': 'tokenizer could not apply the chat template: role tool is unknown', "
            "'type': 'BadRequestError', 'param': None, 'code': 400}}")
    log = ("Traceback (most recent call last):\n  File \"/srv/client.py\", line 9, in <module>\n"
           "    out = client.chat.completions.create(model=\"m\", messages=turns)\n"
           "  File \"/usr/lib/python3.12/site-packages/openai/_base_client.py\", line 1047, in request\n"
           "    raise self._make_status_error_from_response(err.response) from None\n"
           f"openai.BadRequestError: Error code: 400 - {body}\n")
    assert first_diagnosis(log).category == "tokenizer"
