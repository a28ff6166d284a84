"""Stop 38's dev split for the shapes a fresh blind split still missed (branch h-found3): fatal lines of the programs
around an engine with no Python exception type of their own (pydantic's `Value error, …` line without its
ValidationError header, the NVIDIA container toolkit refusing a container), a wrapper's version check of the engine,
a panic of SGLang's Rust router, and a healthy paste whose look-alikes must stay no failure (access-log lines with a
404, a container start, torch's shutdown warning after Ctrl+C).

Facts were mined from even-numbered threads (the wordings, the formats, the releases); what a thread did not show is
ours, and each `facts` says which.  Every line is composed from the printing program's format (pydantic-core's
display, libnvidia-container's requirement check, transformers' require_version, Rust's panic hook, vLLM's and
uvicorn's records)."""

from __future__ import annotations

from .. import paste
from ..corpus import Expect, Text, WildCase

# vLLM's config classes are pydantic dataclasses: a check in one of them raises ValueError, which pydantic reports as
# "Value error, {error}" + " [type=value_error, input_value=…, input_type=ArgsKwargs]" under its header "1 validation
# error for <class>" (pydantic-core's display); the paste kept only that line and pydantic's link.
SCHEDULED = "max_num_scheduled_tokens is set to -1792, which does not allow any tokens to be scheduled"
VALUE_LINE_50708 = Text(
    f"  Value error, {SCHEDULED} [type=value_error, input_value=ArgsKwargs((), {{'runner_type': 'generate', "
    "'max_num_batched_tokens': 2048, 'max_num_seqs': 256}), input_type=ArgsKwargs]\n"
    "    For further information visit https://errors.pydantic.dev/2.12/v/value_error\n",
    primary=True)

# transformers/utils/versions.py _compare_versions through LLaMA-Factory's check_version: the requirement, the version
# found, and the hint on the message's second line (require_version appends "\n" + hint; hiyouga/LlamaFactory#7428
# names DISABLE_VERSION_CHECK in it).
VERSION_CHECK = "vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, but found vllm==0.8.1."
VERSION_HINT = "To fix: run `pip install vllm>=0.4.3,<=0.7.3` or set `DISABLE_VERSION_CHECK=1` to skip this check."
VERSION_CHECK_7428 = Text(f"ImportError: {VERSION_CHECK}\n{VERSION_HINT}\n", primary=True)

# docker 24+ with the NVIDIA container toolkit's legacy mode: runc's hook error, then nvidia-container-cli's own line
# (the requirement check's wording: NVIDIA/nvidia-container-toolkit#152; the two-line layout after "Auto-detected mode
# as 'legacy'": MauriceNino/dashdot#1226).
REQUIREMENT = ("requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an "
               "earlier cuda container")
TOOLKIT_152 = Text(
    "$ docker run --runtime nvidia --gpus all -p 8000:8000 --ipc=host vllm/vllm-openai:v0.9.2 --model Qwen/Qwen2.5-7B-Instruct\n"
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create "
    "failed: runc create failed: unable to start container process: error during container init: error running prestart hook #0: "
    "exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    f"nvidia-container-cli: {REQUIREMENT}: unknown.\n",
    primary=True)

# sgl-router's records (`[Router (Rust)] <date> - LEVEL - …`, the format of sgl-project/sglang#4562) before Rust's panic
# hook (`thread '…' panicked at <file>:<line>:<col>:` + the payload, Rust 1.73+); #7028's panic names only src/router.rs.
ROUTER_7028 = Text(
    "[Router (Rust)] 2025-06-10 08:14:02 - WARN - Generate request to http://10.1.0.7:30000 failed (attempt 3/3)\n"
    "[Router (Rust)] 2025-06-10 08:14:02 - WARN - Removing failed worker: http://10.1.0.7:30000\n"
    "[Router (Rust)] 2025-06-10 08:14:02 - INFO - Removed worker: http://10.1.0.7:30000\n"
    "thread 'actix-rt|system:0|arbiter:12' panicked at src/router.rs:463:40:\n"
    "called `Result::unwrap()` on an `Err` value: \"No available workers\"\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
    primary=True)

# vLLM served from its image, requests answered (uvicorn's access lines, one of them a 404), then Ctrl+C: the server
# shuts down and torch warns that the process group was not destroyed (vllm-project/vllm#19196: the warning after
# Ctrl+C on `vllm serve`, "harmless").
HEALTHY_19196 = Text(
    "$ docker run --runtime nvidia --gpus all -p 8000:8000 --ipc=host vllm/vllm-openai:v0.9.0 --model Qwen/Qwen2.5-7B-Instruct\n"
    "INFO 06-04 11:10:02 [api_server.py:1287] vLLM API server version 0.9.0\n"
    "INFO 06-04 11:10:41 [gpu_model_runner.py:1531] Model loading took 14.25 GiB and 31.2 seconds\n"
    "INFO 06-04 11:11:05 [api_server.py:1336] Starting vLLM API server 0 on http://0.0.0.0:8000\n"
    "INFO:     Started server process [1]\n"
    "INFO:     Waiting for application startup.\n"
    "INFO:     Application startup complete.\n"
    "INFO:     172.17.0.1:50412 - \"GET /v1/models HTTP/1.1\" 200 OK\n"
    "INFO:     172.17.0.1:50418 - \"GET /v1/chat HTTP/1.1\" 404 Not Found\n"
    "INFO:     172.17.0.1:50420 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
    "^CINFO 06-04 11:18:57 [launcher.py:80] Shutting down FastAPI HTTP server.\n"
    "[rank0]:[W604 11:18:57.117195760 ProcessGroupNCCL.cpp:1476] Warning: WARNING: destroy_process_group() was not called before "
    "program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown "
    "(function operator())\n"
    "INFO:     Shutting down\n"
    "INFO:     Waiting for application shutdown.\n"
    "INFO:     Application shutdown complete.\n")



def fenced(**fields: object) -> WildCase:
    """A case pasted in a code fence, as each of these threads' pastes was."""
    return WildCase(**fields, paste=(paste.fenced,))  # type: ignore[arg-type]


CASES = (
    fenced(thread="https://github.com/vllm-project/vllm/issues/50708", kind="dev-pydantic-value-line", style="value-line-only",
             parts=(VALUE_LINE_50708,), engine="vllm", engine_version="0.26.0",
             expect=Expect("spec-decoding-args"),  # printed without its type (README: no exception fields)
             facts="vLLM 0.26.0's image; the config check's message with its number (-1792) and that it was raised as a pydantic "
                   "ValidationError at config build (vllm/config/vllm.py _set_max_num_scheduled_tokens: max_num_batched_tokens minus "
                   "the draft slots times max_num_seqs); the paste's keeping only pydantic's line, its input_value and link ours "
                   "(paste style ours)",
             resolution="Speculative decoding with num_speculative_tokens=16 reserves more draft slots than the default token budget "
                        "holds: raise --max-num-batched-tokens or lower --max-num-seqs (or the number of speculative tokens)."),
    fenced(thread="https://github.com/hiyouga/LlamaFactory/issues/7428", kind="dev-wrapper-version-check", style="import-error-only",
             parts=(VERSION_CHECK_7428,), engine="vllm", engine_version="0.8.1",
             expect=Expect("dependency-version", "ImportError", f"{VERSION_CHECK}\n{VERSION_HINT}"),
             facts="LLaMA-Factory's check of the installed vLLM: the requirement vllm>=0.4.3,<=0.7.3, vllm==0.8.1 found, the hint "
                   "naming DISABLE_VERSION_CHECK=1; the two lines as the thread pasted them",
             resolution="The installed vLLM is newer than the LLaMA-Factory release supports: install a vLLM in its range, a "
                        "LLaMA-Factory release that supports 0.8.1, or skip the check with DISABLE_VERSION_CHECK=1 at one's own risk."),
    fenced(thread="https://github.com/NVIDIA/nvidia-container-toolkit/issues/152", kind="dev-container-toolkit-refusal",
             style="docker-run", parts=(TOOLKIT_152,), engine="vllm", engine_version="0.9.2",
             # no Python exception (README: no exception fields); orchestration since stop 51: the container never
             # started, so no CUDA call of the engine's failed (split 14's truth for vllm-project/vllm#5635)
             expect=Expect("orchestration"),
             facts="the toolkit's requirement check and its wording (cuda>=X, 'please update your driver to a newer version, or use "
                   "an earlier cuda container'); the two-line layout of docker 24+ after \"Auto-detected mode as 'legacy'\" as "
                   "MauriceNino/dashdot#1226 shows it; the vLLM image, its tag and the docker run line ours",
             resolution="The host driver is older than the CUDA the image is built for: update the driver (or use an image built for "
                        "an older CUDA); NVIDIA_DISABLE_REQUIRE=true skips the check but not the mismatch."),
    fenced(thread="https://github.com/sgl-project/sglang/issues/7028", kind="dev-router-panic", style="router-records",
             parts=(ROUTER_7028,), engine_version="0.4.7",
             expect=Expect("router"),  # a panic of the router (categories.toml row "router"), no Python exception (README: no exception fields)
             facts="sgl-router panicking at src/router.rs:463:40 on an unwrap once every worker had died (DP attention workers "
                   "crashing under load); the router's record format from sgl-project/sglang#4562; the records' text, the "
                   "worker address, the payload's error text and the release (0.4.7, of the thread's date) ours",
             resolution="A router bug: it unwrapped a worker choice that fails when no worker is left, and kept panicking after "
                        "workers were registered again; fixed in later router releases."),
    fenced(thread="https://github.com/vllm-project/vllm/issues/19196", kind="dev-clean-shutdown-warning", style="docker-ctrl-c",
             parts=(HEALTHY_19196,), engine="vllm", engine_version="0.9.0",
             expect=Expect("none", groups=0),
             facts="torch's destroy_process_group() warning printed when `vllm serve` is stopped with Ctrl+C (ProcessGroupNCCL.cpp"
                   ":1476, the thread's wording); the image, the start-up records, the access lines (one 404) and the shutdown "
                   "records and the release (0.9.0, of the thread's date) ours",
             resolution="No failure: the server started, answered and was stopped; the warning is torch's at exit."),
)
