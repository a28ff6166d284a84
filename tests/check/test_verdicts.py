"""A ✓ means "this change passes the version's validation and the known traps", never merely "the flag exists"
(issue 30, finding 1): `check`, `--explain`'s proposed flags and `--verify-fix`, on the seed incident's wrong fix
("remove --speculative-eagle-topk", which still crashes) and on changes that cannot be judged without the launch
command.  The oracle tests run the real SGLang 0.5.9 (`pytest -m oracle`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.check.ops import check_flag_ops
from logsleuth.check.validation import oracle_home, oracle_python
from logsleuth.cli.check import run_check
from logsleuth.models import FlagOp, LaunchInfo, Report
from logsleuth.render.explanation import CHECKED_BAD, CHECKED_OK, explanation_view
from tests.check.cases import EAGLE

SEED_LOG = Path(__file__).resolve().parents[2] / "examples" / "eagle3-incident.log"
WRONG_FIX = "Just remove --speculative-eagle-topk"


def _check(capsys: pytest.CaptureFixture[str], *words: str, version: str = "0.5.9",
           validate: bool = False) -> tuple[int, str]:
    status = run_check(list(words), version, "text", validate=validate)
    return status, capsys.readouterr().out


@pytest.fixture(scope="module")
def seed_report() -> Report:
    return diagnose_text(SEED_LOG.read_text(), DiagnoseOptions(include_user_patterns=False))


def test_check_marks_the_seeds_wrong_fix_as_the_known_trap(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check(capsys, WRONG_FIX)
    assert status == 1
    assert "all pass" not in out and "✓" not in out
    assert "✗ --speculative-eagle-topk" in out and "sglang-eagle-partial-spec-args" in out


def test_a_removal_that_needs_the_launch_command_says_so_and_does_not_pass(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check(capsys, "Remove `--enable-torch-compile` and retry.")
    assert status == 1
    assert "✓" not in out and "all pass" not in out
    assert "cannot be judged without the launch command" in out


def test_flag_existence_is_worded_as_such_without_a_check_mark(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check(capsys, "--tp-size", "2", "--mem-fraction-static", "0.8")
    assert status == 0  # nothing fails; what was not verified is said, and is no failure
    assert "✓" not in out
    assert "flag exists in SGLang 0.5.9" in out
    assert "not validated" in out


def test_explain_does_not_mark_the_seeds_wrong_fix_with_a_check(seed_report: Report) -> None:
    from dataclasses import replace

    from logsleuth.models import Explanation
    from logsleuth.render.options import OutputFormat
    from tests.render.helpers import render

    ops = (FlagOp("remove", "--speculative-eagle-topk"),)
    (check,) = check_flag_ops(ops, seed_report.launch)
    assert check.ok is False and "sglang-eagle-partial-spec-args" in check.reason
    explanation = Explanation("m", "http://127.0.0.1/v1", "r", "spec-decoding-args", ops, checks=(check,))
    text = render(replace(seed_report, explanation=explanation), OutputFormat.TEXT)
    assert "✗ remove --speculative-eagle-topk" in text and "✓ remove" not in text


def test_explain_without_the_launch_command_marks_nothing_verified() -> None:
    launch = LaunchInfo(engine="sglang", engine_version="0.5.9")
    checks = check_flag_ops((FlagOp("remove", "--speculative-eagle-topk"), FlagOp("set", "--tp-size", "2"),
                             FlagOp("remove", "--enable-torch-compile")), launch)
    assert [check.ok for check in checks] == [False, True, True]
    assert not any(check.verified for check in checks)
    assert "flag exists in SGLang 0.5.9" in checks[1].reason
    assert "cannot be judged without the launch command" in checks[2].reason


def test_explain_shows_an_unverified_flag_without_a_check_mark(seed_report: Report) -> None:
    from logsleuth.models import Explanation

    launch = LaunchInfo(engine="sglang", engine_version="0.5.9")
    ops = (FlagOp("set", "--tp-size", "2"),)
    explanation = Explanation("m", "http://127.0.0.1/v1", "r", "other", ops, checks=check_flag_ops(ops, launch))
    (change,) = explanation_view(explanation).changes
    assert change.mark not in (CHECKED_OK, CHECKED_BAD)


def _need_oracle() -> None:
    if oracle_python("0.5.9") is None:
        pytest.skip(f"no oracle venv for SGLang 0.5.9 in {oracle_home()} (make oracle-setup)")


@pytest.mark.oracle
def test_a_check_mark_is_given_for_a_validated_command(capsys: pytest.CaptureFixture[str]) -> None:
    _need_oracle()
    status, out = _check(capsys, "python", "-m", "sglang.launch_server", "--model-path", "/models/m", "--tp-size",
                         "1", validate=True)
    assert status == 0
    assert out.startswith("✓ ") and "passes SGLang 0.5.9's validation" in out.splitlines()[0]


@pytest.mark.oracle
def test_explain_marks_the_right_fix_verified_on_the_real_sglang() -> None:
    _need_oracle()
    command = "python -m sglang.launch_server --model-path /models/m " + " ".join(EAGLE) + " --speculative-num-draft-tokens 16 --speculative-eagle-topk 1"
    launch = LaunchInfo(engine="sglang", engine_version="0.5.9", command=command, command_source="log")
    right = check_flag_ops((FlagOp("remove", "--speculative-eagle-topk"),
                            FlagOp("remove", "--speculative-num-draft-tokens")), launch)
    assert all(check.ok and check.verified for check in right), right
    wrong = check_flag_ops((FlagOp("remove", "--speculative-eagle-topk"),), launch)
    assert not any(check.ok for check in wrong), wrong


def test_check_of_a_whole_command_prints_a_corrected_command_without_the_wrong_flag(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check(capsys, "python", "-m", "sglang.launch_server", "--model-path", "/m", "--max-model-len",
                         "8192", "--tp-size", "2")
    assert status == 1
    (corrected,) = [line for line in out.splitlines() if "Corrected command" in line]
    assert "--max-model-len" not in corrected and corrected.endswith("--tp-size 2 --context-length 8192")


def test_removing_a_flag_the_release_lacks_is_judged_without_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check(capsys, "Use --context-length 8192 instead of --max-model-len")  # docs/check.md's example
    assert status == 0, out
    assert "cannot be judged" not in out and "✓" not in out  # not validated here: nothing is marked verified


@pytest.mark.oracle
@pytest.mark.parametrize(("suggestion", "status", "verdict"), [
    ("add --speculative-num-steps 15", 0, "✓ 7 flags: passes SGLang 0.5.9's validation and the known traps"),
    ("remove --speculative-eagle-topk", 1, "✗ 1 flag combination SGLang rejects; SGLang's own validation rejects it"),
])
def test_verify_fix_on_the_real_sglang_puts_its_verdict_first(suggestion: str, status: int, verdict: str) -> None:
    import subprocess
    import sys

    _need_oracle()
    log = Path(__file__).resolve().parents[1] / "fixtures/sglang/0.5.9/eagle3_incident_topk1_ndt16.log"
    logsleuth = str(Path(sys.executable).with_name("logsleuth"))
    done = subprocess.run([logsleuth, "diagnose", str(log), "--engine-version", "0.5.9", "--verify-fix", suggestion,
                           "--format", "text"], capture_output=True, text=True, timeout=300)
    assert done.returncode == status, done.stdout + done.stderr
    assert done.stdout.startswith(verdict)
