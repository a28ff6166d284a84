"""The engine's own words (issue 28, item 2): an instruction a failure's message gives is quoted, never turned
into a command, and every flag, choice and pin it names is checked for the user's release.

Each message below is our own text in the wording of the engine code that raises it (the oracle venvs under
~/.cache/logsleuth/oracle/<release>/lib/python3.11/site-packages/); the site is cited beside each."""

from __future__ import annotations

from dataclasses import replace

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.check.verify import check_words
from logsleuth.models import Diagnosis, EngineWords, Failure, LaunchInfo
from logsleuth.reasoning import engine_words
from logsleuth.reasoning.engine_words import (
    MAX_INSTRUCTIONS,
    MAX_QUOTE_CHARS,
    instructions,
    with_engine_words,
)
from logsleuth.redact import REDACTED, redact_report

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def traceback_log(path: str, line: int, function: str, exception: str, message: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/usr/local/lib/python3.11/site-packages/{path}", line {line}, in {function}\n'
        "    raise " + exception + "(message)\n"
        f"{exception}: {message}\n"
    )


def failure_of(log: str) -> Failure:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, log
    return report.failures[0].failure


def said(log: str, engine: str | None = None, version: str | None = None) -> tuple[EngineWords, ...]:
    return instructions(failure_of(log), engine, version)


def only(words: tuple[EngineWords, ...]) -> EngineWords:
    assert len(words) == 1, words
    return words[0]


# -- the shapes, on the engines' real wordings -----------------------------------------------------------------

# sglang-0.4.10.post2 sglang/srt/layers/quantization/__init__.py:118 (get_quantization_config)
AWQ_NEEDS_VLLM = traceback_log(
    "sglang/srt/layers/quantization/__init__.py", 118, "get_quantization_config", "ValueError",
    "awq quantization requires some operators from vllm. Please install vllm by `pip install vllm==0.9.0.1`",
)


def test_please_install_a_pin_is_quoted_and_the_pin_checked_against_the_release() -> None:
    words = only(said(AWQ_NEEDS_VLLM, "sglang", "0.4.10.post2"))
    assert words.text == "Please install vllm by `pip install vllm==0.9.0.1`"
    # SGLang 0.4.10.post2's wheel declares no vllm requirement: the pin cannot be checked, and it says so.
    assert words.checks == ("the pin vllm==0.9.0.1 could not be checked against what SGLang 0.4.10.post2 declares",)


def test_a_version_bound_without_a_package_is_no_pin() -> None:
    # vllm-0.11.2 vllm/model_executor/model_loader/weight_utils.py:611
    log = traceback_log("vllm/model_executor/model_loader/weight_utils.py", 611, "safetensors_weights_iterator",
                        "ValueError", "Please use torchao version >= 0.14.0 to load torchao safetensors checkpoint")
    assert only(said(log, "vllm", "0.11.2")).checks == ()


def test_a_pin_the_release_declares_is_set_beside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """facts/requires.py is filled by its own work; until then this stands in for its answer (a mock, said so:
    the release data is not on this branch)."""
    monkeypatch.setattr(engine_words, "pinned_requirement",
                        lambda engine, version, dist: "timm==1.0.15" if dist == "timm" else None)
    # vllm-0.11.2 vllm/model_executor/models/minicpmv.py:1238
    log = traceback_log("vllm/model_executor/models/minicpmv.py", 1238, "init_vision_module", "ImportError",
                        "Please install timm==0.9.10")
    assert only(said(log, "vllm", "0.11.2")).checks == ("vLLM 0.11.2 declares timm==1.0.15 (the message names timm==0.9.10)",)
    # vllm-0.11.2 vllm/model_executor/models/deepseek_vl2.py:429: a package named without a version
    bare = traceback_log("vllm/model_executor/models/deepseek_vl2.py", 429, "_init_vision_module", "ImportError",
                         "Please install timm")
    assert only(said(bare, "vllm", "0.11.2")).checks == ("vLLM 0.11.2 declares timm==1.0.15",)
    assert only(said(bare, "vllm", None)).checks == ()  # no release: nothing to read its requirements from


def test_enable_a_flag_is_checked_in_the_release_catalog() -> None:
    # sglang-0.5.9 sglang/srt/managers/utils.py:124 (validate_input_length)
    log = traceback_log("sglang/srt/managers/tokenizer_manager.py", 640, "_validate_one_request", "ValueError",
                        "Input length (9000 tokens) exceeds the maximum allowed length (8192 tokens). "
                        "Use a shorter input or enable --allow-auto-truncate.")
    words = only(said(log, "sglang", "0.5.9"))
    assert words.text == "Use a shorter input or enable --allow-auto-truncate."
    assert words.checks == ("`--allow-auto-truncate` is a flag of SGLang 0.5.9",)


# sglang-0.5.23 sglang/srt/layers/attention/attention_registry.py:474 (attn_backend_wrapper)
ONLY_BACKENDS = traceback_log(
    "sglang/srt/layers/attention/attention_registry.py", 474, "attn_backend_wrapper", "AssertionError",
    "Only {'triton', 'trtllm_mha', 'flashinfer'} backends are supported on Blackwell GPUs for hybrid GDN models. "
    "Got prefill=fa3, decode=fa3.",
)


def test_only_these_choices_are_supported_names_what_the_release_accepts() -> None:
    words = only(said(ONLY_BACKENDS, "sglang", "0.5.23"))
    assert words.text.startswith("Only {'triton', 'trtllm_mha', 'flashinfer'} backends are supported")
    assert words.checks == ("of the choices named: --attention-backend, --decode-attention-backend, "
                            "--prefill-attention-backend of SGLang 0.5.23 accept triton, trtllm_mha, flashinfer",)


def test_a_choice_the_release_lacks_is_named_as_lacking() -> None:
    (check,) = only(said(ONLY_BACKENDS, "sglang", "0.4.10.post2")).checks
    assert check == "of the choices named: --attention-backend of SGLang 0.4.10.post2 accepts triton, flashinfer, not trtllm_mha"


def test_a_choice_list_no_flag_holds_is_quoted_only() -> None:
    # vllm-0.11.2 vllm/utils/deep_gemm.py:49 ("only Hopper and Blackwell GPUs are supported"): no flag chooses GPUs
    log = traceback_log("vllm/utils/deep_gemm.py", 60, "_lazy_init", "RuntimeError",
                        "DeepGEMM: only Hopper and Blackwell GPUs are supported.")
    assert only(said(log, "vllm", "0.11.2")).checks == ()


@pytest.mark.parametrize(
    ("log", "quoted"),
    [
        # sglang-0.4.10.post2 sglang/srt/managers/tokenizer_manager.py:575
        (traceback_log("sglang/srt/managers/tokenizer_manager.py", 575, "_validate_token_len", "ValueError",
                       "The input (40000 tokens) is longer than the model's context length (32768 tokens)."),
         "The input (40000 tokens) is longer than the model's context length (32768 tokens)."),
        # transformers utils/hub.py:438 (cached_files), as installed in the oracle venvs
        (traceback_log("transformers/utils/hub.py", 438, "cached_files", "OSError",
                       "/data/weights/qwen does not appear to have a file named config.json. Checkout "
                       "'https://huggingface.co//data/weights/qwen/tree/main' for available files."),
         "/data/weights/qwen does not appear to have a file named config.json."),
        # transformers tokenization_utils_base.py:1825 (get_chat_template)
        (traceback_log("transformers/tokenization_utils_base.py", 1825, "get_chat_template", "ValueError",
                       "Cannot use chat template functions because tokenizer.chat_template is not set and no "
                       "template argument was passed! For information about writing templates, see the docs."),
         "Cannot use chat template functions because tokenizer.chat_template is not set and no template argument "
         "was passed!"),
        # torch/cuda/__init__.py (_lazy_init), torch 2.x: CUDA first touched in a forked worker
        (traceback_log("torch/cuda/__init__.py", 305, "_lazy_init", "RuntimeError",
                       "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
                       "use the 'spawn' start method"),
         "To use CUDA with multiprocessing, you must use the 'spawn' start method"),
    ],
    ids=["longer-than-context", "no-file-named", "chat-template-not-set", "you-must-use-spawn"],
)
def test_statements_that_say_what_to_do_are_quoted_without_checks(log: str, quoted: str) -> None:
    words = only(said(log, "sglang", "0.5.9"))
    assert (words.text, words.checks) == (quoted, ())
    # the package whose frame raised it says it (the engine's own frame: the engine)
    assert words.speaker == (None if "sglang/" in log or "vllm/" in log else log.split("site-packages/")[1].split("/")[0])


def test_try_increasing_a_flag_and_a_field_that_names_one() -> None:
    # sglang-0.5.9 sglang/srt/model_executor/model_runner_kv_cache_mixin.py:417
    sglang = traceback_log("sglang/srt/model_executor/model_runner_kv_cache_mixin.py", 417, "init_memory_pool",
                           "RuntimeError", "Not enough memory. Please try to increase --mem-fraction-static. "
                           "Current value: self.server_args.mem_fraction_static=0.5")
    words = only(said(sglang, "sglang", "0.5.9"))
    assert words == EngineWords("Please try to increase --mem-fraction-static.",
                                ("`--mem-fraction-static` is a flag of SGLang 0.5.9",))
    # vllm-0.11.2 vllm/v1/core/kv_cache_utils.py:713 names the settings as fields, each set by a flag
    vllm = traceback_log("vllm/v1/core/kv_cache_utils.py", 713, "check_enough_kv_cache_memory", "ValueError",
                         "To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache "
                         "is needed, which is larger than the available KV cache memory (9.21 GiB). Try increasing "
                         "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    assert only(said(vllm, "vllm", "0.33.0")).checks == (
        "`gpu_memory_utilization` is set by --gpu-memory-utilization, which is a flag of vLLM 0.33.0",
        "`max_model_len` is set by --max-model-len, which is a flag of vLLM 0.33.0",
    )


@pytest.mark.parametrize(
    ("log", "quoted"),
    [
        # sglang-0.5.9 sglang/srt/configs/model_config.py:383
        (traceback_log("sglang/srt/configs/model_config.py", 383, "__init__", "ValueError",
                       "User-specified context_length (200000) is greater than the derived context_length (131072). "
                       "To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"),
         "To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"),
        # vllm-0.11.2 vllm/v1/core/kv_cache_utils.py:96 ("Consider setting PYTHONHASHSEED to a fixed value")
        (traceback_log("vllm/v1/core/kv_cache_utils.py", 96, "init_none_hash", "RuntimeError",
                       "Hashes differ between processes. Consider setting PYTHONHASHSEED to a fixed value."),
         "Consider setting PYTHONHASHSEED to a fixed value."),
    ],
    ids=["set-the-env-var", "consider-setting"],
)
def test_an_environment_variable_is_quoted_only(log: str, quoted: str) -> None:
    assert said(log, "sglang", "0.5.9") == (EngineWords(quoted),)


def test_use_trust_remote_code() -> None:
    # sglang-0.5.9 sglang/srt/utils/hf_transformers_utils.py:550 (get_tokenizer)
    log = traceback_log("sglang/srt/utils/hf_transformers_utils.py", 554, "get_tokenizer", "RuntimeError",
                        "Failed to load the tokenizer. If the tokenizer is a custom tokenizer not yet available in the "
                        "HuggingFace transformers library, consider setting `trust_remote_code=True` in LLM or using "
                        "the `--trust-remote-code` flag in the CLI.")
    words = only(said(log, "sglang", "0.5.23"))
    assert words.text.startswith("If the tokenizer is a custom tokenizer")
    assert words.checks == ("`--trust-remote-code` is a flag of SGLang 0.5.23",)


# sglang-0.4.10.post2 sglang/srt/model_executor/cuda_graph_runner.py:833 (CUDA_GRAPH_CAPTURE_FAILED_MSG)
CUDA_GRAPH_CAPTURE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.11/site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 380, '
    "in __init__\n"
    "    raise Exception(\n"
    "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.25 GiB.\n"
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
    "3. disable torch compile by not using --enable-torch-compile\n"
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose\n"
)


def test_each_item_of_a_list_of_solutions_is_an_instruction_of_its_own() -> None:
    texts = [words.text for words in said(CUDA_GRAPH_CAPTURE, "sglang", "0.5.9")]
    assert texts == [
        "set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
        "set --cuda-graph-max-bs to a smaller value (e.g., 16)",
        "disable torch compile by not using --enable-torch-compile",
        "disable CUDA graph by --disable-cuda-graph.",
    ]


def test_what_is_not_an_instruction() -> None:
    # argparse's own refusal names flags but instructs nothing (the argument patterns read it)
    refusal = "usage: launch_server.py [-h]\nlaunch_server.py: error: ambiguous option: --disable could match " \
              "--disable-cuda-graph, --disable-radix-cache\n"
    assert said(refusal, "sglang", "0.5.9") == ()
    # a conflict between two flags (sglang-0.5.9 server_args.py: "Cannot enable both ... and ...")
    conflict = traceback_log("sglang/srt/server_args.py", 900, "check_server_args", "ValueError",
                             "Cannot enable both --enable-tokenizer-batch-encode and --enable-dynamic-batch-tokenizer.")
    assert said(conflict, "sglang", "0.5.9") == ()
    plain = traceback_log("sglang/srt/server_args.py", 900, "check_server_args", "ValueError", "bad value: 3")
    assert said(plain, "sglang", "0.5.9") == ()


def test_the_options_of_a_pip_command_are_not_checked_as_engine_flags() -> None:
    # sglang-0.5.9 sgl_kernel/__init__.py's loader: "Please ensure sgl_kernel is properly installed with:
    # pip install --upgrade sgl_kernel"
    log = traceback_log("sgl_kernel/load_utils.py", 180, "_load_architecture_specific_ops", "ImportError",
                        "Please ensure sgl_kernel is properly installed with: pip install --upgrade sgl_kernel")
    words = only(said(log, "sglang", "0.5.9"))
    assert not any("--upgrade" in check for check in words.checks), words.checks


def test_escapes_in_the_message_are_removed() -> None:
    log = traceback_log("sglang/srt/managers/tokenizer_manager.py", 640, "_validate_one_request", "ValueError",
                        r"Input too long.\n\x1b[31mUse a shorter input or enable --allow-auto-truncate.\x1b[0m")
    assert only(said(log, "sglang", "0.5.9")).text == "Use a shorter input or enable --allow-auto-truncate."


def test_the_cost_is_bounded_on_a_huge_message() -> None:
    sentence = "Please try to increase --mem-fraction-static to {n}. "
    log = traceback_log("sglang/srt/model_executor/model_runner.py", 1, "f", "RuntimeError",
                        "".join(sentence.format(n=n) for n in range(5000)) + "x" * 100_000)
    words = said(log, "sglang", "0.5.9")
    assert len(words) == MAX_INSTRUCTIONS
    long_one = traceback_log("sglang/srt/model_executor/model_runner.py", 1, "f", "RuntimeError",
                             "Please set --mem-fraction-static " + "very " * 2000 + "carefully.")
    assert len(only(said(long_one, "sglang", "0.5.9")).text) <= MAX_QUOTE_CHARS + 1


# -- flag checks on each catalog: present, absent in that release, removed ------------------------------------


def flag_check(flag: str, engine: str | None, version: str | None, sentence: str | None = None) -> str:
    log = traceback_log("x/y.py", 1, "f", "ValueError", sentence or f"Please set {flag} to a smaller value.")
    (check,) = only(said(log, engine, version)).checks
    return check


@pytest.mark.parametrize(
    ("flag", "engine", "version", "expected"),
    [
        ("--allow-auto-truncate", "sglang", "0.4.10.post2", "`--allow-auto-truncate` is a flag of SGLang 0.4.10.post2"),
        ("--enable-dynamic-batch-tokenizer", "sglang", "0.4.10.post2",
         "`--enable-dynamic-batch-tokenizer` is not a flag of SGLang 0.4.10.post2 (it is in SGLang 0.5.9, 0.5.23)"),
        ("--cuda-graph-max-bs", "sglang", "0.5.9", "`--cuda-graph-max-bs` is a flag of SGLang 0.5.9"),
        # removed: sglang-0.5.23's own list of solutions names --cuda-graph-max-bs-decode instead
        # (sglang/srt/model_executor/runner_backend_utils/__init__.py:16)
        ("--cuda-graph-max-bs", "sglang", "0.5.23",
         "`--cuda-graph-max-bs` is not a flag of SGLang 0.5.23 (it is in SGLang 0.4.10.post2, 0.5.9)"),
        ("--cuda-graph-max-bs-decode", "sglang", "0.5.23", "`--cuda-graph-max-bs-decode` is a flag of SGLang 0.5.23"),
        ("--disable-cuda-graph", "sglang", "0.5.23",
         "`--disable-cuda-graph` is a flag of SGLang 0.5.23; deprecated, replaced by --cuda-graph-backend-decode"),
        # vllm-0.33.0 vllm/v1/worker/cp_utils.py:56 ("Try a different backend by setting --attention-backend")
        ("--attention-backend", "vllm", "0.11.2", "`--attention-backend` is not a flag of vLLM 0.11.2 (it is in vLLM 0.33.0)"),
        ("--attention-backend", "vllm", "0.33.0", "`--attention-backend` is a flag of vLLM 0.33.0"),
        # removed: vllm-0.11.2 vllm/engine/arg_utils.py:1746 ("Please use --cudagraph-capture-sizes instead")
        ("--cuda-graph-sizes", "vllm", "0.33.0", "`--cuda-graph-sizes` is not a flag of vLLM 0.33.0 (it is in vLLM 0.11.2)"),
        ("--no-enable-prefix-caching", "vllm", "0.33.0", "`--no-enable-prefix-caching` is a flag of vLLM 0.33.0"),
        ("--mem-fraction-static", "vllm", "0.11.2",
         "`--mem-fraction-static` is not a flag of vLLM 0.11.2 (nor of any vLLM release logsleuth has a catalog of; "
         "the catalogs hold the server's launch flags: another program's flag is not in them); "
         "it is a flag of SGLang 0.4.10.post2, 0.5.9, 0.5.23"),
        # argparse takes a unique beginning of a long option (neither engine turns allow_abbrev off)
        ("--tp", "sglang", "0.5.23",
         "`--tp` is not a flag of SGLang 0.5.23 by that name; its argparse takes it as short for --tp-size"),
    ],
)
def test_a_flag_in_the_catalog_of_the_users_release(flag: str, engine: str, version: str, expected: str) -> None:
    assert flag_check(flag, engine, version) == expected


def test_a_release_with_a_static_catalog_is_checked_in_its_own_catalog() -> None:
    """Issue 29: vLLM 0.6.0 and SGLang 0.3.0 have no real-parser catalog; their own static ones answer, not every
    shipped release's, and say what a catalog read from source proves."""
    assert flag_check("--model-impl", "vllm", "0.6.0") == "`--model-impl` is not a flag of vLLM 0.6.0 (vLLM added it in 0.7.2)"
    assert flag_check("--attention-backend", "sglang", "0.3.1") == (
        "`--attention-backend` is a flag of SGLang 0.3.1 (its catalog is read from its source: the flag exists; "
        "no value is validated)")


def test_a_flag_of_another_program_of_the_engine_is_not_called_missing_outright() -> None:
    """sglang-0.5.9 sglang/multimodal_gen/configs/pipeline_configs/base.py:635 names a flag of SGLang's diffusion
    server, which the launch server's catalog does not hold: the check says what the catalogs are."""
    sentence = "Currently enabling vae_sp requires enabling vae_tiling, please set --vae-tiling to True."
    assert flag_check("", "sglang", "0.5.9", sentence) == (
        "`--vae-tiling` is not a flag of SGLang 0.5.9 (nor of any SGLang release logsleuth has a catalog of; the catalogs "
        "hold the server's launch flags: another program's flag is not in them)")


def test_with_the_release_unknown_the_check_says_which_releases_have_it() -> None:
    assert flag_check("--cuda-graph-max-bs", "sglang", None) == (
        "`--cuda-graph-max-bs` is in the catalogs of SGLang 0.4.10.post2, 0.5.9, not of SGLang 0.5.23 "
        "(the SGLang release is not known)")
    # a release logsleuth has no catalog of: no claim is made about it, nor about a release near it
    assert flag_check("--dtype", "vllm", "0.5.4", "Use --dtype=half instead.") == (
        "`--dtype` is in the catalogs of vLLM 0.11.2, 0.33.0 (logsleuth has no catalog of vLLM 0.5.4); "
        "half is one of its choices")


def test_with_the_engine_unknown_the_check_names_both_engines_releases() -> None:
    assert flag_check("--gpu-memory-utilization", None, None) == (
        "`--gpu-memory-utilization` is in the catalogs of vLLM 0.11.2, 0.33.0, not of SGLang 0.4.10.post2, 0.5.9, "
        "0.5.23 (the log shows no engine)")


def test_a_value_given_with_the_flag_is_checked_against_its_choices() -> None:
    # sglang-0.5.23 runner_backend_utils/__init__.py:18 ("disable decode CUDA graph by
    # --cuda-graph-backend-decode=disabled")
    sentence = "disable decode CUDA graph by --cuda-graph-backend-decode=disabled."
    assert flag_check("", "sglang", "0.5.23", sentence) == (
        "`--cuda-graph-backend-decode` is a flag of SGLang 0.5.23; disabled is one of its choices")
    # the word after a flag is its value when it is one of the flag's choices in some release
    # (sglang-0.5.9 sglang/srt/layers/attention/xpu_backend.py:65 "please use --attention-backend triton instead";
    # SGLang's trtllm_mha first appears in 0.5.9)
    assert flag_check("", "sglang", "0.4.10.post2", "Please use --attention-backend trtllm_mha instead.") == (
        "`--attention-backend` is a flag of SGLang 0.4.10.post2; trtllm_mha is not one of its choices (aiter, "
        "cutlass_mla, fa3, flashinfer, flashmla, intel_amx, torch_native, ascend, …)")
    assert flag_check("", "sglang", "0.5.9", "Please use --attention-backend triton instead.") == (
        "`--attention-backend` is a flag of SGLang 0.5.9; triton is one of its choices")
    assert flag_check("", "sglang", "0.5.9", "Please set --attention-backend to a supported one.") == (
        "`--attention-backend` is a flag of SGLang 0.5.9")
    assert flag_check("", "sglang", "0.5.23", "use --attention-backend=fa9 instead.").endswith(
        "; fa9 is not one of its choices (triton, torch_native, flex_attention, dsa, nsa, qsa, dsv4, compressed, …)")


# -- through the api: every diagnosis carries them, and the engine is not decided by them -------------------


def test_a_pattern_diagnosis_carries_the_engine_words_checked_for_the_release() -> None:
    report = diagnose_text(CUDA_GRAPH_CAPTURE, DiagnoseOptions(include_user_patterns=False, engine_version="0.5.23"))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.basis == "pattern"
    by_text = {words.text: words.checks for words in diagnosis.engine_says}
    assert by_text["set --cuda-graph-max-bs to a smaller value (e.g., 16)"] == (
        "`--cuda-graph-max-bs` is not a flag of SGLang 0.5.23 (it is in SGLang 0.4.10.post2, 0.5.9)",)
    # No fix repeating that flag is passed as good for that release: `check` (how a fix gets its ✓) agrees.
    (verdict,) = check_words(["--cuda-graph-max-bs", "16"], "0.5.23", validate=False).flags
    assert not verdict.ok


def test_with_the_release_unknown_a_fix_repeating_the_flag_is_hedged_by_the_check() -> None:
    """The CUDA-graph pattern proposes --cuda-graph-max-bs when the release is not known; the engine's words
    beside it say which releases have that flag (0.5.23 does not)."""
    diagnosis = diagnose_text(CUDA_GRAPH_CAPTURE, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    proposed = {op.flag for fix in (diagnosis.fix, *diagnosis.fix.alternatives) for op in fix.flags}
    assert "--cuda-graph-max-bs" in proposed
    checks = [check for words in diagnosis.engine_says for check in words.checks]
    assert "`--cuda-graph-max-bs` is in the catalogs of SGLang 0.4.10.post2, 0.5.9, not of SGLang 0.5.23 " \
           "(the SGLang release is not known)" in checks


def test_an_engine_unknown_diagnosis_checks_in_both_engines_catalogs() -> None:
    # vllm-0.11.2 vllm/v1/core/kv_cache_utils.py:713, the message alone.  Only vLLM's code raises it, so the
    # report names vLLM (ingest/engine_from_message.py); with no engine at all, both engines' catalogs are read.
    log = ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
           "needed, which is larger than the available KV cache memory (9.21 GiB). Try increasing "
           "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n")
    report = diagnose_text(log, OPTIONS)
    assert report.launch.engine == "vllm"
    words = only(instructions(report.failures[0].failure, None, None))
    assert words.checks[0] == ("`gpu_memory_utilization` is set by --gpu-memory-utilization, which is in the catalogs "
                               "of vLLM 0.11.2, 0.33.0, not of SGLang 0.4.10.post2, 0.5.9, 0.5.23 (the log shows no engine)")


def test_an_environment_variable_stays_a_quote_through_the_api() -> None:
    log = ("[2025-06-01 10:00:00] Scheduler hit an exception: "
           + traceback_log("sglang/srt/configs/model_config.py", 383, "__init__", "ValueError",
                           "User-specified context_length (200000) is greater than the derived context_length "
                           "(131072). To allow overriding this maximum, set the env var "
                           "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"))
    diagnosis = diagnose_text(log, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None
    assert diagnosis.engine_says == (EngineWords(
        "To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"),)


def test_the_other_engines_package_in_an_instruction_stays_a_quote_and_decides_nothing() -> None:
    """SGLang's code says "Please install vllm …": a quote; the engine stays SGLang (decided by the frames),
    and the message alone never names vLLM: it is SGLang's own code speaking (ingest/engine_from_message.py)."""
    report = diagnose_text(AWQ_NEEDS_VLLM, OPTIONS)
    assert report.launch.engine == "sglang"
    words = only(instructions(report.failures[0].failure, report.launch.engine, None))
    assert words.checks == ("the pin vllm==0.9.0.1 could not be checked: the SGLang release is not known",)
    alone = diagnose_text(AWQ_NEEDS_VLLM.splitlines()[-1] + "\n", OPTIONS)
    assert alone.launch.engine == "sglang"
    words = only(instructions(alone.failures[0].failure, None, None))
    assert words.checks == ("the pin vllm==0.9.0.1 could not be checked: the log shows no engine, so no release's "
                            "requirements apply",)


def test_with_engine_words_keeps_what_a_rule_already_quoted_and_leaves_no_diagnosis_alone() -> None:
    failure = failure_of(CUDA_GRAPH_CAPTURE)
    launch = LaunchInfo(engine="sglang", engine_version="0.5.9", engine_version_source="log")
    assert with_engine_words(None, failure, launch) is None
    first = EngineWords("set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)", ("a rule's own check",))
    diagnosis = Diagnosis("r", "t", "gpu-oom", "c", basis="rule", engine_says=(first,))
    attached = with_engine_words(diagnosis, failure, launch)
    assert attached is not None and attached.engine_says[0] == first
    assert [words.text for words in attached.engine_says[1:]] == [
        "set --cuda-graph-max-bs to a smaller value (e.g., 16)",
        "disable torch compile by not using --enable-torch-compile",
        "disable CUDA graph by --disable-cuda-graph.",
    ]
    # a guessed release is not the user's: the checks then name the releases that have each flag
    guessed = with_engine_words(diagnosis, failure, LaunchInfo(engine="sglang", engine_version="0.5.23",
                                                               engine_version_source="inferred"))
    assert guessed is not None and "(the SGLang release is not known)" in guessed.engine_says[1].checks[0]


def test_secrets_in_the_engines_words_are_redacted_and_the_checks_stay_whole() -> None:
    """The quote is log text: redaction replaces a secret in it; a check naming a secret's flag keeps its words
    (`--api-key is …` would read as the flag and its value)."""
    secret = "sk-" + "q7Zr" * 8
    log = traceback_log("sglang/srt/entrypoints/http_server.py", 300, "launch_server", "ValueError",
                        f"Unauthorized. Please set --api-key {secret} on both sides.")
    report = diagnose_text(log, OPTIONS)
    launch = LaunchInfo(engine="sglang", engine_version="0.5.9", engine_version_source="user")
    # any diagnosis (no pattern names this failure; the general category will, after its own work lands)
    attached = with_engine_words(Diagnosis("x", "t", "other", "c"), report.failures[0].failure, launch)
    report = redact_report(replace(report, failures=(replace(report.failures[0], diagnosis=attached),)))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None
    (words,) = diagnosis.engine_says
    assert secret not in words.text and f"--api-key {REDACTED}" in words.text
    assert words.checks == ("`--api-key` is a flag of SGLang 0.5.9",)


# -- who says it: the engine, or the package or program that positively printed it -----------------------------------

# transformers-4.51 transformers/models/auto/configuration_auto.py (AutoConfig.from_pretrained): the unknown model type
UNKNOWN_MODEL_TYPE = traceback_log(
    "transformers/models/auto/configuration_auto.py", 1115, "from_pretrained", "ValueError",
    "The checkpoint you are trying to load has model type `qwen3` but Transformers does not recognize this "
    "architecture. You can update Transformers with the command `pip install --upgrade transformers`.",
)
# nvidia-container-toolkit's nvidia-container-cli refusing an image whose CUDA the host's driver lacks (its
# requirement check's wording), as docker prints it before any engine code runs
CONTAINER_CLI = ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver "
                 "to a newer version, or use an earlier cuda container: unknown.\n")


@pytest.mark.parametrize(("log", "speaker"), [
    (AWQ_NEEDS_VLLM, None),  # the engine's own frame: the engine says it
    (UNKNOWN_MODEL_TYPE, "transformers"),
    (UNKNOWN_MODEL_TYPE.replace("/usr/local/lib/python3.11/site-packages/transformers/",
                                "/sgl-workspace/sglang/python/sglang/"), None),  # a source checkout: not positive
    (CONTAINER_CLI, "nvidia-container-cli"),
])
def test_the_speaker_is_the_engine_unless_the_log_shows_another(log: str, speaker: str | None) -> None:
    assert {words.speaker for words in said(log)} == {speaker}


def test_reports_label_the_words_with_their_speaker() -> None:
    from logsleuth.render import OutputFormat, RenderOptions, render

    report = diagnose_text(CONTAINER_CLI, OPTIONS)
    text = render(report, RenderOptions(width=200))
    assert "*nvidia-container-cli says:* `requirement error" in render(report, RenderOptions(OutputFormat.SLACK))
    assert "nvidia-container-cli says: requirement error" in text
    assert "The engine says" not in text


def test_a_pin_written_as_a_sentence_names_its_package_not_the_linking_word() -> None:
    """SGLang's model_config.py: 'Please upgrade transformers to >= 5.0.0.' pins transformers, not a package 'to'."""
    from logsleuth.reasoning.engine_words import _package_checks

    assert list(_package_checks("Please upgrade transformers to >= 5.0.0.", "sglang", None)) == [
        "the pin transformers>=5.0.0 could not be checked: the SGLang release is not known"]
    assert list(_package_checks("requires a version >= 4.51", "sglang", None)) == []
