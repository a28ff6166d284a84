"""What review 4 of stop 52 found wrong in the find16 change (issue 28), each held as a class:

- M1: a record that prints the exception's type above a traceback the paste cut (SGLang's scheduler, `Scheduler hit an
  exception: {get_exception_traceback()}`, srt/managers/scheduler.py; vLLM's `Error in model execution: …`) was said
  to have its type inferred from CPython's template; only a record that prints no type (SGLang's request handler's
  `Error in request: {e}`, srt/entrypoints/openai/serving_base.py, sgl-project/sglang#9625) leaves it inferred;
- M2: the router's launcher refusing its arguments (sglang_router/launch_router.py `logger.error(f"Error starting
  router: {e}")`, sgl-project/sglang#2796) was put in the router category by the words of the type logsleuth gave it
  (`sgl-router failed`), with a Rust panic's checks; it is read by the launcher's own row, and a companion type's words
  name no category;
- M3: LMCache's `LMCache ERROR: LMCacheEngine marked as init failed: list index out of range` (LMCache/LMCache#2854)
  was explained as a bug in the engine's own code; a companion tool's failure is never engine-bug's;
- L1: the Rust router's tracing records put the level before the target (`<time> ERROR sglang_router_rs::server:
  src/server.rs:N: …`, as tests/test_fatal_output_found12.py's router worker records), so its failed start was missed;
- L2: argparse's own wordings for a required mutually exclusive group (`one of the arguments %s is required`) and a
  subcommand named by its choices (`argument {serve,bench}: invalid choice: …`, Lib/argparse.py _get_action_name)
  were read as another program's `error:` line."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback, without_exception_line
from tests.test_fatal_output_found16 import ROUTER_START_FAILED
from tests.test_fatal_output_shapes import OPTIONS, primary


def _printed_type_error() -> tuple[str, str]:
    """A real TypeError's traceback and its message (a call with a keyword the function does not take)."""
    printed = real_traceback("""
        def apply_chat_template(messages, tokenize=False):
            return messages

        apply_chat_template([], reasoning_effort="low")
    """)
    return printed, printed.strip().splitlines()[-1].split(": ", 1)[1]


def _final_block(log: str):  # type: ignore[no-untyped-def]
    report = diagnose_text(log, OPTIONS)
    assert report.failures, log
    return report.failures[0].failure.exceptions[-1]


def test_a_record_that_prints_the_type_over_a_cut_traceback_is_not_said_inferred() -> None:
    printed, message = _printed_type_error()
    log = f"[2025-08-26 10:38:03 TP0] Scheduler hit an exception: TypeError: {message}\n" + without_exception_line(printed)
    block = _final_block(log)
    assert (block.type, block.message) == ("TypeError", message)
    assert block.typed_from_message is False


def test_a_record_that_prints_no_type_over_a_cut_traceback_is_still_said_inferred() -> None:
    printed, message = _printed_type_error()
    block = _final_block(f"[2025-08-26 10:38:03] Error in request: {message}\n" + without_exception_line(printed))
    assert (block.type, block.typed_from_message) == ("TypeError", True)


def _diagnosis_text(log: str) -> tuple[str | None, str]:
    group = diagnose_text(log, OPTIONS).failures[0]
    return (group.diagnosis.category if group.diagnosis else None), repr(group.diagnosis)


def test_the_router_launchers_refusal_is_read_by_its_own_row_not_by_a_panics() -> None:
    category, said = _diagnosis_text("$ python -m sglang_router.launch_router\n" + ROUTER_START_FAILED + "\n")
    assert category == "router"
    assert "'Error starting router:'" in said
    assert "'sgl-router'" not in said
    assert "panicked at" not in said and "RUST_BACKTRACE" not in said


def test_a_companion_types_own_words_name_no_category() -> None:
    record = "[Router (Python)] 2025-01-09 00:28:10 - ERROR - Failed to initialize the worker pool: bad value"
    category, said = _diagnosis_text(record + "\n")
    assert category != "router"
    assert "'sgl-router'" not in said


@pytest.mark.parametrize("said", ["list index out of range", "'NoneType' object has no attribute 'split'"])
def test_a_companion_tools_failed_start_is_never_blamed_on_the_engines_code(said: str) -> None:
    log = "\n".join([
        "(Worker_TP0 pid=1201) [2026-03-23 13:46:57,783] LMCache INFO: Loading LMCache config file lmcache.yaml (utils.py:66)",
        f"LMCache ERROR: LMCacheEngine marked as init failed: {said}",
    ]) + "\n"
    kind, _, category = primary(log)
    assert kind == "LMCache failed"
    assert category != "engine-bug"
    assert "own code. Try a newer release" not in _diagnosis_text(log)[1]


@pytest.mark.parametrize("record", [
    "2025-09-03 12:10:55 ERROR sgl_model_gateway::server: src/server.rs:410: Failed to start router: Address already in "
    "use (os error 98)",
    "2025-09-03 12:10:55 ERROR sglang_router_rs::server: Failed to start server: Address already in use (os error 98)",
])
def test_the_rust_routers_tracing_record_of_a_failed_start_is_the_routers_failure(record: str) -> None:
    kind, message, _ = primary(record + "\n")
    assert kind == "sgl-router failed"
    assert message.startswith("Failed to start ")


def test_the_rust_routers_record_of_a_request_it_survived_stays_no_start_failure() -> None:
    record = ("2025-09-03 12:10:55 ERROR sglang_router_rs::routers::http::pd_router: src/routers/http/pd_router.rs:1290: "
              "Stream error from decode server http://10.0.0.7:30000: error decoding response body")
    assert all(group.failure.final.type != "sgl-router failed" for group in diagnose_text(record + "\n", OPTIONS).failures)


def _argparse_error(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.suppress(SystemExit):
        parser.parse_args(argv)
    return stderr.getvalue().strip().splitlines()[-1]


def test_argparses_required_group_and_subcommand_choice_errors_stay_the_failure() -> None:
    grouped = argparse.ArgumentParser(prog="lm_eval")
    group = grouped.add_mutually_exclusive_group(required=True)
    group.add_argument("--tasks")
    group.add_argument("--config")
    with_subcommands = argparse.ArgumentParser(prog="mytool")
    commands = with_subcommands.add_subparsers()
    commands.add_parser("serve")
    commands.add_parser("bench")
    for line in (_argparse_error(grouped, []), _argparse_error(with_subcommands, ["run"])):
        assert primary(line + "\n")[0] == "UsageError", line
