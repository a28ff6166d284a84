"""A launch command written for the other engine, translated flag by flag (logsleuth/fixes/cross_engine.py).

Fast tests use the shipped flag catalogs (dumped from the real parsers) and the table; the `oracle` tests at the
end run the real engines: the command with the other engine's flags fails there, logsleuth's translation passes
(`pytest -m oracle tests/test_cross_engine.py`; a version whose venv is absent is skipped)."""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.command_line import CommandLine
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import cross_engine
from logsleuth.models import Diagnosis, Fix
from logsleuth.redact import redact_report
from tests.helpers import load_oracle

REPO = Path(__file__).resolve().parents[1]
SG = "python -m sglang.launch_server"
# vLLM's flags older than the shipped vLLM catalogs (0.11.2): --num-speculative-tokens went with vLLM 0.8's
# --speculative-config; --max-seq-len-to-capture before 0.11.
OLDER_VLLM = {"--num-speculative-tokens", "--max-seq-len-to-capture"}
SGLANG_VERSIONS = ("0.4.10.post2", "0.5.9", "0.5.23")
VLLM_VERSIONS = ("0.11.2", "0.33.0")
# What the real vLLM 0.33.0 and 0.11.2 print for unknown flags (their top-level parser reports them).
VLLM_USAGE = "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\n"


def diagnosis_of(log: str, command: str | None = None, version: str | None = None) -> Diagnosis:
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False, command=command, engine_version=version))
    assert report.failures, log
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis


def sglang_log(command: str, unknown: str) -> str:
    return f"+ {command}\nusage: launch_server.py [-h] --model-path MODEL_PATH\nlaunch_server.py: error: unrecognized arguments: {unknown}\n"


def vllm_log(command: str, unknown: str) -> str:
    return f"+ {command}\n{VLLM_USAGE}vllm: error: unrecognized arguments: {unknown}\n"


def flag_names(command: str) -> list[str]:
    return [name for name, _ in CommandLine.parse(command).options]


def known(engine: str, flag: str) -> bool:
    return any(
        cross_engine.find(flag, engine, catalogs.load(engine, version)) is not None
        for found_engine, version in catalogs.available()
        if found_engine == engine
    )


# -- the table and the patterns agree with the catalogs ------------------------------------------------------


def test_every_name_of_the_table_is_a_flag_of_its_engine() -> None:
    for row in cross_engine.table():
        for engine in cross_engine.ENGINES:
            for name in row.names[engine]:
                assert known(engine, name) or name in OLDER_VLLM, f"{engine} has no {name} ({row})"


def test_a_same_row_names_a_flag_in_every_release_of_the_engine_it_translates_to() -> None:
    """A rename that only an older release could take would print a command the newest one refuses."""
    for row in cross_engine.table():
        if row.kind != "same":
            continue
        for target in cross_engine.ENGINES:
            if not row.applies(target):
                continue
            newest = catalogs.load(target, None)
            assert cross_engine._written(row.names[target], target, newest) is not None, (target, row.names[target])


def _pattern_flags(path: str) -> tuple[list[str], list[str]]:
    data = tomllib.loads((REPO / path).read_text(encoding="utf-8"))
    lists = [re.search(r"\(\?<!\[\\w-\]\)\(\?:([^)]*)\)", rule.get("usage") or rule.get("command") or "") for rule in data["match"]]
    alternations = {m.group(1) for m in lists if m}
    assert len(alternations) == 1, f"{path}: every rule lists the same flags"
    return alternations.pop().split("|"), [str(rule) for rule in data["match"]]


@pytest.mark.parametrize(
    ("path", "foreign", "native"),
    [("patterns/sglang/vllm-command-for-sglang.toml", "vllm", "sglang"), ("patterns/vllm/sglang-command-for-vllm.toml", "sglang", "vllm")],
)
def test_a_pattern_lists_only_the_other_engines_own_flags(path: str, foreign: str, native: str) -> None:
    names, _rules = _pattern_flags(path)
    for name in names:
        assert known(foreign, name) or name in OLDER_VLLM, f"{name} is not {foreign}'s"
        assert not known(native, name), f"{name} is {native}'s own flag too: listing it would take {native}'s commands"


def test_the_table_ships_with_the_package() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "cross_engine.toml" in pyproject["tool"]["setuptools"]["package-data"]["logsleuth.fixes"]


def test_a_malformed_row_is_an_error() -> None:
    with pytest.raises(ValueError, match="needs the flag of both engines"):
        cross_engine.parse_table('[[flag]]\nvllm = "--x"\nkind = "same"\n')
    with pytest.raises(ValueError, match="unknown keys"):
        cross_engine.parse_table('[[flag]]\nvllm = "--x"\nsglang = "--y"\nkind = "same"\nwhy_not = 1\n')


# -- values ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "number"),
    [("8192", 8192), ("32k", 32000), ("32K", 32768), ("25.6k", 25600), ("1m", 1_000_000), ("1.5K", None), ("auto", None), ("-1", None), ("8x", None)],
)
def test_vllms_human_readable_lengths(text: str, number: int | None) -> None:
    assert cross_engine.human_int(text) == number


# -- vLLM flags in an SGLang launch ----------------------------------------------------------------------------

TRANSLATIONS = [
    # (vLLM-style flags given to SGLang, the SGLang version, the corrected command's flags)
    ("--model-path /m --tensor-parallel-size 8 --max-model-len 8192 --gpu-memory-utilization 0.9",
     "0.5.9", "--model-path /m --tensor-parallel-size 8 --context-length 8192"),
    ("--model /m -tp 2 --max-model-len 32k --enforce-eager --seed 7",
     "0.5.23", "--model /m --tp-size 2 --context-length 32000 --disable-cuda-graph --random-seed 7"),
    ("--model-path /m --max_model_len 4K --max-num-seqs 64 --enable-prefix-caching --kv-cache-dtype fp8",
     "0.4.10.post2", "--model-path /m --context-length 4096 --max-running-requests 64 --kv-cache-dtype fp8_e4m3"),
    ("--model-path /m --no-enable-prefix-caching --max-loras 4 --swap-space 8 --block-size 32",
     "0.5.9", "--model-path /m --disable-radix-cache --max-loras-per-batch 4 --page-size 32"),
    ("--model-path /m --no-enforce-eager --no-trust-remote-code --max-model-len auto --disable-log-requests",
     "0.5.23", "--model-path /m"),
]


@pytest.mark.parametrize(("flags", "version", "expected"), TRANSLATIONS)
def test_vllm_flags_are_translated_for_sglang(flags: str, version: str, expected: str) -> None:
    command = f"{SG} {flags}"
    translation = cross_engine.translate(CommandLine.parse(command), "sglang", catalogs.load("sglang", version))
    assert CommandLine.parse(command).apply(translation.ops()).render() == f"{SG} {expected}"
    written = set(flag_names(f"{SG} {expected}"))
    for item in translation.flags:  # every flag has an outcome, and the outcome is what the command shows
        assert (item.outcome == "left-out") == (item.flag not in written and item.target not in written), item


def test_the_fix_lists_every_flag_it_leaves_out_by_name() -> None:
    command = f"{SG} --model-path /m --max-model-len 8192 --gpu-memory-utilization 0.9 --swap-space 4 --distributed-executor-backend ray --not-a-flag 1"
    fix = diagnosis_of(sglang_log(command, "--max-model-len 8192 --gpu-memory-utilization 0.9 --swap-space 4"), version="0.5.9").fix
    assert fix is not None and fix.command is not None
    for left_out in ("--gpu-memory-utilization", "--swap-space", "--distributed-executor-backend", "--not-a-flag"):
        assert left_out in fix.summary and left_out not in flag_names(fix.command)
    assert "--mem-fraction-static" in fix.summary and "not the same setting" in fix.summary
    assert "SGLang keeps no CPU swap space" in fix.summary
    assert "neither SGLang nor vLLM has --not-a-flag" in fix.summary


def test_a_value_measured_differently_is_left_to_the_user() -> None:
    """vLLM's --gpu-memory-utilization is not SGLang's --mem-fraction-static: the command leaves it to SGLang,
    and the alternative that keeps a limit needs the user's number (no command with a made-up one)."""
    command = f"{SG} --model-path /m --max-model-len 8192 --gpu-memory-utilization 0.9"
    diagnosis = diagnosis_of(sglang_log(command, "--max-model-len 8192 --gpu-memory-utilization 0.9"))
    assert diagnosis.pattern == "sglang-vllm-command-for-sglang"
    fix = diagnosis.fix
    assert fix is not None and fix.command == f"{SG} --model-path /m --context-length 8192"
    (keep_limit,) = fix.alternatives
    assert keep_limit.needs_input == ("--mem-fraction-static",) and keep_limit.command is None
    assert ("add", "--mem-fraction-static", None) in [(op.op, op.flag, op.value) for op in keep_limit.flags]


def test_an_sglang_error_that_names_no_vllm_flag_is_recognised_by_the_command() -> None:
    """argparse stops at the first problem: an invalid choice, before the unknown flags."""
    command = f"{SG} --model-path /m --max-model-len 8192 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8"
    log = f"+ {command}\nsglang serve: error: argument --kv-cache-dtype: invalid choice: 'fp8' (choose from 'auto', 'fp8_e5m2', 'fp8_e4m3')\n"
    diagnosis = diagnosis_of(log, version="0.5.23")
    assert diagnosis.pattern == "sglang-vllm-command-for-sglang"
    assert diagnosis.fix is not None and diagnosis.fix.command == f"{SG} --model-path /m --context-length 8192 --kv-cache-dtype fp8_e4m3"


def test_a_positional_model_becomes_the_model_flag() -> None:
    command = f"{SG} Qwen/Qwen3-8B --max-model-len 8192 --enforce-eager"
    log = f"+ {command}\nlaunch_server.py: error: the following arguments are required: --model-path/--model\n"
    fix = diagnosis_of(log, version="0.5.9").fix
    assert fix is not None and fix.command == f"{SG} --context-length 8192 --disable-cuda-graph --model-path Qwen/Qwen3-8B"


def test_one_vllm_flag_is_the_unknown_flag_pattern_with_the_same_translation() -> None:
    command = f"{SG} --model-path /m --tp-size 2 --gpu-memory-utilization 0.9"
    diagnosis = diagnosis_of(sglang_log(command, "--gpu-memory-utilization 0.9"))
    assert diagnosis.pattern == "sglang-unrecognized-arguments"
    fix = diagnosis.fix
    # One setting carried over: keeping it, with the user's own number for SGLang, comes first.
    assert fix is not None and fix.needs_input == ("--mem-fraction-static",) and fix.command is None
    assert [(op.op, op.flag) for op in fix.flags] == [("remove", "--gpu-memory-utilization"), ("add", "--mem-fraction-static")]
    assert "only the nearest setting" in fix.summary
    assert fix.alternatives and fix.alternatives[0].command == f"{SG} --model-path /m --tp-size 2"
    renamed = diagnosis_of(sglang_log(f"{SG} --model-path /m --max-model-len 4096", "--max-model-len 4096")).fix
    assert renamed is not None and renamed.command == f"{SG} --model-path /m --context-length 4096"


def test_without_the_command_the_flags_of_the_error_are_translated() -> None:
    log = "launch_server.py: error: unrecognized arguments: --max-model-len 8k --enforce-eager --gpu-memory-utilization 0.9\n"
    diagnosis = diagnosis_of(log)
    assert diagnosis.pattern == "sglang-vllm-command-for-sglang"
    fix = diagnosis.fix
    assert fix is not None and fix.command is None
    assert [(op.op, op.flag, op.value, op.to) for op in fix.flags] == [
        ("rename", "--max-model-len", "8000", "--context-length"),
        ("rename", "--enforce-eager", None, "--disable-cuda-graph"),
        ("remove", "--gpu-memory-utilization", None, None),
    ]


def test_a_flag_both_engines_spell_alike_is_kept_with_its_caution() -> None:
    command = f"{SG} --model-path /m --config vllm.yaml --max-model-len 8192 --enforce-eager"
    fix = diagnosis_of(sglang_log(command, "--max-model-len 8192 --enforce-eager"), version="0.5.23").fix
    assert fix is not None and fix.command is not None and "--config vllm.yaml" in fix.command
    assert "--config (the file holds one engine's flag names" in fix.summary


# -- safety: only the user's own words, quoted; secrets stay out ------------------------------------------------


def test_a_hostile_value_from_the_log_stays_one_quoted_word(tmp_path: Path) -> None:
    command = f"{SG} --model-path '/m; touch pwned' --served-model-name '$(touch pwned2)' --max-model-len 8192 --enforce-eager"
    fix = diagnosis_of(sglang_log(command, "--max-model-len 8192 --enforce-eager")).fix
    assert fix is not None and fix.command is not None
    assert shlex.split(fix.command)[3:8] == ["--model-path", "/m; touch pwned", "--served-model-name", "$(touch pwned2)", "--context-length"]
    subprocess.run(["bash", "-c", f"true {fix.command}"], cwd=tmp_path, check=True)
    assert list(tmp_path.iterdir()) == [], "pasting the translated command ran something"


def test_the_users_own_command_keeps_its_expansions() -> None:
    cmd = f'{SG} --model-path "$MODEL" --max-model-len "$LEN" --gpu-memory-utilization 0.9 2>&1 | tee server.log'
    fix = diagnosis_of(sglang_log(cmd, "--max-model-len 8192 --gpu-memory-utilization 0.9"), command=cmd).fix
    assert fix is not None and fix.command == f'{SG} --model-path "$MODEL" --context-length "$LEN" 2>&1 | tee server.log'


def test_a_secret_value_never_reaches_the_report() -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    command = f"{SG} --model-path /m --api-key {secret} --max-model-len 8192 --seed 3"
    report = diagnose_text(sglang_log(command, "--max-model-len 8192 --seed 3"), DiagnoseOptions(include_user_patterns=False))
    fix = report.failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fix is not None and fix.command is not None and secret not in fix.summary  # the prose names flags, not values
    redacted = redact_report(report)
    text = repr(redacted)
    assert secret not in text
    fixed = redacted.failures[0].diagnosis.fix  # type: ignore[union-attr]
    assert fixed is not None and fixed.command is not None
    assert '--api-key "$SGLANG_API_KEY"' in fixed.command and "--context-length 8192 --random-seed 3" in fixed.command
    assert "--api-key" in fixed.summary and "REDACTED" not in fixed.summary  # the kept flag is still named whole


VLLM_VOCABULARY = [
    ("--max-model-len", ("4096", "8k", "16K")), ("--gpu-memory-utilization", ("0.8",)), ("--max-num-seqs", ("32",)),
    ("--enforce-eager", ()), ("--seed", ("1",)), ("--tensor-parallel-size", ("2",)), ("-tp", ("2",)),
    ("--enable-prefix-caching", ()), ("--no-enable-prefix-caching", ()), ("--kv-cache-dtype", ("fp8", "auto")),
    ("--swap-space", ("4",)), ("--trust-remote-code", ()), ("--served-model-name", ("a",)), ("--block-size", ("16",)),
    ("--max-num-batched-tokens", ("8192",)), ("--hf-overrides", ('{"a": 1}',)), ("--port", ("8000",)),
    ("--dtype", ("bfloat16", "half")), ("--distributed-executor-backend", ("ray",)), ("--max-loras", ("2",)),
    ("--enable-chunked-prefill", ()), ("--made-up-flag", ("x",)),
]


@settings(max_examples=60, deadline=None)
@given(
    chosen=st.lists(st.sampled_from(range(len(VLLM_VOCABULARY))), min_size=1, max_size=8, unique=True),
    picks=st.lists(st.integers(0, 2), min_size=8, max_size=8),
    version=st.sampled_from(SGLANG_VERSIONS),
)
def test_the_translation_writes_no_flag_the_user_did_not_give(chosen: list[int], picks: list[int], version: str) -> None:
    words = ["--model-path", "/m"]
    for index, pick in zip(chosen, picks, strict=False):
        flag, values = VLLM_VOCABULARY[index]
        words += [flag, values[pick % len(values)]] if values else [flag]
    command = CommandLine.parse(f"{SG} {shlex.join(words)}")
    catalog = catalogs.load("sglang", version)
    translation = cross_engine.translate(command, "sglang", catalog)
    out = command.apply(translation.ops())
    given_flags = {flag for flag, _ in command.options}
    translated = {item.target for item in translation.renamed}
    assert {flag for flag, _ in out.options} <= given_flags | translated
    assert len(translation.flags) == len(command.options)  # every flag accounted for
    for flag, values in out.options:  # and every flag written is one this SGLang takes, with a value it takes
        info = catalog.find(flag) if catalog else None
        assert info is not None, flag
        if info.choices and values:
            assert values[0] in info.choices, (flag, values)


# -- SGLang flags in a vLLM launch -------------------------------------------------------------------------------


def test_sglang_flags_are_translated_for_vllm() -> None:
    command = ("vllm serve --model-path /m --tp-size 2 --mem-fraction-static 0.85 --context-length 8192 "
               "--disable-radix-cache --enable-dp-attention --random-seed 1 --kv-cache-dtype fp8_e4m3 --trust-remote-code")
    log = vllm_log(command, "--model-path --tp-size 2 --mem-fraction-static 0.85 --context-length 8192 --disable-radix-cache "
                   "--enable-dp-attention --random-seed 1")
    diagnosis = diagnosis_of(log)
    assert diagnosis.pattern == "vllm-sglang-command-for-vllm"
    fix = diagnosis.fix
    assert fix is not None and fix.command == (
        "vllm serve --model /m --tensor-parallel-size 2 --max-model-len 8192 --no-enable-prefix-caching --seed 1 "
        "--kv-cache-dtype fp8_e4m3 --trust-remote-code"
    )
    assert "--enable-dp-attention (vLLM has no data-parallel attention switch)" in fix.summary
    assert fix.alternatives[0].needs_input == ("--gpu-memory-utilization",)


def test_vllm_0_33s_own_stop_for_a_missing_positional_model_is_recognised() -> None:
    command = "vllm serve --model-path /m --tp-size 1 --context-length 1024 --served-model-name qwen"
    log = (f"+ {command}\nTraceback (most recent call last):\n"
           '  File "/venv/lib/python3.11/site-packages/vllm/utils/argparse_utils.py", line 366, in parse_args\n'
           "    raise ValueError(\n"
           "ValueError: `model` should be provided as the first positional argument when using `vllm serve`. "
           "i.e. `vllm serve <model> --<arg> <value>`.\n")
    diagnosis = diagnosis_of(log)
    assert diagnosis.pattern == "vllm-sglang-command-for-vllm"
    assert diagnosis.fix is not None
    assert diagnosis.fix.command == "vllm serve --model /m --tensor-parallel-size 1 --max-model-len 1024 --served-model-name qwen"


def test_a_vllm_usage_error_without_the_command_is_still_translated_for_vllm() -> None:
    """No `+ vllm serve` line: the engine is not known from the log, the pattern says which engine ran."""
    fix = diagnosis_of(f"{VLLM_USAGE}vllm: error: unrecognized arguments: --tp-size 2 --context-length 4096\n").fix
    assert fix is not None and fix.command is None
    assert [(op.op, op.flag, op.to) for op in fix.flags] == [
        ("rename", "--tp-size", "--tensor-parallel-size"), ("rename", "--context-length", "--max-model-len")
    ]


# -- the real engines (make oracle-setup) --------------------------------------------------------------------------


def _fix_of_real_run(output: str) -> tuple[str, Fix]:
    report = diagnose_text(output, DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None, output[-2000:]
    return diagnosis.pattern, diagnosis.fix


SGLANG_WITH_VLLM_FLAGS = ["--model-path", "{tiny_llama}", "--tensor-parallel-size", "1", "--max-model-len", "2k",
                          "--gpu-memory-utilization", "0.9", "--enforce-eager", "--seed", "3", "--max-num-seqs", "8",
                          "--enable-prefix-caching", "--kv-cache-dtype", "fp8", "--swap-space", "4"]


@pytest.mark.oracle
@pytest.mark.parametrize("version", SGLANG_VERSIONS)
def test_real_sglang_rejects_the_vllm_command_and_takes_the_translation(version: str) -> None:
    run = load_oracle("oracle")
    if not (run.venv_dir(version) / ".ready").exists():
        pytest.skip(f"no oracle venv for SGLang {version} (make oracle-setup)")
    failed = run.run_launch(version, SGLANG_WITH_VLLM_FLAGS, trace=True)
    assert not failed.passed and failed.returncode == 2
    pattern, fix = _fix_of_real_run(failed.output)
    assert pattern == "sglang-vllm-command-for-sglang"
    assert fix.command is not None and "--context-length 2000" in fix.command
    fixed = run.run_command_string(version, fix.command)
    assert fixed.passed, fixed.output[-3000:]


VLLM_WITH_SGLANG_FLAGS = {
    # argparse reports the unknown flags
    "usage": ["{tiny_llama}", "--tp-size", "1", "--context-length", "1024", "--mem-fraction-static", "0.8",
              "--disable-radix-cache", "--random-seed", "1", "--max-running-requests", "8", "--disable-cuda-graph"],
    # --model-path and --served-model-name: 0.33 stops before argparse, asking for a positional model
    "model-path": ["--model-path", "{tiny_llama}", "--tp-size", "1", "--context-length", "1024", "--served-model-name", "tiny",
                   "--enable-dp-attention", "--trust-remote-code"],
}


@pytest.mark.oracle
@pytest.mark.parametrize("version", VLLM_VERSIONS)
@pytest.mark.parametrize("case", sorted(VLLM_WITH_SGLANG_FLAGS))
def test_real_vllm_rejects_the_sglang_command_and_takes_the_translation(version: str, case: str) -> None:
    run = load_oracle("oracle_vllm")
    if not (run.venv_dir(version) / ".ready").exists():
        pytest.skip(f"no oracle venv for vLLM {version} (scripts/oracle_vllm/setup.sh)")
    failed = run.run_serve(version, VLLM_WITH_SGLANG_FLAGS[case], trace=True)
    assert not failed.passed and failed.returncode != 0
    pattern, fix = _fix_of_real_run(failed.output)
    assert pattern == "vllm-sglang-command-for-vllm"
    assert fix.command is not None and "--max-model-len 1024" in fix.command
    fixed = run.run_command_string(version, fix.command)
    assert fixed.passed, fixed.output[-3000:]
