"""Error lines a reader points at that logsleuth did not find (issue 28, stop 57, branch found21), each read as its
class.  Lines rebuilt in our own words from the printing code's format:

- an engine's ERROR record naming the error it logs the traceback of, the header of that traceback cut mid-word where
  the paste ends (vLLM's worker_base.py `logger.exception("Error executing method …. This might cause deadlock in
  distributed execution.")`; vllm-project/vllm#11260)."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.ingest.line_shapes import TRACEBACK_HEADER
from tests.test_fatal_output_shapes import OPTIONS, primary

_WORKER = "(RayWorkerWrapper pid=4102, ip=10.1.2.3) "
_STAMP = "ERROR 05-11 08:02:17 worker_base.py:467] "
_DEADLOCK = "Error executing method load_model. This might cause deadlock in distributed execution."


@pytest.mark.parametrize("kept", [len("Traceback ("), len("Traceback (mos"), len(TRACEBACK_HEADER) - 1,
                                  len(TRACEBACK_HEADER)])
def test_an_error_record_above_a_traceback_header_the_paste_cut_is_the_failure(kept: int) -> None:
    log = "\n".join([
        f"{_WORKER}INFO 05-11 08:02:15 selector.py:163] Using Pallas backend.",
        f"{_WORKER}{_STAMP}{_DEADLOCK}",
        f"{_WORKER}{_STAMP}{TRACEBACK_HEADER[:kept]}",
    ]) + "\n"
    exc_type, message, _ = primary(log)
    assert message == _DEADLOCK
    assert exc_type == "ERROR"


def test_a_cut_header_under_an_info_record_stays_no_failure() -> None:
    log = "\n".join([
        "INFO 05-11 08:02:15 selector.py:163] Using Pallas backend.",
        "INFO 05-11 08:02:16 model_runner.py:1072] Loading model weights took 1.2 GB",
        "Traceback (mos",
    ]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures
