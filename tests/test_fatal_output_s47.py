"""Fatal output stop 47's dev sweep (branch findmore) found missed or misread, each from the code site that prints it:

- a C/C++ library's failed assert() with no Python traceback: glibc's assert/assert.c __assert_fail_base prints
  "%s%s%s:%u: %s%sAssertion `%s' failed.\\n" (program, file, line, function, condition); LLVM, MLIR and Triton's compiler
  report through it (triton-lang/triton#4502, ModelTC/LightLLM#156: `python: /project/lib/Analysis/Allocation.cpp:40: …
  mlir::triton::getCvtOrder(…): Assertion `…' failed.`).  The tests compile a tiny C program with the system `cc` and
  read what glibc prints; libstdc++'s checked operator[] (GCC's __glibcxx_assert_fail, "%s:%d: %s: Assertion '%s'
  failed.\\n") is written from that format string.  The assert's tail alone (an issue title quoting it) is a fallback.
- LLVM's report_fatal_error (llvm/lib/Support/ErrorHandling.cpp: "LLVM ERROR: " + reason), also quoted in a sentence
  (state-spaces/mamba#173).
- torch's NCCL watchdog (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp): "Process group watchdog thread terminated
  with exception: " + what() (torch before 2.2: "[Rank N] NCCL watchdog thread terminated with exception: ", a
  std::runtime_error); the CUDA runtime's error name inside decides the category, not the watchdog that carried it
  (sgl-project/sglang#8296, #4584, vllm-project/vllm#17098).  Its timeout text hard-wrapped inside `WorkNCCL(…`
  (sgl-project/sglang#3836), and a backtrace of the watchdog thread whose what() the paste left out
  (vllm-project/vllm#9308, #7057).
- an exception quoted without marks in Chinese, Japanese or Korean prose (no space before the type, the sentence's
  own full-width punctuation after the message) or between French guillemets.
- argparse's error line (CPython Lib/argparse.py ArgumentParser.error: "%(prog)s: error: %(message)s\\n") wrapped by a
  terminal or a paste, its message's rest on the next line.

The exception lines are real CPython's (tests.helpers.real_traceback), the argparse output real argparse's."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from logsleuth.api import diagnose_text
from logsleuth.ingest.normalize import normalize_text
from logsleuth.tracebacks.grammar import usage_message_cut
from logsleuth.tracebacks.native_asserts import LLVM_ERROR_TYPE, NATIVE_ASSERT_TYPE, native_report
from logsleuth.tracebacks.scanner import scan
from logsleuth.tracebacks.typeless_errors import WATCHDOG_UNPASTED_TYPE
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

SGLANG_LAUNCH = "python -m sglang.launch_server --model-path /models/Qwen2-7B --tp 2\n"
VLLM_LAUNCH = "vllm serve /models/Qwen2-7B --tensor-parallel-size 2\n"
C_PROGRAM = """#include <assert.h>
int check_layout(int rank) { assert(rank > 0 && "layout needs a positive rank"); return rank; }
int main(void) { return check_layout(0); }
"""


def glibc_assert_line(tmp_path: Path) -> str:
    """What glibc prints for a failed assert(): a C program compiled with the system `cc` and run (its stderr)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler here")
    source, program = tmp_path / "layout.c", tmp_path / "layout"
    source.write_text(C_PROGRAM)
    subprocess.run(["cc", "-o", str(program), str(source)], check=True, cwd=tmp_path, timeout=120)
    proc = subprocess.run([str(program)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode != 0
    (line,) = [text for text in proc.stderr.splitlines() if "Assertion" in text]
    return line.replace(str(tmp_path) + "/", "")


def test_a_c_programs_failed_assert_is_found_with_its_place_and_condition(tmp_path: Path) -> None:
    line = glibc_assert_line(tmp_path)
    kind, message, _ = primary(SGLANG_LAUNCH + "[2025-01-10 10:00:05] Load weight end.\n" + line + "\nAborted (core dumped)\n")
    assert kind == NATIVE_ASSERT_TYPE
    assert message.startswith("layout.c:2: check_layout: Assertion `rank > 0")
    assert message.endswith("' failed.")


def test_a_failed_assert_without_the_abort_notice_is_found(tmp_path: Path) -> None:
    kind, message, _ = primary(VLLM_LAUNCH + glibc_assert_line(tmp_path) + "\n")
    assert kind == NATIVE_ASSERT_TYPE
    assert "Assertion `rank > 0" in message


def test_libstdcxx_checked_access_assert_is_found() -> None:
    # GCC's __glibcxx_assert_fail format ("%s:%d: %s: Assertion '%s' failed.\n"), plain quotes around the condition
    line = ("/usr/include/c++/12/bits/stl_vector.h:1123: std::vector<_Tp, _Alloc>::reference std::vector<_Tp, "
            "_Alloc>::operator[](size_type) [with _Tp = int; _Alloc = std::allocator<int>; reference = int&; size_type = "
            "long unsigned int]: Assertion '__n < this->size()' failed.")
    assert native_report(line) == (NATIVE_ASSERT_TYPE, line)


def test_a_triton_compiler_assert_reads_as_a_kernel_that_does_not_compile_for_this_gpu() -> None:
    line = ("python: /project/lib/Analysis/Allocation.cpp:40: std::pair<llvm::SmallVector<unsigned int>, llvm::SmallVector"
            "<unsigned int> > mlir::triton::getCvtOrder(mlir::Attribute, mlir::Attribute): Assertion `!(srcMmaLayout && "
            "dstMmaLayout) && \"Unexpected mma -> mma layout conversion\"' failed.")
    kind, message, category = primary(SGLANG_LAUNCH + line + "\n")
    assert kind == NATIVE_ASSERT_TYPE
    assert message.startswith("/project/lib/Analysis/Allocation.cpp:40: ")
    assert category == "gpu-arch-unsupported"


def test_an_asserts_tail_alone_is_the_failure_only_of_a_paste_that_shows_no_other() -> None:
    kind, message, _ = primary("[Bug] Assertion `idx < size()' failed.\n")
    assert (kind, message) == (NATIVE_ASSERT_TYPE, "Assertion `idx < size()' failed.")
    shown = real_traceback("raise ValueError('Unsupported architecture Foo')")
    kind, _, _ = primary("[Bug] Assertion `idx < size()' failed.\n" + shown)
    assert kind == "ValueError"


@pytest.mark.parametrize("line", [
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32",
    "The error occurs at the `out = fn()` step, the error is `LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32",
])
def test_llvms_fatal_error_is_found_and_read_as_the_gpu_compiler(line: str) -> None:
    kind, message, category = primary(line + "\nAborted (core dumped)\n")
    assert (kind, message) == (LLVM_ERROR_TYPE, "Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32")
    assert category == "gpu-arch-unsupported"


@pytest.mark.parametrize("said", [
    "I read the docs about assertion failures and LLVM errors but found nothing.",
    "assert(rank > 0) failed in my own test, not in the server",
    "Assertion `x` failed.",  # a CUDA kernel's device assert (backticks): typeless_errors.py's, not a C program's
])
def test_words_about_asserts_are_no_native_report(said: str) -> None:
    assert native_report(said) is None


WATCHDOG = ("[rank1]:[E1012 14:00:00.123456789 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group "
            "watchdog thread terminated with exception: CUDA error: {said}\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
            "incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")


@pytest.mark.parametrize(("said", "category"), [
    ("an illegal instruction was encountered", "illegal-memory-access"),
    ("misaligned address", "illegal-memory-access"),
    ("unknown error", "cuda-error"),
    ("operation not permitted when stream is capturing", "cuda-graph-capture"),
])
def test_the_cuda_error_the_nccl_watchdog_caught_decides_the_category(said: str, category: str) -> None:
    kind, message, found = primary(SGLANG_LAUNCH + WATCHDOG.format(said=said))
    assert kind == "c10::DistBackendError"
    assert message.endswith(f"CUDA error: {said}")
    assert found == category


def test_the_old_watchdog_wording_is_its_runtime_error_and_names_the_cuda_error() -> None:
    record = ("(RayWorkerVllm pid=5304) [E ProcessGroupNCCL.cpp:916] [Rank 7] NCCL watchdog thread terminated with exception: "
              "CUDA error: unknown error\n")
    kind, message, category = primary(VLLM_LAUNCH + record)
    assert (kind, message) == ("std::runtime_error", "[Rank 7] NCCL watchdog thread terminated with exception: CUDA error: unknown error")
    assert category == "cuda-error"


def test_a_watchdog_timeout_wrapped_inside_its_worknccl_is_found() -> None:
    log = ("PIL._imaging[rank5]:[E226 11:16:37.121617583 ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=5653, OpType=ALLREDUCE, NumelIn=58720256, NumelOut=5872\n"
           "0256, Timeout(ms)=600000) ran for 600028 milliseconds before timing out.\n")
    kind, message, category = primary(log)
    assert kind == "c10::DistBackendError"
    assert message.startswith("[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5653")
    assert category == "nccl"


@pytest.mark.parametrize("row", [
    "frame #6: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f2b54d796fc in /venv/lib/python3.10/site-packages/"
    "torch/lib/libtorch_cuda.so)",
    "(RayWorkerWrapper pid=4240, ip=10.0.0.2) /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so(+0xe321ca) "
    "[0x7ef097a461ca] c10d::ProcessGroupNCCL::ncclCommWatchdog()",
])
def test_the_watchdog_threads_backtrace_without_its_message_is_a_fallback(row: str) -> None:
    kind, _, category = primary(row + "\n")
    assert kind == WATCHDOG_UNPASTED_TYPE
    assert category == "nccl"
    shown = real_traceback("raise RuntimeError('CUDA error: an illegal memory access was encountered')")
    kind, _, _ = primary(row + "\n" + shown)
    assert kind == "RuntimeError"


def exception_line(code: str) -> str:
    return real_traceback(code).strip().splitlines()[-1]


@pytest.mark.parametrize("sentence", [
    "运行后报错：{line}",
    "启动就报错{line}，怎么办",
    "我运行 python -m sglang.launch_server --model-path /m 报错 {line} ，请问怎么解决",
    "起動するとエラー{line}。どうすればいいですか",
    "J'ai cette erreur «{line}» au lancement",
])
def test_an_exception_quoted_in_wide_script_prose_is_found_and_its_message_ends_with_it(sentence: str) -> None:
    line = exception_line("raise ValueError('Unsupported architecture Qwen3ForCausalLM')")
    kind, message, _ = primary(VLLM_LAUNCH + sentence.format(line=line) + "\n")
    assert (kind, message) == ("ValueError", "Unsupported architecture Qwen3ForCausalLM")


def argparse_error(argv: list[str]) -> str:
    """What real argparse prints for `argv` to a parser with SGLang's launch program name (its stderr)."""
    parser_code = textwrap.dedent("""
        import argparse, sys
        parser = argparse.ArgumentParser(prog="launch_server.py")
        parser.add_argument("--model-path", required=True)
        parser.add_argument("--tp-size", type=int, default=1)
        parser.parse_args(sys.argv[1:])
    """)
    proc = subprocess.run([sys.executable, "-c", parser_code, *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    return proc.stderr


@pytest.mark.parametrize(("argv", "message", "first_line_ends"), [
    (["--tp-size", "2"], "the following arguments are required: --model-path", "are"),
    (["--model-path", "/m", "--enable-torch-compile", "true"], "unrecognized arguments: --enable-torch-compile true",
     "arguments:"),
])
def test_an_argparse_error_a_paste_wrapped_keeps_its_whole_message(argv: list[str], message: str,
                                                                   first_line_ends: str) -> None:
    printed = argparse_error(argv)
    error = printed.splitlines()[-1]
    assert error.endswith(message)
    at = error.index(first_line_ends) + len(first_line_ends)
    wrapped = printed.replace(error, error[:at] + "\n" + error[at + 1:])  # hard-wrapped where the line was cut
    (failure,) = scan(normalize_text(SGLANG_LAUNCH + wrapped))
    assert (failure.kind, failure.final.message) == ("usage", message)


@pytest.mark.parametrize(("message", "cut"), [
    ("the following arguments are", True),
    ("unrecognized arguments:", True),
    ("argument --quantization/-q: invalid choice: 'x' (choose from 'awq',", True),
    ("unrecognized arguments: --enable-torch-compile true", False),
    ("argument --tp-size: invalid int value: 'two'", False),
])
def test_an_argparse_message_is_cut_only_where_its_wording_stops_short(message: str, cut: bool) -> None:
    assert usage_message_cut(message) is cut


def test_the_line_after_a_whole_argparse_error_is_not_its_message() -> None:
    printed = argparse_error(["--model-path", "/m", "--foo"])
    (failure,) = scan(normalize_text(SGLANG_LAUNCH + printed + "I then tried again with --tp 4\n"))
    assert failure.final.message == "unrecognized arguments: --foo"


@pytest.mark.parametrize("paste", [
    "torch                             2.9.1\ntriton                            3.5.1\nvllm                              0.15.1\n",
    "============ Serving Benchmark Result ============\nSuccessful requests:                     1000\n"
    "Failed requests:                         0\nBenchmark duration (s):                  23.73\n",
])
def test_noisy_pastes_without_a_failure_stay_clean(paste: str) -> None:
    assert not diagnose_text(VLLM_LAUNCH + paste, OPTIONS).failures
