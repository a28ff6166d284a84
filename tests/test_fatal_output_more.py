"""Fatal output the h-dev split showed unfound (issue 28, item 1): argparse's error printed without a program
name (a SystemExit with argparse's wording, SGLang's diffusion server: sgl-project/sglang#34226), uv's resolver
verdict (vllm-project/vllm#11283), and an exception quoted as its repr in a sentence (`ValueError("...")`,
MiniMax-AI/MiniMax-M2.5#21).  The lines are composed from those programs' formats; the pastes without a failure
are our own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def first_exception(log: str) -> tuple[str, str]:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, log
    block = report.failures[0].failure.exceptions[-1]
    return block.type, " ".join(block.message.split())


@pytest.mark.parametrize(
    ("log", "type_", "message"),
    [
        ("$ sglang serve --model-path /m --served-model-name m1\nerror: unrecognized arguments: --served-model-name m1\n",
         "UsageError", "unrecognized arguments: --served-model-name m1"),
        ("error: the following arguments are required: --model-path\n", "UsageError",
         "the following arguments are required: --model-path"),
        ("error: argument --tp-size: invalid int value: 'two'\n", "UsageError", "argument --tp-size: invalid int value: 'two'"),
    ],
)
def test_argparse_wording_without_a_program_is_a_usage_error(log: str, type_: str, message: str) -> None:
    assert first_exception(log) == (type_, message)


def test_uvs_resolver_verdict_is_a_failure() -> None:
    log = (
        "$ uv pip install vllm==0.6.5 vllm-flash-attn\n"
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because vllm==0.6.5 depends on torch==2.5.1 and vllm-flash-attn>=2.6.1 depends on torch==2.4.0, we can\n"
        "      conclude that vllm==0.6.5 and vllm-flash-attn>=2.6.1 are incompatible.\n"
    )
    type_, message = first_exception(log)
    assert type_ == "ResolutionImpossible"
    assert message.startswith("No solution found when resolving dependencies")


@pytest.mark.parametrize(
    ("log", "type_", "message"),
    [
        ("My gpu is an A100, and it fails at runtime: ValueError(\"type fp8e4nv not supported in this architecture. "
         "The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")\n",
         "ValueError", "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')"),
        ("the worker died with RuntimeError('CUDA error: out of memory') after a minute\n", "RuntimeError", "CUDA error: out of memory"),
    ],
)
def test_an_exception_quoted_as_its_repr_is_the_failure(log: str, type_: str, message: str) -> None:
    assert first_exception(log) == (type_, message)


@pytest.mark.parametrize(
    "log",
    [
        # a healthy vLLM start with warnings and metrics (our own)
        "INFO 05-01 12:00:00 [api_server.py:1880] vLLM API server version 0.11.2\n"
        "WARNING 05-01 12:00:01 [arg_utils.py:1200] The model has a long context length (131072). This may cause OOM during "
        "the initial memory profiling phase, or result in low performance due to small KV cache size.\n"
        "WARNING 05-01 12:00:20 [cuda.py:110] error_correction disabled on device 0\n"
        "INFO 05-01 12:01:00 [loggers.py:123] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: "
        "50.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit rate: 0.0%\n"
        "INFO:     127.0.0.1:50000 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
        # an SGLang start that logs the import errors it ignores, code that raises in a quoted snippet, prose (our own)
        "[2025-07-01 15:50:45] Ignore import error when loading sglang.srt.models.gemma3n_mm. cannot import name "
        "'Gemma3nAudioConfig' from 'transformers'\n"
        "[2025-07-01 15:50:49] INFO:     Application startup complete.\n"
        "[2025-07-01 15:50:50] The server is fired up and ready to roll!\n"
        "The check in that file reads `raise ValueError(\"bad dtype\")` and it never fires for me; no errors so far.\n",
    ],
)
def test_pastes_without_a_failure_stay_without_one(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


def test_a_survived_error_quoted_as_a_repr_yields_to_the_real_failure() -> None:
    """vLLM warns `Failed to import from vllm._C: ModuleNotFoundError("…")` and goes on (platforms/interface.py in
    0.33); the argparse error after it is the failure."""
    log = (
        "Failed to import from vllm._C: ModuleNotFoundError(\"No module named 'vllm._C'\")\n"
        "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\n"
        "vllm: error: unrecognized arguments: --tp-size 1\n"
    )
    assert first_exception(log) == ("UsageError", "unrecognized arguments: --tp-size 1")


def test_the_watchdog_line_hard_wrapped_before_its_parenthesis_is_still_the_failure() -> None:
    """sgl-project/sglang#17941's line, 99 characters, in a paste wrapped at 80 columns."""
    log = (
        "[2026-01-29 13:12:37 PP1 TP1] Scheduler watchdog timeout (self.watchdog_timeout=\n"
        "300, self.soft=False)\n\n"
        "[2026-01-29 13:12:37 PP2 TP1] Pyspy dump for PID 88693:\n"
        "Process 88693: sglang::scheduler_PP2_TP1\n"
    )
    type_, message = first_exception(log)
    assert type_ == "Scheduler watchdog timeout"
    assert message.startswith("self.watchdog_timeout=")


UNDEFINED_IN_WARNING = (
    "WARNING 06-13 11:42:20 _custom_ops.py:11] Failed to import from vllm._C with ImportError('/usr/local/lib/python3.8/"
    "dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEEPKcj')\n"
)


def test_an_undefined_symbol_quoted_in_a_warning_is_the_failure_of_a_paste_without_another() -> None:
    """vllm-project/vllm#5501: `import vllm` and vLLM's warning that its compiled ops did not load, nothing else."""
    report = diagnose_text(" import vllm\n" + UNDEFINED_IN_WARNING, OPTIONS)
    assert report.failures
    block = report.failures[0].failure.exceptions[-1]
    assert block.type == "ImportError"
    assert block.message.startswith("/usr/local/lib/python3.8/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch7Library")
    assert report.launch.engine is None  # SGLang imports vllm._C too: the path shows vLLM installed, not running


def test_the_same_warning_before_the_server_came_up_was_survived() -> None:
    log = UNDEFINED_IN_WARNING + "INFO:     Application startup complete.\n"
    assert diagnose_text(log, OPTIONS).failures == ()


def test_the_same_warning_yields_to_a_traceback() -> None:
    log = UNDEFINED_IN_WARNING + (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.8/dist-packages/vllm/_custom_ops.py", line 40, in rms_norm\n'
        "    torch.ops._C.rms_norm(out, input, weight, epsilon)\n"
        "AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'\n"
    )
    assert first_exception(log)[0] == "AttributeError"


# The hub's refusal of a gated model pasted without its exception's type line (huggingface_hub
# utils/_http.py hf_raise_for_status: GatedRepoError; transformers utils/hub.py cached_files: OSError), as
# tenstorrent/tt-inference-server#37 and lastmile-ai/aiconfig#1000 show it.
GATED = (
    "Cannot access gated repo for url https://huggingface.co/acme/llm-8b/resolve/main/config.json.\n"
    "Access to model acme/llm-8b is restricted. You must have access to it and be authenticated to access it. "
    "Please log in.\n"
)


@pytest.mark.parametrize("lead", ["", "Loading the model now\n", "You are trying to access a gated repo.\n"])
def test_a_gated_repo_refusal_without_its_type_is_the_failure(lead: str) -> None:
    report = diagnose_text(lead + GATED, OPTIONS)
    assert report.failures
    block = report.failures[0].failure.exceptions[-1]
    assert block.type in ("GatedRepoError", "OSError")
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "model-path"


def test_the_gated_repo_lines_yield_to_their_own_traceback() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/transformers/utils/hub.py", line 540, in cached_files\n'
        "    raise OSError(\n"
        "OSError: You are trying to access a gated repo.\n"
        "Make sure to have access to it at https://huggingface.co/acme/llm-8b.\n"
        "401 Client Error.\n\n" + GATED
    )
    report = diagnose_text(log, OPTIONS)
    assert [group.failure.exceptions[-1].type for group in report.failures] == ["OSError"]


def test_prose_about_access_is_no_failure() -> None:
    assert diagnose_text("Access to the cluster is granted per team.\nThe repo is gated for now.\n", OPTIONS).failures == ()


def _frames_without_their_exception_line(tmp_path: Path) -> str:
    """A traceback real CPython printed through a mirror of a fused MoE kernel's launch, its last line (the
    exception) cut, as a paste that moved or lost it shows it."""
    module = tmp_path / "sglang" / "srt" / "layers" / "moe" / "fused_moe.py"
    module.parent.mkdir(parents=True)
    for package in (tmp_path / "sglang", tmp_path / "sglang" / "srt", tmp_path / "sglang" / "srt" / "layers", module.parent):
        (package / "__init__.py").write_text("")
    module.write_text("def invoke_fused_moe_kernel():\n    launch()\ndef launch():\n    raise RuntimeError('x')\n")
    ran = subprocess.run([sys.executable, "-c", "from sglang.srt.layers.moe.fused_moe import invoke_fused_moe_kernel as k; k()"],
                         capture_output=True, text=True, cwd=tmp_path, check=False)
    return "\n".join(ran.stderr.splitlines()[:-1]) + "\n"


OUT_OF_RESOURCE = ("out of resource: shared memory, Required: 147456, Hardware limit: 101376. Reducing block sizes or "
                   "`num_stages` may help.")


def test_a_kernel_resource_limit_in_a_sentence_above_frames_is_their_exception(tmp_path: Path) -> None:
    """triton/runtime/errors.py OutOfResources, its type lost in a sentence above the frames (sgl-project/sglang#2847
    shows the class): the frames' exception, named, and the on-chip memory checks."""
    log = f"The worker fails with {OUT_OF_RESOURCE}\n" + _frames_without_their_exception_line(tmp_path)
    report = diagnose_text(log, OPTIONS)
    (group,) = report.failures
    assert group.failure.kind == "traceback" and group.failure.final.frames
    assert (group.failure.final.type, group.failure.final.message) == ("OutOfResources", OUT_OF_RESOURCE)
    assert group.diagnosis is not None and group.diagnosis.category == "gpu-arch-unsupported"
    assert group.diagnosis.title.startswith("Likely a kernel configuration that needs more on-chip memory")


def test_the_typed_line_alone_is_found_too() -> None:
    """Its type ends in neither Error nor Exception, so it was no failure before."""
    log = f"triton.runtime.errors.OutOfResources: {OUT_OF_RESOURCE}\n"
    assert first_exception(log) == ("OutOfResources", OUT_OF_RESOURCE)


@pytest.mark.parametrize("between", ["\n### Traceback\n", "\n```\n"])
def test_the_typed_line_above_a_heading_and_frames_is_their_exception(tmp_path: Path, between: str) -> None:
    log = (f"When I start it: triton.runtime.errors.OutOfResources: {OUT_OF_RESOURCE}\n{between}"
           + _frames_without_their_exception_line(tmp_path))
    (group,) = diagnose_text(log, OPTIONS).failures
    # the type as CPython printed it, module-qualified (grammar.STRICT_EXCEPTION_LINE reads such a class by its name)
    assert group.failure.final.type.rsplit(".", 1)[-1] == "OutOfResources" and group.failure.final.frames


def test_an_error_line_far_above_frames_is_not_joined_to_them(tmp_path: Path) -> None:
    log = (f"When I start it: {OUT_OF_RESOURCE}\n\n\nThe full log of the second run, a day later, is below.\n"
           "It was run on another machine.\n" + _frames_without_their_exception_line(tmp_path))
    assert all(group.failure.final.type != "OutOfResources" or not group.failure.final.frames
               for group in diagnose_text(log, OPTIONS).failures)
