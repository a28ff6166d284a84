"""The engine from a traceback fragment whose paths the paste shortened (issue 28: a fragment with no engine path named
no engine on a blind split): a file and function that only one engine's indexed code has, where a check raises
(facts/engine_functions.py, ingest/engine_from_frames.py).  A function both engines' code has, a name any program
has, and a whole path outside the engines decide nothing.

Tracebacks are real CPython's, raised in mirrored package trees of the engines, their paths then shortened as a
person pasting them does (scripts/wild_fixtures/paste.py shorten_paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.engine_functions import engines_with_function
from tests.helpers import traceback_in_package

OPTIONS = DiagnoseOptions(include_user_patterns=False)
RAISE = "raise ValueError('the check failed')"


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


def _shortened(tmp_path: Path, module: str, function: str, keep: str) -> str:
    """Real CPython's traceback through `function` of `module`, each path cut to its part from `keep` on, the script's
    frame dropped: the fragment a person pastes."""
    body = f"{function}()\n\n\ndef {function}():\n    {RAISE}"
    traceback = traceback_in_package(tmp_path, module, body)
    lines = [line for line in traceback.splitlines() if "app.py" not in line and line.strip() != "run()"]
    fragment = "\n".join(line.replace(line[line.find('"') + 1:line.find(keep)], "") if 'File "' in line else line
                         for line in lines) + "\n"
    assert f'File "{keep}' in fragment and str(tmp_path) not in fragment
    return fragment


@pytest.mark.parametrize(
    ("module", "function", "keep", "engine"),
    [
        ("sglang/srt/server_args.py", "_handle_speculative_decoding", "server_args.py", "sglang"),
        ("vllm/v1/engine/core.py", "run_engine_core", "engine/core.py", "vllm"),
        ("vllm/config.py", "verify_with_parallel_config", "config.py", "vllm"),
    ],
)
def test_a_shortened_frame_only_one_engines_code_has_names_it(tmp_path: Path, module: str, function: str, keep: str,
                                                              engine: str) -> None:
    assert engines_with_function(keep, function) == {engine}
    assert engine_of(_shortened(tmp_path, module, function, keep)) == engine


@pytest.mark.parametrize(
    ("module", "function", "keep"),
    [
        ("sglang/srt/model_executor/model_runner.py", "load_model", "model_runner.py"),  # both engines' model runners
        ("vllm/utils.py", "wrapper", "utils.py"),  # a decorator's inner function: any program's
        ("sglang/srt/managers/scheduler.py", "no_such_function", "scheduler.py"),  # no indexed site in that function
    ],
)
def test_a_shortened_frame_of_both_engines_or_anyones_decides_nothing(tmp_path: Path, module: str, function: str,
                                                                      keep: str) -> None:
    assert engine_of(_shortened(tmp_path, module, function, keep)) is None


def test_a_whole_path_outside_the_engines_decides_nothing(tmp_path: Path) -> None:
    """A user's own file named like an engine's: CPython printed its whole path, which is no engine's."""
    body = f"_handle_speculative_decoding()\n\n\ndef _handle_speculative_decoding():\n    {RAISE}"
    assert engine_of(traceback_in_package(tmp_path, "myproject/server_args.py", body)) is None
