"""float16 for a GPU without bfloat16, unless the GPU is below what vLLM runs on at all (fixes/builders/dtype.py).

vLLM's check_if_supports_dtype says "Bfloat16 is only supported on GPUs with compute capability of at least 8.0.
Your <name> GPU has compute capability <x.y>" and advises --dtype=half.  That holds on 7.0 to 7.5 (Volta, Turing);
a Pascal GPU (6.x) is below the 7.0 every vLLM release documents (facts/gpus.toml vllm-gpu-requirements), so float16
only moves the failure to another kernel.  A mixed host prints the check once per GPU; the failures group as one, and
the oldest GPU decides.  The tracebacks are real CPython's, raising the engine's message from our own code."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Diagnosis
from tests.helpers import real_traceback

_CHECK = '''
def check_if_supports_dtype(name, capability):
    raise ValueError(
        "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
        f"Your {name} GPU has compute capability {capability}. You can use float16 instead by explicitly "
        "setting the `dtype` flag in CLI, for example: --dtype=half.")

check_if_supports_dtype(NAME, CAPABILITY)
'''
_LAUNCH = "$ vllm serve /models/m --tensor-parallel-size 2\nINFO 05-01 10:00:01 vLLM API server version 0.8.5\n"


def _refused(name: str, capability: str) -> str:
    return real_traceback(_CHECK.replace("NAME", repr(name)).replace("CAPABILITY", repr(capability)))


def _diagnosis(log: str) -> Diagnosis:
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    found = report.failures[0].diagnosis
    assert found is not None and found.pattern == "vllm-bf16-unsupported-gpu"
    return found


def test_a_turing_gpu_gets_float16() -> None:
    found = _diagnosis(_LAUNCH + _refused("Tesla T4", "7.5"))
    assert found.fix is not None and [(op.flag, op.value) for op in found.fix.flags] == [("--dtype", "half")]
    assert found.fix.command is not None and found.fix.command.endswith("--dtype half")


def test_a_gpu_below_vllms_floor_gets_no_dtype_change() -> None:
    found = _diagnosis(_LAUNCH + _refused("Tesla P40", "6.1"))
    assert found.fix is not None and found.fix.flags == () and found.fix.command is None
    assert "Tesla P40" in found.fix.summary and "below the 7.0" in found.fix.summary


def test_on_a_mixed_host_the_oldest_gpu_decides() -> None:
    report = diagnose_text(_LAUNCH + _refused("Tesla T4", "7.5") + _refused("Tesla P40", "6.1"),
                           DiagnoseOptions(include_user_patterns=False))
    assert len(report.failures) == 1 and report.failures[0].count == 2  # one check, two GPUs: one group
    found = report.failures[0].diagnosis
    assert found is not None and found.fix is not None and found.fix.flags == ()
    assert "Tesla P40" in found.fix.summary


def test_a_volta_gpu_on_a_release_whose_docs_require_7_5_gets_no_dtype_change() -> None:
    launch = _LAUNCH.replace("0.8.5", "0.31.0")
    found = _diagnosis(launch + _refused("Tesla V100-SXM2-32GB", "7.0"))
    assert found.fix is not None and found.fix.flags == () and "below the 7.5 vLLM 0.31.0 requires" in found.fix.summary


def test_a_volta_gpu_on_an_older_release_gets_float16_and_on_an_unknown_one_the_later_floor_is_said() -> None:
    older = _diagnosis(_LAUNCH + _refused("Tesla V100-SXM2-32GB", "7.0"))
    assert older.fix is not None and [op.value for op in older.fix.flags] == ["half"]
    assert not any("from 0.31.0" in step for step in older.fix.steps)
    unknown = _diagnosis(_LAUNCH.replace("INFO 05-01 10:00:01 vLLM API server version 0.8.5\n", "")
                         + _refused("Tesla V100-SXM2-32GB", "7.0"))
    assert unknown.fix is not None and [op.value for op in unknown.fix.flags] == ["half"]
    assert any("7.5 from 0.31.0" in step for step in unknown.fix.steps)
