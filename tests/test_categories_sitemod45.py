"""Stop 45 (sitemod), in generic words (issue 28, item 5): an engine's message pasted without frames is read with the
module the engine's code raises it from, as a traceback's raising frame would be read.

- The raise site index's message shards keep, for each template, the modules (file, function) whose checks raise it
  (facts/engine_messages.raising_modules; scripts/engine_index/build.py files them).
- vLLM's and SGLang's default weight loaders assert a checkpoint tensor's shape against the parameter's ("Attempted to
  load weight ({}) into parameter ({})", model_loader/weight_utils.py default_weight_loader): shown alone it is
  weight-loading, raised in weight_utils.py (verl-project/verl#834: a verl-saved checkpoint one tensor of which does
  not fit).
- vLLM's AutoWeightsLoader (model_executor/models/utils.py _load_module) matching a checkpoint tensor's name to the
  model's modules: "There is no module or parameter named '{}' in {}" is weight-loading (vllm-project/vllm#14212,
  #21176: checkpoints whose tensor names the model lacks).
- A message the engines raise from modules of different subsystems places none: vLLM's "No available memory for the
  cache blocks" is raised in the KV cache's sizing (v1/core/kv_cache_utils.py) and in workers' cache set-up
  (worker/worker.py), so its own words decide (kv-cache-memory's).
- Only the decided engine's code is read (the other engine's module is not where this launch raised it); with no
  engine decided, only a message one engine's code alone raises.
- A traceback whose innermost frame is the raising module, or whose innermost line is a raising statement, is read
  from its frames, as before; one whose innermost frame is a call the exception came out of (the engine's frames
  lost: a worker's re-raise, an extension raising from C) is read with the raising module.
Tracebacks are real CPython's, from our own code; the wordings are the engines' own templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.facts.engine_messages import filed_templates, raising_modules, shard_of
from logsleuth.facts.message_templates import anchor_word
from logsleuth.reasoning.message_site import raising_frame
from tests.helpers import diagnose_without_patterns, traceback_of_installed
from tests.test_categories_cat6 import no_rules  # noqa: F401 (the fixture, used below)

LOAD_WEIGHT = "AssertionError: Attempted to load weight (torch.Size([3600])) into parameter (torch.Size([3584]))\n"
NO_MODULE = "ValueError: There is no module or parameter named 'language_model' in Gemma3ForCausalLM\n"
NO_CACHE = ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine.\n")


def test_the_message_shards_keep_the_modules_that_raise_each_template() -> None:
    template = "Attempted to load weight ({}) into parameter ({})"
    shards = filed_templates([("AssertionError", template, "b/weight_utils.py", "default_weight_loader"),
                              ("AssertionError", template, "a/weight_utils.py", "default_weight_loader"),
                              ("ValueError", "short {}", "c.py", "f")])  # too little fixed text to file
    word = anchor_word(template)
    assert word is not None
    assert shards[shard_of(word)][word] == [["AssertionError", template, [["a/weight_utils.py", "default_weight_loader"],
                                                                          ["b/weight_utils.py", "default_weight_loader"]]]]
    assert sum(len(shard) for shard in shards.values()) == 1


def test_the_index_says_which_module_raises_a_message() -> None:
    found = raising_modules("AssertionError", LOAD_WEIGHT.split(": ", 1)[1].strip())
    assert ("vllm/model_executor/model_loader/weight_utils.py", "default_weight_loader") in found["vllm"]
    assert ("sglang/srt/model_loader/weight_utils.py", "default_weight_loader") in found["sglang"]
    assert raising_modules("KeyError", LOAD_WEIGHT.split(": ", 1)[1].strip()) == {}  # another type: not that check


VLLM_LAUNCH = "+ vllm serve /models/llama --tensor-parallel-size 1\n"
SGLANG_LAUNCH = "+ python -m sglang.launch_server --model-path /models/llama\n"


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize(("text", "module"), [
    (VLLM_LAUNCH + LOAD_WEIGHT, "vllm/model_executor/model_loader/weight_utils.py"),
    (SGLANG_LAUNCH + LOAD_WEIGHT, "sglang/srt/model_loader/weight_utils.py"),
    (NO_MODULE, "vllm/model_executor/models/utils.py"),  # vLLM's code alone raises it
])
def test_a_frameless_message_is_read_in_the_module_that_raises_it(text: str, module: str) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "weight-loading"
    assert f"raised in {module}, per the engine's code" in diagnosis.root_cause


@pytest.mark.usefixtures("no_rules")
def test_a_message_both_engines_raise_names_no_module_when_no_engine_is_decided() -> None:
    assert "per the engine's code" not in diagnose_without_patterns(LOAD_WEIGHT).root_cause


@pytest.mark.usefixtures("no_rules")
def test_a_message_several_subsystems_raise_places_none() -> None:
    diagnosis = diagnose_without_patterns(NO_CACHE)
    assert diagnosis.category == "kv-cache-memory"
    assert "per the engine's code" not in diagnosis.root_cause


# A wrapper's worker that re-raises the engine's exception from C (codecs.strict_errors raises the exception it is
# given), as Ray or a process pool hands back a worker's error: the innermost frame is the call it came out of.
_WRAPPER = '''
import codecs


def generate(model):
    codecs.strict_errors(AssertionError("Attempted to load weight (torch.Size([3600])) into parameter (torch.Size([3584]))"))
'''
# The wrapper's own check, raising the same words itself.
_WRAPPER_RAISING = '''
def generate(model):
    raise AssertionError("Attempted to load weight (torch.Size([3600])) into parameter (torch.Size([3584]))")
'''


@pytest.mark.usefixtures("no_rules")
def test_a_traceback_whose_engine_frames_were_lost_is_read_in_the_raising_module(tmp_path: Path) -> None:
    run = traceback_of_installed(tmp_path, {"verl/workers/rollout.py": _WRAPPER},
                                 "from verl.workers.rollout import generate\ngenerate(None)\n")
    diagnosis = diagnose_without_patterns(VLLM_LAUNCH + run.stderr)
    assert diagnosis.category == "weight-loading"
    assert "raised in vllm/model_executor/model_loader/weight_utils.py, per the engine's code" in diagnosis.root_cause


@pytest.mark.usefixtures("no_rules")
def test_a_traceback_whose_innermost_line_raises_is_not_read_elsewhere(tmp_path: Path) -> None:
    run = traceback_of_installed(tmp_path, {"verl/workers/rollout.py": _WRAPPER_RAISING},
                                 "from verl.workers.rollout import generate\ngenerate(None)\n")
    assert "per the engine's code" not in diagnose_without_patterns(VLLM_LAUNCH + run.stderr).root_cause


def test_a_traceback_that_shows_the_raising_module_is_read_from_its_frames(tmp_path: Path) -> None:
    source = ('def default_weight_loader(param, loaded_weight):\n'
              '    raise AssertionError("Attempted to load weight (torch.Size([3600])) into parameter (torch.Size([3584]))")\n')
    run = traceback_of_installed(tmp_path, {"vllm/model_executor/model_loader/weight_utils.py": source},
                                 "from vllm.model_executor.model_loader.weight_utils import default_weight_loader\n"
                                 "default_weight_loader(None, None)\n")
    from logsleuth.api import DiagnoseOptions, diagnose_text

    report = diagnose_text(run.stderr, DiagnoseOptions(include_user_patterns=False))
    assert raising_frame(report.failures[0].failure, "vllm", {"AssertionError"}) is None
