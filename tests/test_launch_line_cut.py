"""A launch line the log printed cut or wrapped (fixes/cut_command.py): the fix gives its flag changes and says why no
corrected command is printed, since one rebuilt from the cut line would not run (stop 46: a blind split's corrected
command ended in the middle of a flag, the line wrapped where the paste broke it).

The logs are the project's shipped examples (examples/make_examples.py: real CPython tracebacks of the real SGLang
0.5.9 on CPU), their launch line wrapped as a terminal of a given width breaks it."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Fix

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
OPTIONS = DiagnoseOptions(include_user_patterns=False)


def _fix(text: str) -> Fix:
    report = diagnose_text(text, OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis.fix


def _wrapped(name: str, width: int) -> str:
    """The example with its launch line (the one starting `+ python`) broken after `width` characters."""
    lines = (EXAMPLES / name).read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("+ python"))
    line = lines[at]
    assert len(line) > width
    lines[at:at + 1] = [line[:width], line[width:]]
    return "\n".join(lines)


def test_a_launch_line_wrapped_inside_a_flag_gets_the_change_and_no_command() -> None:
    text = _wrapped("eagle3-incident.log", 150)
    assert "--speculative-draft-model\n-path" in text  # the wrap falls inside the flag's name
    fix = _fix(text)
    assert fix.flags and fix.command is None
    assert any("looks cut or wrapped" in step and "`--speculative-draft-model`" in step for step in fix.steps)
    assert all(alternative.command is None for alternative in fix.alternatives)


def test_the_same_launch_unwrapped_keeps_its_corrected_command() -> None:
    fix = _fix((EXAMPLES / "eagle3-incident.log").read_text(encoding="utf-8"))
    assert fix.command is not None and "--speculative-draft-model-path" in fix.command
    assert not any("looks cut or wrapped" in step for step in fix.steps)


def test_a_wrap_inside_a_flag_name_in_the_middle_is_a_word_no_release_has() -> None:
    """Cut so the line's last word is the start of a flag name that is no flag's start either."""
    text = (EXAMPLES / "eagle3-incident.log").read_text(encoding="utf-8").replace(
        "--speculative-draft-model-path", "--speculative-draft-model-pxth", 1)
    fix = _fix(text)
    assert fix.command is None
    assert any("`--speculative-draft-model-pxth`, which is no flag of any sglang release" in step for step in fix.steps)


def test_a_flag_s_unambiguous_start_is_a_flag_as_argparse_reads_it() -> None:
    """`--tp 8`: SGLang's argparse takes it for --tp-size, so the line is whole and the command is printed."""
    fix = _fix((EXAMPLES / "tp8-kv-cache-oom.log").read_text(encoding="utf-8"))
    assert fix.command is not None and "--tp 8" in fix.command


def _with_words_after_the_launch(words: str) -> str:
    lines = (EXAMPLES / "eagle3-incident.log").read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("+ python"))
    lines[at] += " " + words
    return "\n".join(lines)


def test_prose_after_the_launch_on_its_line_gives_no_corrected_command() -> None:
    """A sentence written on the launch line parses as more values of the last flag, which takes one: the engine's
    parser would have refused them, so the line is not what ran and a command rebuilt from it would keep them."""
    fix = _fix(_with_words_after_the_launch("and then it crashes"))
    assert fix.flags and fix.command is None
    assert all(alternative.command is None for alternative in fix.alternatives)
    assert any("words no flag takes (`and then it crashes`)" in step for step in fix.steps)


def test_a_flag_taking_several_values_keeps_its_corrected_command() -> None:
    """`--cuda-graph-bs` takes any number of values (nargs "+"): its values are not prose."""
    fix = _fix(_with_words_after_the_launch("--cuda-graph-bs 1 2 4 8"))
    assert fix.command is not None and "--cuda-graph-bs 1 2 4 8" in fix.command
    assert not any("words no flag takes" in step for step in fix.steps)


def test_a_switch_given_a_value_is_the_failure_not_prose() -> None:
    """The real vLLM 0.11.2's refusal of `--enable-prefix-caching=false` (the oracle's fixture): the one word after
    the switch is what the fix changes, so its corrected command stays."""
    log = Path(__file__).resolve().parent / "fixtures" / "vllm" / "0.11.2" / "switch_given_false.log"
    fix = _fix(log.read_text(encoding="utf-8"))
    assert fix.command is not None and "--no-enable-prefix-caching" in fix.command
    assert not any("words no flag takes" in step for step in fix.steps)
