"""A program building the engine's settings in code, refused by the settings class (reasoning/settings_keywords.py).

- A keyword of other releases: lm-evaluation-harness and lighteval passing `worker_use_ray` to vLLM's `LLM(**kwargs)`,
  which hands it to `EngineArgs(` (EleutherAI/lm-evaluation-harness#2706, huggingface/lighteval#532; OpenRLHF's
  LLMRayActor the same, OpenRLHF/OpenRLHF#702); SGLang's `Engine(**kwargs)` handing a keyword its ServerArgs no
  longer has (`disable_piecewise_cuda_graph`, sgl-project/sglang#36478).  The releases that take the keyword come
  from the flag catalogs (the flag whose dest is the keyword), and the calling program is named from its frame.
- A keyword given twice (CPython's "got multiple values for keyword argument"): the calling program's code, whatever
  the release: no release change is offered.
Tracebacks are real CPython's, from site-packages trees laid out as vLLM's and SGLang's and the callers'; the
classes are dataclasses of our own with the engines' class names."""

from __future__ import annotations

from pathlib import Path

from logsleuth.models import Diagnosis
from tests.helpers import check_texts, diagnose_without_patterns, real_traceback, traceback_of_installed

_VLLM_ARGS = '''
from dataclasses import dataclass


@dataclass
class EngineArgs:
    model: str = ""
    tensor_parallel_size: int = 1
'''
_VLLM_LLM = '''
from vllm.engine.arg_utils import EngineArgs


class LLM:
    def __init__(self, model, **kwargs):
        engine_args = EngineArgs(model=model, **kwargs)
'''
_SGLANG_ARGS = '''
from dataclasses import dataclass


@dataclass
class ServerArgs:
    model_path: str = ""
'''
_SGLANG_ENGINE = '''
from sglang.srt.server_args import ServerArgs


class Engine:
    def __init__(self, **kwargs):
        server_args = ServerArgs(**kwargs)
'''


def _vllm_call(tmp_path: Path, caller: str) -> str:
    files = {"vllm/engine/arg_utils.py": _VLLM_ARGS, "vllm/entrypoints/llm.py": _VLLM_LLM,
             "lm_eval/models/vllm_causallms.py": caller}
    run = traceback_of_installed(tmp_path, files, "from lm_eval.models.vllm_causallms import run\nrun()\n")
    assert "TypeError" in run.stderr, run.stderr
    return run.stderr


def _by_the_rule(log: str) -> Diagnosis:
    found = diagnose_without_patterns(log)
    assert found.pattern == "rule-settings-class-keyword", found
    return found


def test_a_removed_engineargs_keyword_names_the_releases_and_the_caller(tmp_path: Path) -> None:
    log = _vllm_call(tmp_path, "from vllm.entrypoints.llm import LLM\n\n\ndef run():\n"
                               "    llm = LLM('m', worker_use_ray=True)\n")
    assert "EngineArgs.__init__() got an unexpected keyword argument 'worker_use_ray'" in log
    found = _by_the_rule(log)
    assert found.category == "dependency-version"
    assert found.engine == "vllm"
    text = check_texts(found) + found.title + found.root_cause
    assert "lm_eval" in found.title
    assert "0.6.0 to 0.6.6.post1" in text  # the catalogued releases whose flag --worker-use-ray sets worker_use_ray
    assert "lm_eval/models/vllm_causallms.py" in found.root_cause
    assert found.fix is not None and found.fix.needs_input


def test_inside_a_ray_actor_the_caller_is_the_frame_not_ray(tmp_path: Path) -> None:
    """The same call in a Ray actor (EleutherAI/lm-evaluation-harness#2706's `ray::run_inference_one_model()`, OpenRLHF's
    LLMRayActor): Ray's line prefixes stripped, the program named is the calling frame's, not Ray that ran it."""
    log = _vllm_call(tmp_path, "from vllm.entrypoints.llm import LLM\n\n\ndef run():\n"
                               "    llm = LLM('m', worker_use_ray=True)\n")
    actor = "".join(f"(LLMRayActor pid=2093) {line}\n" for line in log.splitlines())
    found = _by_the_rule(actor)
    assert found.title.startswith("lm_eval passes worker_use_ray"), found.title


def test_a_sglang_serverargs_keyword_another_setting_took_over(tmp_path: Path) -> None:
    files = {"sglang/srt/server_args.py": _SGLANG_ARGS, "sglang/srt/entrypoints/engine.py": _SGLANG_ENGINE,
             "verl/workers/rollout/sglang_rollout.py": "from sglang.srt.entrypoints.engine import Engine\n\n\n"
                                                       "def run():\n    Engine(model_path='m', "
                                                       "disable_piecewise_cuda_graph=True)\n"}
    run = traceback_of_installed(tmp_path, files, "from verl.workers.rollout.sglang_rollout import run\nrun()\n")
    found = _by_the_rule(run.stderr)
    assert found.engine == "sglang"
    assert found.title.startswith("verl passes disable_piecewise_cuda_graph")
    # The flag stayed as a deprecated alias of another field after 0.5.13.post1: by its dest, only those releases
    # take the keyword ...
    assert "0.5.10 to 0.5.13.post1" in found.title
    # ... and where its flag went: the field the later releases' flag sets (the catalogs' dest).
    assert "cuda_graph_backend_prefill" in check_texts(found)


def test_the_users_own_call_is_an_unknown_flag_with_the_releases(tmp_path: Path) -> None:
    """`python -c` or the user's script passing the keyword: the user's own flag (the category table's tie), as
    sgl-project/sglang#36478's reproduction (`<string>`) shows, still answered with the releases that take it."""
    files = {"sglang/srt/server_args.py": _SGLANG_ARGS, "sglang/srt/entrypoints/engine.py": _SGLANG_ENGINE}
    run = traceback_of_installed(tmp_path, files, "from sglang.srt.entrypoints.engine import Engine\n"
                                                  "Engine(model_path='m', disable_piecewise_cuda_graph=True)\n")
    found = _by_the_rule(run.stderr)
    assert found.category == "unknown-flag"
    assert found.fix is not None and "Leave disable_piecewise_cuda_graph out" in found.fix.summary
    assert "0.5.10 to 0.5.13.post1" in found.fix.summary and "cuda_graph_backend_prefill" in found.fix.summary


def test_a_function_of_a_checkout_is_a_program_not_the_users_flag() -> None:
    """ekinakyurek/marc#8: a research checkout's `initialize_engine` passing a keyword of later releases (or of the fork
    it pins) is a program written for another release, not the user's own flag."""
    log = real_traceback("""
        from dataclasses import dataclass

        @dataclass
        class EngineArgs:
            model: str = ""

        def initialize_engine():
            return EngineArgs(model="m", lora_target_modules=["q_proj"])

        initialize_engine()
        """, "marc/inference/engine.py").replace("__main__.EngineArgs", "EngineArgs")
    found = diagnose_without_patterns(log, engine="vllm")
    assert found.pattern == "rule-settings-class-keyword" and found.category == "dependency-version", found
    assert found.fix is not None and "(or fork)" in found.fix.summary


def test_a_keyword_given_twice_is_the_callers_code_not_a_release(tmp_path: Path) -> None:
    log = _vllm_call(tmp_path, "from vllm.engine.arg_utils import EngineArgs\n\n\ndef run():\n"
                               "    extra = {'model': 'm'}\n    args = EngineArgs(model='m', **extra)\n")
    assert "got multiple values for keyword argument 'model'" in log
    found = _by_the_rule(log)
    assert found.category != "dependency-version"
    assert found.fix is not None
    text = found.fix.summary + check_texts(found)
    assert "lm_eval/models/vllm_causallms.py" in found.root_cause
    assert "does not fix" in text and "pip install" not in text


def test_a_keyword_doubled_inside_the_engines_entry_point_is_not_the_callers_code(tmp_path: Path) -> None:
    """sgl-project/sglang#478 (lm-sys/FastChat#3372's cause): SGLang's Runtime set log_level itself, its parameter
    misspelt, and forwarded the caller's keywords holding log_level; the raising line is the engine's own, so the
    rule does not blame the caller."""
    runtime = ("from sglang.srt.server_args import ServerArgs\n\n\nclass Runtime:\n"
               "    def __init__(self, log_evel='error', *args, **kwargs):\n"
               "        self.server_args = ServerArgs(*args, log_level=log_evel, **kwargs)\n")
    args = _SGLANG_ARGS.replace("model_path: str = \"\"", "model_path: str = \"\"\n    log_level: str = \"error\"")
    files = {"sglang/srt/server_args.py": args, "sglang/srt/server.py": runtime,
             "fastchat/serve/sglang_worker.py": "from sglang.srt.server import Runtime\n\n\ndef run():\n"
                                                "    Runtime(model_path='m', log_level='info')\n"}
    run = traceback_of_installed(tmp_path, files, "from fastchat.serve.sglang_worker import run\nrun()\n")
    assert "got multiple values for keyword argument 'log_level'" in run.stderr, run.stderr
    assert diagnose_without_patterns(run.stderr).pattern != "rule-settings-class-keyword"


def test_a_keyword_no_release_has_is_left_to_the_general_readings(tmp_path: Path) -> None:
    log = _vllm_call(tmp_path, "from vllm.entrypoints.llm import LLM\n\n\ndef run():\n"
                               "    llm = LLM('m', max_num_batched_token=8)\n")
    found = diagnose_without_patterns(log)
    assert found.pattern != "rule-settings-class-keyword"


def test_the_engine_comes_from_the_frames_not_the_class_name(tmp_path: Path) -> None:
    """An SGLang frame raising a message that names vLLM's class: the rule does not decide vLLM from the name."""
    files = {"sglang/srt/wrap.py": "def run(**kwargs):\n    raise TypeError(\"EngineArgs.__init__() got an "
                                   "unexpected keyword argument 'worker_use_ray'\")\n"}
    run = traceback_of_installed(tmp_path, files, "from sglang.srt.wrap import run\nrun()\n")
    found = diagnose_without_patterns(run.stderr)
    assert found.pattern != "rule-settings-class-keyword"


def test_an_option_the_installed_releases_command_line_has_is_no_release_question(tmp_path: Path) -> None:
    """vLLM's flag catalogs hold the whole server parser: --port is on the installed release's command line but is no
    field of EngineArgs, so no release range is named and no release change is offered (the keyword goes); with the
    release unknown, the releases are named with that caveat."""
    caller = "from vllm.entrypoints.llm import LLM\n\n\ndef run():\n    LLM('m', port=8000)\n"
    crash = _vllm_call(tmp_path, caller)
    found = diagnose_without_patterns("INFO 05-01 10:00:01 vLLM API server version 0.11.2\n" + crash)
    assert found.pattern == "rule-settings-class-keyword" and found.category == "unknown-flag"
    assert "not a field" in found.title and "and later" not in found.title + found.root_cause
    assert found.fix is not None and "Leave port out" in found.fix.summary and "release" not in found.fix.summary
    unknown = diagnose_without_patterns(crash)
    assert "no release's settings class takes the keyword" in unknown.root_cause
