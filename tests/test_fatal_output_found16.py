"""Failures the retired blind split 15 left unfound or misread, each read as its class (issue 28, stop 52, branch
find16).  Lines rebuilt in our own text from the printing programs' formats:

- another program's `PROG: error: …` line read as the engine's argparse error (a false failure): jq's `jq: error:
  writing output failed: Stale file handle` from a wrapper's Slurm script in front of vLLM's healthy start
  (VectorInstitute/vector-inference#195); argparse prints `usage: PROG …` then `PROG: error: …` (Lib/argparse.py
  ArgumentParser.error), its own wordings or a Python program's name mark it.  A wrapper script's shell notice
  (`line 1: python: command not found`, bash's execute_cmd.c) before the server says it is ready was survived;
- a companion tool's own record that it failed to start, no traceback: SGLang's router launcher
  (sglang_router/launch_router.py `Error starting router: {e}`, sgl-project/sglang#2796), LMCache's `LMCache ERROR:`
  records (LMCache/LMCache#2854);
- a GPU runtime's abort on a non-NVIDIA stack, no traceback: ROCr's `Memory access fault by GPU node-N (Agent handle:
  …) on address …. Reason: …` (ROCR-Runtime runtime.cpp VMFaultHandler; iree-org/wave#466), HIP's queue abort with an
  HSA status (CLR rocdevice.cpp; sgl-project/sglang#22714), torch_npu's `ERR99999` record (vllm-project/vllm-ascend#340);
- the engine's refusal retyped by hand in Chinese prose, its case and spacing changed (`SGlang only supports sm 75 and
  above` for SGLang's `RuntimeError("SGLang only supports sm75 and above.")`, opendatalab/MinerU#3416);
- SGLang's request handler logging `Error in request: {e}` (srt/entrypoints/openai/serving_base.py) over a traceback
  the paste cut before its exception line: CPython's own message names the type, not the record's level
  (sgl-project/sglang#9625);
- pydantic's ValidationError whose error list carries a process prefix its title lost (`(APIServer pid=N)   Value
  error, …`; Tencent-Hunyuan/HunyuanImage-3.0#54): the detail is the exception's."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback, without_exception_line
from tests.test_fatal_output_shapes import OPTIONS, primary

VLLM_HEALTHY_START = [
    "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:07<00:00,  1.87s/it]",
    "(EngineCore_DP0 pid=72) INFO 02-11 10:04:12 [gpu_model_runner.py:3480] Graph capturing finished in 11 secs",
    "(APIServer pid=14) INFO:     Started server process [14]",
    "(APIServer pid=14) INFO:     Waiting for application startup.",
    "(APIServer pid=14) INFO:     Application startup complete.",
]


def _failures(log: str) -> list[str]:
    return [group.failure.final.type for group in diagnose_text(log, OPTIONS).failures]


def _argparse_output(prog: str, argv: list[str], *, refuse: str | None = None) -> list[str]:
    """What CPython's argparse prints to stderr (usage, then `prog: error: …`): for argv, or for the program's own
    parser.error(refuse) (vLLM's LoRA module parser, vllm/entrypoints/openai/cli_args.py)."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--model-path")
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.suppress(SystemExit):
        if refuse is not None:
            parser.error(refuse)
        parser.parse_args(argv)
    return stderr.getvalue().strip().splitlines()


@pytest.mark.parametrize("tool_line", [
    "jq: error: writing output failed: Stale file handle",
    "jq: error: Could not open status.json: No such file or directory",
    "git: error: unknown option `depth'",
])
def test_another_programs_error_line_before_a_healthy_start_is_no_failure(tool_line: str) -> None:
    assert _failures("\n".join([tool_line, *VLLM_HEALTHY_START]) + "\n") == []


def test_another_programs_error_line_alone_is_not_an_argparse_error() -> None:
    assert "UsageError" not in _failures("jq: error: writing output failed: Stale file handle\n")


@pytest.mark.parametrize("prog", ["launch_server.py", "vllm serve", "vllm", "my_eval_tool"])
def test_argparses_own_error_stays_the_failure(prog: str) -> None:
    printed = _argparse_output(prog, ["--model-path", "m", "--tp-size", "2"])
    assert printed[-1] == f"{prog}: error: unrecognized arguments: --tp-size 2"
    assert primary("\n".join(printed) + "\n")[:2] == ("UsageError", "unrecognized arguments: --tp-size 2")
    assert primary(printed[-1] + "\n")[0] == "UsageError"  # its usage line not pasted


@pytest.mark.parametrize("prog", ["vllm serve", "api_server.py", "lora_tool"])
def test_a_programs_own_parser_error_under_its_usage_line_stays_the_failure(prog: str) -> None:
    printed = _argparse_output(prog, [], refuse="Invalid JSON format for --lora-modules: sql-lora")
    assert primary("\n".join(printed) + "\n")[:2] == ("UsageError", "Invalid JSON format for --lora-modules: sql-lora")


def test_a_python_programs_parser_error_without_its_usage_line_stays_the_failure() -> None:
    printed = _argparse_output("vllm serve", [], refuse="Invalid JSON format for --lora-modules: sql-lora")
    assert primary(printed[-1] + "\n")[0] == "UsageError"


@pytest.mark.parametrize("notice", [
    "/bin/bash: line 1: python: command not found",
    "start.sh: line 12: python3: command not found",
])
def test_a_scripts_shell_notice_before_a_healthy_start_was_survived(notice: str) -> None:
    assert _failures("\n".join([notice, *VLLM_HEALTHY_START]) + "\n") == []
    assert _failures("\n".join([*VLLM_HEALTHY_START, notice]) + "\n") == ["command not found"]


ROUTER_START_FAILED = (
    "[Router (Python)] 2025-01-09 00:28:10 - ERROR - Error starting router: argument 'worker_urls': 'NoneType' object "
    "cannot be converted to 'Sequence'"
)


def test_the_routers_record_that_it_failed_to_start_is_the_routers_failure() -> None:
    kind, message, category = primary("$ python -m sglang_router.launch_router\n" + ROUTER_START_FAILED + "\n")
    assert kind == "sgl-router failed"
    assert message.startswith("Error starting router: argument 'worker_urls'")
    assert category == "router"


def test_lmcaches_record_that_its_engine_failed_to_start_is_found() -> None:
    log = "\n".join([
        "[2026-03-23 13:46:57,783] LMCache INFO: Loading LMCache config file lmcache-config.yaml (utils.py:66)",
        "[2026-03-23 13:46:58,101] LMCache ERROR: Failed to initialize the LMCache engine: the remote url is not set "
        "(manager.py:212)",
    ]) + "\n"
    kind, message, _ = primary(log)
    assert kind == "LMCache failed"
    assert message.startswith("Failed to initialize the LMCache engine")


@pytest.mark.parametrize("record", [
    "[Router (Python)] 2025-01-09 00:29:41 - ERROR - Request to http://10.0.0.3:30000/generate timed out",
    "[2026-03-23 13:47:01,002] LMCache ERROR: Retrieve of a chunk from the remote backend timed out (remote.py:90)",
    "[Router (Python)] 2025-01-09 00:29:41 - INFO - Error starting router is retried",
])
def test_a_companion_tools_record_of_a_request_it_survived_is_no_failure(record: str) -> None:
    assert _failures(record + "\n") == []


ROCR_FAULT = "Memory access fault by GPU node-2 (Agent handle: 0x5a0d7202eab0) on address 0x7d35a0c00000. Reason: Unknown."


@pytest.mark.parametrize("paste", [
    f"The server crashes with this:\n`{ROCR_FAULT}`\n",
    f"[2025-07-31 08:12:44] Decode batch. #running-req: 1, #token: 812, gen throughput (token/s): 41.2\n{ROCR_FAULT}\n",
    "It dies with: Memory access fault by GPU node-1 on address (nil). Reason: Page not present or supervisor "
    "privilege. Any idea?\n",
])
def test_rocms_memory_access_fault_is_the_failure(paste: str) -> None:
    kind, message, category = primary(paste)
    assert kind == "GPU memory access fault"
    assert message.startswith("Memory access fault by GPU node-")
    assert category == "illegal-memory-access"


def test_hips_queue_abort_with_an_hsa_status_is_the_failure() -> None:
    line = (":0:rocdevice.cpp            :3586: 1183357978 us:  Callback: Queue 0x7f35e8100000 aborting with error : "
            "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016")
    kind, message, _ = primary("[2026-04-20 10:01:12 TP0] Prefill batch. #new-seq: 1\n" + line + "\n")
    assert (kind, message) == ("HSA error", "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware "
                                            "exception. code: 0x1016")


def test_torch_npus_error_record_alone_is_the_failure_and_a_traceback_outranks_it() -> None:
    record = "[ERROR] 2025-03-16-11:32:36 (PID:80511, Device:0, RankID:-1) ERR99999 UNKNOWN applicaiton exception"
    assert primary(record + "\n")[:2] == ("NPU error", "ERR99999 UNKNOWN applicaiton exception")
    printed = real_traceback("""
        import types
        torch_npu = types.ModuleType("torch_npu")
        torch_npu._npu_flash_attention
    """)
    assert primary(printed + record + "\n")[0] == "AttributeError"


@pytest.mark.parametrize("said", [
    "报错信息：SGlang only supports sm 75 and  above \n",
    "运行时报错：“sglang only supports SM75 and above”\n",
])
def test_the_engines_refusal_retyped_in_chinese_prose_is_typed_from_its_raise_site(said: str) -> None:
    kind, message, category = primary(said)
    assert (kind, message) == ("RuntimeError", "SGLang only supports sm75 and above.")
    assert category == "gpu-arch-unsupported"


def test_a_sentence_that_only_names_the_refusal_is_no_failure() -> None:
    assert _failures("文档里写着 SGLang only supports sm 75 and above，我们的卡是 A100。\n") == []


def test_a_request_handlers_logged_error_over_a_cut_traceback_is_typed_by_cpythons_message() -> None:
    printed = real_traceback("""
        class TiktokenTokenizer:
            def apply_chat_template(self, messages, tokenize=False):
                return messages

        def _apply_jinja_template(tokenizer):
            return tokenizer.apply_chat_template([], reasoning_effort="low")

        _apply_jinja_template(TiktokenTokenizer())
    """)
    message = printed.strip().splitlines()[-1].split(": ", 1)[1]
    log = f"[2025-08-26 10:38:03] Error in request: {message}\n" + without_exception_line(printed)
    kind, shown, _ = primary(log)
    assert (kind, shown) == ("TypeError", message)
    assert "ERROR" not in kind


VALIDATION_DETAIL = (
    "  Value error, Model architectures ['HunyuanImage3ForCausalMM'] are not supported for now. Supported "
    "architectures: dict_keys(['ApertusForCausalLM', 'AquilaModel', 'AquilaForCausalLM'])"
)


@pytest.mark.parametrize("prefix", ["(APIServer pid=619068) ", "(pid=53316) "])
def test_a_validation_errors_detail_under_a_process_prefix_its_title_lost_is_its_message(prefix: str) -> None:
    log = "\n".join([
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
        prefix + VALIDATION_DETAIL,
    ]) + "\n"
    kind, message, category = primary(log)
    assert kind == "pydantic_core._pydantic_core.ValidationError"
    assert "Value error, Model architectures ['HunyuanImage3ForCausalMM'] are not supported for now." in message
    assert category == "unsupported-architecture"


def test_a_prefixed_line_after_a_validation_error_that_is_no_list_line_stays_its_own() -> None:
    log = "\n".join([
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
        "  Value error, Invalid repository ID or local directory specified: '/models/missing'.",
        "(APIServer pid=619068) INFO 09-29 10:01:12 [api_server.py:1839] vLLM API server version 0.10.2",
    ]) + "\n"
    report = diagnose_text(log, OPTIONS)
    assert "api_server" not in report.failures[0].failure.final.message


def test_another_processs_frame_right_after_a_validation_title_stays_on_its_own_stream() -> None:
    printed = real_traceback("""
        def load_weights():
            raise RuntimeError("weights shard 3 is missing")

        load_weights()
    """).strip().splitlines()
    log = "\n".join([
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
        *(f"(EngineCore_DP0 pid=7) {text}" for text in printed[1:]),
    ]) + "\n"
    report = diagnose_text(log, OPTIONS)
    titled = [group.failure.final for group in report.failures if group.failure.final.type.endswith("ValidationError")]
    assert titled and all("File " not in block.message for block in titled)


def test_a_runtime_abort_line_stays_the_context_of_the_failure_after_it() -> None:
    line = (":0:rocdevice.cpp            :3586: 1183357978 us:  Callback: Queue 0x7f35e8100000 aborting with error : "
            "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016")
    printed = real_traceback("""
        def capture():
            raise RuntimeError("HIP error: an illegal memory access was encountered")

        capture()
    """)
    report = diagnose_text(line + "\n" + printed, OPTIONS)
    failure = report.failures[0].failure
    assert failure.final.type == "RuntimeError"
    assert any("HSA_STATUS_ERROR_EXCEPTION" in text for text in failure.context)
