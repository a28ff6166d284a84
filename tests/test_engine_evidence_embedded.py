"""vLLM's own record after other text on its line (issue 28, item 4; branch engineclues2): a re-logger's level or a
viewer's margin in front (`ERROR:    `, `| `, `│ `: vllm-project/vllm#4760, #8016), an indent (vllm-project/vllm#32090,
its process prefix and a header the paste cut), an inline code span.  vLLM's logger writes any VLLM_LOGGING_PREFIX
before its level (vllm/logger.py _FORMAT), so text before the record is its own format too.  Its process prefix is read
as one at a line's start, its header as vLLM's header; a module that logs while `import vllm` runs, a cut header with
no process prefix, a process that is not vLLM's, and a record inside a word decide nothing; the stronger evidence
already ranked and a paste showing both engines keep their decision.  The lines are our own, in vLLM's format; the
crash is real CPython output of a script with no engine frame, and SGLang's frames are real CPython frames of a
module laid out as SGLang's."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.ingest import engine_evidence
from tests.helpers import real_traceback, traceback_in_package
from tests.test_engine_evidence_env import CRASH_CODE
from tests.test_engine_evidence_more import engine_of


def _crash() -> str:
    """A script's own crash (real CPython output, cached): no engine frame, header or command."""
    return real_traceback(CRASH_CODE, "run_job.py")


@pytest.mark.parametrize(
    "lines",
    [
        "ERROR:    (Worker_TP1 pid=3534) ERROR 10-11 22:28:17 [multiproc_executor.py:694] RuntimeError: Could not find nvcc\n",
        "  (APIServer pid=1) ERROR 01-10 07:09:06 [serving_completio\n",  # indented, and cut by the paste
        "`ERROR 04-29 21:35:55 [engine.py:448] Bfloat16 is only supported on GPUs with compute capability of at least 8.0.`\n",
        "| INFO 05-11 08:17:48 api_server.py:473] the server is starting |\n",  # a table's margin, the older header
        "│ CRITICAL 08-30 19:24:28 launcher.py:82] AsyncLLMEngine has failed, terminating server process │\n",
        "[node-3] INFO 11-12 16:25:35 [core.py:90] Initializing a V1 engine core\n",  # a VLLM_LOGGING_PREFIX of the user's
    ],
)
def test_vllms_record_after_other_text_names_vllm(lines: str) -> None:
    assert engine_of(lines + _crash()) == "vllm"


@pytest.mark.parametrize(
    "lines",
    [
        "`INFO 04-16 21:06:25 [__init__.py:243] Automatically detected platform cuda.`\n",  # logs while `import vllm` runs
        "  ERROR 01-10 07:09:06 [serving_completio\n",  # a cut header alone
        "  (WorkerDict pid=5) ERROR 01-10 07:09:06 [serving_completio\n",  # verl's actor: not vLLM's process
        "MYERROR 04-29 21:35:55 [engine.py:448] inside a word\n",
        "the log said ERROR at 04-29 21:35:55 in engine.py line 448\n",
    ],
)
def test_look_alikes_of_an_embedded_record_name_nothing(lines: str) -> None:
    assert engine_of(lines + _crash()) is None


def test_an_embedded_record_shows_each_part_it_holds() -> None:
    assert engine_evidence.embedded_vllm_record("  (EngineCore_DP0 pid=7) INFO 01-10 07:09:06 [core.py:1] up") == ("vllm", "vllm")
    assert engine_evidence.embedded_vllm_record("  (pid=7) INFO 01-10 07:09:06 [core.py:1] up") == (None, "vllm")
    assert engine_evidence.embedded_vllm_record("  (SGLangHttpServer pid=7) INFO 01-10 07:09:06 [x") == ("sglang", None)
    assert engine_evidence.embedded_vllm_record("a line with no record at all") == (None, None)


def test_an_embedded_record_loses_to_stronger_evidence_and_to_both_engines(tmp_path: Path) -> None:
    """SGLang 0.3 to 0.5 ran vLLM's layers and imported its logger: vLLM's record in a SGLang launch is SGLang's run."""
    record = "  (Worker_TP0 pid=42) ERROR 03-05 05:40:33 [multiproc_executor.py:880] worker failed\n"
    command = "python3 -m sglang.launch_server --model-path /models/m --tp 2\n"
    assert engine_of(command + record + _crash()) == "sglang"  # the launch command outranks a record's prefix
    sglang_frames = traceback_in_package(tmp_path, "sglang/srt/managers/scheduler.py", "raise RuntimeError('no room')")
    header = "[2025-03-01 10:00:00 TP0] Scheduler hit an exception:\n"
    assert engine_of(header + record + sglang_frames) == "sglang"  # both engines' headers: the failure's frames decide
    assert engine_of(header + record + _crash()) == "sglang"  # a line under SGLang's record is that record's: not read
    assert engine_of(_crash() + record + header) is None  # both engines' records, and no frame or record of the failure's


def test_a_long_line_is_read_in_linear_time() -> None:
    assert engine_evidence.embedded_vllm_record("(" + "a" * 65536 + " pid=1") == (None, None)
    assert engine_evidence.embedded_vllm_record("(a pid=1) " * 6000 + "ERROR 01-01 00:00:00 [") == (None, None)
