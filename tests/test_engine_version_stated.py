"""The engine's version a paste states as a label (`vLLM: v0.8.5`, gpustack/gpustack#2170's report; `vllm: 0.7.3`,
vllm-project/vllm#14693) or pip list's row of the engine's own distribution (`vllm  0.10.0+empty  /vllm-workspace/vllm`,
its local version and an editable install's location; vllm-project/vllm-ascend#2556): read as the version
(ingest/launch.py engine_version_stated), never as evidence that the engine ran.  The lines are our own."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.ingest.launch import engine_version_stated
from tests.test_fatal_output_shapes import OPTIONS

EMBEDDING_AS_GENERATOR = "ValueError: There is no module or parameter named 'embed_tokens' in Qwen3ForCausalLM\n"


@pytest.mark.parametrize("text, stated", [
    ("vLLM: v0.8.5 (the backend our platform ships)", ("vllm", "0.8.5")),
    ("vllm: 0.7.3", ("vllm", "0.7.3")),
    ("SGLang: 0.4.6.post1", ("sglang", "0.4.6.post1")),
    ("vllm                              0.10.0+empty      /vllm-workspace/vllm", ("vllm", "0.10.0")),
    ("vllm               0.6.3.post1", ("vllm", "0.6.3.post1")),
    ("sglang    0.5.9", ("sglang", "0.5.9")),
])
def test_a_label_or_a_pip_list_row_states_the_version(text: str, stated: tuple[str, str]) -> None:
    assert engine_version_stated(text) == stated


@pytest.mark.parametrize("text", [
    "vllm_ascend                       0.10.0rc1         /vllm-workspace/vllm-ascend",  # another package's row
    "vllm-flash-attn                   2.6.1",
    "sglang-router 0.1.4",
    "openai: 1.52.0",  # a client library's version
    "gpustack-vllm: 0.8.5",
    "upgrading to vllm 0.7.2 fixed it",  # a sentence names a release, not the installed one
    "vllm 0.7.2 fixed it",
    "please install vllm: 0.8.5",
    "api: http://10.0.0.2:8000/v1/rerank",
])
def test_look_alikes_state_no_engine_version(text: str) -> None:
    assert engine_version_stated(text) is None


def test_a_pip_list_row_gives_the_launch_its_version() -> None:
    paste = ("VERSIONS:\nvllm                              0.10.0+empty      /vllm-workspace/vllm\n"
             "torch                             2.7.1+cpu\n\nvllm serve /models/emb --port 8080\n" + EMBEDDING_AS_GENERATOR)
    launch = diagnose_text(paste, OPTIONS).launch
    assert (launch.engine, launch.engine_version, launch.engine_version_source) == ("vllm", "0.10.0", "log")


def test_a_stated_version_is_no_evidence_the_engine_ran() -> None:
    report = diagnose_text("vllm: 0.7.3\nRuntimeError: our own client got an empty answer back\n", OPTIONS)
    assert report.launch.engine is None and report.launch.engine_version == "0.7.3"


def test_a_long_line_is_read_in_linear_time() -> None:
    assert engine_version_stated("v" * 65536 + ": 1.2.3") is None
