"""The rules' regexes are bounded: a long message (a line may be 64 KiB) of the shapes that make a careless regex
backtrack quadratically is read in one pass.  A hang guard, not a timing: the alarm fires only on a hang."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from tests.reasoning.diagnosed import app_traceback
from tests.test_fuzz import no_hang  # the suite's hang guard (SIGALRM, 20 s)

NO_PATTERNS = PatternSet(patterns=[], errors=[])  # so that every failure reaches the rules


@pytest.mark.parametrize("filler", ["a", "1", "a.", "1.", "a:", "('", "[a", "-"])
def test_a_long_message_is_read_in_one_pass(filler: str) -> None:
    # "Address already in use" and "TCPStore ... Connection refused" send the message to the port and address regexes
    message = "OSError: [Errno 98] Address already in use; TCPStore Connection refused " + filler * (60_000 // len(filler))
    with no_hang():
        report = diagnose_text(app_traceback(message), DiagnoseOptions(), patterns=NO_PATTERNS)
    assert report.failures


@pytest.mark.parametrize("filler", ["a=", "x='", 'x="', "'a': '", "k=v, "])
def test_a_long_message_of_name_value_pairs_is_read_in_one_pass(filler: str) -> None:
    """A settings dump's pairs (category_score._SETTINGS_DUMP, applied to every message a category is scored on):
    `a=a=a=…` makes every `a=` a new start, an unclosed `x='` a value that runs to the line's end."""
    message = "RuntimeError: cache reset failed for " + filler * (60_000 // len(filler))
    with no_hang():
        report = diagnose_text(app_traceback(message), DiagnoseOptions(), patterns=NO_PATTERNS)
    assert report.failures
