"""The committed vLLM fixtures (real `vllm serve` runs of 0.11.2 and 0.33.0, made by
scripts/oracle_vllm/make_fixtures.py) against logsleuth's diagnosis, and the vLLM flag catalogs against what
those runs accepted.  Fast: no vLLM here; scripts/oracle_vllm/verify_fixes.py runs every fix for real."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.fixes import catalog as catalogs

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "vllm"
VERSIONS = ("0.11.2", "0.33.0")


def _metas() -> list[tuple[Path, dict]]:
    return [(path, tomllib.loads(path.read_text())) for path in sorted(FIXTURES.glob("*/*.toml"))]


FAILING = [(p, m) for p, m in _metas() if m["expect_failure"] and m["expect_pattern"]]
PASSING = [(p, m) for p, m in _metas() if not m["expect_failure"]]


def _id(item: tuple[Path, dict]) -> str:
    return f"{item[1]['engine_version']}-{item[1]['case']}"


def test_both_releases_have_fixtures() -> None:
    assert {m["engine_version"] for _, m in FAILING} == set(VERSIONS)


@pytest.mark.parametrize("item", FAILING, ids=_id)
def test_fixture_is_diagnosed_as_its_pattern_with_a_fix(item: tuple[Path, dict]) -> None:
    path, meta = item
    log = path.with_suffix(".log").read_text()
    assert log.startswith("+ vllm serve "), "the first line is the command as bash -x printed it"
    options = DiagnoseOptions(include_user_patterns=False, command=meta["command"], engine_version=meta["engine_version"])
    diagnosis = diagnose_text(log, options).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == meta["expect_pattern"]
    assert diagnosis.fix is not None
    fix = diagnosis.fix
    if fix.command is not None:
        assert fix.command.startswith("vllm serve ") and fix.command != meta["command"]
    else:
        assert fix.needs_input or not fix.flags, "a fix without a command says what it needs"


@pytest.mark.parametrize("item", PASSING, ids=_id)
def test_every_flag_a_passing_run_used_is_in_its_catalog(item: tuple[Path, dict]) -> None:
    _, meta = item
    catalog = catalogs.load("vllm", meta["engine_version"])
    assert catalog is not None and catalog.version == meta["engine_version"]
    data = json.loads((REPO / "logsleuth" / "fixes" / "catalogs" / f"vllm-{meta['engine_version']}.json").read_text())
    negations = {n for f in data["flags"] for n in f["negations"]}
    for word in shlex.split(meta["command"])[2:]:
        if word.startswith("--"):
            assert catalog.find(word) is not None or word in negations, word


def test_catalogs_record_aliases_negations_and_removed_flags() -> None:
    old = json.loads((REPO / "logsleuth/fixes/catalogs/vllm-0.11.2.json").read_text())
    new = json.loads((REPO / "logsleuth/fixes/catalogs/vllm-0.33.0.json").read_text())
    assert old["engine"] == new["engine"] == "vllm"
    by_name = {f["name"]: f for f in new["flags"]}
    assert "-tp" in by_name["--tensor-parallel-size"]["aliases"]
    assert "--disable-prefix-caching" in by_name["--enable-prefix-caching"]["negations"]
    assert "--no-enable-prefix-caching" in {n for f in old["flags"] for n in f["negations"]}
    assert {"--swap-space", "--task", "--cuda-graph-sizes"} <= {r["name"] for r in new["removed"]}
    renamed = {f["name"]: f["renamed_to"] for f in old["flags"] if f["deprecated"]}
    assert renamed["--cuda-graph-sizes"] == "--cudagraph-capture-sizes"
