"""Rule rule-container-cuda-requirement (reasoning/container_runtime.py): the NVIDIA container runtime refusing an
image whose CUDA the host's driver does not support.

The wordings are libnvidia-container's (nvidia-container-cli's "requirement error: unsatisfied condition: cuda>=X",
quoted in NVIDIA/nvidia-container-toolkit#152) and nvidia-container-runtime's CDI mode ("requirements not met:
unsatisfied condition: cuda>=X (cuda=Y)"), as docker's daemon reports them."""

from __future__ import annotations

import pytest

from tests.reasoning.diagnosed import first_diagnosis

LAUNCH = "docker run --gpus all --ipc=host lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct\n"
DAEMON = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime "
          "create failed: runc create failed: unable to start container process: error during container init: error running "
          "hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n")
LEGACY = ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer "
          "version, or use an earlier cuda container: unknown.\n")
CDI = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime "
       "create failed: failed to create NVIDIA Container Runtime: failed to construct OCI spec modifier: requirements not "
       "met: unsatisfied condition: cuda>=12.9 (cuda=12.6): unknown\n")


@pytest.mark.parametrize(("log", "needed"), [(LAUNCH + DAEMON + LEGACY, "12.4"), (LAUNCH + CDI, "12.9")])
def test_the_refusal_says_the_host_driver_is_older_than_the_images_cuda(log: str, needed: str) -> None:
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-container-cuda-requirement", "orchestration", "rule")
    assert diagnosis.fix is not None and f"supports CUDA {needed}" in diagnosis.fix.summary
    assert "driver" in diagnosis.root_cause and "general guidance" in diagnosis.fix.summary
    # No image tag the log does not give, no flag, no command to run the container differently.
    assert "lmsysorg/" not in diagnosis.fix.summary and not diagnosis.fix.flags and diagnosis.fix.command is None
    assert not any("NVIDIA_DISABLE_REQUIRE" in step for step in diagnosis.fix.steps)


def test_the_hosts_cuda_is_named_when_the_runtime_gives_it() -> None:
    assert "CUDA 12.6" in first_diagnosis(LAUNCH + CDI).root_cause


def test_the_condition_is_not_read_as_a_package_pin() -> None:
    diagnosis = first_diagnosis(LAUNCH + DAEMON + LEGACY)
    assert not any("pin cuda" in check for words in diagnosis.engine_says for check in words.checks)


@pytest.mark.parametrize("log", [LAUNCH + DAEMON + LEGACY, LAUNCH + CDI])
def test_the_table_files_the_refusal_where_the_rule_does(log: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the rules set aside (a line the rule cannot read), the categories table says orchestration too, not
    cuda-error (review 5 of stop 51: the two paths disagreed)."""
    from logsleuth.reasoning import registry

    monkeypatch.setattr(registry, "RULES", ())
    assert first_diagnosis(log).category == "orchestration"
