"""Tracebacks a paste cut before the exception line (blind split 17's largest class of misses): what the paste does
show is read honestly.  Logs written here in our own words after the engines' real wordings (each cited)."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.render import render
from logsleuth.render.options import RenderOptions

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def _report(log: str):  # type: ignore[no-untyped-def]
    return diagnose_text(log, OPTIONS)


def _diagnosis(log: str):  # type: ignore[no-untyped-def]
    report = _report(log)
    assert report.failures, log
    return report.failures[0].diagnosis


def _text(log: str) -> str:
    return " ".join(render(_report(log), RenderOptions(width=400)).split())


SGL_CUT = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 2400, in run_scheduler_process\n'
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
    '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/model_executor/model_runner.py", line 300, in load_model\n'
    "    self.model = get_model(\n"
    '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/model_loader/__init__.py"\n'
)


# 6. A launch command after a zsh theme's prompt (ohmyzsh robbyrussell: `➜  dir git:(branch) ✗ `, sgl-project/sglang#21752)
def test_launch_after_an_oh_my_zsh_prompt_is_the_launch_command() -> None:
    dirty = "➜  work git:(main) ✗ sglang serve --model-path org/some-model --tp-size 2 --port 30000\n" + SGL_CUT
    clean = "➜  work git:(dev) sglang serve --model-path org/some-model --tp-size 2 --port 30000\n" + SGL_CUT
    for log in (dirty, clean):
        assert _report(log).launch.command == "sglang serve --model-path org/some-model --tp-size 2 --port 30000"


def test_a_sentence_before_a_command_is_still_no_launch() -> None:
    log = "➜  I ran sglang serve --model-path org/some-model and it broke\n" + SGL_CUT
    assert _report(log).launch.command is None


# 7. and 5. The report says where the paste stops and what to paste; only error-looking lines are shown before the cut.
def test_a_cut_traceback_says_what_to_paste_and_shows_no_unrelated_warning() -> None:
    log = "WARNING:  the file watcher saw app.py change, reloading the app\n" + SGL_CUT
    text = _text(log)
    assert "the paste stops here, before the exception line" in text
    assert "reloading the app" not in text
    assert "none of the lines just before the cut reads as an error" in text
    assert "Paste the lines that follow the last frame" in text


def test_an_error_line_before_the_cut_is_still_shown() -> None:
    log = "WARNING: NCCL error while setting up the communicator, retrying\n" + SGL_CUT
    text = _text(log)
    assert "NCCL error while setting up the communicator" in text
    assert "none of the lines just before the cut" not in text


def test_a_whole_traceback_keeps_its_warning_lines() -> None:
    log = ("WARNING: the file watcher saw app.py change, reloading the app\n" + SGL_CUT
           + "RuntimeError: something specific broke here\n")
    text = _text(log)
    assert "reloading the app" in text
    assert "the paste stops here" not in text


# 2. A memory-budget line outranks an unrelated earlier warning (vllm/v1/worker/gpu_worker.py determine_available_memory)
def _vllm_budget(available: str) -> str:
    prefix = "(EngineCore_0 pid=100) "
    return (
        f"{prefix}WARNING 01-02 10:00:00 [marlin_utils_fp4.py:196] No native FP4 support on this GPU; FP4 quantization will use weight-only Marlin kernels.\n"
        f"{prefix}INFO 01-02 10:00:05 [gpu_model_runner.py:2007] Model loading took 70.1 GiB and 20.0 seconds\n"
        f"{prefix}INFO 01-02 10:00:09 [gpu_worker.py:276] Available KV cache memory: {available} GiB\n"
        f"{prefix}ERROR 01-02 10:00:09 [core.py:700] EngineCore failed to start.\n"
        f"{prefix}ERROR 01-02 10:00:09 [core.py:700] Traceback (most recent call last):\n"
        f'{prefix}ERROR 01-02 10:00:09 [core.py:700]   File "/opt/venv/lib/python3.12/site-pack\n'
    )


def test_a_negative_kv_cache_budget_outranks_a_quantization_warning() -> None:
    diagnosis = _diagnosis(_vllm_budget("-3.25"))
    assert diagnosis.category == "kv-cache-memory"
    assert "Available KV cache memory: -3.25 GiB" in diagnosis.root_cause
    assert "a line just before it" in diagnosis.root_cause


def test_a_positive_kv_cache_budget_is_no_memory_failure() -> None:
    assert _diagnosis(_vllm_budget("12.50")).category != "kv-cache-memory"


def test_vllm_v0_budget_line_below_zero() -> None:
    log = ("INFO 05-06 07:08:09 worker.py:250] Memory profiling takes 3.1 seconds; model weights take 60.2GiB; the rest of "
           "the memory reserved for KV Cache is -1.75GiB.\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 300, in __init__\n'
           "    self._initialize_kv_caches()\n"
           '  File "/opt/venv/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 410, in _initialize_kv_caches\n'
           "    self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)\n"
           '  File "/opt/venv/lib/python3.10/site-pack\n')
    assert _diagnosis(log).category == "kv-cache-memory"


# 3. The innermost frame a known check function (facts/frame_shapes.toml, kind = "check")
def _vllm_cut_in(file: str, line: int, function: str, call: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", line 120, in __init__\n'
        "    self._init_workers()\n"
        f'  File "/usr/local/lib/python3.10/dist-packages/vllm/{file}", line {line}, in {function}\n'
        f"    {call}\n"
    )


def test_a_cut_inside_the_dtype_check_is_the_gpu_architecture() -> None:
    # at its raise (the raise site index reads the check's template) or with no source shown (the frame's shape)
    raising = _vllm_cut_in("worker/worker.py", 231, "_check_if_gpu_supports_dtype", "raise ValueError(")
    assert _diagnosis(raising).category == "gpu-arch-unsupported"
    diagnosis = _diagnosis(raising.replace("    raise ValueError(\n", ""))
    assert diagnosis.category == "gpu-arch-unsupported"
    assert "the traceback stops inside _check_if_gpu_supports_dtype (vllm/worker/worker.py)" in diagnosis.root_cause
    assert any("--dtype half" in step for step in diagnosis.fix.steps)


def test_a_cut_inside_the_parallel_check_is_parallel_config() -> None:
    raising = _vllm_cut_in("config.py", 340, "verify_with_parallel_config", "raise ValueError(")
    assert _diagnosis(raising).category == "parallel-config"
    assert _diagnosis(raising.replace("    raise ValueError(\n", "")).category == "parallel-config"


def test_a_cut_in_a_function_of_no_check_is_no_check() -> None:
    diagnosis = _diagnosis(_vllm_cut_in("worker/worker.py", 99, "some_helper", "value = compute_something()"))
    assert "stops inside some_helper" not in diagnosis.root_cause
    assert diagnosis.category not in ("gpu-arch-unsupported", "parallel-config")


def test_settings_class_built_in_from_cli_args_is_its_post_init() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 5823, in prepare_server_args\n'
        "    return ServerArgs.from_cli_args(raw_args)\n"
        '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 5298, in from_cli_args\n'
        "    return cls(**{attr: getattr(args, attr) for attr in attrs})\n"
        '  File "<string>", line 300, in __init__\n'
    )
    diagnosis = _diagnosis(log)
    assert "__post_init__ (the settings class built in from_cli_args)" in diagnosis.root_cause
    assert any("These checks also read the GPU" in step for step in diagnosis.fix.steps)


# 4. A cut in model construction under a launch that splits the model: the divisions, the config's numbers asked for
def test_a_cut_in_model_loading_at_tp_above_one_states_the_divisions_and_asks_for_the_numbers() -> None:
    log = "$ python3 -m sglang.launch_server --model-path /models/small --tp 12 --nnodes 2 --node-rank 0\n" + SGL_CUT
    diagnosis = _diagnosis(log)
    steps = " ".join(diagnosis.fix.steps)
    assert "tensor parallelism 12" in steps and "num_attention_heads" in steps and "num_key_value_heads" in steps
    assert any("num_key_value_heads" in asked and "12" in asked for asked in diagnosis.fix.needs_input)


def test_a_cut_in_model_loading_at_tp_one_states_no_division() -> None:
    log = "$ python3 -m sglang.launch_server --model-path /models/small --tp 1\n" + SGL_CUT
    diagnosis = _diagnosis(log)
    assert "tensor parallelism" not in " ".join(diagnosis.fix.steps)


def test_a_cut_in_model_loading_under_dp_attention_states_no_head_division() -> None:
    """With --enable-dp-attention attention runs at tp / dp: the heads-by-tp step would be wrong there (review of
    cut18, medium 7)."""
    dp_attention = ("$ python3 -m sglang.launch_server --model-path /models/big --tp 8 --dp 8 --enable-dp-attention\n"
                    + SGL_CUT)
    assert "num_key_value_heads" not in " ".join(_diagnosis(dp_attention).fix.steps)


# 1. An error record above a traceback cut inside its first frame line names it (xorbitsai/inference#3020's shape)
def test_an_error_record_above_a_traceback_cut_in_its_first_frame_names_it() -> None:
    log = (
        "2025-01-01 10:00:00,000 wrapper.api.restful 1 ERROR    [address=0.0.0.0:1234, pid=5] The model worker could not load its tokenizer files from the cache.\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-pack\n'
    )
    failure = _report(log).failures[0].failure
    assert "could not load its tokenizer files" in failure.final.message
