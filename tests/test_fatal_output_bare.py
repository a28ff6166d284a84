"""Messages pasted without their exception type, traceback or engine marker (issue 28, stop 44, branch h-bare: the
family behind most "not found" misses of blind splits 5 to 7).  Lines rebuilt in our own text from the programs'
formats; each names the thread whose shape it stands for:

- a package's message (transformers' AutoConfig refusing a model_type) printed by a wrapper as `An error occurred:
  {e}` with its backticks lost (runpod-workers/worker-vllm#114), or quoted in bold inside a sentence
  (Tencent-Hunyuan/Hunyuan-4B#2): found from the package's raise site index (its `messages/` members), typed from the
  statement; no engine named by it (any program that runs transformers raises it);
- an engine's message right after CJK words (`…之后报错No available memory for the cache blocks. …`,
  vllm-project/vllm#18124), the line after the launch command;
- the loader's `undefined symbol:` quoted with a demangled C++ name and no library (sgl-project/sglang#30562);
- flash-attention's C++ CUDA check, `CUDA error (<kernel source>:<line>): <CUDA's text>`, the last thing the process
  printed (sgl-project/sglang#38980, Comfy-Org/ComfyUI#9116).

And the controls a paste without a failure must stay: healthy starts, metrics, warnings, a benchmark table, a sentence
quoting a healthy line or a word of no index."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.facts.engine_messages import engines_raising, package_raised_as, raised_as
from logsleuth.facts.message_templates import opening_matched, template_matches
from tests.test_fatal_output_shapes import OPTIONS, primary

# transformers' message (models/auto/configuration_auto.py, AutoConfig.from_pretrained), a made-up model_type
UNKNOWN_MODEL_TYPE = ("The checkpoint you are trying to load has model type {} but Transformers does not recognize "
                      "this architecture. This could be because of an issue with the checkpoint, or because your "
                      "version of Transformers is out of date.")


def test_a_package_message_behind_a_wrappers_prefix_is_typed_from_the_package_statement() -> None:
    line = "An error occurred: " + UNKNOWN_MODEL_TYPE.format("zeta3_vl")  # its backticks lost
    kind, message, category = primary(line + "\n")
    assert kind == "ValueError"
    assert message.startswith("The checkpoint you are trying to load has model type zeta3_vl")
    assert category == "dependency-version"


def test_a_package_message_names_no_engine() -> None:
    report = diagnose_text("An error occurred: " + UNKNOWN_MODEL_TYPE.format("zeta3_vl") + "\n", OPTIONS)
    assert report.failures and report.launch.engine is None
    assert engines_raising(None, UNKNOWN_MODEL_TYPE.format("`zeta3_vl`")) == set()
    assert raised_as(UNKNOWN_MODEL_TYPE.format("`zeta3_vl`"), cut=True) is None  # no engine's statement
    assert package_raised_as(UNKNOWN_MODEL_TYPE.format("`zeta3_vl`")) is None  # the whole template goes on past this
    assert package_raised_as(UNKNOWN_MODEL_TYPE.format("`zeta3_vl`"), cut=True) == "ValueError"


def test_a_message_quoted_in_bold_inside_a_sentence_is_the_failure() -> None:
    sentence = ('With the newest release I still hit the error "**' + UNKNOWN_MODEL_TYPE.format("`zeta_dense`")
                .replace("architecture. ", "architecture.** ", 1) + '"')
    log = "\n".join([sentence, "", "$ vllm serve /data/zeta-4b --port 8000",
                     "INFO 08-06 14:54:36 [api_server.py:1755] vLLM API server version 0.10.0"]) + "\n"
    kind, message, category = primary(log)
    assert (kind, category) == ("ValueError", "dependency-version")
    assert "zeta_dense" in message


def test_a_sentence_quoting_text_no_index_holds_is_no_failure() -> None:
    log = ('I get the error "**the model answers in the wrong language after a few turns**" with every prompt.\n'
           "INFO 08-06 14:54:36 [api_server.py:1755] vLLM API server version 0.10.0\n")
    assert not diagnose_text(log, OPTIONS).failures


def test_an_engine_message_right_after_cjk_words_is_read_after_the_launch_command() -> None:
    log = ("命令：vllm serve Qwen/Qwen2.5-VL-3B-Instruct --gpu-memory-utilization 0.3\n"
           "加载模型之后报错No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
           "initializing the engine.\n")
    kind, message, category = primary(log)
    assert (kind, category) == ("ValueError", "kv-cache-memory")
    assert message.startswith("No available memory for the cache blocks.")


def test_a_demangled_undefined_symbol_quoted_in_a_sentence_is_an_import_error() -> None:
    log = ("After upgrading torch, `import sgl_kernel` fails with `undefined symbol: c10::detail::torchCheckFail(char "
           "const*, char const*, unsigned int, char const*)` on every GPU.\n")
    kind, message, category = primary(log)
    assert kind == "ImportError"
    assert message == "undefined symbol: c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*)"
    assert category == "dependency-version"


@pytest.mark.parametrize("line", [
    "The release notes say the undefined symbol: problem is gone now.",
    "undefined symbol: see the FAQ",
])
def test_undefined_symbol_without_a_cxx_name_is_no_failure(line: str) -> None:
    assert not diagnose_text(line + "\n", OPTIONS).failures


@pytest.mark.parametrize("place", [
    "_deps/repo-flash-attention-src/hopper/flash_fwd_launch_template.h:203",
    "C:/a/xformers/xformers/third_party/flash-attention/hopper\\flash_fwd_launch_template.h:188",
])
def test_a_kernels_cuda_check_is_the_failure_of_a_paste_with_no_other(place: str) -> None:
    log = f"Capturing CUDA graphs (decode, FULL):  40%|####      | 14/35\nCUDA error ({place}): invalid argument\n"
    kind, message, category = primary(log)
    assert kind == "CUDA error"
    assert message == f"({place}): invalid argument"
    assert category == "gpu-arch-unsupported"  # (the FA3 `hopper/` kernels' words)


def test_a_cuda_error_said_in_words_is_not_a_kernel_check() -> None:
    assert not diagnose_text("We saw a CUDA error (see the issue above) once, then it went away.\n", OPTIONS).failures


CONTROLS = {
    "vllm-profiling": [
        "Loading model weights took 14.9888 GB",
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB "
        "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90",
        "# GPU blocks: 1952, # CPU blocks: 2048",
        "Maximum concurrency for 20000 tokens per request: 1.56x",
    ],
    "vllm-routes": [
        "(APIServer pid=41) INFO 01-19 22:02:19 [api_server.py:946] Starting vLLM API server 0 on http://0.0.0.0:9256",
        "(APIServer pid=41) INFO 01-19 22:02:19 [launcher.py:46] Route: /docs, Methods: GET, HEAD",
    ],
    "sglang-decode": [
        "Decode batch. #running-req: 1010, #token: 55006, token usage: 0.93, gen throughput (token/s): 1397.13, "
        "#queue-req: 12279",
        "why is the throughput only 1397?",
    ],
    "bench-table": [
        "============ Serving Benchmark Result ============",
        "Backend:                                 sglang-oai-chat",
        "Successful requests:                     768",
        "Output token throughput (tok/s):         9.56",
    ],
    "vllm-warnings": [
        "WARNING 10-22 10:11:02 [config.py:3683] Current vLLM config is not set.",
        "WARNING 10-22 10:11:02 [config.py:3683] Current vLLM config is not set.",
    ],
    "sglang-start-404": [
        "[2024-12-13 01:45:02 TP0] max_total_num_tokens=56524, max_prefill_tokens=16384, max_running_requests=2049",
        "[2024-12-13 01:45:02] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        '[2024-12-13 01:45:26] INFO:     127.0.0.1:40418 - "GET / HTTP/1.1" 404 Not Found',
    ],
    "quoted-healthy-line": [
        'After "**Uvicorn running on http://0.0.0.0:30000**" I get no error, the request just hangs.',
    ],
    "cjk-question": [
        "请问这个报错Maximum concurrency for 20000 tokens per request是什么意思？",
    ],
}


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_pastes_without_a_failure_stay_without_one(name: str) -> None:
    assert not diagnose_text("\n".join(CONTROLS[name]) + "\n", OPTIONS).failures


def test_a_template_matches_a_message_whose_backticks_a_paste_lost_or_added() -> None:
    template = "The checkpoint you are trying to load has model type `{}` but Transformers does not recognize this architecture."
    assert template_matches(template, "The checkpoint you are trying to load has model type qwen2_vl but Transformers does "
                                      "not recognize this architecture.")
    assert template_matches(template.replace("`", ""), "The checkpoint you are trying to load has model type `qwen2_vl` "
                                                       "but Transformers does not recognize this architecture.")
    assert opening_matched(template, "The checkpoint you are trying to load has model type qwen2_vl but Transf") > 24
    assert not template_matches(template, "The checkpoint you are trying to load has no model type at all.")


def test_an_indented_bold_exception_line_in_prose_is_the_failure() -> None:
    log = ("and this error occurs:\n\n  **ValueError: Bfloat16 is only supported on GPUs with compute capability of at "
           "least 8.0. Your Tesla V100-SXM2-32GB GPU has compute capability 7.0.**\n\ncan a V100 not run it?\n")
    kind, message, category = primary(log)
    assert (kind, category) == ("ValueError", "gpu-arch-unsupported")
    assert message.endswith("has compute capability 7.0.")


def test_indented_code_with_a_power_operator_is_no_bold_line() -> None:
    from logsleuth.ingest.normalize import normalize_text

    lines = normalize_text("def f(x):\n    return x ** 2 + y **\n")
    assert lines[1].text == "    return x ** 2 + y **"


@pytest.mark.parametrize("line", [
    "Assertion `srcIndex < srcSelectDimSize` failed.",  # the part a paste kept of princeton-nlp/MeZO#20's lines
    "../aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectSmallIndex: block: [5,0,0], thread: [6,0,0] Assertion "
    "`srcIndex < srcSelectDimSize` failed.",
])
def test_a_kernels_device_assert_line_alone_is_a_device_assert(line: str) -> None:
    kind, message, category = primary(line + "\n")
    assert kind == "device-side assert"
    assert message.endswith("Assertion `srcIndex < srcSelectDimSize` failed.")
    assert category == "device-assert"


def test_a_host_c_assert_is_no_device_assert() -> None:
    # glibc's assert closes the condition with a quote, not a backtick: a C program's abort (native_asserts.py), not a
    # kernel's device assert
    kind, message, category = primary("python: main.c:12: main: Assertion `x > 0' failed.\n")
    assert kind == "Assertion failed"
    assert message == "main.c:12: main: Assertion `x > 0' failed."
    assert category != "device-assert"


@pytest.mark.parametrize(("said", "category"), [
    ("device-side assert triggered", "device-assert"),
    ("an illegal memory access was encountered", "illegal-memory-access"),
])
def test_torchs_cuda_error_alone_without_its_type_is_the_failure(said: str, category: str) -> None:
    kind, message, found = primary(f"Sending the 9th request…\nCUDA error: {said}\n")
    assert (kind, message, found) == ("CUDA error", f"CUDA error: {said}", category)


def test_a_backtick_quoted_kernel_package_message_in_a_sentence_without_the_word_error() -> None:
    log = "sglang fails with `flash_attn at sgl-kernel is only supported on sm90 and above` on my A100\n"
    kind, message, category = primary(log)
    assert (kind, category) == ("NotImplementedError", "gpu-arch-unsupported")  # sgl-kernel's flash_attn.py
    assert message == "flash_attn at sgl-kernel is only supported on sm90 and above"


def test_a_sentence_quoting_a_command_is_no_failure() -> None:
    assert not diagnose_text("I tried `pip install flash_attn` and then `python -m sglang.launch_server` fails.\n",
                             OPTIONS).failures


@pytest.mark.parametrize("line", [
    "block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.",
    "/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: block: [0,0,0], thread: "
    "[0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.",
])
def test_a_device_assert_whose_condition_holds_backticks_or_whose_line_was_wrapped(line: str) -> None:
    kind, message, category = primary(line + "\n")
    assert kind == "device-side assert"
    assert message.endswith("`inf`, `nan` or element < 0` failed.")
    assert category not in (None, "unclassified")  # (the table's row for this message: categories.toml)


def test_the_loaders_line_a_paste_wrapped_at_the_symbol_is_an_import_error() -> None:
    log = "python -c 'import sgl_kernel'\ncommon_ops.abi3.so: undefined symbol:\n_ZN3c104cuda9SetDeviceEa\n"
    kind, message, category = primary(log)
    assert (kind, message, category) == ("ImportError", "common_ops.abi3.so: undefined symbol:", "dependency-version")


def test_a_demangled_symbol_wrapped_inside_its_arguments_keeps_its_name() -> None:
    log = ("`import sgl_kernel` fails with `undefined symbol: c10::MessageLogger::MessageLogger(char const*, int, int,\n"
           "bool)` on the wheel\n")
    kind, message, _ = primary(log)
    assert (kind, message) == ("ImportError", "undefined symbol: c10::MessageLogger::MessageLogger")
