"""A paste that ends on the tail of an engine's own message of several lines, its error line cut off above
(tracebacks/instruction_tail.py): the engine's numbered solutions are that check's message, found and quoted.

Thread: sgl-project/sglang#6218 (the paste's last lines were the end of SGLang's "Capture cuda graph failed …
Possible solutions" message).  The lines below are the engine's code's own, from the raise site index
(sglang/srt/model_executor/cuda_graph_runner.py CudaGraphRunner.__init__, 0.4.6.post2), printed after log lines of
our own."""

from __future__ import annotations

from logsleuth.api import diagnose_text
from tests.reasoning.diagnosed import OPTIONS

SOLUTIONS = [
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
    "3. disable torch compile by not using --enable-torch-compile",
    "4. disable cuda graph by --disable-cuda-graph. (Not recommonded. Huge perf loss)",
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ",
]
ABOVE = "[2025-05-12 10:00:01] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16\n"


def test_the_tail_of_the_engine_s_solutions_is_its_failure_quoted() -> None:
    report = diagnose_text(ABOVE + "\n".join(SOLUTIONS[-3:]) + "\n", OPTIONS)
    assert len(report.failures) == 1
    failure = report.failures[0].failure
    assert failure.final.type == "Exception" and failure.final.message.startswith("Capture cuda graph failed:")
    assert "disable cuda graph by --disable-cuda-graph" in failure.final.message
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.engine == "sglang" and diagnosis.category == "cuda-graph-capture"
    quoted = {words.text: words.checks for words in diagnosis.engine_says}
    said = next(text for text in quoted if "--disable-cuda-graph" in text)
    assert any("`--disable-cuda-graph`" in check for check in quoted[said])  # checked against the catalogs


def test_more_of_the_list_is_read_too() -> None:
    report = diagnose_text("\n".join(SOLUTIONS) + "\n", OPTIONS)
    assert "1. set --mem-fraction-static" in report.failures[0].failure.final.message


def test_one_line_of_it_alone_is_no_failure() -> None:
    assert not diagnose_text(ABOVE + SOLUTIONS[-1] + "\n", OPTIONS).failures


def test_a_list_no_engine_prints_is_no_failure() -> None:
    log = ABOVE + "Things I tried:\n1. reinstall the driver\n2. reboot the machine\n3. use another image\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_a_paste_that_shows_its_failure_is_read_as_it_is() -> None:
    log = ("Traceback (most recent call last):\n  File \"/srv/run.py\", line 3, in <module>\n    main()\n"
           "RuntimeError: CUDA error: out of memory\n" + "\n".join(SOLUTIONS[-3:]) + "\n")
    report = diagnose_text(log, OPTIONS)
    assert [group.failure.final.type for group in report.failures] == ["RuntimeError"]


def test_a_tail_after_the_server_came_up_is_no_failure() -> None:
    """A healthy run whose paste ends on the user's notes quoting the list (review fault 3)."""
    log = ABOVE + "[2025-05-12 10:01:00] The server is fired up and ready to roll!\n" + "\n".join(SOLUTIONS[-3:]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_a_tail_after_its_stage_s_end_line_is_no_failure() -> None:
    """cuda_graph_runner.py logs "Capture cuda graph end" once capture succeeded: its failure's list is then quoted."""
    log = ABOVE + "[2025-05-12 10:00:40] Capture cuda graph end. Time elapsed: 12.30 s\n" + "\n".join(SOLUTIONS[-3:]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_an_opening_cut_at_a_quoted_hole_does_not_end_on_the_quote() -> None:
    from logsleuth.tracebacks.instruction_tail import CUT_MARK, _opening

    assert _opening("Invalid repository ID or local directory specified: '{}'.\n1. a\n2. b") == (
        f"Invalid repository ID or local directory specified: {CUT_MARK}")
