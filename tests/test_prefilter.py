"""The literal prefilter (diagnosis/prefilter.py): it may only ever rule out a text the regex cannot match, and
it spares matching most compiles (issue 14, item 4: less CPU per diagnose)."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex

from logsleuth.api import DiagnoseOptions, diagnose_text, load_library
from logsleuth.diagnosis.library import PatternSet
from logsleuth.diagnosis.prefilter import required_literals
from logsleuth.diagnosis.schema import REGEX_TIMEOUT, LazyRegex

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"

# The crash bench/bench_ssh.py ends its 1 GiB log with (an SGLang scheduler assertion).
SCHEDULER_ASSERT = """\
[2025-11-06 02:10:01 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2316, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 690, in event_loop_overlap
    batch = self.get_next_batch_to_run()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1421, in get_next_batch_to_run
    assert self.req_to_token_pool.available_size() > 0, 'req_to_token_pool is full'
AssertionError: req_to_token_pool is full

[2025-11-06 02:10:01] Received sigquit from a child process. It usually means the child failed.
"""


@pytest.fixture(scope="module")
def bundled() -> PatternSet:
    return load_library(DiagnoseOptions(include_user_patterns=False))


def _lazy_regexes(patterns: PatternSet) -> list[LazyRegex]:
    found = (expression for p in patterns.patterns for rule in p.rules for expression in rule.regexes())
    return [expression for expression in found if isinstance(expression, LazyRegex)]


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        ("CUDA out of memory", ("CUDA out of memory",)),
        ("ImportError|OSError", ("ImportError", "OSError")),
        (r"context_length \((?P<given>\d+)\) is greater", ("context_length (",)),
        (r"(?:torch\.)?OutOfMemoryError", ("OutOfMemoryError",)),
        (r"^(?:load_model|init_memory_pool\w*)$", ("load_model", "init_memory_pool")),
        (r"abc+def", ("abc",)),  # `c+`: at least one c
        (r"abcd?efgh", ("efgh",)),  # `d?`: the d may be missing
        (r"abc{2,3}xyzw", ("xyzw",)),  # a counted repeat: its character and its braces are not literal
        (r"(?:lora )?rank \d+ of", ("rank ",)),  # an optional group holds nothing required
        (r"x(?=abcdef)y", None),  # a lookahead's text is not part of the match; nothing else is long enough
        (r"(?i)cuda out of memory", None),  # inline flags: not read
        (r"(?x) a b c d", None),  # verbose mode: spaces mean nothing
        (r"\x41BCD|EFGH", None),  # an escape with arguments: not read
        (r"[a-z]+|CUDA", None),  # an alternative with no literal of its own
        (r"ab|cdef", None),  # a literal too short to rule out much
    ],
)
def test_required_literals(pattern: str, literals: tuple[str, ...] | None) -> None:
    assert required_literals(pattern) == literals


def _fixture_texts() -> list[str]:
    """Every fixture log, whole and line by line: real failure text the bundled patterns meet."""
    texts = []
    for path in sorted(FIXTURES.rglob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        texts.append(text)
        texts.extend(text.splitlines())
    return texts


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_the_prefilter_never_rules_out_a_text_its_regex_matches(bundled: PatternSet) -> None:
    """Against the real regex engine, on every fixture text: a match always passes the prefilter.  Each search
    has diagnose's own per-call time limit: a bundled regex that backtracks past it on real log text would be
    skipped in a diagnose (and, without the limit, this test would never end)."""
    texts = _fixture_texts()
    checked = 0
    for expression in _lazy_regexes(bundled):
        compiled = regex.compile(expression.pattern, expression.flags)
        for text in texts:
            if _search_within_the_limit(compiled, text):
                assert expression.may_match(text), f"{expression.pattern!r} matches but was ruled out: {text[:200]!r}"
                checked += 1
    assert checked > 200  # the fixtures do exercise the patterns


def _search_within_the_limit(compiled: regex.Pattern[str], text: str) -> bool:
    try:
        return compiled.search(text, timeout=REGEX_TIMEOUT) is not None
    except TimeoutError:
        pytest.fail(f"{compiled.pattern[:120]!r} took over {REGEX_TIMEOUT} s on {len(text)} characters: {text[:120]!r}")


def test_most_bundled_regexes_have_literals(bundled: PatternSet) -> None:
    expressions = _lazy_regexes(bundled)
    readable = [e for e in expressions if required_literals(e.pattern) is not None]
    assert len(readable) >= 0.9 * len(expressions)


def test_matching_a_failure_compiles_only_the_regexes_it_may_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's crash used to compile 134 bundled regexes (~60 ms of a remote diagnose); now only those whose
    literals are in the failure's text.  The diagnosis is the same as with the prefilter off."""
    options = DiagnoseOptions(include_user_patterns=False)
    patterns = load_library(options)  # loading compiles no bundled regex
    compiled: list[str] = []
    real_compile = regex.compile

    def counting_compile(pattern: str, flags: int = 0, **kwargs: object) -> regex.Pattern[str]:
        compiled.append(pattern)
        return real_compile(pattern, flags, **kwargs)

    monkeypatch.setattr(regex, "compile", counting_compile)
    report = diagnose_text(SCHEDULER_ASSERT, options, patterns=patterns)
    bundled_compiled = {expression.pattern for expression in _lazy_regexes(patterns)} & set(compiled)
    assert len(bundled_compiled) <= 10, sorted(bundled_compiled)

    assert report.failures  # found, and matched against every pattern (none fits this assertion)


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_diagnoses_are_the_same_with_the_prefilter_off(bundled: PatternSet, monkeypatch: pytest.MonkeyPatch) -> None:
    options = DiagnoseOptions(include_user_patterns=False)
    logs = sorted((FIXTURES / "patterns").glob("*/positive-*.log"))
    filtered = [_diagnoses(path, options, bundled) for path in logs]
    monkeypatch.setattr(LazyRegex, "may_match", lambda self, text: True)
    unfiltered = [_diagnoses(path, options, load_library(options)) for path in logs]
    assert filtered == unfiltered
    assert sum(1 for found in filtered if found and found[0] is not None) >= 30


def _diagnoses(log: Path, options: DiagnoseOptions, patterns: PatternSet) -> list[str | None]:
    report = diagnose_text(log.read_text(encoding="utf-8"), options, patterns=patterns)
    return [f.diagnosis.pattern if f.diagnosis else None for f in report.failures]
