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


def test_the_seeds_wrong_answer_is_marked_as_the_same_crash() -> None:
    done = _diagnose("--verify-fix", "remove --speculative-eagle-topk")
    assert done.returncode == 1  # the log's status: the check does not change it
    assert "✗ EAGLE speculative sizes given only in part" in done.stdout
    assert done.stdout.index("Root cause") < done.stdout.index("✗ EAGLE")  # after the report


def test_the_right_answer_passes_and_is_part_of_the_json_report() -> None:
    done = _diagnose("--verify-fix", "add --speculative-num-steps 15", "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"
    assert report["verify_fix"]["passed"] is True
    assert report["verify_fix"]["command"].endswith("--speculative-num-steps 15")


def test_text_with_no_flag_is_a_usage_error() -> None:
    done = _diagnose("--verify-fix", "try turning it off and on again")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
