"""Stop 49 (advice12), in generic words (issue 28): failures the last blind split found whose category row gave a
weaker lead than the cause.

- vLLM's refusal of a multimodal setting for a model it reads as text-only (vllm/config.py ModelConfig, "`limit_mm_per_
  prompt` is only supported for multimodal models.", the raise site index): its registry has no multimodal class for the
  checkpoint's architecture; for an architecture some release registers as multimodal, a release older than the model
  leads, and the general "try it left out" line is not added beside a check that names the setting.
- A native-format weights file beside the Hugging Face shards (Mistral's consolidated.safetensors): the loader globs
  every *.safetensors file and keeps only those model.safetensors.index.json lists (filter_duplicate_safetensors_files in
  both engines' weight_utils.py), so a tensor with a native name (`layers.0.attention.wk.weight`) reaches load_weights'
  `params_dict[name]`.
- flashinfer's nvcc lookup (flashinfer/jit/cpp_ext.py get_cuda_path, "Could not find nvcc"): the flashinfer version
  against the engine release's requirement leads, beside the toolkit's checks.
- An output budget below zero (vLLM's SamplingParams._verify_args "max_tokens must be at least 1, got {}."): a client or
  wrapper computed it from the context length it knows (review 1 M2: the engines check the prompt against their own
  limit first), so that context length leads, with the server's flag where the client reads the server's.
Tracebacks are real CPython's, run from trees laid out as the engines' and flashinfer's; the wordings are theirs,
rebuilt in our own code."""

from __future__ import annotations

from tests.helpers import check_texts, diagnose_without_patterns, real_traceback


def _raised_in(path: str, function: str, statement: str) -> str:
    return real_traceback(f"""
def {function}(name):
    {statement}

{function}("x")
""", path)


def test_a_multimodal_setting_refused_leads_with_a_release_older_than_the_model() -> None:
    # (an architecture later releases register as multimodal: vLLM 0.9.2 registers Gemma 3n's text-only)
    log = ("vllm serve org/Some-VL-9B --limit-mm-per-prompt '{\"image\":4}'\n"
           "INFO 01-01 00:00:00 [config.py:1] Resolved architecture: Gemma3nForConditionalGeneration\n"
           + _raised_in("vllm/config.py", "verify", "raise ValueError('`limit_mm_per_prompt` is only supported for "
                        "multimodal models.')"))
    found = diagnose_without_patterns(log)
    assert found.category == "unsupported-architecture"
    assert found.fix is not None
    assert found.fix.steps[0].startswith("In vLLM this refusal of --limit-mm-per-prompt")
    assert "older than the model" in found.fix.steps[0]
    # the general line about the setting is not added beside the check that names it
    assert not any(step.startswith("General guidance: the message speaks of") for step in found.fix.steps)


def test_a_native_tensor_name_names_the_native_weights_file() -> None:
    log = _raised_in("sglang/srt/models/llama.py", "load_weights",
                     "params_dict = {}\n    param = params_dict['layers.0.attention.wk.weight']")
    found = diagnose_without_patterns(log)
    assert found.category == "weight-loading"
    assert "native-format weights file" in found.title
    checks = check_texts(found)
    assert "consolidated.safetensors" in checks and "model.safetensors.index.json" in checks


def test_a_hugging_face_tensor_name_keeps_the_general_checkpoint_checks() -> None:
    log = _raised_in("sglang/srt/models/llama.py", "load_weights",
                     "params_dict = {}\n    param = params_dict['model.layers.0.self_attn.k_proj.weight']")
    found = diagnose_without_patterns(log)
    assert found.category == "weight-loading"
    assert "native-format" not in found.title


def test_flashinfers_nvcc_lookup_leads_with_its_version_against_the_release() -> None:
    log = _raised_in("flashinfer/jit/cpp_ext.py", "get_cuda_path", "raise RuntimeError('Could not find nvcc')")
    found = diagnose_without_patterns(log)
    assert found.category == "dependency-version"
    assert found.fix is not None
    assert "flashinfer-python" in found.fix.steps[0] and "pip check" in found.fix.steps[0]
    assert any("install the CUDA toolkit" in step for step in found.fix.steps[1:])


def test_a_negative_output_budget_leads_with_the_clients_context_length() -> None:
    log = ("vllm serve org/Some-VL-9B --max-model-len 4096\n"
           + _raised_in("vllm/sampling_params.py", "_verify_args",
                        "raise ValueError('max_tokens must be at least 1, got -7584.')"))
    found = diagnose_without_patterns(log)
    assert found.category == "context-length"
    assert found.fix is not None
    assert "a client or wrapper computed" in found.fix.steps[0]
    assert found.fix.steps[1].startswith("In vLLM the server's context limit is --max-model-len")
    assert "needs no flag change" not in check_texts(found)


def test_a_relay_that_drops_the_space_in_the_budget_message_reads_the_same() -> None:
    # an adapter re-wrapping vLLM's JSON body ('max_tokens must be at least1, got -736'): the same negative budget
    log = _raised_in("relay/app.py", "forward", "raise RuntimeError('Upstream error: {\"message\":\"max_tokens must be "
                     "at least1, got -736. (parameter=max_tokens, value=-736)\",\"type\":\"BadRequestError\"}')")
    found = diagnose_without_patterns(log)
    assert found.category == "context-length"
    assert found.fix is not None and "a client or wrapper computed" in found.fix.steps[0]
