"""`logsleuth watch` on a vLLM launch: vLLM's own start-up lines move the stages, and uvicorn's "Application
startup complete." is ready (vLLM's API server starts only once the engine is up), while for SGLang it is not.

The lines follow vLLM's formats: the record header of vllm/logger.py (`INFO MM-DD hh:mm:ss [file.py:N] `), the
process prefixes of 0.11 (`(APIServer pid=N) `, `(EngineCore_DP0 pid=N) `) and the messages' format strings
(see VLLM_STAGES in logsleuth/ingest/stages.py for where each is printed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logsleuth.api import DiagnoseOptions
from logsleuth.ingest.stages import stage_of
from logsleuth.sources.local import LocalFileSource
from logsleuth.watch.follow import follow_local, watch
from tests.helpers import append_later

API, CORE = "(APIServer pid=4127) ", "(EngineCore_DP0 pid=4203) "


def _record(prefix: str, clock: str, where: str, message: str, level: str = "INFO") -> str:
    return f"{prefix}{level} 11-29 {clock} [{where}] {message}\n"


V1_LAUNCH = [
    "+ vllm serve /models/qwen3-8b --tensor-parallel-size 1 --max-model-len 32768\n",
    _record(API, "10:00:00", "api_server.py:1839", "vLLM API server version 0.11.0"),
    _record(API, "10:00:00", "utils.py:233", "non-default args: {'model_tag': '/models/qwen3-8b', 'max_model_len': 32768}"),
    _record(CORE, "10:00:09", "core.py:77", "Initializing a V1 LLM engine (v0.11.0) with config: model='/models/qwen3-8b'"),
    _record(CORE, "10:00:12", "gpu_model_runner.py:2602", "Starting to load model /models/qwen3-8b..."),
    _record(CORE, "10:00:31", "gpu_model_runner.py:2634", "Model loading took 15.2683 GiB and 18.402117 seconds"),
    _record(CORE, "10:00:52", "kv_cache_utils.py:1087", "GPU KV cache size: 364,320 tokens"),
    f"{CORE}Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:09<00:00,  7.10it/s]\n",
    _record(CORE, "10:01:04", "gpu_model_runner.py:3480", "Graph capturing finished in 11 secs, took 0.53 GiB"),
    _record(API, "10:01:06", "api_server.py:1971", "Starting vLLM API server 0 on http://0.0.0.0:8000"),
    f"{API}INFO:     Application startup complete.\n",
]
V1_KEYS = ["args", "weights", "weights-loaded", "kv-cache", "cuda-graph", "cuda-graph-done", "http", "ready"]


def test_a_vllm_launch_moves_through_its_stages_to_ready(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("")
    writer = append_later(log, V1_LAUNCH, 0.02)
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=20))
    writer.join()
    assert [event.stage.key for event in events if event.stage] == V1_KEYS
    assert events[-1].kind == "ready"


def test_the_cli_exits_0_once_vllm_is_ready(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("".join(V1_LAUNCH))
    result = subprocess.run([sys.executable, "-m", "logsleuth", "watch", str(log), "--timeout", "20"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "the server is ready" in result.stdout
    assert result.stderr.index("KV cache allocated") < result.stderr.index("HTTP server starting")


def test_v0_engine_lines_are_stages_too() -> None:
    lines = {
        "INFO 01-10 08:00:02 llm_engine.py:234] Initializing an LLM engine (v0.6.6.post1) with config: model='/m'": "args",
        "INFO 01-10 08:00:40 model_runner.py:1099] Loading model weights took 14.9888 GB": "weights-loaded",
        "INFO 01-10 08:00:44 worker.py:241] # GPU blocks: 27987, # CPU blocks: 2048": "kv-cache",
        "INFO 01-10 08:00:47 model_runner.py:1415] Capturing cudagraphs for decoding. This may lead to unexpected "
        "consequences if the model is not static.": "cuda-graph",
        "INFO 01-10 08:01:02 model_runner.py:1535] Graph capturing finished in 15 secs, took 0.88 GiB": "cuda-graph-done",
    }
    for text, key in lines.items():
        stage = stage_of(text, "vllm")
        assert stage is not None and stage.key == key, text


def test_uvicorn_startup_is_ready_for_vllm_only() -> None:
    text = "INFO:     Application startup complete."
    vllm, sglang, unknown = stage_of(text, "vllm"), stage_of(text, "sglang"), stage_of(text)
    assert vllm is not None and vllm.key == "ready"
    assert sglang is not None and sglang.key == "http"  # SGLang is ready after its warm-up request
    assert unknown is not None and unknown.key == "http"


def test_a_vllm_crash_after_the_kv_cache_stage_is_diagnosed(tmp_path: Path) -> None:
    crash = [
        f"{CORE}ERROR 11-29 10:00:58 [core.py:708] EngineCore failed to start.\n",
        f"{CORE}Traceback (most recent call last):\n",
        f'{CORE}  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core\n',
        f"{CORE}    engine_core = EngineCoreProc(*args, **kwargs)\n",
        f"{CORE}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.19 GiB of which 1.06 GiB is free.\n",
    ]
    log = tmp_path / "vllm.log"
    log.write_text("".join(V1_LAUNCH[:7]))
    writer = append_later(log, crash, 0.02)
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=20))
    writer.join()
    assert [event.stage.key for event in events if event.stage][-1] == "kv-cache"
    assert events[-1].kind == "failure"
    report = events[-1].report
    assert report is not None and report.failures[0].failure.final.type == "torch.OutOfMemoryError"

