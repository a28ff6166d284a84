"""Two settings the engine's own settings check refuses together (reasoning/feature_gate.py): feature-conflict, with
"drop one of the two" as the fix, decided from the raise site index.

Threads and code: sgl-project/sglang#19746 (a PD decode worker with --disaggregation-decode-enable-radix-cache and
EAGLE, the error line alone, read as a speculative-decoding size problem before); the messages are the engines' own
templates at their raise sites: sglang/srt/server_args.py ServerArgs._handle_pd_disaggregation and
arg_groups/pd_disaggregation_hook.py (0.5.13 on), ServerArgs' "--enable-two-batch-overlap and
--enforce-shared-experts-fusion cannot be used together.", arg_groups/hisparse_hook.py
validate_hisparse_feature_combos; vllm/engine/arg_utils.py's data-parallel load-balancing check."""

from __future__ import annotations

import dataclasses

import pytest

from logsleuth.api import diagnose_text
from tests.reasoning.diagnosed import OPTIONS, app_traceback, first_diagnosis

RADIX = ("ValueError: --disaggregation-decode-enable-radix-cache is incompatible with speculative decoding "
         "(--speculative-algorithm EAGLE)\n")


def test_a_refusal_of_two_flags_is_a_feature_conflict_with_drop_one_as_the_fix() -> None:
    diagnosis = first_diagnosis(RADIX)
    assert diagnosis.pattern == "rule-feature-gate" and diagnosis.category == "feature-conflict"
    assert diagnosis.engine == "sglang"
    assert diagnosis.fix is not None and diagnosis.fix.summary.startswith("Drop one of the two")
    removed = {op.flag for option in (diagnosis.fix, *diagnosis.fix.alternatives) for op in option.flags}
    assert removed == {"--disaggregation-decode-enable-radix-cache", "--speculative-algorithm"}
    assert all(op.op == "remove" for option in (diagnosis.fix, *diagnosis.fix.alternatives) for op in option.flags)
    # the code site is cited, not only the words
    assert any("pd_disaggregation_hook.py" in ref or "server_args.py" in ref for ref in diagnosis.references)


def test_the_user_s_own_command_loses_one_flag() -> None:
    log = ("python -m sglang.launch_server --model-path m --disaggregation-mode decode "
           "--disaggregation-decode-enable-radix-cache --speculative-algorithm EAGLE\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 4059, in '
           "_handle_pd_disaggregation\n    raise ValueError(\n" + RADIX)
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-feature-gate"
    assert diagnosis.fix is not None and diagnosis.fix.command is not None
    assert "--disaggregation-decode-enable-radix-cache" not in diagnosis.fix.command
    assert "--speculative-algorithm EAGLE" in diagnosis.fix.command


def test_a_flag_the_release_lacks_is_not_offered() -> None:
    """SGLang 0.5.9's catalog has no --disaggregation-decode-enable-radix-cache: only the other flag is a change."""
    options = dataclasses.replace(OPTIONS, engine="sglang", engine_version="0.5.9")
    diagnosis = first_diagnosis(RADIX, options)
    assert diagnosis.pattern == "rule-feature-gate" and diagnosis.fix is not None
    offered = {op.flag for option in (diagnosis.fix, *diagnosis.fix.alternatives) for op in option.flags}
    assert offered == {"--speculative-algorithm"}
    assert any("is not a flag of SGLang 0.5.9" in fact for fact in diagnosis.evidence)


@pytest.mark.parametrize(("line", "engine"), [
    ("ValueError: --enable-two-batch-overlap and --enforce-shared-experts-fusion cannot be used together.", "sglang"),
    ("ValueError: --enable-hisparse does not support --enable-mixed-chunk yet.", "sglang"),
    ("ValueError: Invalid data-parallel launch options: `--data-parallel-hybrid-lb` and `--data-parallel-external-lb` "
     "cannot be enabled together. Enable only one load-balancing mode.", "vllm"),
])
def test_other_gates_of_both_engines(line: str, engine: str) -> None:
    diagnosis = first_diagnosis(line + "\n")
    assert diagnosis.pattern == "rule-feature-gate" and diagnosis.engine == engine


def test_one_feature_named_is_left_to_the_category_rows() -> None:
    line = "ValueError: --enable-return-routed-experts is incompatible with pipeline parallelism (PP > 1).\n"
    assert first_diagnosis(line).pattern != "rule-feature-gate"


def test_words_no_engine_check_raises_are_not_read_so() -> None:
    log = app_traceback("ValueError: --fast-mode is incompatible with --safe-mode")
    report = diagnose_text(log, OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is None or diagnosis.pattern != "rule-feature-gate"
