"""Paste shapes a sweep of users' pastes showed unread (issue 28, stop 43, branch h-found11); wordings rebuilt in our
own text from the programs' formats, tracebacks printed by real CPython:

- a fatal-signal handler's banner (`!!!!!!! Segfault encountered !!!!!!!`) right under the rows of the dump printed
  before it, in the same `File "<unknown>", line 0, in f` rows (vllm-project/vllm#44780, #42348): the banner opens
  the dump, it is no source line of those rows;
- Ray's report that a worker process died (its raylet's `A worker died or was killed while executing a task …`,
  ActorDiedError's `The actor is dead because its worker process has died. …`) pasted alone (Unakar/Logic-RL#18,
  verl-project/verl#472, #2398): a kill notice; inside a RayActorError's message it stays that message;
- Ray's terminate handler (src/ray/util/logging.cc: `logging.cc:97: Unhandled exception: <type>. what(): <message>`,
  vllm-project/vllm#878, #13354, hiyouga/EasyR1#52, ray-project/ray#44296): a C++ exception that ended the process;
- an issue title quoting the exception in backticks or quotes (sgl-project/sglang#3470): the closing mark is no part
  of the message."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.tracebacks.cpp_names import demangled
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

# Rows of a native dump in the handler's format, innermost first; the last rows of one printed before the banner.
EARLIER_DUMP_TAIL = [
    '  File "<unknown>", line 0, in Py_RunMain',
    '  File "<unknown>", line 0, in Py_BytesMain',
    '  File "<unknown>", line 0, in _start',
]
SEGFAULT_DUMP = [
    "!!!!!!! Segfault encountered !!!!!!!",
    '  File "<unknown>", line 0, in cudaMemcpyAsync',
    '  File "<unknown>", line 0, in copy_cache_blocks(at::Tensor&, at::Tensor&, long)',
    '  File "<unknown>", line 0, in torch::jit::invokeOperatorFromPython',
]


@pytest.mark.parametrize("between", [[""], [], ["", ""]])
def test_a_segfault_banner_under_the_rows_of_an_earlier_dump_opens_its_own_dump(between: list[str]) -> None:
    log = "\n".join([*EARLIER_DUMP_TAIL, *between, *SEGFAULT_DUMP]) + "\n"
    report = diagnose_text(log, OPTIONS)
    assert [group.failure.final.type for group in report.failures] == ["SIGSEGV"]
    assert report.failures[0].failure.final.message == "Segfault encountered"


def test_the_rows_of_a_native_dump_alone_are_still_a_failure() -> None:
    report = diagnose_text("\n".join(EARLIER_DUMP_TAIL) + "\n", OPTIONS)
    assert len(report.failures) == 1 and report.failures[0].failure.kind == "traceback"


def test_an_unindented_source_line_under_a_frame_still_belongs_to_its_traceback() -> None:
    # the look-alike: a frame's source line the paste lost the indentation of is no banner
    printed = real_traceback("""
        def load():
            raise ValueError("checkpoint shard 3 is missing")

        load()
    """)
    log = "\n".join(line.lstrip() if line.strip().startswith("raise") else line for line in printed.splitlines()) + "\n"
    assert primary(log)[:2] == ("ValueError", "checkpoint shard 3 is missing")


RAYLET_WORKER_DIED = (
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the "
    "problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff51c0 Worker ID: 9a1b Node ID: 4c2d "
    "Worker IP address: 10.1.2.3 Worker port: 10011 Worker PID: 4242 Worker exit type: SYSTEM_ERROR Worker exit "
    "detail: Worker unexpectedly exits with a connection error code 2. End of file."
)
ACTOR_DEAD = (
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
    "Worker unexpectedly exits with a connection error code 2. End of file."
)


RAY_GUESSES = (" There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high "
               "memory usage. (2) ray stop --force is called.")


@pytest.mark.parametrize("line", [RAYLET_WORKER_DIED, ACTOR_DEAD, ACTOR_DEAD + RAY_GUESSES])
@pytest.mark.parametrize("prose_after", ["", "\nI lowered the batch size and it still happens on the A800 nodes.\n"])
def test_rays_report_of_a_dead_worker_alone_is_a_kill_notice(line: str, prose_after: str) -> None:
    report = diagnose_text(line + "\n" + prose_after, OPTIONS)
    assert report.failures, line
    group = report.failures[0]
    assert group.failure.kind == "killed"
    assert "died" in group.failure.final.message
    # Ray's list of causes it guesses at is no fact of this death: no OOM read from it
    assert "potential root causes" not in group.failure.final.message
    assert group.diagnosis is not None and group.diagnosis.category == "process-killed"


@pytest.mark.parametrize("ray_first", [False, True])
def test_rays_report_of_a_dead_worker_never_outranks_the_exception_beside_it(ray_first: bool) -> None:
    printed = real_traceback("""
        def load():
            raise ValueError("The checkpoint has 32 layers, the config says 28")

        load()
    """)
    log = RAYLET_WORKER_DIED + "\n" + printed if ray_first else printed + RAYLET_WORKER_DIED + "\n"
    assert primary(log)[:2] == ("ValueError", "The checkpoint has 32 layers, the config says 28")


def test_the_dead_actors_line_inside_a_ray_actor_error_stays_its_message() -> None:
    printed = real_traceback(f"""
        class RayActorError(Exception):
            pass

        def get(ref):
            raise RayActorError("The actor died unexpectedly before finishing this task.\\n\\tpid: 4242\\n{ACTOR_DEAD}")

        get(1)
    """)
    report = diagnose_text(printed, OPTIONS)
    assert [group.failure.kind for group in report.failures] == ["traceback"]
    assert report.failures[0].failure.final.type.endswith("RayActorError")
    assert "actor is dead because" in report.failures[0].failure.final.message


def test_a_healthy_ray_start_is_no_failure() -> None:
    log = ("2025-06-02 10:00:01,100\tINFO worker.py:1888 -- Started a local Ray instance. View the dashboard at "
           "127.0.0.1:8265\n(pid=4242) worker ready, 8 GPUs visible\n")
    assert not diagnose_text(log, OPTIONS).failures


RAY_TERMINATE = [
    "(pid=7001) [2025-03-03 00:06:39,045 E 7001 7001] logging.cc:108: Unhandled exception: St12system_error. "
    "what(): Resource temporarily unavailable",
    "(pid=7001) [2025-03-03 00:06:39,103 E 7001 7001] logging.cc:115: Stack trace: ",
    "(pid=7001)  /opt/venv/lib/python3.11/site-packages/ray/_raylet.so(+0x1146a2a) [0x7f49e7382a2a] ray::operator<<()",
    "(pid=7001) /opt/venv/lib/python3.11/site-packages/ray/_raylet.so(+0x1149cb2) [0x7f49e7385cb2] ray::TerminateHandler()",
]


@pytest.mark.parametrize("prefixed", [True, False])
def test_rays_terminate_handler_names_the_cpp_exception_that_ended_the_process(prefixed: bool) -> None:
    lines = RAY_TERMINATE if prefixed else [line.removeprefix("(pid=7001) ") for line in RAY_TERMINATE]
    report = diagnose_text("\n".join(lines) + "\n", OPTIONS)
    assert report.failures
    final = report.failures[0].failure.final
    assert (final.type, final.message.splitlines()[0]) == ("std::system_error", "Resource temporarily unavailable")


# typeid's names as Ray prints them -> as a person writes them; below, names it cannot read (cut, a function's, a
# length past the end): left as printed
DEMANGLED = {"St12system_error": "std::system_error", "N3c105ErrorE": "c10::Error",
             "N5boost10wrapexceptINS_6system12system_errorEEE": "boost::wrapexcept<boost::system::system_error>"}
UNREADABLE = ("N5boost10wrapexceptINS_6system12system_errorEE", "_Z3foov", "N99boostE")


@pytest.mark.parametrize("printed", [*DEMANGLED, *UNREADABLE])
def test_a_mangled_type_name_reads_as_written(printed: str) -> None:
    assert demangled(printed) == DEMANGLED.get(printed, printed)


def test_a_log_line_that_only_says_unhandled_exception_is_no_terminate_handler() -> None:
    log = "[2025-03-03 00:06:39,045 I 7001 7001] task_manager.cc:210: Unhandled exception count: 0\n"
    assert not diagnose_text(log, OPTIONS).failures


@pytest.mark.parametrize("mark", ["`", '"', "**"])
def test_an_issue_title_quoting_the_exception_keeps_its_closing_mark_out(mark: str) -> None:
    log = f"[Bug] serving on 2 nodes, failed with {mark}RuntimeError: CUDA error: invalid device ordinal{mark}\n"
    assert primary(log)[:2] == ("RuntimeError", "CUDA error: invalid device ordinal")
