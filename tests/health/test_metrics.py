"""logsleuth/health/metrics.py: SGLang's batch lines, every version's wording, read back as numbers.

The lines come from the fixture generator's renderers (scripts/health_fixtures/wordings.py), which transcribe
each version's format strings from SGLang's source: what goes in must come out."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from logsleuth.health import metrics
from logsleuth.health.metrics import parse_batch_line, timestamp_seconds
from logsleuth.ingest.normalize import normalize_text
from scripts.health_fixtures import wordings as say
from scripts.health_fixtures.fixtures import OUT

DECODES = [
    say.DecodeStats(37, 41373, 0.2, None, None, True, 1758.48, 0),
    say.DecodeStats(212, 401933, 0.38, 2.91, 0.73, False, 4127.55, 17),
    say.DecodeStats(1, 12, 0.0, 1.0, 0.25, True, 0.5, 4096),
]
PREFILLS = [
    say.PrefillStats(2, 1446, 0, 0.23, 41, 0, 812.25, False),
    say.PrefillStats(1, 503, 61, 0.97, 0, 250, 93.1, True),
]


@pytest.mark.parametrize("version", say.VERSIONS)
@pytest.mark.parametrize("stats", DECODES)
def test_decode_line_round_trips(version: str, stats: say.DecodeStats) -> None:
    sample = parse_batch_line(say.decode_line(version, stats), "2025-03-14 09:26:54", 1234)
    assert sample is not None
    assert (sample.kind, sample.offset, sample.seconds) == ("decode", 1234, 1741944414.0)
    assert sample.running_requests == stats.running
    assert sample.queue_requests == stats.queue
    assert sample.token_usage == pytest.approx(stats.usage, abs=0.005)
    assert sample.throughput == pytest.approx(stats.throughput, abs=0.005)
    assert sample.cuda_graph is stats.cuda_graph
    assert sample.accept_length == (None if stats.accept_length is None else pytest.approx(stats.accept_length))
    printed_rate = None if say.is_04(version) else stats.accept_rate  # 0.4.x prints no accept rate
    assert sample.accept_rate == (None if printed_rate is None else pytest.approx(printed_rate))


@pytest.mark.parametrize("version", say.VERSIONS)
@pytest.mark.parametrize("stats", PREFILLS)
def test_prefill_line_round_trips(version: str, stats: say.PrefillStats) -> None:
    sample = parse_batch_line(say.prefill_line(version, stats), None, 0)
    assert sample is not None
    assert (sample.kind, sample.seconds) == ("prefill", None)
    assert (sample.running_requests, sample.queue_requests) == (stats.running, stats.queue)
    assert sample.token_usage == pytest.approx(stats.usage, abs=0.005)
    if say.is_04(version):  # 0.4.x prints neither throughput nor cuda graph on prefill lines
        assert (sample.throughput, sample.cuda_graph) == (None, None)
    else:
        assert sample.throughput == pytest.approx(stats.throughput, abs=0.005)
        assert sample.cuda_graph is stats.cuda_graph
    assert (sample.accept_length, sample.accept_rate) == (None, None)


@pytest.mark.parametrize(
    "record",
    [
        "[2025-04-23 21:31:41 DP0 TP2] {line}",
        "[2025-04-23 21:31:41 PP1 TP0 EP0] {line}",
        "[2025-04-23 21:31:41] {line}",
        "2025-04-23T21:31:41.000000000Z stdout F [2025-04-23 21:31:41 TP0] {line}",
        "sglang-1  | [2025-04-23 21:31:41 TP3] {line}",
    ],
)
def test_lines_after_normalize_keep_their_numbers_and_time(record: str) -> None:
    decode = say.decode_line("0.5.9", DECODES[1])
    first = "[2025-04-23 21:31:40] The server is fired up and ready to roll!\n"
    text = f"{first}{record.format(line=decode)}\n"
    line = normalize_text(text)[-1]
    sample = parse_batch_line(line.text, line.meta.timestamp, line.offset)
    assert sample is not None
    assert (sample.running_requests, sample.accept_length, sample.queue_requests) == (212, 2.91, 17)
    assert sample.offset == len(first)
    assert sample.seconds == datetime(2025, 4, 23, 21, 31, 41, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Hybrid SWA pools: SGLang's own stats take the fuller of the two.
        ("Decode batch, #running-req: 9, #full token: 100, full token usage: 0.30, #swa token: 50, "
         "swa token usage: 0.55, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0", 0.55),
        # A mamba pool's usage is not KV tokens.
        ("Decode batch, #running-req: 9, #full token: 100, full token usage: 0.30, mamba num: 3, mamba usage: 0.90, "
         "cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0", 0.30),
    ],
)
def test_hybrid_pools_report_the_kv_fill(line: str, expected: float) -> None:
    sample = parse_batch_line(line, None, 0)
    assert sample is not None and sample.token_usage == expected


@pytest.mark.parametrize(
    "line",
    [
        # SGLANG_LOG_FORWARD_ITERS, a CPU graph label, PD-disaggregation queues, 0.5.23's MFU estimates.
        "Decode batch [48213], #running-req: 3, #token: 9, token usage: 0.10, cpu graph: False, "
        "gen throughput (token/s): 7.50, #queue-req: 2",
        "Decode batch, #running-req: 3, #token: 9, token usage: 0.10, pre-allocated usage: 0.20, #prealloc-req: 1, "
        "#transfer-req: 0, #retracted-req: 0, cuda graph: False, gen throughput (token/s): 7.50, #queue-req: 2",
        "Decode batch, #running-req: 3, #token: 9, token usage: 0.10, cuda graph: False, gen throughput (token/s): "
        "7.50, #queue-req: 2, est. decode TFLOPS/s (per GPU): 1.25, est. read BW (GB/s per GPU): 800.00",
    ],
)
def test_optional_items_do_not_hide_the_known_ones(line: str) -> None:
    sample = parse_batch_line(line, None, 0)
    assert sample is not None
    assert (sample.running_requests, sample.queue_requests, sample.throughput, sample.cuda_graph) == (3, 2, 7.5, False)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "The server is fired up and ready to roll!",
        "a batch of requests arrived",
        "Decode batch",
        "Decode batch, ",
        "Decoded batch, #running-req: 3, #queue-req: 0",
        "Decode batch, #running-req: three, #token: 9, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0",
        "Decode batch, #running-req: 3, token usage: nan, gen throughput (token/s): 1.00, #queue-req: 0",
        "Decode batch, #running-req: 3, gen throughput (token/s): -4.00, #queue-req: 0",
        "Decode batch, #running-req: 3, cuda graph: maybe, gen throughput (token/s): 1.00, #queue-req: 0",
        "Decode batch, #running-req: 3, #queue-req: 1e3",
        "Prefill batch. #new-seq: 1, #new-token: 5, #cached-token: 0, token usage: 0.00, #running-req: 0, ",
    ],
)
def test_junk_is_not_a_sample(line: str) -> None:
    assert parse_batch_line(line, "2025-01-01 00:00:00", 0) is None


@pytest.mark.parametrize("version", say.VERSIONS)
def test_a_line_cut_before_its_queue_item_is_not_a_sample(version: str) -> None:
    line = say.decode_line(version, DECODES[1])
    complete = line.index("#queue-req: ") + len("#queue-req: ")
    for end in range(complete):
        assert parse_batch_line(line[:end], None, 0) is None, line[:end]


def test_random_damage_never_raises() -> None:
    rng = random.Random(15)
    lines = [say.decode_line(v, s) for v in say.VERSIONS for s in DECODES]
    lines += [say.prefill_line(v, s) for v in say.VERSIONS for s in PREFILLS]
    alphabet = ", :.#-()/0123456789abcTrueFalse\x00\u00e9"
    for _ in range(3000):
        chars = list(rng.choice(lines))
        for _ in range(rng.randint(1, 6)):
            position = rng.randrange(len(chars))
            action = rng.randrange(3)
            if action == 0:
                del chars[position]
            elif action == 1:
                chars.insert(position, rng.choice(alphabet))
            else:
                chars[position] = rng.choice(alphabet)
        sample = parse_batch_line("".join(chars), rng.choice((None, "2025-01-01 00:00:00", "junk")), 0)
        assert sample is None or sample.queue_requests is not None


class _CountingText(str):
    """A line that counts `in` tests: a non-batch line must cost exactly one."""

    tests = 0

    def __contains__(self, item: object) -> bool:
        type(self).tests += 1
        return super().__contains__(item)  # type: ignore[operator]


def test_a_non_batch_line_costs_one_in_test(monkeypatch: pytest.MonkeyPatch) -> None:
    class Untouchable:  # a stand-in for the header regex (a mock: the point is that nothing else runs)
        def __getattr__(self, name: str) -> object:
            raise AssertionError("the regex ran on a line without 'batch'")

    monkeypatch.setattr(metrics, "_HEADER", Untouchable())
    _CountingText.tests = 0
    assert parse_batch_line(_CountingText("[2025-01-01 00:00:00] Load weight end. type=LlamaForCausalLM"), None, 0) is None
    assert _CountingText.tests == 1


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        ("2025-01-01 12:00:00", datetime(2025, 1, 1, 12, tzinfo=UTC).timestamp()),
        ("2025-01-01 12:00:00.250", datetime(2025, 1, 1, 12, tzinfo=UTC).timestamp() + 0.25),
        ("2025-01-01 12:00:00,250", datetime(2025, 1, 1, 12, tzinfo=UTC).timestamp() + 0.25),
        ("2025-11-06T02:10:00.702Z", datetime(2025, 11, 6, 2, 10, tzinfo=UTC).timestamp() + 0.702),
        ("2026-01-17T18:48:10.418481013+01:00", datetime(2026, 1, 17, 17, 48, 10, 418481, tzinfo=UTC).timestamp()),
        ("Nov 30 12:00:01", datetime(2000, 11, 30, 12, 0, 1, tzinfo=UTC).timestamp()),
        ("03-25 21:13:53", datetime(2000, 3, 25, 21, 13, 53, tzinfo=UTC).timestamp()),
        (None, None),
        ("", None),
        ("not a time", None),
        ("2025-13-45 99:99:99", None),
    ],
)
def test_timestamp_seconds(timestamp: str | None, expected: float | None) -> None:
    assert timestamp_seconds(timestamp) == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize("path", sorted(OUT.glob("*/*.log")), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_batch_line_of_the_generated_fixtures_parses(path) -> None:  # type: ignore[no-untyped-def]
    lines = normalize_text(path.read_text(encoding="utf-8"))
    batch_lines = [line for line in lines if " batch" in line.text and line.text.startswith(("Decode", "Prefill"))]
    samples = [parse_batch_line(line.text, line.meta.timestamp, line.offset) for line in batch_lines]
    assert batch_lines and None not in samples
    seconds = [sample.seconds for sample in samples if sample is not None]
    assert None not in seconds and seconds == sorted(seconds)  # type: ignore[type-var]
