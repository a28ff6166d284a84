"""Stop 49, review 1's faults in the stop's own rows (issue 28), in generic words.

- M1: InternLM2's own Hugging Face class names its parameters `tok_embeddings`, `attention.wo`, `feed_forward.w1`
  under `model.` (vllm/model_executor/models/internlm2.py, sglang/srt/models/internlm2.py, and the InternVL language
  model built on it): only a bare native name (Mistral's consolidated.safetensors) is the native-format file.
- M2: a negative output budget is not the server's: vLLM checks the prompt against max_model_len before get_max_tokens
  (serving_engine.py _validate_input), and SGLang clamps its own default budget (serving_responses.py: at least 512,
  or 1), so a client or wrapper computed it; the server's limit is said only where the client reads it.
- M3: vLLM's "`limit_mm_per_prompt` is only supported for multimodal models." is as often a text-only model given the
  setting (a copied command, a wrapper that always passes it) as a multimodal model the release predates: the title
  stays neutral, and the release leads only for an architecture some indexed release registers as multimodal
  (facts/engine_architectures.json.gz, vLLM's SupportsMultiModal).
- M4: flashinfer's "Could not find nvcc" (flashinfer/jit/cpp_ext.py get_cuda_path): `pip show` prints requirement
  names, never the pin, so the version lead says `pip check`, and names the first releases that pin
  flashinfer-python (facts/requires.json).
- L4: every indexed release has filter_duplicate_safetensors_files (SGLang 0.3.6.post3 loads through vLLM's get_model,
  whose weight_utils has it from 0.5.5), so the native-format checks name no release "older than that filter".
- L7: a conditional check that is not shown (its setting not given by the launch, its flag not in the release)
  suppresses nothing: the "the message speaks of a setting" line is left out only beside a check row_checks keeps.
"""

from __future__ import annotations

import re
from dataclasses import replace

from logsleuth.facts import categories, requires
from logsleuth.facts.categories import ConditionalCheck
from logsleuth.lazyre import compile_gated
from logsleuth.reasoning.guidance_text import checks_for_the_message, row_checks
from tests.helpers import check_texts, diagnose_without_patterns, real_traceback


def _raised_in(path: str, function: str, statement: str) -> str:
    return real_traceback(f"""
def {function}(name):
    {statement}

{function}("x")
""", path)


def _missing_tensor(path: str, name: str) -> str:
    return _raised_in(path, "load_weights", f"params_dict = {{}}\n    param = params_dict['{name}']")


def test_internlm2s_own_names_are_not_a_native_weights_file() -> None:
    for path, name in (("vllm/model_executor/models/internlm2.py", "model.layers.0.attention.wo.weight"),
                       ("sglang/srt/models/internlm2.py", "model.tok_embeddings.weight"),
                       ("vllm/model_executor/models/internvl.py",
                        "language_model.model.layers.3.feed_forward.w2.weight")):
        found = diagnose_without_patterns(_missing_tensor(path, name))
        assert found.category == "weight-loading", name
        assert "native-format" not in found.title, name


def test_a_bare_native_name_still_names_the_native_weights_file() -> None:
    for name in ("layers.0.attention.wk.weight", "tok_embeddings.weight"):
        found = diagnose_without_patterns(_missing_tensor("vllm/model_executor/models/llama.py", name))
        assert "native-format weights file" in found.title, name
        # no indexed release predates the index-file filter: no upgrade is offered for it
        assert "or upgrade" not in check_texts(found) and "older than that filter" not in check_texts(found)


def test_a_negative_output_budget_is_not_said_to_be_the_servers() -> None:
    log = ("vllm serve org/Some-VL-9B --max-model-len 4096\n"
           + _raised_in("vllm/sampling_params.py", "_verify_args",
                        "raise ValueError('max_tokens must be at least 1, got -7584.')"))
    found = diagnose_without_patterns(log)
    assert found.category == "context-length"
    checks = check_texts(found)
    assert "computed by the server" not in checks and "Raise the server's context limit" not in checks
    assert "KV cache" in checks


_MM_REFUSAL = "raise ValueError('`limit_mm_per_prompt` is only supported for multimodal models.')"


def test_a_text_only_model_given_a_multimodal_setting_is_not_said_to_want_a_newer_release() -> None:
    log = ("vllm serve Qwen/Qwen2.5-7B-Instruct --limit-mm-per-prompt '{\"image\":2}'\n"
           "INFO 01-01 00:00:00 [config.py:1] Resolved architecture: Qwen2ForCausalLM\n"
           + _raised_in("vllm/config.py", "verify", _MM_REFUSAL))
    found = diagnose_without_patterns(log)
    assert found.category == "unsupported-architecture"
    assert "older than the model" not in found.title
    checks = check_texts(found)
    assert "install a vLLM release" not in checks
    assert "leave it out" in checks


def test_flashinfers_nvcc_lookup_asks_for_a_pin_the_user_can_read() -> None:
    log = _raised_in("flashinfer/jit/cpp_ext.py", "get_cuda_path", "raise RuntimeError('Could not find nvcc')")
    found = diagnose_without_patterns(log)
    assert found.fix is not None
    lead = found.fix.steps[0]
    assert "Requires-Dist" not in lead and "pip check" in lead
    # the releases the check says first require flashinfer-python are those facts/requires.json shows
    said = dict(re.findall(r"(vLLM|SGLang) ([\w.]+) and later", lead))
    assert said == {"vLLM": requires.pins_across("vllm", "flashinfer-python")[0][0],
                    "SGLang": requires.pins_across("sglang", "flashinfer-python")[0][0]}


def test_a_check_not_shown_suppresses_nothing() -> None:
    refusal = "ValueError: `limit_mm_per_prompt` is only supported for multimodal models."
    row = next(r for r in categories.table().rows if any(c.words.search(refusal) for c in r.checks_when))
    other = ConditionalCheck(compile_gated("only supported for multimodal", re.IGNORECASE),
                             "In vLLM: leave --other-setting out.", "vllm", ("--other-setting",))
    row = replace(row, checks_when=(other,))
    not_given = frozenset({"--limit-mm-per-prompt"})
    assert other.check not in row_checks(row, "vllm", None, texts=(refusal,), given=not_given)
    assert checks_for_the_message(row, "vllm", None, (refusal,), not_given) == ()
    given = frozenset({"--other-setting"})
    assert checks_for_the_message(row, "vllm", None, (refusal,), given) == (other.check,)
