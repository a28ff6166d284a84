"""The other side of a version skew when no frame shows it (facts/engine_drivers.py): a package that drives or plugs
into the engine, listed beside it in the paste (`pip list`, a Markdown table of versions, vLLM's "Platform plugin X is
activated"), read with the error line alone.

The error lines are the last line of tracebacks real CPython printed (a stub engine package in a site-packages
directory); the listings are our own, in the shapes LMCache/LMCache#1840 (pip list|grep), flagos-ai/vllm-plugin-FL#196
(a Markdown table and vLLM's plugin line) and unslothai/unsloth#2002 (a wrapper re-raising the TypeError as a
RuntimeError, a full pip list) show."""

from __future__ import annotations

from pathlib import Path

from logsleuth.facts.engine_drivers import drivers_shown, normalize, shows_a_driver
from tests.reasoning.diagnosed import first_diagnosis
from tests.reasoning.test_engine_imports import _traceback

VLLM_UTILS = {"vllm/__init__.py": "", "vllm/utils/__init__.py": "def cdiv(a, b): return -(a // -b)\n"}
ENGINE_ARGS = {"vllm/__init__.py": "", "vllm/engine/__init__.py": "", "vllm/engine/arg_utils.py": (
    "from dataclasses import dataclass\n\n@dataclass\nclass EngineArgs:\n    model: str = 'm'\n")}


def _last_line(tmp_path: Path, importer: str, statement: str, files: dict[str, str]) -> str:
    return _traceback(tmp_path, importer, statement, files).strip().splitlines()[-1] + "\n"


def _missing_module_line(tmp_path: Path) -> str:
    return _last_line(tmp_path, "connector/adapter.py", "from vllm.utils.tensor_helpers import cdiv", VLLM_UTILS)


def test_listings_name_the_table_packages_only() -> None:
    lines = ["accelerate               1.6.0", "lmcache                           0.3.8", "vllm_ascend==0.11.0rc1",
             "| vllm-plugin-FL | (source install via git clone) |", "INFO 05-23 [__init__.py:217] Platform plugin ascend is activated",
             "we upgraded lmcache last week and it broke"]
    found = drivers_shown(lines)
    assert [(d.name, d.version) for d in found] == [("LMCache", "0.3.8"), ("vllm-ascend", "0.11.0rc1"), ("vllm-plugin-FL", None)]
    assert all(shows_a_driver(line) for line in lines[1:5]) and not shows_a_driver(lines[0])
    assert normalize("Unsloth_Zoo") == "unsloth-zoo" and not shows_a_driver("x" * 100_000)


def test_a_bare_missing_engine_module_names_the_connector_listed_beside_it(tmp_path: Path) -> None:
    log = _missing_module_line(tmp_path) + "\npip list | grep -E 'vllm|lmcache'\nvllm     0.11.0\nlmcache  0.3.8\n"
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category) == ("rule-caller-imports-engine-name", "dependency-version"), diagnosis
    assert "LMCache 0.3.8" in diagnosis.title and "vllm.utils.tensor_helpers" in diagnosis.title
    assert diagnosis.fix is not None and "LMCache release made for" in diagnosis.fix.summary
    assert "pip show lmcache" in diagnosis.fix.summary and diagnosis.fix.needs_input


def test_a_platform_plugin_line_is_the_other_side(tmp_path: Path) -> None:
    log = "INFO 05-23 07:04:05 [__init__.py:217] Platform plugin fl is activated\n" + _missing_module_line(tmp_path)
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-caller-imports-engine-name" and "vllm-plugin-FL" in diagnosis.title


def test_a_compiled_extension_missing_is_the_engine_build_even_beside_a_connector(tmp_path: Path) -> None:
    """The look-alike: `vllm._C` missing is the engine's own broken build, whoever imports it."""
    line = _last_line(tmp_path, "connector/adapter.py", "import vllm._C", VLLM_UTILS)
    diagnosis = first_diagnosis(line + "lmcache  0.3.8\n")
    assert diagnosis.pattern != "rule-caller-imports-engine-name"


def test_a_refused_engine_settings_call_beside_a_listed_wrapper_is_the_wrapper_release(tmp_path: Path) -> None:
    statement = ("from vllm.engine.arg_utils import EngineArgs\n"
                 "try:\n    EngineArgs(model='m', compilation_config=3)\n"
                 "except TypeError as error:\n    raise RuntimeError(str(error))")
    line = _last_line(tmp_path, "fast_inference/loader.py", statement, ENGINE_ARGS)
    assert line.startswith("RuntimeError: EngineArgs.__init__() got an unexpected keyword argument"), line
    diagnosis = first_diagnosis(line + "torch  2.4.0\nunsloth  2025.3.9\nvllm  0.6.1.post1\n")
    assert (diagnosis.category, diagnosis.engine) == ("dependency-version", "vllm"), diagnosis
    assert "Unsloth 2025.3.9" in diagnosis.root_cause
    # The listing names vLLM 0.6.1.post1 installed (LaunchTracker.listed), so the settings rule reads the keyword against
    # that release (compilation_config is in 0.6.5 and later) and says which program to align: the installed release
    # and the program's own requirements.
    assert diagnosis.fix is not None and any("Unsloth 2025.3.9" in step and "pip show" in step for step in diagnosis.fix.steps)
    assert diagnosis.engine_version == "0.6.1.post1"
    alone = first_diagnosis(line)
    assert alone.category == "dependency-version", "no program listed: still a call no frame shows (test_unseen_caller)"
    assert "Unsloth" not in alone.root_cause


def test_an_engine_object_handed_to_a_library_the_engines_use_is_no_wrapper_call(tmp_path: Path) -> None:
    """The look-alike of a wrapper written for another release (vllm-project/vllm#3214): a script hands vLLM's
    SamplingParams to a transformers model's generate, whose own line then reads an attribute of it.  transformers is a
    package the engines declare as a dependency: it calls no engine API, so the failing frame there is no wrapper's."""
    files = {**VLLM_UTILS, "vllm/sampling_params.py": "class SamplingParams:\n    pass\n",
             "transformers/__init__.py": "", "transformers/generation/__init__.py": "",
             "transformers/generation/utils.py": (
                 "def generate(inputs, generation_config):\n    return generation_config.update(max_new_tokens=8)\n")}
    statement = ("from transformers.generation.utils import generate\n"
                 "from vllm.sampling_params import SamplingParams\n"
                 "generate([1], SamplingParams())")
    diagnosis = first_diagnosis(_traceback(tmp_path, "rephrase/evaluate.py", statement, files))
    assert "program that runs the engine" not in diagnosis.title, diagnosis.title


def test_a_model_class_transformers_defines_too_is_no_engine_call_from_a_harness_frame(tmp_path: Path) -> None:
    """The look-alike of a wrapper's misfit call (EleutherAI/lm-evaluation-harness#2586): an eval harness's Hugging Face
    backend builds transformers' `LlamaForCausalLM` with a keyword it lacks.  Both engines define a class of that name,
    but so does transformers, and the harness's frame holds a Hugging Face model: no engine release is involved."""
    files = {"transformers/__init__.py": "", "transformers/models/__init__.py": "",
             "transformers/models/llama.py": "class LlamaForCausalLM:\n    def __init__(self, config=None):\n        self.config = config\n"}
    statement = ("from transformers.models.llama import LlamaForCausalLM\n"
                 "def create_model(**kwargs):\n    return LlamaForCausalLM(config=None, **kwargs)\n"
                 "create_model(gptqmodel=True)")
    diagnosis = first_diagnosis(_traceback(tmp_path, "lm-evaluation-harness/lm_eval/models/huggingface.py", statement, files))
    assert "program that runs the engine" not in diagnosis.title, diagnosis.title
    assert diagnosis.category != "dependency-version", diagnosis
