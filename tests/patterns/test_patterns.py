"""The pattern library, tested as data.

One parametrized test runs every fixture: the generated runtime-failure fixtures in
tests/fixtures/patterns/<pattern-id>/{positive,negative}-*.log and the fixtures recorded
from real SGLang runs in tests/fixtures/sglang/<version>/<case>.{log,toml}.  Test ids
start with the pattern id, so `pytest -k sglang-gpu-oom-kv-cache` runs one pattern.

A meta-test keeps the library honest: every bundled pattern parses strictly, has a
unique id and a known category, at least one positive and one negative fixture, and
a generated docs page.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet, load_patterns, parse_pattern
from logsleuth.diagnosis.schema import CATEGORIES, LazyRegex
from logsleuth.models import Report

REPO = Path(__file__).resolve().parents[2]
PATTERN_FIXTURES = REPO / "tests" / "fixtures" / "patterns"
REAL_FIXTURES = REPO / "tests" / "fixtures" / "sglang"
BUNDLED = REPO / "patterns"
DOCS = REPO / "docs" / "patterns"


@dataclass(frozen=True)
class PatternCase:
    pattern: str  # the pattern the fixture is about
    expect: str  # "positive" | "negative" | "real"
    log: Path
    command: str | None = None
    engine_version: str | None = None
    expect_failure: bool = True

    @property
    def id(self) -> str:
        if self.expect == "real":
            return f"{self.pattern or 'no-pattern'}/real-{self.log.parent.name}-{self.log.stem}"
        return f"{self.pattern}/{self.log.stem}"


def pattern_cases() -> Iterator[PatternCase]:
    for log in sorted(PATTERN_FIXTURES.glob("*/*.log")):
        kind = log.name.split("-", 1)[0]
        if kind in ("positive", "negative"):
            yield PatternCase(log.parent.name, kind, log)
    for meta_path in sorted(REAL_FIXTURES.glob("*/*.toml")):
        log = meta_path.with_suffix(".log")
        if not log.exists():
            continue
        meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
        yield PatternCase(
            str(meta.get("expect_pattern") or ""),
            "real",
            log,
            command=meta.get("command"),
            engine_version=meta.get("engine_version"),
            expect_failure=bool(meta.get("expect_failure", True)),
        )


CASES = list(pattern_cases())


@pytest.fixture(scope="module")
def bundled() -> PatternSet:
    return load_patterns(include_user=False, strict=True)


def _diagnose(case: PatternCase, patterns: PatternSet) -> Report:
    # A fixture shows its pattern's engine: some logs (a bare NCCL abort, a client's error) show no engine by
    # themselves, and a pattern of an engine the log does not show gives only its category (issue 28).
    engine = case.pattern.split("-", 1)[0] if case.pattern.startswith(("sglang-", "vllm-")) else None
    options = DiagnoseOptions(
        include_user_patterns=False, command=case.command, engine_version=case.engine_version, engine=engine
    )
    return diagnose_text(case.log.read_text(encoding="utf-8"), options, patterns=patterns)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_pattern_fixture(case: PatternCase, bundled: PatternSet) -> None:
    report = _diagnose(case, bundled)
    by_id = {pattern.id: pattern for pattern in bundled.patterns}
    diagnosed = [group.diagnosis.pattern for group in report.failures if group.diagnosis]
    primary = report.failures[0].diagnosis if report.failures else None
    if case.expect == "negative":
        # a near miss: no failure of the report may be diagnosed as this pattern
        assert case.pattern not in diagnosed, f"{case.log.name} must not match {case.pattern}"
        return
    if case.expect == "real" and not case.pattern:
        if case.expect_failure:
            pytest.skip("real run without an expected pattern")
        assert primary is None, f"a passing run was diagnosed as {primary.pattern if primary else None}"
        return
    assert report.failures, f"no failure found in {case.log}"
    assert primary is not None, f"primary failure not diagnosed: {report.failures[0].signature}"
    assert primary.pattern == case.pattern
    assert case.pattern in by_id, f"fixture expects unknown pattern {case.pattern}"
    assert primary.category == by_id[case.pattern].category
    assert primary.fix is not None and primary.fix.summary, "every diagnosis carries a fix"
    assert "{" not in primary.root_cause or "}" not in primary.root_cause, "uninterpolated capture in root cause"


# -- the meta-test ------------------------------------------------------------------------


def _bundled_files() -> list[Path]:
    """The failure patterns (health patterns have their own tests: tests/health)."""
    return sorted(
        p
        for p in BUNDLED.glob("*/*.toml")
        if p.parent.name != "catalogs" and tomllib.loads(p.read_text(encoding="utf-8")).get("kind") != "health"
    )


def test_every_bundled_pattern_file_parses_strictly() -> None:
    ids: dict[str, Path] = {}
    for path in _bundled_files():
        pattern = parse_pattern(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
        assert pattern.category in CATEGORIES
        for rule in pattern.rules:  # bundled regexes compile lazily at run time: prove they all compile here
            for expression in rule.regexes():
                assert isinstance(expression, LazyRegex)
                assert expression.compiled().pattern == expression.pattern
        assert pattern.id not in ids, f"duplicate id {pattern.id}: {ids.get(pattern.id)} and {path}"
        ids[pattern.id] = path
        assert pattern.id.startswith(f"{path.parent.name}-"), f"{path}: id should start with the engine"
    assert len(ids) >= 30, "the issue asks for at least 30 patterns"


def test_every_pattern_has_positive_and_negative_fixtures(bundled: PatternSet) -> None:
    positives: dict[str, int] = {}
    negatives: dict[str, int] = {}
    for case in CASES:
        if not case.pattern:
            continue
        target = negatives if case.expect == "negative" else positives
        target[case.pattern] = target.get(case.pattern, 0) + 1
    missing = [
        f"{p.id}: {'no positive ' if not positives.get(p.id) else ''}{'no negative' if not negatives.get(p.id) else ''}"
        for p in bundled.patterns
        if not positives.get(p.id) or not negatives.get(p.id)
    ]
    assert not missing, "patterns without fixtures (add tests/fixtures/patterns/<id>/negative-*.log):\n" + "\n".join(missing)
    unknown = sorted((set(positives) | set(negatives)) - {p.id for p in bundled.patterns})
    assert not unknown, f"fixtures for patterns that do not exist: {unknown}"


def test_every_pattern_has_a_docs_page(bundled: PatternSet) -> None:
    missing = [p.id for p in bundled.patterns if not (DOCS / f"{p.id}.md").exists()]
    assert not missing, f"no docs page (run: make docs): {missing}"


def _load_script(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_generated_docs_are_up_to_date() -> None:
    gen = _load_script("gen_pattern_docs")
    stale = gen.stale_files()
    assert not stale, "docs/patterns is stale; run `make docs` (python scripts/gen_pattern_docs.py):\n" + "\n".join(stale)


@pytest.mark.slow
def test_generated_fixtures_are_up_to_date() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_pattern_fixtures.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_pattern_file_is_named_after_its_id() -> None:
    """`patterns/sglang/invalid-int-value.toml` holds `sglang-invalid-int-value`: the file is found by its id."""
    for path in _bundled_files():
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        assert f"{path.parent.name}-{path.stem}" == data["id"], path


def test_every_builder_a_bundled_pattern_names_exists() -> None:
    from logsleuth.fixes.builders import BUILDERS

    for path in _bundled_files():
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        name = (data.get("fix") or {}).get("builder")
        assert name is None or name in BUILDERS, f"{path}: unknown builder {name}"
