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


def _row_id(row: RelaxedCheck) -> str:
    return f"{row.function}@{row.relaxed_in}:{Path(row.failing).parent.name}"


def _fixture(path: str) -> dict[str, object]:
    return tomllib.loads((REPO / path).read_text(encoding="utf-8"))


def _upgrades(report: object, row: RelaxedCheck) -> list[str]:
    fix = report.failures[0].diagnosis.fix  # type: ignore[attr-defined]
    return [alt.summary for alt in fix.alternatives if f'"{row.engine}>={row.upgrade_release}"' in " ".join(alt.steps)]


def _archive_members(engine: str) -> list[str]:
    from logsleuth.facts.raise_sites import _archive

    return [name for name in _archive(engine).namelist() if name.endswith(".py.json")]


def test_the_table_has_rows() -> None:
    assert ROWS


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_the_same_command_fails_before_and_passes_after(row: RelaxedCheck) -> None:
    failing, passing = _fixture(row.failing), _fixture(row.proof)
    assert failing["command"] == passing["command"]
    assert failing["expect_failure"] is True and passing["expect_failure"] is False
    assert versions.version_key(str(failing["engine_version"])) < versions.version_key(row.relaxed_in)
    assert versions.version_key(str(passing["engine_version"])) >= versions.version_key(row.upgrade_release)
    assert versions.version_key(row.upgrade_release) >= versions.version_key(row.relaxed_in)


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_the_index_ends_the_check_where_the_row_says(row: RelaxedCheck) -> None:
    """The check ends at `last`; the releases before `relaxed_in` that lack it still refuse the launch with the
    same message from another file (a check that moved before a later release relaxed it)."""
    from logsleuth.facts.raise_sites import read_member

    report = diagnose([str(REPO / row.failing.replace(".toml", ".log"))], DiagnoseOptions())
    site = site_of(report.failures[0].failure, report.launch)
    assert site is not None and site.releases[-1] == row.last
    between = site.indexed[site.indexed.index(row.last) + 1:site.indexed.index(row.relaxed_in)]
    if not between:
        return
    message = next(e["message"] for e in read_member(row.engine, f"{row.file}.json")
                   if e["function"] == site.function and row.guard in (e["condition"], *e["guards"]))
    order = read_member(row.engine, "index.json")["releases"]
    holding = set()  # the releases in which some file of the engine raises that message
    for member in _archive_members(row.engine):
        for entry in read_member(row.engine, member) or ():
            if isinstance(entry, dict) and entry.get("message") == message:
                holding |= {order[n] for run in entry["lines"] for n in range(run[0], run[1] + 1)}
    assert set(between) <= holding
    assert row.relaxed_in not in holding


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_an_older_or_unknown_release_is_offered_the_upgrade_after_its_own_fix(row: RelaxedCheck) -> None:
    log = str(REPO / row.failing.replace(".toml", ".log"))
    report = diagnose([log], DiagnoseOptions())
    (offer,) = _upgrades(report, row)
    assert row.source in offer
    # vLLM prints its release in the log (then the offer names it); SGLang's validation errors do not.
    shown = report.launch.engine_version if report.launch.engine_version_source == "log" else None
    if shown is None:
        assert "if upgrading is an option" in offer.lower()
    else:
        assert f"from {shown} to {row.upgrade_release}" in offer
    assert report.failures[0].diagnosis.fix.summary != offer  # the fix for the user's release stays first
    older = str(_fixture(row.failing)["engine_version"])
    (named,) = _upgrades(diagnose([log], DiagnoseOptions(engine_version=older)), row)
    assert f"from {older} to {row.upgrade_release}" in named


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
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


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_the_oracle_verifier_runs_an_upgrade_on_a_release_at_or_after_it(row: RelaxedCheck) -> None:
    """`make verify-fixes` (and `make verify-fixes-vllm`) prove every alternative: an upgrade's is the same command
    on the oldest oracle release at or after the one it names, which must exist (the row's proof is one)."""
    import sys

    sys.path.insert(0, str(REPO / "scripts" / "oracle"))
    from upgrade import oldest_at_or_after, upgrade_target

    report = diagnose([str(REPO / row.failing.replace(".toml", ".log"))], DiagnoseOptions())
    fix = report.failures[0].diagnosis.fix
    entries = [{"flags": [{"op": op.op, "flag": op.flag} for op in alt.flags], "env": dict(alt.env), "steps": list(alt.steps)}
               for alt in fix.alternatives]
    assert [upgrade_target(entry) for entry in entries].count((row.engine, row.upgrade_release)) == 1
    proof_release = str(_fixture(row.proof)["engine_version"])
    assert oldest_at_or_after(row.upgrade_release, [str(_fixture(row.failing)["engine_version"]), proof_release]) == proof_release
    flagged = {"flags": [{"op": "remove", "flag": "--x"}], "steps": [f'pip install --upgrade "{row.engine}>={row.upgrade_release}"']}
    assert upgrade_target(flagged) is None  # a flag change is run on the user's release, not as an upgrade


def test_the_draft_model_upgrade_names_the_first_release_whose_cpu_runner_takes_speculative_decoding() -> None:
    """vLLM 0.15.0 drops the draft-model refusal, but its CPU model runner asserts that no speculative decoding is
    configured up to 0.19.1 (the index's own record of that assert): the upgrade names 0.20.0, so a CPU-only launch
    is not sent into that second failure."""
    from logsleuth.facts.raise_sites import read_member

    rows = [row for row in ROWS if row.engine == "vllm" and "draft model" in row.change]
    assert rows and all(row.relaxed_in == "0.15.0" and row.upgrade_release == "0.20.0" for row in rows)
    releases = read_member("vllm", "index.json")["releases"]
    (refusal,) = [e for e in read_member("vllm", "vllm/v1/worker/cpu_model_runner.py.json")
                  if e["kind"] == "assert" and e["condition"] == "self.speculative_config is None"]
    last = max(run[1] for run in refusal["lines"])
    assert releases[last] == "0.19.1" and releases[last + 1] == "0.20.0"


CONDITIONAL = [row for row in ROWS if row.launch_has or row.launch_lacks or row.launch_same]


def _offered(report: object, engine: str) -> bool:
    fix = report.failures[0].diagnosis.fix  # type: ignore[attr-defined]
    return fix is not None and any(f'pip install --upgrade "{engine}>=' in " ".join(alt.steps) for alt in fix.alternatives)


@pytest.mark.parametrize("row", CONDITIONAL, ids=_row_id)
def test_a_row_for_some_launches_is_not_offered_when_the_log_does_not_show_the_launch(row: RelaxedCheck, tmp_path: Path) -> None:
    """The later release takes only some of the launches the check refused: without the command (the fixture's
    log minus its `+ python ...` line), the upgrade could walk into the same check, so it is not offered."""
    log = (REPO / row.failing.replace(".toml", ".log")).read_text(encoding="utf-8")
    assert _offered(diagnose([str(REPO / row.failing.replace(".toml", ".log"))], DiagnoseOptions()), row.engine)
    blind = tmp_path / "server.log"
    blind.write_text("".join(line for line in log.splitlines(keepends=True) if not line.startswith("+ ")), encoding="utf-8")
    report = diagnose([str(blind)], DiagnoseOptions())
    assert report.launch.command is None
    assert report.failures[0].diagnosis is not None and not _offered(report, row.engine)


@pytest.mark.parametrize(("fixture", "command"), [
    # NGRAM on an XPU: 0.5.16 takes a CPU device only (XPU from 0.5.21).
    ("sglang/0.5.9/relaxed_ngram_on_cpu", "python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM --device xpu"),
    # PP with mixed chunk and speculative decoding: 0.5.11 still refuses speculative decoding with PP.
    ("sglang/0.5.9/relaxed_pp_with_mixed_chunk",
     "python -m sglang.launch_server --model-path m --pp-size 2 --enable-mixed-chunk --speculative-algorithm EAGLE3"),
    # EAGLE top-k 4 with page size 16 on another backend than flashinfer, fa3 and triton: 0.5.13 still refuses it.
    ("sglang/0.5.9/relaxed_eagle_topk_page_size_triton",
     "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 --speculative-eagle-topk 4 --page-size 16"
     " --attention-backend torch_native"),
    # No LoRA batch slots with the radix cache: every later release refuses --max-loras-per-batch 0.
    ("sglang/0.4.10.post2/relaxed_lora_paths_with_radix_cache",
     "python -m sglang.launch_server --model-path m --lora-paths a --max-loras-per-batch 0"),
    # A dense TP size other than 1 and the TP size: 0.5.13 still refuses it.
    ("sglang/0.5.9/relaxed_moe_dense_tp_equal_tp", "python -m sglang.launch_server --model-path m --tp-size 4 --moe-dense-tp-size 2"),
])
def test_a_launch_the_later_release_still_refuses_is_not_offered_the_upgrade(fixture: str, command: str) -> None:
    log = str(REPO / "tests" / "fixtures" / f"{fixture}.log")
    assert _offered(diagnose([log], DiagnoseOptions()), "sglang")  # the fixture's own launch is
    assert not _offered(diagnose([log], DiagnoseOptions(command=command)), "sglang")


def test_pp_with_speculative_decoding_is_not_offered_the_mixed_chunk_upgrade() -> None:
    """The same assert refuses PP with speculative decoding, which 0.5.11 to 0.5.20 still refuse."""
    for version in ("0.4.10.post2", "0.5.9"):
        report = diagnose([str(REPO / f"tests/fixtures/sglang/{version}/pp_with_speculative.log")], DiagnoseOptions())
        assert report.failures[0].diagnosis.fix is not None and not _offered(report, "sglang")


def test_the_lora_radix_cache_upgrade_names_the_first_release_whose_scheduler_takes_it() -> None:
    """0.5.1 drops the refusal, but its scheduler (and 0.5.2's) asserts the FCFS policy and no hierarchical cache
    for LoRA's radix cache (the index's record): the upgrade names 0.5.3, where neither assert is left."""
    from logsleuth.facts.raise_sites import read_member

    (row,) = [row for row in ROWS if row.function == "check_lora_server_args" and row.relaxed_in == "0.5.1"]
    assert row.upgrade_release == "0.5.3"
    releases = read_member("sglang", "index.json")["releases"]
    asserts = [e for e in read_member("sglang", "sglang/srt/managers/scheduler.py.json")
               if e["kind"] == "assert" and "LoRA radix cache" in e["message"]]
    assert len(asserts) == 2
    assert {releases[max(run[1] for run in e["lines"])] for e in asserts} == {"0.5.2"}
