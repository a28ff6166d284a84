"""The engine of short pastes from positive evidence only (issue 28, the engine not named on short pastes): a pydantic
report of vLLM's config classes, a message a paste wrapped at its width, an engine's compilation cache in a message,
a Ray task named after one engine's actor.  Each with a look-alike where nothing must be named.

Tracebacks are real CPython's (a user's script, no frame in either engine's package); pydantic is not installed
here, so its reports are written in pydantic-core's format (`N validation error(s) for Class`, then per error
`  Value error, <message> [type=value_error, …]`), with the engines' own wordings (dev threads
vllm-project/vllm-omni#2170, vllm-project/vllm#21858, sgl-project/sglang#4236)."""

from __future__ import annotations

from logsleuth.api import diagnose_text
from logsleuth.ingest.engine_evidence import ray_task_engine
from logsleuth.ingest.engine_from_message import engine_raising
from tests.helpers import real_traceback

VALIDATION_ERROR = "pydantic_core._pydantic_core.ValidationError"
TRAILER = " [type=value_error, input_value=ArgsKwargs((), {'model': ...}), input_type=ArgsKwargs]"


def test_a_pydantic_report_on_a_class_only_vllm_defines_names_vllm() -> None:
    assert engine_raising(((VALIDATION_ERROR, "1 validation error for VllmConfig"),)) == "vllm"
    assert engine_raising(((VALIDATION_ERROR, "2 validation errors for SpeculativeConfig\n  Value error, x"),)) == "vllm"
    report = diagnose_text(f"{VALIDATION_ERROR}: 1 validation error for SpeculativeConfig\n")
    assert report.launch.engine == "vllm"


def test_a_pydantic_title_alone_on_a_line_is_weighed_as_the_message() -> None:
    """The report's title pasted alone (no type, or in a sentence) is no failure the scanner reads; its class still
    names the engine, and a title of a class both engines define names nothing."""
    assert diagnose_text("1 validation error for VllmConfig\n").launch.engine == "vllm"
    assert diagnose_text(f"starting the server fails with {VALIDATION_ERROR}: 1 validation error for SpeculativeConfig\n").launch.engine == "vllm"
    assert diagnose_text("1 validation error for ModelConfig\n").launch.engine is None


def test_a_pydantic_report_on_a_shared_class_decides_by_its_items() -> None:
    """`ModelConfig` both engines define: the title alone names nothing; an item only vLLM raises names vLLM; an item
    both engines raise names vLLM too, since only vLLM's ModelConfig is a pydantic class (SGLang's is plain)."""
    assert engine_raising(((VALIDATION_ERROR, "1 validation error for ModelConfig"),)) is None
    only_vllm = "1 validation error for ModelConfig\n  Value error, `limit_mm_per_prompt` is only supported for multimodal models."
    assert engine_raising(((VALIDATION_ERROR, only_vllm + TRAILER),)) == "vllm"
    both = "1 validation error for ModelConfig\n  Value error, No model architectures are specified"
    assert engine_raising(((VALIDATION_ERROR, both),)) == "vllm"
    # An item CPython's own wording, or no engine's message, names nothing.
    assert engine_raising(((VALIDATION_ERROR, "1 validation error for ModelConfig\n  Value error, Expecting value: line 1 column 1 (char 0)"),)) is None


def test_a_pydantic_item_whose_title_was_lost_decides_by_its_message() -> None:
    assert engine_raising((("", "Value error, `limit_mm_per_prompt` is only supported for multimodal models." + TRAILER),)) == "vllm"
    # A message both engines raise, with no class to tell whose pydantic class refused it: nothing.
    assert engine_raising((("", "Value error, No model architectures are specified"),)) is None


def test_look_alike_a_pydantic_report_of_an_api_model_both_engines_define_names_nothing() -> None:
    """SGLang's server refusing a chat request (sgl-project/sglang#4236): `ChatCompletionRequest` is both engines'
    class, its items pydantic's own type errors."""
    paste = (f"{VALIDATION_ERROR}: 2 validation errors for ChatCompletionRequest\n"
             "messages.1.ChatCompletionMessageGenericParam.content.str\n"
             "  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]\n"
             "messages.1.ChatCompletionMessageUserParam.role\n"
             "  Input should be 'user' [type=literal_error, input_value='assistant', input_type=str]\n")
    assert diagnose_text(paste).launch.engine is None
    both = "1 validation error for ChatCompletionRequest\n  Value error, No model architectures are specified"
    assert engine_raising(((VALIDATION_ERROR, both),)) is None


def test_a_message_wrapped_at_the_pastes_width_is_read_as_printed() -> None:
    """vLLM's compile failure cut mid-word by a code block's width (vllm-project/vllm#21858), the paste stopping before
    the cache's path (which is evidence of its own)."""
    wrapped = ("vLLM failed to compile the model. The most likely reason for this is that a previous compilation failed, "
               "leading to a corr\nupted compilation artifact.")
    assert engine_raising((("RuntimeError", wrapped),)) == "vllm"
    report = diagnose_text(real_traceback(f"raise RuntimeError({wrapped!r})"))
    assert report.launch.engine == "vllm"
    # Lines that are a message's own (more than a wrapped line's few) are not joined.
    many = "\n".join(["Not enough memory."] + ["detail"] * 6)
    assert engine_raising((("RuntimeError", many),)) is None


def test_an_engines_compilation_cache_in_a_message_names_that_engine() -> None:
    """vLLM's torch.compile cache under its cache root (`~/.cache/vllm/torch_compile_cache/<hash>/rank_0_0/…`), and
    SGLang's own (`~/.cache/sglang/torch_compile_cache/`), in a real FileNotFoundError."""
    for engine in ("vllm", "sglang"):
        missing = f"/nonexistent/.cache/{engine}/torch_compile_cache/3fbdd5227b/rank_0_0/backbone/graph.py"
        report = diagnose_text(real_traceback(f"open({missing!r})"))
        assert report.failures and report.launch.engine == engine, engine


def test_look_alike_a_directory_named_after_an_engine_is_no_cache() -> None:
    report = diagnose_text(real_traceback("open('/nonexistent/models/vllm/torch_compile_cache_notes/graph.py')"))
    assert report.failures and report.launch.engine is None


def test_a_ray_task_of_one_engines_actor_names_that_engine() -> None:
    assert ray_task_engine("ray.exceptions.RayTaskError(RuntimeError): ray::vLLMHttpServer.launch_server() (pid=9, ip=10.0.0.2)") == "vllm"
    assert ray_task_engine("ray::RayWorkerWrapper.execute_method() (pid=7, ip=10.0.0.3)") == "vllm"
    assert ray_task_engine("ray::SGLangHttpServer.launch_server() (pid=8)") == "sglang"
    paste = "ray.exceptions.RayTaskError(RuntimeError): ray::vLLMHttpServer.launch_server() (pid=9, ip=10.0.0.2)\n"
    assert diagnose_text(paste).launch.engine == "vllm"


def test_look_alike_a_ray_task_of_a_wrappers_own_actor_names_no_engine() -> None:
    """verl's `WorkerDict` runs either engine's rollout; Ray's `main_task` is verl's driver."""
    assert ray_task_engine("ray::WorkerDict.actor_rollout_generate_sequences() (pid=40126)") is None
    paste = "ray.exceptions.RayTaskError(OutOfMemoryError): ray::main_task() (pid=508648, ip=10.1.200.6)\n"
    assert diagnose_text(paste).launch.engine is None


def test_look_alike_a_paste_quoting_one_engines_error_above_the_others_names_neither() -> None:
    """A vLLM user recalls SGLang's error in prose, then pastes vLLM's: each message is one engine's own, and the
    pattern that knows SGLang's wording must not name SGLang for the whole report."""
    paste = ('I switched from sglang because it kept failing with "RuntimeError: Not enough memory. Please try to increase '
             '--mem-fraction-static." and now vllm serve gives:\n'
             "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
             "initializing the engine.\n")
    assert diagnose_text(paste).launch.engine is None
    # SGLang's error alone still names SGLang (its own words).
    alone = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
    assert diagnose_text(alone).launch.engine == "sglang"


def test_look_alike_a_benchmark_client_naming_the_other_engine_names_none() -> None:
    """SGLang's benchmark client run against a vLLM server (`--backend vllm`), and vLLM's against SGLang's."""
    client = ("python3 -m sglang.bench_serving --backend vllm --host 127.0.0.1 --port 8000 --num-prompts 200\n"
              "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host 127.0.0.1:8000 ssl:default "
              "[Connect call failed ('127.0.0.1', 8000)]\n")
    assert diagnose_text(client).launch.engine is None
    assert diagnose_text("vllm bench serve --backend sglang --base-url http://127.0.0.1:30000\nRuntimeError: boom\n").launch.engine is None
