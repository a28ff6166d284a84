"""Stop 51's general category checks, each on the wordings the engines, the loader and CPython print (the sources
are named at each test)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import regex

from logsleuth.facts.categories import table
from logsleuth.reasoning.dependencies import _TORCH_SYMBOL
from logsleuth.reasoning.general import row_checks
from tests.helpers import diagnose_without_patterns, real_traceback

TORCH_CHECK = "built against another torch or CUDA"
OTHER_LIBRARY_CHECK = "is not torch's or CUDA's"


def _dependency_checks(line: str) -> tuple[str, ...]:
    row = table().row("dependency-version")
    assert row is not None
    return tuple(row_checks(row, "sglang", None, texts=(line,)))


@pytest.mark.parametrize("symbol", [
    "_ZN3c104cuda9SetDevice",  # c10::cuda::SetDevice, a vLLM _C built for another torch
    "_ZNK3c1010TensorImpl4sizeEv",  # a const method of c10::TensorImpl
    "_ZN2at6native5emptyEv",  # at::native
    "_Z16THPVariable_WrapN2at10TensorBaseE",  # a free function taking at:: types
    "c10::MessageLogger::MessageLogger(char const*, int, int, bool)",  # the loader's demangled form
    "cudaGetDriverEntryPointByVersion",  # the CUDA runtime's
    "ncclCommWindowRegister",  # NCCL's
])
def test_a_torch_or_cuda_symbol_keeps_the_torch_build_check(symbol: str) -> None:
    """glibc's dlerror `<file>: undefined symbol: <name>` with a torch (c10::, at::, torch::) or CUDA name: the module
    was built for another torch or CUDA, the build that matches the installed torch is the check."""
    checks = _dependency_checks(f"ImportError: /venv/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: {symbol}")
    assert TORCH_CHECK in checks[0]
    assert not any(OTHER_LIBRARY_CHECK in check for check in checks)


@pytest.mark.parametrize("symbol", [
    "numa_get_membind",  # libnuma's C API, under a CPU kernel build linked without it (sgl-project/sglang#9584)
    "_ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE",  # atb::, Ascend ATB (vllm-ascend#117)
    "ibv_reg_dmabuf_mr",  # rdma-core's
    "_ZN12atb_speed_opsC1Ev",  # a namespace whose name merely starts with "at": not torch's at::
])
def test_another_librarys_symbol_is_never_called_a_torch_build_mismatch(symbol: str) -> None:
    """A missing symbol with no torch or CUDA name in it is another library's: that library missing or of another
    release, which a torch reinstall does not change, so the torch check is not shown."""
    checks = _dependency_checks(f"ImportError: /opt/lib/libtorch_npu.so: undefined symbol: {symbol}")
    assert OTHER_LIBRARY_CHECK in checks[0]
    assert not any(TORCH_CHECK in check for check in checks)


def test_a_symbol_wrapped_onto_the_next_line_keeps_the_torch_check() -> None:
    """A paste hard-wrapped after `undefined symbol:` shows no symbol on the failure's line: nothing says whose it is,
    and the check that resolved most such reports (the torch build) stays."""
    checks = _dependency_checks("ImportError: /venv/site-packages/vllm/_C.abi3.so: undefined symbol:")
    assert TORCH_CHECK in checks[0]


@pytest.mark.parametrize(("word", "expected"), [
    ("AttributeError", "an"), ("IOError", "an"), ("UnsupportedFlagTuneDeviceError", "an"), ("int", "an"),
    ("ValueError", "a"), ("UnicodeDecodeError", "a"), ("UserWarning", "a"), ("float", "a"),
])
def test_the_article_before_an_exception_name(word: str, expected: str) -> None:
    """The general guidance's "What a AttributeError generally means" read wrongly on split 14's reports."""
    from logsleuth.wording import article

    assert article(word) == expected


_NONE_DEREFERENCE = """
    class SchedulerMetricsMixin:
        def log_prefill_stats(self, prefill_stats=None):
            self.last_prefill_tokens = prefill_stats.log_input_tokens

    SchedulerMetricsMixin().log_prefill_stats()
"""


def _with_paths_shortened(printed: str) -> str:
    """The paste as users often give it: the directories above the file cut away."""
    return printed.replace("/srv/", "")


def test_a_frame_the_paste_shortened_to_an_engine_files_name_is_the_engines_code() -> None:
    """sgl-project/sglang#18631: a scheduler's None dereference pasted with bare file names
    (`scheduler_metrics_mixin.py`, in log_prefill_stats). Only SGLang's indexed code has that file and function, so the
    failing call is the engine's own code: an engine bug of the release, not "no category"."""
    printed = _with_paths_shortened(real_traceback(_NONE_DEREFERENCE, "scheduler_metrics_mixin.py"))
    assert 'File "scheduler_metrics_mixin.py"' in printed
    assert diagnose_without_patterns(printed).category == "engine-bug"


def test_a_users_own_file_with_the_same_error_is_no_engine_code() -> None:
    """The look-alike: the same dereference in a file of the user's (no engine's indexed code has it) names no engine
    code, and the engine-bug row, which needs the engine's own frame, does not fit."""
    printed = _with_paths_shortened(real_traceback(_NONE_DEREFERENCE.replace("log_prefill_stats", "record_stats"), "metrics.py"))
    assert diagnose_without_patterns(printed).category != "engine-bug"


TORCH_SYMBOLS = ["_ZN3c104cuda9SetDevice", "_ZNK3c1010TensorImpl4sizeEv", "_ZN2at6native5emptyEv",
                 "_ZN5torch3jit17parseSchemaOrNameERKSs", "_ZN4c10d7Backend4sendEv"]
OTHER_SYMBOLS = ["numa_get_membind", "_ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE",
                 "ibv_reg_dmabuf_mr", "_ZN12atb_speed_opsC1Ev"]


@pytest.mark.parametrize("symbol", TORCH_SYMBOLS + OTHER_SYMBOLS)
def test_the_three_readers_of_a_torch_symbol_agree(symbol: str) -> None:
    """torch's C++ namespaces are read in three places: the dependency rule (reasoning/dependencies.py), the
    sgl-kernel ABI pattern (patterns/sglang/sgl-kernel-abi.toml) and the dependency-version category's checks (above).
    They must call the same symbols torch's, so a change to one that the others miss fails here."""
    is_torch = symbol in TORCH_SYMBOLS
    assert (_TORCH_SYMBOL.match(symbol) is not None) is is_torch
    pattern = tomllib.loads((Path(__file__).resolve().parent.parent / "patterns" / "sglang" / "sgl-kernel-abi.toml")
                            .read_text(encoding="utf-8"))
    line = f"/venv/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: {symbol}"
    assert any(regex.search(match["message"], line) for match in pattern["match"]) is is_torch
    checks = _dependency_checks(f"ImportError: {line}")
    assert (TORCH_CHECK in checks[0]) is is_torch
