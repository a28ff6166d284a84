"""Categories for the failures h-found6 began to find (issue 28, stop 39; branch h-cat5): a traceback cut inside its
raising statement, or whose frames lost their `File` wording, names its category from the message template of the
engine's check the innermost frame stands in (the raise site index), since the paste cut the message's own words.

Tracebacks are printed by real CPython (tests.helpers.real_traceback) from mirrors of vLLM's own checks (the index's
vllm/config.py: `_get_and_verify_max_len`, `ModelConfig.verify_with_parallel_config`), and cut as the pastes were."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.tracebacks.raising_statement import statement_frame
from tests.helpers import frames_without_file_wording, real_traceback, without_exception_line
from tests.test_fatal_output_shapes import OPTIONS

INSTALLED = "/usr/local/lib/python3.12/dist-packages/"
# vLLM's derived context length check (vllm/config.py _get_and_verify_max_len, vllm-project/vllm#3676).
MAX_LEN_CHECK = """
def _get_and_verify_max_len(max_model_len, derived_max_model_len):
    if max_model_len > derived_max_model_len:
        msg = (f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len "
               f"({derived_max_model_len}).")
        raise ValueError(
            f"{msg} To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    return max_model_len


_get_and_verify_max_len(131072, 8192)
"""
# vLLM's heads check (vllm/config.py ModelConfig.verify_with_parallel_config, vllm-project/vllm#4232).
HEADS_CHECK = """
class ModelConfig:
    def verify_with_parallel_config(self, total_num_attention_heads, tensor_parallel_size):
        if total_num_attention_heads % tensor_parallel_size != 0:
            raise ValueError(
                f"Total number of attention heads ({total_num_attention_heads})"
                " must be divisible by tensor parallel size "
                f"({tensor_parallel_size}).")


ModelConfig().verify_with_parallel_config(40, 6)
"""


def _installed(code: str) -> str:
    return real_traceback(code, "vllm/config.py").replace("/srv/", INSTALLED)


def _diagnosis(pasted: str):  # type: ignore[no-untyped-def]
    report = diagnose_text(pasted, OPTIONS)
    assert len(report.failures) == 1
    return report.failures[0]


def test_a_statement_cut_before_its_message_is_named_by_the_checks_template() -> None:
    pasted = without_exception_line(_installed(MAX_LEN_CHECK))
    assert pasted.rstrip().endswith("raise ValueError(") and "max_model_len (" not in pasted
    found = _diagnosis(pasted)
    assert (found.failure.final.type, found.failure.final.message) == ("ValueError", "")
    assert found.diagnosis.category == "context-length"
    assert "message template of the engine's check" in found.diagnosis.root_cause


def test_the_same_statement_outside_an_indexed_check_gets_no_template_words() -> None:
    # the same cut traceback in a module the index does not hold: no check's words, so not context-length
    printed = real_traceback(MAX_LEN_CHECK, "vllm/no_such_module.py").replace("/srv/", INSTALLED)
    found = _diagnosis(without_exception_line(printed))
    assert found.diagnosis.category != "context-length"
    assert "message template" not in found.diagnosis.root_cause


def test_frames_without_file_wording_place_the_statement_in_its_check() -> None:
    pasted = frames_without_file_wording(without_exception_line(_installed(HEADS_CHECK)))
    pasted = "\n".join(line for line in pasted.splitlines() if not line.startswith("Traceback"))  # the header cut too
    assert 'File "' not in pasted and "divisible" not in pasted
    found = _diagnosis(pasted)
    frame = found.failure.final.frames[-1]
    assert (frame.file, frame.function, frame.source) == (
        f"{INSTALLED}vllm/config.py", "verify_with_parallel_config", "raise ValueError(")
    assert found.diagnosis.category == "parallel-config"
    # the parallelism rule reads the check's guard from the index: the degree must divide the heads
    assert found.diagnosis.pattern == "rule-parallelism-raise-num_attention_heads"
    assert "--tensor-parallel-size" in found.diagnosis.fix.summary


@pytest.mark.parametrize(("above", "place"), [
    ("  /x/site-packages/vllm/config.py, in verify_with_parallel_config", ("/x/site-packages/vllm/config.py", None, "verify_with_parallel_config")),
    ("vllm/config.py:233 in __init__", ("vllm/config.py", 233, "__init__")),
    ("  /x/vllm/config.py, line 233", ("/x/vllm/config.py", 233, None)),
])
def test_the_frame_line_above_a_statement_places_it(above: str, place: tuple[str, int | None, str | None]) -> None:
    frame = statement_frame("    raise ValueError(", [above, "             ^^^^"], "<unplaced>")
    assert (frame.file, frame.line, frame.function, frame.source) == (*place, "raise ValueError(")


def test_a_statement_under_a_source_line_stays_unplaced() -> None:
    frame = statement_frame("    raise ValueError(", ["    self._verify(max_model_len)"], "<unplaced>")
    assert (frame.file, frame.function) == ("<unplaced>", None)


# vLLM 0.13's registry refusing an architecture (vllm/model_executor/models/registry.py _raise_for_unsupported,
# vllm-project/vllm#32338), the paste ending after its first sentence.
UNSUPPORTED_CUT = "Model architectures ['LlavaQwenForCausalLM'] are not supported for now."


def test_an_engine_message_cut_after_the_command_is_typed_by_its_sites_opening() -> None:
    pasted = f"$ vllm serve /data/models/LLaVA-Video-7B-Qwen2 --trust-remote-code\n{UNSUPPORTED_CUT}\n"
    found = _diagnosis(pasted)
    assert (found.failure.final.type, found.failure.final.message) == ("ValueError", UNSUPPORTED_CUT)
    assert found.diagnosis.category == "unsupported-architecture"


def test_a_cut_message_is_typed_only_in_cut_mode() -> None:
    from logsleuth.facts.engine_messages import raised_as

    assert raised_as(UNSUPPORTED_CUT) is None
    assert raised_as(UNSUPPORTED_CUT, cut=True) == "ValueError"
    assert raised_as("Model architectures", cut=True) is None  # fewer than MIN_FIXED characters of the template
    assert raised_as("Loading safetensors checkpoint shards: 100% Completed", cut=True) is None  # no site's opening


def test_a_cut_of_a_template_both_engines_raise_as_different_types_picks_nothing() -> None:
    from logsleuth.facts.engine_messages import engines_raising, raised_as

    # SGLang asserts it, vLLM raises it as ValueError in some releases (their activation-function loaders)
    cut = "Loading of activation functions is restricted to torch.nn"
    assert engines_raising(None, cut, cut=True) == {"sglang", "vllm"}
    assert raised_as(cut, cut=True) is None


def test_a_prose_line_after_the_command_stays_no_failure() -> None:
    pasted = "$ vllm serve /data/models/LLaVA-Video-7B-Qwen2\nModel architectures are what I am asking about.\n"
    assert diagnose_text(pasted, OPTIONS).failures == ()
