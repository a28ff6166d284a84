"""The engine from faulthandler's dumps (issue 28: a grammar library's abort with a faulthandler dump named no engine
on a blind split).  A dump lists `File "…", line N in f` per thread; a frame in one engine's package is positive
evidence, as a traceback's is.  Ranks that abort at once write their dumps into one stream, and faulthandler writes a
frame in pieces (`  File "`, the path, `", line `, the number, ` in `, the name: Python/traceback.c dump_frame), so
the pieces of two dumps interleave (sgl-project/sglang#10216's dumps were whole; pastes where two ranks' dumps wrote
over each other are common in SGLang's threads): a line that only looks like a frame still names the engine by its
paths.

Dumps are real CPython's: a process with faulthandler enabled aborts inside a mirrored package tree."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)
SCHEDULER = "sglang/srt/managers/scheduler.py"
ENGINE_CORE = "vllm/v1/engine/core.py"
PLAIN = "grammar_service/matcher.py"  # a program's own module: neither engine's


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


def _dump(tmp_path: Path, module: str, rank: int) -> str:
    """What CPython's faulthandler prints when `module`'s code aborts (SIGABRT, as a grammar library's check does)."""
    root = tmp_path / f"rank{rank}" / "site-packages"
    source = root / module
    source.parent.mkdir(parents=True)
    source.write_text("import faulthandler, os\n\n\ndef accept_token():\n    faulthandler.enable()\n    os.abort()\n",
                      encoding="utf-8")
    dotted = module.removesuffix(".py").replace("/", ".")
    run = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(root)!r}); "
                          f"import {dotted} as m; m.accept_token()"], capture_output=True, text=True)
    assert run.returncode != 0 and "Fatal Python error: Aborted" in run.stderr
    return run.stderr


# The pieces faulthandler writes one at a time.
_PIECES = re.compile(r'(  File "|", line | in |\n)')


def _written_over(first: str, second: str) -> str:
    """Two dumps whose writes interleaved: one piece of each in turn."""
    ours, theirs = [p for p in _PIECES.split(first) if p], [p for p in _PIECES.split(second) if p]
    woven = [piece for pair in zip(ours, theirs, strict=False) for piece in pair]
    longer = ours if len(ours) > len(theirs) else theirs
    return "".join(woven + longer[min(len(ours), len(theirs)):])


@pytest.mark.parametrize(("module", "engine"), [(SCHEDULER, "sglang"), (ENGINE_CORE, "vllm")])
def test_a_dumps_engine_frame_names_the_engine(tmp_path: Path, module: str, engine: str) -> None:
    assert engine_of(_dump(tmp_path, module, 0)) == engine


@pytest.mark.parametrize(("module", "engine"), [(SCHEDULER, "sglang"), (ENGINE_CORE, "vllm")])
def test_two_ranks_dumps_written_over_each_other_still_name_the_engine(tmp_path: Path, module: str, engine: str) -> None:
    garbled = _written_over(_dump(tmp_path, module, 0), _dump(tmp_path, module, 1))
    assert not re.search(r'^\s*File "[^"]*/' + re.escape(module) + r'", line \d+ in ', garbled, re.M)  # no whole frame
    assert engine_of(garbled) == engine


def test_garbled_dumps_of_neither_engine_decide_nothing(tmp_path: Path) -> None:
    garbled = _written_over(_dump(tmp_path, PLAIN, 0), _dump(tmp_path, PLAIN, 1))
    assert engine_of(garbled) is None
