"""Fixes for rejected launch arguments, on logs the real SGLang wrote (tests/fixtures/sglang/, made by
scripts/oracle/make_fixtures.py).  Each fix here was also run through the real SGLang by
scripts/oracle/verify_fixes.py (make verify-fixes); these tests pin what logsleuth says and that advice
given without the command never leads into the engine's next check."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.fixes import rejected_flags
from logsleuth.fixes.context import FixContext
from logsleuth.models import Diagnosis, LaunchInfo

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
    assert "--retraction-policy is a flag of SGLang 0.5.16 and later only" in diagnosis.fix.summary  # type: ignore[union-attr]
    told = diagnosis_of(log, version="0.5.9")
    assert "--retraction-policy is not in SGLang 0.5.9: SGLang added it in 0.5.16" in told.fix.summary  # type: ignore[union-attr]


def test_a_flag_the_catalog_has_is_not_renamed_to_itself() -> None:
    diagnosis = diagnosis_of(without_command(REAL / "0.4.10.post2" / "priority_scheduling_with_lpm.log"))
    assert ops(diagnosis.fix) == [("remove", "--enable-priority-scheduling", None, None)]
    assert diagnosis.fix.summary.startswith("--enable-priority-scheduling is a flag of SGLang 0.5.3 and later only")  # type: ignore[union-attr]


def test_a_near_spelling_is_renamed_to_the_flags_own_name_not_an_alias_a_later_release_added() -> None:
    # stop 38's blind split (issue 28): a value moved onto --speculative-draft-model, an alias SGLang added in 0.5.2,
    # for a user whose release only had --speculative-draft-model-path.  argparse's own wording.
    log = ("usage: launch_server.py [-h] --model-path MODEL_PATH\n"
           "launch_server.py: error: unrecognized arguments: --speculative-model /models/eagle-draft\n")
    command = "python -m sglang.launch_server --model-path /models/llama --speculative-model /models/eagle-draft"
    for version in (None, "0.4.10.post2", "0.5.9"):
        diagnosis = diagnosis_of(log, command=command, version=version, engine="sglang")
        assert ops(diagnosis.fix) == [("rename", "--speculative-model", "/models/eagle-draft", "--speculative-draft-model-path")], version


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
    log = "usage: vllm serve [-h] [--model MODEL]\nvllm serve: error: unrecognized arguments: --npu-graph-x\n"
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.summary.startswith("vLLM has no --npu-graph-x")


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


# -- what the releases say of a rejected flag (fixes/rejected_flags.py) --------------------------------------------------




# the OpenAI server module vllm/vllm-openai images run (vllm/entrypoints/openai/api_server.py, 0.11.0): a positional
# model_tag, the engine's flags
API_SERVER = ('parser.add_argument("model_tag", nargs="?")\n'
              'parser.add_argument("--model")\nparser.add_argument("--dtype", choices=["auto", "half", "bfloat16"])\n')


def _unrecognized(prog: str, argv: list[str], setup: str, version: str | None = None) -> Diagnosis:
    import argparse
    parser = argparse.ArgumentParser(prog=prog, exit_on_error=False)
    exec(setup, {"parser": parser})  # noqa: S102 - the test's own parser definition
    _, extras = parser.parse_known_args(argv)
    assert extras, "argparse took every word: not an unrecognized-arguments case"
    log = f"usage: {prog} [-h]\n{prog}: error: unrecognized arguments: {' '.join(extras)}\n"
    return diagnosis_of(log, version=version)


def test_a_flag_the_release_has_is_not_left_out_but_split_from_its_value() -> None:
    """vllm-project/vllm#22072, #8273: `--dtype auto` as one item of a list-form command is one word argparse cannot
    place; vLLM has --dtype in every release, so the flag stays and is written as two words or --dtype=auto."""
    diagnosis = _unrecognized("api_server.py", ["serve", "HuggingFaceTB/SmolLM3-3B", "--dtype auto"], API_SERVER)
    assert diagnosis.engine == "vllm" and diagnosis.fix is not None
    assert ("remove", "--dtype", None, None) not in ops(diagnosis.fix)
    assert "--dtype=auto" in diagnosis.fix.summary and "every vLLM release from 0.6.0" in diagnosis.fix.summary
    # the catalogs start at 0.6.0: an unknown release may be older and lack the flag (a fresh split's 0.3-era paste)
    assert "no catalog of vLLM releases before 0.6.0" in diagnosis.fix.summary
    told = _unrecognized("api_server.py", ["serve", "m/x", "--dtype auto"], API_SERVER, version="0.11.0")
    assert "vLLM 0.11.0 has --dtype" in told.fix.summary  # type: ignore[union-attr]


def test_a_second_model_word_on_vllm_is_given_with_model_never_model_path() -> None:
    """vllm-project/vllm#27389: `serve /root/models/Qwen3-8B` after an image that runs the API server: 'serve' is
    taken as the model, the path is left over."""
    diagnosis = _unrecognized("api_server.py", ["serve", "/root/models/Qwen3-8B"], API_SERVER)
    assert diagnosis.fix is not None and "--model-path" not in diagnosis.fix.summary
    assert ops(diagnosis.fix) == [("remove", "/root/models/Qwen3-8B", None, None), ("add", "--model", "/root/models/Qwen3-8B", None)]
    assert "Leave out `serve`" in diagnosis.fix.summary


def test_serve_given_to_a_vllm_program_without_subcommands_is_left_out() -> None:
    older = 'parser.add_argument("--model")\n'  # an api_server with no positional model (before 0.8)
    diagnosis = _unrecognized("api_server.py", ["serve", "/models/llama"], older)
    assert diagnosis.engine == "vllm" and diagnosis.fix is not None
    assert ops(diagnosis.fix) == [("remove", "serve", None, None), ("remove", "/models/llama", None, None),
                                  ("add", "--model", "/models/llama", None)]


def test_a_stray_word_on_sglang_still_points_at_model_path() -> None:
    diagnosis = _unrecognized("launch_server.py", ["--model-path", "/m", "/n"], 'parser.add_argument("--model-path")\n')
    assert diagnosis.engine == "sglang" and "--model-path" in diagnosis.fix.summary  # type: ignore[union-attr]


def test_a_flag_of_older_vllm_releases_is_said_with_its_range_never_as_no_such_flag() -> None:
    """--enable-reasoning was vLLM's from 0.7.1 to 0.9.2 (static catalogs): with the release unknown, the range."""
    diagnosis = _unrecognized("vllm serve", ["--enable-reasoning"], 'parser.add_argument("--model")\n')
    assert diagnosis.fix is not None and "vLLM has no" not in diagnosis.fix.summary
    assert "--enable-reasoning is a flag of vLLM 0.7.1 to 0.9.2 only" in diagnosis.fix.summary
    told = _unrecognized("vllm serve", ["--enable-reasoning"], 'parser.add_argument("--model")\n', version="0.11.0")
    assert "vLLM 0.9.2 was the last release with it" in told.fix.summary  # type: ignore[union-attr]
    assert ops(told.fix) == [("remove", "--enable-reasoning", None, None)]


def test_a_removed_vllm_flag_is_never_renamed_to_a_look_alike() -> None:
    """--speculative-model (vLLM 0.6 to 0.8.2) is not --spec-model (0.22): with the release unknown, its range."""
    diagnosis = _unrecognized("vllm serve", ["--speculative-model", "/d"], 'parser.add_argument("--model")\n')
    assert diagnosis.fix is not None and "--spec-model" not in diagnosis.fix.summary
    assert "--speculative-model is a flag of vLLM 0.6.0 to 0.8.2 only" in diagnosis.fix.summary


@pytest.mark.parametrize(("prog", "flag", "other"), [("vllm serve", "--npu-graph-x", "SGLang"), ("launch_server.py", "--enable_metricz", "vLLM")])
def test_the_root_cause_of_an_unknown_flag_names_no_other_engine(prog: str, flag: str, other: str) -> None:
    """Issue 28: a flag is said to be the other engine's only on positive evidence; a lone unknown flag is not."""
    diagnosis = _unrecognized(prog, ["--model-path", "/m", flag] if prog.startswith("launch") else [flag],
                              'parser.add_argument("--model-path")\n')
    assert other not in diagnosis.root_cause and other not in diagnosis.fix.summary  # type: ignore[union-attr]


def test_a_server_flag_another_program_rejected_is_left_out_for_that_program() -> None:
    """sgl-project/sglang#34226: `sglang serve` of a diffusion model took --num-gpus and --ulysses-degree (no SGLang
    server release has them) and rejected --served-model-name (every one has it): another parser, which lacks it."""
    log = ("$ sglang serve --model-path /models/img --num-gpus 8 --ulysses-degree 8 --port 30010 --served-model-name img\n"
           "error: unrecognized arguments: --served-model-name img\n")
    diagnosis = diagnosis_of(log)
    assert ops(diagnosis.fix) == [("remove", "--served-model-name", None, None)]
    assert "another program" in diagnosis.fix.summary and "--num-gpus" in diagnosis.fix.summary  # type: ignore[union-attr]


def test_a_choice_of_a_later_release_is_said_with_its_releases() -> None:
    """'fa3' is not among SGLang 0.4.3's attention backends; SGLang's static catalogs list it from 0.4.4.post2 on."""
    import argparse
    parser = argparse.ArgumentParser(prog="launch_server.py", exit_on_error=False)
    parser.add_argument("--attention-backend", choices=["flashinfer", "triton", "torch_native"])  # 0.4.3's
    with pytest.raises(argparse.ArgumentError) as raised:
        parser.parse_args(["--attention-backend", "fa3"])
    log = f"usage: launch_server.py [-h]\nlaunch_server.py: error: {raised.value}\n"
    diagnosis = diagnosis_of(log, version="0.4.3")
    assert diagnosis.fix is not None and diagnosis.fix.needs_input == ("--attention-backend",)
    assert ("'fa3' is a choice of --attention-backend in SGLang 0.4.4.post2 and later; the release that refused it "
            "(SGLang 0.4.3) is older: upgrade to 0.4.4.post2 or later") in diagnosis.fix.summary
    newer = diagnosis_of(log, version="0.5.9")  # a release that lists it: the catalogs do not explain the rejection
    assert "is a choice of" not in newer.fix.summary  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("command", "prog", "argv", "setup"),
    [
        ("vllm serve /data/My Models/mistral-7b --tensor-parallel-size 2", "vllm serve",
         ["/data/My", "Models/mistral-7b", "--tensor-parallel-size", "2"],
         'parser.add_argument("model_tag")\nparser.add_argument("--tensor-parallel-size")\n'),
        ("python -m sglang.launch_server --model-path /data/My Models/qwen --port 30000", "launch_server.py",
         ["--model-path", "/data/My", "Models/qwen", "--port", "30000"],
         'parser.add_argument("--model-path")\nparser.add_argument("--port")\n'),
    ],
    ids=["vllm", "sglang"],
)
def test_an_unquoted_path_with_a_space_is_said_and_no_command_is_made_up(command: str, prog: str, argv: list[str],
                                                                         setup: str) -> None:
    """The held-out split's harm class: the shell split a path with a space, argparse took its first half and
    rejected the rest; the fix removed the rest and gave it to --model.  The two words are one path: quote it."""
    import argparse
    parser = argparse.ArgumentParser(prog=prog, exit_on_error=False)
    exec(setup, {"parser": parser})  # noqa: S102 - the test's own parser definition
    _, extras = parser.parse_known_args(argv)
    log = f"$ {command}\nusage: {prog} [-h]\n{prog}: error: unrecognized arguments: {' '.join(extras)}\n"
    diagnosis = diagnosis_of(log)
    assert diagnosis.fix is not None
    assert diagnosis.fix.flags == () and diagnosis.fix.command is None  # nothing removed, no command made up
    whole = f"{argv[argv.index(extras[0]) - 1]} {extras[0]}"
    assert f"'{whole}' looks like one path with a space in it" in diagnosis.fix.summary
    assert "--model " not in diagnosis.fix.summary and "--model-path" not in diagnosis.fix.summary


@pytest.mark.parametrize("prog", ["vllm serve", "launch_server.py"])
def test_a_left_over_path_end_without_the_command_changes_nothing(prog: str) -> None:
    """The same split path pasted without its command: `Models/mistral-7b` may be the end of a path or a hub id given
    twice; either change could point the server at half a path, so both readings are said and nothing is changed."""
    log = f"usage: {prog} [-h]\n{prog}: error: unrecognized arguments: Models/mistral-7b\n"
    diagnosis = diagnosis_of(log)
    assert diagnosis.fix is not None and diagnosis.fix.flags == () and diagnosis.fix.command is None
    assert "quote the whole path" in diagnosis.fix.summary


@pytest.mark.parametrize(("guessed", "outcome"), [("0.5.4", "some"), ("0.8.5", "known"), (None, "known")])
def test_a_release_guessed_older_than_every_catalog_may_lack_the_flag(guessed: str | None, outcome: str) -> None:
    """--dtype is in every vLLM release logsleuth has a catalog of (0.6.0 and later); a release the log's frames date
    earlier is not known to have it: then the flag is left out, or the user upgrades, never rewritten as --dtype=auto."""
    launch = LaunchInfo(engine="vllm", engine_version=guessed, engine_version_source="inferred" if guessed else None)
    ctx = FixContext(failure=None, captures={}, launch=launch, command=None, catalog=None)  # type: ignore[arg-type]  # no command: the failure is not read
    said = rejected_flags.verdict("--dtype", "auto", ctx)
    assert said is not None and said.outcome == outcome
    assert ("looks older (0.5.4" in said.sentence) == (outcome == "some")


# -- a flag no release has, with a plugin of the engine loaded (stop 48) ------------------------------------
# vLLM's platform plugins (vllm-ascend registers 'ascend', vllm/platforms/__init__.py logs "Platform plugin %s is
# activated") and general plugins add their own arguments to vLLM's parser when they load: a flag no vLLM release has
# may be the plugin's, refused because the plugin's release does not match the installed vLLM.  Removing it would
# drop a setting the user's plugin needs: the fix says to check both versions and changes nothing.


@pytest.mark.parametrize("plugin_line", [
    "INFO 05-28 10:12:01 [__init__.py:217] Platform plugin ascend is activated",
    "vllm-ascend               0.9.1",
    # vllm/plugins/__init__.py load_plugins_by_group: the entry points it found, one a line, at INFO
    "INFO 05-28 10:12:00 [__init__.py:36] Available plugins for group vllm.platform_plugins:\n"
    "INFO 05-28 10:12:00 [__init__.py:38] - ascend -> vllm_ascend:register",
])
def test_a_flag_no_release_has_is_not_removed_when_a_plugin_is_shown(plugin_line: str) -> None:
    log = (f"{plugin_line}\nusage: vllm serve [-h] [--model MODEL]\n"
           "vllm serve: error: unrecognized arguments: --npu-graph-x\n")
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and "vllm-ascend" in fix.summary and "check both versions" in fix.summary
    assert ("remove", "--npu-graph-x") not in [(op.op, op.flag) for op in fix.flags]


def test_a_flag_no_release_has_is_still_removed_without_a_plugin() -> None:
    """Not --omni: that flag is vLLM-Omni's own (facts/engine_drivers.toml), kept whatever else the log shows
    (tests/test_plugins_and_wrappers.py)."""
    log = "usage: vllm serve [-h] [--model MODEL]\nvllm serve: error: unrecognized arguments: --npu-graph-x\n"
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and ("remove", "--npu-graph-x") in [(op.op, op.flag) for op in fix.flags]


def test_a_vllm_plugin_listed_beside_sglang_does_not_keep_an_sglang_flag() -> None:
    """The table's plugins are vLLM's: SGLang's parser never had their flags (review L1 of stop 48)."""
    log = ("vllm-ascend               0.9.1\nusage: launch_server.py [-h] --model-path MODEL_PATH\n"
           "launch_server.py: error: unrecognized arguments: --npu-graph-x\n")
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and "vllm-ascend" not in fix.summary


def test_a_plugin_vllm_lists_that_the_table_lacks_is_named_by_its_entry_point() -> None:
    """vLLM lists every plugin entry point it found: one the table does not know is still a plugin (stop 48)."""
    log = ("INFO 05-28 10:12:00 [__init__.py:36] Available plugins for group vllm.platform_plugins:\n"
           "INFO 05-28 10:12:00 [__init__.py:38] - acme -> acme_vllm.platform:register\n"
           "usage: vllm serve [-h] [--model MODEL]\nvllm serve: error: unrecognized arguments: --npu-graph-x\n")
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and "the plugin 'acme' (acme_vllm)" in fix.summary
    assert ("remove", "--npu-graph-x") not in [(op.op, op.flag) for op in fix.flags]


def test_vllms_own_entry_points_are_no_plugin() -> None:
    """Review M2 of stop 48: vLLM lists its own default entry points (`vllm.…`) with the plugins: none is a plugin."""
    log = ("INFO 05-28 10:12:00 [__init__.py:36] Available plugins for group vllm.general_plugins:\n"
           "INFO 05-28 10:12:00 [__init__.py:38] - lora_filesystem_resolver -> vllm.plugins.lora_resolvers.filesystem_resolver:register_filesystem_resolver\n"
           "usage: vllm serve [-h] [--model MODEL]\nvllm serve: error: unrecognized arguments: --npu-graph-x\n")
    fix = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and ("remove", "--npu-graph-x") in [(op.op, op.flag) for op in fix.flags]


# -- a JSON value the shell split (stop 49, not blind: split 13's "before" grading) -------------------------------

@pytest.mark.parametrize(
    ("command", "prog"),
    [
        ('vllm serve /models/q --speculative-config {"method": "eagle3", "num_speculative_tokens": 3}', "vllm serve"),
        ("python -m sglang.launch_server --model-path /models/q --json-model-override-args "
         '{"rope_scaling": {"type": "yarn", "factor": 4.0}}', "launch_server.py"),
    ],
    ids=["vllm", "sglang"],
)
def test_the_words_of_an_unquoted_json_value_are_not_removed(command: str, prog: str) -> None:
    """The shell splits an unquoted JSON value at its spaces (and takes its double quotes); argparse takes the first
    word as the value and refuses the rest.  Removing those words (or the flag) is wrong: the value wants quoting."""
    import argparse
    import shlex
    parser = argparse.ArgumentParser(prog=prog, exit_on_error=False)
    for flag in ("--model-path", "--speculative-config", "--json-model-override-args"):
        parser.add_argument(flag)
    parser.add_argument("model_tag", nargs="?")
    words = shlex.split(command)[2 if prog == "vllm serve" else 3:]
    _, extras = parser.parse_known_args(words)
    assert len(extras) >= 2
    log = f"$ {command}\nusage: {prog} [-h]\n{prog}: error: unrecognized arguments: {' '.join(extras)}\n"
    fix = diagnosis_of(log).fix
    assert fix is not None and fix.flags == () and fix.command is None
    flag = "--speculative-config" if prog == "vllm serve" else "--json-model-override-args"
    assert f"pieces of the value of {flag}" in fix.summary and "remove nothing" in fix.summary


@pytest.mark.parametrize(
    ("log", "said"),
    [
        ("$ python -m sglang.launch_server --model-path /models/q --json-model-overide-args "
         "'{\"rope_scaling\": {\"type\": \"yarn\"}}'\nusage: launch_server.py [-h]\nlaunch_server.py: error: "
         "unrecognized arguments: --json-model-overide-args {\"rope_scaling\": {\"type\": \"yarn\"}}\n",
         "--json-model-override-args"),
    ],
)
def test_a_quoted_json_value_of_a_refused_flag_gets_the_flag_s_own_reading(log: str, said: str) -> None:
    """argparse prints a quoted JSON value with its spaces, so a refused flag's value looks split too: the flag itself
    is what was refused (a misspelling here), and that reading must not be lost (review 1 H1 of stop 49)."""
    fix = diagnosis_of(log).fix
    assert fix is not None and "pieces of the value" not in fix.summary
    assert said in fix.summary
    # the corrected command keeps the whole JSON value (review 2 of stop 49: it was cut to its first piece)
    assert fix.command is not None and fix.command.endswith(f"{said} '{{\"rope_scaling\": {{\"type\": \"yarn\"}}}}'")


# -- a refused flag whose JSON value holds ` -- ` in a string; the release an image tag names (issue 28 stop 50) -------
# Split 13's harmful report: `vllm/vllm-openai:v0.20.1` with --reasoning-config '{"…": " -- Reasoning preempted. …"}'.
# vLLM 0.20.1's vllm/engine/arg_utils.py registers --reasoning-config (the static catalog: 0.19.0 and later; the real
# 0.33.0 parser takes this very value), yet argparse listed the flag and its value as unrecognized: the vLLM that ran
# lacked the flag.  The report read the value's pieces as stray arguments (removing `--` and `preempted.`) and called
# the tag's release one that may be "outside that range".
_REASONING_VALUE = '{"reasoning_start_str":"<think>","reasoning_end_str":" -- Reasoning preempted. Answer now.</think>"}'


def _refused_by_a_parser_without(flag: str, image: str) -> str:
    """The log of `docker run IMAGE MODEL … FLAG 'JSON'` refused by a real argparse parser that lacks FLAG."""
    import argparse
    import shlex
    command = f"docker run --ipc host {image} Qwen/Qwen3-8B --reasoning-parser qwen3 {flag} '{_REASONING_VALUE}'"
    parser = argparse.ArgumentParser(prog="vllm serve", exit_on_error=False)
    parser.add_argument("model_tag", nargs="?")
    parser.add_argument("--reasoning-parser")
    _, extras = parser.parse_known_args(shlex.split(command)[5:])
    assert extras == [flag, _REASONING_VALUE]
    return f"$ {command}\nusage: vllm [-h] [-v] {{chat,complete,serve}} ...\nvllm: error: unrecognized arguments: {' '.join(extras)}\n"


def test_the_pieces_of_a_refused_flags_json_value_are_never_stray_arguments() -> None:
    fix = diagnosis_of(_refused_by_a_parser_without("--reasoning-config", "vllm/vllm-openai:v0.20.1")).fix
    assert fix is not None
    assert "stray argument" not in fix.summary and "has no --;" not in fix.summary and "left over" not in fix.summary
    assert [op for op in ops(fix) if op[0] == "remove"] == [("remove", "--reasoning-config", None, None)]


def test_an_image_tags_release_that_has_the_refused_flag_is_not_the_release_that_ran() -> None:
    diagnosis = diagnosis_of(_refused_by_a_parser_without("--reasoning-config", "vllm/vllm-openai:v0.20.1"))
    assert diagnosis.engine_version == "0.20.1"
    assert diagnosis.fix is not None
    summary = diagnosis.fix.summary
    assert "the release the engine's image tag names" in summary and "not a release with it" in summary
    assert "outside that range" not in summary and "0.19.0 or later" in summary


# Review 3 of stop 50 (H1): a flag later releases removed.  vLLM's catalogs hold --enable-reasoning from 0.7.1 to
# 0.9.2 only; under `vllm/vllm-openai:v0.8.5` its refusal was answered "run vLLM 0.7.1 or later", and 0.10 and later
# refuse it again.  The releases said are the catalogs' own range.
def _refused_flag_under(image: str, flag: str) -> str:
    """`docker run IMAGE MODEL FLAG` refused by a real argparse parser that lacks FLAG."""
    import argparse
    import shlex
    command = f"docker run --gpus all --ipc host {image} Qwen/Qwen3-8B {flag}"
    parser = argparse.ArgumentParser(prog="vllm serve")
    parser.add_argument("model_tag", nargs="?")
    _, extras = parser.parse_known_args(shlex.split(command)[7:])
    assert extras == [flag]
    return f"$ {command}\nusage: vllm [-h] [-v] {{chat,complete,serve}} ...\nvllm: error: unrecognized arguments: {' '.join(extras)}\n"


def test_an_image_tags_release_is_never_told_to_upgrade_past_the_flags_removal() -> None:
    having = rejected_flags.releases_having("vllm", "--enable-reasoning")
    assert having and having[0] == "0.7.1" and having[-1] == "0.9.2"  # the catalogs this test stands on
    diagnosis = diagnosis_of(_refused_flag_under("vllm/vllm-openai:v0.8.5", "--enable-reasoning"))
    assert diagnosis.fix is not None
    summary = diagnosis.fix.summary
    assert "the release the engine's image tag names" in summary
    assert "0.7.1 and later" not in summary and "0.7.1 or later" not in summary, summary
    assert "from 0.7.1 to 0.9.2" in summary


# Review 3 of stop 50 (M4): a release read from an argparse choices list replaces the image tag's: the header must not
# say the tag named it (`vllm/vllm-openai:v0.8.4`, a --dtype refusal whose choices are those of a later release).
def test_a_release_from_the_choices_list_is_not_said_to_be_the_image_tags() -> None:
    import argparse
    parser = argparse.ArgumentParser(prog="vllm serve", exit_on_error=False)
    parser.add_argument("--dtype", choices=["auto", "half", "float16", "bfloat16", "float", "float32"])
    try:
        parser.parse_args(["--dtype", "fp8"])
        raise AssertionError("argparse took the value")
    except argparse.ArgumentError as error:
        refusal = f"vllm serve: error: {error}\n"
    log = ("$ docker run --gpus all --ipc host vllm/vllm-openai:v0.8.4 Qwen/Qwen3-8B --dtype fp8\n"
           "usage: vllm serve [model_tag] [options]\n" + refusal)
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.engine_version not in (None, "0.8.4"), report.launch.engine_version
    from logsleuth.render import render
    from logsleuth.render.options import RenderOptions
    header = " ".join(render(report, RenderOptions(width=200)).split())
    assert f"vllm {report.launch.engine_version} (read from the engine's image tag" not in header
    assert f"vllm {report.launch.engine_version} (guessed from" in header


# Review 3 of stop 50 (L3): the command shows that what parsed it was not the engine's server (it took --num-gpus,
# which no vLLM server release has: the other-program evidence of sgl-project/sglang#34226): that program lacks the
# flag, whatever release the image tag names.
def test_an_image_tags_release_gives_way_to_another_programs_parser() -> None:
    log = _refused_flag_under("vllm/vllm-openai:v0.20.1", "--reasoning-config")
    command = "vllm serve Qwen/Qwen3-8B --num-gpus 2 --reasoning-config x"
    assert not rejected_flags.releases_having("vllm", "--num-gpus")
    fix = diagnosis_of(log, command=command).fix
    assert fix is not None and "another program" in fix.summary and "not a release with it" not in fix.summary


# -- a flag of a range of releases closed at both ends, the release that ran unknown (stop 57) -------------------------
# vLLM's catalogs hold --task from 0.6.4 to 0.12.0.  An image older than 0.6.4 refuses it too, and there the user's
# way to keep the feature is a release of that range, not only leaving the flag out; the verdict said only "leave it
# out if your release is outside that range".  Found on a spent held-out split after it was scored (its figures do
# not count this); the class is any flag vLLM or SGLang added and later removed, refused with no version in the log.
def _refused_without_version(flag: str, value: str) -> str:
    """The log of `vllm serve MODEL FLAG VALUE` refused by a real argparse parser that lacks FLAG; no version shown."""
    import argparse
    import shlex
    command = f"vllm serve intfloat/e5-mistral-7b-instruct {flag} {value}"
    parser = argparse.ArgumentParser(prog="vllm serve", exit_on_error=False)
    parser.add_argument("model_tag", nargs="?")
    _, extras = parser.parse_known_args(shlex.split(command)[2:])
    assert extras == [flag, value]
    return f"$ {command}\nusage: vllm [-h] [-v] {{chat,complete,serve}} ...\nvllm: error: unrecognized arguments: {' '.join(extras)}\n"


def test_a_flag_of_a_closed_range_names_the_range_to_keep_it_when_the_release_is_unknown() -> None:
    from logsleuth.fixes import static_catalogs
    having = rejected_flags.releases_having("vllm", "--task")
    every = static_catalogs.releases("vllm")
    assert having and having[0] != every[0] and having[-1] != every[-1]  # the class this test is about
    diagnosis = diagnosis_of(_refused_without_version("--task", "embedding"))
    assert diagnosis.engine_version in (None, "")
    assert diagnosis.fix is not None
    summary = " ".join(diagnosis.fix.summary.split())
    assert f"older than {having[0]}" in summary and f"run a release from {having[0]} to {having[-1]}" in summary
    assert f"newer than {having[-1]}, leave it out" in summary
    assert [op for op in ops(diagnosis.fix) if op[0] == "remove"] == [("remove", "--task", None, None)]
