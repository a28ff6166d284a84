"""`logsleuth diagnose LOG --verify-fix TEXT` through the console script: a suggested fix checked against the log's
launch command (the shipped EAGLE-3 example: the seed case of docs/check.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eagle3-incident.log"
LOGSLEUTH = str(Path(sys.executable).with_name("logsleuth"))


def _diagnose(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LOGSLEUTH, "diagnose", str(EXAMPLE), *args], capture_output=True, text=True, timeout=60)


def test_the_seeds_wrong_answer_is_marked_as_the_same_crash_and_the_verdict_comes_first() -> None:
    done = _diagnose("--verify-fix", "remove --speculative-eagle-topk", "--format", "text")
    assert done.returncode == 1  # the suggestion fails
    assert done.stdout.startswith("✗ ")  # the verdict, before the report
    assert "✗ EAGLE speculative sizes given only in part" in done.stdout
    assert done.stdout.index("✗ EAGLE") < done.stdout.index("Root cause")


def test_a_passing_suggestion_exits_0() -> None:
    done = _diagnose("--verify-fix", "add --speculative-num-steps 15", "--format", "text")
    assert done.returncode == 0, done.stdout
    assert "Root cause" in done.stdout  # the report is still delivered, after the verdict


def test_the_corrected_command_holds_no_flag_marked_wrong() -> None:
    done = _diagnose("--verify-fix", "Remove --speculative-eagle-topk and --speculative-num-draft-tokens, and add "
                     "--max-model-len 8192", "--format", "text")
    assert done.returncode == 1
    assert "✗ --max-model-len 8192" in done.stdout
    corrected = [line for line in done.stdout.splitlines() if "Corrected command" in line]
    assert corrected, done.stdout
    assert all("--max-model-len" not in line for line in corrected)
    assert "--context-length 8192" in corrected[0]


def test_the_right_answer_passes_and_is_part_of_the_json_report() -> None:
    done = _diagnose("--verify-fix", "add --speculative-num-steps 15", "--format", "json")
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"
    assert report["verify_fix"]["passed"] is True
    assert report["verify_fix"]["command"].endswith("--speculative-num-steps 15")


def test_text_with_no_flag_is_a_usage_error() -> None:
    done = _diagnose("--verify-fix", "try turning it off and on again")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
