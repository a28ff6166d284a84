"""The shapes a second fresh blind split still missed (issue 28, stop 39; branch h-found6):

- a traceback cut inside its raising statement, or whose frames lost their `File "…", line N, in f` prefix, with no
  exception line: the type the statement names (tracebacks/raising_statement.py), the message unknown;
- an engine's bare message line right after the command that launched it, or ending a paste that shows nothing
  else: read against the raise site index (tracebacks/logged_errors.py);
- a GPU compiler's error diagnostic (tracebacks/typeless_errors.py), never its warning;
- a frame only in a kernel package one engine ships (ingest/engine_evidence.package_frame_engine, from main), and a
  relative frame path in an engine's source tree (engine_evidence.relative_frame_engine).

Tracebacks are printed by real CPython (tests.helpers.real_traceback) and cut as the pastes were."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.helpers import frames_without_file_wording, real_traceback, without_exception_line
from tests.test_fatal_output_shapes import OPTIONS, primary

# vLLM's config check (vllm/config.py ModelConfig: the derived context length), a multi-line raise.
CONFIG_CHECK = """
class ModelConfig:
    def __init__(self, max_model_len):
        self._verify(max_model_len)

    def _verify(self, max_model_len):
        if max_model_len > 4096:
            raise ValueError(
                f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len (4096)."
            )


ModelConfig(8192)
"""
# SGLang's argument check (srt/server_args.py), an assert whose message starts on the statement's first line.
ARGS_CHECK = """
def check_server_args(tp_size, num_heads):
    assert num_heads % tp_size == 0, (
        f"heads {num_heads} not divisible by {tp_size}"
    )


check_server_args(3, 32)
"""


def _source_lines_only(printed: str) -> str:
    """Only the frames' source lines (the `File` lines and the header dropped)."""
    return "".join(line for line in printed.splitlines(keepends=True)
                   if not line.lstrip().startswith(("File ", "Traceback")))


@pytest.mark.parametrize(("code", "path", "expected"), [
    (CONFIG_CHECK, "vllm/config.py", "ValueError"),
    (ARGS_CHECK, "sglang/srt/server_args.py", "AssertionError"),
])
def test_a_traceback_cut_inside_its_raising_statement_is_named_by_it(code: str, path: str, expected: str) -> None:
    printed = real_traceback(code, path)
    assert printed.strip().splitlines()[-1].startswith(expected + ": ")
    pasted = without_exception_line(printed)
    report = diagnose_text(pasted, OPTIONS)
    block = report.failures[0].failure.final
    assert (block.type, block.message, block.truncated) == (expected, "", True)
    assert block.frames[-1].source.startswith(("raise ValueError(", "assert num_heads"))
    assert "inferred from the last frame" in render(report, RenderOptions(format=OutputFormat.TEXT, width=200))


@pytest.mark.parametrize("cut", [frames_without_file_wording, _source_lines_only])
def test_frames_that_lost_their_file_lines_above_the_raising_statement_are_a_failure(cut) -> None:  # type: ignore[no-untyped-def]
    pasted = cut(without_exception_line(real_traceback(CONFIG_CHECK, "vllm/config.py")))
    assert 'File "' not in pasted and "ValueError:" not in pasted
    assert primary(pasted)[:2] == ("ValueError", "")


def test_paths_and_functions_under_the_header_are_the_frames_of_the_statement() -> None:
    printed = real_traceback(CONFIG_CHECK, "vllm/config.py").replace("/srv/", "/usr/local/lib/python3.12/dist-packages/")
    pasted = frames_without_file_wording(without_exception_line(printed))
    assert pasted.startswith("Traceback (most recent call last):")
    report = diagnose_text(pasted, OPTIONS)
    assert len(report.failures) == 1
    assert (report.failures[0].failure.final.type, report.failures[0].failure.kind) == ("ValueError", "traceback")
    assert report.launch.engine == "vllm"  # the paths still name the engine's code


@pytest.mark.parametrize("log", [
    # quoted code: the raise is indented under its `if`
    "In the engine's config:\n    if max_model_len > derived:\n        raise ValueError(\n",
    # a statement in prose, under a sentence
    "The check that fails for me is\n    assert num_heads % tp_size == 0\nand I do not know why.\n",
    # a re-raise or a variable names no class
    "  /srv/vllm/config.py, in _verify\n    raise exc\n",
])
def test_a_quoted_statement_is_no_failure(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


# -- an engine's bare message right after the command, or ending the paste (the raise site index gives its type) --
# vLLM's and SGLang's model registries raise this ValueError (vllm/model_executor/models/registry.py,
# sglang/srt/models/registry.py).
UNSUPPORTED = ("Model architectures ['Glm4MoeForCausalLM'] are not supported for now. Supported architectures: "
               "dict_keys(['AquilaModel', 'LlamaForCausalLM', 'Qwen2ForCausalLM'])")


@pytest.mark.parametrize("command", [
    "$ vllm serve zai-org/GLM-4.5-Air --tensor-parallel-size 4",
    "(venv) user@gpu7:~/work$ python -m sglang.launch_server --model-path zai-org/GLM-4.5-Air --tp 4",
])
def test_an_engine_message_right_after_the_command_is_the_failure(command: str) -> None:
    log = f"{command}\n{UNSUPPORTED}\n$ \n"
    assert primary(log) == ("ValueError", UNSUPPORTED, "unsupported-architecture")


def test_an_engine_message_ending_a_paste_is_the_failure() -> None:
    log = f"INFO 08-01 10:00:00 [api_server.py:1287] vLLM API server version 0.10.0\n{UNSUPPORTED}\n"
    assert primary(log)[:2] == ("ValueError", UNSUPPORTED)


@pytest.mark.parametrize("log", [
    "$ vllm serve Qwen/Qwen2.5-7B-Instruct\nINFO 08-01 10:00:00 [api_server.py:1287] vLLM API server version 0.10.0\n",
    "$ ls /models\nLlama-3.1-8B-Instruct  Qwen2.5-7B-Instruct\n",
    "We read the message as: the model is fine and the server came up.\n",
])
def test_a_line_no_engine_raises_stays_no_failure(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


def test_a_record_of_another_level_quoting_the_message_stays_no_failure() -> None:
    log = f"INFO 08-01 10:00:00 [api_server.py:1287] vLLM API server version 0.10.0\nINFO 08-01 10:00:01 [registry.py:12] {UNSUPPORTED}\n"
    assert diagnose_text(log, OPTIONS).failures == ()


# -- a GPU compiler's error diagnostic (clang/MLIR `<file>:L:C: error:`, LLVM's `error: <loc>:`, nvcc's `fatal`) --
LOADED = "[2025-06-01 10:00:01] Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=60.12 GB\n"


@pytest.mark.parametrize("diagnostic", [
    "/root/.triton/cache/ab12/fused_moe_kernel.py:41:20: error: stack frame size (163840) exceeds limit (131056) in "
    "function 'fused_moe_kernel'",
    "error: <unknown>:0:0: stack frame size (294916) exceeds limit (131056) in function 'fused_moe_kernel'",
    "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
    "clang: error: unsupported option '--offload-arch=gfx1201'",
])
def test_a_compiler_error_after_loading_is_the_failure(diagnostic: str) -> None:
    kind, message, _ = primary(LOADED + diagnostic + "\n")
    assert (kind, message) == ("compiler error", " ".join(diagnostic.split()))


def test_a_compiler_warning_is_no_failure() -> None:
    log = LOADED + "/tmp/build/kernel.cu:12:7: warning: variable 'x' set but not used [-Wunused-but-set-variable]\n"
    assert diagnose_text(log, OPTIONS).failures == ()


def test_a_python_exception_after_the_diagnostic_is_the_failure() -> None:
    printed = real_traceback("raise RuntimeError('PassManager::run failed')\n", "triton/compiler/compiler.py")
    log = LOADED + "error: <unknown>:0:0: stack frame size (294916) exceeds limit (131056) in function 'k'\n" + printed
    assert primary(log)[:2] == ("RuntimeError", "PassManager::run failed")


# -- a frame only in a kernel package one engine ships --
KERNEL_CALL = "raise RuntimeError('FlashAttention only supports Ampere GPUs or newer.')\n"


@pytest.mark.parametrize(("path", "engine"), [
    ("vllm_flash_attn/flash_attn_interface.py", "vllm"),
    ("sgl_kernel/flash_attn.py", "sglang"),
    ("flash_attn/flash_attn_interface.py", None),  # flash-attn itself: both engines run it
])
def test_a_kernel_package_only_one_engine_ships_names_it(path: str, engine: str | None) -> None:
    printed = real_traceback(KERNEL_CALL, "site-packages/" + path)
    fragment = "".join(printed.splitlines(keepends=True)[1:])  # the frame and the exception line, no header
    assert diagnose_text(fragment, OPTIONS).launch.engine == engine


# -- a relative frame path in the engine's own source tree (a checkout run from python/, a paste that shortened paths) --
@pytest.mark.parametrize(("path", "engine"), [
    ("sglang/srt/managers/scheduler.py", "sglang"),
    ("vllm/v1/engine/core.py", "vllm"),
    ("vllm/helpers.py", None),  # `vllm/` alone may be a directory of models
    # No engine's name left in it, but a module only SGLang's indexed releases have (the engine module index; weak
    # evidence, read when nothing else decides: tests/test_engine_clues.py)
    ("srt/managers/scheduler.py", "sglang"),
    ("managers/scheduler.py", None),  # one directory and a file: anyone's
])
def test_a_relative_frame_path_in_an_engines_tree_names_it(path: str, engine: str | None) -> None:
    printed = real_traceback("def event_loop():\n    raise ValueError('bad')\n\nevent_loop()\n", path)
    relative = printed.replace("/srv/", "")
    assert f'File "{path}"' in relative
    assert diagnose_text(relative, OPTIONS).launch.engine == engine
