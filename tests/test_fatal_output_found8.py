"""Shapes the fresh blind split of stop 40 showed unread (issue 28, branch h-found8), on real wordings and real CPython
tracebacks:

- the user's Ctrl-C of a launch that had already failed: a bare engine message (no type, no record header) the launch
  printed, then the terminal's `^C`, CPython's KeyboardInterrupt traceback of the wait loop or click's `Aborted!`
  (click.core's Abort).  The interrupt is how the paste ended; the engine's message is the failure (SGLang's
  `Not enough memory. Please try to increase --mem-fraction-static.`, sgl-project/sglang#322);
- a launcher's report that its child failed, after the child's own error line: torchrun's ChildFailedError
  (torch/distributed/elastic/multiprocessing/errors), accelerate's CalledProcessError of the child's Python command
  (accelerate/commands/launch.py simple_launcher); the child's line leads;
- a failure a sentence states by its type and then quotes the message of (`it raises an AssertionError saying "…"`,
  `dies with an assertion error "…"`): the engine's assert's message (SGLang's and vLLM's `assert …, "…"`);
- NVIDIA Dynamo's launch of one engine (`python3 -m dynamo.sglang …`, `dynamo-run in=http out=sglang …`): the engine
  it names is the launch's, not vLLM's whose platform line an import printed."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

LAUNCH = (
    "$ python -m sglang.launch_server --model-path /models/Mistral-7B-Instruct-v0.2 --port 30000\n"
    "[2024-03-22 10:00:09] Load weight begin. avail mem=23.50 GB\n"
    "Not enough memory. Please try to increase --mem-fraction-static.\n"
)
# the server's wait loop, interrupted: CPython's own traceback of a KeyboardInterrupt
WAIT_LOOP = """
def launch_server():
    raise KeyboardInterrupt


launch_server()
"""


def _interrupt_traceback() -> str:
    return real_traceback(WAIT_LOOP)


@pytest.mark.parametrize("ending", ["traceback", "^C", "^C\nAborted!", "Aborted!"])
def test_the_engine_s_message_before_the_user_s_ctrl_c_is_the_failure(ending: str) -> None:
    tail = "^C" + _interrupt_traceback() if ending == "traceback" else ending + "\n"
    kind, message, category = primary(LAUNCH + tail)
    assert (kind, category) == ("RuntimeError", "kv-cache-memory"), message
    assert "mem-fraction-static" in message


def test_a_ctrl_c_with_no_engine_message_above_it_stays_the_failure() -> None:
    log = LAUNCH.splitlines(keepends=True)[0] + "[2024-03-22 10:00:09] Load weight begin.\n^C" + _interrupt_traceback()
    assert primary(log)[0] == "KeyboardInterrupt"


# NVIDIA Dynamo's launch of one engine (ai-dynamo/dynamo: components/src/dynamo/sglang, docs/guides/dynamo_run.md),
# then vLLM's platform line an import printed, then the failure.
DYNAMO_TAIL = (
    "INFO 05-01 10:00:01 [__init__.py:244] Automatically detected platform cuda.\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
)


@pytest.mark.parametrize(
    ("command", "engine"),
    [
        ("$ python3 -m dynamo.sglang --model-path Qwen/Qwen3-0.6B --tp 2", "sglang"),
        ("dynamo-run in=http out=sglang --model-path Qwen/Qwen3-0.6B", "sglang"),
        ("dynamo run out=vllm Qwen/Qwen3-0.6B", "vllm"),
    ],
)
def test_dynamo_s_launch_of_an_engine_names_the_engine(command: str, engine: str) -> None:
    report = diagnose_text(command + "\n" + DYNAMO_TAIL, OPTIONS)
    assert report.launch.engine == engine


@pytest.mark.parametrize("command", ["dynamo-run in=http out=mistralrs Qwen/Qwen3-0.6B", "python3 -m dynamo.frontend --http-port 8000"])
def test_dynamo_s_other_engines_and_its_frontend_name_no_engine(command: str) -> None:
    assert diagnose_text(command + "\n" + DYNAMO_TAIL, OPTIONS).launch.engine != "sglang"


# A launcher whose child exited 1, as CPython prints it: accelerate's CalledProcessError of the child's command, and
# a mirror of torchrun's ChildFailedError (its class and module; its message is the summary table).
CALLED_PROCESS = """
import subprocess, sys


def simple_launcher():
    subprocess.run([sys.executable, "-c", "raise SystemExit(1)"], check=True)


simple_launcher()
"""
CHILD_FAILED = """
ChildFailedError = type("ChildFailedError", (Exception,), {"__module__": "torch.distributed.elastic.multiprocessing.errors"})


def launch_agent():
    raise ChildFailedError("\\n====\\nserve.py FAILED\\n----\\nFailures:\\n  <NO_OTHER_FAILURES>")


launch_agent()
"""
HEADS_RECORD = (
    "ERROR 05-01 10:00:30 [core.py:396] Total number of attention heads (14) must be divisible by tensor parallel size (4).\n"
)


@pytest.mark.parametrize("launcher", [CALLED_PROCESS, CHILD_FAILED])
def test_the_child_s_error_line_leads_the_launcher_s_report_of_its_exit(launcher: str) -> None:
    kind, message, _ = primary(HEADS_RECORD + real_traceback(launcher))
    assert (kind, message.split(" (")[0]) == ("ValueError", "Total number of attention heads"), message


def test_a_launcher_s_report_with_no_child_line_above_stays_the_failure() -> None:
    assert primary("Launching serve.py on 2 GPUs\n" + real_traceback(CALLED_PROCESS))[0] == "subprocess.CalledProcessError"


def test_a_build_step_s_called_process_error_after_an_error_line_is_still_a_failure() -> None:
    # a shell step's failure (a build's command, not a Python child) is a failure of its own, not a launcher's trailer
    build = CALLED_PROCESS.replace('[sys.executable, "-c", "raise SystemExit(1)"]', '["/bin/sh", "-c", "exit 1"]')
    assert primary(HEADS_RECORD + real_traceback(build))[0] == "subprocess.CalledProcessError"


PREFILL = "Prefill is not supported for this model"


@pytest.mark.parametrize(
    "sentence",
    [
        f'When I launch the server it raises an AssertionError saying "{PREFILL}".',
        f"Startup dies with an assertion error \u201c{PREFILL}\u201d after the weights load.",
        f"The launch fails with AssertionError with message '{PREFILL}'",
    ],
)
def test_a_sentence_naming_the_type_and_quoting_the_message_is_the_failure(sentence: str) -> None:
    assert primary(sentence + "\n")[:2] == ("AssertionError", PREFILL)


@pytest.mark.parametrize(
    "sentence", ['I get a ValueError when I pass "--tp 2" to it.', 'The KeyError for "x" went away after a restart.']
)
def test_a_sentence_that_quotes_something_else_is_no_failure(sentence: str) -> None:
    report = diagnose_text(sentence + "\n", OPTIONS)
    assert not report.failures
