"""The line normalizer: every prefix style is stripped and kept as metadata."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import pytest

from logsleuth.ingest.lines import MAX_LINE_BYTES, split_lines
from logsleuth.ingest.normalize import (
    LineNormalizer,
    clean_text,
    normalize_chunks,
    normalize_text,
)
from logsleuth.models import LineMeta

TB = "Traceback (most recent call last):"

# raw line -> (text, timestamp, ranks (order-free), process, pid, host, level)
PREFIX_CASES = {
    "plain": (TB, TB, None, set(), None, None, None, None),
    "sglang-tp": ("[2025-04-23 21:31:41 TP2] Scheduler hit an exception: " + TB,
                  "Scheduler hit an exception: " + TB, "2025-04-23 21:31:41", {("TP", 2)}, None, None, None, None),
    "sglang-no-tags": ("[2025-04-23 21:31:41] Load weight begin.", "Load weight begin.", "2025-04-23 21:31:41",
                       set(), None, None, None, None),
    "sglang-ms": ("[2025-04-23 21:31:41.123 DP1 TP3] x", "x", "2025-04-23 21:31:41.123", {("DP", 1), ("TP", 3)},
                  None, None, None, None),
    "sglang-0.5.8-order": ("[2025-04-23 21:31:41 DP0 PP1 TP2 EP3] x", "x", "2025-04-23 21:31:41",
                           {("DP", 0), ("PP", 1), ("TP", 2), ("EP", 3)}, None, None, None, None),
    "sglang-0.5.23-tags": ("[2025-04-23 21:31:41 DP0 PP0 ATTN_CP1 MOE_DP2 TP3 EP4] x", "x", "2025-04-23 21:31:41",
                           {("DP", 0), ("PP", 0), ("ATTN_CP", 1), ("MOE_DP", 2), ("TP", 3), ("EP", 4)},
                           None, None, None, None),
    "sglang-any-order": ("[2025-04-23 21:31:41 EP1 MOE_DP0 TP5 ATTN_CP2] x", "x", "2025-04-23 21:31:41",
                         {("EP", 1), ("MOE_DP", 0), ("TP", 5), ("ATTN_CP", 2)}, None, None, None, None),
    "vllm-worker": ("(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 [multiproc_executor.py:374]   File \"a.py\", "
                    "line 3, in f", '  File "a.py", line 3, in f', "03-25 21:13:53", {("rank", 1)}, "VllmWorker",
                    12231, None, "ERROR"),
    "vllm-old-header": ("(VllmWorkerProcess pid=7) INFO 03-25 21:13:53 multiproc_executor.py:374] hello", "hello",
                        "03-25 21:13:53", set(), "VllmWorkerProcess", 7, None, "INFO"),
    "vllm-engine": ("(EngineCore_DP0 pid=33630) WARNING 03-25 21:13:53 [core.py:12] careful", "careful",
                    "03-25 21:13:53", set(), "EngineCore_DP0", 33630, None, "WARNING"),
    "vllm-coloured": ("\x1b[1;36m(VllmWorker rank=3 pid=9)\x1b[0;0m ERROR 03-25 21:13:53 [m.py:1] boom", "boom",
                      "03-25 21:13:53", {("rank", 3)}, "VllmWorker", 9, None, "ERROR"),
    "ray": ("(RayWorkerWrapper pid=5, ip=127.0.0.1) " + TB, TB, None, set(), "RayWorkerWrapper", 5, "127.0.0.1", None),
    "ray-around-sglang": ("(WorkerDict pid=77) [2025-04-23 21:31:41 TP0] Scheduler hit an exception: " + TB,
                          "Scheduler hit an exception: " + TB, "2025-04-23 21:31:41", {("TP", 0)}, "WorkerDict", 77,
                          None, None),
    "collector-bracketed": ("[2025-11-06T02:10:00.702Z] " + TB, TB, "2025-11-06T02:10:00.702Z", set(), None, None,
                            None, None),
    "collector-kubectl": ("2025-11-06T02:10:00.702123456Z " + TB, TB, "2025-11-06T02:10:00.702123456Z", set(), None,
                          None, None, None),
    "collector-offset": ("2025-11-06T02:10:00+02:00 x", "x", "2025-11-06T02:10:00+02:00", set(), None, None, None, None),
    "collector-then-sglang": ("[2025-11-06T02:10:00.702Z] [2025-04-23 21:31:41 TP1] x", "x", "2025-04-23 21:31:41",
                              {("TP", 1)}, None, None, None, None),
    "quote": ("> " + TB, TB, None, set(), None, None, None, None),
    "quote-blank": (">", "", None, set(), None, None, None, None),
    "quote-collector-vllm": ("> [2025-11-06T02:10:00.702Z] (VllmWorker rank=0 pid=3) ERROR 03-25 21:13:53 [x.py:1] y",
                             "y", "03-25 21:13:53", {("rank", 0)}, "VllmWorker", 3, None, "ERROR"),
}


@pytest.mark.parametrize("name", list(PREFIX_CASES))
def test_prefix_styles(name: str) -> None:
    raw, text, timestamp, ranks, process, pid, host, level = PREFIX_CASES[name]
    line = LineNormalizer().normalize(raw, 1, 0)
    assert line.text == text
    assert line.meta.timestamp == timestamp
    assert set(line.meta.ranks) == ranks
    assert (line.meta.process, line.meta.pid, line.meta.host, line.meta.level) == (process, pid, host, level)


def test_sglang_record_continuation_lines_inherit_metadata() -> None:
    lines = normalize_text(
        "[2025-04-23 21:31:41 TP2] Scheduler hit an exception: " + TB + "\n"
        '  File "a.py", line 1, in f\n'
        "[2025-04-23 21:31:42 TP3] other rank\n"
        "continued\n"
    )
    assert [line.starts_record for line in lines] == [True, False, True, False]
    assert lines[1].meta.ranks == (("TP", 2),) and lines[1].text == '  File "a.py", line 1, in f'
    assert lines[0].stream == lines[1].stream != lines[2].stream == lines[3].stream
    assert lines[3].meta.ranks == (("TP", 3),)


def test_vllm_repeated_header_is_one_record() -> None:
    head = "(VllmWorker rank=1 pid=5) ERROR 03-25 21:13:53 [multiproc_executor.py:374] "
    lines = normalize_text(head + "WorkerProc hit an exception.\n" + head + TB + "\n"
                           "(VllmWorker rank=1 pid=5) INFO 03-25 21:13:54 [x.py:1] later\n")
    assert [line.starts_record for line in lines] == [True, False, True]


def test_repeated_header_after_unprefixed_lines_is_a_new_record() -> None:
    head = "WARNING 03-25 21:13:55 [config.py:120] "
    lines = normalize_text(head + "a\nunprefixed\n" + head + "a\n")
    assert [line.starts_record for line in lines] == [True, False, True]


def test_host_from_normalizer_and_ray_ip() -> None:
    lines = normalize_text("x\n(RayWorkerWrapper pid=5, ip=10.0.0.7) y\n", host="gpu-node-1")
    assert lines[0].meta.host == "gpu-node-1"
    assert lines[1].meta.host == "10.0.0.7"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[1;36m(x)\x1b[0;0m", "(x)"),
        ("\x1b[2K\x1b[1Gprogress", "progress"),
        ("\x1b]0;window title\x07text", "text"),
        ("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b(Bplain", "plain"),
        ("line\r", "line"),
        ("  0%|   | 0/2\r 50%|#  | 1/2\r100%|###| 2/2", "100%|###| 2/2"),
        # A bar redrawn over an exception line: the exception is what the log holds.
        ("RuntimeError: CUDA error: out of memory\r 50%|#  | 1/2", "RuntimeError: CUDA error: out of memory"),
        ("Loading 10%\rValueError: bad\r", "ValueError: bad"),
        ("Traceback (most recent call last):\rx", "Traceback (most recent call last):"),
        ("nul\x00byte\x07bell", "nulbytebell"),
        ("tab\tkept", "tab\tkept"),
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_crlf_line_ends() -> None:
    lines = list(normalize_chunks([b"a\r\nb\r\n\r\nc"]))
    assert [line.text for line in lines] == ["a", "b", "", "c"]
    assert [line.offset for line in lines] == [0, 3, 6, 8]


def test_invalid_utf8_never_fails() -> None:
    lines = list(normalize_chunks([b"ok \xff\xfe bad\n\xc3\n\xed\xa0\x80 surrogate\n"]))
    assert lines[0].text == "ok \ufffd\ufffd bad"
    assert len(lines) == 3 and all("\ufffd" in line.text for line in lines)


def test_chunk_boundaries_do_not_matter() -> None:
    data = b"[2025-04-23 21:31:41 TP2] a\n  b\r\n(X pid=1) c\nlast"
    whole = [(line.text, line.offset) for line in normalize_chunks([data])]
    for size in (1, 2, 3, 7, 64):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert [(line.text, line.offset) for line in normalize_chunks(chunks)] == whole


def _huge_line(total: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    block = b"x" * chunk
    for _ in range(total // chunk):
        yield block
    yield b"\nValueError: after the huge line\n"


def test_100mb_line_without_newline_keeps_memory_bounded() -> None:
    tracemalloc.start()
    try:
        lines = list(normalize_chunks(_huge_line(100 << 20)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(lines) == 2
    assert len(lines[0].text) == MAX_LINE_BYTES
    assert lines[1].text == "ValueError: after the huge line"
    assert lines[1].offset == (100 << 20) + 1
    assert peak < 16 << 20  # a few chunks and one capped line, never the 100 MB


def test_split_lines_offsets_after_a_capped_line() -> None:
    data = [b"a" * (MAX_LINE_BYTES + 10), b"\nb\n"]
    assert list(split_lines(data)) == [(b"a" * MAX_LINE_BYTES, 0), (b"b", MAX_LINE_BYTES + 11)]


def test_rank_label() -> None:
    assert LineMeta(ranks=(("DP", 0), ("TP", 2))).rank_label == "DP0 TP2"
    assert LineMeta().rank_label is None
