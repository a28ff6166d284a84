"""A wrapper's call on the engine's API that the installed release does not fit (issue 28): a program that runs the
engine (an installed package, a known wrapper's checkout) calls a method, attribute or keyword of the engine's that
the installed release lacks.  The engine's code fails at the entry of that call, or CPython refuses it in the
wrapper's own frame: the advice is the wrapper's supported engine releases, not "a bug in the engine".

Shapes: OpenRLHF/OpenRLHF#922 (openrlhf/trainer/ray/vllm_engine.py calling LLM.collective_rpc, whose first line reads
self.llm_engine.model_executor: AttributeError under the engine that lacks it), verl-project/verl#2812 (verl's rollout
building the engine with a keyword the release lacks, through the engine's frame).  Tracebacks are printed by the
real interpreter (tests.helpers.real_traceback, one module per file)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from logsleuth.models import Diagnosis
from tests.helpers import real_traceback

NO_PATTERNS = PatternSet(patterns=[], errors=[])
SITE = "venv/lib/python3.12/site-packages"


def _diagnosis(text: str) -> Diagnosis:
    report = diagnose_text(text, DiagnoseOptions(include_user_patterns=False), patterns=NO_PATTERNS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None
    return diagnosis


def _wrapper_over_engine(tmp_path: Path, wrapper: str, engine: str, *, engine_depth: int = 1) -> str:
    """Real CPython's traceback: a module at `wrapper` (a path under site-packages) calls into the module at `engine`,
    whose code fails `engine_depth` frames down reading an attribute its engine object lacks."""
    root = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    for module in (wrapper, engine):
        for package in Path(module).parents:
            if package != Path("."):
                (root / package).mkdir(parents=True, exist_ok=True)
                (root / package / "__init__.py").touch()
    steps = "".join(f"def step{i}(engine):\n    return step{i + 1}(engine)\n\n" for i in range(1, engine_depth))
    (root / engine).write_text(
        f"class LLMEngine:\n    pass\n\n{steps}def step{engine_depth}(engine):\n    return engine.model_executor\n",
        encoding="utf-8")
    engine_dotted = engine.removesuffix(".py").replace("/", ".")
    (root / wrapper).write_text(
        f"from {engine_dotted} import LLMEngine, step1\n\ndef init_process_group():\n    return step1(LLMEngine())\n",
        encoding="utf-8")
    script = tmp_path / "train.py"
    wrapper_dotted = wrapper.removesuffix(".py").replace("/", ".")
    script.write_text(f"import sys\nsys.path.insert(0, {str(root)!r})\nfrom {wrapper_dotted} import init_process_group\n"
                      "init_process_group()\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 1 and "AttributeError" in run.stderr
    return run.stderr


def test_an_engine_failing_at_the_entry_of_a_wrappers_call_is_the_wrappers_release(tmp_path: Path) -> None:
    text = _wrapper_over_engine(tmp_path, "openrlhf/trainer/ray/vllm_engine.py", "vllm/entrypoints/llm.py")
    diagnosis = _diagnosis(text)
    assert diagnosis.category == "dependency-version", diagnosis.title
    assert "another vLLM release" in diagnosis.title
    assert "openrlhf/trainer/ray/vllm_engine.py" in diagnosis.root_cause
    assert "bug" not in diagnosis.title


def test_the_engine_failing_deep_below_a_wrappers_call_stays_the_engines(tmp_path: Path) -> None:
    """Three engine frames below the wrapper's: the engine's own code ran on; a web framework's frame above the
    engine's route is no wrapper."""
    deep = _wrapper_over_engine(tmp_path / "deep", "openrlhf/trainer/ray/vllm_engine.py", "vllm/v1/engine/core.py",
                                engine_depth=3)
    assert _diagnosis(deep).category == "engine-bug"
    routed = _wrapper_over_engine(tmp_path / "routed", "starlette/routing.py", "vllm/entrypoints/openai/api_server.py")
    assert _diagnosis(routed).category == "engine-bug"


def _wrapper_frame_reading(class_name: str) -> str:
    """Real CPython's traceback: a wrapper's own frame reads an attribute an instance of `class_name` lacks."""
    return real_traceback(f"""
        class {class_name}:
            pass

        def prepare_engine():
            return {class_name}().get_tokenizer_group()

        prepare_engine()
        """, f"{SITE}/swift/llm/infer/infer_engine/vllm_engine.py")


def test_a_wrappers_own_frame_refusing_an_engine_class_attribute_is_the_wrappers_release() -> None:
    """CPython refuses the attribute in the wrapper's frame, on a class of the engine's code (AsyncLLM): not the
    tokenizer the attribute's name mentions.  The wrapper's own class names no engine release."""
    diagnosis = _diagnosis(_wrapper_frame_reading("AsyncLLM"))
    assert diagnosis.category == "dependency-version" and "another vLLM release" in diagnosis.title, diagnosis.title
    assert "another" not in _diagnosis(_wrapper_frame_reading("RolloutBuffer")).title


# SGLang 0.5.9's sglang/srt/layers/attention/nsa_backend.py:1907, NativeSparseAttnBackend._forward_trtllm: under
# `if self.kv_cache_dtype == torch.float8_e4m3fn` it asserts `cos_sin_cache is not None` (the raise site index): a
# check that reads --kv-cache-dtype, on a path only that setting with this backend takes.
NSA_CHECK = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2600, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/attention/nsa_backend.py", line 1907, in _forward_trtllm\n'
    "    assert (\n"
    "AssertionError: For FP8 path cos_sin_cache should not be None.\n"
)


def _launched(flags: str) -> str:
    return f"$ python3 -m sglang.launch_server --model-path org/model --tp 8 {flags}--port 30000\n" + NSA_CHECK


def test_the_general_checks_name_the_setting_the_failing_check_reads() -> None:
    diagnosis = _diagnosis(_launched("--kv-cache-dtype fp8_e4m3 "))
    first = diagnosis.fix.steps[0] if diagnosis.fix else ""
    assert first.startswith("General guidance:") and "--kv-cache-dtype fp8_e4m3" in first, first
    assert "newer SGLang release" in first and "--model-path" not in first and "--tp" not in first


def test_a_setting_the_launch_leaves_at_its_default_is_not_named() -> None:
    diagnosis = _diagnosis(_launched(""))
    assert diagnosis.fix is not None
    assert not any("the launch sets" in step for step in diagnosis.fix.steps)
