"""Launch arguments: flags argparse rejects (unknown, ambiguous, a value not among the choices) and
ServerArgs' own checks (LoRA next to CUDA graphs and radix cache, speculative sizes given in part).
"""

from __future__ import annotations

import textwrap
from functools import partial

from pattern_fixtures.cases.runtime_env import LORA_0_3_CHECK
from pattern_fixtures.mirror import LAUNCH_SERVER, SERVER_ARGS, failing_at, frame_at, server_args_chain

from .. import composed, paste
from ..blocks import argparse_case, launch, module_at
from ..corpus import Expect, Install, Run, Text, WildCase

# SGLang's first launch options, as each era's usage block lists them (a version fingerprint)
PARSER_0_4_3 = textwrap.dedent("""
    parser.add_argument("--model-path", type=str, required=True)
    parser.add_argument("--tokenizer-path", type=str)
    parser.add_argument("--host", type=str, default="127.0.0.1")
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--tokenizer-mode", type=str, choices=["auto", "slow"])
    parser.add_argument("--skip-tokenizer-init", action="store_true")
    parser.add_argument("--load-format", type=str, choices=["auto", "pt", "safetensors", "npcache", "dummy", "gguf", "bitsandbytes", "layered"])
    parser.add_argument("--trust-remote-code", action="store_true")
    parser.add_argument("--dtype", type=str, choices=["auto", "half", "float16", "bfloat16", "float", "float32"])
    parser.add_argument("--kv-cache-dtype", type=str, choices=["auto", "fp8_e5m2", "fp8_e4m3"])
    parser.add_argument("--quantization", type=str, choices=["awq", "fp8", "gptq", "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf", "modelopt", "w8a8_int8"])
    parser.add_argument("--context-length", type=int)
    parser.add_argument("--device", type=str, choices=["cuda", "xpu", "hpu", "cpu"])
    parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--mem-fraction-static", type=float)
""")
PARSER_0_4_4 = PARSER_0_4_3.replace('"layered"]', '"sharded_state", "layered", "remote"]').replace('"w8a8_int8"]', '"w8a8_int8", "w8a8_fp8"]') + textwrap.dedent("""
    parser.add_argument("--enable-metrics", action="store_true")
""")
PARSER_0_5_5 = PARSER_0_4_4 + textwrap.dedent("""
    parser.add_argument("--disable-radix-cache", action="store_true")
    parser.add_argument("--tool-call-parser", type=str, choices=["deepseekv3", "glm", "gpt-oss", "kimi_k2", "llama3", "mistral", "pythonic", "qwen", "qwen25"])
    parser.add_argument("--reasoning-parser", type=str, choices=["deepseek-r1", "deepseek-v3", "glm45", "gpt-oss", "kimi", "kimi_k2", "minimax", "qwen3", "step3"])
""")
PARSER_MODEL_LOADER = textwrap.dedent("""
    parser.add_argument("--model-path", type=str, required=True)
    parser.add_argument("--model-loader-extra-config", type=str, default="{}")
    parser.add_argument("--tokenizer-path", type=str)
    parser.add_argument("--port", type=int, default=30000)
""")
PARSER_MM = PARSER_0_5_5 + textwrap.dedent("""
    parser.add_argument("--mm-attention-backend", type=str, choices=["sdpa", "fa3", "triton_attn", "ascend_attn"])
""")
ATTENTION_BACKENDS = ["triton", "torch_native", "flex_attention", "nsa", "cutlass_mla", "fa3", "fa4", "flashinfer", "flashmla", "trtllm_mla",
                      "trtllm_mha", "dual_chunk_flash_attn", "aiter", "wave", "intel_amx", "ascend", "intel_xpu"]
PARSER_SERVE = 'parser.prog = "sglang"\n' + PARSER_0_5_5 + f'parser.add_argument("--attention-backend", type=str, choices={ATTENTION_BACKENDS!r})\n'
PARSER_0_4_10 = PARSER_0_5_5 + 'parser.add_argument("--lora-paths", type=str, nargs="*")\nparser.add_argument("--max-loras-per-batch", type=int, default=8)\n'

KIMI = ("--model-path", "/moonshotai/Kimi-K2-Thinking", "--tp-size", "8", "--disable-radix-cache", "--trust-remote-code",
        "--tool-call-parser", "kimi_k2", "--reasoning_parser", "kimi_k2", "--context-length", "262144")
KIMI_COMMAND = "python -m sglang.launch_server --model-path /moonshotai/Kimi-K2-Thinking --tp 8 --disable-radix-cache --trust-remote-code --tool-call-parser kimi_k2 --reasoning_parser kimi_k2 --context-length 262144"
KIMI_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/12818", kind="argparse-unrecognized-argument", engine_version="0.5.5",
    resolution="Maintainer: the flag is --reasoning-parser (dashes).",
)
KIMI_EXPECT = Expect("unknown-flag", "UsageError", "unrecognized arguments: --reasoning_parser kimi_k2", fix=(("rename --reasoning_parser",),))

MM_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/pull/10835", kind="argparse-invalid-choice", engine_version="0.5.3",
    resolution="Use a listed choice: --mm-attention-backend triton_attn (the PR renaming it to triton was closed).",
)
MM_EXPECT = Expect("invalid-flag-value", "UsageError",
                   "argument --mm-attention-backend: invalid choice: 'triton' (choose from 'sdpa', 'fa3', 'triton_attn', 'ascend_attn')",
                   fix=(("set --mm-attention-backend",),))

# -- ServerArgs' own checks ----------------------------------------------------------------------------------------------------

LORA_0_3 = launch((
    module_at(LAUNCH_SERVER, """
        try:
            launch_server(server_args)
        except Exception as e:
            raise e
        finally:
            kill_child_process(os.getpid(), including_parent=False)
        """, 16, env=(("launch_server", "NEXT"), ("server_args", "None"), ("kill_child_process", "lambda *a, **k: None")), marker="    raise"),
    frame_at("sglang/srt/server.py", "launch_server", "server_args.check_server_args()", 383, env=(("server_args", "HOP:check_server_args"),)),
    failing_at(SERVER_ARGS, "check_server_args", LORA_0_3_CHECK, 745, env=(("self", "NS(max_loras_per_batch=8, lora_paths=['sql=/data/lora/sql', 'chat=/data/lora/chat'], disable_cuda_graph=False, disable_radix_cache=False)"),),
        marker="assert"),
))
LORA_EXPECT = Expect("lora-config", "AssertionError", "compatibility of lora and cuda graph and radix attention is in progress", frame="check_server_args",
                     fix=(("add --disable-radix-cache", "add --disable-cuda-graph"),))
LORA_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/1921", kind="lora-needs-radix-cache-and-cuda-graph-disabled", engine_version="0.3.4",
    install=Install("/root/miniconda3/envs/sglang/lib/python3.11/site-packages"),
    resolution="Closed as inactive and retitled a feature request; that era's workaround: --disable-radix-cache --disable-cuda-graph with --lora-paths.",
)

SPEC_CHECK = """
    if self.speculative_num_steps is None:
        self.speculative_num_steps, self.speculative_eagle_topk, self.speculative_num_draft_tokens = auto_choose_speculative_params(self)
    if self.speculative_eagle_topk > 1 and self.page_size > 1 and self.attention_backend != "flashinfer":
        raise ValueError("speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for paged attention backends.")
    """


def partial_spec(version: str, line: int) -> Run:
    """ServerArgs handling speculative decoding with only --speculative-num-steps given."""
    chain = server_args_chain(version, "_handle_speculative_decoding")
    failing = failing_at(SERVER_ARGS, "_handle_speculative_decoding", SPEC_CHECK, line,
                         env=(("self", "NS(speculative_num_steps=1, speculative_eagle_topk=None, speculative_num_draft_tokens=None, page_size=1, attention_backend='fa3')"),
                              ("auto_choose_speculative_params", "None")), marker="if self.speculative_eagle_topk")
    return Run(launch((*chain, failing)), primary=True)


NONE_GT_INT = "'>' not supported between instances of 'NoneType' and 'int'"
# Top-k alone also passes: run on the real 0.4.10.post2 / 0.5.9 / 0.5.23, steps with top-k 1 and no draft
# tokens validates, and SGLang sets the draft tokens to steps + 1 itself (scripts/oracle/cases.toml).
SPEC_FIX = (("add --speculative-eagle-topk", "add --speculative-num-draft-tokens"), ("add --speculative-eagle-topk",),
            ("remove --speculative-num-steps",))
REPRO = ("```bash\nSGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server \\\n  --model-path Qwen/Qwen3.5-27B \\\n  --speculative-algorithm NEXTN \\\n"
         "  --speculative-num-steps 1 \\\n  --mamba-scheduler-strategy extra_buffer\n```")
GPUSTACK = ("2025-11-20 16:02:09.114205+08:00 - gpustack.worker.backends.base - INFO - Preparing model files...\n"
            "2025-11-20 16:02:09.118331+08:00 - gpustack.worker.backends.base - INFO - Model files are ready.\n"
            "2025-11-20 16:02:09.502918+08:00 - gpustack.worker.serve_manager - INFO - Provisioning model instance qwen3-8b-2k6vf\n"
            "2025-11-20 16:02:10.001736+08:00 - gpustack.worker.backends.sglang - INFO - Starting SGLang model instance: qwen3-8b-2k6vf\n"
            "2025-11-20 16:02:10.207719+08:00 - gpustack.utils.hub - DEBUG - Derived max model length: 40960\n")

MULTI_LAYER = Run(launch((*server_args_chain("0.5.23"), failing_at("sglang/srt/arg_groups/speculative_hook.py", "check_speculative_args", """
    if cfg.enable_multi_layer_eagle:
        assert cfg.speculative_num_draft_tokens == cfg.speculative_num_steps + 1, (
            "multi-layer EAGLE requires speculative_num_draft_tokens == speculative_num_steps + 1, "
            f"got {cfg.speculative_num_draft_tokens} and {cfg.speculative_num_steps}"
        )
    """, 141, env=(("cfg", "NS(enable_multi_layer_eagle=True, speculative_num_draft_tokens=8, speculative_num_steps=5)"),), marker="assert"))), primary=True)

CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/issues/4116", kind="argparse-unrecognized-argument", style="platform-line-usage",
             parts=(Text(composed.vllm_platform("03-06 10:05:08")),
                    Run(argparse_case(PARSER_0_4_3, ("--model-path", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "--tp-size", "2", "--enable-reasoning")), primary=True)),
             engine_version="0.4.3",
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: --enable-reasoning", fix=(("remove --enable-reasoning",), ("rename --enable-reasoning",))),
             facts="vLLM's platform line first (SGLang imported vLLM then), the usage block of that era's flags, '--enable-reasoning' (a vLLM flag) rejected, raw text after a lead-in",
             resolution="SGLang has no --enable-reasoning; --reasoning-parser is the SGLang way, but 0.4.3 did not have it either (a commenter hit that).",
             paste=(partial(paste.prose, before="the error:"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/5032", kind="argparse-unrecognized-argument", style="usage-raw",
             parts=(Text(composed.vllm_platform("04-03 17:50:56")),
                    Run(argparse_case(PARSER_0_4_4, ("--model-path", "Qwen/Qwen2.5-7B-Instruct", "--enable_metrics")), primary=True)),
             engine_version="0.4.4",
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: --enable_metrics", fix=(("rename --enable_metrics",),)),
             facts="the usage block of 0.4.4 (sharded_state/remote load formats, w8a8_fp8), '--enable_metrics' with an underscore, the platform line; raw under 'Describe the bug'",
             resolution="Not visible; the flag is --enable-metrics (argparse does not map _ to -).",
             paste=(partial(paste.prose, before="### Describe the bug"),)),
    WildCase(**KIMI_THREAD, style="command-inline-last-line", parts=(Run(argparse_case(PARSER_0_5_5, KIMI), primary=True),), expect=KIMI_EXPECT,
             facts="the command (one inline span with stray spaces), only the last argparse line pasted as prose, --tool-call-parser next to --reasoning_parser",
             paste=(partial(paste.last_lines, count=1), partial(paste.prose, before=f"Launching with ` {KIMI_COMMAND}` on 0.5.5:"))),
    WildCase(**KIMI_THREAD, style="usage-fenced", parts=(Run(argparse_case(PARSER_0_5_5, KIMI), primary=True),), expect=KIMI_EXPECT,
             facts="the same rejection with the usage block; paste style ours", paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/7505", kind="argparse-ambiguous-option", style="last-line-fenced",
             parts=(Run(argparse_case(PARSER_MODEL_LOADER, ("--model", "Qwen/Qwen2.5-0.5B-Instruct", "--port", "30010")), primary=True),),
             engine_version="0.4.8",
             expect=Expect("unknown-flag", "UsageError", "ambiguous option: --model could match --model-path, --model-loader-extra-config", fix=(("rename --model",),)),
             facts="argparse's ambiguous-prefix wording after --model-loader-extra-config landed, the single line in a fence",
             resolution="Use --model-path; PR #7505 (merged) added --model as an explicit alias.", fixed_in="https://github.com/sgl-project/sglang/pull/7505",
             paste=(partial(paste.last_lines, count=1), paste.fenced)),
    WildCase(**MM_THREAD, style="quote", parts=(Run(argparse_case(PARSER_MM, ("--model-path", "Qwen/Qwen2.5-VL-7B-Instruct", "--mm-attention-backend", "triton")), primary=True),),
             expect=MM_EXPECT, facts="the invalid-choice wording with its choices list, quoted as one line without the usage block",
             paste=(partial(paste.last_lines, count=1), paste.quote)),
    WildCase(**MM_THREAD, style="usage-fenced", parts=(Run(argparse_case(PARSER_MM, ("--model-path", "Qwen/Qwen2.5-VL-7B-Instruct", "--mm-attention-backend", "triton")), primary=True),),
             expect=MM_EXPECT, facts="as above with the usage block; paste style ours", paste=(paste.fenced,)),
    WildCase(thread="https://github.com/intel/llm-scaler/issues/403", kind="argparse-invalid-choice", style="sglang-serve",
             parts=(Run(argparse_case(PARSER_SERVE, ("--model-path", "Qwen/Qwen-Image", "--attention-backend", "torch_sdpa")), primary=True),),
             engine_version="",
             expect=Expect("invalid-flag-value", "UsageError",
                           f"argument --attention-backend: invalid choice: 'torch_sdpa' (choose from {', '.join(repr(b) for b in ATTENTION_BACKENDS)})",
                           fix=(("set --attention-backend",),)),
             facts="the prog 'sglang' (sglang serve) and the attention-backend choices list; torch_sdpa is a diffusion-side name",
             resolution="Not recorded; pick a listed backend.", paste=(partial(paste.last_lines, count=1), paste.fenced)),
    WildCase(thread="https://github.com/areal-project/AReaL/pull/428", kind="argparse-unrecognized-argument", style="quoted-in-prose",
             parts=(Run(argparse_case(PARSER_0_5_5, ("--model-path", "/storage/models/Qwen2.5-1.5B-Instruct", "--max-loaded-loras", "1")), primary=True),),
             engine_version="0.4.9",
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: --max-loaded-loras 1", fix=((), ("remove --max-loaded-loras",))),
             facts="AReaL launching SGLang with --max-loaded-loras 1, which that SGLang did not have; fixed by upgrading SGLang",
             resolution="The PR author: after updating SGLang it worked (--max-loaded-loras arrived in SGLang PR #8650).",
             paste=(partial(paste.last_lines, count=1),
                    partial(paste.quoted_in_prose, lead="When I run the gsm8k GRPO example with the local launcher, it occurs that ", tail=", after I update the version of SGLang it is fixed."))),

    WildCase(**LORA_THREAD, style="raw-under-heading", parts=(Run(LORA_0_3, primary=True),), expect=LORA_EXPECT,
             facts="the re-raise in launch_server.py (line 16 'raise e' printed before line 14), server.py launch_server, conda paths, the assert's wording from the 0.3 source; raw under 'Describe the bug'",
             paste=(partial(paste.prose, before="### Describe the bug\n\nStarting with two --lora-paths adapters:"),)),
    WildCase(**LORA_THREAD, style="fence-glued", parts=(Run(LORA_0_3, primary=True),), expect=LORA_EXPECT,
             facts="as above; paste style ours (the closing fence on the last line)", paste=(paste.fence_glued,)),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/22895", kind="eagle-partial-spec-args", style="bare-line-repro",
             parts=(partial_spec("0.5.9", 2461),), engine_version="0.5.10",
             expect=Expect("spec-decoding-args", "TypeError", NONE_GT_INT, fix=SPEC_FIX),
             facts="the TypeError as a bare line, the repro command with SGLANG_ENABLE_SPEC_V2=1 and only --speculative-num-steps 1 for NEXTN; the check's line is ours",
             resolution="Give all three sizes (e.g. --speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2); the PR defaulting them was closed.",
             paste=(partial(paste.exception_only, marker="TypeError"), partial(paste.prose, before="Startup fails with", after=f"Repro:\n\n{REPRO}"))),
    WildCase(thread="https://github.com/gpustack/gpustack/issues/3392", kind="eagle-partial-spec-args", style="details-gpustack",
             parts=(Text(GPUSTACK), partial_spec("0.5.9", 2461)), engine_version="0.5.5",
             expect=Expect("spec-decoding-args", "TypeError", NONE_GT_INT, frame="_handle_speculative_decoding"),
             facts="GPUStack's worker log lines, the <details> block, SGLang 0.5.5 with speculative decoding switched on and 'speculative_eagle_topk is None' in the title; the traceback is ours",
             resolution="None visible (open).", paste=(paste.fenced, partial(paste.details, summary="Logs of model instances"))),
    WildCase(thread="https://github.com/gpustack/gpustack/issues/3392", kind="eagle-partial-spec-args", style="gpustack-logger",
             parts=(partial_spec("0.5.9", 2461),), engine_version="0.5.5",
             expect=Expect("spec-decoding-args", "TypeError", NONE_GT_INT, frame="_handle_speculative_decoding"),
             facts="as above, every line re-logged by GPUStack's sglang backend logger",
             resolution="None visible (open).", paste=(paste.gpustack_logger, paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/36536", kind="multi-layer-eagle-draft-tokens", style="bold",
             parts=(MULTI_LAYER,), engine_version="0.5.23",
             expect=Expect("spec-decoding-args", "AssertionError",
                           "multi-layer EAGLE requires speculative_num_draft_tokens == speculative_num_steps + 1, got 8 and 5",
                           fix=(("set --speculative-num-draft-tokens",), ("set --speculative-num-steps",))),
             facts="the assert wording (got 8 and 5); the hook's place is ours",
             resolution="Not recorded; the check asks for draft tokens = steps + 1.",
             paste=(partial(paste.exception_only, marker="AssertionError"), paste.bold)),
)
