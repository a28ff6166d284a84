"""Parser regressions, each on text CPython formats in-process from a real exception.

The exhaustive check is the ground-truth suite (tests/groundtruth); these pin the bugs it
found, one small case each, so a failure names the rule that broke.
"""

from __future__ import annotations

import random
import sys
import time
import traceback
from pathlib import Path

import pytest

from logsleuth.ingest.normalize import normalize_text
from logsleuth.models import Failure
from logsleuth.tracebacks.chain import parse_chain
from logsleuth.tracebacks.scanner import LineKind, classify, scan

sys.path.insert(0, str(Path(__file__).parent / "groundtruth"))
from embed import write_units  # noqa: E402  (how CPython splits a traceback into writes)


def formatted(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def group_as_cause() -> BaseException:
    try:
        raise ExceptionGroup("workers", [raised(KeyError("k")), ValueError("v")])
    except ExceptionGroup as group:
        try:
            raise RuntimeError("scheduler failed") from group
        except RuntimeError as caught:
            return caught


def failures(text: str) -> list[Failure]:
    return scan(normalize_text(text))


def test_group_lines_are_classified_before_traceback_headers() -> None:
    assert classify("  + Exception Group Traceback (most recent call last):") is LineKind.GROUP
    assert classify("    | Traceback (most recent call last):") is LineKind.MARGIN
    assert classify("Scheduler hit an exception:   + Exception Group Traceback (most recent call last):") is LineKind.GROUP


def test_top_level_group_is_parsed_with_its_members() -> None:
    (block,) = parse_chain(formatted(raised(ExceptionGroup("eg", [ValueError("a"), TypeError("b")]))).splitlines())
    assert (block.type, block.message) == ("ExceptionGroup", "eg (2 sub-exceptions)")
    assert [[(m.type, m.message) for m in chain] for chain in block.members] == [[("ValueError", "a")], [("TypeError", "b")]]


def test_group_as_cause_keeps_the_relation() -> None:
    (failure,) = failures(formatted(group_as_cause()))
    group, final = failure.exceptions
    assert (group.type, group.relation, final.type) == ("ExceptionGroup", "cause", "RuntimeError")
    assert not failure.truncated


def test_group_sharing_its_line_with_an_sglang_header() -> None:
    text = formatted(group_as_cause())
    (failure,) = failures(f"[2025-04-23 21:31:41 TP2] Scheduler hit an exception: {text}")
    assert failure.header == "Scheduler hit an exception:"
    assert [block.type for block in failure.exceptions] == ["ExceptionGroup", "RuntimeError"]
    assert failure.meta.ranks == (("TP", 2),)


def test_second_group_header_starts_a_second_failure() -> None:
    text = formatted(raised(ExceptionGroup("eg", [ValueError("a")])))
    assert [f.final.type for f in failures(text + text)] == ["ExceptionGroup", "ExceptionGroup"]


def test_member_message_continuation_without_margin() -> None:
    # CPython 3.11 prints the second line of a member's message without the `|` margin.
    text = formatted(raised(ExceptionGroup("eg", [RuntimeError("one\ntwo"), ValueError("v")])))
    (failure,) = failures(text)
    assert [[(m.type, m.message) for m in chain] for chain in failure.final.members] == [
        [("RuntimeError", "one\ntwo")],
        [("ValueError", "v")],
    ]


def test_cause_printed_without_traceback_makes_a_traceback_failure() -> None:
    try:
        raise RuntimeError("outer") from ValueError("never raised")
    except RuntimeError as exc:
        text = formatted(exc)
    (failure,) = failures(text)
    assert failure.kind == "traceback"
    assert [(b.type, b.relation, len(b.frames)) for b in failure.exceptions] == [("ValueError", "cause", 0), ("RuntimeError", None, 1)]


@pytest.mark.parametrize(
    "after",
    ['INFO:     127.0.0.1:40178 - "GET /v1/models HTTP/1.1" 200 OK', "2025-04-23 21:31:45,123 - INFO - stopped",
     "WARNING 03-25 21:13:55 [config.py:120] Casting"],
)
def test_message_stops_at_the_next_log_record(after: str) -> None:
    text = formatted(raised(ValueError("first\nsecond")))
    (failure,) = failures(text + after + "\n")
    assert failure.final.message == "first\nsecond"


def test_identical_tracebacks_interleaved_line_by_line() -> None:
    try:
        try:
            {}["k"]
        except KeyError as exc:
            raise RuntimeError("boom") from exc
    except RuntimeError as exc:
        units = write_units(formatted(exc).splitlines())
    ranks = 4
    # Rank r starts r writes late; each writes one unit (what CPython writes at once) in turn.
    merged: list[str] = []
    for step in range(len(units) + ranks):
        for rank in range(ranks):
            if 0 <= step - rank < len(units):
                merged.extend(units[step - rank])
    found = failures("\n".join(merged) + "\n")
    assert len(found) == ranks
    for failure in found:
        assert [(b.type, b.relation) for b in failure.exceptions] == [("KeyError", "cause"), ("RuntimeError", None)]
        assert not failure.truncated


def test_repeated_vllm_header_after_a_traceback_is_not_message() -> None:
    head = "WARNING 03-25 21:13:55 [config.py:120] "
    text = formatted(raised(KeyError("eagle_topk")))
    (failure,) = failures(head + "Casting\n" + text + head + "Casting\n")
    assert failure.final.message == "'eagle_topk'"


@pytest.mark.parametrize(
    "line",
    ["Traceback (most recent call last):", "  + Exception Group Traceback (most recent call last):", "ValueError: x"],
)
def test_thousands_of_failure_starts_cost_little(line: str) -> None:
    # Each line opens a collector that shares its first line with the others: the number kept
    # open (and compared with each other) per stream is bounded.
    started = time.perf_counter()
    found = failures(f"{line}\n" * 3000)
    assert len(found) == 3000
    assert time.perf_counter() - started < 10


def _deep_traceback(depth: int, tmp_path: Path) -> str:
    """Real CPython output for mutual recursion `depth` calls deep, printed by the traceback module (as SGLang
    logs tracebacks; sys.excepthook would stop at 1,000 frames).  No two consecutive frames are equal, so
    CPython prints every one (its `[Previous line repeated]` marker never applies)."""
    import subprocess

    program = tmp_path / "deep.py"
    program.write_text(
        "import sys, traceback\n"
        f"sys.setrecursionlimit({depth + 1000})\n"
        "def ping(n):\n    return pong(n - 1) if n else bottom()\n"
        "def pong(n):\n    return ping(n - 1)\n"
        "def bottom():\n    raise ValueError('the innermost failure')\n"
        f"try:\n    ping({depth})\nexcept ValueError:\n    traceback.print_exc()\n"
    )
    proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert proc.stderr.startswith("Traceback (most recent call last):")
    return proc.stderr


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_a_runaway_traceback_stays_one_failure_with_its_exception(tmp_path: Path) -> None:
    text = _deep_traceback(30_000, tmp_path)  # ~60,000 lines: three times the per-failure budget
    assert text.count("\n") > 3 * 20_000
    failures = scan(normalize_text(text))
    assert len(failures) == 1
    (failure,) = failures
    assert failure.final.type == "ValueError" and failure.final.message == "the innermost failure"
    assert failure.truncated, "the middle was elided"
    assert failure.final.frames[-1].function == "bottom", "the innermost frames are kept"
    assert failure.final.frames[0].function == "<module>", "the outermost frames are kept"


# -- paste styles (issue 11): rules the ground-truth styles (tests/groundtruth/test_paste_styles.py) rely on --


def keyerror_traceback() -> str:
    def load(config: dict[str, object]) -> object:
        return config["speculative"]

    try:
        load({})
    except KeyError as exc:
        return formatted(exc)
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    "sentence",
    [
        "Loading the AWQ model fails with `KeyError: 'lm_head.weight'`.",
        "`python -m sglang.launch_server --model-path m` -> `KeyError: 'lm_head.weight'`",
        "**KeyError: 'lm_head.weight'** on every start",
        "*KeyError: 'lm_head.weight'* on every start",  # markdown italics
        "Every start ends in _KeyError: 'lm_head.weight'_ now.",
        "**_KeyError: 'lm_head.weight'_** on every start",  # bold and italic at once
        "***KeyError: 'lm_head.weight'*** on every start",
        'It occurs that "KeyError: \'lm_head.weight\'", after the upgrade.',
        "It occurs that \u201cKeyError: 'lm_head.weight'\u201d, after the upgrade.",
        "Then `KeyError: 'lm_head.weight` when I start the server.",  # the closing quote lost in the copy
    ],
)
def test_an_exception_quoted_in_a_sentence(sentence: str) -> None:
    (failure,) = failures(sentence + "\nWith the other checkpoint it works.\n")
    assert (failure.kind, failure.final.type, failure.final.message) == ("bare", "KeyError", "'lm_head.weight'")


@pytest.mark.parametrize("sentence", [
    "The value is 2 * 3 * 4 here, and my_var_name_x is set.",  # asterisks of arithmetic, an identifier's underscores
    "see *args and **kwargs in `launch(*args)` docs",
])
def test_asterisks_and_underscores_that_quote_no_exception(sentence: str) -> None:
    assert failures(sentence + "\n") == []


def test_a_sentence_quoting_a_usage_error() -> None:
    (failure,) = failures('it occurs that "launch_server.py: error: unrecognized arguments: --max-loaded-loras 1", and\n')
    assert (failure.kind, failure.final.message) == ("usage", "unrecognized arguments: --max-loaded-loras 1")


def test_an_unbalanced_backtick_span_is_not_read() -> None:
    # `also-inline`: the span's own backtick breaks it, so where it ends is unknown.
    assert failures("The scheduler dies with `RuntimeError: set a smaller `--max-running-requests`. x=1\n") == []


def test_a_quoted_exception_is_dropped_when_the_log_shows_it() -> None:
    text = keyerror_traceback()
    found = failures("The server dies with `KeyError: 'speculative'`:\n\n" + text)
    assert [(f.kind, f.final.type) for f in found] == [("traceback", "KeyError")]


def test_a_bare_generic_exception_line_is_the_failure_only_of_a_log_without_another() -> None:
    line = "Exception: sgl-kernel is installed with version 0.0.9.post2, which is less than the minimum required version"
    (alone,) = failures("> " + line + "\n")
    assert (alone.kind, alone.final.type) == ("bare", "Exception")
    found = failures(line + "\n\n" + keyerror_traceback())
    assert [f.final.type for f in found] == ["KeyError"]


def test_a_message_continues_after_a_blank_line_only_with_a_heading() -> None:
    try:
        try:
            raise RuntimeError("CUDA error: operation not permitted\nCUDA kernel errors might be reported later.\n")
        except RuntimeError as inner:
            raise Exception(f"Capture cuda graph failed: {inner}\nPossible solutions:\n1. disable cuda graph") from None
    except Exception as exc:  # noqa: BLE001 - the generic type is the point
        text = formatted(exc)
    (failure,) = failures(text + "\nInitialization failed. detoken_init_state: init ok\n")
    assert failure.final.message.endswith("\n\nPossible solutions:\n1. disable cuda graph")
    (single,) = failures(formatted(raised(KeyError("k"))) + "\nInitialization failed. detoken_init_state: init ok\n")
    assert single.final.message == "'k'"


def test_an_indented_bare_exception_line() -> None:
    (failure,) = failures("Serving the model:\n\n    ValueError: Unsupported architectures: ChatGLMForConditionalGeneration\n")
    assert (failure.final.type, failure.final.message) == ("ValueError", "Unsupported architectures: ChatGLMForConditionalGeneration")


def test_a_wrappers_tag_is_not_part_of_the_message() -> None:
    (failure,) = failures("RuntimeError: [address=0.0.0.0:41227, pid=1893] NCCL error: unhandled system error\n")
    assert failure.final.message == "NCCL error: unhandled system error"


def test_a_frame_joined_with_its_source_line() -> None:
    (block,) = parse_chain(['  File "/s/scheduler.py", line 1796, in run_scheduler_process scheduler.event_loop()',
                            "ValueError: x"])
    (frame,) = block.frames
    assert (frame.function, frame.source) == ("run_scheduler_process", "scheduler.event_loop()")
    (native,) = parse_chain(['  File "/x/batch_prefill.cu", line 197, in Run(tvm::ffi::TensorView a, int b)', "E: x"])
    assert native.frames[0].function == "Run(tvm::ffi::TensorView a, int b)"  # a native frame keeps its signature


def test_elided_frames_mark_the_traceback_truncated() -> None:
    lines = keyerror_traceback().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("  File"))
    (failure,) = failures("\n".join([*lines[: first + 2], "...", *lines[first + 2 :]]) + "\n")
    assert failure.truncated and failure.final.type == "KeyError" and failure.final.message == "'speculative'"


def test_two_processes_mixed_inside_cpythons_writes() -> None:
    # Two processes' identical tracebacks cut at any line (not by CPython's writes): each rank's text is rebuilt.
    lines = keyerror_traceback().splitlines()
    rng = random.Random(3)
    queues = [list(reversed(lines)), list(reversed(lines))]
    merged = []
    while any(queues):
        merged.append(rng.choice([q for q in queues if q]).pop())
    found = failures("\n".join(merged) + "\n")
    (alone,) = failures("\n".join(lines) + "\n")
    assert len(found) == 2
    for failure in found:
        assert failure.exceptions == alone.exceptions


def test_another_writers_line_between_terminate_and_what_is_not_the_message() -> None:
    # NCCL_DEBUG=INFO lines of a sibling thread land between std::terminate's two lines (sglang#3836).
    text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "node-7:192:3199 [4] NCCL INFO Connected all trees\n"
            "  what():  [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5653, OpType=ALLREDUCE)\n"
            "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):\n")
    (failure,) = failures(text)
    assert (failure.final.type, failure.final.message) == (
        "c10::DistBackendError", "[Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5653, OpType=ALLREDUCE)")


@pytest.mark.parametrize("lead", ["Server error: 500 - [address=0.0.0.0:42651, pid=775] ", ""])
def test_an_extension_modules_undefined_symbol_without_its_type_is_an_import_error(lead: str) -> None:
    # A web UI shows only str(ImportError) (xorbitsai/inference#3657): the loader's text still names the failure.
    message = "/usr/lib/python3/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c108ListType3getE"
    (failure,) = failures(lead + message + "\n")
    assert (failure.final.type, failure.final.message) == ("ImportError", message)


def test_an_undefined_symbol_line_with_its_type_is_read_once() -> None:
    text = formatted(raised(ImportError("/x/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxDestroy")))
    (failure,) = failures(text)
    assert failure.kind == "traceback" and failure.final.type == "ImportError"


def test_a_librarys_second_paragraph_after_a_blank_line_stays_in_the_message() -> None:
    # transformers' unknown-model-type ValueError (xorbitsai/inference#3471) has two paragraphs; the
    # next log record after another blank line is not part of it.
    message = ("The checkpoint you are trying to load has model type `qwen3_moe` but Transformers does not recognize "
               "this architecture.\n\nYou can update Transformers with the command `pip install --upgrade transformers`.")
    text = formatted(raised(ValueError(message))) + "\n[2025-05-19 08:42:12] Received sigquit from a child process.\n"
    (failure,) = [f for f in failures(text) if f.kind == "traceback"]
    assert failure.final.message == message


def test_prose_after_a_blank_line_is_not_the_message() -> None:
    text = formatted(raised(ValueError("model type `qwen3_moe` is not recognized."))) + "\nYou can see the full log below.\n"
    (failure,) = failures(text)
    assert failure.final.message == "model type `qwen3_moe` is not recognized."


# A child process that logs its exception with a header on every line (vLLM V0's MQ engine, NewLineFormatter)
# and re-raises it: multiprocessing's _bootstrap then prints `Process SpawnProcess-1:` and the traceback again.
LOGGED_THEN_RAISED_IN_A_CHILD = """
import logging, multiprocessing, sys

class EveryLine(logging.Formatter):
    def format(self, record):
        text = super().format(record)
        head = text[: text.index("]") + 2]
        return text.replace("\\n", "\\n" + head)

def load_weights(params):
    return params["layers.0.mlp.down_proj.weight_scale"]

def run_engine():
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EveryLine("ERROR %(asctime)s engine.py:366] %(message)s", "%m-%d %H:%M:%S"))
    log = logging.getLogger("engine")
    log.addHandler(handler)
    try:
        load_weights({})
    except BaseException:
        log.exception("")
        raise

if __name__ == "__main__":
    child = multiprocessing.get_context("spawn").Process(target=run_engine)
    child.start()
    child.join()
"""


def test_a_process_header_after_a_logged_traceback_is_not_message(tmp_path: Path) -> None:
    import subprocess

    script = tmp_path / "engine_main.py"
    script.write_text(LOGGED_THEN_RAISED_IN_A_CHILD)
    stderr = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60).stderr
    assert "\nProcess SpawnProcess-1:\n" in stderr  # what CPython printed, not what this test wrote
    found = failures(stderr)
    assert [failure.final.message for failure in found] == ["'layers.0.mlp.down_proj.weight_scale'"] * 2


def _last_line(exc: BaseException) -> str:
    return formatted(raised(exc)).rstrip("\n").splitlines()[-1]


def test_an_exception_in_a_bug_report_title_is_found() -> None:
    line = _last_line(ValueError("User-specified max_model_len (131072) is greater than the derived max_model_len"))
    (failure,) = failures(f"[Bug]: CohereForAI/c4ai-command-r-v01 : {line}\n")
    assert (failure.final.type, failure.final.message) == ("ValueError", line.partition(": ")[2])
    assert failures(f"[Bug]: vLLM slower than expected, no {line.split(':')[0]} at all\n") == []


def test_a_quote_holding_its_own_code_span_runs_to_the_last_backtick() -> None:
    line = _last_line(ValueError("Repo id must be in the form 'repo_name': '/data/m'. Use `repo_type` argument if needed."))
    (failure,) = failures(f"Serving from a local copy fails with: `{line}`\n")
    assert failure.final.message.endswith("Use `repo_type` argument if needed.")
    two = failures(f"First `{_last_line(KeyError('a'))}` then `{_last_line(ValueError('b'))}` here\n")
    assert [f.final.message for f in two] == ["'a'"]  # the first quote, closed where it closes


def test_the_shell_prompt_after_a_crash_is_not_message() -> None:
    text = formatted(raised(RuntimeError("Engine core initialization failed. See root cause above.")))
    (failure,) = failures(text + "(vllm-dev) user@workstation:~/vllm$ \n")
    assert failure.final.message == "Engine core initialization failed. See root cause above."


KV_V0_MESSAGE = ("The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV "
                 "cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
                 "the engine.")


def test_vllm_logged_error_text_alone_is_the_failure() -> None:
    # vLLM V0's run_mp_engine logs the error's text as a record of its own; a paste may keep only that.
    (failure,) = failures(f"INFO 11-29 10:00:01 [worker.py:232] Memory profiling done\n{KV_V0_MESSAGE}\n")
    assert (failure.kind, failure.final.type, failure.final.message) == ("line", "ValueError", KV_V0_MESSAGE)


def test_vllm_logged_error_text_gives_way_to_its_traceback() -> None:
    text = formatted(raised(ValueError(KV_V0_MESSAGE)))
    (failure,) = failures(f"ERROR 11-29 10:00:01 [engine.py:366] {KV_V0_MESSAGE}\n{text}")
    assert failure.kind == "traceback" and failure.final.message == KV_V0_MESSAGE and failure.final.frames


def test_a_placement_group_wait_is_a_failure_only_once_it_is_long() -> None:
    def waited(seconds: int) -> str:
        return (f"INFO 04-01 02:45:54 [ray_utils.py:214] Waiting for creating a placement group of specs for {seconds} "
                "seconds. specs=[{'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` to see if you have enough resources.\n")

    assert failures(waited(10) + waited(30) + waited(70)) == []
    found = failures(waited(70) + waited(150) + waited(310))
    assert [failure.final.type for failure in found] == ["Waiting for a Ray placement group"] * 2
