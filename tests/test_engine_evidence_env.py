"""Engine evidence from the process and its environment (issue 28, item 4; branch h-vshape): the process titles
vLLM and SGLang set (`VLLM::EngineCore`, `sglang::scheduler_TP0`), also as the kernel's OOM killer cuts them to 15
characters, the logger name Python logging's default format puts before a record (`- vllm.v1.engine.core_client - ERROR - `),
and an engine's own environment variable that the user set for the launch (vllm-project/vllm#13258:
`VLLM_ATTENTION_BACKEND=FLASHINFER`).  A variable only named in a message, or a title in another engine's log whose
own lines say which engine it is, decides nothing.  The logs are our own, in the formats of the programs that print
them (dmesg, nvidia-smi, shells, docker, Kubernetes manifests)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import real_traceback
from tests.test_engine_evidence_more import engine_of

CRASH_CODE = """
    def main():
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    main()
"""


@pytest.fixture(scope="module")
def crash() -> str:
    """A script's own crash, real CPython output: no engine frame, header or command of its own."""
    return real_traceback(CRASH_CODE, "my_eval.py")


@pytest.mark.parametrize(
    ("lines", "engine"),
    [
        ("[Thu Aug 27 00:39:44 2026] Out of memory: Killed process 4242 (VLLM::EngineCor) total-vm:81306880kB, anon-rss:70585600kB\n", "vllm"),
        ("|    0   N/A  N/A     4242      C   VLLM::Worker_TP0                        40000MiB |\n", "vllm"),
        ("[Thu Aug 27 00:39:44 2026] Out of memory: Killed process 99 (sglang::schedul) total-vm:81306880kB, anon-rss:70585600kB\n", "sglang"),
        ("$ VLLM_USE_V1=1 CUDA_VISIBLE_DEVICES=0,1 python3 my_eval.py --tp 2\n", "vllm"),
        ("$ export VLLM_ATTENTION_BACKEND=FLASHINFER\n", "vllm"),
        ("docker run --gpus all -e SGLANG_ENABLE_TORCH_COMPILE=1 my-image python3 my_eval.py\n", "sglang"),
        ("        env:\n        - name: VLLM_LOGGING_LEVEL\n          value: DEBUG\n", "vllm"),
        # Python logging's default format names the engine's module that logged (a script driving the LLM class)
        ("2025-11-02 13:17:04,315 - vllm.v1.engine.core_client - ERROR - Engine core proc EngineCore_DP0 died unexpectedly, "
         "shutting down client.\n", "vllm"),
        ("2025-11-02 13:17:04,315 - sglang.srt.managers.scheduler - ERROR - Scheduler hit an exception\n", "sglang"),
        # a serving platform's backend module for one engine, as its logger (engine_evidence._WRAPPER_ENGINE_LOGGER)
        ("2025-06-19 11:30:14,100 - gpustack.worker.backends.vllm - INFO - Starting the server\n", "vllm"),
        ("2025-12-11 17:47:01.798133+08:00 - gpustack.worker.backends.sglang - INFO - Creating SGLang container workload\n", "sglang"),
        ("2024-10-25 12:21:14,974 xinference.model.llm.sglang.core 37502 INFO     Loading model\n", "sglang"),
    ],
)
def test_a_process_title_or_an_engines_own_variable_names_the_engine(crash: str, lines: str, engine: str) -> None:
    assert engine_of(lines + crash) == engine


@pytest.mark.parametrize(
    "lines",
    [
        "All plugins in this group will be loaded. Set `VLLM_PLUGINS` to control which plugins to load.\n",
        "hint: VLLM_USE_V1 is read only when the engine starts\n",
        "export MY_VLLM_DIR=/models\n",
        "If it still fails, please set VLLM_USE_V1=0 to use the old engine.\n",  # a suggestion, not the user's setting
        "the vllm::enginecore process title is lowercase here\n",
        "2025-06-19 11:30:14,100 - gpustack.worker.backends.base - INFO - Starting the server\n",  # a platform's own logger
    ],
)
def test_a_variable_or_title_only_named_decides_nothing(crash: str, lines: str) -> None:
    assert engine_of(lines + crash) is None


def test_the_logs_own_format_outranks_a_variable_for_the_other_engine(crash: str) -> None:
    sglang_record = "[2025-06-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB\n"
    assert engine_of("$ export VLLM_ATTENTION_BACKEND=FLASHINFER\n" + sglang_record + crash) == "sglang"


@pytest.mark.parametrize(("script", "engine"), [("bin/vllm", "vllm"), ("bin/sglang", "sglang"), ("bin/vllm_eval", None)])
def test_the_engines_console_script_as_the_first_frame_names_it(script: str, engine: str | None) -> None:
    """vllm-project/vllm#35746, #23714: `File "/usr/local/bin/vllm", line 10, in <module>` above torch's frames."""
    log = real_traceback('raise RuntimeError("Found no NVIDIA driver on your system.")\n', script)
    assert engine_of(log) == engine


@pytest.mark.parametrize(
    ("prefix", "engine", "wrapper"),
    [
        ("(EngineCore_0 pid=1518379) ", "vllm", None),  # 0.10.1's engine core (vllm-project/vllm#23714)
        ("(ApiServer_1 pid=77) ", "vllm", None),  # one of several API server processes
        ("(vLLMHttpServer pid=884, ip=10.0.0.5) ", "vllm", "verl"),  # verl's actors, named after the engine they run
        ("(AsyncvLLMServer pid=729634) ", "vllm", "verl"),
        ("(SGLangHttpServerForPartial pid=884) ", "sglang", "verl"),
        ("(WorkerDict pid=559716) ", None, "verl"),  # verl's trainer worker runs either engine
    ],
)
def test_a_process_prefix_named_after_an_engine(crash: str, prefix: str, engine: str | None, wrapper: str | None) -> None:
    log = "".join(f"{prefix}{line}\n" for line in crash.splitlines())
    launch = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).launch
    assert (launch.engine, launch.wrapper) == (engine, wrapper)
