"""`logsleuth case --suggest-pattern` (issue 18, item 4): a confirmed fix becomes a draft pattern that the
project's own loader reads (`diagnose --patterns DIR`), that matches its positive fixture and not its negative
one; and the `case` command itself, in-process and once through the console script.

The CLI runs through a typer app holding only `case` (the lead registers it in cli/app.py), with logsleuth's own
error handling (__main__): a test stand-in for the registration, not for any behaviour."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.case.suggest import parse_confirmed_fix, suggest_pattern
from logsleuth.errors import UsageError
from logsleuth.models import FlagOp
from tests.helpers import CliResult

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
EAGLE_INCIDENT = REPO / "examples" / "eagle3-incident.log"
EAGLE_FIX = "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"

# A few failures of different kinds, each with a fix a user could have confirmed for it.
DRAFT_CASES = [
    (EAGLE_INCIDENT, EAGLE_FIX),
    (FIXTURES / "patterns" / "sglang-gpu-oom-kv-cache" / "positive-0.5.9.log", "--mem-fraction-static 0.7"),
    (next(iter(sorted(FIXTURES.glob("wild/argparse-invalid-choice/*.log")))), "set --attention-backend triton"),
    (next(iter(sorted(FIXTURES.glob("wild/nccl-watchdog-timeout/*.log")))), "NCCL_P2P_DISABLE=1 --disable-custom-all-reduce"),
    (next(iter(sorted(FIXTURES.glob("wild/segfault-faulthandler/*.log")))), "--disable-cuda-graph"),
]


def _report(path: Path):  # noqa: ANN202 - a Report
    return diagnose([str(path)], DiagnoseOptions(include_user_patterns=False))


@pytest.mark.parametrize(("log", "fix"), DRAFT_CASES, ids=lambda value: value.stem if isinstance(value, Path) else "")
def test_draft_loads_matches_its_positive_and_not_its_negative(log: Path, fix: str, tmp_path: Path) -> None:
    out = tmp_path / "drafts"
    draft, written = suggest_pattern(_report(log), fix, out)
    toml_path, positive, negative = written
    assert toml_path == out / f"{draft.pattern_id}.toml"
    data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    assert data["fix"]["flags"], "the confirmed fix is the draft's fix" if "--" in fix else True
    # the project's own loader and diagnosis, exactly as `diagnose --patterns DIR` runs them
    options = DiagnoseOptions(pattern_dirs=(str(out),), include_user_patterns=False)
    matched = diagnose([str(positive)], options)
    assert matched.primary is not None and matched.primary.diagnosis is not None
    assert matched.primary.diagnosis.pattern == draft.pattern_id
    near = diagnose([str(negative)], options)
    assert near.failures, "the near miss is a failure too"
    assert all(group.diagnosis is None or group.diagnosis.pattern != draft.pattern_id for group in near.failures)
    # the original log is diagnosed with the draft as well
    original = diagnose([str(log)], options)
    assert original.primary.diagnosis.pattern == draft.pattern_id  # type: ignore[union-attr]


def test_draft_fixtures_are_redacted(tmp_path: Path) -> None:
    token = "hf_" + "Zk9" * 12
    log = tmp_path / "server.log"
    text = EAGLE_INCIDENT.read_text(encoding="utf-8").replace("--device cpu", f"--device cpu --hf-token {token}")
    log.write_text(text.replace("Traceback (most", f"HF_TOKEN={token}\nTraceback (most", 1), encoding="utf-8")
    _, written = suggest_pattern(_report(log), EAGLE_FIX, tmp_path / "drafts")
    for path in written:
        assert token not in path.read_text(encoding="utf-8")


def test_never_overwrites(tmp_path: Path) -> None:
    out = tmp_path / "drafts"
    suggest_pattern(_report(EAGLE_INCIDENT), EAGLE_FIX, out)
    before = {path: path.read_text(encoding="utf-8") for path in out.rglob("*") if path.is_file()}
    with pytest.raises(UsageError, match="never overwrites"):
        suggest_pattern(_report(EAGLE_INCIDENT), "--speculative-num-steps 5", out)
    assert {path: path.read_text(encoding="utf-8") for path in out.rglob("*") if path.is_file()} == before


@pytest.mark.parametrize(
    ("text", "ops"),
    [
        ("--x 3 --y", (FlagOp("set", "--x", "3"), FlagOp("add", "--y"))),
        ("remove --speculative-eagle-topk add --speculative-num-steps 15", (FlagOp("remove", "--speculative-eagle-topk"), FlagOp("add", "--speculative-num-steps", "15"))),
        ("rename --tp -> --tp-size", (FlagOp("rename", "--tp", to="--tp-size"),)),
        ("--mem-fraction-static=0.8", (FlagOp("set", "--mem-fraction-static", "0.8"),)),
    ],
)
def test_confirmed_fix_reads_flags_and_the_words_logsleuth_prints(text: str, ops: tuple[FlagOp, ...]) -> None:
    assert parse_confirmed_fix(text).flags == ops


@pytest.mark.parametrize(
    ("fix", "message"),
    [
        ("--speculative-num-stepz 3", "not a flag of"),
        ("set --attention-backend sdpa-please", "not a choice of --attention-backend"),
        ("model=1 garbage", "is not a --flag"),
        ("", "no flag given"),
    ],
)
def test_a_fix_the_catalog_refutes_is_refused(fix: str, message: str, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("sglang version: 0.5.9\n" + EAGLE_INCIDENT.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        suggest_pattern(_report(log), fix, tmp_path / "drafts")
    assert not (tmp_path / "drafts").exists()


# -- the command ---------------------------------------------------------------------------------------------


def _app() -> typer.Typer:
    from logsleuth.cli.case import CASE_EXIT_HELP, case_command

    app = typer.Typer(add_completion=False)
    app.command("case", epilog=CASE_EXIT_HELP)(case_command)
    app.command("other")(lambda: None)  # two commands: `case` is a subcommand, as in logsleuth's app
    return app


def run_case(*args: str) -> CliResult:
    """`logsleuth case ARGS` in-process, with the error handling of logsleuth's entry point."""
    from logsleuth.__main__ import _guarded, _run

    command = typer.main.get_command(_app())
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _guarded(lambda: _run(command, ["case", *args]))
    return CliResult(code, out.getvalue(), err.getvalue())


def test_case_command_writes_the_case_and_exits_as_diagnose(tmp_path: Path) -> None:
    result = run_case(str(EAGLE_INCIDENT))
    assert result.exit_code == 1
    assert result.stdout.startswith("### Case: AssertionError")
    assert "`--speculative-num-steps`" in result.stdout
    json_result = run_case(str(EAGLE_INCIDENT), "--format", "json", "-o", str(tmp_path / "case.json"))
    assert json_result.exit_code == 1 and (tmp_path / "case.json").read_text(encoding="utf-8").startswith("{")
    ok = tmp_path / "ok.log"
    ok.write_text("The server is fired up and ready to roll!\n", encoding="utf-8")
    assert run_case(str(ok)).exit_code == 0
    missing = run_case(str(tmp_path / "nope.log"))
    assert missing.exit_code == 3 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and "no such file" in missing.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--confirmed-fix", "--x 1"], "go with --suggest-pattern"),
        (["--suggest-pattern", "--out", "d"], "--confirmed-fix"),
        (["--suggest-pattern", "--confirmed-fix", "--speculative-num-steps 3"], "--out DIR"),
        (["--suggest-pattern", "--confirmed-fix", "--speculative-num-steps 3", "--out", "d", "--category", "nope"], "unknown category"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = run_case(str(EAGLE_INCIDENT), *args)
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_suggest_pattern_through_the_command_then_diagnose_with_it(tmp_path: Path) -> None:
    out = tmp_path / "drafts"
    result = run_case(str(EAGLE_INCIDENT), "--suggest-pattern", "--confirmed-fix", EAGLE_FIX, "--out", str(out))
    assert result.exit_code == 1, result.stderr
    assert "matches its positive fixture and not its negative one" in result.stdout
    from tests.helpers import run_cli

    diagnosed = run_cli("diagnose", str(EAGLE_INCIDENT), "--patterns", str(out), "--format", "json")
    assert diagnosed.json()["failures"][0]["diagnosis"]["pattern"].startswith("user-sglang-")
    again = run_case(str(EAGLE_INCIDENT), "--suggest-pattern", "--confirmed-fix", EAGLE_FIX, "--out", str(out))
    assert again.exit_code == 2 and "never overwrites" in again.stderr


def test_case_from_stdin_through_the_console_script() -> None:
    """Once as a separate process, as a user runs it: stdin piped in, the lines before the failure still read."""
    probe = (
        "import sys, typer\n"
        "from logsleuth.cli import app as cli\n"
        "from logsleuth.cli.case import case_command\n"
        "if 'case' not in {c.name for c in cli.app.registered_commands}:\n"
        "    cli.app.command('case')(case_command)\n"
        "from logsleuth.__main__ import _entry\n"
        "sys.argv = ['logsleuth', 'case']\n"
        "_entry()\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], input=EAGLE_INCIDENT.read_bytes(), capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    assert "- **Log:** `<stdin>`" in out
    assert "Max running requests is reset to 48" in out  # a line before the failure, read again from the spooled stdin
