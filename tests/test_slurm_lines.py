"""Slurm's own lines around an engine run under `srun` (tracebacks/grammar.py KILL_LINE, typeless_errors.py
SLURM_ERROR): srun's report of how its tasks ended (`_task_finish`, src/plugins/launch/slurm/launch_slurm.c in
SchedMD/slurm: `NODE: task N: Exited with exit code N`, `NODE: tasks N-M: Killed`, printed through `error()`, which
prefixes `srun: error: `) is a trailer of the failure above it, never argparse's refusal of the engine's arguments;
the scheduler's refusal of a job (`srun: error: Unable to allocate resources: …`) is its own failure, filed under
orchestration.  The traceback is one real CPython produced."""

from __future__ import annotations

import subprocess
import sys

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)


@pytest.fixture(scope="module")
def engine_traceback(tmp_path_factory: pytest.TempPathFactory) -> str:
    package = tmp_path_factory.mktemp("site-packages") / "sglang" / "srt" / "managers"
    package.mkdir(parents=True)
    script = package / "scheduler.py"
    script.write_text("def run_scheduler_process(batch):\n    return batch.forward_mode\n\n\nrun_scheduler_process(None)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert "AttributeError: 'NoneType' object has no attribute 'forward_mode'" in run.stderr
    return run.stderr


@pytest.mark.parametrize("trailer", [
    "srun: error: gpu-node-07: task 0: Exited with exit code 1\n",
    "srun: error: gpu-node-07: tasks 0-3: Exited with exit code 1\nsrun: Terminating StepId=4242.0\n",
    "srun: error: gpu-node-07: tasks 4,6: Killed\n",
])
def test_the_task_report_after_a_traceback_is_not_a_failure_of_its_own(engine_traceback: str, trailer: str) -> None:
    report = diagnose_text("+ srun python -m sglang.launch_server --model-path /m --tp 8\n" + engine_traceback + trailer,
                           OPTIONS)
    assert [group.failure.final.type for group in report.failures] == ["AttributeError"]
    assert all(group.diagnosis is None or group.diagnosis.category != "unknown-flag" for group in report.failures)


def test_the_task_report_alone_says_a_task_ended_not_an_argument_error() -> None:
    report = diagnose_text("srun: error: gpu-node-07: task 0: Exited with exit code 1\n", OPTIONS)
    (group,) = report.failures
    assert group.failure.kind == "killed"
    assert group.diagnosis is not None and group.diagnosis.category == "process-killed"


@pytest.mark.parametrize("line", [
    "srun: error: Unable to allocate resources: Invalid partition name specified\n",
    "sbatch: error: Batch job submission failed: Requested node configuration is not available\n",
])
def test_the_schedulers_refusal_is_an_orchestration_failure(line: str) -> None:
    report = diagnose_text(line, OPTIONS)
    (group,) = report.failures
    assert group.failure.kind != "usage"
    assert group.diagnosis is not None and group.diagnosis.category == "orchestration"


def test_the_schedulers_refusal_yields_to_the_engines_failure(engine_traceback: str) -> None:
    report = diagnose_text(engine_traceback + "srun: error: Unable to create step for job 4242: Job/step already completing\n",
                           OPTIONS)
    assert report.failures[0].failure.final.type == "AttributeError"


def test_an_engine_programs_own_argparse_error_is_still_one() -> None:
    line = "launch_server.py: error: unrecognized arguments: --tp-szie 8\n"
    (group,) = diagnose_text(line, OPTIONS).failures
    assert group.failure.kind == "usage"
