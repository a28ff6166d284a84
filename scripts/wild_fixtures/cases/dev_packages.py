"""A dev split for failures raised in the code of a package the engine runs (issue 29 item 5: flashinfer, sgl-kernel,
xgrammar, transformers), which the raise site index now covers for the versions the engines pin.

Facts were mined from the threads each case cites (wordings, the command, the banner, the frames the paste shows);
the rest of each log (the frames' lines where the paste cut them, pids, clock) is ours, read from the release's own
source in the engine index's cache, and each `facts` says which.
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.cases.vllm import placed
from pattern_fixtures.mirror import failing_at, frame_at

from .. import paste
from ..corpus import Expect, Install, Run, WildCase
from ..vllm_blocks import uncaught

VLLM = "vllm"

# -- a checkpoint saved by transformers 5 (tokenizer_config.json names TokenizersBackend) under vLLM's transformers 4 ---

TOKENIZERS_BACKEND = "Tokenizer class TokenizersBackend does not exist or is not currently imported."
COPAW = "/root/CoPaw-Flash-9B/CoPaw-Flash-9B"
COPAW_COMMAND = (f"LD_LIBRARY_PATH=/root/miniforge3/envs/vllm/lib:/usr/local/cuda-12.1/lib64:$LD_LIBRARY_PATH vllm serve {COPAW}"
                 "     --port 8000     --tensor-parallel-size 1     --max-model-len 262144     --reasoning-parser qwen3"
                 "     --enable-auto-tool-choice     --tool-call-parser qwen3_xml  --trust_remote_code")
# vLLM 0.19.0's start-up records (vllm/entrypoints/utils.py's banner and non-default args, vllm/config/model.py)
COPAW_RECORDS = (
    ("INFO", "vllm/entrypoints/utils.py", 299,
     "\n       █     █     █▄   ▄█\n ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.0\n"
     f"  █▄█▀ █     █     █     █  model   {COPAW}\n   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀\n"),
    ("INFO", "vllm/entrypoints/utils.py", 233,
     f"non-default args: {{'model_tag': {COPAW!r}, 'enable_auto_tool_choice': True, 'tool_call_parser': 'qwen3_xml', "
     f"'model': {COPAW!r}, 'trust_remote_code': True, 'max_model_len': 262144, 'reasoning_parser': 'qwen3'}}"),
    ("INFO", "vllm/config/model.py", 549, "Resolved architecture: Qwen3_5ForConditionalGeneration"),
)
API = "vllm/entrypoints/openai/api_server.py"
ASYNC_LLM = "vllm/v1/engine/async_llm.py"
TOKENIZERS = "vllm/tokenizers/registry.py"
# vllm/tokenizers/hf.py HfTokenizer.from_pretrained (0.19.0), lines 84-110: with --trust-remote-code given, the
# ValueError is raised again as it was (`raise e`), so the traceback shows line 110 and then the call at 85.
HF_FROM_PRETRAINED = """
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            path_or_repo_id,
            *args,
            trust_remote_code=trust_remote_code,
            revision=revision,
            cache_dir=download_dir,
            **kwargs,
        )
    except ValueError as e:
        # the message names a tokenizer class transformers lacks, or code it may not run:
        # without --trust-remote-code the error says to give it,
        # with it the error is raised as it was
        if not trust_remote_code and (
            "does not exist or is not currently imported." in str(e)
            or "requires you to execute the tokenizer file" in str(e)
        ):
            err_msg = (
                "Failed to load the tokenizer. If the tokenizer "
                "is a custom tokenizer not yet available in the "
                "HuggingFace transformers library, consider "
                "setting `trust_remote_code=True` in LLM or using "
                "the `--trust-remote-code` flag in the CLI."
            )
            raise RuntimeError(err_msg) from e
        else:
            raise e
    """
TOKENIZERS_BACKEND_RUN = uncaught((
    frame_at("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)", 75, env=(("args", "HOP:dispatch_function"),)),
    frame_at("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))", 122,
             env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
    # run_server, build_async_engine_client, the asyncio frames and the context managers' __aenter__ between are left
    # out, as in the other vLLM cases
    placed(API, "build_async_engine_client_from_engine_args", 136, "async_llm = AsyncLLM.from_vllm_config(\n    vllm_config=vllm_config,\n)",
           env=(("AsyncLLM", "HOP:from_vllm_config"), ("vllm_config", "None"))),
    placed(ASYNC_LLM, "from_vllm_config", 225, "return cls(\n    vllm_config=vllm_config,\n)", env=(("cls", "NEXT"), ("vllm_config", "None"))),
    frame_at(ASYNC_LLM, "__init__", "self.renderer = renderer = renderer_from_config(self.vllm_config)", 135,
             env=(("renderer_from_config", "NEXT"), ("self", "NS(vllm_config=None)"))),
    frame_at("vllm/renderers/registry.py", "renderer_from_config", "tokenizer = cached_tokenizer_from_config(model_config, **kwargs)", 83,
             env=(("cached_tokenizer_from_config", "NEXT"), ("model_config", "None"), ("kwargs", "{}"))),
    placed(TOKENIZERS, "cached_tokenizer_from_config", 227, "return cached_get_tokenizer(\n    model_config.tokenizer,\n)",
           env=(("cached_get_tokenizer", "NEXT"), ("model_config", f"NS(tokenizer={COPAW!r})"))),
    frame_at(TOKENIZERS, "get_tokenizer", "tokenizer = tokenizer_cls_.from_pretrained(tokenizer_name, *args, **kwargs)", 210,
             env=(("tokenizer_cls_", "HOP:from_pretrained"), ("tokenizer_name", repr(COPAW)), ("args", "()"), ("kwargs", "{}"))),
    failing_at("vllm/tokenizers/hf.py", "from_pretrained", HF_FROM_PRETRAINED, 84, marker="try",
               env=(("AutoTokenizer", "HOP:from_pretrained"), ("path_or_repo_id", repr(COPAW)), ("args", "()"), ("kwargs", "{}"),
                    ("trust_remote_code", "True"), ("revision", "None"), ("download_dir", "None"))),
    failing_at("transformers/models/auto/tokenization_auto.py", "from_pretrained", """
        if tokenizer_class is None:
            raise ValueError(
                f"Tokenizer class {tokenizer_class_candidate} does not exist or is not currently imported."
            )
        """, 1153, env=(("tokenizer_class", "None"), ("tokenizer_class_candidate", "'TokenizersBackend'"))),
), "v1", "APIServer", 8919, "2026-04-08 05:31:30", COPAW_RECORDS)

CASES: tuple[WildCase, ...] = (
    WildCase(thread="https://github.com/agentscope-ai/QwenPaw/issues/3084", kind="transformers-tokenizer-class-missing", style="command-then-log",
             parts=(Run(TOKENIZERS_BACKEND_RUN, primary=True),), engine_version="0.19.0", engine=VLLM,
             install=Install("/root/miniforge3/envs/vllm/lib/python3.11/site-packages"),
             expect=Expect("tokenizer", "ValueError", TOKENIZERS_BACKEND, frame="from_pretrained"),
             facts="the command (LD_LIBRARY_PATH=... vllm serve <path> with --trust_remote_code), vLLM 0.19.0's banner, non-default args "
                   "and resolved architecture (Qwen3_5ForConditionalGeneration), the ValueError naming TokenizersBackend, the "
                   "(APIServer pid=8919) prefix; the frames between the API server and transformers are 0.19.0's own lines, and "
                   "transformers' tokenization_auto.py 1153 is 4.57.6's (the last 4.x, which 0.19.0's `transformers<5` installs), "
                   "as mlx-lm#683's paste shows it: ours",
             resolution="Not resolved in the thread. The checkpoint was saved by transformers 5, whose tokenizer_config.json names "
                        "TokenizersBackend, a class transformers 4 lacks (gpustack#5096, LlamaFactory#10310: the same with vLLM's "
                        "transformers<5); the original model's tokenizer files, or a vLLM release that installs transformers 5, load it.",
             paste=(partial(paste.prose, before=f"(vllm) root@fdf:~/CoPaw-Flash-9B# {COPAW_COMMAND}"),)),
)
