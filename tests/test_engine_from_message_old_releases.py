"""The engine from a bare exception line of an older release (issue 28: 5 of 34 failure logs of a blind split were one
exception line with no path, banner or program, several from 2024 to mid-2025).  The raise site index holds the last
release of older minor lines too (SGLang 0.3.6.post3 to 0.4.5.post3, vLLM 0.5.5 to 0.9.2;
scripts/engine_index/build.py RELEASES), so a message only one engine's code ever raised names that engine, and a
message both engines raised at some indexed release names neither.

Wordings are the engines' own, from the code sites named: SGLang 0.3.6.post3's model runner refusing an architecture
(sglang/srt/model_executor/model_runner.py; the wording of sgl-project/sglang#1331); vLLM 0.6.3.post1's client of
its engine process (vllm/engine/multiprocessing/client.py, `TimeoutError("No heartbeat received from MQLLMEngine")`;
pasted alone in QwenLM/Qwen#1322); vLLM 0.7.3's check of sleep mode (vllm/config.py) and 0.5.5's of chunked prefill
(vllm/engine/arg_utils.py).  The sampling checks SGLang 0.3 copied from vLLM
(sglang/srt/sampling/sampling_params.py, vllm/sampling_params.py) are both engines'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.engine_messages import engines_raising
from logsleuth.facts.raise_sites import read_member

OPTIONS = DiagnoseOptions(include_user_patterns=False)
ARCHITECTURES = ("Unsupported architectures: ChatGLMForConditionalGeneration. Supported list: ['ChatGLMModel', "
                 "'LlamaForCausalLM', 'Qwen2ForCausalLM']")
SLIDING_WINDOW = ("Chunked prefill is not supported with sliding window. Set --disable-sliding-window to disable "
                  "sliding window.")


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


def _traceback(tmp_path: Path, kind: str, message: str) -> str:
    """What real CPython prints when a user's script (no frame in either engine) raises `kind(message)`."""
    script = tmp_path / "app.py"
    script.write_text(f"def start():\n    raise {kind}({message!r})\n\nstart()\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1 and "Traceback (most recent call last):" in run.stderr
    return run.stderr


def test_the_index_holds_the_older_releases_of_both_engines() -> None:
    sglang, vllm = read_member("sglang", "index.json"), read_member("vllm", "index.json")
    assert isinstance(sglang, dict) and isinstance(vllm, dict)
    assert {"0.3.6.post3", "0.4.0.post2", "0.4.3.post4", "0.4.5.post3"} <= set(sglang["releases"])
    assert {"0.5.5", "0.6.3.post1", "0.7.3", "0.8.5.post1", "0.9.2"} <= set(vllm["releases"])


@pytest.mark.parametrize(
    ("kind", "message", "engine"),
    [
        ("ValueError", ARCHITECTURES, "sglang"),  # SGLang 0.3.6.post3's model runner only
        ("TimeoutError", "No heartbeat received from MQLLMEngine", "vllm"),  # vLLM 0.6.3.post1's V0 client only
        ("ValueError", "Sleep mode is only supported on CUDA devices.", "vllm"),  # vLLM 0.7.3's ModelConfig only
        ("ValueError", SLIDING_WINDOW, "vllm"),  # vLLM 0.5.5's EngineArgs only
    ],
)
def test_a_bare_line_only_an_older_release_raised_names_its_engine(tmp_path: Path, kind: str, message: str,
                                                                   engine: str) -> None:
    assert engines_raising(kind, message) == {engine}
    assert engine_of(f"{kind}: {message}\n") == engine  # the exception line alone
    assert engine_of(f"{message}\n") == engine  # its type lost too
    assert engine_of(_traceback(tmp_path, kind, message)) == engine  # raised from a user's script


@pytest.mark.parametrize(
    "message",
    [
        "top_k must be -1 (disable), or at least 1, got 0.",  # vLLM's, and SGLang 0.3.6.post3's copy
        "repetition_penalty must be in (0, 2], got 3.0.",  # the same
    ],
)
def test_a_message_both_engines_raised_at_some_release_decides_nothing(message: str) -> None:
    """Before the older releases were indexed these named vLLM: SGLang 0.3 raised them word for word."""
    assert engines_raising("ValueError", message) == {"sglang", "vllm"}
    assert engine_of(f"ValueError: {message}\n") is None


def test_cpythons_wording_and_a_message_naming_an_engine_decide_nothing_with_the_older_releases() -> None:
    # CPython's own wording, whatever template of an old release it matches
    assert engine_of("AttributeError: 'NoneType' object has no attribute 'get_model_architectures'\n") is None
    # a message that names vLLM is no evidence of vLLM: neither engine's code raises it as it stands
    assert engine_of("ModuleNotFoundError: No module named 'vllm.engine.multiprocessing'\n") is None
