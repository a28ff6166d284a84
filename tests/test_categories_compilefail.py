"""Stop 48 (compilefail), in generic words (issue 28): the engine compiles at start-up and the compiler fails.

- A compiler or build tool a package runs to build a kernel at start-up, missing or failing (the host C compiler
  Triton builds its launcher with, under torch.compile's Inductor; ninja under flashinfer's JIT), is the machine's
  toolchain (dependency-version), not torch.compile failing on the model's code nor an attention backend
  (vllm-project/vllm#19656, vllm-project/vllm#17018, THUDM/slime#1314, transformerlab/transformerlab-api#381).
- An exception printed without a traceback right above a chain separator (torch.compile strips its errors' tracebacks:
  torch/_dynamo/eval_frame.py `raise e.with_traceback(None) from e.__cause__`) is the chain's oldest exception, even
  of a class of one word (`torch._dynamo.exc.Unsupported`) that a bare line is not read as (sgl-project/sglang
  PR#10062's report under --enable-piecewise-cuda-graph).
- The compile checks name the launch's own compilation switch (SGLang's --enable-torch-compile or
  --enable-piecewise-cuda-graph) only for a launch that gives it; vLLM's corrupted compile cache names the cache
  directory the log shows; torch's BackendCompilerFailed that could not cross a process boundary says the real error
  is the worker's (lamikr/rocm_sdk_builder#248); a custom op's plain-torch path failing under SGLang's
  --enable-torch-compile says so (sgl-project/sglang#1372).
- torch.compile's `WON'T CONVERT …` warning, whose traceback it survived by running the frame eagerly, is no failure
  of a server that came up after it.
The main venv has no torch, so the tracebacks are real CPython's from a site-packages tree laid out as torch's, Triton's,
flashinfer's and the engines' (their classes and raising statements rebuilt in our own code, the messages the
packages' own)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import check_texts, diagnose_without_patterns, real_traceback, traceback_of_installed
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used below)

_TORCH_EXC = '''
class Unsupported(Exception):
    pass


class BackendCompilerFailed(Exception):
    def __init__(self, backend_fn, inner_exception):
        self.inner_exception = inner_exception
        super().__init__(f"backend={backend_fn!r} raised:\\n{type(inner_exception).__name__}: {inner_exception}")
'''

_INDUCTOR_EXC = '''
class InductorError(Exception):
    pass
'''

# Triton's launcher build (triton/runtime/build.py _build): the host C compiler on main.c, with -lcuda.
_TRITON_BUILD = '''
import subprocess


def _build(cc, src, out):
    cc_cmd = [cc, src, "-O3", "-shared", "-fPIC", "-o", out, "-lcuda"]
    subprocess.check_call(cc_cmd, stdout=subprocess.DEVNULL)
'''

# Inductor's compile of a graph, re-raising what failed in it as InductorError (torch/_inductor/compile_fx.py).
_COMPILE_FX = '''
from torch._inductor.exc import InductorError
from triton.runtime.build import _build


def compile_fx_inner(cc, src, out):
    try:
        _build(cc, src, out)
    except Exception as e:
        raise InductorError(f"{type(e).__name__}: {e}") from e
'''

# flashinfer's JIT (flashinfer/jit/cpp_ext.py run_ninja): ninja in the build directory.
_FLASHINFER_NINJA = '''
import subprocess


def run_ninja(workdir):
    subprocess.run(["ninja", "-v", "-C", workdir], check=True)
'''


def _stderr(tmp_path: Path, files: dict[str, str], script: str) -> str:
    proc = traceback_of_installed(tmp_path, files, script)
    assert proc.returncode != 0 and "Traceback" in proc.stderr, proc.stderr
    return proc.stderr


def _failing_compiler(tmp_path: Path) -> Path:
    """A host compiler named gcc that exits 1 (as gcc does on a missing header)."""
    gcc = tmp_path / "toolchain" / "gcc"
    gcc.parent.mkdir()
    gcc.write_text("#!/bin/sh\necho 'fatal error: stddef.h: No such file or directory' >&2\nexit 1\n", encoding="utf-8")
    gcc.chmod(gcc.stat().st_mode | stat.S_IXUSR)
    return gcc


@pytest.mark.usefixtures("no_rules")
def test_a_c_compiler_failing_under_inductor_is_the_toolchain(tmp_path: Path) -> None:
    gcc = _failing_compiler(tmp_path)
    files = {"torch/_inductor/exc.py": _INDUCTOR_EXC, "torch/_inductor/compile_fx.py": _COMPILE_FX,
             "triton/runtime/build.py": _TRITON_BUILD}
    script = f"from torch._inductor.compile_fx import compile_fx_inner\ncompile_fx_inner({str(gcc)!r}, 'main.c', 'cuda_utils.so')\n"
    printed = _stderr(tmp_path, files, script)
    assert "torch._inductor.exc.InductorError: CalledProcessError: Command" in printed
    diagnosis = diagnose_without_patterns("vllm serve Qwen/Qwen2.5-0.5B-Instruct\n" + printed)
    assert diagnosis.category == "dependency-version", diagnosis.title
    assert "compiler or build tool" in diagnosis.title
    checks = check_texts(diagnosis)
    assert "Python.h" in checks and "--enforce-eager" in checks


@pytest.mark.usefixtures("no_rules")
def test_ninja_missing_under_flashinfers_jit_is_the_toolchain_not_a_model_path(tmp_path: Path) -> None:
    script = ("import os\nos.environ['PATH'] = '/nonexistent'\n"
              "from flashinfer.jit.cpp_ext import run_ninja\nrun_ninja('/root/.cache/flashinfer/80/cached_ops')\n")
    printed = _stderr(tmp_path, {"flashinfer/jit/cpp_ext.py": _FLASHINFER_NINJA}, script)
    assert "No such file or directory: 'ninja'" in printed
    diagnosis = diagnose_without_patterns(printed)
    assert diagnosis.category == "dependency-version", diagnosis.title
    assert "pip install ninja" in check_texts(diagnosis)


# torch.compile's stripping of its errors' tracebacks (torch/_dynamo/eval_frame.py compile_wrapper), around a trace
# that failed on an op returning no tensor.
_EVAL_FRAME = '''
from torch._dynamo.exc import Unsupported


def _trace():
    try:
        raise Unsupported("torch.* op returned non-Tensor\\n  Explanation: torch.* ops that return a non-Tensor cannot be traced into the Dynamo FX graph output")
    except Unsupported as inner:
        raise Unsupported("torch.* op returned non-Tensor") from inner


def compile_wrapper():
    try:
        _trace()
    except Unsupported as e:
        cur = e
        while cur.__cause__ is not None:
            cur.__cause__.with_traceback(None)
            cur = cur.__cause__
        raise e.with_traceback(None) from e.__cause__
'''

_RUNNER = '''
from torch._dynamo.eval_frame import compile_wrapper


def warmup_compile():
    compile_wrapper()
'''


def _dynamo_cause_printed(tmp_path: Path) -> str:
    """The chain as CPython prints it, its final exception line cut as a paste that stopped at the frames does."""
    files = {"torch/_dynamo/exc.py": _TORCH_EXC, "torch/_dynamo/eval_frame.py": _EVAL_FRAME,
             "sglang/srt/model_executor/piecewise_cuda_graph_runner.py": _RUNNER}
    printed = _stderr(tmp_path, files, "from sglang.srt.model_executor.piecewise_cuda_graph_runner import warmup_compile\n"
                                       "warmup_compile()\n")
    first, separator, rest = printed.partition("The above exception was the direct cause of the following exception:")
    assert separator and first.startswith("torch._dynamo.exc.Unsupported: "), printed  # printed with no traceback
    return printed[: printed.rindex("torch._dynamo.exc.Unsupported: ")]


@pytest.mark.usefixtures("no_rules")
def test_an_exception_printed_without_its_traceback_above_the_separator_is_the_chains_first(tmp_path: Path) -> None:
    command = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-piecewise-cuda-graph --tp 2\n"
    report = diagnose_text(command + _dynamo_cause_printed(tmp_path), DiagnoseOptions(include_user_patterns=False))
    group = report.failures[0]
    assert group.failure.exceptions[0].type == "torch._dynamo.exc.Unsupported"
    assert group.failure.exceptions[0].message.startswith("torch.* op returned non-Tensor")
    diagnosis = group.diagnosis
    assert diagnosis is not None and diagnosis.category == "engine-bug"
    assert "torch.compile" in diagnosis.title
    checks = check_texts(diagnosis)
    # The launch gives --enable-piecewise-cuda-graph, not --enable-torch-compile: only its own switch is named.
    assert "--enable-piecewise-cuda-graph" in checks
    assert "--enable-torch-compile" not in checks


@pytest.mark.usefixtures("no_rules")
def test_the_torch_compile_switch_is_asked_about_when_the_launch_is_not_shown(tmp_path: Path) -> None:
    checks = check_texts(diagnose_without_patterns(_dynamo_cause_printed(tmp_path)))
    assert "if the launch gives --enable-torch-compile" in checks


_COMPILER_INTERFACE = '''
def compile(hash_str):
    if hash_str is None:
        raise RuntimeError(
            "vLLM failed to compile the model. The most likely reason for this is that a previous compilation "
            "failed, leading to a corrupted compilation artifact. We recommend trying to remove "
            "~/.cache/vllm/torch_compile_cache and try again to see the real issue. ")
'''


@pytest.mark.usefixtures("no_rules")
def test_vllms_corrupted_compile_cache_names_the_cache_the_log_shows(tmp_path: Path) -> None:
    printed = _stderr(tmp_path, {"vllm/compilation/compiler_interface.py": _COMPILER_INTERFACE},
                      "from vllm.compilation.compiler_interface import compile\ncompile(None)\n")
    cache = "/data/cache/vllm/torch_compile_cache/3f2fad2cbf"
    log = (f"(EngineCore_DP0 pid=953) INFO 09-15 16:35:12 [backends.py:548] Using cache directory: {cache}/rank_0_0/"
           "backbone for vLLM's torch.compile\n" + printed)
    diagnosis = diagnose_without_patterns(log)
    assert diagnosis.category == "engine-bug", diagnosis.title
    assert "remove the cache directory the log names (/data/cache/vllm/torch_compile_cache)" in check_texts(diagnosis)


_WORKER_SENDS = '''
import pickle

from torch._dynamo.exc import BackendCompilerFailed


def send_result():
    error = BackendCompilerFailed("inductor", RuntimeError("Triton compilation failed"))
    return pickle.loads(pickle.dumps(error))  # the executor's reply to the engine: the exception crosses processes
'''


@pytest.mark.usefixtures("no_rules")
def test_backendcompilerfailed_that_could_not_cross_processes_points_to_the_workers_error(tmp_path: Path) -> None:
    printed = _stderr(tmp_path, {"torch/_dynamo/exc.py": _TORCH_EXC, "vllm/executor/worker_reply.py": _WORKER_SENDS},
                      "from vllm.executor.worker_reply import send_result\nsend_result()\n")
    assert "BackendCompilerFailed.__init__() missing 1 required positional argument: 'inner_exception'" in printed
    diagnosis = diagnose_without_patterns(printed)
    assert diagnosis.category == "engine-bug" and "torch.compile" in diagnosis.title
    assert "is not the compile error itself" in check_texts(diagnosis)


_CUSTOM_OP = '''
class FusedMoE:
    def forward_native(self, x):
        raise NotImplementedError

    def forward(self, x):
        return self.forward_native(x)
'''


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("flag", ["--enable-torch-compile", ""])
def test_a_custom_ops_plain_torch_path_failing_under_sglangs_torch_compile(tmp_path: Path, flag: str) -> None:
    printed = _stderr(tmp_path, {"sglang/srt/layers/moe/fused_moe.py": _CUSTOM_OP},
                      "from sglang.srt.layers.moe.fused_moe import FusedMoE\nFusedMoE().forward(None)\n")
    command = f"python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V2-Lite --tp-size 2 {flag}\n"
    checks = check_texts(diagnose_without_patterns(command + printed))
    assert ("forward_native" in checks) == bool(flag)


def test_torch_compiles_wont_convert_warning_is_no_failure_of_a_server_that_came_up() -> None:
    # torch/_dynamo/exc.py format_error_msg, logged by convert_frame.py through glog's W prefix, line by line.
    inner = real_traceback("def compiler_fn():\n    raise RuntimeError('backend exploded')\ncompiler_fn()\n",
                           "torch/_dynamo/output_graph.py")
    warning = "WON'T CONVERT forward /srv/vllm/model_executor/models/llama.py line 340 \ndue to: \n" + inner
    prefix = "W1206 07:21:19.803000 19342 torch/_dynamo/convert_frame.py:2415] "
    log = "".join(prefix + line + "\n" for line in warning.splitlines())
    served = log + "INFO:     Application startup complete.\n"
    assert not diagnose_text(served, DiagnoseOptions(include_user_patterns=False)).failures
    # Cut before the server came up, the warning is all the paste shows: still reported.
    assert diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures


def test_a_crash_printed_right_after_a_wont_convert_traceback_is_no_fallback() -> None:
    """Review M5 of stop 48: the WON'T CONVERT lines sit above the survived traceback only, not above a crash that
    follows it, so the crash is a failure even when the server's readiness line comes later."""
    inner = real_traceback("def compiler_fn():\n    raise RuntimeError('backend exploded')\ncompiler_fn()\n",
                           "torch/_dynamo/output_graph.py")
    crash = real_traceback("def schedule():\n    raise ValueError('a real crash after the eager fallback')\nschedule()\n",
                           "sglang/srt/managers/scheduler.py")
    log = "WON'T CONVERT forward /srv/models/llama.py line 340 \ndue to: \n" + inner + crash
    failures = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures
    crashes = [group.failure for group in failures if "a real crash" in group.failure.final.message]
    assert crashes and not any((failure.header or "").startswith("WON'T CONVERT") for failure in crashes)
