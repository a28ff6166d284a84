"""tests/fixtures/health/: the committed fixtures are what scripts/health_fixtures/ writes, say what the
manifest says, start like real launches, and the benchmark writer plants what it is asked to."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from logsleuth.health.metrics import parse_batch_line
from logsleuth.health.model import BatchSample
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.normalize import normalize_text
from scripts.health_fixtures import PLANTS, write_steady_state
from scripts.health_fixtures.fixtures import MANIFEST, OUT
from scripts.health_fixtures.scenarios import ACCEPT, CAUSE_IDS, PATTERN_IDS
from scripts.health_fixtures.wordings import VERSIONS

REPO = Path(__file__).resolve().parents[2]
GENERATE = REPO / "scripts" / "health_fixtures" / "generate.py"
# Issue 15's contract (/work/notes/issue15/contract.md), written out: the generator's constants must match it.
CONTRACT_PATTERNS = {
    "sglang-health-accept-length-near-one", "sglang-health-kv-pool-full-retract", "sglang-health-queue-growth",
    "sglang-health-throughput-collapse", "sglang-health-cuda-graph-disabled",
    "sglang-health-weights-not-initialized", "sglang-health-precision-fallback",
}
CONTRACT_CAUSES = {
    "draft-weights-not-loaded", "wrong-speculative-algorithm", "draft-for-another-model", "target-updated-mid-run",
}
MAX_BATCH_LINES, MAX_BYTES = 600, 150 * 1024


def _all_entries() -> list[dict[str, object]]:
    return tomllib.loads((OUT / MANIFEST).read_text(encoding="utf-8"))["fixtures"]


def _manifest() -> list[dict[str, object]]:
    """SGLang's entries (vLLM's say `engine = "vllm"`: tests/health/test_vllm_health.py)."""
    return [entry for entry in _all_entries() if entry.get("engine", "sglang") == "sglang"]


def _samples(text: str) -> list[BatchSample]:
    lines = normalize_text(text)
    return [s for line in lines if (s := parse_batch_line(line.text, line.meta.timestamp, line.offset))]


def _check(out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(GENERATE), "--check", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_committed_fixtures_are_what_the_generator_writes() -> None:
    result = _check(OUT)
    assert result.returncode == 0, result.stderr


def test_check_reports_an_edited_a_missing_and_an_extra_file(tmp_path: Path) -> None:
    copy = tmp_path / "health"
    shutil.copytree(OUT, copy)
    edited = copy / "0.5.9" / "healthy.log"
    edited.write_text(edited.read_text(encoding="utf-8").replace("#queue-req: 0", "#queue-req: 9", 1), encoding="utf-8")
    (copy / "0.5.23" / "retraction-storm.log").unlink()
    (copy / "0.5.9" / "leftover.log").write_text("x\n", encoding="utf-8")
    result = _check(copy)
    assert result.returncode == 1
    for expected in ("0.5.9/healthy.log (differs)", "0.5.23/retraction-storm.log (missing)",
                     "0.5.9/leftover.log (no longer generated)"):
        assert expected in result.stderr


def test_the_manifest_names_only_the_contracts_ids() -> None:
    assert set(PATTERN_IDS) == CONTRACT_PATTERNS and set(CAUSE_IDS) == CONTRACT_CAUSES
    for entry in _manifest():
        assert set(entry["patterns"]) <= CONTRACT_PATTERNS, entry  # type: ignore[arg-type]
        if ACCEPT in entry["patterns"]:  # type: ignore[operator]
            assert entry["first_cause"] in CONTRACT_CAUSES, entry
        else:
            assert "first_cause" not in entry, entry


def test_the_manifest_lists_every_log_and_only_logs_that_exist() -> None:
    listed = {str(entry["path"]) for entry in _all_entries()}
    on_disk = {path.relative_to(OUT).as_posix() for path in OUT.rglob("*.log")}
    assert listed == on_disk


def test_every_pattern_has_positives_on_two_versions_and_healthy_logs_on_all() -> None:
    versions: dict[str, set[str]] = defaultdict(set)
    negatives: set[str] = set()
    for entry in _manifest():
        for pattern in entry["patterns"]:  # type: ignore[attr-defined]
            versions[pattern].add(str(entry["version"]))
        if entry["scenario"] == "healthy":
            negatives.add(str(entry["version"]))
    assert {pattern for pattern, seen in versions.items() if len(seen) >= 2} == CONTRACT_PATTERNS
    assert negatives == set(VERSIONS)
    assert {str(e["scenario"]) for e in _manifest() if not e["patterns"] and e["scenario"].startswith("nearmiss")}  # type: ignore[union-attr]


@pytest.mark.parametrize("entry", _manifest(), ids=lambda entry: str(entry["path"]))
def test_each_fixture_starts_like_a_real_launch_of_its_version(entry: dict[str, object]) -> None:
    path = OUT / str(entry["path"])
    text = path.read_text(encoding="utf-8")
    assert len(text.encode()) <= MAX_BYTES
    tracker = LaunchTracker()
    for line in normalize_text(text):
        tracker.observe(line)
    launch = tracker.info()
    assert (launch.engine, launch.engine_version, launch.engine_version_source) == ("sglang", entry["version"], "log")
    assert launch.command and "--model-path" in launch.command
    assert launch.server_args_complete and dict(launch.server_args)["model_path"].startswith("'/models/")
    assert "The server is fired up and ready to roll!" in text
    samples = _samples(text)
    assert 100 <= len(samples) <= MAX_BATCH_LINES


def _accept_lengths(version: str, scenario: str) -> list[float]:
    samples = _samples((OUT / version / f"{scenario}.log").read_text(encoding="utf-8"))
    return [s.accept_length for s in samples if s.kind == "decode" and s.accept_length is not None]


@pytest.mark.parametrize(("scenario", "low", "high"), [("healthy-spec", 2.7, 3.1), ("accept-near-one", 1.0, 1.05),
                                                        ("eagle3-draft-with-eagle", 1.0, 1.05),
                                                        ("nearmiss-accept-hard", 1.45, 1.75)])
def test_accept_lengths_are_what_the_scenario_says(scenario: str, low: float, high: float) -> None:
    for entry in _manifest():
        if entry["scenario"] == scenario:
            lengths = _accept_lengths(str(entry["version"]), scenario)
            assert lengths and low <= statistics.median(lengths) <= high, entry["path"]


def test_accept_drop_falls_to_one_in_the_middle() -> None:
    lengths = _accept_lengths("0.5.9", "accept-drop")
    half = len(lengths) // 2
    assert statistics.median(lengths[: half - 5]) > 2.7 and statistics.median(lengths[half + 5 :]) < 1.05


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_steady_state_log_is_healthy_without_plants(tmp_path: Path) -> None:
    path = tmp_path / "healthy.log"
    write_steady_state(path, 3 << 20, "0.5.9", [])
    data = path.read_bytes()
    assert (3 << 20) - 4096 < len(data) <= 3 << 20 and data.endswith(b"\n")
    text = data.decode()
    assert "KV cache pool is full" not in text and "accept len" not in text and "cuda graph: False, gen" not in text
    samples = _samples(text)
    assert max(s.queue_requests or 0 for s in samples) < 10
    seconds = [s.seconds for s in samples]
    assert None not in seconds and seconds == sorted(seconds)  # type: ignore[type-var]


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_steady_state_log_plants_runs_in_the_middle_and_warnings_at_start_up(tmp_path: Path) -> None:
    path = tmp_path / "planted.log"
    write_steady_state(path, 24 << 20, "0.5.23", list(PLANTS))
    text = path.read_text(encoding="utf-8")
    size = len(text)

    def where(needle: str) -> float:
        return text.index(needle) / size

    assert 0.25 <= where("KV cache pool is full. Retract requests.") <= 0.75
    assert 0.25 <= where("accept len: 1.0") <= 0.75 and where("accept len: 2.") < 0.25
    assert 0.25 <= where("cuda graph: False, gen") <= 0.75
    # Warning lines at start-up, before the first batch line, where SGLang prints them while loading.
    first_batch = where("Decode batch")
    assert where("Parameter base_model.model.model.layers.0.mlp.down_proj.weight not found") < first_batch
    assert where("Using FP8 KV cache but no scaling factors provided.") < first_batch
    queues = [s.queue_requests or 0 for s in _samples(text) if s.kind == "decode"]
    assert max(queues) >= 120 and queues[-1] < 10  # it grew hour after hour in the middle; the end is healthy


def test_steady_state_refuses_unknown_problems(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown problems to plant: gremlins"):
        write_steady_state(tmp_path / "x.log", 1 << 20, "0.5.9", ["gremlins"])
