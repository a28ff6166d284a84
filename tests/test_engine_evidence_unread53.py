"""Positive evidence of the engine that the reader left unread (stop 53: the last blind split left 15 of 47 failing
pastes unnamed), each a class, with its look-alikes that must name nothing:

1. a launch written in a sentence, also `vllm serve` with only the model's path after it (vLLM's serve takes the
   model as its one positional word, vllm/entrypoints/cli/serve.py);
2. a listing of what is installed (pip's and conda's rows, collect_env's `[pip3]`/`[conda]` lines: vllm-project/vllm
   #16343, #17835) holding one engine's distribution: that engine, unless a failure's message is only the other's;
   both listed, nothing;
3. the user's Python driving one engine's API (`from vllm import LLM`, `import sglang as sgl`, `sgl.Engine(`:
   sgl-project/sglang#1173, #5647); SGLang's own imports of vLLM (`import vllm`, `from vllm import _custom_ops`)
   name nothing;
4. a package path outside a frame (`vllm/v1/engine/core.py:123`), not a record's `[core.py:123]`;
5. a KV-transfer integration (LMCache, Mooncake, NIXL) names nothing by its own words, its connector module's path in
   the engine does (`vllm/distributed/kv_transfer/…`: no indexed SGLang release imports it; `sglang/srt/disaggregation/…`);
6. a wrapper from the innermost directory holding its package, never a parent folder's name.

The lines are our own, in the shapes the cited threads and code sites show; tracebacks are real CPython's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.ingest.engine_evidence import api_code_engine, failure_wrappers, wrapper_of_path
from logsleuth.ingest.normalize import normalize_text
from logsleuth.tracebacks.scanner import scan

OPTIONS = DiagnoseOptions(include_user_patterns=False)
# torch's words, which either engine's run prints: no engine by themselves
ILLEGAL_ACCESS = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.10 GiB of which 1.25 GiB is free.\n")
# a message only SGLang's code raises (srt/model_executor/model_runner.py)
ONLY_SGLANG = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"


def _engine(text: str) -> str | None:
    return diagnose_text(text, OPTIONS).launch.engine


@pytest.mark.parametrize("sentence, engine", [
    ("When the server starts with `vllm serve /data/models/qwen3-32b` it dies after loading:", "vllm"),
    ("Command: vllm serve ./checkpoints/step-2000", "vllm"),
    ("vllm serve /data/models/qwen3-32b", "vllm"),  # typed alone: the model's dash is no flag, its path shows the command
    ("Ran python3 -m sglang.launch_server --model-path /mnt/weights/glm --tp 4 and it crashed:", "sglang"),
])
def test_a_launch_written_in_a_sentence_names_its_engine(sentence: str, engine: str) -> None:
    assert _engine(f"{sentence}\n{ILLEGAL_ACCESS}") == engine


# A sentence naming a flagless serve command: how the user ran it, or what they compare against (SGLang's issues often
# say the other engine serves the model fine).  The words cannot tell the two apart: nothing.
COMPARISONS = [
    "It runs fine under vllm serve /data/llama",
    "The same model works fine with vllm serve /models/qwen3",
    "Previously I used vllm serve /models/qwen",
    "No problem with vllm serve ./qwen",
    "Switching from vllm serve /models/qwen3-32b",  # the model's dash is no flag
    "I start it as sglang serve /mnt/weights/glm",
    "Using vllm serve Qwen/Qwen3-8B on two cards I get:",
]


@pytest.mark.parametrize("sentence", [
    "Running vllm serve on a single H100 works, but here it fails:",
    "vllm serve is much faster than the other server for this model:",
    "Is there an equivalent of vllm serve for this?",
    *COMPARISONS,
])
def test_look_alike_a_sentence_about_the_command_names_nothing(sentence: str) -> None:
    assert _engine(f"{sentence}\n{ILLEGAL_ACCESS}") is None


# SGLang's scheduler record with its rank tag and its frames (srt/managers/scheduler.py), then torch's own frame
SGLANG_FAILURE = (
    "[2025-05-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2300, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 900, in synchronize\n'
    "    return torch._C._cuda_synchronize()\n" + ILLEGAL_ACCESS)


@pytest.mark.parametrize("sentence", [*COMPARISONS[:5], "It works with vllm serve /data/llama --tensor-parallel-size 2, not here:"])
def test_a_sentence_naming_the_other_engines_command_never_outranks_the_failures_frames(sentence: str) -> None:
    assert _engine(f"{sentence}\n{SGLANG_FAILURE}") == "sglang"


@pytest.mark.parametrize("listing, engine", [
    ("[pip3] numpy==1.26.4\n[pip3] torch==2.6.0\n[pip3] vllm==0.8.5\n[pip3] transformers==4.51.3\n", "vllm"),
    ("# Name                    Version                   Build  Channel\nvllm                      0.8.5                    pypi_0    pypi\n", "vllm"),
    ("[conda] torch                     2.6.0                    pypi_0    pypi\n[conda] vllm                      0.8.5                    pypi_0    pypi\n", "vllm"),
    ("Package                  Version\n------------------------ -----------\nsglang                   0.4.6.post1\ntorch                    2.6.0\n", "sglang"),
    ("accelerate==1.6.0\nsglang==0.4.6.post1\ntorch==2.6.0\n", "sglang"),
    ("$ pip show sglang\nName: sglang\nVersion: 0.5.2\n", "sglang"),
])
def test_the_one_engine_a_listing_shows_installed_is_the_engine(listing: str, engine: str) -> None:
    report = diagnose_text(listing + "\n" + OOM, OPTIONS)
    assert report.launch.engine == engine and report.launch.engine_version is not None


def test_look_alike_a_listing_of_both_engines_or_another_package_names_nothing() -> None:
    assert _engine("[pip3] sglang==0.4.6.post1\n[pip3] vllm==0.8.4\n" + OOM) is None
    assert _engine("[pip3] vllm-flash-attn==2.6.1\n[pip3] sglang-router==0.1.4\n" + OOM) is None  # other packages
    assert _engine("vLLM: v0.8.5\n" + OOM) is None  # a label is the user's word, not a listing
    assert _engine("Please install vllm==0.8.5 first\n" + OOM) is None  # an instruction


# SGLang installed in shapes a listing's row reader does not read, beside a vLLM that SGLang's images add for AWQ
# (`pip install vllm==0.8.5` on top of lmsysorg/sglang; no SGLang release pins a vLLM that new, facts/requires.json):
# its editable install from /sgl-workspace/sglang/python (pip freeze's two shapes), a direct reference, an extra, the
# packages only SGLang installs (sgl-kernel, sglang-router), a label of the user's.
@pytest.mark.parametrize("other", [
    "# Editable install with no version control (sglang==0.4.6.post4)\n-e /sgl-workspace/sglang/python\nsglang-router==0.1.4\ntorch==2.6.0\n",
    "-e git+https://github.com/sgl-project/sglang.git@abc123#egg=sglang&subdirectory=python\n",
    "sglang @ file:///sgl-workspace/sglang/python\n",
    "sglang[all]==0.4.6.post1\n",
    "[pip3] sgl-kernel==0.1.0\n",
    "sgl-kernel 0.1.0\nflashinfer-python 0.2.5\n",
    "SGLang: v0.4.6.post4\n",
    "SGLang version: 0.4.6.post4\n",
])
@pytest.mark.parametrize("failure", [OOM, ILLEGAL_ACCESS])
def test_look_alike_a_vllm_row_beside_sglangs_installation_in_another_shape_names_nothing(other: str, failure: str) -> None:
    assert _engine(other + "vllm==0.8.5\n\n" + failure) is None


def test_look_alike_a_listing_beside_a_label_of_the_other_engine_names_nothing() -> None:
    assert _engine("vLLM Version: 0.9.2\n$ pip show sglang\nName: sglang\nVersion: 0.5.2\n\n" + OOM) != "sglang"
    assert _engine("SGLang: v0.4.6.post4\n$ pip show vllm\nName: vllm\nVersion: 0.8.5\n\n" + OOM) is None


# A trainer's own failure, which prints no frames of the engine its environment lists as a dependency (TRL's
# `trl[vllm]`, verl, OpenRLHF): torchrun's rank prefix over torch's NCCL error (ProcessGroupNCCL.cpp), its OOM.
NCCL = ("[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, "
        "unhandled cuda error\n")


@pytest.mark.parametrize("trainer", ["trl 0.17.0\n", "verl==0.3.0\n", "deepspeed==0.16.4\n"])
@pytest.mark.parametrize("failure", [NCCL, OOM])
def test_look_alike_a_trainer_listed_beside_vllm_with_a_frameless_failure_names_nothing(trainer: str, failure: str) -> None:
    assert _engine(trainer + "vllm 0.8.5\n" + failure) is None


def test_look_alike_a_notebooks_cell_frames_beside_a_listing_name_nothing() -> None:
    cell = ("Traceback (most recent call last):\n  File \"<ipython-input-3-1b2c>\", line 4, in <module>\n"
            "    out = model(batch)\n")
    assert _engine("vllm 0.8.5\n" + cell + OOM) is None


def test_a_listing_loses_to_a_message_only_the_other_engine_raises() -> None:
    """SGLang up to 0.4 required vLLM: its users' listings may show vLLM alone (a version no SGLang release pins
    here, so the version guard does not decide it)."""
    assert _engine("[pip3] vllm==0.9.2\n" + ONLY_SGLANG) == "sglang"
    assert _engine("[pip3] vllm==0.6.3.post1\n" + OOM) is None  # a vLLM release SGLang 0.3 pinned: installed beside it


@pytest.mark.parametrize("code, engine", [
    ("from vllm import LLM, SamplingParams\n\nllm = LLM(model=\"/models/qwen\", tensor_parallel_size=2)\n", "vllm"),
    (">>> from vllm.entrypoints.llm import LLM\n", "vllm"),
    ("import sglang as sgl\n\nif __name__ == '__main__':\n    llm = sgl.Engine(model_path=\"/models/qwen\")\n", "sglang"),
    ("    engine = sgl.Engine(model_path=path, tp_size=2)\n", "sglang"),
    ("from sglang.srt.server_args import ServerArgs\n", "sglang"),
])
def test_the_users_code_driving_an_engines_api_names_it(code: str, engine: str) -> None:
    assert _engine(code + "\n" + ILLEGAL_ACCESS) == engine


@pytest.mark.parametrize("line", [
    "import vllm",  # SGLang's own code imports vllm so (srt/layers/quantization)
    "from vllm import _custom_ops as ops",
    "from vllm.distributed import parallel_state",
    "llm = LLM(model='/models/qwen')",  # TensorRT-LLM's class has the name too
    "I replaced from vllm import LLM with the other engine",  # a sentence, not code
    "ModuleNotFoundError: No module named 'sglang'",
    "The same prompts work with sgl.Engine(model_path=p), but with the other one:",  # a sentence naming the call
])
def test_look_alike_imports_sglang_makes_or_words_about_code_name_nothing(line: str) -> None:
    assert api_code_engine(line) is None
    assert _engine(f"{line}\n{ILLEGAL_ACCESS}") is None


def test_a_package_path_outside_a_frame_names_its_engine_and_a_record_place_does_not() -> None:
    assert _engine("The crash is inside vllm/v1/engine/core.py:123 while stepping.\n" + ILLEGAL_ACCESS) == "vllm"
    assert _engine("It fails in sglang/srt/managers/scheduler.py when the batch is built.\n" + ILLEGAL_ACCESS) == "sglang"
    assert _engine("The crash is at [core.py:123] while stepping.\n" + ILLEGAL_ACCESS) is None


# LMCache's own record (its logger's `LMCache INFO:` and `(file:line:module)` trailer, LMCache/LMCache#709), Mooncake's
# glog record of its transfer engine, NIXL's agent: an integration's words, which either engine's connector prints.
KV_INTEGRATION = ("[2025-06-11 11:59:01,212] LMCache INFO: Creating LMCacheEngine with config: chunk_size=256 "
                  "(cache_engine.py:70:lmcache.v1.cache_engine)\n"
                  "E0611 11:59:02.118000 4242 transfer_engine.cpp:368] Failed to install transport: rdma\n")


def test_a_kv_integrations_own_words_name_nothing_its_connector_path_in_the_engine_does() -> None:
    assert _engine(KV_INTEGRATION + ILLEGAL_ACCESS) is None
    warning = ("/usr/local/lib/python3.12/site-packages/vllm/distributed/kv_transfer/kv_connector/v1/lmcache_connector.py:"
               "41: UserWarning: the connector's config is deprecated\n")
    assert _engine(KV_INTEGRATION + warning + ILLEGAL_ACCESS) == "vllm"
    sglang = "Mooncake transfer failed in /sgl-workspace/sglang/python/sglang/srt/disaggregation/mooncake/conn.py\n"
    assert _engine(KV_INTEGRATION + sglang + ILLEGAL_ACCESS) == "sglang"
    # the parts of vLLM's distributed package SGLang imports stay no evidence
    shared = "AttributeError: module 'vllm.distributed.parallel_state' has no attribute 'get_tp_group'\n"
    assert _engine(shared) is None


@pytest.mark.parametrize("path, wrapper", [
    ("/home/u/verl/OpenRLHF/openrlhf/trainer/ppo_trainer.py", "OpenRLHF"),  # OpenRLHF's code in a folder named verl
    ("/workspace/verl/verl/trainer/main_ppo.py", "verl"),  # a checkout: the repository, then its package
    ("/workspace/verl/verl/protocol.py", "verl"),
    ("/opt/conda/lib/python3.10/site-packages/verl/protocol.py", "verl"),
    ("/home/u/verl/.venv/lib/python3.10/site-packages/ray/_private/worker.py", "Ray"),  # Ray's code in verl's folder
    ("/home/u/verl/train.py", None),  # the user's script in a folder named verl
    # OpenRLHF's own package (openrlhf/trainer/ray/vllm_engine/actor.py in its tree): below the install directory the
    # wrapper is the package installed there, never a directory inside it
    ("/usr/local/lib/python3.10/dist-packages/openrlhf/trainer/ray/vllm_engine/actor.py", "OpenRLHF"),
    ("/home/u/ray/.venv/lib/python3.10/site-packages/openrlhf/trainer/ray/launcher.py", "OpenRLHF"),
])
def test_a_wrapper_is_the_innermost_directory_holding_its_package(path: str, wrapper: str | None) -> None:
    assert wrapper_of_path(path) == wrapper


def test_a_traceback_through_a_wrapper_in_a_folder_named_after_another_names_the_inner_one(tmp_path: Path) -> None:
    package = tmp_path / "verl" / "OpenRLHF" / "openrlhf" / "trainer"
    package.mkdir(parents=True)
    (package / "ppo_trainer.py").write_text("def fit():\n    raise ValueError('the rollout batch is empty')\n")
    script = tmp_path / "verl" / "OpenRLHF" / "run.py"
    script.write_text("from openrlhf.trainer.ppo_trainer import fit\nfit()\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=script.parent, timeout=60)
    assert run.returncode == 1 and "/verl/OpenRLHF/openrlhf/trainer/ppo_trainer.py" in run.stderr
    assert diagnose_text(run.stderr, OPTIONS).launch.wrapper == "OpenRLHF"


def test_an_environment_installed_inside_a_wrappers_checkout_keeps_both(tmp_path: Path) -> None:
    """verl's recipe in its checkout, Ray installed in a virtual environment inside that checkout: both ran."""
    recipe = tmp_path / "verl" / "recipe" / "dapo"
    recipe.mkdir(parents=True)
    ray = tmp_path / "verl" / ".venv" / "lib" / "python3.11" / "site-packages" / "ray"
    ray.mkdir(parents=True)
    (ray / "worker.py").write_text("def get():\n    raise RuntimeError('the actor died unexpectedly')\n")
    (recipe / "main_dapo.py").write_text(f"import sys\nsys.path.insert(0, {str(ray.parent)!r})\nfrom ray.worker import get\nget()\n")
    run = subprocess.run([sys.executable, str(recipe / "main_dapo.py")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "/verl/recipe/dapo/main_dapo.py" in run.stderr
    assert diagnose_text(run.stderr, OPTIONS).launch.wrapper == "verl"
    assert failure_wrappers(scan(normalize_text(run.stderr))[0]) == {"verl", "Ray"}
