"""The health patterns against the generated fixtures (tests/fixtures/health, scripts/health_fixtures), and the
health library's loading, thresholds and cause ranking.  Real files, the real scan: nothing stands in."""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from logsleuth.diagnosis.library import load_patterns
from logsleuth.health.library import load_health_patterns, parse_health_pattern
from logsleuth.health.run import HealthOptions, check_health
from logsleuth.health.scan import FULL_READ_BYTES

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "health"
PATTERNS = ROOT / "patterns" / "sglang"
MANIFEST = [  # SGLang's fixtures (vLLM's: tests/health/test_vllm_health.py)
    entry for entry in tomllib.loads((FIXTURES / "manifest.toml").read_text(encoding="utf-8"))["fixtures"]
    if entry.get("engine", "sglang") == "sglang"
]
sys.path.insert(0, str(ROOT))  # the checkout: scripts.health_fixtures
from scripts.health_fixtures.steady import write_steady_state  # noqa: E402

BUNDLED = tuple(p for p in load_health_patterns(include_user=False).patterns if p.engine == "sglang")


def _options(**kwargs: object) -> HealthOptions:
    return HealthOptions(include_user_patterns=False, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["path"] for entry in MANIFEST])
def test_each_fixture_shows_exactly_its_patterns_and_its_first_cause(entry: dict[str, object]) -> None:
    report = check_health([str(FIXTURES / str(entry["path"]))], _options())
    assert sorted(f.pattern_id for f in report.findings) == sorted(entry["patterns"])  # type: ignore[arg-type]
    assert report.batches >= 300 and not report.sampled
    if entry.get("first_cause"):
        (finding,) = report.findings
        assert finding.causes[0].id == entry["first_cause"]
        assert finding.evidence, "a finding shows the lines it stands on"


# For each pattern, the near miss that looks like it and must not fire (scripts/health_fixtures/scenarios.py).
NEAR_MISSES = {
    "sglang-health-accept-length-near-one": "nearmiss-accept-hard",
    "sglang-health-kv-pool-full-retract": "nearmiss-single-kv-full",
    "sglang-health-queue-growth": "nearmiss-queue-bump",
    "sglang-health-throughput-collapse": "nearmiss-throughput-fewer-running",
    "sglang-health-cuda-graph-disabled": "nearmiss-cuda-graph-large-batch",
    "sglang-health-weights-not-initialized": "nearmiss-weights-unused",
    "sglang-health-precision-fallback": "nearmiss-dtype-upcast",
}


def test_every_health_pattern_has_positive_and_near_miss_fixtures() -> None:
    assert set(NEAR_MISSES) == {p.id for p in BUNDLED}
    for pattern in BUNDLED:
        positives = [e for e in MANIFEST if pattern.id in e["patterns"]]
        assert len({e["version"] for e in positives}) >= 2, pattern.id
        near = [e for e in MANIFEST if e["scenario"] == NEAR_MISSES[pattern.id]]
        assert near and all(pattern.id not in e["patterns"] for e in near), pattern.id  # each checked to be silent
        assert any(e["scenario"] == "healthy" and pattern.id not in e["patterns"] for e in MANIFEST)


def test_every_bundled_regex_compiles_and_the_ids_follow_the_file_names() -> None:
    for path in sorted(PATTERNS.glob("health-*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        pattern = parse_health_pattern(data, str(path), check=True)  # compiles every regex now
        assert pattern.id == f"sglang-{path.stem}"
        for detect in pattern.detects:
            if detect.line is not None:
                assert detect.line.compiled().pattern == detect.line.pattern
    assert {p.id for p in BUNDLED} >= {
        "sglang-health-accept-length-near-one", "sglang-health-kv-pool-full-retract", "sglang-health-queue-growth",
        "sglang-health-throughput-collapse", "sglang-health-cuda-graph-disabled",
        "sglang-health-weights-not-initialized", "sglang-health-precision-fallback",
    }


def test_failure_and_health_patterns_share_the_library_but_not_the_loader() -> None:
    failure_ids = {p.id for p in load_patterns(include_user=False).patterns}
    assert not failure_ids & {p.id for p in BUNDLED}
    assert "sglang-eagle-partial-spec-args" in failure_ids


def test_thresholds_are_data_a_user_pattern_changes_them(tmp_path: Path) -> None:
    # The queue bump near miss climbs to ~60 and drains: no finding with the bundled 100-request threshold.
    bump = str(FIXTURES / "0.5.9" / "nearmiss-queue-bump.log")
    assert not check_health([bump], _options()).findings
    text = (PATTERNS / "health-queue-growth.toml").read_text(encoding="utf-8")
    mine = tmp_path / "patterns"
    mine.mkdir()
    (mine / "queue.toml").write_text(text.replace("min_increase = 100", "min_increase = 30").replace(
        "min_batches = 60", "min_batches = 20"), encoding="utf-8")
    report = check_health([bump], _options(pattern_dirs=(str(mine),)))
    assert [f.pattern_id for f in report.findings] == ["sglang-health-queue-growth"]


def test_a_broken_user_health_pattern_is_one_warning_and_the_rest_still_work(tmp_path: Path) -> None:
    mine = tmp_path / "patterns"
    mine.mkdir()
    (mine / "bad-regex.toml").write_text(
        'id = "my-health-bad"\nkind = "health"\ntitle = "t"\ncategory = "throughput"\nroot_cause = "r"\n'
        '[[detect]]\nsignal = "lines"\nline = "(unclosed"\n[[cause]]\nid = "c"\ntext = "t"\nfix = "f"\n',
        encoding="utf-8",
    )
    (mine / "bad-signal.toml").write_text(
        'id = "my-health-odd"\nkind = "health"\ntitle = "t"\ncategory = "throughput"\nroot_cause = "r"\n'
        '[[detect]]\nsignal = "vibes"\n[[cause]]\nid = "c"\ntext = "t"\nfix = "f"\n',
        encoding="utf-8",
    )
    report = check_health([str(FIXTURES / "0.5.9" / "retraction-storm.log")], _options(pattern_dirs=(str(mine),)))
    assert [f.pattern_id for f in report.findings] == ["sglang-health-kv-pool-full-retract"]
    assert any("bad-regex.toml" in w and "invalid regular expression" in w for w in report.warnings)
    assert any("bad-signal.toml" in w and "signal" in w for w in report.warnings)
    # A failure-pattern loader reading the same directory skips health files quietly, and vice versa.
    assert not [e for e in load_patterns([mine], include_user=False).errors if "health" in e]


def test_the_causes_follow_the_version_the_user_names() -> None:
    log = str(FIXTURES / "0.5.9" / "accept-near-one.log")
    (finding,) = check_health([log], _options()).findings
    assert [c.id for c in finding.causes][:1] == ["draft-weights-not-loaded"]
    assert "0.5.9" in finding.causes[0].evidence and "--speculative-algorithm EAGLE3" in finding.causes[0].evidence
    # 0.5.23 loads both layer names: that cause is gone, and the next one leads.
    (later,) = check_health([log], _options(engine_version="0.5.23")).findings
    assert [c.id for c in later.causes] == ["draft-for-another-model"]


def test_an_eagle3_draft_served_as_eagle_names_the_algorithm_first_and_not_the_loader() -> None:
    (finding,) = check_health([str(FIXTURES / "0.5.9" / "eagle3-draft-with-eagle.log")], _options()).findings
    ids = [c.id for c in finding.causes]
    assert ids[0] == "wrong-speculative-algorithm" and "draft-weights-not-loaded" not in ids
    assert "--speculative-algorithm EAGLE" in finding.causes[0].evidence


def test_a_collapse_that_speculation_explains_is_told_within_it() -> None:
    report = check_health([str(FIXTURES / "0.5.9" / "accept-drop.log")], _options())
    (finding,) = report.findings
    assert finding.pattern_id == "sglang-health-accept-length-near-one"
    assert "then dropped" in finding.summary and "decode throughput collapsed" in finding.summary
    assert finding.causes[0].id == "target-updated-mid-run"


@pytest.fixture(scope="module")
def large_logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two steady-state logs past FULL_READ_BYTES, so that they are sampled: one healthy, one with every
    problem planted (runs in the middle of the file, warning lines at start-up)."""
    root = tmp_path_factory.mktemp("large")
    healthy, planted = root / "healthy.log", root / "planted.log"
    size = FULL_READ_BYTES + (16 << 20)
    write_steady_state(healthy, size, "0.5.9", [])
    write_steady_state(planted, size, "0.5.9", [
        "retraction-storm", "accept-drop", "queue-growth", "throughput-collapse", "cuda-graph-disabled",
        "weights-not-initialized", "precision-fallback",
    ])
    return healthy, planted


def test_a_large_log_is_sampled_and_each_planted_problem_is_named(large_logs: tuple[Path, Path]) -> None:
    healthy, planted = large_logs
    clean = check_health([str(healthy)], _options())
    assert clean.sampled and not clean.findings and clean.batches > 500
    report = check_health([str(planted)], _options())
    assert report.sampled
    assert {f.pattern_id for f in report.findings} == {
        "sglang-health-accept-length-near-one", "sglang-health-kv-pool-full-retract", "sglang-health-queue-growth",
        "sglang-health-throughput-collapse", "sglang-health-cuda-graph-disabled",
        "sglang-health-weights-not-initialized", "sglang-health-precision-fallback",
    }
    # Read: the whole log searched once, a fraction of it read.
    (source,) = report.sources
    assert source.bytes_read == source.size


def test_a_log_with_several_launches_is_judged_by_the_latest(tmp_path: Path) -> None:
    log = tmp_path / "two.log"
    with log.open("wb") as out:
        for name in ("0.5.9/retraction-storm.log", "0.5.9/healthy.log"):
            shutil.copyfileobj((FIXTURES / name).open("rb"), out)
    assert not check_health([str(log)], _options()).findings
