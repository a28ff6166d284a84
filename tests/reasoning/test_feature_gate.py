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


def test_a_release_that_holds_no_such_check_gets_no_command() -> None:
    """SGLang 0.5.9 has no check that raises this message (nor the flag): the stated release and the message do not
    fit, so no corrected command is built (review fault 7)."""
    options = dataclasses.replace(OPTIONS, engine="sglang", engine_version="0.5.9")
    diagnosis = first_diagnosis(RADIX, options)
    assert diagnosis.pattern == "rule-feature-gate" and diagnosis.fix is not None
    assert not diagnosis.fix.flags and not diagnosis.fix.alternatives and diagnosis.fix.needs_input
    assert "0.5.9" in diagnosis.root_cause and "another" in diagnosis.root_cause


def _frame(file: str, function: str) -> str:
    return f'Traceback (most recent call last):\n  File "{file}", line 40, in {function}\n    raise ValueError(\n'


def test_the_raising_frame_picks_the_release_s_site_and_a_newer_guard_offers_the_upgrade() -> None:
    """0.5.12's ServerArgs._handle_pd_disaggregation refuses any algorithm; 0.5.23's speculative_hook lets EAGLE
    through, so it is not cited, and the upgrade is offered (review fault 4)."""
    log = _frame("/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", "_handle_pd_disaggregation") + RADIX
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-feature-gate"
    assert "server_args.py" in diagnosis.references[0]
    assert not any("speculative_hook.py" in ref for ref in diagnosis.references)
    assert diagnosis.fix is not None and any("upgrade" in step and "0.5.23" in step for step in diagnosis.fix.steps)


def test_an_or_over_two_settings_leaves_them_out_together() -> None:
    """SGLang's _handle_eagle_family: `use_rejection_sampling and (threshold_single != 1.0 or threshold_acc != 1.0)`:
    leaving out one threshold keeps the other refused (review fault 1)."""
    log = ("python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
           "--speculative-use-rejection-sampling --speculative-accept-threshold-single 0.5 "
           "--speculative-accept-threshold-acc 0.5\n"
           "ValueError: --speculative-use-rejection-sampling is incompatible with --speculative-accept-threshold-single "
           "/ --speculative-accept-threshold-acc; rejection sampling ignores the accept thresholds.\n")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-feature-gate" and diagnosis.fix is not None
    groups = {frozenset(op.flag for op in option.flags) for option in (diagnosis.fix, *diagnosis.fix.alternatives)}
    assert groups == {frozenset({"--speculative-use-rejection-sampling"}),
                      frozenset({"--speculative-accept-threshold-single", "--speculative-accept-threshold-acc"})}
    assert not any("either one alone" in step for step in diagnosis.fix.steps)


@pytest.mark.parametrize("line", [
    # vLLM config/model.py: the guard asks for --convert (`convert_type not in pooling_converts`)
    "ValueError: This model does not support `--runner pooling`. You can pass `--convert embed to adapt it into a "
    "pooling model.",
    # SGLang arg_groups/moe_hook.py handle_a2a_moe (0.5.22-0.5.23): an assert that the two sizes are equal
    "AssertionError: FlashInfer MegaMOE is only supported with --attn-dp-size equal to --tp-size",
    # SGLang ServerArgs._handle_mamba_radix_cache (0.5.13): the second flag is the engine's instruction
    "ValueError: mamba extra_buffer is not compatible with --disable-radix-cache. Overlap scheduling is already "
    "supported with no_buffer + disable_radix_cache. Please use --mamba-scheduler-strategy no_buffer instead.",
    # vLLM config/vllm.py _resolve_and_verify_engram_config: both flags are instructions
    "ValueError: DeepSeek V4.1 Engram does not support DBO or microbatching. Disable --enable-dbo and set "
    "--ubatch-size to 0.",
])
def test_settings_the_engine_asks_for_are_not_a_pair_to_drop(line: str) -> None:
    """Review fault 2: the settings come from the refusing clause and the check's reads, never the instruction."""
    diagnosis = diagnose_text(line + "\n", OPTIONS).failures[0].diagnosis
    assert diagnosis is None or diagnosis.pattern != "rule-feature-gate"


def test_a_launcher_s_own_check_is_not_the_engine_s() -> None:
    """The same words raised from the user's own file (its only frame): not SGLang's kv_cache_hook check (fault 8)."""
    log = ('Traceback (most recent call last):\n  File "/app/mylauncher/validate.py", line 12, in check\n'
           '    raise ValueError("--enable-lmcache and --enable-hierarchical-cache are mutually exclusive")\n'
           "ValueError: --enable-lmcache and --enable-hierarchical-cache are mutually exclusive\n")
    diagnosis = diagnose_text(log, OPTIONS).failures[0].diagnosis
    assert diagnosis is None or diagnosis.pattern != "rule-feature-gate"


def test_one_feature_named_is_left_to_the_category_rows() -> None:
    line = "ValueError: --enable-return-routed-experts is incompatible with pipeline parallelism (PP > 1).\n"
    assert first_diagnosis(line).pattern != "rule-feature-gate"


def test_words_no_engine_check_raises_are_not_read_so() -> None:
    log = app_traceback("ValueError: --fast-mode is incompatible with --safe-mode")
    report = diagnose_text(log, OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is None or diagnosis.pattern != "rule-feature-gate"
