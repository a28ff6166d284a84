"""The same real mistakes through SGLang's own argument validation, in the oracle venvs (scripts/oracle/setup.sh):
where `check` marks a flag ✗ the real SGLang must reject the command, where every flag passes it must accept it.
Marked `oracle` (not in the default run: `pytest -m oracle tests/check`); a version whose venv is absent is skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.check.validation import oracle_home, oracle_python
from logsleuth.check.verify import check_words
from tests.check.cases import CASES, EAGLE, MODEL, Case

pytestmark = pytest.mark.oracle

# One of each kind (each run imports SGLang: 6-15 s).
ORACLE_CASES = [case for case in CASES if case.id in {
    "vllm-tensor-parallel-size", "vllm-max-model-len", "vllm-positional-model", "removed-enable-piecewise-cuda-graph",
    "split-cuda-graph-max-bs", "bad-choice-case", "bad-int", "switch-given-value", "missing-value",
    "deprecated-accepted", "seed-flags-pass",
}]


def _need(version: str) -> None:
    if oracle_python(version) is None:
        pytest.skip(f"no oracle venv for SGLang {version} in {oracle_home()} (make oracle-setup)")


@pytest.mark.parametrize("case", ORACLE_CASES, ids=[case.id for case in ORACLE_CASES])
def test_real_validation_agrees_with_the_catalog_check(case: Case) -> None:
    _need(case.version)
    result = check_words(["python", "-m", "sglang.launch_server", *case.args], case.version)
    assert result.validation is not None
    flags_pass = all(verdict.ok for verdict in result.flags) and not result.traps
    expected = "validated" if flags_pass else "rejected"
    if case.id == "seed-flags-pass":
        expected = "rejected"  # every flag passes, the combination does not: the trap and SGLang agree
    assert result.validation.state == expected, result.validation.message
    if expected == "validated":
        assert result.validation.message == f"validated on SGLang {case.version}"


@pytest.mark.parametrize("version", ["0.4.10.post2", "0.5.9", "0.5.23"])
def test_seed_partial_sizes_rejected_and_fixed_command_validated(version: str) -> None:
    _need(version)
    partial = [*MODEL, *EAGLE, "--speculative-num-draft-tokens", "16", "--speculative-eagle-topk", "1"]
    result = check_words(["python", "-m", "sglang.launch_server", *partial], version)
    assert [trap.pattern for trap in result.traps] == ["sglang-eagle-partial-spec-args"]
    assert result.validation is not None and result.validation.state == "rejected"
    assert "AssertionError" in result.validation.message
    corrected = result.traps[0].corrected
    assert corrected is not None
    fixed = check_words([corrected], version)
    assert fixed.passed, fixed
    assert fixed.validation is not None and fixed.validation.message == f"validated on SGLang {version}"


def test_validation_writes_nothing_in_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _need("0.5.9")
    monkeypatch.setenv("LOGSLEUTH_ORACLE_HOME", str(oracle_home()))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HF_HOME", raising=False)
    result = check_words(["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--tp-size", "1"], "0.5.9")
    assert result.validation is not None and result.validation.state == "validated"
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == []

