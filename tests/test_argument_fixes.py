"""Fixes for rejected launch arguments, on logs the real SGLang wrote (tests/fixtures/sglang/, made by
scripts/oracle/make_fixtures.py).  Each fix here was also run through the real SGLang by
scripts/oracle/verify_fixes.py (make verify-fixes); these tests pin what logsleuth says and that advice
given without the command never leads into the engine's next check."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Diagnosis

REAL = Path(__file__).parent / "fixtures" / "sglang"
GENERATED = Path(__file__).parent / "fixtures" / "patterns"


def diagnosis_of(log: str, command: str | None = None, version: str | None = None, engine: str | None = None) -> Diagnosis:
    options = DiagnoseOptions(include_user_patterns=False, command=command, engine_version=version, engine=engine)
    report = diagnose_text(log, options)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis


def without_command(path: Path) -> str:
    """The log as a user pastes it without the `+ python -m sglang.launch_server …` line."""
    return "".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("+ "))


def ops(fix: object) -> list[tuple[str, str, str | None, str | None]]:
    return [(op.op, op.flag, op.value, op.to) for op in fix.flags]  # type: ignore[attr-defined]


# -- a flag of another release is left out, never renamed to a look-alike ---------------------------------


def test_a_flag_newer_than_the_release_is_removed_not_renamed() -> None:
    log = without_command(REAL / "0.5.9" / "retraction_priority_without_priority_scheduling.log")
    diagnosis = diagnosis_of(log)
    assert diagnosis.pattern == "sglang-unrecognized-arguments"
    assert ops(diagnosis.fix) == [("remove", "--retraction-policy", None, None)]  # not --lora-eviction-policy
    assert "SGLang 0.5.23 has it" in diagnosis.fix.summary  # type: ignore[union-attr]
    told = diagnosis_of(log, version="0.5.9")
    assert "not in your SGLang (0.5.9)" in told.fix.summary  # type: ignore[union-attr]


def test_a_flag_the_catalog_has_is_not_renamed_to_itself() -> None:
    diagnosis = diagnosis_of(without_command(REAL / "0.4.10.post2" / "priority_scheduling_with_lpm.log"))
    assert ops(diagnosis.fix) == [("remove", "--enable-priority-scheduling", None, None)]
    assert "not in your SGLang;" in diagnosis.fix.summary  # type: ignore[union-attr]  # the name kept its case


def test_a_stray_true_is_removed_even_without_the_command() -> None:
    diagnosis = diagnosis_of(without_command(REAL / "0.4.10.post2" / "store_true_given_value_space.log"))
    assert ops(diagnosis.fix) == [("remove", "true", None, None)]  # never `add --model-path true`


# -- values only the user knows --------------------------------------------------------------------------


def test_a_size_that_depends_on_the_command_needs_input_without_it() -> None:
    diagnosis = diagnosis_of(without_command(REAL / "0.5.9" / "dp_attention_tp_not_divisible.log"))
    fix = diagnosis.fix
    assert fix is not None and fix.needs_input and fix.command is None
    assert all(op.op != "remove" for op in fix.flags)  # the old reading dropped the flag: the assert again
    with_command = diagnosis_of(
        REAL.joinpath("0.5.9", "dp_attention_tp_not_divisible.log").read_text()
    ).fix
    assert with_command is not None and with_command.needs_input == () and with_command.command is not None


def test_an_abbreviation_of_several_flags_asks_which_one() -> None:
    diagnosis = diagnosis_of((GENERATED / "sglang-ambiguous-option" / "positive-typed-prefix.log").read_text())
    fix = diagnosis.fix
    assert fix is not None and fix.needs_input == ("--disable",) and fix.command is None
    assert "--disable-cuda-graph, --disable-radix-cache" in fix.summary


def test_a_split_flag_is_renamed_to_its_decode_half_keeping_its_value() -> None:
    diagnosis = diagnosis_of((REAL / "0.5.23" / "ambiguous_cuda_graph_max_bs_equals.log").read_text())
    assert ops(diagnosis.fix) == [("rename", "--cuda-graph-max-bs", "16", "--cuda-graph-max-bs-decode")]
    assert diagnosis.fix.command is not None and "--cuda-graph-max-bs-decode 16" in diagnosis.fix.command  # type: ignore[union-attr]


# -- a fix that would walk into the engine's next check ----------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (None, [("add", "--enable-priority-scheduling", None, None)]),
        ("lpm", [("add", "--enable-priority-scheduling", None, None), ("set", "--schedule-policy", "fcfs", None)]),
        ("lof", [("add", "--enable-priority-scheduling", None, None)]),
    ],
)
def test_priority_scheduling_comes_with_a_policy_it_accepts(policy: str | None, expected: list[tuple]) -> None:
    log = without_command(REAL / "0.5.23" / "retraction_priority_without_priority_scheduling.log")
    command = "python -m sglang.launch_server --model-path /m --retraction-policy priority" + (f" --schedule-policy {policy}" if policy else "")
    assert ops(diagnosis_of(log, command).fix) == expected
    unknown = diagnosis_of(log).fix  # no command: lpm could be in it
    assert ops(unknown) == [("add", "--enable-priority-scheduling", None, None), ("set", "--schedule-policy", "fcfs", None)]


def test_lora_with_radix_and_zero_per_batch_needs_both_changes_on_0_4() -> None:
    """0.4.x checks `max_loras_per_batch > 0 and (lora_paths is None or disable_radix_cache)` in one assert."""
    log = REAL.joinpath("0.4.10.post2", "lora_max_loras_per_batch_zero.log").read_text()
    no_paths = diagnosis_of(log).fix  # the logged command: --enable-lora, no --lora-paths
    assert ops(no_paths) == [("set", "--max-loras-per-batch", "8", None)]
    base = "python -m sglang.launch_server --model-path /m --lora-paths a=/tmp/a"
    both = diagnosis_of(log, base + " --max-loras-per-batch 0").fix
    assert ops(both) == [("add", "--disable-radix-cache", None, None), ("set", "--max-loras-per-batch", "8", None)]
    assert ops(diagnosis_of(log, base).fix) == [("add", "--disable-radix-cache", None, None)]
    assert len(ops(diagnosis_of(without_command(REAL / "0.4.10.post2" / "lora_max_loras_per_batch_zero.log")).fix)) == 2


def test_a_chain_keeps_the_users_steps() -> None:
    log = without_command(REAL / "0.5.23" / "rejection_sampling_with_topk4.log")
    command = "python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 --speculative-use-rejection-sampling --speculative-num-steps 5 --speculative-eagle-topk 4"
    fix = diagnosis_of(log, command).fix
    assert ops(fix)[:3] == [
        ("set", "--speculative-num-steps", "5", None),
        ("set", "--speculative-eagle-topk", "1", None),
        ("set", "--speculative-num-draft-tokens", "6", None),
    ]
    assert [op[:3] for op in ops(diagnosis_of(log).fix)] == [
        ("set", "--speculative-num-steps", "3"), ("set", "--speculative-eagle-topk", "1"), ("set", "--speculative-num-draft-tokens", "4")
    ]


def test_the_grpc_port_moves_away_from_the_http_port() -> None:
    diagnosis = diagnosis_of(without_command(REAL / "0.5.23" / "grpc_port_equals_port.log"))
    assert ops(diagnosis.fix) == [("set", "--grpc-port", "18000", None)]
    bare = "ValueError: --grpc-port (60000) must differ from --port (60000)\n"
    high = diagnosis_of(bare, version="0.5.23", engine="sglang")
    assert ops(high.fix) == [("set", "--grpc-port", "50000", None)]
    # Alone, the line is SGLang's own template (its server args' check; the raise site index holds it), so it shows
    # SGLang (ingest/engine_from_message.py).  vLLM words the clash otherwise ("--grpc-port must differ from --port
    # when HTTP uses TCP", vllm/entrypoints/common/cli_args.py): that line shows vLLM, and gets no SGLang flag fix.
    assert ops(diagnosis_of(bare, version="0.5.23").fix) == [("set", "--grpc-port", "50000", None)]
    vllm_words = "ValueError: --grpc-port must differ from --port when HTTP uses TCP\n"
    report = diagnose_text(vllm_words, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.engine == "vllm"
    assert all(not group.diagnosis or not group.diagnosis.fix or not group.diagnosis.fix.flags for group in report.failures)


# -- a bare exception line, told apart by the launch command --------------------------------------------

BARE_TYPE_ERROR = "TypeError: '>' not supported between instances of 'NoneType' and 'int'\n"


def test_a_bare_type_error_is_the_missing_top_k_only_when_the_command_says_so() -> None:
    steps_only = "python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 --speculative-num-steps 3"
    diagnosis = diagnosis_of(BARE_TYPE_ERROR, steps_only)
    assert diagnosis.pattern == "sglang-eagle-missing-topk"
    assert ops(diagnosis.fix) == [("add", "--speculative-eagle-topk", "1", None)]
    for command in (None, steps_only + " --speculative-eagle-topk 2"):
        report = diagnose_text(BARE_TYPE_ERROR, DiagnoseOptions(include_user_patterns=False, command=command))
        diagnosis = report.failures[0].diagnosis  # no pattern: at most the honest category's general guidance
        assert diagnosis is None or diagnosis.basis == "general", diagnosis


def test_a_repro_command_pasted_after_the_error_is_its_command() -> None:
    log = (
        "Startup fails with\n\n" + BARE_TYPE_ERROR + "\nRepro:\n\n"
        "python -m sglang.launch_server --model-path /m --speculative-algorithm NEXTN \\\n  --speculative-num-steps 1\n"
    )
    diagnosis = diagnosis_of(log)
    assert diagnosis.pattern == "sglang-eagle-missing-topk"
    assert diagnosis.fix is not None and diagnosis.fix.command == (
        "python -m sglang.launch_server --model-path /m --speculative-algorithm NEXTN --speculative-num-steps 1 --speculative-eagle-topk 1"
    )


def test_a_later_launch_that_started_a_server_is_not_the_earlier_failures_command() -> None:
    """A relaunch after the crash logs its server_args: its command is not the crashed launch's."""
    log = (
        BARE_TYPE_ERROR
        + "+ python -m sglang.launch_server --model-path /m --speculative-algorithm NEXTN --speculative-num-steps 1\n"
        + "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m', speculative_num_steps=1)\n"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis  # no pattern: at most the honest category's general guidance
    assert diagnosis is None or diagnosis.basis == "general", diagnosis


def test_a_summary_that_starts_with_vllm_keeps_its_spelling() -> None:
    log = "usage: vllm serve [-h] [--model MODEL]\nvllm serve: error: unrecognized arguments: --enable-reasoning\n"
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.summary.startswith("vLLM has no --enable-reasoning")


@pytest.mark.parametrize(
    "log",
    [
        "usage: vllm [-h]\nvllm: error: argument --max-model-len: invalid int value: '32k'\n",
        "usage: launch_server.py [-h]\nlaunch_server.py: error: argument --context-length: invalid int value: '32k'\n",
    ],
    ids=["vllm", "sglang"],
)
def test_a_number_with_a_magnitude_suffix_is_never_cut_to_its_digits(log: str) -> None:
    """'32k' is 32768 or 32000, never 32: the user is given both and chooses (no value is set for them)."""
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None
    assert all(op.value != "32" for op in fix.flags) and fix.flags[0].value is None
    assert "32768" in fix.summary and "32000" in fix.summary


def test_a_number_with_a_stray_character_is_still_read() -> None:
    log = "usage: vllm [-h]\nvllm: error: argument --max-model-len: invalid int value: '4096x'\n"
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.flags[0].value == "4096"


def test_expected_one_argument_gets_the_checks_for_a_flag_left_without_its_value() -> None:
    # argparse's own wording (CPython Lib/argparse.py, _match_argument), as Python 3.11 prints it:
    import argparse
    parser = argparse.ArgumentParser(prog="vllm serve", exit_on_error=False)
    parser.add_argument("--tensor-parallel-size", "-tp")
    with pytest.raises(argparse.ArgumentError) as raised:
        parser.parse_args(["--tensor-parallel-size", "--enforce-eager"])
    log = f"usage: vllm serve [-h]\nvllm serve: error: {raised.value}\n"
    diagnosis = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "invalid-flag-value" and diagnosis.fix is not None
    assert any("came last, or right before another flag" in step for step in diagnosis.fix.steps)
