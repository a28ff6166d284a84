"""argparse's error line after the user's own words on the same line (`报错日志：vllm serve: error: argument …`,
zai-org/GLM-4.5#58; `I got: launch_server.py: error: unrecognized arguments: …`): found as the usage error it is, its
program named, as a fallback (tracebacks/grammar.py PROSE_USAGE_ERROR).  The error lines are the real interpreter's:
argparse run under the program names the engines use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS

_PARSER = """
import argparse, sys
parser = argparse.ArgumentParser(prog=sys.argv[1])
parser.add_argument("--tool-call-parser", choices=["hermes", "llama3_json"])
parser.parse_args(sys.argv[2:])
"""


def _argparse_error(program: str, *arguments: str) -> str:
    """The error line real argparse prints for `arguments` under `program`."""
    done = subprocess.run([sys.executable, "-c", _PARSER, program, *arguments], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("words", ["报错日志：", "Error log: ", "When I start it I get: "])
def test_a_usage_error_after_the_users_words_is_found_with_its_program(words: str) -> None:
    line = _argparse_error("vllm serve", "--tool-call-parser", "glm45")
    assert line.startswith("vllm serve: error: argument --tool-call-parser: invalid choice")
    report = diagnose_text(words + line + "\n", OPTIONS)
    assert len(report.failures) == 1
    failure = report.failures[0].failure
    assert failure.kind == "usage" and failure.program == "vllm serve"
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.engine == "vllm"


def test_an_unrecognized_argument_after_words_names_sglangs_program() -> None:
    line = _argparse_error("launch_server.py", "--tool-call-parser", "hermes", "--disable-radix-cache", "True")
    failure = diagnose_text("I got: " + line + "\n", OPTIONS).failures[0].failure
    assert failure.kind == "usage" and failure.program == "launch_server.py"
    assert "unrecognized arguments: --disable-radix-cache True" in failure.final.message


@pytest.mark.parametrize("text", [
    "I got: my server: error: it did not answer within 5 seconds",  # no argparse wording after the program
    "while linking: clang: error: linker command failed with exit code 1",  # a compiler's
    "the parser prints to stderr:error: argument of a sort and exits",  # no program before `error:`
])
def test_words_like_error_alone_are_no_usage_error(text: str) -> None:
    report = diagnose_text(text + "\n", OPTIONS)
    assert all(group.failure.kind != "usage" for group in report.failures)


def test_a_traceback_beside_it_stays_the_failure() -> None:
    line = _argparse_error("vllm serve", "--tool-call-parser", "glm45")
    traceback = real_traceback('raise RuntimeError("Engine core initialization failed. See root cause above.")',
                               "vllm/entrypoints/cli/main.py")
    report = diagnose_text("Before that: " + line + "\n" + traceback, OPTIONS)
    assert [group.failure.final.type for group in report.failures][-1] == "RuntimeError"
