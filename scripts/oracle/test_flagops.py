"""Tests of the oracle helpers that need no SGLang: flag operations applied by hand (flagops.py) and the
log the without-the-command check feeds logsleuth (verify_fixes.py). The flag catalogs are the real
ones dumped from SGLang's parsers. The last test runs the real check end to end and needs the oracle
venvs (marker `oracle`, left out of the default run).

Run: .venv/bin/python -m pytest -q scripts/oracle/test_flagops.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from flagops import MANY, Option, applied_command, flag_arity, parse  # noqa: E402

MODEL = "/models/tiny"
BASE = f"python -m sglang.launch_server --model-path {MODEL}"


def op(kind: str, flag: str, value: str | None = None, to: str | None = None) -> dict[str, str | None]:
    return {"op": kind, "flag": flag, "value": value, "to": to}


def test_the_catalog_says_which_flags_are_switches() -> None:
    arity = flag_arity("0.5.9")
    assert arity["--disable-radix-cache"] == 0
    assert arity["--tp-size"] == 1 and arity["--tensor-parallel-size"] == 1  # aliases too
    assert arity["--cuda-graph-bs"] == MANY


def test_a_stray_word_after_a_switch_is_a_positional_and_remove_drops_it() -> None:
    command = f"{BASE} --disable-radix-cache true --device cpu"
    assert parse(command, flag_arity("0.5.9"))[1:3] == [Option("--disable-radix-cache"), "true"]
    assert applied_command(command, [op("remove", "true")], "0.5.9") == f"{BASE} --disable-radix-cache --device cpu"


def test_set_without_a_value_leaves_the_flag_to_the_user() -> None:
    """A `set` with no value is listed in needs_input: the user chooses the value, the command is unchanged."""
    command = f"{BASE} --mem-fraction-static 1.5 --device cpu"
    assert applied_command(command, [op("set", "--mem-fraction-static")], "0.5.9") == command


def test_set_replaces_the_value_or_appends_the_flag() -> None:
    command = f"{BASE} --schedule-policy lpm --device cpu"
    ops = [op("set", "--schedule-policy", "fcfs"), op("set", "--speculative-eagle-topk", "1")]
    assert applied_command(command, ops, "0.5.9") == (
        f"{BASE} --schedule-policy fcfs --device cpu --speculative-eagle-topk 1"
    )


def test_rename_keeps_the_values_of_a_many_valued_flag_and_ignores_an_absent_flag() -> None:
    command = f"{BASE} --cuda-graph-bs 1 2 4 --device cpu"
    ops = [
        op("rename", "--cuda-graph-max-bs", to="--cuda-graph-max-bs-decode"),
        op("rename", "--cuda-graph-bs", to="--cuda-graph-bs-decode"),
    ]
    assert applied_command(command, ops, "0.5.23") == f"{BASE} --cuda-graph-bs-decode 1 2 4 --device cpu"


def test_a_flag_written_with_equals_is_renamed_with_its_value() -> None:
    command = f"{BASE} --cuda-graph-max-bs=16"
    ops = [op("rename", "--cuda-graph-max-bs", to="--cuda-graph-max-bs-decode")]
    assert applied_command(command, ops, "0.5.23") == f"{BASE} --cuda-graph-max-bs-decode 16"


def test_rename_with_a_value_gives_the_new_flag_that_value() -> None:
    command = f"{BASE} --gpu-memory-utilization 90%"
    ops = [op("rename", "--gpu-memory-utilization", "0.9", to="--mem-fraction-static")]
    assert applied_command(command, ops, "0.5.9") == f"{BASE} --mem-fraction-static 0.9"


def test_adding_the_model_path_takes_the_positional_model() -> None:
    command = f"python -m sglang.launch_server {MODEL} --tp-size 1"
    ops = [op("add", "--model-path", MODEL)]
    assert applied_command(command, ops, "0.5.9") == f"python -m sglang.launch_server --tp-size 1 --model-path {MODEL}"


def test_a_switch_is_added_without_a_value_and_negative_numbers_stay_values() -> None:
    command = f"{BASE} --base-gpu-id -1"
    ops = [op("add", "--enable-priority-scheduling"), op("remove", "--speculative-num-steps")]
    assert applied_command(command, ops, "0.5.23") == f"{BASE} --base-gpu-id -1 --enable-priority-scheduling"


def test_only_a_launch_server_command_is_accepted() -> None:
    with pytest.raises(ValueError, match="not a launch_server command"):
        applied_command("vllm serve /models/tiny", [], "0.5.9")


def test_the_log_for_the_check_without_the_command_has_no_bash_x_line(tmp_path: Path) -> None:
    from verify_fixes import Fixture, log_without_command

    log = tmp_path / "case.log"
    log.write_text(f"+ {BASE} --device cpu\nwarning\nTraceback (most recent call last):\n+ x\n")
    fixture = Fixture("case", "0.5.9", log, f"{BASE} --device cpu", "")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = log_without_command(fixture, out_dir)
    assert out.parent == out_dir and out.read_text() == "warning\nTraceback (most recent call last):\n"


@pytest.mark.oracle
def test_without_the_command_the_priority_scheduling_advice_passes_real_sglang(tmp_path: Path) -> None:
    """The real check on one fixture: logsleuth without --cmd, its operations applied, SGLang 0.5.9 run."""
    from run import venv_dir
    from verify_fixes import REPO, load_fixtures, verify_without_cmd

    cli = shutil.which("logsleuth") or str(REPO / ".venv" / "bin" / "logsleuth")
    if not (venv_dir("0.5.9") / ".ready").exists() or not Path(cli).exists():
        pytest.skip("needs the oracle venvs (scripts/oracle/setup.sh) and an installed logsleuth")
    (fixture,) = load_fixtures(["0.5.9"], ["priority_scheduling_with_lpm"])
    verdict = verify_without_cmd([cli], fixture, tmp_path)
    assert verdict.pattern == "sglang-priority-scheduling-policy"
    assert verdict.seen_command is None
    assert verdict.fixes_checked == 3 and verdict.ok, verdict.problems
