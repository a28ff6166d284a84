"""The "Search for:" text is the log's own words (render/search_words.py, render/search_phrase.py): never a name
logsleuth gave the failure, a run of the line as printed (so that a quoted search finds it word for word) that holds
none of the user's values, and keeps what another thread of the same failure prints too (a version a check requires,
a capability, a file's name, an error code, an error's name, the route of a URL printed after `url:`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose, diagnose_text
from logsleuth.render.options import OutputFormat
from logsleuth.render.search_phrase import LONGEST, search_phrase
from logsleuth.render.search_words import search_text
from tests.render.helpers import render

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
WILD_LOGS = sorted(WILD.glob("**/*.log"))
OPTIONS = DiagnoseOptions(include_user_patterns=False, all_failures=True)
# what a search text must be a run of: the log as a paste may show it (a JSON string's escapes, a line hard-wrapped at
# a fixed width, so no whitespace at all; a closing quote the paste lost, which the parser gives back: grammar.py)
_ESCAPES = (("\\n", " "), ('\\"', '"'), ("\\'", "'"), ("\\t", " "))
# what a search text never starts or ends with: a separator, or the half of a bracket a cut value was inside
_EDGE_DEBRIS = re.compile(r"^[\s,;:.)\]}=|\-]|[\s,;:(\[{=|+/\-]$")


def debris(phrase: str) -> bool:
    """A separator at an edge, or a bracket without its other half (`(value:)` is what a cut-out `14` leaves)."""
    return bool(_EDGE_DEBRIS.search(phrase)) or any(phrase.count(a) != phrase.count(b) for a, b in ("()", "[]", "{}"))


def same_text(text: str) -> str:
    """`text` as compared: JSON escapes read, no whitespace, no quotes."""
    for escaped, plain in _ESCAPES:
        text = text.replace(escaped, plain)
    return re.sub(r"[\s'\"`]+", "", text)


def _searched(log: str) -> str:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, "no failure found"
    group = report.failures[0]
    return search_text(group.diagnosis, group.failure)


# (the engine's or library's wording, with values of our own: the phrase to search for).  Each a run of its line.
WORDINGS = [
    # vLLM's capability floor (vllm-project/vllm#1284): the 7.0 is the floor, the same in every thread
    ("GPUs with compute capability below 7.0 are not supported.",
     "GPUs with compute capability below 7.0 are not supported."),
    # vLLM's bfloat16 check: both capabilities stay
    ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute "
     "capability 7.5.",
     "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute "
     "capability 7.5."),
    # vLLM's quantization capability check, the capabilities printed as integers
    ("The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.",
     "The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70."),
    # sgl-kernel's custom all-reduce check (sgl-project/sglang#27948): the statement, not the install's directories nor
    # the kernel's line (it moves with every release)
    ("Capture cuda graph failed: Runtime check failed at /opt/sglang/python/sglang/jit_kernel/include/sgl_kernel/"
     "distributed/custom_all_reduce.cuh:37: CUDA error: invalid argument",
     "Capture cuda graph failed: Runtime check failed"),
    # torch's NCCL checks: not the build's directories nor the source's line (the same check prints
    # ProcessGroupNCCL.cpp:616, :618, :630, :636 across releases), nor the user's NCCL release
    ("NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled cuda error",
     "unhandled cuda error"),
    ("NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with "
     "NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
     "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version"),
    # a dependency check (LlamaFactory's require_version): the required range stays, the user's installed release goes
    ("vllm<=0.8.0,>=0.7.3 is required for this version, but found vllm==0.8.1.",
     "vllm<=0.8.0,>=0.7.3 is required for this version, but found vllm"),
    # a CUDA driver call's check (DeepGEMM, sgl-project/sglang#29993): the status's name, not the bare `CUDA driver error`
    ("CUDA driver error (jit_kernels/impls/smxx_layout.hpp:72): 719 (CUDA_ERROR_LAUNCH_FAILED)",
     "CUDA_ERROR_LAUNCH_FAILED"),
    # torch's watchdog (OpenRLHF#970): the statement, not the counter every watchdog line prints after it
    ("Timeout at NCCL work: 876319, last enqueued NCCL work: 876319, last completed NCCL work: 876318.",
     "Timeout at NCCL work"),
    # torch's TCPStore wait (wild dev-dist-store-timeout: sgl-project/sglang#507, volcengine/verl#4373): no `Timed out
    # after` the cut count leaves, the words after it
    ("Timed out after 601 seconds waiting for clients. 1/2 clients joined.", "seconds waiting for clients."),
    # Python logging's `name - LEVEL - ` after the time: no logger name nor level
    ("2025-08-12 10:01:05,123 - vllm.engine - ERROR - Engine loop failed: out of memory",
     "Engine loop failed: out of memory"),
    # uvicorn's access line: the route after the method, no `HTTP/` half
    ('INFO:     10.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
     "POST /v1/chat/completions HTTP"),
    # urllib3's MaxRetryError for GCE's metadata server (vllm-project/vllm#9538): the URL's path stays, the port and the
    # connection object's address go
    ("HTTPConnectionPool(host='metadata.google.internal', port=80): Max retries exceeded with url: "
     "/computeMetadata/v1/instance/attributes/tpu-env (Caused by NewConnectionError('<urllib3.connection."
     "HTTPConnection object at 0x7f2b1c3d4e50>: Failed to establish a new connection: [Errno 111] Connection refused'))",
     "Max retries exceeded with url: /computeMetadata/v1/instance/attributes/tpu-env"),
    # an errno is the same in every thread
    ("[Errno 98] Address already in use", "[Errno 98] Address already in use"),
    # Mooncake's transfer engine (sgl-project/sglang#7118): the counters go, with no `(value:)` left behind
    ("Session::writeBody failed. Error: Bad address (value: 14), total_transferred_bytes_: 0, current "
     "transferred_bytes: 0",
     "Session::writeBody failed. Error: Bad address"),
    # Ray's placement group shortfall (ray-project/kuberay#4366): the resource dict (a node id, an IP, byte counts) goes whole
    ("Not enough resources to allocate 2 placement groups, only created 1 placement groups. Available resources: "
     "{'5d1f0e2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a': {'CPU': 8.0, 'memory': 17179869184.0, "
     "'node:10.1.2.3': 1.0, 'GPU': 1.0}}",
     "Not enough resources to allocate"),
    # Triton's OutOfResources (sgl-project/sglang#2384): the byte counts go; the advice after it is not the failure
    ("out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` "
     "may help.",
     "out of resource: shared memory, Required"),
    # torch's OOM: the sizes go, and the sentences after the first stay out
    ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free. "
     "Including non-PyTorch memory, this process has 22.61 GiB memory in use.",
     "CUDA out of memory. Tried to allocate"),
    # vLLM's KV cache check (v1/core/kv_cache_utils.py): the part between the user's numbers that says the most
    ("The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache "
     "(12544). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
     "is larger than the maximum number of tokens that can be stored in KV cache"),
    # vLLM's prompt length check (unslothai/unsloth#2666): the filler word a cut number leaves goes too
    ("The decoder prompt (length 4097) is longer than the maximum model length of 4096. Make sure that `max_model_len` "
     "is no smaller than the number of text tokens.",
     "is longer than the maximum model length"),
    # torch's watchdog timeout (vllm-project/vllm#1846): no `SeqNum=,` of the cut counters
    ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
     "NumelOut=1, Timeout(ms)=600000) ran for 600321 milliseconds before timing out.",
     "Watchdog caught collective operation timeout: WorkNCCL"),
    # torch's backend autoload (vllm-project/vllm-ascend#1440): an environment variable's setting the message advises stays
    ("Failed to load the backend extension: torch_npu. You can disable extension auto-loading with "
     "TORCH_DEVICE_BACKEND_AUTOLOAD=0.",
     "Failed to load the backend extension: torch_npu. You can disable extension auto-loading with "
     "TORCH_DEVICE_BACKEND_AUTOLOAD=0."),
    # sgl-kernel's version check: the required release stays, the installed one is the user's
    ("sgl-kernel is installed with version 0.0.9.post2, which is less than the minimum required version 0.1.1.",
     "which is less than the minimum required version 0.1.1."),
    # huggingface_hub's repo id check: the user's repo id goes, no `is:` left
    ("Repo id must use alphanumeric chars or '-', '_', '.', '--' and '..' are forbidden, '-' and '.' cannot start or "
     "end the name, max length is 96: 'org/model:branch'.",
     "Repo id must use alphanumeric chars or '-', '_', '.', '--' and '..' are forbidden, '-' and '.' cannot start or "
     "end the name, max length"),
    # a user's path, an address and a hex id: only the words between
    ("Error loading /home/u/models/llama-3/model-00001-of-00004.safetensors at 0x7f3a2c00 for request 3f2a9c1e4b7d",
     "Error loading"),
    # a model's name is no value: `Llama-3.1-8B` stays whole
    ("Failed to load model Llama-3.1-8B-Instruct", "Failed to load model Llama-3.1-8B-Instruct"),
]


@pytest.mark.parametrize(("line", "expected"), WORDINGS, ids=[line[:40] for line, _ in WORDINGS])
def test_the_phrase_of_a_real_wording(line: str, expected: str) -> None:
    phrase = search_phrase(line)
    assert phrase == expected
    assert phrase in line  # a run of the line, as printed
    assert not debris(phrase), phrase


# a URL's path holds the user's bucket, webhook key, bot token, account or private repo: none of it is searched
LEAKS = [
    ("error posting to https://hooks.example.com/services/T0123/B0456/abcdefSECRETtoken12345 status 403",
     ("T0123", "B0456", "SECRETtoken")),
    ("request to https://api.telegram.org/bot123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0/sendMessage (status 401)",
     ("bot123456789", "AAHfiqks")),
    ("Unable to access s3://acme-private-bucket/customers/jdoe/model/config.json: AccessDenied",
     ("acme-private-bucket", "jdoe")),
    ("Failed to reach http://gpu-node-17.corp.example.com:8000/v1/users/jdoe@example.com/keys",
     ("jdoe", "gpu-node-17")),
    ("HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: "
     "/alice-corp/secret-llama-ft/resolve/main/config.json (Caused by NewConnectionError('x'))",
     ("alice-corp", "secret-llama-ft")),
    ("Max retries exceeded with url: /v1/users/jdoe/keys/a1b2c3d4e5f6g7h8i9j0 (Caused by ReadTimeoutError)",
     ("jdoe", "a1b2c3d4e5f6g7h8i9j0")),
]


@pytest.mark.parametrize(("line", "private"), LEAKS, ids=[line[:40] for line, _ in LEAKS])
def test_no_url_path_of_the_users_is_searched(line: str, private: tuple[str, ...]) -> None:
    for least in (0.0, 2.0):
        phrase = search_phrase(line, least=least)
        assert phrase in line
        assert not [value for value in private if value in phrase], phrase


@pytest.mark.parametrize("line", ["Error in /opt/x/y/foo_bar.py", "at /workspace/a/b/flashinfer_backend.py:412"])
def test_a_file_name_alone_is_no_search(line: str) -> None:
    """A file's name names no failure: with the printed type, only the type and the words opening the message."""
    log = f'Traceback (most recent call last):\n  File "/app/x.py", line 3, in <module>\n    f()\nRuntimeError: {line}\n'
    searched = _searched(log)
    assert ".py" not in searched and searched.startswith("RuntimeError")


def test_a_long_message_is_cut_at_a_word() -> None:
    said = search_phrase("word " * 80)
    assert len(said) <= LONGEST and said.endswith("word")


def test_argparse_error_is_searched_without_logsleuths_type() -> None:
    """argparse prints `prog: error: …` (argparse.py ArgumentParser.error): "UsageError" is logsleuth's name."""
    searched = _searched("usage: vllm serve [-h] model_tag\nvllm serve: error: the following arguments are required: model_tag\n")
    assert searched == "the following arguments are required: model_tag"


def test_a_short_message_keeps_the_printed_type() -> None:
    """A quoted key alone says little: CPython printed `KeyError: 'lm_head.weight'`, and that is searched."""
    log = ('Traceback (most recent call last):\n  File "/app/load.py", line 3, in <module>\n    w = weights[name]\n'
           "KeyError: 'lm_head.weight'\n")
    assert _searched(log) == "KeyError: 'lm_head.weight'"


def test_a_cpp_exception_is_searched_by_its_what_text() -> None:
    """torch's C++ exception reaches the log as `what():` after `terminate called after throwing an instance of
    'c10::DistBackendError'` (sgl-project/sglang#8296): no line prints `c10::DistBackendError: …`."""
    log = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
           "  what():  [PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: CUDA error: "
           "an illegal memory access was encountered\n")
    searched = _searched(log)
    assert searched == "Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"


def test_the_report_prints_the_searched_words() -> None:
    log = "usage: vllm serve [-h] model_tag\nvllm serve: error: the following arguments are required: model_tag\n"
    text = render(diagnose_text(log, OPTIONS), OutputFormat.TEXT, width=200)
    if "Search for:" in text:  # only general guidance shows it
        assert text.split("Search for:", 1)[1].split("\n")[1].strip() == "the following arguments are required: model_tag"


def test_a_cascade_is_searched_by_its_root() -> None:
    """faulthandler's `Fatal Python error: Aborted` after a CUDA error a traceback raised: general guidance names the
    CUDA error as the cause (reasoning/root_cause.py), and that error is what is searched, not the abort's header
    (sgl-project/sglang#8296, verl-project/verl#1691: a scheduler's illegal memory access, then the process aborts)."""
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/app/sglang/srt/managers/scheduler.py", line 700, in event_loop_overlap\n'
        "    self.process_batch_result(batch, result)\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "\n"
        "Fatal Python error: Aborted\n"
        "\n"
        "Current thread 0x00007f89abcdef00 (most recent call first):\n"
        '  File "/opt/app/sglang/srt/managers/scheduler.py", line 2110 in run_scheduler_process\n'
    )
    report = diagnose_text(log, OPTIONS)
    aborted = next(group for group in report.failures if group.failure.final.type == "Fatal Python error")
    assert aborted.diagnosis is not None and aborted.diagnosis.basis == "general"
    assert "illegal memory access" in aborted.diagnosis.evidence[0]
    assert search_text(aborted.diagnosis, aborted.failure) == "CUDA error: an illegal memory access was encountered"


def test_a_short_message_is_searched_with_the_header_printed_before_it() -> None:
    """faulthandler prints `Fatal Python error: Aborted`: one word alone is no search, the header with it is."""
    log = "Fatal Python error: Aborted\n\nCurrent thread 0x00007f1 (most recent call first):\n  File \"/x/y.py\", line 3 in f\n"
    assert _searched(log) == "Fatal Python error: Aborted"


@pytest.mark.parametrize("log", WILD_LOGS, ids=[str(p.relative_to(WILD)) for p in WILD_LOGS])
def test_every_search_text_of_the_wild_corpus_is_a_run_of_the_log(log: Path) -> None:
    """Every failure of every real paste: what it says to search for is a run of the log's text (spacing and quotes
    aside), with no separator or half a bracket left where a value was cut out."""
    report = diagnose([str(log)], OPTIONS)
    text = same_text(log.read_text(errors="replace"))
    for group in report.failures:
        searched = search_text(group.diagnosis, group.failure)
        assert same_text(searched) in text, searched
        assert not debris(searched), searched
