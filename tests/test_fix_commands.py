"""Corrected commands are safe to paste: log text that reaches a fix through a capture stays data."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import parse_pattern
from logsleuth.errors import PatternError
from tests.helpers import load_test_pattern

INJECTING_PATTERN = '''
id = "test-bad-devices"
title = "Bad devices"
category = "parallel-config"
root_cause = "The devices {dev} are wrong."

[[match]]
kind = "bare"
exception_type = "RuntimeError"
message = 'bad devices (?P<dev>.+)$'

[fix]
summary = "Use the devices {dev}."
flags = [{ op = "set", flag = "--tp-size", value = "1" }]
env = { CUDA_VISIBLE_DEVICES = "{dev}" }
'''

LOG = "+ python -m sglang.launch_server --model-path /m --tp-size 2\nRuntimeError: bad devices 0; touch pwned #\n"


def test_a_capture_in_an_env_value_cannot_run_a_command(tmp_path: Path) -> None:
    patterns = load_test_pattern(tmp_path, "test-bad-devices", INJECTING_PATTERN)
    report = diagnose_text(LOG, DiagnoseOptions(include_user_patterns=False), patterns=patterns)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None and diagnosis.fix.command
    command = diagnosis.fix.command
    assert shlex.split(command)[0] == "CUDA_VISIBLE_DEVICES=0; touch pwned #"
    assert subprocess.run(["bash", "-n", "-c", command]).returncode == 0
    workdir = tmp_path / "run"
    workdir.mkdir()
    subprocess.run(["bash", "-c", f"echo {command}"], cwd=workdir, check=True, capture_output=True)
    assert list(workdir.iterdir()) == [], "pasting the corrected command created a file"


@pytest.mark.parametrize("name", ["A B", "X;touch", "1ABC", "A-B"])
def test_a_pattern_env_name_must_be_a_variable_name(name: str) -> None:
    text = INJECTING_PATTERN.replace("env = { CUDA_VISIBLE_DEVICES", f'env = {{ "{name}"')
    with pytest.raises(PatternError, match="not an environment variable name"):
        parse_pattern(text, "x.toml", "user")


def test_the_users_cmd_keeps_its_expansions_and_pipe() -> None:
    """--cmd is the user's own text: `$MODEL` and `| tee` must still work when they paste the fix."""
    log = (
        "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m', tp_size=2)\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/sglang/srt/server_args.py", line 900, in __post_init__\n'
        "    assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None\n"
        "AssertionError\n"
    )
    cmd = (
        "python -m sglang.launch_server --model-path $MODEL --speculative-algorithm EAGLE3 \\\n"
        "  --speculative-eagle-topk 1 --speculative-num-draft-tokens 16 2>&1 | tee server.log"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False, command=cmd, engine_version="0.5.9"))
    fix = report.failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.command is not None
    assert fix.command.startswith("python -m sglang.launch_server --model-path $MODEL ")
    assert fix.command.endswith(" 2>&1 | tee server.log")
    assert "\n" not in fix.command


# -- advice the log contradicts is not given ----------------------------------------------------------------

NOT_ENOUGH = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3/dist-packages/sglang/srt/model_executor/model_runner.py", line 900, in init_memory_pool\n'
    '    raise RuntimeError("Not enough memory. Please try to increase --mem-fraction-static.")\n'
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.95\n"
)


def test_a_fraction_already_at_the_bound_is_not_raised_again() -> None:
    report = diagnose_text(NOT_ENOUGH, DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "sglang-kv-cache-not-enough-memory"
    fix = diagnosis.fix
    assert fix is not None
    assert "--mem-fraction-static" not in [op.flag for op in fix.flags]
    assert fix.summary.startswith("--mem-fraction-static was already 0.95")
    raised = NOT_ENOUGH.replace("0.95", "0.7")
    fix = diagnose_text(raised, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--mem-fraction-static", "0.8")]


REMOVING_PATTERN = '''
id = "test-remove-quantization"
title = "Quantization"
category = "weight-loading"
root_cause = "x"

[[match]]
exception_type = "ValueError"
message = "zz_quantization"

[fix]
summary = "Remove --quantization."
flags = [{ op = "remove", flag = "--quantization" }]
alternatives = [{ summary = "Or use another checkpoint.", steps = ["download the unquantized one"] }]
'''


def test_a_flag_the_command_does_not_have_is_not_removed(tmp_path: Path) -> None:
    patterns = load_test_pattern(tmp_path, "q", REMOVING_PATTERN)
    log = "ValueError: zz_quantization\n"
    without = diagnose_text(log, DiagnoseOptions(include_user_patterns=False, command="python -m sglang.launch_server --model-path /m"), patterns=patterns)
    fix = without.failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.flags == () and fix.summary == "Use another checkpoint."
    with_flag = diagnose_text(
        log, DiagnoseOptions(include_user_patterns=False, command="python -m sglang.launch_server --model-path /m --quantization fp8"), patterns=patterns
    )
    fix = with_flag.failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.command == "python -m sglang.launch_server --model-path /m"


# -- values the pattern cannot write as plain data ----------------------------------------------------------

JSON_PATTERN = '''
id = "test-json-override"
title = "Tied embeddings"
category = "weight-loading"
root_cause = "x"

[[match]]
exception_type = "KeyError"
message = "zz_(?P<key>\\\\w+)"

[fix]
summary = "Override the config."
flags = [{ op = "set", flag = "--json-model-override-args", value = '{{"{key}": false}}' }]
alternatives = [
    { summary = "Or a value with a placeholder nothing fills.", flags = [{ op = "set", flag = "--tp-size", value = "{nothing}" }] },
    { builder = "mem_fraction", direction = "lower", step = 0.05, summary = "Or lower --mem-fraction-static to {value}{was}." },
]
'''


def test_a_json_value_and_a_built_alternative(tmp_path: Path) -> None:
    patterns = load_test_pattern(tmp_path, "j", JSON_PATTERN)
    command = "python -m sglang.launch_server --model-path /m --mem-fraction-static 0.9"
    report = diagnose_text("KeyError: 'zz_tie_word_embeddings'\n", DiagnoseOptions(include_user_patterns=False, command=command), patterns=patterns)
    fix = report.failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None
    assert [(op.flag, op.value) for op in fix.flags] == [("--json-model-override-args", '{"tie_word_embeddings": false}')]
    assert fix.command is not None and shlex.split(fix.command)[-1] == '{"tie_word_embeddings": false}'
    unfilled, built = fix.alternatives
    assert [(op.flag, op.value) for op in unfilled.flags] == [("--tp-size", None)]
    assert built.summary == "Or lower --mem-fraction-static to 0.85 (was 0.9)."
    assert built.command == "python -m sglang.launch_server --model-path /m --mem-fraction-static 0.85"


def test_an_alternative_naming_an_unknown_builder_is_a_pattern_error() -> None:
    text = JSON_PATTERN.replace('builder = "mem_fraction"', 'builder = "no_such_builder"')
    from logsleuth.fixes.builders import BUILDERS

    with pytest.raises(PatternError, match="not a known fix builder"):
        parse_pattern(text, "x.toml", "user", known_builders=BUILDERS)


SLOTS = (
    "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m', max_running_requests={current})\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/schedule_batch.py", line 900, in alloc_req_slots\n'
    '    raise RuntimeError("alloc_req_slots runs out of memory.")\n'
    "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`.\n"
)


@pytest.mark.parametrize(("current", "expected"), [("48", "24"), ("8", "4"), ("None", "32")])
def test_fewer_running_requests_never_raises_the_launched_value(current: str, expected: str) -> None:
    report = diagnose_text(SLOTS.format(current=current), DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "sglang-serving-out-of-memory"
    assert diagnosis.fix is not None
    assert [(op.flag, op.value) for op in diagnosis.fix.flags] == [("--max-running-requests", expected)]


def test_one_running_request_is_not_lowered_further() -> None:
    fix = diagnose_text(SLOTS.format(current="1"), DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and "--max-running-requests" not in [op.flag for op in fix.flags]
    assert fix.summary.startswith("--max-running-requests was already 1")


def test_a_pool_exhausted_after_the_fraction_was_lowered_says_raise_it_back_never_lower_it() -> None:
    # stop 38's blind split (issue 28): a KV-pool exhaustion after --mem-fraction-static was lowered got no advice
    # of its class; the command's fraction is the other way out, in the direction that helps
    log = "python -m sglang.launch_server --model-path /m --mem-fraction-static 0.5\n" + SLOTS.format(current="48")
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--max-running-requests", "24")]
    said = [step for step in fix.steps if "--mem-fraction-static 0.5" in step]
    assert said and "raising it back" in said[0] and "lowering it further is not" in said[0]


def test_the_last_request_left_not_fitting_the_kv_pool_is_the_pool_not_a_cuda_oom() -> None:
    """Issue 28, stop 39 class 3: SGLang 0.5.9's retract_decode raising 'Out of memory even after retracting all other
    requests' after the launch lowered --mem-fraction-static was read as a CUDA OOM whose checks said to lower the
    fraction further.  It is the KV pool running out: the launch's fraction raised back comes first, then fewer
    running requests and the chunked prefill size."""
    crash = Path("tests/fixtures/patterns/sglang-serving-out-of-memory/positive-0.5.9-retract-decode.log").read_text(encoding="utf-8")
    log = "python -m sglang.launch_server --model-path /m --mem-fraction-static 0.4\n" + crash
    diagnosis = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and (diagnosis.pattern, diagnosis.category) == ("sglang-serving-out-of-memory", "serving-memory")
    fix = diagnosis.fix
    assert fix is not None and "--mem-fraction-static 0.4" in fix.steps[0] and "raising it back" in fix.steps[0]
    assert [(op.flag, op.value) for op in fix.flags] == [("--max-running-requests", "32")]
    assert any(op.flag == "--chunked-prefill-size" for alternative in fix.alternatives for op in alternative.flags)


def test_a_pool_exhausted_without_a_fraction_in_the_command_says_nothing_of_it() -> None:
    log = "python -m sglang.launch_server --model-path /m\n" + SLOTS.format(current="48")
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and not any("--mem-fraction-static" in step for step in fix.steps)


def test_multi_layer_eagle_draft_tokens_are_steps_plus_one() -> None:
    log = "AssertionError: multi-layer EAGLE requires speculative_num_draft_tokens == speculative_num_steps + 1, got 8 and 3\n"
    command = "python -m sglang.launch_server --model-path /m --speculative-num-steps 3 --speculative-num-draft-tokens 8"
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False, command=command)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None
    assert fix.command == "python -m sglang.launch_server --model-path /m --speculative-num-steps 3 --speculative-num-draft-tokens 4"
    assert fix.alternatives[0].command == "python -m sglang.launch_server --model-path /m --speculative-num-steps 7 --speculative-num-draft-tokens 8"


def test_a_builders_alternative_is_built_too() -> None:
    """gpu-oom-forward's fix is built (mem_fraction) and so is its fewer-requests alternative: 16 becomes 8,
    where a fixed value (64) would have raised it."""
    log = (
        "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m', mem_fraction_static=0.85, max_running_requests=16)\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 900, in run_batch\n'
        "    result = self.model_worker.forward_batch_generation(batch)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    )
    diagnosis = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "sglang-gpu-oom-forward" and diagnosis.fix is not None
    assert [(op.flag, op.value) for op in diagnosis.fix.flags] == [("--mem-fraction-static", "0.8")]
    fewer = [alt for alt in diagnosis.fix.alternatives if any(op.flag == "--max-running-requests" for op in alt.flags)]
    assert [(op.flag, op.value) for alt in fewer for op in alt.flags] == [("--max-running-requests", "8")]
    assert fewer[0].summary.endswith("to 8 (was 16).")


def test_a_fraction_the_settings_dump_shows_is_not_one_the_launch_set() -> None:
    # SGLang's server_args dump prints mem_fraction_static whether the user set it or the engine chose it: a command
    # rebuilt from that dump must not say "the launch sets --mem-fraction-static"
    crash = Path("tests/fixtures/patterns/sglang-serving-out-of-memory/positive-0.5.9-retract-decode.log").read_text(encoding="utf-8")
    dump = "[2025-06-01 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=1, mem_fraction_static=0.88)\n"
    fix = diagnose_text(dump + crash, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.command is not None and "--mem-fraction-static 0.88" in fix.command
    assert not any("the launch sets --mem-fraction-static" in step for step in fix.steps)
