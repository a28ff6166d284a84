"""`check` on real mistakes, against the shipped flag catalogs (no SGLang needed: fast).  Each case names the flag
that must be marked ✗ and words of its reason; the rest of the command must pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logsleuth.check.verify import check_text, check_words, verify_fix
from logsleuth.errors import UsageError
from tests.check.cases import CASES, EAGLE, MODEL, Case


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_flag_marked_with_its_reason(case: Case) -> None:
    result = check_words(["python", "-m", "sglang.launch_server", *case.args], case.version, validate=False)
    failing = [verdict for verdict in result.flags if not verdict.ok]
    if case.failing is None:
        assert failing == [], failing
        assert any(case.reason in verdict.reason for verdict in result.flags)
        return
    assert [verdict.flag for verdict in failing] == [case.failing], failing
    assert case.reason in failing[0].reason
    if case.suggestion is not None:
        assert failing[0].suggestion == case.suggestion
    assert not result.passed


def test_a_parser_value_gets_no_suggestion_by_its_spelling() -> None:
    """A parser names the model family's format; the nearest spelling among the choices (qwen25 for qwen3) is another
    family's release, so the choices are listed and nothing is suggested."""
    result = check_words(["python", "-m", "sglang.launch_server", *MODEL, "--tool-call-parser", "qwen3"], "0.4.3", validate=False)
    failing = [verdict for verdict in result.flags if not verdict.ok]
    assert [verdict.flag for verdict in failing] == ["--tool-call-parser"]
    assert failing[0].suggestion is None and "did you mean" not in failing[0].reason


def test_seed_partial_speculative_sizes_is_a_trap_with_the_patterns_fix() -> None:
    words = ["python", "-m", "sglang.launch_server", *MODEL, *EAGLE, "--speculative-num-draft-tokens", "16",
             "--speculative-eagle-topk", "1"]
    result = check_words(words, "0.5.9", validate=False)
    (trap,) = result.traps
    assert trap.pattern == "sglang-eagle-partial-spec-args"
    assert trap.flags == ("--speculative-eagle-topk", "--speculative-num-draft-tokens")
    assert "add --speculative-num-steps 15" in trap.fix  # the pattern's builder, fitted to these values
    assert trap.corrected is not None and trap.corrected.endswith("--speculative-num-steps 15")
    assert not result.passed


@pytest.mark.parametrize("sizes", [
    ("--speculative-num-draft-tokens", "16", "--speculative-eagle-topk", "1", "--speculative-num-steps", "15"),
    ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3"),
    (),
])
def test_complete_or_absent_speculative_sizes_are_no_trap(sizes: tuple[str, ...]) -> None:
    result = check_words(["python", "-m", "sglang.launch_server", *MODEL, *EAGLE, *sizes], "0.5.9", validate=False)
    assert result.traps == ()
    assert result.passed


def test_steps_without_topk_is_the_typeerror_trap() -> None:
    words = [*EAGLE, "--speculative-num-draft-tokens", "16", "--speculative-num-steps", "15"]
    result = check_words(words, "0.5.9", validate=False)
    assert [trap.pattern for trap in result.traps] == ["sglang-eagle-missing-topk"]
    assert result.traps[0].corrected is None  # bare flags: no command to correct


def test_whole_command_without_model_path_fails() -> None:
    result = check_words(["sglang", "serve", "--tp-size", "2"], "0.5.23", validate=False)
    assert [(v.flag, v.ok) for v in result.flags] == [("--tp-size", True), ("--model-path", False)]


def test_abbreviation_passes_and_names_the_full_flag() -> None:
    result = check_words(["--mem-frac", "0.8"], "0.5.9", validate=False)
    (verdict,) = result.flags
    assert verdict.ok and verdict.suggestion == "--mem-fraction-static"


def test_release_without_parser_catalog_uses_its_static_catalog_and_says_what_it_proves() -> None:
    result = check_words(["--tp-size", "2"], "0.5.10", validate=False)
    assert result.catalog_version == "0.5.10"
    assert result.version_note is not None and "proves a flag exists" in result.version_note
    assert not result.verified


def test_a_flag_the_release_lacks_fails_against_its_static_catalog() -> None:
    """Issue 29: SGLang 0.3.0 has no --attention-backend (0.3.1 added it); the nearest catalog (0.4.10.post2) has."""
    (verdict,) = check_words(["--attention-backend", "triton"], "0.3.0", validate=False).flags
    assert not verdict.ok
    (verdict,) = check_words(["--attention-backend", "triton"], "0.3.1", validate=False).flags
    assert verdict.ok


def test_a_release_without_any_catalog_is_refused_not_guessed() -> None:
    with pytest.raises(UsageError, match="no flag catalog for SGLang 0.2.14"):
        check_words(["--tp-size", "2"], "0.2.14", validate=False)


def test_verify_fix_applies_the_answer_to_the_launch_command() -> None:
    answer = ("The assert fires because the speculative sizes are partial. Add `--speculative-num-steps 15` and keep "
              "`--speculative-eagle-topk 1`.")
    command = ("python -m sglang.launch_server --model-path /models/llama --speculative-algorithm EAGLE3 "
               "--speculative-draft-model-path /models/draft --speculative-num-draft-tokens 16 --speculative-eagle-topk 1")
    result = verify_fix(answer, "0.5.9", command=command, validate=False)
    assert result.passed
    assert result.command is not None and "--speculative-num-steps 15" in result.command


def test_verify_fix_the_seeds_wrong_answer_still_crashes() -> None:
    """The assistant's answer in the seed incident: remove the top-k flag.  Only the draft tokens are left."""
    answer = "EAGLE3 does not support top-k here: remove `--speculative-eagle-topk 1` and relaunch."
    command = ("python -m sglang.launch_server --model-path /models/llama --speculative-algorithm EAGLE3 "
               "--speculative-draft-model-path /models/draft --speculative-num-draft-tokens 16 --speculative-eagle-topk 1")
    result = verify_fix(answer, "0.5.9", command=command, validate=False)
    assert [trap.pattern for trap in result.traps] == ["sglang-eagle-partial-spec-args"]
    assert "--speculative-eagle-topk" not in (result.command or "")


def test_prose_answer_flags_and_removals() -> None:
    answer = "Use --context-length 8192 instead of --max-model-len, and set --attention-backend to fa3."
    result = check_text(answer, "0.5.9", validate=False)
    by_flag = {verdict.flag: verdict for verdict in result.flags}
    assert by_flag["--context-length"].ok
    assert by_flag["--attention-backend"].ok and by_flag["--attention-backend"].values == ("fa3",)
    assert "removed by the suggestion" in by_flag["--max-model-len"].reason


def test_answer_with_a_whole_command_checks_that_command() -> None:
    answer = "Run this:\n```bash\npython -m sglang.launch_server --model-path /m \\\n  --max-model-len 4096\n```\n"
    result = check_text(answer, "0.5.9", validate=False)
    assert [v.flag for v in result.flags if not v.ok] == ["--max-model-len"]


def test_secrets_never_printed() -> None:
    from logsleuth.check.render import RENDERERS

    result = check_words(["--api-key", "sk-live-abcdef0123456789", "--tp-size", "2"], "0.5.9", validate=False)
    for render in RENDERERS.values():
        assert "sk-live-abcdef0123456789" not in render(result)
    data = json.loads(RENDERERS["json"](result))
    assert data["passed"] is True and data["schema_version"] == 1


def test_absent_oracle_version_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOGSLEUTH_ORACLE_HOME", str(tmp_path))
    result = check_words(["--tp-size", "2"], "0.5.9")
    assert result.validation is not None and result.validation.state == "unavailable"
    assert result.validation.message == "not validated: no SGLang 0.5.9 here (make oracle-setup)"
    assert result.passed  # not validated is not a failure


def test_cli_exit_statuses_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    from logsleuth.cli.check import run_check

    assert run_check(["--tp-size", "2"], "0.5.9", "text", validate=False) == 0
    assert run_check(["--max-model-len", "2"], "0.5.9", "text", validate=False) == 1
    capsys.readouterr()
    assert run_check([], "0.5.9", "text") == 2
    assert run_check(["vllm", "serve", "m", "--max-model-len", "2"], "0.5.9", "text") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "vllm command" in err
