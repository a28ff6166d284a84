"""`logsleuth health` on vLLM logs: its stats lines read back per release (V0 and V1), the vLLM health patterns
on the generated fixtures (tests/fixtures/health/vllm, scripts/health_fixtures/vllm_*.py), the engines kept
apart, and the command line.  Real files and the real scan, nothing stands in."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from logsleuth.health.library import load_health_patterns, parse_health_pattern
from logsleuth.health.run import HealthOptions, check_health
from logsleuth.health.scan import FULL_READ_BYTES
from logsleuth.health.vllm_metrics import VllmStatsReader
from logsleuth.ingest.normalize import normalize_text
from scripts.health_fixtures import vllm_wordings as say
from scripts.health_fixtures.vllm_scenarios import CAUSE_IDS, PATTERN_IDS

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "health"
SCRIPT = Path(sys.executable).parent / "logsleuth"
SCHEMA = json.loads((ROOT / "logsleuth" / "health_report.schema.json").read_text(encoding="utf-8"))
MANIFEST = [
    entry for entry in tomllib.loads((FIXTURES / "manifest.toml").read_text(encoding="utf-8"))["fixtures"]
    if entry.get("engine") == "vllm"
]
VLLM_PATTERNS = tuple(p for p in load_health_patterns(include_user=False).patterns if p.engine == "vllm")
SGLANG_FLAGS = ("--mem-fraction-static", "--max-running-requests", "--speculative-algorithm", "--context-length",
                "--tp-size", "--cuda-graph-max-bs", "--disable-cuda-graph")


def _options(**kwargs: object) -> HealthOptions:
    return HealthOptions(include_user_patterns=False, **kwargs)  # type: ignore[arg-type]


def _read(text: str, reader: VllmStatsReader | None = None) -> list:  # type: ignore[type-arg]
    reader = reader or VllmStatsReader()
    lines = normalize_text(text)
    return [s for line in lines if (s := reader.parse(line.text, line.meta.timestamp, line.offset))]


# --- the lines, per release -------------------------------------------------------------------------------------

STATS = [
    say.Stats(1294.7, 1285.4, 25, 0, 0.145, prefix_hit_rate=0.395),
    say.Stats(0.0, 3012.9, 256, 173, 0.987, swapped=4, preemptions=37, deferred=12),
    say.Stats(12.0, 0.4, 1, 0, 0.0),
]


@pytest.mark.parametrize("release", say.RELEASES)
@pytest.mark.parametrize("stats", STATS)
def test_a_stats_line_reads_back_in_every_release(release: str, stats: say.Stats) -> None:
    header = say.header(release, "stats", "INFO", "03-14 09:26:54", 4121)
    (sample,) = _read(header + say.stats_line(release, stats) + "\n")
    year_less = datetime(2000, 3, 14, 9, 26, 54, tzinfo=UTC).timestamp()  # metrics.py: a leap year, as UTC
    assert (sample.kind, sample.engine, sample.seconds) == ("decode", "vllm", year_less)
    assert sample.running_requests == stats.running
    assert sample.throughput == pytest.approx(stats.generation_throughput, abs=0.05)
    assert sample.token_usage == pytest.approx(stats.kv_usage, abs=0.0005)
    if say.is_v0(release):  # Pending + Swapped: both wait to run
        assert sample.queue_requests == stats.waiting + stats.swapped and sample.preemptions is None
    else:
        assert sample.queue_requests == stats.waiting
        assert sample.preemptions == (stats.preemptions if release in say.WITH_PREEMPTIONS else 0)
    assert (sample.accept_length, sample.cuda_graph) == (None, None)


SPECS = [say.Spec(4400, 3, (0.787, 0.619, 0.487), 10.0), say.Spec(9000, 3, (0.01, 0.0, 0.0), 10.0),
         say.Spec(700, 5, (0.9, 0.8, 0.7, 0.6, 0.5), 10.0)]


@pytest.mark.parametrize("release", [r for r in say.RELEASES if not say.is_v0(r)])
@pytest.mark.parametrize("spec", SPECS)
def test_the_mean_acceptance_length_counts_the_bonus_token_in_every_release(release: str, spec: say.Spec) -> None:
    # 0.8.5 printed accepted / drafts; 0.9 on 1 + accepted / drafts: the sample is always the latter.
    line = say.header(release, "spec", "INFO", "03-14 09:26:54", 4121) + say.spec_line(release, spec)
    (sample,) = _read(line + "\n")
    assert sample.accept_length == pytest.approx(1 + sum(spec.per_position), abs=0.006)
    assert sample.accept_rate == pytest.approx(spec.accepted / spec.drafted, abs=0.0006)
    assert sample.throughput is None and sample.running_requests is None


def test_v0_acceptance_is_read_per_interval_from_its_running_totals() -> None:
    # Totals since start: 1000 drafts at 2.9 tokens each, then 1000 at 1.0 -- the second line's interval says 1.0
    # where its totals alone would say 1.95.
    first = say.SpecTotals(4, 1900, 4000, 2900)
    second = say.SpecTotals(4, 1900, 8000, 3900)
    text = "".join(say.header("0.6.6.post1", "spec", "INFO", f"03-14 09:26:5{n}", 1) + say.spec_line_v0(t) + "\n"
                   for n, t in enumerate((first, second)))
    lengths = [s.accept_length for s in _read(text)]
    assert lengths == [pytest.approx(2.9), pytest.approx(1.0)]
    restarted = _read(say.spec_line_v0(say.SpecTotals(4, 10, 400, 120)) + "\n", _reader_after(second))
    assert [s.accept_length for s in restarted] == [pytest.approx(1.2)]  # totals fell: a new server, read alone


def _reader_after(totals: say.SpecTotals) -> VllmStatsReader:
    reader = VllmStatsReader()
    _read(say.spec_line_v0(totals) + "\n", reader)
    return reader


@pytest.mark.parametrize("release", say.RELEASES)
def test_a_line_cut_short_is_not_a_sample(release: str) -> None:
    stats = say.stats_line(release, STATS[1])
    usage = stats.index("GPU KV cache usage: ") + len("GPU KV cache usage: ")
    for end in (stats.index("Running"), stats.index(" reqs", stats.index("Running")), usage + 2):
        assert not _read(stats[:end] + "\n"), stats[:end]
    if not say.is_v0(release):
        spec = say.spec_line(release, SPECS[0])
        assert not _read(spec[: spec.index("Mean acceptance length") + 25] + "\n")


def test_other_data_parallel_engines_and_other_lines_are_skipped() -> None:
    line = say.stats_line("0.11.2", STATS[0])
    text = "\n".join([line, say.stats_line("0.11.2", STATS[1], engine_index=1), line,
                      "Prefix cache hit rate: GPU: 12.00%, CPU: 0.00%",  # V0's second line: not a stats line
                      "my app: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
                      "Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%"]) + "\n"
    samples = _read(text)
    assert [s.running_requests for s in samples] == [25, 25]  # engine 000 only
    aggregated = "2 Engines Aggregated: " + line.removeprefix("Engine 000: ")
    assert [s.running_requests for s in _read(aggregated + "\n" + line + "\n")] == [25]  # the aggregate first


# --- the patterns on the fixtures -------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", MANIFEST, ids=[str(entry["path"]) for entry in MANIFEST])
def test_each_vllm_fixture_shows_exactly_its_patterns_and_its_first_cause(entry: dict[str, object]) -> None:
    report = check_health([str(FIXTURES / str(entry["path"]))], _options())
    assert sorted(f.pattern_id for f in report.findings) == sorted(entry["patterns"])  # type: ignore[arg-type]
    assert report.batches >= 100 and not report.sampled
    assert report.launch.engine == "vllm" and report.launch.engine_version == entry["version"]
    if entry.get("first_cause"):
        (finding,) = report.findings
        assert finding.causes[0].id == entry["first_cause"]
        assert finding.evidence


# For each vLLM pattern, the near miss that looks like it and must not fire.
NEAR_MISSES = {
    "vllm-health-accept-length-near-one": "nearmiss-accept-hard",
    "vllm-health-preemption-storm": "nearmiss-single-preemption",
    "vllm-health-queue-growth": "nearmiss-queue-bump",
    "vllm-health-throughput-collapse": "nearmiss-throughput-fewer-running",
    "vllm-health-cuda-graph-disabled": "nearmiss-cuda-graph-piecewise",
    "vllm-health-precision-fallback": "nearmiss-fp8-kv-calibrated",
}


def test_every_vllm_pattern_has_v0_and_v1_positives_a_near_miss_and_healthy_logs() -> None:
    assert set(NEAR_MISSES) == {p.id for p in VLLM_PATTERNS} == set(PATTERN_IDS)
    for pattern in VLLM_PATTERNS:
        releases = {str(e["version"]) for e in MANIFEST if pattern.id in e["patterns"]}  # type: ignore[operator]
        assert "0.6.6.post1" in releases and len(releases - {"0.6.6.post1"}) >= 2, pattern.id  # V0 and V1
        near = [e for e in MANIFEST if e["scenario"] == NEAR_MISSES[pattern.id]]
        assert near and all(pattern.id not in e["patterns"] for e in near), pattern.id  # type: ignore[operator]
    healthy = {str(e["version"]) for e in MANIFEST if e["scenario"] in ("healthy", "healthy-spec")}
    assert healthy == set(say.RELEASES)
    causes = {str(e["first_cause"]) for e in MANIFEST if "first_cause" in e}
    assert causes == set(CAUSE_IDS)


def test_every_vllm_health_pattern_compiles_and_names_only_vllm_flags() -> None:
    for path in sorted((ROOT / "patterns" / "vllm").glob("health-*.toml")):
        text = path.read_text(encoding="utf-8")
        pattern = parse_health_pattern(tomllib.loads(text), str(path), check=True)
        assert pattern.id == f"vllm-{path.stem}" and pattern.engine == "vllm"
        for detect in pattern.detects:
            if detect.line is not None:
                assert detect.line.compiled().pattern == detect.line.pattern
        assert not [flag for flag in SGLANG_FLAGS if flag in text], path.name


def test_an_eagle3_draft_served_as_eagle_names_the_method_from_the_engine_config_line() -> None:
    (finding,) = check_health([str(FIXTURES / "vllm" / "0.33.0" / "eagle3-draft-with-eagle.log")], _options()).findings
    assert [c.id for c in finding.causes][:2] == ["wrong-speculative-method", "draft-for-another-model"]
    assert '"method": "eagle3"' in finding.causes[0].fix
    assert "ngram-without-repetition" in [c.id for c in finding.causes]  # not ruled out: possible, after


@pytest.mark.parametrize(("release", "first"), [("0.6.6.post1", "requested-by-flag"),
                                               ("0.11.2", "kv-cache-scales-missing")])
def test_a_precision_fallback_ranks_the_flag_the_launch_set(release: str, first: str) -> None:
    (finding,) = check_health([str(FIXTURES / "vllm" / release / "precision-fallback.log")], _options()).findings
    ids = [c.id for c in finding.causes]
    assert ids[0] == first and "explicit-slow-quantization" not in ids  # the command shows no --quantization
    assert "Casting torch.bfloat16" in finding.evidence[0].text or "scaling factor 1.0" in finding.evidence[0].text
    upcast = check_health([str(FIXTURES / "vllm" / "0.6.6.post1" / "nearmiss-dtype-upcast.log")], _options())
    assert not upcast.findings  # a lossless upcast is logged at info and is no fallback


def test_a_drop_mid_run_ranks_the_traffic_and_tells_the_collapse_within_it() -> None:
    (finding,) = check_health([str(FIXTURES / "vllm" / "0.11.2" / "accept-drop.log")], _options()).findings
    assert finding.causes[0].id == "traffic-changed"
    assert "draft-for-another-model" not in [c.id for c in finding.causes]  # it was healthy at the start
    assert "then dropped" in finding.summary and "generation throughput collapsed" in finding.summary


# --- the engines kept apart -------------------------------------------------------------------------------------


def test_sglang_patterns_never_judge_a_vllm_log_nor_vllm_patterns_an_sglang_one(tmp_path: Path) -> None:
    # Both engines print "Casting torch.bfloat16 to torch.float16.": in a vLLM log it is vLLM's finding, with
    # vLLM's causes, and SGLang's pattern of the same line stays silent.
    vllm_log = (FIXTURES / "vllm" / "0.8.5" / "healthy.log").read_text(encoding="utf-8").splitlines(keepends=True)
    vllm_log.insert(2, "WARNING 03-15 09:00:04 [config.py:2871] Casting torch.bfloat16 to torch.float16.\n")
    mixed = tmp_path / "vllm.log"
    mixed.write_text("".join(vllm_log), encoding="utf-8")
    (finding,) = check_health([str(mixed)], _options()).findings
    assert finding.pattern_id == "vllm-health-precision-fallback"
    assert not [flag for c in finding.causes for flag in SGLANG_FLAGS if flag in c.fix + c.text]
    del vllm_log[2]
    # An SGLang log with vLLM's V0 preemption warnings in it (a shared host's journal): no vLLM finding.
    sglang_log = (FIXTURES / "0.5.9" / "healthy.log").read_text(encoding="utf-8")
    warning = "WARNING 03-15 09:00:0{n} scheduler.py:1555] " + say.preempted_line("chatcmpl-1", 51) + "\n"
    other = tmp_path / "sglang.log"
    other.write_text(sglang_log + "".join(warning.format(n=n) for n in range(5)), encoding="utf-8")
    assert not check_health([str(other)], _options()).findings
    # The same warnings in a vLLM log are a finding: the patterns work, they are only kept to their engine.
    storm = tmp_path / "storm.log"
    storm.write_text("".join(vllm_log) + "".join(warning.format(n=n) for n in range(5)), encoding="utf-8")
    assert [f.pattern_id for f in check_health([str(storm)], _options()).findings] == ["vllm-health-preemption-storm"]


def test_a_vllm_log_without_its_launch_lines_is_known_by_its_stats_lines(tmp_path: Path) -> None:
    text = (FIXTURES / "vllm" / "0.11.2" / "queue-growth.log").read_text(encoding="utf-8")
    body = "".join(line for line in text.splitlines(keepends=True)
                   if "loggers.py" in line or "Uvicorn" in line)  # no command, version or engine line
    log = tmp_path / "cut.log"
    log.write_text(body, encoding="utf-8")
    report = check_health([str(log)], _options())
    assert report.launch.engine is None
    assert [f.pattern_id for f in report.findings] == ["vllm-health-queue-growth"]


def test_a_vllm_relaunch_without_a_command_line_starts_the_judgement_over(tmp_path: Path) -> None:
    log = tmp_path / "two.log"
    parts = []
    for name in ("preemption-storm.log", "healthy.log"):  # a storm, then a healthy restart
        text = (FIXTURES / "vllm" / "0.33.0" / name).read_text(encoding="utf-8")
        parts.append("".join(line for line in text.splitlines(keepends=True) if not line.startswith("+ ")))
    log.write_text("".join(parts), encoding="utf-8")
    assert not check_health([str(log)], _options()).findings
    log.write_text("".join(reversed(parts)), encoding="utf-8")
    assert [f.pattern_id for f in check_health([str(log)], _options()).findings] == ["vllm-health-preemption-storm"]
    # The dump V1 prints when its engine fails names the engine and its config too: not a relaunch.
    dump = "(EngineCore_DP0 pid=4388) ERROR 03-17 11:00:00 [dump_input.py:72] Dumping input data for V1 LLM engine "
    dump += "(v0.33.0) with config: model='/models/Meta-Llama-3.1-8B-Instruct', speculative_config=None\n"
    log.write_text(parts[0] + dump + parts[1].split("Uvicorn running", 1)[1].split("\n", 1)[1], encoding="utf-8")
    assert [f.pattern_id for f in check_health([str(log)], _options()).findings] == ["vllm-health-preemption-storm"]


def test_a_large_v0_log_is_sampled_and_its_preemption_warnings_found_by_the_search(tmp_path: Path) -> None:
    source = (FIXTURES / "vllm" / "0.6.6.post1" / "preemption-storm.log").read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    head = [line for line in lines[:4]]
    stats = [line for line in lines if "metrics.py:467]" in line][:20]
    warnings = [line for line in lines if "is preempted by" in line][:6]
    filler = "".join(stats).encode()
    log = tmp_path / "large.log"
    with log.open("wb") as out:
        out.write("".join(head).encode())
        half = (FULL_READ_BYTES // 2 + (4 << 20)) // len(filler) + 1
        for index in range(2 * half):
            out.write(filler)
            if index == half:  # a storm in the middle, which no sampled window need hold
                out.write("".join(warnings).encode())
    report = check_health([str(log)], _options())
    assert report.sampled and report.batches > 200
    assert [f.pattern_id for f in report.findings] == ["vllm-health-preemption-storm"]
    (finding,) = report.findings
    assert finding.occurrences == len(warnings)


# --- the command line -------------------------------------------------------------------------------------------


def _health(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "health", *args, "--no-user-patterns"],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("release", ["0.6.6.post1", "0.33.0"])  # V0 and V1 wordings
def test_cli_a_vllm_finding_is_exit_1_in_vllm_words_and_flags(release: str) -> None:
    done = _health(str(FIXTURES / "vllm" / release / "accept-near-one.log"), "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    jsonschema.validate(report, SCHEMA)
    (finding,) = report["findings"]
    assert finding["pattern"] == "vllm-health-accept-length-near-one"
    assert finding["causes"][0]["id"] == "draft-for-another-model"
    assert "Mean acceptance length ≤ 1.2" in finding["summary"]
    assert "--speculative-config" in done.stdout and not [f for f in SGLANG_FLAGS if f in done.stdout]
    series = {s["name"]: s for s in report["series"]}
    assert {"throughput", "accept_length", "queue_requests", "running_requests", "token_usage"} <= set(series)
    assert max(p["value"] for p in series["accept_length"]["points"]) <= 1.2


@pytest.mark.parametrize("release", say.RELEASES)
def test_cli_a_healthy_vllm_log_is_exit_0(release: str) -> None:
    done = _health(str(FIXTURES / "vllm" / release / "healthy-spec.log"), "--format", "text")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0].startswith("healthy: no finding in ")


def test_cli_a_preemption_storm_names_vllm_flags_in_every_format() -> None:
    for fmt in ("text", "markdown", "slack", "rich"):
        done = _health(str(FIXTURES / "vllm" / "0.11.2" / "preemption-storm.log"), "--format", fmt)
        assert done.returncode == 1, done.stderr
        assert "preempted" in done.stdout and "--max-num-seqs" in done.stdout
        assert not [flag for flag in SGLANG_FLAGS if flag in done.stdout], fmt


def test_mangled_vllm_lines_never_raise_and_never_give_a_negative_number() -> None:
    rng = random.Random(16)
    lines = [say.stats_line(r, s) for r in say.RELEASES for s in STATS]
    lines += [say.spec_line(r, spec) for r in say.V1 for spec in SPECS]
    lines.append(say.spec_line_v0(say.SpecTotals(4, 1900, 4000, 2900)))
    reader = VllmStatsReader()
    read = 0
    for _ in range(4000):
        chars = list(rng.choice(lines))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(chars))
            choice = rng.random()
            if choice < 0.4:
                del chars[at]
            elif choice < 0.8:
                chars[at] = rng.choice("0123456789-.,:% naex")
            else:
                chars.insert(at, rng.choice(", :-"))
        sample = reader.parse("".join(chars), rng.choice((None, "03-14 09:26:54", "junk")), 0)
        if sample is not None:
            read += 1
            numbers = (sample.running_requests, sample.queue_requests, sample.token_usage, sample.throughput,
                       sample.accept_length, sample.accept_rate, sample.preemptions)
            assert all(n is None or n >= 0 for n in numbers)
    assert read  # some mangled lines still read (a digit changed), so the check above ran


def test_a_large_v1_log_is_judged_from_its_launch_not_from_the_dump_of_a_later_failure(tmp_path: Path) -> None:
    # V1's failure dump (`Dumping input data for V1 LLM engine (v…) with config: …, speculative_config=…`)
    # holds the launch anchor too; the latest *launch* is still the engine's `Initializing` line.
    text = (FIXTURES / "vllm" / "0.11.2" / "preemption-storm.log").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    head = "".join(lines[:4])
    stats = [line for line in lines if "loggers.py" in line]
    healthy = "".join(line for line in stats if "Preemptions" not in line).encode()
    storm = "".join(line for line in stats if "Preemptions" in line).encode()
    dump = (b"\x1b[1;36m(EngineCore_DP0 pid=4388)\x1b[0;0m ERROR 03-17 11:00:00 [dump_input.py:72] Dumping input data "
            b"for V1 LLM engine (v0.11.2) with config: model='/models/Meta-Llama-3.1-8B-Instruct', "
            b"speculative_config=None, tokenizer='/models/Meta-Llama-3.1-8B-Instruct'\n")
    log = tmp_path / "large.log"
    with log.open("wb") as out:
        out.write(head.encode())
        while out.tell() < FULL_READ_BYTES // 2:
            out.write(healthy)
        while out.tell() < FULL_READ_BYTES:
            out.write(storm)
        while out.tell() < FULL_READ_BYTES + (8 << 20):
            out.write(healthy)
        out.write(dump + healthy)
    report = check_health([str(log)], _options())
    assert report.sampled and report.batches > 500
    assert [f.pattern_id for f in report.findings] == ["vllm-health-preemption-storm"]
