"""Shapes of fatal output the last blind split missed (issue 28; task S of stop 38): an exception line a reader
retyped in lower case, with no traceback.  CPython prints an exception's class name as the class spells it, so
a lower-cased `valueerror: …` is a person's retyping: its type is restored from the classes logsleuth knows, and
the line is the failure only of a paste that shows no other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.tracebacks.grammar import retyped_failure
from logsleuth.tracebacks.scanner import MAX_RECORD_LOOKUPS

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def primary(log: str) -> tuple[str, str, str | None]:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, log
    group = report.failures[0]
    block = group.failure.exceptions[-1]
    return block.type, " ".join(block.message.split()), group.diagnosis.category if group.diagnosis else None


@pytest.mark.parametrize(
    ("line", "restored"),
    [
        ("valueerror: loading /models/internvl2-8b requires you to execute the configuration file in that repo",
         "ValueError: loading /models/internvl2-8b requires you to execute the configuration file in that repo"),
        ("runtimeerror: cuda error: out of memory", "RuntimeError: cuda error: out of memory"),
        ("then torch.outofmemoryerror: cuda out of memory. tried to allocate 20.00 mib",
         "torch.OutOfMemoryError: cuda out of memory. tried to allocate 20.00 mib"),
        ("modulenotfounderror: no module named 'vllm._c'", "ModuleNotFoundError: no module named 'vllm._c'"),
    ],
)
def test_a_lower_cased_exception_line_gets_its_type_back(line: str, restored: str) -> None:
    assert retyped_failure(line) == restored


@pytest.mark.parametrize("line", [
    "rendererror: the widget failed",  # no class logsleuth knows
    "error: something",  # no type
    "ValueError: already typed",  # the grammar reads it as it is
])
def test_only_a_known_type_is_restored(line: str) -> None:
    assert retyped_failure(line) is None


def test_a_retyped_line_alone_is_the_failure_and_its_words_name_the_category() -> None:
    log = ("INFO 05-01 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
           "the server stops right after loading, the error is:\n"
           "runtimeerror: cuda error: out of memory\n")
    assert primary(log) == ("RuntimeError", "cuda error: out of memory", "gpu-oom")


def test_a_retyped_line_yields_to_a_real_traceback() -> None:
    log = ("I also saw runtimeerror: cuda error: out of memory once, but now:\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 14, in <module>\n'
           "    launch_server(server_args)\n"
           "KeyError: 'qwen3'\n")
    assert primary(log)[:2] == ("KeyError", "'qwen3'")


def test_prose_in_lower_case_is_no_failure() -> None:
    log = ("INFO 05-01 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
           "the server started, no error: it answers requests\n"
           "INFO:     Application startup complete.\n")
    assert not diagnose_text(log, OPTIONS).failures


# -- an engine's error text in a wrapper's ERROR record, no traceback ------------------------------------------------------
# Xinference logs the exception its actor pool re-raised under its own logger, with the pool's tag
# (xinference/api/restful_api.py: `Chat completion stream got an error: [address=…, pid=…] …`, xorbitsai/inference#2126
# shows the logger's record format); LLaMA-Factory and verl log str(exc) under theirs.  The messages are the engines'
# own (vllm/engine/arg_utils.py and vllm/inputs/preprocess.py, sglang/srt/managers/tokenizer_manager.py).

XINFERENCE_RECORD = "2025-05-03 23:03:33,244 xinference.api.restful_api 141 ERROR    "
BF16 = ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-PCIE-32GB GPU has "
        "compute capability 7.0. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.")
SGLANG_INPUT = "The input (5000 tokens) is longer than the model's context length (4096 tokens)."
VLLM_PROMPT = ("The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` "
               "is no smaller than the number of text tokens.")


@pytest.mark.parametrize(("record", "message", "category"), [
    (f"{XINFERENCE_RECORD}[address=0.0.0.0:37357, pid=482] {BF16}", BF16, "gpu-arch-unsupported"),
    (f"{XINFERENCE_RECORD}Chat completion stream got an error: [address=0.0.0.0:37357, pid=482] {SGLANG_INPUT}", SGLANG_INPUT,
     "context-length"),
    (f"[2025-05-03 23:03:33] ERROR llamafactory.chat.vllm_engine: {VLLM_PROMPT}", VLLM_PROMPT, "context-length"),
    (f"(TaskRunner pid=2211) 2025-05-03 23:03:33,244 - verl.workers.rollout - ERROR - {VLLM_PROMPT}", VLLM_PROMPT, "context-length"),
])
def test_an_engines_error_text_in_an_error_record_is_the_failure(record: str, message: str, category: str) -> None:
    assert primary(f"{record}\n") == ("ValueError", message, category)


@pytest.mark.parametrize("record", [
    f"{XINFERENCE_RECORD}Failed to load model qwen2.5-instruct-0",  # a report, not the engine's error
    f"2025-05-03 23:03:33,244 xinference.api.restful_api 141 INFO     {SGLANG_INPUT}",  # not an error record
    "[2025-05-03 23:03:33] ERROR llamafactory.chat: the request was cancelled by the client before it finished",
])
def test_other_records_are_no_failure(record: str) -> None:
    assert not diagnose_text(f"{record}\n", OPTIONS).failures


def test_a_long_log_of_status_words_leaves_the_error_record_read() -> None:
    # The scanner reads at most MAX_RECORD_LOOKUPS records in the raise site index; a line that only holds a status
    # word (`code`, `status`) reads nothing, so it must not spend that budget before the record at the log's end.
    healthy = "".join(f"[2025-05-03 23:03:{n % 60:02d}] INFO worker: status ok, code 0, step {n}\n"
                      for n in range(MAX_RECORD_LOOKUPS + 44))
    log = f"{healthy}[2025-05-03 23:04:00] ERROR llamafactory.chat.vllm_engine: {VLLM_PROMPT}\n"
    assert primary(log) == ("ValueError", VLLM_PROMPT, "context-length")


def test_the_record_yields_to_a_traceback() -> None:
    log = (f"{XINFERENCE_RECORD}[address=0.0.0.0:37357, pid=482] {SGLANG_INPUT}\n"
           f"{XINFERENCE_RECORD}Failed to load model qwen2.5-instruct-0\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/configs/model_config.py", line 402, in __init__\n'
           "    self.hf_config = get_config(model_path)\n"
           "KeyError: 'qwen3'\n")
    report = diagnose_text(log, OPTIONS)
    assert [group.failure.kind for group in report.failures] == ["traceback"]


# -- torch.compile's messages: an inner error on the next line, the user's frames quoted ------------------------------
# torch/_dynamo/exc.py: BackendCompilerFailed's message is f"backend={name!r} raised:\n{type}: {inner}", and
# format_error_msg appends "\n\nfrom user code:\n" with the user's frames (traceback.format_list) and the
# TORCH_LOGS paragraph.  Printed here by real CPython, through a mirror of that module.
DYNAMO_EXC = '''
class TorchDynamoException(RuntimeError):
    pass


class BackendCompilerFailed(TorchDynamoException):
    def __init__(self, backend_name, inner_exception):
        super().__init__(f"backend={backend_name!r} raised:\\n{type(inner_exception).__name__}: {inner_exception}"
                         + TORCH_LOGS)


class Unsupported(TorchDynamoException):
    pass


TORCH_LOGS = ('\\n\\nSet TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information\\n\\n\\n'
              "You can suppress this exception and fall back to eager by setting:\\n"
              "    import torch._dynamo\\n    torch._dynamo.config.suppress_errors = True\\n")
USER_CODE = ("\\n\\nfrom user code:\\n"
             '   File "/opt/venv/lib/python3.11/site-packages/vllm/model_executor/models/llama.py", line 360, in forward\\n'
             "    hidden_states, residual = layer(positions, hidden_states, residual)\\n"
             '  File "/opt/venv/lib/python3.11/site-packages/vllm/model_executor/layers/rotary_embedding.py", line 210, in forward_cuda\\n'
             "    ops.rotary_embedding(positions, query, key, self.head_size, self.cos_sin_cache, self.is_neox_style)\\n")


def compile_graph(how):
    if how == "inner":
        try:
            assert False, "expected size 4==4, stride 1==2 at dim=0"
        except AssertionError as inner:
            raise BackendCompilerFailed("inductor", inner) from None
    raise Unsupported("call_function args: TensorVariable() ConstantVariable()" + USER_CODE + TORCH_LOGS)
'''


def _dynamo_failure(tmp_path: Path, how: str) -> str:
    package = tmp_path / "torch" / "_dynamo"
    package.mkdir(parents=True)
    (tmp_path / "torch" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "exc.py").write_text(DYNAMO_EXC)
    ran = subprocess.run([sys.executable, "-c", f"import torch._dynamo.exc as e; e.compile_graph({how!r})"],
                         capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
                         check=False)
    assert "Traceback" in ran.stderr, ran.stderr
    return ran.stderr


def test_an_inner_error_printed_under_raised_is_the_same_failure(tmp_path: Path) -> None:
    report = diagnose_text(_dynamo_failure(tmp_path, "inner"), OPTIONS)
    assert len(report.failures) == 1
    block = report.failures[0].failure.exceptions[-1]
    assert block.type == "torch._dynamo.exc.BackendCompilerFailed"
    assert "AssertionError: expected size 4==4, stride 1==2 at dim=0" in block.message


def test_the_users_frames_quoted_by_the_compiler_are_its_message(tmp_path: Path) -> None:
    report = diagnose_text(_dynamo_failure(tmp_path, "user-code"), OPTIONS)
    assert len(report.failures) == 1
    block = report.failures[0].failure.exceptions[-1]
    assert block.type == "torch._dynamo.exc.Unsupported"
    assert [frame.function for frame in block.frames] == ["<module>", "compile_graph"]  # not the quoted ones
    assert "rotary_embedding.py" in block.message


def test_frames_after_a_message_that_quotes_none_are_still_a_traceback() -> None:
    """Without torch's heading, frames after a message are the next traceback (two failures)."""
    log = ("Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 14, in <module>\n'
           "    launch_server(server_args)\n"
           "ValueError: first\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/utils.py", line 20, in kill\n'
           "    os.kill(pid)\n"
           "KeyError: 'second'\n")
    assert len(diagnose_text(log, OPTIONS).failures) == 2


# -- a library's upgrade advice pasted without the error's first line ----------------------------------------------------
# transformers/models/auto/configuration_auto.py raises ValueError for a model type it does not know: its first
# paragraph names the type, its second (after a blank line) is the advice to upgrade.  A paste that starts at the
# advice still shows the failure; pip's own upgrade notice is no failure.
UNKNOWN_TYPE = ("The checkpoint you are trying to load has model type `qwen3` but Transformers does not recognize this "
                "architecture. This could be because of an issue with the checkpoint, or because your version of Transformers "
                "is out of date.")
ADVICE = ("You can update Transformers with the command `pip install --upgrade transformers`. If this does not work, and the "
          "checkpoint is very new, then there may not be a release version that supports this model yet. In this case, you "
          "can get the most up-to-date code by installing Transformers from source with the command "
          "`pip install git+https://github.com/huggingface/transformers.git`")
STARTUP = ("INFO 05-01 10:00:00 [__init__.py:239] Automatically detected platform cuda.\n"
           "INFO 05-01 10:00:02 [api_server.py:1043] vLLM API server version 0.8.5\n")


def test_the_upgrade_advice_without_its_first_line_is_the_failure() -> None:
    assert primary(f"{ADVICE}\n{STARTUP}") == ("ValueError", ADVICE, "dependency-version")


def test_the_advice_under_its_own_first_line_is_one_failure(tmp_path: Path) -> None:
    script = tmp_path / "load.py"
    script.write_text(f"raise ValueError({UNKNOWN_TYPE + chr(10) + chr(10) + ADVICE!r})\n")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    report = diagnose_text(STARTUP + ran.stderr, OPTIONS)
    assert len(report.failures) == 1
    assert report.failures[0].failure.exceptions[-1].message.startswith(UNKNOWN_TYPE)


def test_pips_upgrade_notice_is_no_failure() -> None:
    log = ("[notice] A new release of pip is available: 24.0 -> 25.0.1\n"
           "[notice] To update, run: python -m pip install --upgrade pip\n" + STARTUP)
    assert not diagnose_text(log, OPTIONS).failures
