"""Ray's word that the actor running the engine raised in its constructor, with the actor's own error not in the paste
(reasoning/wrapper_death.py): the report says where that error is (the actor, its pid's worker log, its node), and
leads with the engine's error when the log shows it.

Threads: OpenRLHF/OpenRLHF#358 (LLMRayActor), GuanxingLu/vlarl#8 (VLARayActor), ray-project/ray#54739 (Ray Serve LLM's
_EngineBackgroundProcess).  Ray's exception is raised by real CPython from a `ray/exceptions.py` installed in a
temporary site-packages tree, with the first line of the message Ray's ActorDiedError writes (python/ray/exceptions.py)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import diagnose_text
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import OPTIONS, first_diagnosis

RAY_EXCEPTIONS = "class ActorDiedError(Exception):\n    pass\n"
CREATION_TASK = ("The actor died because of an error raised in its creation task, ray::LLMRayActor.__init__() "
                 "(pid=236832, ip=10.1.2.3, actor_id=310c5f405ee4130f2335d35902000000, "
                 "repr=<vllm_engine.LLMRayActor object at 0x7ff1c965d870>)")


def ray_death(tmp_path: Path, message: str) -> str:
    run = traceback_of_installed(tmp_path, {"ray/exceptions.py": RAY_EXCEPTIONS},
                                 f"from ray.exceptions import ActorDiedError\nraise ActorDiedError({message!r})\n")
    assert "ray.exceptions.ActorDiedError: The actor died" in run.stderr
    return run.stderr


def test_the_actor_s_hidden_error_is_where_the_report_sends_the_reader(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(ray_death(tmp_path, CREATION_TASK))
    assert diagnosis.fix is not None
    first = diagnosis.fix.steps[0]
    assert "the actor LLMRayActor raised an error in its constructor" in first
    assert "on its node (10.1.2.3): worker-*-236832.err" in first and "/tmp/ray/session_latest/logs" in first


def test_an_actor_that_died_without_its_constructor_raising_gets_no_such_step(tmp_path: Path) -> None:
    """Look-alike: the worker process died (a kill, a crash): the process-killed row's checks, not a hidden error."""
    diagnosis = first_diagnosis(ray_death(tmp_path, "The actor died unexpectedly before finishing this task."))
    assert not any("raised an error in its constructor" in step for step in diagnosis.fix.steps)  # type: ignore[union-attr]


def test_the_engine_s_error_shown_before_it_leads(tmp_path: Path) -> None:
    engine_error = traceback_of_installed(
        tmp_path / "engine", {"vllm/engine/arg_utils.py": "def create_engine_config():\n    raise ValueError("
                              "\"The model's max seq len (32768) is larger than the maximum number of tokens that can "
                              "be stored in KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing "
                              "`max_model_len` when initializing the engine.\")\n"},
        "from vllm.engine.arg_utils import create_engine_config\ncreate_engine_config()\n").stderr
    (tmp_path / "ray").mkdir()
    diagnosis = first_diagnosis(engine_error + ray_death(tmp_path / "ray", CREATION_TASK))
    assert diagnosis.category == "kv-cache-memory"
    assert not any("raised an error in its constructor" in step for step in diagnosis.fix.steps)  # type: ignore[union-attr]


def test_ray_s_full_print_names_the_actor_s_error_below_it_instead_of_sending_the_reader_away(tmp_path: Path) -> None:
    """Ray's own print (REVIEW5 H1): the actor's traceback and error right below the ActorDiedError line, as
    OpenRLHF/OpenRLHF#358 and ray-project/ray#54739 show it.  The reader takes the traceback below for a failure of its
    own; the step names that error as the one to follow, never "the paste does not show it"."""
    actor_traceback = traceback_of_installed(
        tmp_path / "engine", {"vllm/engine/arg_utils.py": "def create_engine_config():\n    raise ValueError("
                              "\"The model's max seq len (32768) is larger than the maximum number of tokens that can "
                              "be stored in KV cache (20000).\")\n"},
        "from vllm.engine.arg_utils import create_engine_config\ncreate_engine_config()\n").stderr
    below = actor_traceback.split("Traceback (most recent call last):\n", 1)[1]
    (tmp_path / "ray").mkdir()
    report = diagnose_text(ray_death(tmp_path / "ray", f"{CREATION_TASK}\n{below}"), OPTIONS)
    steps = [step for failure in report.failures if failure.diagnosis and failure.diagnosis.fix
             for step in failure.diagnosis.fix.steps]
    assert any("raised an error in its constructor" in step and "ValueError: The model's max seq len" in step
               for step in steps)
    assert not any("does not show it" in step for step in steps)
    assert any(failure.diagnosis and failure.diagnosis.category == "kv-cache-memory" for failure in report.failures)
