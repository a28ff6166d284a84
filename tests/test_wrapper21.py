"""A wrapper that runs the engine (issue 28, stop 57, branch wrapper21), on real CPython tracebacks of our own code laid
out like the engines' and our own words for the records around them:

- SGLang's scheduler refusing a flush with requests still running ("Cache not flushed because there are pending
  requests", sglang/srt/managers/scheduler.py flush_cache) just above a traceback cut in its serving loop leads the
  guess: the caller released memory under a running request (sgl-project/sglang#6630, a verl rollout);
- Hydra's record of a failed job (`Error executing job with overrides: [...]`, hydra/core/utils.py) says where the job's
  own exception is (verl-project/verl#1368);
- argparse refusing an option that a program's own parser and the engine's add_cli_args both define (CPython
  Lib/argparse.py _handle_conflict_error; kserve/kserve#4076, vllm-project/vllm#19221) is the program's release against
  the engine's, also in a paste cut inside argparse's adding of the option; the engine's own callers are not;
- a wrapper's subpackage named after the engine (`huggingfaceserver/vllm/utils.py`) is the wrapper's code, not the
  engine's (frame display, engine_of_frame);
- Ray's record of an actor that died in its constructor (`Exception raised in creation task: …`) right above the
  actor's traceback cut before its exception line is the headline, says where the error is, and, for a wrapper's actor
  that reached the engine, what to compare of their releases (OpenRLHF/OpenRLHF#184)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import diagnose_text
from logsleuth.models import Diagnosis, Frame
from logsleuth.reasoning.engine_api_calls import engine_of_frame
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.option_clash import _library_frame
from logsleuth.reasoning.wrapper_death import hidden_error_steps
from logsleuth.render.view import headline
from tests.helpers import check_texts, diagnose_with_patterns, real_traceback, traceback_of_installed
from tests.test_cut_tracebacks import cut_after

SCHEDULER = real_traceback('''
class Scheduler:
    def update_running_batch(self, batch):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def get_next_batch_to_run(self):
        self.running_batch = self.update_running_batch(None)
        return self.running_batch

    def event_loop_overlap(self):
        while True:
            batch = self.get_next_batch_to_run()


def run_scheduler_process():
    scheduler = Scheduler()
    scheduler.event_loop_overlap()


run_scheduler_process()
''', "sglang/srt/managers/scheduler.py")
CUT = cut_after(SCHEDULER, "self.running_batch = self.update_running_batch(None)")
HEADER = "[2025-06-01 09:00:02 TP0] Scheduler hit an exception: "


def _diagnose(text: str) -> Diagnosis:
    return diagnose_with_patterns(text)


REFUSED = "[2025-06-01 09:00:02 TP0] Cache not flushed because there are pending requests. #queue-req: 0, #running-req: 2\n"
DECODE = ("[2025-06-01 09:00:02 TP0] Decode batch. #running-req: 2, #token: 310, token usage: 0.01, "
          "gen throughput (token/s): 48.20, #queue-req: 0\n")


def _in_ray_actor(text: str) -> str:
    """The lines as Ray prints an actor's output: verl's WorkerDict actor (split 20's B-06 shape)."""
    return "".join(f"(WorkerDict pid=4242) {line}\n" for line in text.splitlines())


def test_the_engine_s_refused_flush_above_a_cut_in_its_serving_loop_leads_as_the_caller_s_ordering() -> None:
    diagnosis = _diagnose(_in_ray_actor(REFUSED + HEADER + CUT))
    assert diagnosis.category == "illegal-memory-access"
    assert "#running-req: 2" in diagnosis.root_cause and "guess" in diagnosis.root_cause
    assert "finished or been aborted before" in check_texts(diagnosis)


def test_a_refused_flush_with_no_program_driving_the_engine_is_only_a_check() -> None:
    # the refusal alone is routine (slime probes with flush_cache until no request runs, THUDM/slime#26)
    diagnosis = _diagnose(REFUSED + HEADER + CUT)
    assert diagnosis.category != "illegal-memory-access"
    assert "the flush freed nothing" in check_texts(diagnosis)


def test_a_refused_flush_the_scheduler_served_on_after_says_nothing_of_the_cut() -> None:
    diagnosis = _diagnose(_in_ray_actor(REFUSED + DECODE * 3 + HEADER + CUT))
    assert diagnosis.category != "illegal-memory-access"
    assert "Cache not flushed" not in check_texts(diagnosis) + diagnosis.root_cause


def test_the_same_cut_without_the_refused_flush_keeps_the_serving_step_s_reading() -> None:
    diagnosis = _diagnose(HEADER + CUT)
    assert diagnosis.category != "illegal-memory-access"
    assert "finished or been aborted before" not in check_texts(diagnosis)


def test_a_flush_that_succeeded_says_nothing_of_the_caller() -> None:
    success = "[2025-06-01 09:00:02 TP0] Cache flushed successfully!\n"
    diagnosis = _diagnose(_in_ray_actor(REFUSED + success + HEADER + CUT))
    assert diagnosis.category != "illegal-memory-access"


def test_hydra_s_failed_job_line_says_where_the_job_s_own_exception_is() -> None:
    log = ("Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'trainer.n_gpus_per_node=8', "
           "'data.train_batch_size=256']\n")
    diagnosis = _diagnose(log)
    steps = check_texts(diagnosis)
    assert "HYDRA_FULL_ERROR=1" in steps and "worker-*.err" in steps
    assert diagnosis.engine is None  # the overrides name no engine


# vLLM's builder adding an option a program's parser already has (our own code, laid out as vllm/engine/arg_utils.py).
ENGINE_ARGS = """
class AsyncEngineArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--task", default="auto")
        return parser
"""
WRAPPER_UTILS = """
from vllm.engine.arg_utils import AsyncEngineArgs


def add_engine_options(parser):
    return AsyncEngineArgs.add_cli_args(parser)
"""
WRAPPER_MAIN = """
import argparse
from servewrap.vllm.utils import add_engine_options

parser = argparse.ArgumentParser()
parser.add_argument("--task", default=None)
parser = add_engine_options(parser)
"""
RUN_WRAPPER = "import runpy\nrunpy.run_module('servewrap', run_name='__main__')\n"


def _clash_traceback(tmp_path: Path, files: dict[str, str], script: str) -> str:
    finished = traceback_of_installed(tmp_path, files, script)
    assert "conflicting option string: --task" in finished.stderr
    return finished.stderr.replace(str(tmp_path), "/srv")


def _wrapper_clash(tmp_path: Path) -> str:
    return _clash_traceback(tmp_path, {"vllm/engine/arg_utils.py": ENGINE_ARGS, "servewrap/vllm/utils.py": WRAPPER_UTILS,
                                       "servewrap/__main__.py": WRAPPER_MAIN}, RUN_WRAPPER)


def test_argparse_s_conflict_under_the_engine_s_add_cli_args_called_by_a_wrapper_is_the_releases_fit(tmp_path: Path) -> None:
    diagnosis = _diagnose(_wrapper_clash(tmp_path))
    assert diagnosis.category == "dependency-version" and diagnosis.basis == "general"
    assert "servewrap" in diagnosis.title and "--task" in diagnosis.title and diagnosis.engine == "vllm"
    assert "guess" not in diagnosis.root_cause
    assert "made for this vLLM release, or the vLLM release servewrap pins" in diagnosis.fix.summary


def test_the_same_clash_cut_inside_argparse_s_adding_of_the_option_is_a_labelled_guess(tmp_path: Path) -> None:
    cut = cut_after(_wrapper_clash(tmp_path), "self._check_conflict(action)")
    diagnosis = _diagnose(cut)
    assert diagnosis.category == "dependency-version"
    assert "guess" in diagnosis.root_cause.lower() and "--task" in diagnosis.root_cause  # named by the engine's line
    assert diagnosis.fix.needs_input  # the exception line


def test_a_cut_at_add_argument_alone_is_not_read_as_a_clash(tmp_path: Path) -> None:
    # add_argument refuses other things itself (an uncallable type, a metavar) before it adds the option
    cut = cut_after(_wrapper_clash(tmp_path), "return self._add_action(action)")
    assert _diagnose(cut).category != "dependency-version"


def test_the_engine_s_own_caller_of_its_parser_builder_is_not_a_wrapper_s_release(tmp_path: Path) -> None:
    server = ("import argparse\nfrom vllm.engine.arg_utils import AsyncEngineArgs\n\n"
              "parser = argparse.ArgumentParser()\nparser.add_argument('--task')\n"
              "parser = AsyncEngineArgs.add_cli_args(parser)\n")
    text = _clash_traceback(tmp_path, {"vllm/engine/arg_utils.py": ENGINE_ARGS, "vllm/entrypoints/api_server.py": server},
                            "import runpy\nrunpy.run_module('vllm.entrypoints.api_server', run_name='__main__')\n")
    assert _diagnose(text).category != "dependency-version"


def test_the_clash_names_the_engine_release_that_added_the_option(tmp_path: Path) -> None:
    # vLLM's catalogs have --task from 0.6.4 on, later than their oldest release (kserve/kserve#4076)
    diagnosis = _diagnose(_wrapper_clash(tmp_path))
    assert "vLLM added --task in 0.6.4" in diagnosis.root_cause


# vLLM's CLI: main() builds its own parser and hands it to make_arg_parser (vllm/entrypoints/cli/main.py, serve.py).
ENGINE_CLI_MAIN = """
import argparse
from vllm.entrypoints.openai.cli_args import make_arg_parser


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task")
    make_arg_parser(parser)
"""
ENGINE_CLI_ARGS = """
from vllm.engine.arg_utils import AsyncEngineArgs


def make_arg_parser(parser):
    return AsyncEngineArgs.add_cli_args(parser)
"""


def test_a_wrapper_that_only_calls_the_engine_s_main_is_not_a_clash_of_its_own(tmp_path: Path) -> None:
    wrapper = "from vllm.entrypoints.cli.main import main\n\nmain()\n"
    text = _clash_traceback(tmp_path, {"vllm/engine/arg_utils.py": ENGINE_ARGS,
                                       "vllm/entrypoints/openai/cli_args.py": ENGINE_CLI_ARGS,
                                       "vllm/entrypoints/cli/main.py": ENGINE_CLI_MAIN,
                                       "myserve/__main__.py": wrapper},
                            "import runpy\nrunpy.run_module('myserve', run_name='__main__')\n")
    assert "/myserve/__main__.py" in text  # the wrapper started it; the engine's own code built the parser
    diagnosis = _diagnose(text)
    assert diagnosis.category != "dependency-version" and "myserve" not in diagnosis.root_cause


def test_a_script_of_the_user_s_own_is_led_by_its_own_parser_not_a_release(tmp_path: Path) -> None:
    script = ("import argparse\nfrom vllm.entrypoints.openai.cli_args import make_arg_parser\n\n"
              "parser = argparse.ArgumentParser()\nparser.add_argument('--model')\nmake_arg_parser(parser)\n")
    model_args = ENGINE_ARGS.replace('"--task", default="auto"', '"--model", type=str')
    finished = traceback_of_installed(tmp_path, {"vllm/engine/arg_utils.py": model_args,
                                                 "vllm/entrypoints/openai/cli_args.py": ENGINE_CLI_ARGS},
                                      script, script_name="bench.py")
    text = finished.stderr.replace(str(tmp_path), "/home/me")
    assert "conflicting option string: --model" in text
    diagnosis = _diagnose(text)
    assert "script of your own" in diagnosis.root_cause and "release made for" not in diagnosis.title
    assert "no newer vLLM release added it" in diagnosis.root_cause  # every catalogued vLLM release has --model
    assert "leave --model to vLLM's parser" in diagnosis.fix.summary


def test_windows_standard_library_frames_are_not_the_program() -> None:
    assert _library_frame(Frame("C:\\Users\\me\\Python310\\Lib\\runpy.py", 196, "_run_module_as_main"))
    assert _library_frame(Frame("/usr/lib/python3.10/functools.py", 1, "wrapper"))
    assert not _library_frame(Frame("C:\\Users\\me\\Python310\\Lib\\site-packages\\myserve\\cli.py", 1, "main"))


def test_a_wrapper_s_subpackage_named_after_the_engine_is_the_wrapper_s_code() -> None:
    checkout = "/home/u/kserve/python/huggingfaceserver/huggingfaceserver/vllm/utils.py"
    installed = "/venv/lib/python3.11/site-packages/huggingfaceserver/vllm/utils.py"
    assert Frame(checkout, 57, "f").module_path == "huggingfaceserver/vllm/utils.py"
    assert engine_of_frame(checkout) is None and engine_of_frame(installed) is None
    # the engines' own files, installed or checked out, stay theirs
    assert Frame("/home/u/vllm/vllm/utils.py", 1, "f").module_path == "vllm/utils.py"
    assert engine_of_frame("/home/u/vllm/vllm/utils.py") == "vllm"
    assert engine_of_frame("/venv/lib/python3.11/site-packages/vllm/engine/arg_utils.py") == "vllm"
    assert engine_of_frame("/root/sglang/python/sglang/srt/server_args.py") == "sglang"
    # verl's vendored vLLM code, run from its checkout (pip install -e .) or installed (verl/third_party/vllm/)
    assert engine_of_frame("/workspace/verl/verl/third_party/vllm/vllm_v_0_6_3/llm.py") is None
    assert engine_of_frame("/usr/local/lib/python3.10/dist-packages/verl/third_party/vllm/llm.py") is None


def test_a_repeated_directory_name_alone_does_not_make_the_engine_s_files_a_wrapper_s() -> None:
    # the engines' docker images, checkouts and installs, and containers whose work directory repeats a name
    for path, engine in (("/app/app/sglang/srt/server_args.py", "sglang"),
                         ("/workspace/workspace/vllm/engine/llm_engine.py", "vllm"),
                         ("/data/data/vllm/vllm/engine/llm_engine.py", "vllm"),
                         ("/workspace/python/python/sglang/srt/managers/scheduler.py", "sglang"),
                         ("/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", "sglang"),
                         ("/vllm-workspace/vllm/vllm/engine/llm_engine.py", "vllm"),
                         ("/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", "vllm"),
                         ("/opt/conda/lib/python3.10/site-packages/vllm-0.2.2-py3.10.egg/vllm/engine/llm_engine.py",
                          "vllm")):
        assert engine_of_frame(path) == engine, path
    assert Frame("/app/app/sglang/srt/server_args.py", 1, "f").module_path == "srt/server_args.py"


# An RL trainer's actor building the engine, whose worker set-up fails (our own code, laid out as OpenRLHF's and vLLM's).
ENGINE_CORE = """
class LLMEngine:
    def __init__(self):
        self._init_workers()

    def _init_workers(self):
        self._run_workers("init_model")

    def _run_workers(self, method):
        raise RuntimeError("worker set-up failed")
"""
ACTOR = """
from vllm.engine.llm_engine import LLMEngine


class LLMRayActor:
    def __init__(self):
        self.engine = LLMEngine()
"""
RAY_RECORD = ("Exception raised in creation task: The actor died because of an error raised in its creation task, "
              "ray::LLMRayActor.__init__() (pid=4242, ip=10.0.0.7, actor_id=ab12, "
              "repr=<openrlhf.trainer.ray.vllm_engine.LLMRayActor object at 0x7f00aa>)")


def _actor_paste(tmp_path: Path, *, cut: bool) -> str:
    """Ray's print of the actor's death: its record, then the actor's frames (no `Traceback` line), each line under
    the actor's prefix; cut inside the engine's frames when asked."""
    finished = traceback_of_installed(tmp_path, {"vllm/engine/llm_engine.py": ENGINE_CORE,
                                                 "openrlhf/trainer/ray/vllm_engine.py": ACTOR},
                                      "from openrlhf.trainer.ray.vllm_engine import LLMRayActor\nLLMRayActor()\n")
    lines = finished.stderr.replace(str(tmp_path), "/srv").splitlines()[1:]  # Ray prints no `Traceback` line
    if cut:
        lines = lines[:next(i for i, line in enumerate(lines) if 'self._run_workers("init_model")' in line) + 1]
    return "\n".join(f"(LLMRayActor pid=4242) {line}" for line in [RAY_RECORD, *lines]) + "\n"


def test_a_cut_traceback_under_ray_s_actor_death_record_is_headed_by_it(tmp_path: Path) -> None:
    report = diagnose_text(_actor_paste(tmp_path, cut=True))
    assert headline(report).startswith("Ray actor LLMRayActor died in its constructor")
    steps = check_texts(_diagnosis_of(report.failures[0].diagnosis))
    assert "worker-*-4242.err" in steps and "on its node (10.0.0.7)" in steps
    # the wrapper's actor reached the engine: its release against the engine's, with no release named
    assert "an OpenRLHF release is made for certain vLLM releases" in steps and "vllm==" not in steps


def test_pip_s_report_of_the_wrapper_s_requirement_names_the_range(tmp_path: Path) -> None:
    # pip's resolver line read among the log's lines kept for the failure (wrapper_pins.py): the range as pip printed it
    report = diagnose_text(_actor_paste(tmp_path, cut=True))
    pip = "openrlhf 0.1.9 requires vllm==0.2.4, but you have vllm 0.2.2 which is incompatible."
    steps = " ".join(hidden_error_steps(Evidence(report.failures[0].failure, report.launch, lines=(pip,))))
    assert "openrlhf 0.1.9 requires vllm==0.2.4" in steps and "within vllm==0.2.4" in steps
    assert "an OpenRLHF release is made for certain" not in steps


def test_the_actor_s_whole_error_keeps_its_own_headline(tmp_path: Path) -> None:
    report = diagnose_text(_actor_paste(tmp_path, cut=False))
    assert "RuntimeError: worker set-up failed" in headline(report)
    assert "Ray actor" not in headline(report)


def _diagnosis_of(found: Diagnosis | None) -> Diagnosis:
    assert found is not None
    return found
