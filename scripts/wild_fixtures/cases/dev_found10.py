"""Stop 42's found/exception classes (branch h-found10), as the pastes of two even-numbered threads show them: a
container whose image lacks the engine's program (runc's `exec: "vllm": executable file not found in $PATH`), and a
wrapper's ERROR record of CPython's own TypeError message with its type lost (Xinference logging str(exc)).

Facts were mined from even-numbered threads; what a thread did not show is ours, and each `facts` says which."""

from __future__ import annotations

from ..corpus import Expect, Text, WildCase

VLLM = "vllm"

# runc refusing to start the container's command: the image holds no `vllm` program (vllm-project/production-stack#454:
# the standalone tutorial's image, fixed by another image tag).  containerd's and docker's words around runc's are ours.
EXEC_NOT_FOUND_454 = Text(
    "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
    "unable to start container process: error during container init: exec: \"vllm\": executable file not found in $PATH: "
    "unknown\n", primary=True)

# Xinference's record of the engine's refusal, str(exc) under its own logger with its wrapper tag first
# (xorbitsai/inference#884: vLLM's AsyncEngineArgs refusing a keyword Xinference passed it); the record's time, pid,
# address and the keyword ours.
KEYWORD_MESSAGE = "AsyncEngineArgs.__init__() got an unexpected keyword argument 'max_model_length'"
WRAPPER_RECORD_884 = Text(
    "2024-01-10 08:48:45,250 xinference.model.llm.vllm.core 253 INFO     Loading qwen-chat with following model config: "
    "{'tokenizer_mode': 'auto', 'trust_remote_code': True, 'tensor_parallel_size': 1, 'max_model_length': 8192}\n"
    f"2024-01-10 08:48:45,251 xinference.core.worker 60 ERROR    [address=0.0.0.0:41437, pid=253] {KEYWORD_MESSAGE}\n",
    primary=True)

CASES = (
    WildCase(thread="https://github.com/vllm-project/production-stack/issues/454", kind="dev-engine-program-not-in-image",
             style="runc-exec-not-found", parts=(EXEC_NOT_FOUND_454,), engine_version="0.8.5", engine=VLLM,
             expect=Expect("dependency-version"),  # a container runtime's line, no exception (README: no exception fields)
             facts="the tutorial's vLLM image failing to start: runc's 'exec: \"vllm\": executable file not found in $PATH: "
                   "unknown' (the thread's title); containerd's words before it and the release ours",
             resolution="Maintainers: an image tag whose image holds vLLM's program (the thread's fix: another tag)."),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/884", kind="dev-cpython-message-without-type",
             style="xinference-error-record", parts=(WRAPPER_RECORD_884,), engine_version="0.2.7", engine=VLLM,
             # printed without its exception type (README: no exception fields); tests/test_fatal_output_found10.py
             # holds the type inferred from the message
             expect=Expect("dependency-version"),
             facts="Xinference loading a model with vLLM, its worker logging 'AsyncEngineArgs.__init__() got an unexpected "
                   "keyword argument …' under its own logger (the thread's shape); the keyword, the config and the record's "
                   "fields ours, the release ours (vLLM of the thread's date)",
             resolution="Fixed in Xinference: it no longer passes vLLM a keyword AsyncEngineArgs lacks (upgrade Xinference, or "
                        "the vLLM release it supports)."),
)
