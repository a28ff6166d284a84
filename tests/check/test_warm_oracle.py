"""The warm oracle (scripts/oracle/warm.py: the engine imported once, one fork per run) decides as a cold run does.

``make verify-fixes`` and ``make test-oracle`` trust the warm runs, so each case here runs the same command both
ways on the real engine and compares the verdict, the exit status and the last line of the output (with the
pids and clock times taken out). The cases cover a pass, an argparse refusal and a failure raised deep in the
engine's own validation, on the newest release of each oracle, and the deep failure on the oldest. Marked ``oracle``.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers import load_oracle

pytestmark = pytest.mark.oracle

SGLANG = "python -m sglang.launch_server --model-path {tiny_llama}"
EAGLE3 = " --speculative-algorithm EAGLE3 --speculative-draft-model-path {tiny_eagle3}"
SGLANG_CASES = {
    "passes": SGLANG,
    "argparse-refusal": SGLANG + " --tp-size two",
    "eagle3-assert": SGLANG + EAGLE3 + " --speculative-num-draft-tokens 16 --speculative-eagle-topk 1",
}
VLLM = "vllm serve {tiny_llama}"
VLLM_CASES = {
    "passes": VLLM + " --max-model-len 2048",
    "argparse-refusal": VLLM + " --max-model-len 2048 --no-such-flag 3",
    "config-refusal": VLLM + " --max-model-len 99999999",
}
VOLATILE = re.compile(r"\x1b\[[0-9;]*m|pid=\d+|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\d\d-\d\d \d\d:\d\d:\d\d")


def _last_line(output: str) -> str:
    lines = [VOLATILE.sub("", line).strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _compare(run, version: str, command: str, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    if not (run.venv_dir(version) / ".ready").exists():
        pytest.skip(f"no oracle venv for {run.venv_dir(version).name}")
    monkeypatch.setenv("LOGSLEUTH_ORACLE_WARM", "1")
    warm = run.run_command_string(version, command)
    monkeypatch.setenv("LOGSLEUTH_ORACLE_WARM", "0")
    cold = run.run_command_string(version, command)
    assert (warm.passed, warm.returncode) == (cold.passed, cold.returncode), (warm.output[-2000:], cold.output[-2000:])
    assert _last_line(warm.output) == _last_line(cold.output)
    assert run.WARM._servers.get(str(run.venv_dir(version))) is not None, "the warm server did not start"


# Every case on the newest release; the oldest gets the deep failure (each cold run costs 15-40 s here).
SGLANG_RUNS = [(case, "0.5.23") for case in sorted(SGLANG_CASES)] + [("eagle3-assert", "0.4.10.post2")]
VLLM_RUNS = [(case, "0.33.0") for case in sorted(VLLM_CASES)] + [("config-refusal", "0.11.2")]


@pytest.mark.parametrize(("case", "version"), SGLANG_RUNS)
def test_warm_sglang_run_matches_a_cold_one(case: str, version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _compare(load_oracle("oracle"), version, SGLANG_CASES[case], monkeypatch)


@pytest.mark.parametrize(("case", "version"), VLLM_RUNS)
def test_warm_vllm_run_matches_a_cold_one(case: str, version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _compare(load_oracle("oracle_vllm"), version, VLLM_CASES[case], monkeypatch)


def test_a_run_with_its_own_environment_goes_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable given with the command may be read at import time, which the warm server did before it."""
    run = load_oracle("oracle")
    monkeypatch.setenv("LOGSLEUTH_ORACLE_WARM", "1")
    assert run.WARM.run(run.venv_dir("0.5.23"), ["-m"], {}, {"SGLANG_X": "1"}, 10.0) is None
