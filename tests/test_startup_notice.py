"""The notice of a clean paste that stops during the start-up (ingest/startup_trail.py): every shape of such a paste
gets it in every format, with its last stage and, for a wait the paste ends on, a stall; a start that finished or
served gets none.  Logs in our own words, in the shapes of splits 17-19's cut excerpts (sgl-project/sglang#4062,
vllm-project/vllm#600 and #1282, gpustack/gpustack#3638, ai-dynamo/dynamo#480)."""

from __future__ import annotations

import json

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions

OPTIONS = DiagnoseOptions(include_user_patterns=False)

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


# -- what is not a stall, and what is not a start-up (review stop20) ---------------------------------------------------

POLL = "DEBUG 05-02 10:00:{:02d} [utils.py:547] Waiting for 1 local, 0 remote core engine proc(s) to start."
ARGS = "INFO 05-02 10:00:01 [cli_args.py:325] non-default args: {'model': 'org/m-70b', 'tensor_parallel_size': 4}"
# The engine core's lines after the polls: the start went on (vLLM compilation/backends.py).
POLLS_THEN_ENGINE = "\n".join([ARGS, POLL.format(20), POLL.format(30), POLL.format(40),
    "(EngineCore_0 pid=77) INFO 05-02 10:00:41 [backends.py:508] Using cache directory: /c/torch_compile_cache",
]) + "\n"
# The polls the API server prints while its workers load the weights, between the loader's bars (a normal start).
POLLS_BETWEEN_BARS = "\n".join([ARGS, "(VllmWorker rank=0 pid=9) INFO 05-02 10:00:05 [gpu_model_runner.py:1595] "
                                 "Starting to load model org/m-70b..."] + [
    line for i in range(4) for line in (
        POLL.format(10 + 10 * i),
        f"Loading safetensors checkpoint shards:  {3 * i}% Completed | {i}/30 [00:0{i}<02:30,  5.00s/it]")
]) + "\n"
# A wait, then a library's unheaded message (transformers' tokenizer warning, torch.distributed's OMP notice).
WAIT_THEN_LIBRARY = [
    WRAPPER_WAIT.replace("It stays like this for an hour and nothing else is printed.", message)
    for message in ("Special tokens have been added in the vocabulary, make sure the associated word embeddings "
                    "are fine-tuned or trained.",
                    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
                    "system being overloaded, please further tune the variable for optimal performance.")
]
TPU_WAITS_THEN_WORDS = "\n".join([
    "INFO 05-02 10:00:00 [__init__.py:239] Automatically detected platform tpu.", ARGS, POLL.format(20),
    POLL.format(30), "It hangs here forever, nothing else is printed.",
]) + "\n"


@pytest.mark.parametrize("log", [POLLS_THEN_ENGINE, POLLS_BETWEEN_BARS, *WAIT_THEN_LIBRARY])
def test_waits_the_engine_moved_on_from_or_a_librarys_message_are_no_stall(log: str) -> None:
    data = json.loads(_report(log, OutputFormat.JSON))
    assert data["status"] == "no-failure" and data["ended_in_startup"] is not None
    assert not data["ended_in_startup"]["stalled"]
    assert not any("stalled" in line or "NCCL_DEBUG" in line for line in data["ended_in_startup"]["notice"])


def test_a_few_polls_are_told_as_their_time_not_as_a_stall() -> None:
    log = "\n".join([ARGS, POLL.format(20), POLL.format(30), POLL.format(40)]) + "\n"
    notice = json.loads(_report(log, OutputFormat.JSON))["ended_in_startup"]
    assert not notice["stalled"]
    assert any("about 30 s" in line and "do not show a stall" in line for line in notice["notice"])


def test_a_bar_between_the_polls_is_the_stage_the_log_ends_in() -> None:
    assert json.loads(_report(POLLS_BETWEEN_BARS, OutputFormat.JSON))["ended_in_startup"]["stage"] == "loading weights"


def test_stall_guidance_on_a_platform_without_nccl_names_neither_nccl_nor_cuda_graphs() -> None:
    notice = json.loads(_report(TPU_WAITS_THEN_WORDS, OutputFormat.JSON))["ended_in_startup"]
    assert notice["stalled"]
    assert not any("NCCL" in line or "CUDA" in line for line in notice["notice"])
    on_cuda = json.loads(_report(TPU_WAITS_THEN_WORDS.replace("platform tpu", "platform cuda"), OutputFormat.JSON))
    assert any("NCCL_DEBUG" in line for line in on_cuda["ended_in_startup"]["notice"])  # tp 4 on CUDA: the tip stays
    single = TPU_WAITS_THEN_WORDS.replace("platform tpu", "platform cuda").replace("'tensor_parallel_size': 4", "'tensor_parallel_size': 1")
    assert not any("NCCL" in line for line in json.loads(_report(single, OutputFormat.JSON))["ended_in_startup"]["notice"])


def test_the_wrappers_tip_only_where_a_wrapper_runs_the_engine() -> None:
    own_script = "\n".join(["[2025-05-02 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1, port=30000)",
                            "[2025-05-02 10:00:01] Waiting for the server to be ready",
                            "It never gets past this line."]) + "\n"
    notice = json.loads(_report(own_script, OutputFormat.JSON))["ended_in_startup"]
    assert notice["stalled"] and not any("wrapper's release" in line for line in notice["notice"])


# A server answering requests (uvicorn's access lines for any route; vLLM's request records), an old SGLang's batch
# lines, vLLM's serving-time shared-memory warning, a client's tokenizer download, an API server up before a worker's
# late allreduce line: none ends in a start-up.
ANSWERED = "\n".join(["$ python -m sglang.launch_server --model-path m --port 30000",
                       'INFO:     127.0.0.1:40312 - "GET /health HTTP/1.1" 200 OK',
                       'INFO:     127.0.0.1:40312 - "GET /get_model_info HTTP/1.1" 200 OK']) + "\n"
SHM_WHILE_SERVING = "\n".join([
    ARGS,
    "INFO 05-02 10:05:00 [logger.py:43] Received request cmpl-1: prompt: 'hi', params: SamplingParams(n=1)",
    "INFO 05-02 10:05:00 [engine.py:317] Added request cmpl-1.",
    "WARNING 05-02 10:06:00 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 second. "
    "This typically happens when some processes are hanging or doing some time-consuming work.",
    "WARNING 05-02 10:07:00 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 second.",
]) + "\n"
OLD_SGLANG_SERVING = "\n".join([
    "server_args=ServerArgs(model_path='m', tp_size=1, port=30000)",
    "[gpu_id=0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=10.00 GB",
    "new fill batch. #seq: 1. #cached_token: 0. #new_token: 12. #remaining_req: 0. #running_req: 0",
    "#running-req: 1, #token: 37, token usage: 0.00, gen throughput (token/s): 3.03, #queue-req: 0",
]) + "\n"
CLIENT_DOWNLOAD = "\n".join([
    "$ python3 bench_client.py --model org/m-7b --num-prompts 100",
    "Namespace(host='127.0.0.1', port=8000, model='org/m-7b')",
    "tokenizer_config.json: 100%|██████████| 7.30k/7.30k [00:00<00:00, 35.1MB/s]",
    "vocab.json: 100%|██████████| 2.78M/2.78M [00:00<00:00, 12.0MB/s]",
]) + "\n"
UP_THEN_ALLREDUCE = "\n".join([
    ARGS,
    "INFO 05-02 10:03:00 [api_server.py:1081] Starting vLLM API server 0 on http://0.0.0.0:8000",
    "INFO 05-02 10:03:00 [launcher.py:28] Available routes are:",
    "(VllmWorker rank=1 pid=91) INFO 05-02 10:03:01 [custom_all_reduce.py:135] Custom allreduce is disabled because "
    "it's not supported on more than two PCIe-only GPUs.",
]) + "\n"


@pytest.mark.parametrize("log", [ANSWERED, SHM_WHILE_SERVING, OLD_SGLANG_SERVING, CLIENT_DOWNLOAD, UP_THEN_ALLREDUCE])
def test_a_server_that_served_or_a_program_that_is_no_server_gets_no_notice(log: str) -> None:
    assert NOTICE not in _report(log, OutputFormat.TEXT)
    assert json.loads(_report(log, OutputFormat.JSON))["ended_in_startup"] is None
