"""A pattern's dependency-version answer gives way to the release's real pins when the log names the release
(issue 28 C: "X does not match what SGLang V pins (X==Y)" with the pip command for that pin, and no alternative
flags written for other releases).  The failure is the bundled pattern sglang-flashinfer-import-error's shape:
flashinfer's wrapper import failing in SGLang's attention backend (sglang-0.5.9
sglang/srt/layers/attention/flashinfer_backend.py imports it at module level); the pin is 0.5.9's real
Requires-Dist (facts/requires.json)."""

from __future__ import annotations

from logsleuth.facts import requires
from tests.reasoning.diagnosed import first_diagnosis

IMPORT_FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/attention/flashinfer_backend.py", line 20, in <module>\n'
    "    from flashinfer import BatchPrefillWithPagedKVCacheWrapper\n"
    "ImportError: cannot import name 'BatchPrefillWithPagedKVCacheWrapper' from 'flashinfer' "
    "(/usr/local/lib/python3.10/dist-packages/flashinfer/__init__.py)\n"
)


def test_the_release_named_in_the_log_gets_its_own_pin_and_no_other_releases_flags() -> None:
    pin = requires.pinned_requirement("sglang", "0.5.9", "flashinfer-python")
    assert pin == "flashinfer-python==0.6.3"
    diagnosis = first_diagnosis("[2025-01-01 00:00:00] sglang version 0.5.9\n" + IMPORT_FAILURE)
    assert diagnosis.category == "dependency-version"
    assert pin in diagnosis.title and "0.5.9" in diagnosis.title, diagnosis.title
    assert diagnosis.fix is not None
    assert f"pip install {pin}" in diagnosis.fix.steps
    assert not diagnosis.fix.alternatives, "no other way out written for other releases"


def test_without_the_release_the_pattern_still_answers() -> None:
    diagnosis = first_diagnosis(IMPORT_FAILURE)
    assert diagnosis.pattern == "sglang-flashinfer-import-error"
