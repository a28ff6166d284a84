"""A call between the engine's API and a program written for another release of it (issue 28, reasoning/
engine_api_calls.py): the caller's own frame refuses its call into the engine (a module made to run the engine, or a
raising line that calls a class of the engine's), and the engine's code calling a wrapper's override whose signature
is older.  Both are that program's release, not a bug of the engine; the look-alikes stay where they were.

Shapes: vllm-project/vllm#18259 (lm-eval's vllm_causallms.py calling resolve_hf_chat_template without the keyword vLLM
0.9.0 requires), zai-org/GLM-4#606 and lm-sys/FastChat#3600 (SamplingParams given use_beam_search, removed in vLLM
0.6.3), verl-project/verl#3934 and rllm-org/rllm#240 (vLLM 0.11 calling verl's executor's collective_rpc with
non_block).  Tracebacks are printed by the real interpreter, from modules laid out as the threads show."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import diagnose_without_patterns, traceback_of_installed

VLLM_BANNER = "INFO 05-19 10:02:31 [core.py:58] Initializing a V1 LLM engine (v0.9.0) with config: model='org/m'\n"


def _run(tmp_path: Path, modules: dict[str, str], main: str) -> str:
    """Real CPython's traceback of the script `main` (run from `tmp_path`) importing `modules` (paths under a
    site-packages tree -> their code)."""
    run = traceback_of_installed(tmp_path, modules, main, python="python3.12", script_name="demo.py")
    assert run.returncode == 1 and "Error: " in run.stderr, run.stderr
    return VLLM_BANNER + run.stderr


CHAT_UTILS = "def resolve_hf_chat_template(tokenizer, chat_template, tools, *, model_config):\n    return chat_template\n"
SAMPLING = "class SamplingParams:\n    def __init__(self, n=1, temperature=1.0):\n        self.n = n\n"


def test_a_module_made_for_the_engine_calling_its_function_with_an_old_signature_is_that_programs_release(
        tmp_path: Path) -> None:
    text = _run(tmp_path, {
        "vllm/entrypoints/chat_utils.py": CHAT_UTILS,
        "lm_eval/models/vllm_causallms.py": (
            "from vllm.entrypoints.chat_utils import resolve_hf_chat_template\n\n"
            "def load(tok):\n    return resolve_hf_chat_template(tok, None, None)\n"),
    }, "from lm_eval.models.vllm_causallms import load\nload(None)\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version", diagnosis.title
    first = diagnosis.fix.steps[0] if diagnosis.fix else ""
    assert first.startswith("General guidance:") and "lm_eval/models/vllm_causallms.py" in first, first
    assert "resolve_hf_chat_template()" in first and "vLLM 0.9.0" in first


def test_a_users_script_calling_an_engine_class_with_a_removed_keyword_is_the_scripts_release(tmp_path: Path) -> None:
    text = _run(tmp_path, {"vllm/sampling_params.py": SAMPLING},
                "from vllm.sampling_params import SamplingParams\n"
                "params = SamplingParams(n=1, use_beam_search=True)\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version", diagnosis.title
    assert any("demo.py" in step and "SamplingParams" in step for step in diagnosis.fix.steps)


def test_a_users_own_function_refusing_a_keyword_is_no_engine_call(tmp_path: Path) -> None:
    """The look-alike: the same TypeError on the script's own function, in a module named for nothing."""
    text = _run(tmp_path, {"mytools/helpers.py": "def build(n=1):\n    return n\n"},
                "from mytools.helpers import build\nbuild(use_beam_search=True)\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category != "dependency-version", diagnosis.title
    assert not any("not by vLLM's code" in step for step in (diagnosis.fix.steps if diagnosis.fix else ()))


EXECUTOR_BASE = (
    "class Executor:\n"
    "    def collective_rpc(self, method, args=(), non_block=False):\n        return []\n\n"
    "    def execute_model(self, output):\n"
    "        return self.collective_rpc('execute_model', args=(output,), non_block=True)\n"
)


def _override(tmp_path: Path, owner: str) -> str:
    """The engine's executor calling `collective_rpc(non_block=True)` on a subclass defined in `owner` whose override
    lacks the keyword."""
    dotted = owner.removesuffix(".py").replace("/", ".")
    return _run(tmp_path, {
        "vllm/v1/executor/abstract.py": EXECUTOR_BASE,
        owner: ("from vllm.v1.executor.abstract import Executor\n\n"
                "class ExternalZeroMQDistributedExecutor(Executor):\n"
                "    def collective_rpc(self, method, args=()):\n        return []\n\n"
                "def step():\n    return ExternalZeroMQDistributedExecutor().execute_model(None)\n"),
    }, f"from {dotted} import step\nstep()\n")


def test_the_engine_calling_a_wrappers_override_with_a_newer_keyword_is_the_wrappers_release(tmp_path: Path) -> None:
    diagnosis = diagnose_without_patterns(_override(tmp_path, "verl/workers/rollout/vllm_rollout/zmq_executor.py"))
    assert diagnosis.category == "dependency-version" and "bug" not in diagnosis.title, diagnosis.title
    first = diagnosis.fix.steps[0] if diagnosis.fix else ""
    assert "ExternalZeroMQDistributedExecutor.collective_rpc()" in first and "override" in first, first


def test_an_engine_class_refusing_the_engines_own_call_stays_an_engine_bug(tmp_path: Path) -> None:
    """The look-alike: the same call inside the engine on a class the engine's code defines (LLMEngine)."""
    text = _run(tmp_path, {
        "vllm/engine/llm_engine.py": (
            "class LLMEngine:\n    def add_request(self, request_id):\n        return request_id\n\n"
            "def step():\n    return LLMEngine().add_request('r', priority=1)\n"),
    }, "from vllm.engine.llm_engine import step\nstep()\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "engine-bug", diagnosis.title


def test_the_setting_combination_step_never_names_a_setting_the_checkpoint_needs_to_load() -> None:
    """A check that reads the quantization method, remote code trust and the KV cache's dtype: only the KV cache's dtype
    is a run to try without; a quantized checkpoint without --quantization, or remote code without trust, fails on
    loading instead (a known second failure)."""
    from logsleuth.facts.raise_sites import RaiseSite
    from logsleuth.models import LaunchInfo
    from logsleuth.reasoning.raise_site import given_settings

    site = RaiseSite(engine="sglang", file="sglang/srt/layers/quantization/fp8.py", function="Fp8MoEMethod.apply",
                     line=1, kind="assert", condition="", guards=(),
                     fields=("quantization", "trust_remote_code", "kv_cache_dtype"),
                     releases=("0.5.9",), indexed=("0.5.9",), version="0.5.9")
    launch = LaunchInfo(engine="sglang", engine_version="0.5.9", command_source="log", command=(
        "python3 -m sglang.launch_server --model-path org/m-fp8 --quantization fp8 --trust-remote-code "
        "--kv-cache-dtype fp8_e4m3"))
    assert [flag for flag, _ in given_settings(site, launch)] == ["--kv-cache-dtype"]


def _collective_under(tmp_path: Path, engine_module: str) -> str:
    """Real CPython's traceback: the engine's module at `engine_module` calls torch's collective, which refuses the
    sizes (the words of torch's distributed_c10d.py)."""
    dotted = engine_module.removesuffix(".py").replace("/", ".")
    return _run(tmp_path, {
        "torch/distributed/distributed_c10d.py": (
            "def reduce_scatter_tensor(output, input):\n"
            "    raise ValueError('input tensor must be the same size as output size times world size')\n"),
        engine_module: ("from torch.distributed.distributed_c10d import reduce_scatter_tensor\n\n"
                        "def dp_gather_partial():\n    return reduce_scatter_tensor(None, None)\n"),
    }, f"from {dotted} import dp_gather_partial\ndp_gather_partial()\n").replace(VLLM_BANNER, "")


SGLANG_LAUNCH = ("$ python3 -m sglang.launch_server --model-path org/m --tp 8 --dp 4 --trust-remote-code "
                 "--enable-torch-compile --enable-dp-attention --port 30000\n")


def test_the_setting_whose_code_the_failing_frames_run_through_is_named(tmp_path: Path) -> None:
    """sgl-project/sglang#3658, #19760: torch's collective refuses the sizes SGLang's data-parallel attention gives it;
    no indexed check of the engine's reads a setting, the module's name says which one turned that code on."""
    diagnosis = diagnose_without_patterns(SGLANG_LAUNCH + _collective_under(tmp_path, "sglang/srt/layers/dp_attention.py"))
    steps = diagnosis.fix.steps if diagnosis.fix else ()
    named = [step for step in steps if step.startswith("General guidance:") and "the code of" in step]
    assert named and "--enable-dp-attention" in named[0], steps
    assert "--enable-torch-compile" not in named[0] and "--trust-remote-code" not in named[0]


def test_frames_through_no_settings_code_name_no_setting(tmp_path: Path) -> None:
    """The look-alike: the same refusal through the engine's general collective module names no setting."""
    diagnosis = diagnose_without_patterns(SGLANG_LAUNCH + _collective_under(tmp_path, "sglang/srt/distributed/parallel_state.py"))
    assert not any("the code of" in step for step in (diagnosis.fix.steps if diagnosis.fix else ()))


def test_a_check_written_for_the_failures_own_shape_comes_first() -> None:
    """The wild corpus's general NCCL reports were timeouts in 7 of 12 and its `undefined symbol` reports were resolved
    by the matching build: a conditional check for that shape leads the row's general ones; another shape of the same
    category keeps the row's own first check and never shows it."""
    from logsleuth.facts.categories import table
    from logsleuth.reasoning.general import row_checks

    nccl = table().row("nccl")
    dependency = table().row("dependency-version")
    assert nccl is not None and dependency is not None
    timeout = row_checks(nccl, "sglang", None, texts=("RuntimeError: [Rank 1] Watchdog caught collective operation timeout",))
    assert timeout[0].startswith("A timeout of the distributed layer"), timeout[0]
    transport = row_checks(nccl, "sglang", None, texts=("RuntimeError: NCCL error: unhandled system error",))
    assert transport[0].startswith("Run with NCCL_DEBUG=INFO") and not any("A timeout of" in c for c in transport)
    symbol = row_checks(dependency, "vllm", None, texts=("ImportError: vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDevice",))
    assert "undefined symbol" in symbol[0]
    assert not any("undefined symbol" in c for c in row_checks(dependency, "vllm", None, texts=("ModuleNotFoundError: No module named 'x'",)))


def test_a_word_every_module_has_names_no_setting() -> None:
    """`load_weights` is no code of --load-balance-method; `dp_attention.py` is --enable-dp-attention's, `lora/` is
    --enable-lora's, `triton_backend.py` --attention-backend triton's, whole tokens only (`chunked` is no `chunk`).
    A single word counts only in a module's path: a function's name (`check_memory`) is no feature's code."""
    from logsleuth.reasoning.setting_paths import _TOKEN_SPLIT, _names_feature

    def names(flag: str, value: str, paths: str) -> bool:
        modules = {token for line in paths.splitlines() if "/" in line for token in _TOKEN_SPLIT.split(line)}
        return _names_feature(flag, value, paths, modules)

    paths = "sglang/srt/model_executor/model_runner.py\nload_weights\nsglang/srt/layers/dp_attention.py\ndp_gather"
    assert not names("--load-balance-method", "round_robin", paths)
    assert names("--enable-dp-attention", "", paths)
    assert names("--enable-lora", "", "sglang/srt/lora/lora_manager.py\nprepare_lora_batch")
    assert names("--attention-backend", "triton", "sglang/srt/layers/attention/triton_backend.py\nforward_extend")
    assert not names("--enable-mixed-chunk", "", "sglang/srt/managers/schedule_policy.py\nadd_chunked_req")
    # a common word shared by a switch and a function of the scheduler names nothing
    assert not names("--enable-p2p-check", "", "sglang/srt/managers/scheduler.py\ncheck_memory")
    assert not names("--enable-metrics", "", "sglang/srt/managers/scheduler.py\nlog_metrics_idle")
