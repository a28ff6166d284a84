"""`--all` on logs with many tracebacks: every occurrence counted, and the distinct failures left out of the
report counted as failures, not as texts.

Local files of PARALLEL_MIN_BYTES (64 MiB) or more are read the dense way in two forked halves.  Writing 64 MiB
per test would be slow, so these tests lower that threshold (and the anchor count that selects the dense
way): the small log then takes the same code path, forked halves included (`_split_point` is called, which
only happens on that path)."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.diagnosis.grouping import MAX_GROUPS
from logsleuth.errors import UsageError
from logsleuth.reading import dense, reader
from logsleuth.render.sparkline import BARS, GAP, sparkline
from logsleuth.render.view import omitted_line
from logsleuth.sources import anchors
from logsleuth.sources.spec import parse_remote_spec
from tests.helpers import real_traceback, run_cli
from tests.logs import crash_record, distinct_tracebacks, launch_line

EXTRA_GROUPS = 50  # distinct failures beyond what the report keeps
EACH = 12  # occurrences of each


def _write_shuffled_log(path: Path, *, varying_messages: bool) -> None:
    """MAX_GROUPS + EXTRA_GROUPS failures, EACH times each, in random order over ranks TP0-7.  With
    `varying_messages` every occurrence's message differs (a request id), as a server failing per request
    writes them: one failure, many texts."""
    variants = distinct_tracebacks(MAX_GROUPS + EXTRA_GROUPS)
    order = [index for index in range(len(variants)) for _ in range(EACH)]
    random.Random(5).shuffle(order)
    parts = [launch_line()]
    for occurrence, index in enumerate(order):
        text = variants[index]
        if varying_messages:
            last = text.rstrip("\n").rsplit("\n", 1)[1]
            text = text.replace(last, f"{last} (request {occurrence})")
        parts.append(crash_record("2026-11-29 10:00:00", f"TP{occurrence % 8}", text))
    path.write_text("".join(parts))


@pytest.fixture
def split_dense_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The dense, two-halves path for small logs; returns where each split fell."""
    monkeypatch.setattr(anchors, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
    splits: list[int] = []
    real_split = dense._split_point

    def recorded_split(source: object, middle: int, size: int) -> int:
        splits.append(real_split(source, middle, size))  # type: ignore[arg-type]
        return splits[-1]

    monkeypatch.setattr(dense, "_split_point", recorded_split)
    return splits


@pytest.mark.parametrize("varying_messages", [False, True], ids=["same-texts", "varying-messages"])
def test_all_counts_every_occurrence_of_a_log_read_in_two_halves(
    tmp_path: Path, split_dense_read: list[int], varying_messages: bool
) -> None:
    log = tmp_path / "dense.log"
    _write_shuffled_log(log, varying_messages=varying_messages)
    report = diagnose([str(log)], DiagnoseOptions(all_failures=True, include_user_patterns=False))
    assert split_dense_read and 0 < split_dense_read[0] < log.stat().st_size, "the log was not split"
    assert len(report.failures) == MAX_GROUPS
    assert [group.count for group in report.failures] == [EACH] * MAX_GROUPS
    assert all(sum(count for _, count in group.rank_counts) == EACH for group in report.failures)
    assert report.omitted_failures == EXTRA_GROUPS * EACH
    assert (report.omitted_groups, report.omitted_groups_estimated) == (EXTRA_GROUPS, False)


@pytest.mark.parametrize("varying_messages", [False, True], ids=["same-texts", "varying-messages"])
def test_distinct_failures_left_out_are_failures_not_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, varying_messages: bool
) -> None:
    """One process (no split): a failure whose message differs on every occurrence is one distinct failure
    (it was counted once per text: 42,509 "more distinct failures" for 900)."""
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
    log = tmp_path / "dense.log"
    _write_shuffled_log(log, varying_messages=varying_messages)
    report = diagnose([str(log)], DiagnoseOptions(all_failures=True, include_user_patterns=False))
    assert report.omitted_failures == EXTRA_GROUPS * EACH
    assert (report.omitted_groups, report.omitted_groups_estimated) == (EXTRA_GROUPS, False)


@pytest.mark.parametrize("parse_limit", [None, 60], ids=["default", "second-half-over-its-parse-limit"])
def test_a_split_read_reports_what_one_process_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parse_limit: int | None
) -> None:
    """The halves are read at once for speed only: the report is the one a single process gives.  With a
    parse limit below the number of failures, the second half leaves records unparsed, and the first
    half's reading goes on over it."""
    if parse_limit is not None:
        monkeypatch.setattr(dense, "_PARSE_LIMIT", parse_limit)
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
    log = tmp_path / "dense.log"
    _write_shuffled_log(log, varying_messages=True)
    options = DiagnoseOptions(all_failures=True, include_user_patterns=False)

    def summary() -> tuple[object, ...]:
        report = diagnose([str(log)], options)
        groups = [(g.fingerprint, g.count, g.rank_counts) for g in report.failures]
        return groups, report.omitted_failures, report.omitted_groups, report.omitted_groups_estimated

    one_process = summary()
    monkeypatch.setattr(anchors, "PARALLEL_MIN_BYTES", 0)
    assert summary() == one_process


# -- health: numbers no server prints ---------------------------------------------------------------------------

HEALTH_FORMATS = ("text", "json", "markdown", "slack", "rich")


def _decode_lines(count: int, *, throughput: str = "812.40", accept: str | None = None, every: int = 0) -> str:
    """SGLang 0.4.10 decode batch lines; `accept` replaces the accept length on every `every`-th line."""
    lines = []
    for i in range(count):
        accept_len = accept if every and i % every == every - 1 else "1.00"
        lines.append(
            f"[2026-11-29 10:{i // 60 % 60:02d}:{i % 60:02d} TP0] Decode batch. #running-req: 8, #token: 912, "
            f"token usage: 0.01, accept len: {accept_len}, cuda graph: True, gen throughput (token/s): {throughput}, "
            "#queue-req: 0,\n"
        )
    return "".join(lines)


@pytest.mark.parametrize("value", ["1e308", "1.7976931348623157e308", "9" * 400])
@pytest.mark.parametrize("fmt", HEALTH_FORMATS)
def test_health_survives_an_absurd_throughput_on_every_line(tmp_path: Path, fmt: str, value: str) -> None:
    log = tmp_path / "server.log"
    log.write_text(_decode_lines(300, throughput=value))
    result = run_cli("health", str(log), "--format", fmt)
    assert "internal error" not in result.stderr
    assert result.exit_code in (0, 1), result.stderr
    assert result.stdout.strip()
    assert "no server prints" in result.stdout + result.stderr  # the values were set aside, and it says so


@pytest.mark.parametrize("fmt", HEALTH_FORMATS)
def test_health_survives_absurd_vllm_stats_lines(tmp_path: Path, fmt: str) -> None:
    lines = [
        f"INFO 03-14 09:{i // 60:02d}:{i % 60:02d} [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
        f"Avg generation throughput: 1e308 tokens/s, Running: {'9' * 300} reqs, Waiting: 0 reqs, "
        "GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n"
        for i in range(300)
    ]
    log = tmp_path / "vllm.log"
    log.write_text("".join(lines))
    result = run_cli("health", str(log), "--format", fmt)
    assert "internal error" not in result.stderr
    assert result.exit_code in (0, 1), result.stderr
    assert "no server prints" in result.stdout + result.stderr


@pytest.mark.parametrize("value", ["1e308", "inf", "123456789012"])
def test_an_absurd_accept_length_on_some_lines_hides_no_finding(tmp_path: Path, value: str) -> None:
    """Accept length 1.00 on 95 % of the lines (the pattern needs 20 batches in a row at 1.2 or less); the
    other 5 % print a value no speculative decoder reaches: they are not measurements, and break no run."""
    log = tmp_path / "server.log"
    log.write_text(_decode_lines(400, accept=value, every=20))
    result = run_cli("health", str(log), "--format", "json")
    assert result.exit_code == 1, result.stderr
    findings = [finding["pattern"] for finding in result.json()["findings"]]
    assert "sglang-health-accept-length-near-one" in findings


# -- stdin closed --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("case", "-"), ("diff", "-", "OTHER"), ("diff", "OTHER", "-")], ids=["case", "diff-good", "diff-bad"])
def test_stdin_closed_is_one_line_and_exit_3(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Started with fd 0 closed (`logsleuth case - <&-`): Python sets sys.stdin to None."""
    other = tmp_path / "other.log"
    other.write_text(launch_line() + crash_record("2026-11-29 10:00:00", "TP0", distinct_tracebacks(1)[0]))
    argv = [sys.executable, "-m", "logsleuth", *(str(other) if arg == "OTHER" else arg for arg in args)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, preexec_fn=lambda: os.close(0))
    assert result.returncode == 3, result.stderr
    assert result.stderr.splitlines() == [f"logsleuth{' diff' if args[0] == 'diff' else ''}: stdin: not open (nothing to read)"]


# -- a password in an ssh:// URL -----------------------------------------------------------------------------

PASSWORD_URL = "ssh://bob:hunter2-Secret@127.0.0.1:2222/var/log/sglang.log"


@pytest.mark.parametrize("command", ["diagnose", "case", "health"])
def test_a_password_in_an_ssh_url_is_refused_in_one_line(command: str) -> None:
    """It was read as a local path (and so reported as a missing file).  The refusal never echoes the password;
    nothing is contacted (the spec is refused before any connection)."""
    result = run_cli(command, PASSWORD_URL)
    assert result.exit_code == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert "password" in line and "not supported" in line
    assert "hunter2" not in result.stdout + result.stderr


def test_an_at_sign_in_the_path_of_an_ssh_url_is_no_password() -> None:
    remote = parse_remote_spec("ssh://gpu7:2222/logs/run:1@night.log")
    assert remote is not None and (remote.host, remote.port, remote.path) == ("gpu7", 2222, "/logs/run:1@night.log")
    with pytest.raises(UsageError, match="password") as refused:
        parse_remote_spec("ssh://bob:p4ss@gpu7/logs/x.log")
    assert "p4ss" not in str(refused.value)


def _chained_tracebacks(count: int) -> list[str]:
    """`count` chained tracebacks whose first exception is the same (frames, type, line numbers) and whose
    second is raised in a handler of its own (one real traceback, the handler renamed per variant): distinct
    failures that share their first block."""
    code = (
        "def inner():\n    raise ValueError('bad value')\n\n"
        "def main():\n    try:\n        inner()\n    except ValueError:\n        handle()\n\n"
        "def handle():\n    handler_x()\n\n"
        "def handler_x():\n    raise RuntimeError('boom')\n\nmain()\n"
    )
    chained = real_traceback(code, "site-packages/sglang/srt/managers/scheduler.py")
    assert "During handling of the above exception" in chained
    return [chained.replace("handler_x", f"handler_{index}") for index in range(count)]


def test_chained_failures_left_out_that_share_their_first_exception_are_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
    variants = _chained_tracebacks(MAX_GROUPS + EXTRA_GROUPS)
    order = [index for index in range(len(variants)) for _ in range(4)]
    random.Random(3).shuffle(order)
    log = tmp_path / "dense.log"
    log.write_text(launch_line() + "".join(crash_record("2026-11-29 10:00:00", "TP0", variants[i]) for i in order))
    report = diagnose([str(log)], DiagnoseOptions(all_failures=True, include_user_patterns=False))
    assert len(report.failures) == MAX_GROUPS
    assert (report.omitted_groups, report.omitted_groups_estimated) == (EXTRA_GROUPS, False)


@pytest.mark.parametrize(
    "values",
    [[1e308, -1e308, 0.0], [1.7976931348623157e308, 1.0], [math.inf, 5.0, math.nan], [1e308] * 3],
    ids=["both-extremes", "max-float", "non-finite", "flat-huge"],
)
def test_a_sparkline_of_extreme_values_is_one_short_line(values: list[float]) -> None:
    """The renderers' last line of defence (health reads such numbers as missing before they get here)."""
    line = sparkline(values, 12, "token/s")
    assert len(line) < 60, line
    assert line[:12].strip(" ") and all(char in BARS + GAP for char in line[:12])


def test_past_the_budget_for_parsing_left_out_records_the_count_is_labelled_an_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
    monkeypatch.setattr(dense, "_RESOLVE_BYTES", 20_000)  # a few dozen records: not one of each of the 50
    log = tmp_path / "dense.log"
    _write_shuffled_log(log, varying_messages=True)
    report = diagnose([str(log)], DiagnoseOptions(all_failures=True, include_user_patterns=False))
    assert report.omitted_groups_estimated
    assert report.omitted_groups == EXTRA_GROUPS  # one per shape: here each failure has one
    assert "about 50 more distinct failures" in (omitted_line(report) or "")
