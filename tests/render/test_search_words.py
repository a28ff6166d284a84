"""The "Search for:" text is the log's own words (render/search_words.py): never a name logsleuth gave the failure,
its variable parts (numbers, paths, ids) left out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose, diagnose_text
from logsleuth.render.options import OutputFormat
from logsleuth.render.search_words import search_text, variable_parts_left_out
from tests.render.helpers import render

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
WILD_LOGS = sorted(WILD.glob("**/*.log"))
OPTIONS = DiagnoseOptions(include_user_patterns=False, all_failures=True)
# where a value goes in a log, whatever the format: paths, URLs, addresses, hex ids
_VALUE = re.compile(r"[A-Za-z]+://[^\s)'\"]+|[\w.~@+-]*(?:[\\/][\w.~@+-]+){2,}|0x[0-9a-fA-F]+|\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b")


def words(text: str) -> str:
    """The text's letters in order, lower case, without values (a token with a digit, a path, a URL, an address) or
    JSON escapes, and without spaces (a paste hard-wrapped at a fixed width splits words): what a search text must
    share with the log, in the same order, to be the log's own words."""
    text = _VALUE.sub(" ", text.replace("\\n", " ").replace('\\"', '"').replace("\\'", "'"))
    return "".join(token.lower() for token in re.findall(r"[A-Za-z0-9]+", text) if not re.search(r"\d", token))


def _searched(log: str) -> str:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, "no failure found"
    group = report.failures[0]
    return search_text(group.diagnosis, group.failure)


def test_a_message_without_its_numbers_paths_and_ids() -> None:
    """vLLM's KV cache check (v1/core/kv_cache_utils.py) and torch's watchdog (ProcessGroupNCCL.cpp): the sizes,
    ranks and group ids are the user's; the sentence is the engine's."""
    kv = ("The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache "
          "(12544). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    assert variable_parts_left_out(kv) == (
        "The model's max seq len is larger than the maximum number of tokens that can be stored in KV cache. Try "
        "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    watchdog = "[PG ID 0 PG GUID 0(default_pg) Rank 4] Process group watchdog thread terminated with exception: boom"
    assert variable_parts_left_out(watchdog) == "[PG ID PG GUID (default_pg) Rank] Process group watchdog thread terminated with exception: boom"
    nccl = "NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled cuda error"  # torch's NCCLUtils
    assert variable_parts_left_out(nccl) == "NCCL error in: unhandled cuda error"
    loaded = "Error loading /home/u/models/llama-3/model-00001-of-00004.safetensors at 0x7f3a2c00 for request 3f2a9c1e4b7d"
    assert variable_parts_left_out(loaded) == "Error loading at for request"


def test_a_long_message_is_cut_at_a_word() -> None:
    said = variable_parts_left_out("word " * 80)
    assert len(said) <= 200 and said.endswith("word")


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
    assert "c10::DistBackendError" not in searched and not re.search(r"\d", searched), searched
    assert words(searched) in words(log), searched


def test_the_report_prints_the_searched_words() -> None:
    log = "usage: vllm serve [-h] model_tag\nvllm serve: error: the following arguments are required: model_tag\n"
    text = render(diagnose_text(log, OPTIONS), OutputFormat.TEXT, width=200)
    if "Search for:" in text:  # only general guidance shows it
        assert text.split("Search for:", 1)[1].split("\n")[1].strip() == "the following arguments are required: model_tag"


@pytest.mark.parametrize("log", WILD_LOGS, ids=[str(p.relative_to(WILD)) for p in WILD_LOGS])
def test_every_search_text_of_the_wild_corpus_is_the_logs_own_words(log: Path) -> None:
    """Every failure of every real paste: what it says to search for is in the log, in the log's order."""
    report = diagnose([str(log)], OPTIONS)
    text = words(log.read_text(errors="replace"))
    for group in report.failures:
        searched = search_text(group.diagnosis, group.failure)
        assert words(searched) in text, searched
