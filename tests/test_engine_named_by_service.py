"""The engine named by the user's name for what printed the failure (issue 28: split 17's pastes that named no engine,
D-06): a compose service or journald unit whose prefix is on the failure's own lines (`vllm_1   | `,
vllm-project/vllm#1936) and whose name is the engine's and generic words only (`vllm-openai-1`, `sglang-server-0`, a
replica's index or a pod's hash).  Weak evidence: read only when nothing of the log's own (command, banner, header,
frames, a message only one engine raises) decides, beside a failure that shows no frames and a paste that names the
other engine nowhere.  A name with any other word is another program's, or a project's, and names nothing: the
programs that sit in front of an engine or drive it (Open WebUI, LiteLLM, Llama Stack, a router, a load test, an
operator, a client) are named after the engine they serve.  A failure printed by a service whose name names no engine
leaves every service's name silent: the failure need not be the engine's.

The names of containers a paste started or read (`docker run --name`, `kubectl logs <pod>`, kubectl's `Defaulted
container` line) name nothing: they sit on a line of their own, the container may run anything (a training script,
Open WebUI, the other engine's image), a paste may start several, and what follows need not be theirs.

The failures are torch's and torch_npu's own words (c10/cuda/CUDAException.cpp's CUDA error lines; torch's
backend autoload, torch/__init__.py _import_device_backends), which no engine raises; the lines around them are ours."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.ingest.engine_evidence import engine_in_service_name
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


def journal(unit: str, text: str) -> str:
    """Lines as journalctl prints a unit's: syslog time, host, the unit's identifier and pid."""
    return "".join(f"Jun 01 10:00:00 gpu-node {unit}[8727]: {line}\n" for line in text.splitlines())


@pytest.mark.parametrize(("service", "engine"), [
    ("vllm_1", "vllm"), ("sglang-1", "sglang"), ("vllm-openai-1", "vllm"), ("sglang-server-0", "sglang"),
    ("vllm-api-gpu0-1", "vllm"), ("vllm-serve-dev-2", "vllm"), ("vllm-engine-worker-1", "vllm"),
    ("vllm-5d4f8c7b9-x7k2p", "vllm"), ("VLLM-Server", "vllm")])
def test_a_service_named_after_one_engine_that_printed_the_failure_names_it(service: str, engine: str) -> None:
    assert engine_in_service_name(service) == engine
    assert engine_of(compose(service, NO_KERNEL)) == engine
    assert engine_of(compose(service, OOM)) == engine


def test_a_journald_unit_named_after_one_engine_names_it() -> None:
    assert engine_of(journal("vllm", NPU_BACKEND)) == "vllm"
    assert engine_of(journal("sglang-server", OOM)) == "sglang"


@pytest.mark.parametrize("name", [
    "vllm-client-1", "sglang-bench-1", "vllm-router-1", "open-webui-vllm-ui-1", "vllm-vs-sglang-1", "myvllmbox-1",
    # the brief's and the review's look-alikes: programs in front of an engine, or driving it, named after it
    "vllm-benchmark", "sglang-router", "my-vllm-client", "openwebui-vllm", "openwebui-vllm-1", "litellm-vllm-1",
    "llamastack-vllm-1", "vllm-loadtest-1", "vllm-operator-5d4f", "vllm-downloader-1", "nginx-vllm-1",
    # a project's or a model's word beside the engine's: the user's name, not a generic one
    "rag-vllm-1", "qwen-sglang-server-1"])
def test_look_alike_a_name_with_a_word_of_another_part_names_nothing(name: str) -> None:
    assert engine_in_service_name(name) is None
    assert engine_of(compose(name, NO_KERNEL)) is None
    assert engine_of(journal(name, OOM)) is None


def test_look_alike_the_other_engines_own_evidence_wins() -> None:
    """The name is the user's: a message only the other engine raises, the other engine's record header, a failure
    whose frames show a script of the user's, or a line naming the other engine's installation all outrank it."""
    assert engine_of(compose("sglang-1", ONLY_VLLM)) == "vllm"
    assert engine_of(compose("vllm-1", "[2025-06-01 10:00:00 TP0] Load weight begin.\n" + OOM)) == "sglang"
    script = real_traceback("raise RuntimeError('CUDA error: no kernel image is available for execution on the device')")
    assert engine_of(compose("vllm_1", script)) is None
    assert engine_of("pip install 'sglang[all]'\n" + compose("vllm_1", NO_KERNEL)) is None


def test_look_alike_a_name_on_other_lines_than_the_failures_names_nothing() -> None:
    """A compose service's name says what that service printed: another service's failure is not its, and a clean
    log's service names nothing (the name is read for a failure only)."""
    assert engine_of(compose("vllm-1", "INFO:     Started server process [1]") + compose("app-1", NO_KERNEL)) is None
    assert engine_of(compose("vllm-1", "INFO:     Started server process [1]")) is None


def test_look_alike_a_failure_printed_by_a_service_that_names_no_engine_leaves_every_service_silent() -> None:
    """Two failures, one from the engine-named service and one from a service named otherwise: which one the
    diagnosis is about is not the name's to say (the review's item 2)."""
    assert engine_of(compose("vllm-1", NO_KERNEL) + compose("app-1", OOM)) is None
    assert engine_of(compose("app-1", OOM) + compose("vllm-1", NO_KERNEL)) is None
    assert engine_of(compose("sglang-1", OOM) + compose("litellm-sglang-1", NO_KERNEL)) is None


@pytest.mark.parametrize("shown", [
    "docker run --rm --name vllm-ascend-env --device /dev/davinci0 -v /home/models:/models -it $IMAGE bash\n\n",
    "$ podman run --name=vllm-dev --network host -it $IMAGE bash\n",
    "docker run -d --name vllm-server --gpus all $IMAGE\n",
    "docker run --name vllm-train -it $IMAGE torchrun train.py\n",
    "docker run --gpus all --rm $IMAGE python finetune.py --name vllm-exp\n",
    "docker run -d --name openwebui-vllm -p 3000:8080 ghcr.io/open-webui/open-webui:main\n",
    "$ kubectl logs -n inference vllm-deployment-7d9f8b6c4-x2x9z\n",
    "kubectl logs -f pod/llama-decode-0 -c vllm\n",
    "kubectl logs vllm-0 -c model-downloader\n",
    "I ran kubectl logs on the pod and it says nothing about vllm-0 so\n",
    "Defaulted container \"vllm\" out of: vllm, routing-proxy (init)\n",
])
def test_look_alike_a_container_the_paste_started_or_read_names_nothing(shown: str) -> None:
    """A container's name sits on a line of its own: what it runs, and whether the failure that follows is its
    output, the paste does not show (vllm-project/vllm-ascend#1440's `--name vllm-ascend-env … bash` is a shell)."""
    assert engine_of(shown + NPU_BACKEND) is None
    assert engine_of(shown + OOM) is None
    assert engine_of(shown.replace("vllm", "sglang") + OOM) is None


def test_look_alike_a_container_beside_a_service_prefix_that_names_no_engine() -> None:
    assert engine_of("docker run -d --name vllm-server --gpus all $IMAGE\n" + compose("app-1", NO_KERNEL)) is None
    assert engine_of("kubectl logs vllm-0\n" + compose("app-1", OOM)) is None


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
