"""The engine named from positive evidence a short paste holds (issue 28: the engine left unnamed on 12 of the retired
blind split 15's failing pastes), each with a look-alike where nothing, or the stronger evidence, must decide:

- an engine's refusal of an architecture, whose listing of its model registry only one engine's registry fits (the
  words around it both engines raise: sgl-project/sglang#5441, vllm-project/vllm#10481);
- an engine's error answer quoted by the openai client, with the `None` cause vLLM's server appends (`f"{e}
  {e.__cause__}"`, vllm/entrypoints/openai/serving_chat.py; vllm-project/vllm#20409);
- the repr of an object of a wrapper's module made for one engine (`repr=<ray.llm._internal.serve.deployments.llm.
  vllm.vllm_engine._EngineBackgroundProcess object at 0x…>`, ray-project/ray#54739; OpenRLHF/OpenRLHF#358,
  NovaSky-AI/SkyRL#1788);
- the backend a serving benchmark names, only SGLang's native one (`Backend: sglang` in SGLang's bench_serving summary,
  sgl-project/sglang#9428, #9812, #9974; `--backend sglang` on its command line): the weakest evidence, and never an
  OpenAI-compatible label (`vllm`, `sglang-oai`, …), whose requests any server answers (ASYNC_REQUEST_FUNCS);
- vLLM's process name in square brackets (`[EngineCore_0 pid=5989] `, gpustack/gpustack#3084);
- a compose service named after one engine, only when it printed the failure (a message both engines raise here;
  beside other words, tests/test_engine_named_by_service.py).

Tracebacks are real CPython's, from our own scripts (no frame in either engine's package); the engines' messages are
their own words (the raise-site index holds them)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import diagnose_text
from logsleuth.ingest.engine_evidence import (
    benchmark_backend,
    bracketed_vllm_process,
    engine_in_service_name,
    repr_module_engine,
)
from logsleuth.ingest.engine_from_message import engine_raising
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.normalize import normalize_text
from tests.helpers import real_traceback, traceback_of_installed

REFUSED = "Model architectures ['Glm4ForCausalLM'] are not supported for now. Supported architectures: "
# Names from each registry: SGLang's MTP draft and Janus classes; vLLM's Aquila and Arctic entries; both engines' Llama.
SGLANG_LISTING = "dict_keys(['DeepseekV3ForCausalLMNextN', 'LlamaForCausalLM', 'MultiModalityCausalLM'])"
VLLM_LISTING = "['AquilaModel', 'ArcticForCausalLM', 'LlamaForCausalLM']"


def engine_of(paste: str) -> str | None:
    return diagnose_text(paste).launch.engine


def test_a_refusal_listing_one_engines_registry_names_that_engine() -> None:
    assert engine_raising((("ValueError", REFUSED + SGLANG_LISTING),)) == "sglang"
    assert engine_raising((("ValueError", REFUSED + VLLM_LISTING),)) == "vllm"
    assert engine_of(real_traceback(f"raise ValueError({REFUSED + SGLANG_LISTING!r})")) == "sglang"
    assert engine_of(real_traceback(f"raise ValueError({REFUSED + VLLM_LISTING!r})")) == "vllm"


def test_look_alike_a_listing_of_shared_or_mixed_names_or_none_names_nothing() -> None:
    """Names both registries have, one of each engine's own, a single own name, or the listing cut off: the words
    both engines raise decide nothing."""
    assert engine_raising((("ValueError", REFUSED + "['LlamaForCausalLM', 'Qwen2ForCausalLM']"),)) is None
    assert engine_raising((("ValueError", REFUSED + "['AquilaModel', 'MultiModalityCausalLM', 'ArcticForCausalLM']"),)) is None
    assert engine_raising((("ValueError", REFUSED + "['AquilaModel', 'LlamaForCausalLM']"),)) is None
    assert engine_of(real_traceback("raise ValueError(\"Model architectures ['X'] are not supported for now.\")")) is None


ANSWER = ("Error code: 400 - {'object': 'error', 'message': \"This model's maximum context length is 16384 tokens. However, "
          "you requested 19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the "
          "messages or completion. None\", 'type': 'BadRequestError', 'param': None, 'code': 400}")


def test_an_engines_answer_with_its_none_cause_is_read_without_it() -> None:
    assert engine_raising((("openai.BadRequestError", ANSWER),)) == "vllm"
    paste = real_traceback(f"""
        class BadRequestError(Exception):
            pass
        raise BadRequestError({ANSWER!r})
        """)
    assert engine_of(paste) == "vllm"


def test_look_alike_a_message_ending_in_none_outside_an_answer_is_read_as_it_stands() -> None:
    said = ("This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the "
            "messages, 10000 in the completion). Please reduce the length of the messages or completion. None")
    assert engine_raising((("ValueError", said),)) is None


RAY_LLM = "ray/llm/_internal/serve/deployments/llm/vllm/vllm_engine.py"
ACTOR_DIED = """
import {module} as m
obj = m._EngineBackgroundProcess()
raise RuntimeError(
    "The actor died because of an error raised in its creation task, ray::_EngineBackgroundProcess.__init__() "
    f"(pid=5555, ip=10.0.156.65, actor_id=08caf85d0f841d3f7e4b484c06000000, repr={{obj!r}})")
"""


def test_the_repr_of_an_object_of_a_wrappers_engine_module_names_that_engine(tmp_path: Path) -> None:
    module = RAY_LLM.removesuffix(".py").replace("/", ".")
    done = traceback_of_installed(tmp_path, {RAY_LLM: "class _EngineBackgroundProcess:\n    pass\n"},
                                  ACTOR_DIED.format(module=module))
    assert f"repr=<{module}._EngineBackgroundProcess object at 0x" in done.stderr
    assert engine_of(done.stderr) == "vllm"
    assert repr_module_engine("repr=<openrlhf.trainer.ray.vllm_engine.LLMRayActor object at 0x7f3c>") == "vllm"


def test_look_alike_the_repr_of_another_modules_object_names_nothing(tmp_path: Path) -> None:
    """A wrapper's worker that runs either engine (verl's WorkerDict, Xinference's WorkerActor), or a module whose name
    only holds an engine's (`my_vllm_utils`): no engine."""
    assert repr_module_engine("repr=<verl.single_controller.ray.base.WorkerDict object at 0x7f3c>") is None
    assert repr_module_engine("<xinference.core.worker.WorkerActor object at 0x7f3c>") is None
    done = traceback_of_installed(tmp_path, {"my_vllm_utils/helpers.py": "class _EngineBackgroundProcess:\n    pass\n"},
                                  ACTOR_DIED.format(module="my_vllm_utils.helpers"))
    assert engine_of(done.stderr) is None


def summary(backend: str) -> str:
    """SGLang's bench_serving summary head, in its own format strings."""
    return "\n".join(["", "{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="),
                      "{:<40} {:<10}".format("Backend:", backend),
                      "{:<40} {:<10}".format("Successful requests:", 660), ""])


def test_a_serving_benchmarks_native_backend_names_the_engine_of_a_clean_log() -> None:
    assert engine_of(summary("sglang")) == "sglang"
    assert engine_of(summary("sglang-native")) == "sglang"
    assert engine_of("$ python3 -m sglang.bench_serving --backend sglang --num-prompts 10\n" + summary("sglang")) == "sglang"
    assert benchmark_backend("python3 -m sglang.benchmark.serving --backend=sglang-native --port 30000") == "sglang"


def test_look_alike_an_openai_compatible_backend_names_no_engine() -> None:
    """SGLang's `vllm`, `vllm-chat`, `sglang-oai`, `sglang-oai-chat` send the OpenAI requests `lmdeploy` sends
    (sglang/bench_serving.py ASYNC_REQUEST_FUNCS), vLLM's `vllm` the ones `openai` sends (vllm/benchmarks/lib/
    endpoint_request_func.py), and vLLM's repository script's `sglang` too: any OpenAI-compatible server answers them."""
    for label in ("vllm", "vllm-chat", "sglang-oai", "sglang-oai-chat"):
        assert engine_of(summary(label)) is None, label
    assert engine_of("$ python3 -m sglang.bench_serving --backend vllm --num-prompts 10\n" + summary("vllm")) is None
    assert benchmark_backend("vllm bench serve --model m --backend vllm --port 8000") is None
    assert benchmark_backend("python benchmarks/benchmark_serving.py --backend sglang --port 30000") is None


def test_look_alike_another_commands_backend_after_the_client_names_nothing() -> None:
    for separator in (";", "&&", "|"):
        line = f"python -m sglang.bench_serving --help {separator} python other.py --backend sglang"
        assert benchmark_backend(line) is None, separator


def test_a_benchmarks_backend_is_no_record_of_the_logs_own_engine() -> None:
    """The backend is kept apart from the evidence the case window reads as the line where the log shows its engine."""
    tracker = LaunchTracker()
    for line in normalize_text(summary("sglang")):
        tracker.observe(line)
    assert tracker.engine == "sglang"
    assert not tracker.evidence


def test_look_alike_other_backends_stronger_evidence_and_failures_decide() -> None:
    """A backend that names no engine, another program's `--backend`; a server's own record outranks the client's
    choice (SGLang's header with a rank tag), as a message only one engine raises does; a client that failed names no
    engine (it may have failed against either server)."""
    assert engine_of(summary("openai")) is None
    assert engine_of(summary("lmdeploy")) is None
    assert benchmark_backend("torchrun --nproc-per-node 2 train.py --backend nccl") is None
    assert benchmark_backend("python serve.py --backend vllm") is None
    server = "[2025-08-01 10:00:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16\n"
    assert engine_of(server + summary("vllm")) == "sglang"
    only_vllm = real_traceback("raise RuntimeError('Engine core initialization failed. See root cause above. Failed core proc(s): {}')")
    assert engine_of(only_vllm + summary("sglang")) == "vllm"
    refused = real_traceback("raise ConnectionRefusedError(111, 'Connect call failed')")
    assert engine_of("$ python3 -m sglang.bench_serving --backend vllm --port 8000\n" + refused) is None


def test_vllms_process_name_in_square_brackets_names_vllm() -> None:
    paste = ("[EngineCore_0 pid=5989] NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
             "current PyTorch installation.\n") + real_traceback(
        "raise RuntimeError('CUDA error: no kernel image is available for execution on the device')")
    assert engine_of(paste) == "vllm"
    assert bracketed_vllm_process("[VllmWorker rank=1 pid=77] ready")


def test_look_alike_other_bracketed_names_name_nothing() -> None:
    assert not bracketed_vllm_process("[Worker pid=12] started")
    assert not bracketed_vllm_process("[MyApp pid=1] started")
    assert engine_of("[Worker pid=12] started\n[MyApp pid=1] done\n") is None


def compose(service: str, text: str) -> str:
    """Lines as docker compose prints a service's: its name padded, then ` | `."""
    return "".join(f"{service}  | {line}\n" for line in text.splitlines())


def test_a_service_named_after_one_engine_picks_it_for_words_both_engines_raise() -> None:
    both = "ValueError: Unknown RoPE scaling type extended\n"
    assert engine_raising((("ValueError", "Unknown RoPE scaling type extended"),)) is None  # both engines raise it
    assert engine_of(compose("vllm-server-1", both)) == "vllm"
    assert engine_of(compose("sglang-1", both)) == "sglang"
    assert engine_in_service_name("vllm-openai-1") == "vllm"


def test_look_alike_words_both_engines_raise_take_the_same_guards_as_any() -> None:
    """One rule reads the service's name, whatever the message: a traceback whose frames are a script's (none an
    engine's, or they would decide), or a line naming the other engine's install, leaves the name silent."""
    both = real_traceback("raise ValueError('Unknown RoPE scaling type extended')")
    assert engine_of(compose("vllm-server-1", both)) is None
    assert engine_of("pip install 'sglang[all]'\n" + compose("vllm-server-1", "ValueError: Unknown RoPE scaling type extended")) is None
    assert engine_in_service_name("rag-vllm-1") is None  # a project's word beside the engine's: the user's own name


def test_look_alike_a_services_name_alone_or_beside_other_words_names_nothing() -> None:
    """The user's name is weak evidence: beside a traceback whose frames show a script of the user's (transformers'
    missing config raised in it, a compose paste of vllm-project/vllm#8401's shape) or beside no failure it names
    nothing; a message one engine alone raises decides against it; a name holding both engines', or an engine's name
    inside another word, decides nothing."""
    missing = real_traceback("raise OSError('org/model does not appear to have a file named config.json.')")
    assert engine_of(compose("rag-vllm-1", missing)) is None
    assert engine_of(compose("vllm-1", "INFO:     Started server process [1]")) is None


def test_look_alike_an_engine_named_service_beside_the_one_that_failed_names_nothing() -> None:
    """The name counts only as the prefix of the failure's own lines: another service's name tells nothing of it."""
    both = real_traceback("raise ValueError('Unknown RoPE scaling type extended')")
    assert engine_of(compose("vllm-1", "INFO:     Started server process [1]") + compose("app-1", both)) is None
    assert engine_of(compose("app-1", both) + compose("sglang-1", "INFO:     Started server process [1]")) is None
    only_vllm = real_traceback("raise RuntimeError('Engine core initialization failed. See root cause above. Failed core proc(s): {}')")
    assert engine_of(compose("sglang-1", only_vllm)) == "vllm"
    assert engine_in_service_name("vllm-vs-sglang-1") is None
    assert engine_in_service_name("myvllmbox-1") is None
