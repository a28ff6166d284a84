"""The engine's own warning that recommends a flag, left as the lead of a clean report of a paste that stops before
the server came up (ingest/engine_hints.py, render/view.py no_failure_lines).

Thread: vllm-project/vllm#21122 (vLLM 0.9.2 with a Mistral-format model under the default tokenizer mode; the paste
stops after the warning, before the failure).  The warning's words are vLLM's own
(vllm/transformers_utils/tokenizer_group.py, warnings.warn(..., FutureWarning)); the other lines are ours."""

from __future__ import annotations

from logsleuth.api import diagnose_text
from logsleuth.render import render
from logsleuth.render.options import RenderOptions
from tests.reasoning.diagnosed import OPTIONS

START = ("INFO 07-17 07:53:42 [api_server.py:1395] vLLM API server version 0.9.2\n"
         "INFO 07-17 07:53:42 [cli_args.py:325] non-default args: {'model': 'org/some-model', 'max_model_len': 8192}\n")
WARNING = ("/usr/local/lib/python3.12/dist-packages/vllm/transformers_utils/tokenizer_group.py:24: FutureWarning: It is "
           "strongly recommended to run mistral models with `--tokenizer-mode \"mistral\"` to ensure correct encoding "
           "and decoding.\n")


def _text(log: str) -> str:
    report = diagnose_text(log, OPTIONS)
    assert not report.failures
    return render(report, RenderOptions())


def test_a_paste_that_stops_after_the_warning_names_it_checked() -> None:
    report = diagnose_text(START + WARNING + "  self.tokenizer = get_tokenizer(self.tokenizer_id, **tokenizer_config)\n",
                           OPTIONS)
    assert not report.failures
    (hint,) = report.launch.engine_hints
    assert "--tokenizer-mode" in hint.text and any("`--tokenizer-mode` is a flag of vLLM 0.9.2" in c for c in hint.checks)
    assert "the engine warned: It is strongly recommended" in render(report, RenderOptions())


def test_a_run_that_came_up_after_it_leaves_no_lead() -> None:
    up = "INFO:     Application startup complete.\n"
    assert "the engine warned" not in _text(START + WARNING + up)


def test_a_warning_of_another_program_is_no_lead() -> None:
    other = WARNING.replace("dist-packages/vllm/transformers_utils/", "dist-packages/myapp/")
    assert "the engine warned" not in _text(START + other)


def test_routine_warnings_are_no_lead() -> None:
    """Review fault 6: vLLM's arg_utils long-context warning and a deprecation print on healthy runs."""
    routine = (
        "WARNING 07-17 07:53:43 [arg_utils.py:1500] The model has a long context length (131072). This may cause OOM "
        "during the initial memory profiling phase, or result in low performance due to small KV cache size. Consider "
        "setting --max-model-len to a smaller value.\n"
        "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py:900: DeprecationWarning: --old-flag is "
        "deprecated and will be removed in a future release, please use --new-flag instead.\n")
    assert "the engine warned" not in _text(START + routine)
