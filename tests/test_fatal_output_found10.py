"""Shapes stop 42's blind split showed unread (issue 28, branch h-found10), on real CPython tracebacks and real wordings:

- asyncio's CancelledError: a task the event loop cancelled because a task beside it failed is never the failure when
  the paste shows another exception (the other one is), and never hides an error line a client printed;
- a traceback cut before its exception line, its frames behind a rank's, Ray's or a worker's prefix: the last frame's
  raising statement still names the type."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

# One task raises; the loop's owner prints that traceback, then cancels the task waiting beside it and awaits it.
CANCELLED_BESIDE_A_FAILURE = """
    import asyncio, traceback

    async def load_weights():
        raise ValueError("Detected some but not all shards of model.layers.0.mlp are quantized")

    async def wait_for_requests():
        await asyncio.sleep(60)

    async def main():
        loader = asyncio.create_task(load_weights())
        waiter = asyncio.create_task(wait_for_requests())
        await asyncio.sleep(0.01)
        try:
            await loader
        except Exception:
            traceback.print_exc()
        waiter.cancel()
        await waiter

    asyncio.run(main())
"""


def _two_tracebacks() -> tuple[str, str]:
    """(the failed task's traceback, the cancelled task's), as real CPython printed them."""
    printed = real_traceback(CANCELLED_BESIDE_A_FAILURE)
    second = printed.index("Traceback (most recent call last):", 1)
    return printed[:second], printed[second:]


@pytest.mark.parametrize("indent", ["", "    ", "> "])
@pytest.mark.parametrize("cancelled_first", [False, True])
def test_a_cancelled_task_is_never_the_failure_beside_another_exception(indent: str, cancelled_first: bool) -> None:
    failed, cancelled = _two_tracebacks()
    pasted = cancelled + failed if cancelled_first else failed + cancelled
    log = "".join(indent + line + "\n" for line in pasted.splitlines())
    assert primary(log)[:2] == ("ValueError", "Detected some but not all shards of model.layers.0.mlp are quantized")


def test_a_cancelled_task_does_not_hide_the_error_line_a_client_printed() -> None:
    _, cancelled = _two_tracebacks()
    client = ("Error code: 400 - {'object': 'error', 'message': 'max_tokens must be at least 1, got 0.', "
              "'type': 'BadRequestError', 'param': None, 'code': 400}\n")
    assert primary(client + cancelled)[:2] == ("openai.BadRequestError", client.strip())


def test_a_cancelled_task_alone_is_still_the_failure() -> None:
    _, cancelled = _two_tracebacks()
    assert primary(cancelled)[0] == "asyncio.exceptions.CancelledError"


def test_a_cancellation_raised_while_handling_another_error_ends_the_chain_at_that_error() -> None:
    printed = real_traceback("""
        import asyncio

        async def step():
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

        async def main():
            try:
                await step()
            except RuntimeError:
                raise asyncio.CancelledError()

        asyncio.run(main())
    """)
    group = diagnose_text(printed, OPTIONS).failures[0]
    assert [block.type for block in group.failure.exceptions] == ["RuntimeError"]
    assert group.failure.final.relation is None
    assert group.diagnosis is not None and group.diagnosis.category == "illegal-memory-access"


CUT_IN_ENGINE_FILE = """
    def process_weights_after_loading(weight_rows):
        rows = weight_rows
        assert rows % 128 == 0, f"weight rows {rows} are not a multiple of the block size 128"

    process_weights_after_loading(100)
"""


@pytest.mark.parametrize(
    "prefix",
    ["[rank0]: ", "[rank3]:", "(RayWorkerWrapper pid=12345) ", "(RayWorkerWrapper pid=12345, ip=10.0.0.5) ",
     "(VllmWorkerProcess pid=4321) ERROR 05-29 07:34:20 [multiproc_worker_utils.py:226] ", "vllm-worker-1  | "],
)
def test_a_traceback_cut_before_its_exception_line_behind_a_prefix_is_typed_from_its_last_frame(prefix: str) -> None:
    printed = real_traceback(CUT_IN_ENGINE_FILE, "vllm/model_executor/layers/quantization/fp8.py")
    cut = [line for line in printed.splitlines() if not line.startswith("AssertionError")]
    log = "".join(prefix + line + "\n" for line in cut)
    block = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert block.type == "AssertionError"
    assert block.frames[-1].function == "process_weights_after_loading"
    assert block.typed_from_statement


@pytest.mark.parametrize(
    "line",
    [
        "bash: vllm: command not found",  # bash's execute_cmd.c: "%s: command not found" after the shell's name
        "/bin/bash: line 1: sglang: command not found",  # bash -c / a script: the line number first
        "./serve.sh: line 12: vllm: command not found",
        "zsh: command not found: vllm",  # zsh's Src/exec.c
        "sh: 1: vllm: not found",  # dash's src/exec.c, with the script's line number
        "/bin/sh: 1: exec: python3: not found",
    ],
)
def test_a_shell_that_cannot_find_the_engines_program_is_a_missing_install(line: str) -> None:
    log = "$ vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2\n" + line + "\n"
    assert primary(log) == ("command not found", line, "dependency-version")


@pytest.mark.parametrize(
    "line",
    [
        "I have vllm installed, yet the docs say bash: vllm: command not found can happen in a new shell",
        "bash: nvidia-smi: command not found",  # another program: no engine's install
        "zsh: command not found: vllmx",
    ],
)
def test_prose_or_another_program_not_found_is_no_missing_engine(line: str) -> None:
    assert not diagnose_text(line + "\n", OPTIONS).failures


def _cpython_message(code: str) -> str:
    """str() of the exception real CPython raises for `code`."""
    try:
        exec(code, {})
    except Exception as exc:  # noqa: BLE001 - the message of whatever CPython raised is the point
        return str(exc)
    raise AssertionError("the snippet was meant to raise")


@pytest.mark.parametrize(
    ("code", "type_name"),
    [
        ("class LLM:\n    def __init__(self, model): pass\nLLM(model='m', max_num_seqs=8)", "TypeError"),
        ("class EngineArgs:\n    def __init__(self, model): pass\nEngineArgs()", "TypeError"),
        ("def sample(logits, k): pass\nsample(1, 2, 3)", "TypeError"),
        ("None.shape", "AttributeError"),
        ("import os\nos.register_fake", "AttributeError"),
        ("value = None\nvalue[0]", "TypeError"),
        ("from os import register_fake", "ImportError"),
    ],
)
@pytest.mark.parametrize("shown_as", ["ERROR 05-29 07:34:20 [engine.py:160] {}", "Error: {}", "Exception: {}",
                                      "[2025-01-01 10:00:00] ERROR: {}", "{}"])
def test_cpythons_own_message_printed_without_its_type_names_it(code: str, type_name: str, shown_as: str) -> None:
    message = _cpython_message(code)
    report = diagnose_text(shown_as.format(message) + "\n", OPTIONS)
    block = report.failures[0].failure.final
    assert (block.type, block.message) == (type_name, message)
    # said to be inferred, never shown as printed (an engine's raise site index that holds the template types the
    # record of no type word first: `'NoneType' object has no attribute …` is one some engine raises itself)
    assert block.typed_from_message or (shown_as.startswith(("ERROR", "[", "{")) and "object has no attribute" in message)


@pytest.mark.parametrize(
    "line",
    [
        "I think 'NoneType' object has no attribute 'shape' happens because the model is None.",
        "The docs say __init__() got an unexpected keyword argument 'x' means an old release.",
    ],
)
def test_cpythons_message_inside_a_sentence_is_no_failure(line: str) -> None:
    assert not diagnose_text(line + "\n", OPTIONS).failures


def test_a_printed_type_is_kept_and_not_marked_inferred() -> None:
    block = diagnose_text("AttributeError: 'NoneType' object has no attribute 'shape'\n", OPTIONS).failures[0].failure.final
    assert (block.type, block.typed_from_message) == ("AttributeError", False)


@pytest.mark.parametrize(
    ("line", "type_name", "category"),
    [
        # requests/models.py raise_for_status: f"{status} Client Error: {reason} for url: {url}", "Server Error" for 5xx
        ("2025-06-01 10:00:00,123 - ERROR - Request failed: 400 Client Error: Bad Request for url: "
         "http://localhost:8000/v1/completions", "requests.exceptions.HTTPError", None),
        ("Error: 500 Server Error: Internal Server Error for url: http://127.0.0.1:30000/generate",
         "requests.exceptions.HTTPError", None),
        # transformers/utils/versions.py require_version (a wrapper's check of the engine's version, its hint after it)
        ("Error: The 'vllm>=0.4.3,<=0.8.6' distribution was not found and is required by this application. "
         "To fix: run `pip install vllm>=0.4.3,<=0.8.6`.", "importlib.metadata.PackageNotFoundError", "dependency-version"),
        ("The 'sglang>=0.4.0' distribution was not found and is required by this application.",
         "importlib.metadata.PackageNotFoundError", "dependency-version"),
        # setuptools' pkg_resources DistributionNotFound ("… is required by {requirers}", "the application" when none)
        ("Exception: The 'sglang[all]>=0.4.0' distribution was not found and is required by the application",
         "pkg_resources.DistributionNotFound", "dependency-version"),
    ],
)
def test_a_librarys_own_message_printed_without_its_type_names_it(line: str, type_name: str, category: str | None) -> None:
    group = diagnose_text(line + "\n", OPTIONS).failures[0]
    assert (group.failure.final.type, group.failure.final.typed_from_message) == (type_name, True)
    if category is not None:
        assert group.diagnosis is not None and group.diagnosis.category == category


def test_a_sentence_quoting_requests_message_is_no_failure() -> None:
    line = "The call gave 400 Client Error: Bad Request for url: http://x/v1 and then I retried\n"
    assert not diagnose_text(line, OPTIONS).failures


@pytest.mark.parametrize("program", ["vllm", "python3"])
def test_a_container_whose_image_lacks_the_engines_program_is_a_missing_install(program: str) -> None:
    """runc's refusal to start the container's command (`exec: "vllm": executable file not found in $PATH`, Go's
    exec.ErrNotFound; vllm-project/production-stack#454): the image does not hold the engine's program."""
    line = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
            "runtime create failed: runc create failed: unable to start container process: error during container init: "
            f'exec: "{program}": executable file not found in $PATH: unknown.\n')
    assert primary(line)[2] == "dependency-version"


def test_a_container_lacking_another_program_is_not_filed_as_the_engines_install() -> None:
    line = ('Error: OCI runtime create failed: runc create failed: unable to start container process: exec: '
            '"nvidia-smi": executable file not found in $PATH: unknown\n')
    assert primary(line)[2] != "dependency-version"


def test_a_wrappers_error_record_of_cpythons_message_names_its_type() -> None:
    """Xinference logs str(exc) of the engine's refusal under its own logger (xorbitsai/inference#884: `Auto recover
    failed: AsyncEngineArgs.__init__() got an unexpected keyword argument 'kwargs'`), its wrapper tag first (the shape
    logged_errors.py reads); our own record of that shape."""
    message = _cpython_message("class AsyncEngineArgs:\n    def __init__(self, model): pass\n"
                               "AsyncEngineArgs(model='m', enable_prefix_caching_v2=True)")
    line = f"2025-02-03 11:20:41,512 xinference.api.restful_api 20411 ERROR    [address=0.0.0.0:41233, pid=20588] {message}\n"
    block = diagnose_text(line, OPTIONS).failures[0].failure.final
    assert (block.type, block.message, block.typed_from_message) == ("TypeError", message, True)
