"""The line normalizer: every prefix style is stripped and kept as metadata."""

from __future__ import annotations

import time
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
from logsleuth.tracebacks.scanner import scan

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
    # -- what runs the server, and what a paste adds (issue 11) --
    "docker-compose": ("sglang-1  | " + TB, TB, None, set(), "sglang-1", None, None, None),
    "docker-compose-sglang": ("sglang-kimi-1  | [2026-05-02 23:26:05 TP1] Scheduler hit an exception: " + TB,
                              "Scheduler hit an exception: " + TB, "2026-05-02 23:26:05", {("TP", 1)}, "sglang-kimi-1",
                              None, None, None),
    "docker-compose-empty": ("sglang-1  |", "", None, set(), "sglang-1", None, None, None),
    "torchrun": ("[rank3]: File \"a.py\", line 3, in f", 'File "a.py", line 3, in f', None, {("rank", 3)}, None, None,
                 None, None),
    "torchrun-c10d": ("[rank1]:[E210 02:06:33.347835395 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught",
                      "[E210 02:06:33.347835395 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught", None, {("rank", 1)},
                      None, None, None, None),
    "journald": ("Nov 30 12:00:01 gpu-node-3 python3[2315]:   File \"a.py\", line 3, in f", '  File "a.py", line 3, in f',
                 "Nov 30 12:00:01", set(), "python3", 2315, "gpu-node-3", None),
    "journald-vllm": ("Mar  9 11:02:30 gpu-node-3 vllm[8052]: (APIServer pid=8052) " + TB, TB, "Mar  9 11:02:30", set(),
                      "APIServer", 8052, "gpu-node-3", None),
    "cri": ("2026-01-17T18:48:10.418481013+01:00 stderr F [2026-01-17 18:48:06 TP0] Scheduler hit an exception: " + TB,
            "Scheduler hit an exception: " + TB, "2026-01-17 18:48:06", {("TP", 0)}, None, None, None, None),
    "cri-partial": ("2026-01-17T18:48:10.418481013Z stdout P   File \"a.py\", line 3", '  File "a.py", line 3',
                    "2026-01-17T18:48:10.418481013Z", set(), None, None, None, None),
    "cloud-log-viewer": ("ERROR 2025-04-04T06:24:51.493646621Z KeyError: 'x'", "KeyError: 'x'", "2025-04-04T06:24:51.493646621Z",
                         set(), None, None, None, None),
    "stderr-logger": ("2025-03-02 10:26:10 | ERROR | stderr |   File \"a.py\", line 3, in f", '  File "a.py", line 3, in f',
                      "2025-03-02 10:26:10", set(), None, None, None, "ERROR"),
    "module-logger": ("2025-11-20 16:02:11.304512+08:00 - gpustack.worker.backends.sglang - INFO - " + TB, TB,
                      "2025-11-20 16:02:11.304512+08:00", set(), None, None, None, "INFO"),
    "docker-desktop": ("2025-04-15 14:30:13 [2025-04-15 05:30:15 TP0] Load weight begin.", "Load weight begin.",
                       "2025-04-15 05:30:15", {("TP", 0)}, None, None, None, None),
    "ray-colour-remnants": ("[36m(WorkerDict pid=1216, ip=train-8e2c7a-worker-0)[0m   File \"a.py\", line 3, in f",
                            '  File "a.py", line 3, in f', None, set(), "WorkerDict", 1216, "train-8e2c7a-worker-0", None),
    "skypilot": ("(head, rank=0, pid=8292) " + TB, TB, None, {("rank", 0)}, "head", 8292, None, None),
    "nul-glyphs": ("^@^@^@For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "For debugging consider passing "
                   "CUDA_LAUNCH_BLOCKING=1", None, set(), None, None, None, None),
    "sglang-lost-bracket": ("2025-02-09 10:14:05 TP0] Prefill batch.", "Prefill batch.", "2025-02-09 10:14:05", {("TP", 0)},
                            None, None, None, None),
    "python-logging-kept": ("2025-04-23 21:31:45,123 - INFO - server stopped", "2025-04-23 21:31:45,123 - INFO - server stopped",
                            None, set(), None, None, None, None),
    "table-row-kept": ("Name | Value", "Name | Value", None, set(), None, None, None, None),
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


# -- what a paste adds (issue 11) --------------------------------------------------------------------------


def _texts(text: str) -> list[tuple[str, bool]]:
    return [(line.text, line.starts_record) for line in normalize_text(text)]


def test_code_fences_and_html_end_what_was_printed() -> None:
    lines = _texts("```python\nValueError: x\n```\n<details><summary>Log</summary>\n<pre>\nKeyError: 'k'\n</pre></div></details>\n")
    assert lines == [("```python", True), ("ValueError: x", False), ("```", True), ("<details><summary>Log</summary>", True),
                     ("<pre>", True), ("KeyError: 'k'", False), ("</pre></div></details>", True)]


def test_fence_glued_to_a_line() -> None:
    lines = _texts("```ValueError: first line\nsecond line```\nprose after the block\n")
    assert lines == [("ValueError: first line", False), ("second line", False), ("prose after the block", True)]


def test_a_caret_line_of_tildes_is_not_a_fence() -> None:
    assert _texts("~~~~~~~~~~~^^^^^^\n") == [("~~~~~~~~~~~^^^^^^", False)]


def test_inline_code_span_over_several_lines() -> None:
    lines = _texts("`RuntimeError: Decode out of memory.\nTry to allocate 148 tokens.\nAvaliable tokens: 2048`\nnext\n")
    assert lines == [("RuntimeError: Decode out of memory.", False), ("Try to allocate 148 tokens.", False),
                     ("Avaliable tokens: 2048", False), ("next", True)]


def test_a_message_with_its_own_backticks_keeps_them() -> None:
    text = "Exception: Please reinstall with `pip install sgl-kernel --force-reinstall`"
    assert _texts(text + "\n") == [(text, False)]


def test_bold_line_and_json_escaped_frame() -> None:
    assert _texts("**RuntimeError: Not enough memory.**\n")[0][0] == "RuntimeError: Not enough memory."
    assert _texts('  File \\"/x/a.py\\", line 3, in f\n')[0][0] == '  File "/x/a.py", line 3, in f'
    assert _texts('ValueError: got \\"x\\"\n')[0][0] == 'ValueError: got \\"x\\"'  # only frames are unescaped


def test_transport_namespaces_keep_pipes_apart() -> None:
    lines = normalize_text(
        "sglang-1  | [2025-04-23 21:31:41 TP0] Scheduler hit an exception: " + TB + "\n"
        "sglang-2  | [2025-04-23 21:31:41 TP0] Scheduler hit an exception: " + TB + "\n"
        "sglang-1  |   File \"a.py\", line 1, in f\n"
        "[rank0]: x\n[rank1]: y\n[rank0]: z\n"
    )
    assert lines[0].stream != lines[1].stream
    assert lines[2].stream == lines[0].stream and lines[2].meta.ranks == (("TP", 0),)
    assert lines[3].stream == lines[5].stream != lines[4].stream


@pytest.mark.parametrize("head", ["2025-01-01 10:00:00,123 - myapp - ERROR - ", "2025-01-01 10:00:00 "])
def test_a_wrapper_logger_starts_a_record_only_after_lines_it_did_not_prefix(head: str) -> None:
    lines = normalize_text(f"{head}Failed\n{head}retrying\nTraceback (most recent call last):\n{head}next\n")
    assert [line.starts_record for line in lines] == [False, False, False, True]
    assert lines[3].text == "next"


# -- line breaks a paste added -----------------------------------------------------------------------------


def _reflowed(lines: list[str]) -> list[str]:
    return [line.text for line in normalize_text("".join(line + "\n" for line in lines))]


def test_hard_wrapped_frame_and_message_are_rejoined() -> None:
    frame = '  File "/root/.local/lib/python3.11/site-packages/sglang/srt/managers/router/manager.py", line 71, in start'
    message = "KeyError: 'model.layers.31.mlp.gate_up_proj.input_scale' while loading the checkpoint shard number 7"
    wrapped = [frame[:80], frame[80:], "    model_client = ModelRpcClient(server_args)", message[:80], message[80:]]
    assert _reflowed(wrapped) == [frame, "    model_client = ModelRpcClient(server_args)", message]


def test_a_hard_wrapped_frame_under_a_vllm_prefix_is_rejoined_and_the_prefix_read() -> None:
    # A terminal 100 columns wide: the continuation of a prefixed line carries no prefix of its own.
    head = "(EngineCore pid=2817) ERROR 03-14 09:26:54 [core.py:1584] "
    frame = head + '  File "/opt/venv/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 321, in _initialize_kv_caches'
    source = head + "    kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs, available_gpu_memory)"
    wrapped = [frame[:100], frame[100:], source[:100], source[100:]]
    lines = normalize_text("".join(line + "\n" for line in wrapped))
    assert [line.text for line in lines] == [frame[len(head) :], source[len(head) :]]
    assert all(line.meta.process == "EngineCore" and line.meta.pid == 2817 for line in lines)


def test_equal_longest_lines_without_a_sure_cut_are_not_joined() -> None:
    # Eight ranks print the same CUDA error: its longest line repeats, and the next line is its own.
    message = ["RuntimeError: CUDA error: an illegal memory access was encountered",
               "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
               "might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]
    assert _reflowed(message * 8) == message * 8


def test_a_log_with_longer_lines_is_not_rejoined() -> None:
    frame = '  File "/root/.local/lib/python3.11/site-packages/sglang/srt/managers/router/manager.py", line 71, in start'
    lines = ["x" * 200, frame[:80], frame[80:]]
    assert _reflowed(lines) == lines


def test_double_spaced_paste_is_undone() -> None:
    lines = ["Fatal Python error: Segmentation fault", "", "Current thread 0x7f (most recent call first):",
             *(f'  File "{name}.py", line 3 in {name}' for name in "abcdef"), "", "ok"]
    spaced = [part for line in lines for part in (line, "")]
    assert _reflowed(spaced) == lines


def test_cpython_blank_lines_around_a_chain_separator_are_not_double_spacing() -> None:
    lines = ["ValueError: a", "", "The above exception was the direct cause of the following exception:", "",
             "ValueError: b", "", "The above exception was the direct cause of the following exception:", "",
             "ValueError: c", "", "ValueError: d"]
    assert _reflowed(lines) == lines


# -- pathological lines: every new regex and loop on a 64 KiB line -------------------------------------------

_LONG = MAX_LINE_BYTES


@pytest.mark.parametrize(
    "line",
    [
        "a" * (_LONG - 3) + "  |",
        "a-" * (_LONG // 2),
        "[rank" + "1" * (_LONG - 8) + "]:",
        "[36" + ";1" * (_LONG // 2),
        "2025-01-01 10:00:00 " + "| ERROR " * (_LONG // 8),
        "2025-01-01 10:00:00 - " + "a.b" * (_LONG // 3),
        "Nov 30 12:00:01 " + "h" * (_LONG - 20),
        "ERROR " + "2" * (_LONG - 10),
        "`" + "a`" * (_LONG // 2),
        "**" + "a**" * (_LONG // 3),
        '"' + 'a "' * (_LONG // 3),
        "I get `" + "ValueError: " * (_LONG // 13) + "` and `KeyError: 'x",
        "**ValueError: " + "x" * (_LONG - 20),
        "<details" * (_LONG // 8),
        "^@" * (_LONG // 2),
        "```" + "`" * (_LONG - 3),
        '  File \\"' + "\\\"" * (_LONG // 3),
        "x" * (_LONG - 1) + "`",
        "(head, rank=0, pid=" + "1" * (_LONG - 30),
        "frame #1: " + "(" * (_LONG - 20),
    ],
    ids=lambda line: repr(line[:12]),
)
def test_pathological_lines_stay_linear(line: str) -> None:
    data = ((line + "\n") * 3 + "ValueError: after\n").encode()
    started = time.perf_counter()
    lines = list(normalize_chunks([data]))
    failures = scan(lines)
    assert time.perf_counter() - started < 2
    assert lines[-1].text == "ValueError: after"
    assert failures[-1].final.type == "ValueError"
