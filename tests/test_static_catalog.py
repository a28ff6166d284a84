"""The static flag catalogs (issue 29, item 4): every release's flags read from its source, proven against the
five real-parser catalogs, and used so that no advice names a flag the log's release lacks."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from logsleuth import versions
from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from logsleuth.models import ENGINE_NAMES, Fix, Report
from tests.helpers import corpus_logs
from tests.test_engine_everywhere import pattern_fixture_engine

REPO = Path(__file__).resolve().parents[1]
CATALOGS = REPO / "logsleuth" / "fixes" / "catalogs"
SHARED_CORPUS = REPO.parent / "shared" / "corpus"  # the team's shared corpus beside the checkout, when there
PARSER_RELEASES = [("sglang", "0.4.10.post2"), ("sglang", "0.5.9"), ("sglang", "0.5.23"), ("vllm", "0.11.2"),
                   ("vllm", "0.33.0")]


def _document() -> dict[str, Any]:
    return json.loads(gzip.decompress((CATALOGS / "static.json.gz").read_bytes()))


def _static_by_name(engine: str, version: str) -> dict[str, dict[str, Any]]:
    records = static_catalogs.flag_records(engine, version)
    assert records is not None, f"no static catalog of {engine} {version}"
    return {record["name"]: record for record in records}


def _option_strings(entries: list[dict[str, Any]]) -> set[str]:
    return {name for e in entries for name in (e["name"], *e["aliases"], *e.get("negations", ())) if name.startswith("--")}


# -- A: what is shipped ---------------------------------------------------------------------------------------

def test_every_release_in_range_has_a_static_catalog_with_its_source() -> None:
    document = _document()
    releases = {engine: [e["version"] for e in entries] for engine, entries in document["releases"].items()}
    for engine, oldest, known in (("sglang", "0.3.0", "0.4.6.post2"), ("vllm", "0.6.0", "0.8.5.post1")):
        keys = [versions.version_key(v) for v in releases[engine]]
        assert releases[engine][0] == oldest and keys == sorted(keys)  # type: ignore[type-var]
        assert known in releases[engine]
        assert {"0.4.10.post2", "0.5.9", "0.5.23"} <= set(releases["sglang"])
        assert {"0.11.2", "0.33.0"} <= set(releases["vllm"])
    for entries in document["releases"].values():
        for entry in entries:
            assert re.fullmatch(r"[0-9a-f]{64}", entry["source"]["sha256"]) and entry["source"]["file"].endswith(".whl")
            assert len(entry["flags"]) > 50, entry["version"]


def test_the_shipped_file_is_small() -> None:
    assert (CATALOGS / "static.json.gz").stat().st_size < 1_000_000


# -- B: the extractor, proven on the five releases whose real parser was dumped ----------------------------------

# Differences between the static reading and the real parser that are understood, by release: (flag, what, why).
KNOWN_GAPS: dict[tuple[str, str], dict[tuple[str, str], str]] = {
    ("vllm", "0.33.0"): {
        ("--all2all-backend", "choices"): "the field's Literal lists 'passthrough'; ParallelConfig removes it from the "
                                          "CLI's choices at run time",
    },
}


@pytest.mark.parametrize(("engine", "version"), PARSER_RELEASES, ids=[f"{e}-{v}" for e, v in PARSER_RELEASES])
def test_static_catalog_equals_the_real_parser(engine: str, version: str) -> None:
    real = json.loads((CATALOGS / f"{engine}-{version}.json").read_text(encoding="utf-8"))["flags"]
    static = _static_by_name(engine, version)
    assert _option_strings(list(static.values())) == _option_strings(real)
    gaps = KNOWN_GAPS.get((engine, version), {})
    differences = []
    for entry in real:
        mine = static.get(entry["name"])
        if mine is None:
            continue  # an alias's owner named differently: the option strings above already agree
        if mine["choices"] != static_catalogs.UNKNOWN and sorted(mine["choices"] or []) != sorted(map(str, entry["choices"] or [])):
            differences.append((entry["name"], "choices"))
        if mine["default"] != static_catalogs.UNKNOWN and mine["default"] != entry["default"]:
            differences.append((entry["name"], "default"))
    # A deprecation is marked only where the source says it literally (a `deprecated=True`, a Deprecated* action,
    # a help text that opens with it); the real dump also reads it from help texts the source builds.
    real_deprecated = {entry["name"] for entry in real if entry["deprecated"]}
    assert {name for name, record in static.items() if record["deprecated"]} <= real_deprecated
    assert sorted(d for d in differences if d not in gaps) == []
    assert sorted(gaps) == sorted(set(differences) & set(gaps)), "a known gap that no longer differs: drop it"


def test_static_catalog_knows_most_choices_and_defaults() -> None:
    """Unknown is allowed, but it must stay the exception: most values are literal in the source."""
    for engine, version in PARSER_RELEASES:
        records = list(_static_by_name(engine, version).values())
        unknown = sum(r["default"] == static_catalogs.UNKNOWN for r in records)
        assert unknown < len(records) * 0.25, (engine, version, unknown)


# -- C: catalog.load answers for every release, and never guesses ------------------------------------------------

def test_load_gives_the_exact_static_release_and_no_nearest_guess() -> None:
    old = catalogs.load("sglang", "0.3.0")
    assert old is not None and old.source == "static" and old.version == "0.3.0"
    assert old.find("--attention-backend") is None  # the example: added in 0.3.1
    assert catalogs.load("sglang", "0.3.1").find("--attention-backend") is not None  # type: ignore[union-attr]
    assert catalogs.load("sglang", "0.2.14") is None  # older than any catalog: no guess
    assert catalogs.load("vllm", "0.6.3.post1") is not None and catalogs.load("vllm", "0.6.3.post1").find("--model-impl") is None  # type: ignore[union-attr]
    real = catalogs.load("sglang", "0.5.9")
    assert real is not None and real.source == "parser"
    assert catalogs.load("sglang", "0.5.9+cu124").source == "parser"  # type: ignore[union-attr]
    assert catalogs.load("vllm", "99.0.0") is None


def test_a_negation_is_a_flag_of_the_static_catalog() -> None:
    catalog = catalogs.load("vllm", "0.8.5")
    assert catalog is not None and catalog.source == "static"
    info = catalog.find("--no-enable-prefix-caching")
    assert info is not None and info.name == "--enable-prefix-caching" and not info.takes_value


# -- D: no suggested flag is missing from the log's release ------------------------------------------------------

_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
OPTIONS = DiagnoseOptions(include_user_patterns=False)


def _engine_flags(engine: str) -> set[str]:
    """Every flag any release of the engine has: a `--word` outside it is not the engine's (pip's, docker's)."""
    document = _document()
    return _option_strings([document["flags"][n] for e in document["releases"].get(engine, ()) for n in e["flags"]])


def _fixes(fix: Fix | None) -> list[Fix]:
    out, todo = [], [fix] if fix else []
    while todo:
        one = todo.pop()
        out.append(one)
        todo.extend(one.alternatives)
    return out


def suggested_flags(report: Report, text: str) -> list[tuple[str, str, str, str]]:
    """(engine, version, flag, where) for each flag a diagnosis suggests that the log did not already show."""
    out = []
    for group in report.failures:
        diagnosis = group.diagnosis
        if diagnosis is None:
            continue
        engine = diagnosis.engine or report.launch.engine
        version = report.launch.engine_version or diagnosis.engine_version
        if engine is None or version is None:
            continue
        shown = set(_FLAG.findall(text))  # the user's own flags and those the engine's message names
        for fix in _fixes(diagnosis.fix):
            named = [(op.to or op.flag, "flag op") for op in fix.flags if op.op != "remove"]
            named += [(flag, "command") for flag in _FLAG.findall(fix.command or "")]
            named += [(flag, "summary/steps") for part in (fix.summary, *fix.steps) for flag in _FLAG.findall(part)
                      if f"{flag} is not in {ENGINE_NAMES[engine]} {version}" not in part]  # said: not in it
            out += [(engine, version, flag.split("=", 1)[0], where) for flag, where in named if flag not in shown]
    return out


def _flag_misses(logs: list[Path], as_release: dict[str, str] | None = None) -> tuple[list[str], int]:
    """`as_release`: diagnose each log as that release of its engine (as `--engine-version` would)."""
    misses, checked = [], 0
    for log in logs:
        text = log.read_text(encoding="utf-8", errors="surrogateescape")
        engine_of_log = pattern_fixture_engine(log)
        if as_release is not None and engine_of_log not in as_release:
            continue
        options = OPTIONS if as_release is None else DiagnoseOptions(
            include_user_patterns=False, engine=engine_of_log, engine_version=as_release[engine_of_log])
        report = diagnose_text(text, options)
        for engine, version, flag, where in suggested_flags(report, text):
            release = static_catalogs.release_named(engine, version)
            if release is None or flag not in _engine_flags(engine):
                continue
            checked += 1
            if flag not in _option_strings(list(_static_by_name(engine, release).values())):
                misses.append(f"{log.relative_to(log.parents[2])}: {engine} {version}: {flag} ({where})")
    return sorted(set(misses)), checked


SHARDS = 4


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_suggested_flag_is_missing_from_the_logs_release(shard: int) -> None:
    """Every log of the wild corpus, the pattern fixtures and (where present) the shared corpus, diagnosed
    in-process: each flag a fix, an alternative, a corrected command or the general guidance suggests, and the log
    did not show, exists in the static catalog of the report's release (known or inferred)."""
    misses, checked = _flag_misses(corpus_logs()[shard::SHARDS])
    assert misses == [], "\n".join(misses)
    assert checked > 5  # not vacuous: some reports of each shard name a release and suggest its flags


# Releases well before the real-parser ones: there, the nearest-catalog fallback offered flags they lack.
# The oldest pair runs in the default suite; the others (~20 s each: every pattern fixture diagnosed again) in
# make test-slow, which CI runs.
OLD_RELEASES = [
    {"sglang": "0.3.0", "vllm": "0.6.0"},
    pytest.param({"sglang": "0.4.3", "vllm": "0.7.3"}, marks=pytest.mark.slow),
    pytest.param({"sglang": "0.5.2", "vllm": "0.8.5"}, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("as_release", OLD_RELEASES, ids=["sglang-0.3.0-vllm-0.6.0", "sglang-0.4.3-vllm-0.7.3",
                                                          "sglang-0.5.2-vllm-0.8.5"])
def test_pattern_fixtures_as_an_older_release_suggest_no_flag_it_lacks(as_release: dict[str, str]) -> None:
    """Each pattern fixture diagnosed as an older release (the user's --engine-version): the same check."""
    misses, checked = _flag_misses(sorted((REPO / "tests/fixtures/patterns").rglob("*.log")), as_release)
    assert checked > 100
    assert misses == [], "\n".join(misses)


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="the shared corpus (../shared/corpus) is not beside this checkout")
def test_shared_corpus_is_included() -> None:
    assert any(str(log).startswith(str(SHARED_CORPUS)) for log in corpus_logs())


if __name__ == "__main__":  # pragma: no cover - a listing for a person: python tests/test_static_catalog.py
    found, count = _flag_misses(corpus_logs())
    print("\n".join(found), f"\n{len(found)} misses of {count} checked", file=sys.stderr)
