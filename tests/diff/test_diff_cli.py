"""`logsleuth diff` end to end on the generated launches of tests/fixtures/diff (real SGLang 0.5.9 and 0.5.23
server_args dumps; scripts/diff_fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.diff.conftest import FIXTURES, FORMATS, run_diff

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "logsleuth" / "diff.schema.json").read_text())


def _changes(data: dict) -> list[tuple[str, str, str]]:
    return [(change["section"], change["kind"], change["name"]) for change in data["changes"]]


def test_done_when_lists_exactly_the_flag_the_variable_and_the_version() -> None:
    run = run_diff(str(FIXTURES / "good-0.5.9.log"), str(FIXTURES / "bad-0.5.23.log"), "--format", "json")
    assert run.exit_code == 1
    data = run.json()
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert _changes(data) == [("version", "changed", "engine"), ("flags", "changed", "--max-running-requests"),
                              ("env", "added", "NCCL_DEBUG")]
    version, flag, variable = data["changes"]
    assert (version["good"], version["bad"]) == ("sglang 0.5.9", "sglang 0.5.23")
    assert (flag["good"], flag["bad"]) == ("64", "128")
    assert (variable["good"], variable["bad"]) == (None, "INFO")


@pytest.mark.parametrize("fmt", ["text", "rich", "markdown", "slack"])
def test_every_format_shows_the_same_three_changes_and_nothing_else(fmt: str) -> None:
    run = run_diff(str(FIXTURES / "good-0.5.9.log"), str(FIXTURES / "bad-0.5.23.log"), "--format", fmt)
    assert run.exit_code == 1
    change_lines = [line for line in run.stdout.splitlines() if line.strip().lstrip("-` ").startswith(("~ ", "+ ", "- ", "! "))]
    assert len(change_lines) == 3, run.stdout
    assert "sglang 0.5.9 → sglang 0.5.23" in change_lines[0]
    assert "--max-running-requests: 64 → 128" in change_lines[1]
    assert "NCCL_DEBUG=INFO" in change_lines[2]
    assert "3 differences" in run.stdout


def test_identical_launches_exit_0_with_no_differences() -> None:
    run = run_diff(str(FIXTURES / "good-0.5.9.log"), str(FIXTURES / "good-0.5.9-again.log"))
    assert run.exit_code == 0
    assert "no differences that matter" in run.stdout
    data = run_diff(str(FIXTURES / "good-0.5.9.log"), str(FIXTURES / "good-0.5.9-again.log"), "-f", "json").json()
    assert data["changes"] == [] and data["differs"] is False


def test_a_field_renamed_between_0_5_9_and_0_5_23_is_a_rename() -> None:
    data = run_diff(str(FIXTURES / "rename-0.5.9.log"), str(FIXTURES / "rename-0.5.23.log"), "-f", "json").json()
    flags = [change for change in data["changes"] if change["section"] == "flags"]
    assert flags == [{
        "section": "flags", "kind": "renamed", "name": "--hierarchical-sparse-attention-extra-config",
        "good": '{"top_k": 2048}', "bad": '{"top_k": 2048}', "new_name": "--hisparse-config",
        "note": "ServerArgs field hierarchical_sparse_attention_extra_config is hisparse_config in the newer release",
    }]
    text = run_diff(str(FIXTURES / "rename-0.5.9.log"), str(FIXTURES / "rename-0.5.23.log"), "-f", "text").stdout
    assert "--hierarchical-sparse-attention-extra-config → --hisparse-config (renamed" in text


def test_launch_picks_two_launches_of_one_log() -> None:
    log = str(FIXTURES / "relaunch.log")
    data = run_diff(log, "--launch", "1", "--launch", "2", "-f", "json").json()
    assert (data["good"]["launch"], data["bad"]["launch"], data["bad"]["launches"]) == (1, 2, 3)
    # The second launch loaded its weights in 187 s instead of 41 s: the only change.
    assert _changes(data) == [("stages", "slower", "loading weights → weights loaded")]
    assert (data["changes"][0]["good"], data["changes"][0]["bad"]) == ("41 s", "3.1 min")
    default = run_diff(log, "-f", "json").json()  # one log: the previous launch against the latest
    explicit = run_diff(log, "--launch", "-2", "--launch", "-1", "-f", "json").json()
    assert default == explicit
    assert (default["good"]["launch"], default["bad"]["launch"]) == (2, 3)


def test_a_failure_on_the_bad_side_is_shown_with_its_pattern_and_cause() -> None:
    log = str(FIXTURES / "relaunch.log")
    data = run_diff(log, "--launch", "-2", "--launch", "-1", "-f", "json").json()
    assert data["bad"]["failure"]["pattern"] == "sglang-context-length-too-long"
    assert data["good"]["failure"] is None
    assert _changes(data) == [("failure", "added", "failure"), ("flags", "added", "--context-length"),
                              ("stages", "diverged", "arguments parsed")]
    assert "131072" in data["changes"][0]["note"]
    for fmt in ("text", "markdown", "slack"):
        shown = run_diff(log, "-f", fmt).stdout
        assert "sglang-context-length-too-long" in shown and "first diverging stage" in shown


def test_bad_inputs_are_one_line_with_their_exit_status(tmp_path: Path) -> None:
    missing = run_diff(str(tmp_path / "missing.log"), str(FIXTURES / "good-0.5.9.log"))
    out_of_range = run_diff(str(FIXTURES / "relaunch.log"), "--launch", "1", "--launch", "4")
    empty = tmp_path / "no-launch.log"
    empty.write_text("hello\nnothing to see here\n")
    no_launch = run_diff(str(empty), str(FIXTURES / "good-0.5.9.log"))
    once = run_diff(str(FIXTURES / "relaunch.log"), "--launch", "1")
    for run, status, words in ((missing, 3, "missing.log"), (out_of_range, 2, "--launch 4"),
                               (no_launch, 2, "holds no launch"), (once, 2, "give --launch twice")):
        assert run.exit_code == status, run.stderr
        assert run.stdout == ""
        assert run.stderr.count("\n") == 1 and run.stderr.startswith("logsleuth diff: ") and words in run.stderr
        assert "Traceback" not in run.stderr


def test_stdin_is_one_side() -> None:
    good = (FIXTURES / "good-0.5.9.log").read_bytes()
    data = run_diff("-", str(FIXTURES / "bad-0.5.23.log"), "-f", "json", stdin=good).json()
    assert data["good"]["source"] == "-"
    assert len(data["changes"]) == 3


PLANTED = ("sk-live-PLANTEDgoodKEY0123456789", "sk-live-PLANTEDbadKEY98765432100", "hf_PLANTEDgoodTOKENabcdefghijklmnop",
           "hf_PLANTEDbadTOKENzyxwvutsrqponmlk", "PLANTEDwandbKEY4242424242")


@pytest.mark.parametrize("fmt", FORMATS)
def test_planted_secrets_never_appear(fmt: str) -> None:
    good, bad = FIXTURES / "secret-good-0.5.9.log", FIXTURES / "secret-bad-0.5.9.log"
    assert all(secret in good.read_text() + bad.read_text() for secret in PLANTED)  # the fixtures carry them
    run = run_diff(str(good), str(bad), "-f", fmt)
    assert run.exit_code == 1
    for secret in PLANTED:
        assert secret not in run.stdout
        assert "PLANTED" not in run.stdout
    assert "--api-key" in run.stdout and "HF_TOKEN" in run.stdout and "WANDB_API_KEY" in run.stdout


def test_secret_changes_say_they_changed_without_values() -> None:
    data = run_diff(str(FIXTURES / "secret-good-0.5.9.log"), str(FIXTURES / "secret-bad-0.5.9.log"), "-f", "json").json()
    by_name = {change["name"]: change for change in data["changes"]}
    assert by_name["--api-key"]["kind"] == "changed"
    assert (by_name["--api-key"]["good"], by_name["--api-key"]["bad"]) == ("REDACTED", "REDACTED")
    assert by_name["HF_TOKEN"]["kind"] == "changed" and by_name["WANDB_API_KEY"]["kind"] == "added"
