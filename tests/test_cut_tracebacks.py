"""Tracebacks a paste cut or mangled (issue 28, branch h-cut), on real CPython tracebacks rebuilt in our own words:

- a traceback whose lines lost their indentation, with an engine's annotated assignment among its source lines
  (`self.comm: ncclComm_t = self.nccl.ncclCommInitRank(`, both engines' pynccl.py: sgl-project/sglang#8974) is one
  traceback, its exception the real one, not the source line read as `Type: message`."""

from __future__ import annotations

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

# A communicator opened the way both engines' NCCL wrapper opens it, failing in the library's check.
NCCL_INIT = real_traceback('''
class Library:
    def init_rank(self):
        self.check(2)

    def check(self, code):
        raise RuntimeError("NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")


class Communicator:
    def __init__(self):
        self.nccl = Library()
        self.comm: int = self.nccl.init_rank(
        )


Communicator()
''', "sglang/srt/distributed/device_communicators/pynccl.py")


def test_a_source_line_annotating_an_attribute_of_self_is_no_exception_line_when_indentation_is_lost() -> None:
    flat = "\n".join(line.strip() for line in NCCL_INIT.splitlines())
    assert "self.comm: int = self.nccl.init_rank(" in flat.splitlines()
    report = diagnose_text(flat, OPTIONS)
    assert len(report.failures) == 1
    assert primary(flat)[:2] == (
        "RuntimeError", "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")


def test_an_exception_of_a_module_whose_name_starts_with_self_is_still_read() -> None:
    from logsleuth.tracebacks.grammar import EXCEPTION_LINE

    assert EXCEPTION_LINE.match("selfcheck.CheckError: the check failed")["type"] == "selfcheck.CheckError"
    assert EXCEPTION_LINE.match("self.comm: ncclComm_t = self.nccl.ncclCommInitRank(") is None
