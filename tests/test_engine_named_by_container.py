"""The engine named by the user's name for what ran it (issue 28: split 17's pastes that named no engine, D-06 and
H-02): a compose service or journald unit that printed the failure (`vllm_1   | `, vllm-project/vllm#1936), a
container the paste started with `docker run --name …` (vllm-project/vllm-ascend#1440) or read with `kubectl logs`
(llm-d/llm-d-deployer#273: kubectl's `Defaulted container "vllm" out of: …`), whose name holds one engine's name as a
word.  Weak evidence: read only when nothing of the log's own (command, banner, header, frames, a message only one
engine raises) decides, beside a failure that shows no frames and a paste that names the other engine nowhere; a name
that says the unit is something else beside the engine (a client, a benchmark, a router) names nothing.

The failures are torch's and torch_npu's own words (c10/cuda/CUDAException.cpp's CUDA error lines; torch's
backend autoload, torch/__init__.py _import_device_backends), which no engine raises; the lines around them are ours."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.ingest.engine_evidence import container_engine, engine_in_service_name
from tests.helpers import real_traceback

NO_KERNEL = ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
             "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n")
NPU_BACKEND = ("libascend_hal.so: cannot open shared object file: No such file or directory\n"
               "RuntimeError: Failed to load the backend extension: torch_npu. You can disable extension auto-loading "
               "with TORCH_DEVICE_BACKEND_AUTOLOAD=0.\n")
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB\n"
# A message only vLLM's code raises (vllm/v1/engine/utils.py wait_for_engine_startup).
ONLY_VLLM = "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"


def engine_of(paste: str) -> str | None:
    return diagnose_text(paste).launch.engine


def compose(service: str, text: str) -> str:
    """Lines as docker compose prints a service's: its name padded, then ` | `."""
    return "".join(f"{service}   | {line}\n" for line in text.splitlines())


@pytest.mark.parametrize(("service", "engine"), [("vllm_1", "vllm"), ("sglang-1", "sglang"), ("rag-vllm-1", "vllm"),
                                                 ("qwen-sglang-server-1", "sglang")])
def test_a_service_named_after_one_engine_that_printed_the_failure_names_it(service: str, engine: str) -> None:
    assert engine_of(compose(service, NO_KERNEL)) == engine
    assert engine_of(compose(service, OOM)) == engine


@pytest.mark.parametrize("shown", [
    "docker run --rm --name vllm-ascend-env --device /dev/davinci0 -v /home/models:/models -it $IMAGE bash\n\n",
    "$ podman run --name=vllm-dev --network host -it $IMAGE bash\n",
    "$ kubectl logs -n inference vllm-deployment-7d9f8b6c4-x2x9z\n",
    "kubectl logs -f pod/llama-decode-0 -c vllm\n",
    "Defaulted container \"vllm\" out of: vllm, routing-proxy (init)\n",
])
def test_a_container_named_after_one_engine_the_paste_started_or_read_names_it(shown: str) -> None:
    assert engine_of(shown + NPU_BACKEND) == "vllm"
    assert engine_of(shown.replace("vllm", "sglang") + OOM) == "sglang"


def test_the_names_read() -> None:
    assert container_engine("docker run --gpus all --name vllm-server -p 8000:8000 $IMAGE") == "vllm"
    assert container_engine("kubectl logs sglang-0 | grep -i vllm") == "sglang"  # the pipe's words are grep's
    assert container_engine("kubectl logs -n vllm deploy/app") is None  # a namespace's name is not the pod's
    assert container_engine("docker run --name app vllm-cache-image") is None  # not the name
    assert engine_in_service_name("vllm_1") == "vllm"
    assert engine_in_service_name("VLLM-Server") == "vllm"


@pytest.mark.parametrize("name", ["vllm-client-1", "sglang-bench-1", "vllm-router-1", "open-webui-vllm-ui-1",
                                  "vllm-vs-sglang-1", "myvllmbox-1"])
def test_look_alike_a_name_of_another_part_or_of_both_engines_names_nothing(name: str) -> None:
    assert engine_in_service_name(name) is None
    assert engine_of(compose(name, NO_KERNEL)) is None
    assert engine_of(f"docker run --name {name} -it $IMAGE bash\n" + NO_KERNEL) is None


def test_look_alike_the_other_engines_own_evidence_wins() -> None:
    """The name is the user's: a message only the other engine raises, the other engine's record header, a failure
    whose frames show a script of the user's, or a line naming the other engine's installation all outrank it."""
    assert engine_of(compose("sglang-1", ONLY_VLLM)) == "vllm"
    assert engine_of("docker run --name sglang-dev -it $IMAGE bash\n" + ONLY_VLLM) == "vllm"
    assert engine_of("docker run --name vllm-dev -it $IMAGE bash\n[2025-06-01 10:00:00 TP0] Load weight begin.\n" + OOM) == "sglang"
    script = real_traceback("raise RuntimeError('CUDA error: no kernel image is available for execution on the device')")
    assert engine_of(compose("vllm_1", script)) is None
    assert engine_of("docker run --name vllm-dev -it $IMAGE bash\n" + script) is None
    assert engine_of("pip install 'sglang[all]'\n" + compose("vllm_1", NO_KERNEL)) is None


def test_look_alike_a_name_on_other_lines_than_the_failures_names_nothing() -> None:
    """A compose service's name says what that service printed: another service's failure is not its."""
    assert engine_of(compose("vllm-1", "INFO:     Started server process [1]") + compose("app-1", NO_KERNEL)) is None
    assert engine_of(compose("vllm-1", "INFO:     Started server process [1]")) is None


# The brief's third class, checked as read already (no new rule): an egg install's path, vLLM 0.2's Ray actor class
# (vllm/engine/ray_utils.py `RayWorkerVllm`, 0.2.2 on; its task name in Ray's error), the engines' logger names.
# vLLM 0.1's actor was a bare `RayWorker` (vllm-project/vllm#1846's prefix, split 17's D-03), a class name many Ray
# programs define (reinforcement-learning rollouts, schedulers): it names nothing.
@pytest.mark.parametrize(("line", "engine"), [
    ("/opt/conda/lib/python3.10/site-packages/vllm-0.2.1-py3.10-linux-x86_64.egg/vllm/engine/llm_engine.py:72: "
     "UserWarning: the cache is not set", "vllm"),
    ("(RayWorkerVllm pid=4242) [E ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective operation timeout", "vllm"),
    ("ray.exceptions.RayTaskError(RuntimeError): ray::RayWorkerVllm.execute_method() (pid=4242, ip=10.0.0.7)", "vllm"),
    ("ERROR:vllm.engine.async_llm_engine:Engine background task failed", "vllm"),
    ("ERROR:sglang.srt.managers.scheduler:Scheduler hit an exception", "sglang"),
    ("(RayWorker pid=4242) [E ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective operation timeout", None),
])
def test_the_installs_actors_and_loggers_of_one_engine_are_read(line: str, engine: str | None) -> None:
    assert engine_of(line + "\n" + NO_KERNEL) == engine
