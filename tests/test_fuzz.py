"""Fuzz the line normalizer, the failure scanner and the whole pipeline: arbitrary bytes and
mutated real logs (CPython's own tracebacks embedded by the ground-truth generator) never
raise and never hang.

Profiles: `CI=true` runs 2,000 examples per test; locally 300 (`HYPOTHESIS_PROFILE` overrides).
"""

from __future__ import annotations

import os
import random
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from logsleuth.facts.message_templates import opening_matched
from logsleuth.ingest.lines import MAX_LINE_BYTES
from logsleuth.ingest.normalize import normalize_chunks
from logsleuth.tracebacks.prose_failures import retyped_variants
from logsleuth.tracebacks.scanner import FailureScanner
from tests.helpers import traceback_of_installed

sys.path.insert(0, str(Path(__file__).parent / "groundtruth"))
from embed import INNER_STYLES, OUTER_STYLES, Case, build, variant_ok  # noqa: E402
from runner import raw_shapes  # noqa: E402

# No deadline: a per-example time limit is a timing assertion that a busy machine fails; no_hang() catches a hang.
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large], "derandomize": False}
settings.register_profile("ci", max_examples=2000, **_COMMON)
settings.register_profile("dev", max_examples=300, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev"))

HANG_SECONDS = 20  # far above any real example (well under a second each); a quadratic regex on a 64 KiB line takes minutes
NO_PATTERNS = PatternSet(patterns=[], errors=[])


@contextmanager
def no_hang() -> Iterator[None]:
    """Fail (instead of blocking the suite) if one example loops forever."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"example ran longer than {HANG_SECONDS}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_pipeline(data: bytes, chunk: int) -> None:
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)] or [b""]
    scanner = FailureScanner()
    for line in normalize_chunks(chunks):
        assert len(line.text) <= MAX_LINE_BYTES
        scanner.feed(line)
    for failure in scanner.finish():
        assert failure.exceptions  # every failure names at least one (maybe empty, truncated) block
    diagnose_text(data.decode("utf-8", errors="surrogateescape"), DiagnoseOptions(all_failures=True), patterns=NO_PATTERNS)
    diagnose_text(data.decode("utf-8", errors="surrogateescape"), DiagnoseOptions(), patterns=NO_PATTERNS)


@pytest.fixture(scope="module")
def seed_logs() -> list[bytes]:
    """A few dozen real logs: every shape once, in varied styles."""
    shapes = raw_shapes()
    rng = random.Random(7)
    logs = []
    for name in sorted(shapes):
        variant = rng.choice([v for v in ("whole", "trunc_start", "trunc_end", "bare") if variant_ok(shapes[name], v)])
        ranks = 1 if shapes[name]["kind"] == "usage" else rng.choice((1, 2, 3))
        case = Case(name, variant, rng.choice(INNER_STYLES), rng.choice(OUTER_STYLES), ranks, rng.random() < 0.5,
                    rng.random() < 0.3, rng.randrange(10**6))
        logs.append(build(case, shapes[name])[0].encode("utf-8"))
    return logs


@given(data=st.binary(max_size=4096), chunk=st.integers(1, 5000))
def test_arbitrary_bytes(data: bytes, chunk: int) -> None:
    with no_hang():
        run_pipeline(data, chunk)


_SMALL_GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=64),
    st.sampled_from([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x00" * 8, b"\x1b[31m", b"\x1b]0;t", b"\r", b"\r\r\n"]),
)
# Huge lines (around and beyond MAX_LINE_BYTES) are costly to push through, so they come less often.
_GARBAGE = st.one_of(
    _SMALL_GARBAGE,
    _SMALL_GARBAGE,
    _SMALL_GARBAGE,
    st.builds(lambda n, c: c * n, st.integers(MAX_LINE_BYTES - 2, MAX_LINE_BYTES * 2), st.sampled_from([b"A", b"\x00", b" "])),
)
_MUTATION = st.tuples(st.sampled_from(["delete", "duplicate", "swap", "insert", "splice", "truncate", "flood"]),
                      st.integers(0, 10**6), st.integers(0, 10**6), _GARBAGE)


def mutate(log: bytes, mutations: list[tuple[str, int, int, bytes]]) -> bytes:
    lines = log.split(b"\n")
    for op, a, b, garbage in mutations:
        if not lines:
            lines = [garbage]
            continue
        i, j = a % len(lines), b % len(lines)
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "insert":
            lines.insert(i, garbage)
        elif op == "splice":  # garbage inside a line: invalid UTF-8, NULs, escapes, a huge run
            cut = b % (len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + garbage + lines[i][cut:]
        elif op == "flood":  # one line repeated many times (a header flood must not cost quadratic time)
            lines[i:i] = [lines[i][:1000]] * (b % 300)
        elif op == "truncate":
            lines = lines[: i + 1]
            lines[-1] = lines[-1][: b % (len(lines[-1]) + 1)]
    return b"\n".join(lines)


# One line of 64 KiB long runs of a single character: a regex that searches from every position inside the run
# costs time quadratic in its length (CI found one in the dependency rule: 211 s for this log).
# CI later found two more inside a line, where text follows the run: a lazy `.*?` before `\s*$` (the one-line errors of
# tracebacks/typeless_errors.py) and `(?:\s|\.\.\.+|…)+$`, exponential on a run of dots (facts/message_templates.py).
_RUNS = {"letters": b"A", "digits": b"1", "spaces": b" ", "colons": b":", "dotted": b"a.", "spaced words": b"got ",
         "dots": b".", "tabs": b"\t", "class words": b"ForA"}


@pytest.mark.parametrize("placement", ["a line of its own", "the exception's message", "inside the exception's message"])
@pytest.mark.parametrize("run", sorted(_RUNS))
def test_a_long_run_of_one_character_is_read_in_linear_time(seed_logs: list[bytes], run: str, placement: str) -> None:
    fill = _RUNS[run] * (MAX_LINE_BYTES // len(_RUNS[run]))
    log = seed_logs[16]
    if placement == "a line of its own":
        log = mutate(log, [("insert", 12, 0, fill)])
    elif placement == "the exception's message":  # appended to the last exception line of the log: every rule reads it
        head, sep, last = log.rstrip(b"\n").rpartition(b"\n")
        log = head + sep + last + b" " + fill + b"\n"
    else:  # text after the run: a lazy `.*?` must try every place in it
        head, sep, last = log.rstrip(b"\n").rpartition(b"\n")
        middle = len(last) // 2
        log = head + sep + last[:middle] + fill + last[middle:] + b"\n"
    with no_hang():  # a hang guard, not a timing: the fixed code takes well under a second
        report = diagnose_text(log.decode("utf-8", errors="surrogateescape"), DiagnoseOptions(all_failures=True))
    assert report.failures


# One-line errors with no traceback, each read by its own rule (our own text, in the printing programs' formats), after
# an engine's start-up line (alone, some are a failure only in a paste of an engine's run).
_ENGINE_STARTED = "[2025-06-01 10:00:01] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.12 GB\n"
_ONE_LINE_ERRORS = {
    "docker": "docker: Error response from daemon: {run}: failed to create task for container: OCI runtime create failed: x",
    "compiler": "kernel.cu:12:3: error: no matching function {run} for call",
    "nvcc": "nvcc fatal   : Unsupported gpu {run} architecture",
    "slurm": "srun: error: Unable to allocate resources: {run} Invalid partition name",
    "gcloud": "ERROR: (gcloud.run.deploy) The user-provided container failed to start {run} and listen on the port",
    "pydantic": "  Value error, the model's length {run} is too large [type=value_error, input_value=1, input_type=int]",
    "hydra": "Error executing job with overrides: ['a=1', {run} 'b=2']",
    "undefined symbol": "libcudart.so.12: undefined symbol: cudaFoo, version {run} libcudart.so.12",
    "llvm": "LLVM ERROR: Cannot select {run} x",
    "architecture": "ValueError: Qwen{run}ForCausalLM has no vLLM implementation and the Transformers implementation is "
                    "not compatible with vLLM.",
}


@pytest.mark.parametrize("run", ["spaces", "dots", "tabs", "spaced words", "class words"])
@pytest.mark.parametrize("shape", sorted(_ONE_LINE_ERRORS))
def test_a_long_run_inside_a_one_line_error_is_read_in_linear_time(shape: str, run: str) -> None:
    fill = (_RUNS[run] * (MAX_LINE_BYTES // len(_RUNS[run]) - 200)).decode()
    log = _ENGINE_STARTED + _ONE_LINE_ERRORS[shape].format(run=fill) + "\n"
    with no_hang():  # a hang guard, not a timing: the fixed code takes well under a second
        report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.failures



# The same inside an error a sentence in Chinese, Japanese or Korean prose states, where the sentence's full-width
# punctuation is searched for after the message (grammar.WIDE_SENTENCE_END; review 1 of stop 50: `\s*` before the mark
# was quadratic on a run of spaces with no mark after it): argparse's error line and an exception named inline.
_WIDE_PROSE_ERRORS = {
    "usage": "启动时显示vllm: error: unrecognized arguments: a{run}b",
    "inline exception": "启动就报错RuntimeError: a{run}b",
}


@pytest.mark.parametrize("run", ["spaces", "tabs"])
@pytest.mark.parametrize("shape", sorted(_WIDE_PROSE_ERRORS))
def test_a_long_run_inside_an_error_stated_in_wide_script_prose_is_read_in_linear_time(shape: str, run: str) -> None:
    fill = (_RUNS[run] * (MAX_LINE_BYTES // len(_RUNS[run]) - 200)).decode()
    log = _WIDE_PROSE_ERRORS[shape].format(run=fill) + "\n"
    with no_hang():  # a hang guard, not a timing: the fixed code takes well under a second
        report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.failures


# A benchmark's result dump pasted with the failure: long lines that name a benchmark (`"benchmark_duration": …`),
# where a launch command is looked for (ingest/launch.py: `vllm bench latency`, `python -m sglang.bench_one_batch`).
# Review 2 of stop 51: the command's pattern tried a path (`\S*/`) and a run of environment assignments from every
# place of such a line, seconds a line.
_BENCH_RUNS = {"letters": "a", "path": "a/", "assignments": "A=1 "}


@pytest.mark.parametrize("run", sorted(_BENCH_RUNS))
def test_a_benchmark_s_long_result_lines_are_read_in_linear_time(run: str) -> None:
    line = '{"benchmark_duration": 12.5, "note": "' + _BENCH_RUNS[run] * (8000 // len(_BENCH_RUNS[run])) + '"}'
    log = "\n".join([line] * 16) + "\nzmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:30236')\n"
    with no_hang():  # a hang guard, not a timing: the fixed code takes well under a second
        report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.failures


# A config override's value read for its rope keys (reasoning/rope_type.py, review 5 of stop 51): braces that never
# close, and braces nested past the parsers' recursion limit, on a 64 KiB line before get_rope's refusal.
_ROPE_REFUSAL = "ValueError: Unknown RoPE scaling type extended\n"
_OVERRIDE_VALUES = {
    "unclosed": "vllm serve m --hf-overrides '{run}'",
    "nested": "vllm serve m --hf-overrides '{run}{closed}'",
    "dump": "Namespace(hf_overrides={run}{closed}, model='m')",
}


@pytest.mark.parametrize("shape", sorted(_OVERRIDE_VALUES))
def test_a_long_config_override_value_is_read_in_linear_time(shape: str) -> None:
    depth = MAX_LINE_BYTES // 2 - 200
    line = _OVERRIDE_VALUES[shape].format(run="{" * depth, closed="}" * depth)
    with no_hang():  # a hang guard, not a timing
        report = diagnose_text(line + "\n" + _ROPE_REFUSAL, DiagnoseOptions(include_user_patterns=False))
    assert report.failures


# A run of digits after sgl-kernel's library name, no `.so` after it (review 3 of stop 51: `cpython-\d+[\w-]*` of
# ingest/engine_evidence.py tried every split of the run, 65 s for this line): no library named, so no engine.
@pytest.mark.parametrize("opening", ["common_ops.cpython-3", "common_ops.cpython-310-x86_64-"])
def test_a_run_after_sgl_kernels_library_name_is_read_in_linear_time(opening: str) -> None:
    log = opening + "1" * (MAX_LINE_BYTES - 200) + "\n"
    with no_hang():  # a hang guard, not a timing: the fixed code takes well under a second
        report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.engine is None


# A run of spaces in a quoted message that no mark follows (review 3 of stop 51: ` +(?=[.,…])` of
# tracebacks/prose_failures.py tried the run from each of its spaces; bounded today by the quoting readers' limits,
# so the function is driven directly): the spaces before the mark only are taken off.
def test_a_run_of_spaces_in_a_retyped_message_is_read_in_linear_time() -> None:
    message = "a" + " " * (MAX_LINE_BYTES - 200) + "b ."
    with no_hang():  # a hang guard, not a timing: the fixed code takes well under a millisecond
        assert retyped_variants([message]) == ["a b."]


# A configuration check's sentence that ties two settings (facts/categories.toml, invalid-flag-value's settings row:
# `X=value requires Y`), read in every message of a chained traceback: a long run of the characters a setting may
# follow (`(`, `,`) and a value (`a_b=`) in the first exception's message, then the engine's check raised from
# vllm/config/observability.py (its template, the raise site index).  Review 1 of stop 52: the value's `\S+` ran
# through every later start, 30 s for this log.
_SETTING_STARTS = {"parenthesised": "(a_b=", "comma-separated": ",a_b=x"}
_OBSERVABILITY = """
def check(name):
    try:
        {}[name]  # a KeyError whose message is the name
    except KeyError:
        raise ValueError("collect_detailed_traces requires `--otlp-traces-endpoint` to be set.")
"""


@pytest.mark.parametrize("run", sorted(_SETTING_STARTS))
def test_a_run_of_settings_before_a_settings_check_is_read_in_linear_time(tmp_path: Path, run: str) -> None:
    fill = _SETTING_STARTS[run] * ((MAX_LINE_BYTES - 200) // len(_SETTING_STARTS[run])) + " require"
    printed = traceback_of_installed(tmp_path, {"vllm/config/observability.py": _OBSERVABILITY},
                                     "from vllm.config.observability import check\n"
                                     f"check({fill!r})\n").stderr
    assert "ValueError: collect_detailed_traces requires" in printed, printed[-2000:]
    with no_hang():  # a hang guard, not a timing: the fixed code takes well under a second
        report = diagnose_text(printed, DiagnoseOptions(include_user_patterns=False), patterns=NO_PATTERNS)
    assert report.failures


TEMPLATE = "Rank {} scheduler died during initialization (exit code: {})."


@pytest.mark.parametrize("cut", ["...", " …", "....... ", " "])
def test_a_cut_message_ends_where_its_dots_begin(cut: str) -> None:
    assert opening_matched(TEMPLATE, "Rank 0 scheduler died" + cut) == opening_matched(TEMPLATE, "Rank 0 scheduler died")


@pytest.mark.parametrize("run", [".", " ", ". ", "…"])
def test_a_run_of_dots_inside_a_message_is_read_in_linear_time(run: str) -> None:
    message = "Rank 0 scheduler died " + run * 1000 + " while loading"  # under MAX_MESSAGE with spaces squeezed
    with no_hang():  # a hang guard, not a timing: `(?:\s|\.\.\.+|…)+$` took a second for 40 dots, longer than a day for 60
        matched = opening_matched(TEMPLATE, message)
    assert matched == opening_matched(TEMPLATE, "Rank 0 scheduler died " + run * 3 + " while loading")


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@example(index=16, mutations=[("insert", 12, 0, b"A" * 65534)], chunk=1)  # CI's find: see _RUNS
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(index=st.integers(0, 10**6), mutations=st.lists(_MUTATION, min_size=1, max_size=8), chunk=st.integers(1, 70000))
def test_mutated_real_logs(seed_logs: list[bytes], index: int, mutations: list[tuple[str, int, int, bytes]], chunk: int) -> None:
    log = mutate(seed_logs[index % len(seed_logs)], mutations)
    with no_hang():
        run_pipeline(log, chunk)
