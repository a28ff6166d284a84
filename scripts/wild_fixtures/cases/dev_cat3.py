"""The third dev split of issue 28's category work (branch h-cat3, stop 38): classes a fresh blind split filed
under the wrong category.  A wrapper written for another engine release (verl handing SGLang's ServerArgs a keyword
that release lacks: dependency-version, not an unknown flag the user typed), and a prompt that fills the context so
the output budget a client computed is negative (vLLM's 'max_tokens must be at least 1, got -N' in its JSON error
body: context-length).

Facts were mined from threads with even numbers (the message wording, the frames and records they showed, the
release, the resolution); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import frame_at

from .. import paste
from ..blocks import plain
from ..corpus import Expect, Run, Text, WildCase
from .dev_detect import top

# -- verl-project/verl#2812: verl's SGLang rollout builds SGLang's Engine with a keyword the installed release lacks ----

# SGLang's ServerArgs is a dataclass: a keyword it has no field for is refused at the call, by CPython's own
# __init__ (no frame of its own).  The mirror's ServerArgs has the fields the rollout's other keywords name.
SERVER_ARGS = "__import__('dataclasses').make_dataclass('ServerArgs', ['model_path', 'tp_size', 'mem_fraction_static'])"
ENGINE_KWARGS = "{'model_path': '/models/Qwen2.5-3B-Instruct', 'tp_size': 1, 'mem_fraction_static': 0.5, 'mm_attention_backend': 'fa3'}"
VERL_ROLLOUT = Run(plain((
    top("verl/workers/fsdp_workers.py", "init_model", "self.rollout = self._build_rollout()", 612,
        env=(("self", "NS(_build_rollout=_target('f1'))"),)),  # f1: the next frame
    frame_at("verl/workers/fsdp_workers.py", "_build_rollout", "rollout = SGLangRollout(actor_module=local_path, config=self.config.rollout)", 508,
             env=(("SGLangRollout", "NEXT"), ("local_path", "'/models/Qwen2.5-3B-Instruct'"), ("self", "NS(config=NS(rollout=None))"))),
    frame_at("verl/workers/rollout/sglang_rollout/sglang_rollout.py", "__init__", "self._init_inference_engine(trust_remote_code, actor_module, port)", 271,
             env=(("self", "NS(_init_inference_engine=_target('f3'))"), ("trust_remote_code", "False"), ("actor_module", "None"), ("port", "None"))),
    frame_at("verl/workers/rollout/sglang_rollout/sglang_rollout.py", "_init_inference_engine", "self._engine = AsyncEngine(**engine_kwargs)", 398,
             env=(("self", "NS()"), ("AsyncEngine", "NEXT"), ("engine_kwargs", ENGINE_KWARGS))),
    frame_at("sglang/srt/entrypoints/engine.py", "__init__", "server_args = ServerArgs(**kwargs)", 118,
             env=(("ServerArgs", SERVER_ARGS), ("kwargs", ENGINE_KWARGS))),
)), primary=True)

# -- infiniflow/ragflow#10235: a RAG app's summarizing calls to a vLLM server, the prompt filling the context -----------

# The app logs the OpenAI client's exception in a record of its own; the body is vLLM's (SamplingParams._verify_args's
# message as the server's 400 reply).  The record's wording is ours; the numbers are the thread's.
VLLM_BODY = ("Error code: 400 - {'object': 'error', 'message': 'max_tokens must be at least 1, got -3197.', "
             "'type': 'BadRequestError', 'param': None, 'code': 400}")
RAPTOR_RECORDS = Text(
    "2025-09-18 14:20:02 INFO  raptor: summarizing cluster 3/10 with qwen2.5-72b-instruct (max context 32768)\n"
    f"2025-09-18 14:20:14 ERROR raptor: summarization failed\nopenai.BadRequestError: {VLLM_BODY}\n",
    primary=True)

CASES = (
    WildCase(thread="https://github.com/verl-project/verl/issues/2812", kind="dev-cat3-wrapper-engine-release", style="ray-prefixed",
             parts=(VERL_ROLLOUT,), engine_version="0.4.6.post5",
             expect=Expect("dependency-version", "TypeError",
                           "ServerArgs.__init__() got an unexpected keyword argument 'mm_attention_backend'", frame="__init__"),
             facts="verl's agentic RL example with SGLang installed by verl's install script: 'TypeError: ServerArgs.__init__() got an "
                   "unexpected keyword argument 'mm_attention_backend'' while the SGLang rollout started its engine, the user noting that "
                   "SGLang's main branch has that argument; the frames (verl's fsdp worker, the rollout's _init_inference_engine, SGLang's "
                   "Engine building ServerArgs), their line numbers, the release and the Ray prefix ours",
             resolution="Not confirmed in what was read (open). verl's rollout passes a setting a later SGLang release added: the "
                        "SGLang release verl's requirements name (or verl's release made for the installed SGLang) is needed.",
             paste=(paste.ray,)),
    WildCase(thread="https://github.com/infiniflow/ragflow/issues/10235", kind="dev-cat3-negative-output-budget", style="app-record",
             parts=(RAPTOR_RECORDS,), engine="vllm",
             expect=Expect("context-length", "openai.BadRequestError", VLLM_BODY),
             facts="RAGFlow's RAPTOR summarization against a vLLM server: the 400 reply 'max_tokens must be at least 1, got -3197.' "
                   "with type BadRequestError, repeated across a task; the record wording, the model name and the context size ours",
             resolution="The app computed max_tokens as the context length minus the prompt's tokens; the prompt alone filled the "
                        "context, so the budget was negative: a shorter input (smaller chunks) or a model with a longer context.",
             paste=(paste.fenced,)),
)
