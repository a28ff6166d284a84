"""The review of the cut-traceback work (split 17's cut class): a budget line is evidence only for its own start-up,
the lines a diagnosis rests on are shown, check functions are read by the statement the frame ran.  Logs written here
in our own words after the engines' real wordings (each cited)."""

from __future__ import annotations

from tests.test_cut_traceback18 import _report, _text


def _diagnosis(log: str):  # type: ignore[no-untyped-def]
    """The last failure's diagnosis (these logs print an earlier launch's failure first)."""
    report = _report(log)
    assert report.failures, log
    return report.failures[-1].diagnosis


# 1. A budget line (vllm/v1/worker/gpu_worker.py determine_available_memory, 0.10) is its own start-up's evidence only.
FAILED_START = (
    "$ vllm serve org/m --max-model-len 131072\n"
    "INFO 01-02 10:00:00 [api_server.py:100] vLLM API server version 0.10.1\n"
    "INFO 01-02 10:00:09 [gpu_worker.py:276] Available KV cache memory: -3.25 GiB\n"
    "ERROR 01-02 10:00:09 [core.py:700] EngineCore failed to start.\n"
)
SERVING = (
    "$ vllm serve org/m --max-model-len 8192\n"
    "INFO 01-02 10:10:00 [api_server.py:100] vLLM API server version 0.10.1\n"
    "INFO 01-02 10:10:09 [gpu_worker.py:276] Available KV cache memory: 12.00 GiB\n"
    "INFO 01-02 10:10:19 [api_server.py:1800] Starting vLLM API server on http://0.0.0.0:8000\n"
)
BUSY_LOOP = (
    "ERROR 01-02 10:20:10 [core.py:700] EngineCore encountered a fatal error.\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 700, in run_engine_core\n'
    "    engine_core.run_busy_loop()\n"
    '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 1500, in execute_model\n'
    "    output = self.model(input_ids)\n"
)
ILLEGAL = "RuntimeError: CUDA error: an illegal memory access was encountered\n"


def test_a_budget_line_of_an_earlier_launch_names_no_later_failure() -> None:
    for log in (FAILED_START + SERVING + BUSY_LOOP + ILLEGAL, FAILED_START + SERVING + BUSY_LOOP):
        diagnosis = _diagnosis(log)
        assert diagnosis.category != "kv-cache-memory", log
        assert "-3.25 GiB" not in _text(log)


def test_a_budget_line_names_no_whole_exception_of_another_matter() -> None:
    # same start-up, no launch or serving line between: the exception line is the failure's own
    log = "INFO 01-02 10:00:09 [gpu_worker.py:276] Available KV cache memory: -3.25 GiB\n" + BUSY_LOOP + ILLEGAL
    assert _diagnosis(log).category == "illegal-memory-access"


def test_a_later_budget_line_of_the_same_process_replaces_the_earlier() -> None:
    log = ("INFO 01-02 10:00:09 [gpu_worker.py:276] Available KV cache memory: -3.25 GiB\n"
           "INFO 01-02 10:05:09 [gpu_worker.py:276] Available KV cache memory: 4.00 GiB\n" + BUSY_LOOP)
    assert _diagnosis(log).category != "kv-cache-memory"


def test_a_budget_line_still_names_a_whole_traceback_in_kv_cache_sizing() -> None:
    log = ("INFO 01-02 10:00:09 [gpu_worker.py:276] Available KV cache memory: -3.25 GiB\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 80, in __init__\n'
           "    self._initialize_kv_caches(vllm_config)\n"
           '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 160, in _initialize_kv_caches\n'
           "    available_gpu_memory = self.model_executor.determine_available_memory()\n"
           "RuntimeError: the memory profile found no room\n")
    assert _diagnosis(log).category == "kv-cache-memory"


# 2. The lines before a cut that read as an error: by words the view's own list lacked, by the record's level, and any
# line the diagnosis quotes.  (NVIDIA's Xid 79 log line; vLLM's worker watchdog records; vllm-0.4 llm_engine.py's
# '# GPU blocks: %d, # CPU blocks: %d'.)
SGL_CUT = (
    "[2025-01-01 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 2400, in event_loop_normal\n'
    "    result = self.run_batch(batch)\n"
    '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 2500, in run_batch\n'
    "    logits_output, next_token_ids = self.tp_worker.forward_batch_generation(\n"
)


def _shown_before_cut(above: str) -> str:
    text = _text(above + SGL_CUT)
    assert "the paste stops here" in text
    return text


def test_an_xid_line_before_a_cut_is_shown() -> None:
    text = _shown_before_cut("[2025-01-01 10:00:00] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n")
    assert "Log lines just before it: NVRM: Xid" in text
    assert "none of the lines just before the cut" not in text


def test_a_segfault_line_before_a_cut_is_shown() -> None:
    text = _shown_before_cut("WARNING 01-02 10:00:09 [worker.py:500] [rank1]: Segmentation fault (core dumped) in NCCL\n")
    assert "Log lines just before it: [rank1]: Segmentation fault (core dumped) in NCCL" in text


def test_an_error_record_without_error_words_before_a_cut_is_shown() -> None:
    text = _shown_before_cut("WARNING 01-02 10:00:03 [utils.py:10] HF_TOKEN not set, you may be rate limited\n"
                             "ERROR 01-02 10:00:04 [watchdog.py:20] GPU 1 stopped responding to the watchdog after 300 s\n")
    assert "Log lines just before it: GPU 1 stopped responding to the watchdog" in text
    assert "rate limited" not in text


def test_a_budget_line_the_diagnosis_reads_is_shown() -> None:
    log = ("INFO 01-02 10:00:20 llm_engine.py:300] # GPU blocks: 0, # CPU blocks: 2048\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 120, in __init__\n'
           "    self._init_cache()\n"
           '  File "/opt/venv/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 300, in _init_cache\n'
           "    raise_if_cache_size_invalid(num_gpu_blocks)\n")
    text = _text(log)
    assert _diagnosis(log).category == "kv-cache-memory"
    assert "Log lines just before it: # GPU blocks: 0" in text
    assert "none of the lines just before the cut" not in text


# 3. A check function is the check only at its raise or assert: at another statement, the callee failed.
def _vllm_cut_in(file: str, line: int, function: str, call: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", line 120, in __init__\n'
        "    self._init_workers()\n"
        f'  File "/usr/local/lib/python3.10/dist-packages/vllm/{file}", line {line}, in {function}\n'
        f"    {call}\n"
    )


def test_a_dtype_check_cut_at_the_device_query_is_no_dtype_refusal() -> None:
    diagnosis = _diagnosis(_vllm_cut_in("worker/worker.py", 231, "_check_if_gpu_supports_dtype",
                                        "compute_capability = torch.cuda.get_device_capability()"))
    assert diagnosis.category != "gpu-arch-unsupported"
    assert not any("--dtype half" in step for step in diagnosis.fix.steps)


def test_a_parallel_check_cut_reading_a_config_field_is_no_divisibility_refusal() -> None:
    diagnosis = _diagnosis(_vllm_cut_in("config.py", 340, "verify_with_parallel_config",
                                        "total_num_attention_heads = self.hf_text_config.num_attention_heads"))
    assert diagnosis.category != "parallel-config"


def test_a_check_function_with_no_source_shown_is_still_the_check() -> None:
    log = _vllm_cut_in("worker/worker.py", 231, "_check_if_gpu_supports_dtype", "x").replace("    x\n", "")
    assert _diagnosis(log).category == "gpu-arch-unsupported"


# 4. vllm/config.py CacheConfig.verify_with_parallel_config checks the swap space (0.5.5-0.9.2 'Too large swap space.')
def test_the_cache_configs_parallel_check_is_the_swap_space() -> None:
    log = ("$ vllm serve org/m --tensor-parallel-size 8 --swap-space 64\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.10/dist-packages/vllm/config.py", line 3800, in __post_init__\n'
           "    self.cache_config.verify_with_parallel_config(self.parallel_config)\n")
    diagnosis = _diagnosis(log)
    assert diagnosis.category == "host-memory"
    assert "verify_with_parallel_config, called from __post_init__" in diagnosis.root_cause
    assert "attention heads" not in diagnosis.root_cause


def test_the_model_configs_parallel_check_is_still_the_heads() -> None:
    log = ("Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.10/dist-packages/vllm/config.py", line 3800, in __post_init__\n'
           "    self.model_config.verify_with_parallel_config(self.parallel_config)\n")
    diagnosis = _diagnosis(log)
    assert diagnosis.category == "parallel-config"
    assert "verify_with_parallel_config, called from __post_init__" in diagnosis.root_cause


# 5. vllm/platforms/xpu.py check_if_supports_dtype refuses by Intel's rules, not CUDA's compute capability
def test_an_xpu_dtype_check_gets_no_cuda_compute_capability() -> None:
    diagnosis = _diagnosis(_vllm_cut_in("platforms/xpu.py", 150, "check_if_supports_dtype", "raise ValueError("))
    assert "compute capability" not in diagnosis.root_cause
    assert not any("compute capability" in step for step in diagnosis.fix.steps)


# 9. `✗` ends a prompt only after robbyrussell's `git:(branch)`: alone it is a checklist's mark
def test_a_checklist_cross_is_no_prompt() -> None:
    log = ("Tried so far:\n- ✗ vllm serve org/m --enforce-eager (crashes)\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 700, in run_engine_core\n')
    command = _report(log).launch.command
    assert command is None or "(crashes)" not in command
