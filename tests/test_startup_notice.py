"""The notice of a clean paste that stops during the start-up (ingest/startup_trail.py): every shape of such a paste
gets it in every format, with its last stage and, for a wait the paste ends on, a stall; a start that finished or
served gets none.  Logs in our own words, in the shapes of splits 17-19's cut excerpts (sgl-project/sglang#4062,
vllm-project/vllm#600 and #1282, gpustack/gpustack#3638, ai-dynamo/dynamo#480)."""

from __future__ import annotations

import json

import pytest

from logsleuth.api import diagnose_text
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.test_fatal_output_shapes import OPTIONS

NOTICE = "ends during the server's start-up"

RANKS = "\n".join([
    "[2025-05-02 10:00:01 TP1] sglang is using nccl==2.21.5",
    "[2025-05-02 10:00:01 TP0] sglang is using nccl==2.21.5",
    "[2025-05-02 10:00:02 TP1] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs.",
    "[2025-05-02 10:00:02 TP0] Message queue communication handle: Handle(connect_ip='127.0.0.1', local_reader_ranks=[1",
]) + "\n"
OLD_VLLM_NCCL = "\n".join([
    "INFO 05-02 10:00:00 llm_engine.py:70] Initializing an LLM engine with config: model='org/m-13b', dtype=torch.float16",
    "node1:101:101 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>",
    "NCCL version 2.14.3+cuda11.7",
    "node1:101:140 [0] NCCL INFO Channel 00/32 :    0",
    "node1:101:140 [0] NCCL INFO Channel 01/32 :    0",
    "node1:101:140 [0] NCCL INFO Chan",
]) + "\n"
DOWNLOADS = "\n".join([
    "+ python serve.py --model org/m-awq --quantization awq",
    "INFO 05-02 10:00:00 llm_engine.py:72] Initializing an LLM engine with config: model='org/m-awq', quantization=awq",
    "Downloading (…)okenizer_config.json: 100%|██████| 700/700 [00:00<00:00, 80.1kB/s]",
    "Downloading (…)quant_config.json: 100%|████| 88.0/88.0 [00:0",
]) + "\n"
WRAPPER_LAUNCH = "\n".join([
    "2025-05-02 10:00:00,001 - farm.worker - INFO - Starting model instance m-1",
    "2025-05-02 10:00:00,002 - farm.worker - INFO - With arguments: [python -m sglang.launch_server --model-path /m --port 4000]",
    "2025-05-02 10:00:00,003 - docker.api - DEBUG - Looking for auth config",
]) + "\n"
WRAPPER_WAIT = "\n".join([
    "$ farm run out=sglang org/m-0.5b",
    "INFO 05-02 10:00:01 __init__.py:190] Automatically detected platform cuda.",
    "2025-05-02T10:00:02.000001Z  INFO farm::engines::sglang: Waiting for sglang0 to signal that it's ready",
    "",
    "It stays like this for an hour and nothing else is printed.",
]) + "\n"
CAME_UP_THEN_NCCL = "\n".join([
    "[2025-05-02 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2)",
    "[2025-05-02 10:01:00] The server is fired up and ready to roll!",
    "node1:101:140 [0] NCCL INFO Channel 00/32 :    0",
    "node1:101:140 [0] NCCL INFO Connected all rings",
]) + "\n"
SERVING = "\n".join([
    "INFO 05-02 10:00:00 [cli_args.py:325] non-default args: {'model': 'm'}",
    "INFO 05-02 10:05:00 [loggers.py:111] Engine 000: Avg prompt throughput: 12.0 tokens/s, Avg generation throughput: 40.1 tokens/s",
]) + "\n"


def _report(log: str, fmt: OutputFormat) -> str:
    return render(diagnose_text(log, OPTIONS), RenderOptions(format=fmt, width=400))


@pytest.mark.parametrize(("log", "stage"), [
    (RANKS, "NCCL init"), (OLD_VLLM_NCCL, "NCCL init"), (DOWNLOADS, "downloading"),
    (WRAPPER_LAUNCH, "launched, before any line of the engine's start-up"),
    (WRAPPER_WAIT, "waiting for the engine to signal ready"),
])
def test_every_shape_of_a_start_up_cut_short_gets_the_notice_in_every_format(log: str, stage: str) -> None:
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK):
        text = _report(log, fmt)
        assert "No failure found" in text and NOTICE in text and stage in text, fmt
    data = json.loads(_report(log, OutputFormat.JSON))
    assert data["status"] == "no-failure"
    assert data["ended_in_startup"]["stage"] == stage
    assert any(NOTICE in line for line in data["ended_in_startup"]["notice"])


def test_a_wait_followed_only_by_the_users_words_is_a_stall_with_labelled_guidance() -> None:
    data = json.loads(_report(WRAPPER_WAIT, OutputFormat.JSON))
    assert data["status"] == "no-failure" and data["ended_in_startup"]["stalled"]
    assert any("stalled there" in line and "not a proven fix" in line for line in data["ended_in_startup"]["notice"])
    assert not any("--" in line for line in data["ended_in_startup"]["notice"])  # no flag: the release is unknown


def test_a_wait_the_engine_went_on_from_is_no_stall() -> None:
    went_on = WRAPPER_WAIT.replace("It stays like this for an hour and nothing else is printed.",
                                   "[2025-05-02 10:00:05 TP0] Load weight begin. avail mem=70.00 GB")
    data = json.loads(_report(went_on, OutputFormat.JSON))
    assert data["ended_in_startup"]["stage"] == "loading weights" and not data["ended_in_startup"]["stalled"]


@pytest.mark.parametrize("log", [CAME_UP_THEN_NCCL, SERVING])
def test_a_start_that_came_up_or_served_gets_no_notice(log: str) -> None:
    assert NOTICE not in _report(log, OutputFormat.TEXT)
    assert json.loads(_report(log, OutputFormat.JSON))["ended_in_startup"] is None
