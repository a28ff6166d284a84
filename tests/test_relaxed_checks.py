"""Upgrades past a check a later release relaxed (facts/relaxed_checks.toml, reasoning/relaxed_check.py).

Each row is held to its proofs: the raise site index must agree on where the check ends, and two fixtures
generated from real runs must show the same command failing before and passing after."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from logsleuth import versions
from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.facts.relaxed_checks import RelaxedCheck, relaxed_checks
from logsleuth.reasoning.raise_site import site_of

REPO = Path(__file__).resolve().parents[1]
ROWS = relaxed_checks()


def _fixture(path: str) -> dict[str, object]:
    return tomllib.loads((REPO / path).read_text(encoding="utf-8"))


def _upgrades(report: object, row: RelaxedCheck) -> list[str]:
    fix = report.failures[0].diagnosis.fix  # type: ignore[attr-defined]
    return [alt.summary for alt in fix.alternatives if f'"{row.engine}>={row.relaxed_in}"' in " ".join(alt.steps)]


def test_the_table_has_rows() -> None:
    assert ROWS


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.function}@{row.relaxed_in}")
def test_the_same_command_fails_before_and_passes_after(row: RelaxedCheck) -> None:
    failing, passing = _fixture(row.failing), _fixture(row.proof)
    assert failing["command"] == passing["command"]
    assert failing["expect_failure"] is True and passing["expect_failure"] is False
    assert versions.version_key(str(failing["engine_version"])) < versions.version_key(row.relaxed_in)
    assert versions.version_key(str(passing["engine_version"])) >= versions.version_key(row.relaxed_in)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.function}@{row.relaxed_in}")
def test_the_index_ends_the_check_where_the_row_says(row: RelaxedCheck) -> None:
    report = diagnose([str(REPO / row.failing.replace(".toml", ".log"))], DiagnoseOptions())
    site = site_of(report.failures[0].failure, report.launch)
    assert site is not None and site.releases[-1] == row.last
    assert site.indexed[site.indexed.index(row.last) + 1] == row.relaxed_in


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.function}@{row.relaxed_in}")
def test_an_older_or_unknown_release_is_offered_the_upgrade_after_its_own_fix(row: RelaxedCheck) -> None:
    log = str(REPO / row.failing.replace(".toml", ".log"))
    unknown = diagnose([log], DiagnoseOptions())
    (offer,) = _upgrades(unknown, row)
    assert row.source in offer and "if upgrading is an option" in offer.lower()
    assert unknown.failures[0].diagnosis.fix.summary != offer  # the fix for the user's release stays first
    older = str(_fixture(row.failing)["engine_version"])
    (named,) = _upgrades(diagnose([log], DiagnoseOptions(engine_version=older)), row)
    assert f"from {older} to {row.relaxed_in}" in named


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.function}@{row.relaxed_in}")
def test_the_relaxing_release_itself_is_not_told_to_upgrade(row: RelaxedCheck) -> None:
    log = str(REPO / row.failing.replace(".toml", ".log"))
    report = diagnose([log], DiagnoseOptions(engine_version=row.relaxed_in))
    assert report.failures[0].diagnosis.fix is None or not _upgrades(report, row)


def test_a_check_that_only_moved_to_another_file_is_not_offered_an_upgrade() -> None:
    # check_server_args' `base_gpu_id >= 0` leaves server_args.py after 0.5.18 but still fails 0.5.23's
    # validation (the 0.5.23 fixture of the same case fails): moved, not relaxed.
    assert _fixture("tests/fixtures/sglang/0.5.23/negative_base_gpu_id.toml")["expect_failure"] is True
    report = diagnose([str(REPO / "tests/fixtures/sglang/0.5.9/negative_base_gpu_id.log")], DiagnoseOptions())
    fix = report.failures[0].diagnosis.fix
    assert fix is not None and not any("pip install --upgrade" in " ".join(alt.steps) for alt in fix.alternatives)


def test_the_oracle_verifier_runs_an_upgrade_on_a_release_at_or_after_it() -> None:
    """`make verify-fixes` proves every alternative: an upgrade's is the same command on a later real release."""
    import sys

    sys.path.insert(0, str(REPO / "scripts" / "oracle"))
    from verify_fixes import upgrade_release

    row = ROWS[0]
    report = diagnose([str(REPO / row.failing.replace(".toml", ".log"))], DiagnoseOptions())
    fix = report.failures[0].diagnosis.fix
    entries = [{"flags": [{"op": op.op, "flag": op.flag} for op in alt.flags], "env": dict(alt.env), "steps": list(alt.steps)}
               for alt in fix.alternatives]
    assert [upgrade_release(entry) for entry in entries].count(row.relaxed_in) == 1
    assert upgrade_release({"flags": [{"op": "remove", "flag": "--x"}], "steps": [f'pip install --upgrade "sglang>={row.relaxed_in}"']}) is None
