"""SGLang's "Not enough memory. Please try to increase --mem-fraction-static." beside a draft model.

With speculative decoding the draft model, its KV cache and its CUDA graphs load outside the fraction, so raising it
runs out of CUDA memory (sgl-project/sglang#4330: 0.84 not enough memory, 0.85 CUDA out of memory; #6876).  The
log is the project's generated pattern fixture; the commands are ours.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

FIXTURE = (Path(__file__).resolve().parent / "fixtures" / "patterns" / "sglang-kv-cache-not-enough-memory"
           / "positive-0.4.10.post2.log")
LAUNCH = "python -m sglang.launch_server --model-path /models/m --mem-fraction-static 0.84"
EAGLE = " --speculative-algorithm EAGLE --speculative-draft-model-path /models/d --speculative-num-steps 3"


def _fix(command: str) -> dict[str, Any]:
    report = json.loads(run_cli("diagnose", str(FIXTURE), "--format", "json", "--cmd", command).stdout)
    diagnosis: dict[str, Any] = report["failures"][0]["diagnosis"]
    assert diagnosis["pattern"] == "sglang-kv-cache-not-enough-memory"
    fix: dict[str, Any] = diagnosis["fix"]
    return fix


def _flags(fix: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(f["op"], f["flag"], f["value"]) for f in fix["flags"]]


def test_a_draft_model_launch_is_not_told_to_raise_the_fraction() -> None:
    fix = _fix(LAUNCH + EAGLE)
    every = [fix, *fix["alternatives"]]
    assert all(flag != "--mem-fraction-static" for f in every for _, flag, _ in _flags(f))
    assert "a larger --tp-size" in fix["summary"] and "(EAGLE)" in fix["summary"]
    # The launch without speculative decoding drops every --speculative-* flag (a lone draft flag is an error).
    without = fix["alternatives"][0]
    assert _flags(without) == [("remove", "--speculative-algorithm", None),
                               ("remove", "--speculative-draft-model-path", None),
                               ("remove", "--speculative-num-steps", None)]
    assert without["command"] == LAUNCH


@pytest.mark.parametrize("extra", ["", " --speculative-algorithm NGRAM"])
def test_without_a_draft_model_the_fraction_is_raised(extra: str) -> None:
    fix = _fix(LAUNCH + extra)
    assert _flags(fix) == [("set", "--mem-fraction-static", "0.93")]
