"""Stop 51 (wrapper15): advice aimed at the program that runs the engine when that program is at fault.

A launcher in another language that embeds Python and imports the engine: NVIDIA Dynamo's Rust engines
(ai-dynamo/dynamo lib/llm/src/engines/vllm/worker.rs, `panic!("Failed to import python 'vllm' module. Are we running in
the correct venv? {err}")`, and its sglang engine's `Failed to import python 'sglang' module. …` and `Failed to import
sglang.srt.managers.io_struct. Did sglang change? {err}`).  ai-dynamo/dynamo#349 and #441: the launcher's Python
environment did not hold the vLLM it was built for; a maintainer named the mismatch.  The Rust panic's own wording is
quoted as the panic handler prints it (std's default hook: `thread '…' panicked at FILE:L:C:` then the message).

A program that builds the engine's objects through its API, named by its process but not shown in the frames: a Ray
Serve deployment's replica (`(ServeReplica:{app}:{deployment} pid=N)`, ray/serve/_private/common.py
DeploymentID.to_replica_actor_class_name) whose vLLM serving classes got the served model names as plain strings
(ray-project/ray#50275: `'str' object has no attribute 'name'` in vllm/entrypoints/openai/serving_engine.py).  Like a
wrapper's frame calling the engine's API at its entry (OpenRLHF/OpenRLHF#922, verl-project/verl#2812), the caller was
written for another release: the wrapper row, not "a bug in vLLM, try a newer release".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import check_texts, diagnose_without_patterns, real_traceback, traceback_of_installed

PANIC = ("thread 'tokio-runtime-worker' panicked at lib/llm/src/engines/{engine}/worker.rs:247:17:\n"
         "{message}\n"
         "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")


@pytest.mark.parametrize(("engine", "message"), [
    ("vllm", "Failed to import python 'vllm' module. Are we running in the correct venv? "
             "AttributeError: class must define a '_type_' attribute"),  # ai-dynamo/dynamo#349
    ("vllm", "Failed to import python 'vllm' module. Are we running in the correct venv? "
             "ModuleNotFoundError: No module named 'vllm'"),
    ("sglang", "Failed to import python 'sglang' module. Are we running in the correct venv? "
               "ImportError: cannot import name 'ServerArgs' from 'sglang.srt.server_args'"),
    ("sglang", "Failed to import sglang.srt.managers.io_struct. Did sglang change? "
               "ModuleNotFoundError: No module named 'sglang.srt.managers.io_struct'"),
    ("vllm", "Expected vllm version 0.7.2, found 0.8.1"),
])
def test_a_launcher_that_embeds_python_failing_to_import_the_engine_is_its_environment(engine: str, message: str) -> None:
    diagnosis = diagnose_without_patterns(PANIC.format(engine=engine, message=message))
    assert diagnosis.category == "dependency-version"
    assert diagnosis.title.startswith("Likely the Python environment a launcher embeds does not hold the ")
    checks = check_texts(diagnosis)
    assert "embeds a Python interpreter" in checks and "launcher's own issues" in checks
    assert "newer release may have fixed it" not in checks
    assert "the the " not in diagnosis.title + checks and "a second the " not in checks


def test_the_launchers_panic_with_the_engine_undecided_reads_without_a_doubled_article() -> None:
    """The sglang worker's panic alone decides no engine (a Rust path is no positive evidence of it)."""
    diagnosis = diagnose_without_patterns(PANIC.format(
        engine="sglang", message="Failed to import sglang.srt.managers.io_struct. Did sglang change? "
                                 "ModuleNotFoundError: No module named 'sglang.srt.managers.io_struct'"))
    assert diagnosis.engine is None
    assert diagnosis.title == ("Likely the Python environment a launcher embeds does not hold the engine release it "
                               "was built for")
    checks = check_texts(diagnosis)
    assert "the the " not in checks and "a second the " not in checks and "newer the " not in checks


def test_another_rust_panic_stays_the_programs_own_check() -> None:
    """The look-alike: a Rust program's own unwrap failing is its bug, not an environment that imports the engine."""
    diagnosis = diagnose_without_patterns(PANIC.format(engine="vllm", message="called `Option::unwrap()` on a `None` value"))
    assert diagnosis.category == "engine-bug"
    assert "embeds a Python interpreter" not in check_texts(diagnosis)


# A project's own copy of the engine, changed by it: kvcached keeps SGLang 0.4.6.post2's tree under
# engine_integration/ and runs the engine from it (ovg-project/kvcached#1: the scheduler crashed in the patch's free path).
_SCHEDULER_CRASH = """
    class Scheduler:
        def event_loop_overlap(self):
            self.token_to_kv_pool_allocator.free_group_end()

    Scheduler().event_loop_overlap()
"""


@pytest.mark.parametrize("tree", [
    "kvcached/engine_integration/sglang-v0.4.6.post2/python/sglang",
    "myproject/third_party/vllm/vllm",
])
def test_the_engines_code_in_another_projects_copy_names_that_project_first(tree: str) -> None:
    printed = real_traceback(_SCHEDULER_CRASH, f"{tree}/srt/managers/scheduler.py")
    diagnosis = diagnose_without_patterns(printed)
    project = tree.split("/")[0]
    first = check_texts(diagnosis).splitlines()[0]
    assert first.startswith("General guidance: the engine's code in these frames runs from a copy of")
    assert f"kept inside another project ({tree.removesuffix('/python/sglang').rsplit('/', 1)[0]}" in first
    assert f"check the issues of {project} for" in first and "run the stock" in first
    # the copy may be an unchanged submodule: a possibility, not a fact
    assert "may be a build that project changed" in first


def test_a_copy_under_a_generic_directory_names_no_project() -> None:
    """`/workspace/third_party/vllm/`: `workspace` is where code sits, not a project's name."""
    printed = real_traceback(_SCHEDULER_CRASH, "workspace/third_party/vllm/vllm/srt/managers/scheduler.py")
    first = check_texts(diagnose_without_patterns(printed)).splitlines()[0]
    assert "(workspace/third_party/vllm)" in first and "check the issues of the project that keeps it" in first
    assert "workspace's" not in first and "issues of workspace" not in first


@pytest.mark.parametrize("tree", [
    "sgl-workspace/sglang/python/sglang",  # the engine's own checkout (SGLang's image)
    "home/me/sglang-v0.4.6.post2/python/sglang",  # a release's source unpacked by the user: no other project's tree
])
def test_the_engines_own_checkout_is_no_other_projects_copy(tree: str) -> None:
    printed = real_traceback(_SCHEDULER_CRASH, f"{tree}/srt/managers/scheduler.py")
    assert "own copy of" not in check_texts(diagnose_without_patterns(printed))


_SERVING_ENGINE = {
    "vllm/entrypoints/openai/serving_engine.py": (
        "class OpenAIServing:\n"
        "    def __init__(self, base_model_paths):\n"
        "        self.base_model_paths = base_model_paths\n\n"
        "    def _is_model_supported(self, model_name):\n"
        "        return any(model.name == model_name for model in self.base_model_paths)\n"
    ),
}


def _serving_classes_given_strings(tmp_path: Path, prefix: str) -> str:
    run = traceback_of_installed(
        tmp_path, _SERVING_ENGINE,
        "from vllm.entrypoints.openai.serving_engine import OpenAIServing\n"
        "serving = OpenAIServing(['Qwen2.5-7B-Instruct'])\n"
        "serving._is_model_supported('Qwen2.5-7B-Instruct')\n")
    assert "AttributeError: 'str' object has no attribute 'name'" in run.stderr
    # the paste keeps the engine's frames only, as a replica's log shows the tail of its traceback
    tail = run.stderr[run.stderr.index('  File "' + str(tmp_path / "venv")):]
    return "".join(prefix + line + "\n" for line in tail.splitlines())


def test_the_engines_api_refusing_a_value_under_a_ray_serve_deployment_is_the_callers_release(tmp_path: Path) -> None:
    diagnosis = diagnose_without_patterns(
        _serving_classes_given_strings(tmp_path, "(ServeReplica:default:VLLMDeployment pid=1328933) "))
    assert diagnosis.category == "dependency-version"
    assert diagnosis.title.startswith("Likely a program that runs the engine, written for another vLLM release")
    assert "under Ray Serve, whose call into it the paste does not show" in diagnosis.root_cause
    assert "Try a newer release of vLLM" not in check_texts(diagnosis)
    # the deployment is the user's own code: no wrapper release to look up, Ray pins no vLLM
    checks = check_texts(diagnosis)
    assert "General guidance: the Ray Serve deployment VLLMDeployment is your program's code" in checks
    assert "pip show" not in checks and "the wrapper" not in checks


def test_a_ray_serve_replica_under_an_llm_d_pod_names_the_deployment_not_llm_d(tmp_path: Path) -> None:
    """llm-d runs the engine's own server, so it never calls the API: the replica's Ray Serve is the caller."""
    printed = ("ms-pd-llm-d-modelservice-decode-7c9 vllm starting\n"
               + _serving_classes_given_strings(tmp_path, "(ServeReplica:default:VLLMDeployment pid=1328933) "))
    diagnosis = diagnose_without_patterns(printed)
    assert "under Ray Serve, whose call into it the paste does not show" in diagnosis.root_cause


@pytest.mark.parametrize("prefix", ["", "(RayWorkerWrapper pid=5) "])
def test_the_same_refusal_with_no_program_building_the_engines_objects_stays_an_engine_bug(tmp_path: Path,
                                                                                           prefix: str) -> None:
    """No caller named, or only Ray, which runs the engine's own workers: the engine's code failed on its own."""
    assert diagnose_without_patterns(_serving_classes_given_strings(tmp_path, prefix)).category == "engine-bug"


_ENGINE_CORE = {
    "vllm/v1/engine/core.py": (
        "class EngineCore:\n"
        "    scheduler = None\n\n"
        "    def step(self):\n"
        "        return self.scheduler.schedule()\n\n"
        "    def run_busy_loop(self):\n"
        "        self.step()\n"
    ),
}


@pytest.mark.parametrize("prefix", ["(WorkerDict pid=77) ", "(ServeReplica:default:MyApp pid=9) "])
def test_the_engines_own_busy_loop_under_a_program_that_calls_its_api_stays_an_engine_bug(tmp_path: Path,
                                                                                          prefix: str) -> None:
    """EngineCore's loop (vllm/v1/engine/core.py) is no entry a program calls with values of its own: only the API
    files it calls (entrypoints/, the engines' llm_engine / async_llm(_engine) / arg_utils) make the caller's release
    the suspect."""
    run = traceback_of_installed(tmp_path, _ENGINE_CORE,
                                 "from vllm.v1.engine.core import EngineCore\nEngineCore().run_busy_loop()\n")
    assert "AttributeError: 'NoneType' object has no attribute 'schedule'" in run.stderr
    tail = run.stderr[run.stderr.index('  File "' + str(tmp_path / "venv")):]
    diagnosis = diagnose_without_patterns("".join(prefix + line + "\n" for line in tail.splitlines()))
    assert diagnosis.category == "engine-bug"
