"""Stop 39's dev split for issue 28's advice (branch h-advice5): classes a blind split filed under the wrong
category or answered with advice that did not help.  A kernel package's loader that finds no CUDA toolkit (sgl-kernel's
preload of the CUDA runtime: the toolkit row, not the subsystem of the module that imported it); the server's JSON
error body as a client printed it, escaped as bytes or spread over lines (its message names the category, not its
type alone); a port every data-parallel rank of one server binds (the KV-events publisher's endpoint), which collides
with the server's own rank, not with another program.

Facts were mined from even-numbered threads (the message wording, the frames they showed, the release, the
resolution); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import SCHEDULER, failing_at, frame_at, to_model_runner

from .. import paste
from ..blocks import crash, plain
from ..corpus import Expect, Run, Text, WildCase
from .dev_detect import top
from .ports import KV_EVENTS_ADDR, ZMQ, zmq_bind

# -- sgl-project/sglang#13089: sgl-kernel's import preloads the CUDA runtime from the toolkit's lib directory ----------

# sgl-kernel 0.3.x sgl_kernel/__init__.py _preload_cuda_library raises when neither CUDA_HOME/lib nor lib64 exists (a
# runtime image without the toolkit); SGLang's FP8 kernel module imports sgl_kernel at start-up.
NO_CUDA_LIB_DIR = "Could not find CUDA lib directory."
SGL_KERNEL_IMPORT = Run(plain((
    top("sglang/srt/layers/quantization/fp8_kernel.py", "_import_kernels", "_preload_cuda_library()", 40,
        env=(("_preload_cuda_library", "NEXT"),)),
    failing_at("sgl_kernel/__init__.py", "_preload_cuda_library", f"""
        if not (cuda_home / "lib64").is_dir():
            raise RuntimeError({NO_CUDA_LIB_DIR!r})
        """, 217, env=(("cuda_home", "__import__('pathlib').Path('/nonexistent/cuda')"),)),
)), primary=True)

# -- sgl-project/sglang#8096: a request longer than the context, answered with SGLang's error body ---------------------

# SGLang's tokenizer manager refuses an input longer than the context ("The input ({n} tokens) is longer than the
# model's context length ({m} tokens)."; the numbers are the thread's); over HTTP the server answers with its
# ErrorResponse body (object, message, type, param, code).  A client's logger printing the bytes it received (the
# apostrophe escaped by the bytes repr), and a client printing the body indented: both paste styles ours.
TOO_LONG = "The input (85050 tokens) is longer than the model's context length (32768 tokens)."
BODY_JSON = ('{"object":"error","message":"' + TOO_LONG + '","type":"BadRequestError","param":null,"code":400}')
BYTES_RECORD = Text(
    "2025-07-16 09:12:40,118 INFO bench: sending 64 requests to http://127.0.0.1:30000/v1/chat/completions\n"
    "2025-07-16 09:12:41,502 ERROR bench: request 17 failed with status 400: "
    + repr(BODY_JSON.encode()) + "\n", primary=True)
INDENTED_BODY = Text(
    "$ curl -s http://127.0.0.1:30000/v1/chat/completions -H 'Content-Type: application/json' -d @long_prompt.json | jq\n"
    "{\n"
    '  "object": "error",\n'
    f'  "message": "{TOO_LONG}",\n'
    '  "type": "BadRequestError",\n'
    '  "param": null,\n'
    '  "code": 400\n'
    "}\n", primary=True)
TOO_LONG_FACTS = ("SGLang refusing an input of 85050 tokens against a context length of 32768 ('The input (85050 tokens) is longer than "
                  "the model's context length (32768 tokens).', the thread's numbers; there raised as ValueError by the offline "
                  "Engine); ")
TOO_LONG_RESOLUTION = ("The request is longer than the server's context length: shorten the input (or truncate it), or start the server "
                       "with a longer --context-length where the model's max_position_embeddings (or its rope scaling) allows.")

# -- sgl-project/sglang PR#29211: pure data parallelism with KV events, every DP rank on the same publisher port ---------

# The publisher offsets its endpoint's port by the attention-DP rank, 0 for every rank without --enable-dp-attention:
# the second DP rank's bind finds the port its sibling holds.  The launch line (the PR's --dp-size N with
# --kv-events-config) and the frames (as ai-dynamo/dynamo#4121's, a rank of the same scheduler) are ours.
DP_LAUNCH = Text("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --dp-size 2 --port 30000 "
                 f"""--kv-events-config '{{"publisher": "zmq", "endpoint": "{KV_EVENTS_ADDR}", "topic": "kv-events"}}'\n""")
DP_KV_EVENTS = crash((
    *to_model_runner("0.5.23")[:1],
    frame_at(SCHEDULER, "__init__", "self.init_kv_events(server_args.kv_events_config)", 611),
    frame_at(SCHEDULER, "init_kv_events", "self.kv_event_publisher = EventPublisherFactory.create(kv_events_config, self.attn_dp_rank)", 1108),
    frame_at("sglang/srt/disaggregation/kv_events.py", "create", "return publisher_cls(attn_dp_rank=attn_dp_rank, **config_dict)", 360,
             env=(("publisher_cls", "NEXT"), ("config_dict", "{}"))),
    frame_at("sglang/srt/disaggregation/kv_events.py", "__init__", "self._pub.bind(self._endpoint)", 172, env=(("self", "HOP:bind"),)),
    zmq_bind(311),
), ranks="DP1 TP0", before=("Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB, mem usage=16.40 GB.",),
   torch_error=("zmq.error.ZMQError", f"Address already in use (addr='{KV_EVENTS_ADDR}')"), extra_modules=ZMQ, stamp="2026-06-20 10:00:05")

CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/pull/13089", kind="dev-advice5-cuda-lib-dir", style="fenced",
             parts=(SGL_KERNEL_IMPORT,), engine_version="0.5.3",
             expect=Expect("dependency-version", "RuntimeError", NO_CUDA_LIB_DIR, frame="_preload_cuda_library"),
             facts="importing sgl_kernel on a machine whose image has the CUDA runtime and driver but no CUDA toolkit: "
                   "sgl_kernel/__init__.py line 217 raising RuntimeError('Could not find CUDA lib directory.'); the SGLang module "
                   "that imports it (the FP8 kernel module), its line and the release ours",
             resolution="The CUDA toolkit's lib directory is absent (a runtime, not devel, image): install the toolkit that matches "
                        "torch's CUDA or set CUDA_HOME to it, or use the engine's image; a later sgl-kernel only tries the preload "
                        "(the PR relaxing the check).",
             paste=(paste.fenced,)),
    *(WildCase(thread="https://github.com/sgl-project/sglang/issues/8096", kind=f"dev-advice5-error-body-{kind}", style=style,
               parts=(part,), engine_version="0.4.9",
               # a JSON body, no `Type: message` line (README: no exception fields; the category is what is expected)
               expect=Expect("context-length"), facts=TOO_LONG_FACTS + shape, resolution=TOO_LONG_RESOLUTION, paste=(paste.fenced,))
      for kind, style, part, shape in (
          ("escaped", "bytes-record", BYTES_RECORD, "the server's JSON body printed as the bytes a client's logger received, the "
                                                   "records and the benchmark client ours (paste style ours)"),
          ("indented", "jq-indented", INDENTED_BODY, "the server's JSON body as curl piped through jq prints it, one member a line; "
                                                     "the command ours (paste style ours)"))),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/29211", kind="dev-advice5-dp-ranks-one-port", style="launch-then-rank",
             parts=(DP_LAUNCH, Run(DP_KV_EVENTS, primary=True)), engine_version="0.5.23",
             expect=Expect("port-in-use", "zmq.error.ZMQError", f"Address already in use (addr='{KV_EVENTS_ADDR}')", frame="bind"),
             facts="--dp-size N without --enable-dp-attention and --kv-events-config binding tcp://*:PORT: the second DP worker dies at "
                   "start-up with zmq.error.ZMQError: Address already in use, every publisher offsetting its port by the attention-DP "
                   "rank (0 for all); the launch line, the model, the port 5557, the frames and their lines ours",
             resolution="An engine bug: every DP rank derived the same publisher port; the PR offsets it by the DP rank. Until then, one DP "
                        "rank per server, or no KV events with pure DP.",
             paste=(paste.fenced,)),
)
