"""Engine evidence from a project runner and from what an engine prints besides its log records (issue 28, item 4;
branch h-engine4).  A runner's own option that makes it run one engine (lm-evaluation-harness's `--model vllm`,
OpenRLHF's `--vllm_num_engines`, TRL's `vllm-serve` and `use_vllm`), a launch written as a list of words (a
container's exec form, a subprocess's argument list, a YAML block list), vLLM's collect_env report, the engines'
Prometheus metrics.  Each beside a look-alike that must decide nothing: a runner option that turns the engine off,
a suggestion, a dashboard's query.  The lines are our own, in the formats those programs print; the crash is real
CPython output of a script with no engine frame."""

from __future__ import annotations

import pytest

from logsleuth.ingest import engine_evidence
from tests.helpers import real_traceback
from tests.test_engine_evidence_env import CRASH_CODE
from tests.test_engine_evidence_more import engine_of


@pytest.fixture(scope="module")
def crash() -> str:
    """A script's own crash (real CPython output, the env test's script): no engine frame, header or command."""
    return real_traceback(CRASH_CODE, "run_job.py")


@pytest.mark.parametrize(
    ("lines", "engine"),
    [
        # project runners' own options (read from each runner's code: engine_evidence._RUNNER_OPTION)
        ("$ lm_eval --model vllm --model_args pretrained=Qwen/Qwen2.5-7B,tensor_parallel_size=2 --tasks gsm8k\n", "vllm"),
        ("$ lm-eval --model sglang --model_args pretrained=Qwen/Qwen2.5-7B,tp_size=2 --tasks gsm8k\n", "sglang"),
        ("$ python -m lm_eval --model vllm-vlm --model_args pretrained=Qwen/Qwen2-VL-7B --tasks mmmu_val\n", "vllm"),
        ("$ python -m openrlhf.cli.train_ppo_ray --vllm_num_engines 4 --vllm_tensor_parallel_size 2 --colocate_all_models\n", "vllm"),
        ("$ trl vllm-serve --model Qwen/Qwen2.5-7B --tensor_parallel_size 2\n", "vllm"),
        ("$ accelerate launch train_grpo.py --use_vllm --num_generations 8\n", "vllm"),
        ("use_vllm: true\n", "vllm"),
        # a launch as a list of words (engine_evidence._LISTED_COMMAND)
        ('    command: ["python3", "-m", "sglang.launch_server", "--model-path", "/models/m", "--port", "30000"]\n', "sglang"),
        ('    command: ["vllm", "serve", "Qwen/Qwen2.5-7B", "--tensor-parallel-size", "2"]\n', "vllm"),
        ('ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n', "vllm"),
        ("subprocess.CalledProcessError: Command '['python3', '-m', 'sglang.launch_server', '--model-path', '/models/m']' "
         "returned non-zero exit status 1.\n", "sglang"),
        ("        command:\n        - python3\n        - -m\n        - sglang.launch_server\n", "sglang"),
        # vLLM's collect_env report, older and aligned (engine_evidence.CHECK_ENV_VLLM)
        ("vLLM Version: 0.9.2\n", "vllm"),
        ("==============================\n         vLLM Info\n==============================\n"
         "vLLM Version                 : 0.15.0rc2.dev93+g8e2a469b3 (git sha: 8e2a469b3)\n", "vllm"),
        # the engines' Prometheus metrics (engine_evidence._METRIC_LINE)
        ('# HELP vllm:num_requests_running Number of requests in model execution batches.\n'
         'vllm:num_requests_running{model_name="m"} 0.0\n', "vllm"),
        ('sglang:num_running_reqs{model_name="m"} 3.0\n', "sglang"),
        # vLLM's data-parallel supervisor and coordinator processes, 0.22 on (engine_evidence._VLLM_PROCESS)
        ("(DPSupervisor pid=4242) INFO 12-01 10:00:00 [dp_supervisor.py:88] Starting 2 data parallel servers\n", "vllm"),
        ("(APIServer_DP1 pid=4243) Waiting for the engine to start\n", "vllm"),
        ("(VLLM_DP_Coordinator pid=4244) Coordinator started\n", "vllm"),
    ],
)
def test_a_runner_option_a_listed_launch_or_an_engine_report_names_the_engine(crash: str, lines: str, engine: str) -> None:
    assert engine_of(lines + crash) == engine


@pytest.mark.parametrize(
    "lines",
    [
        "$ python -m openrlhf.cli.train_ppo_ray --vllm_num_engines 0 --pretrain /models/m\n",  # 0 turns vLLM off
        "$ accelerate launch train_grpo.py --use_vllm false\n",
        "To generate faster, please set use_vllm=True in the config.\n",  # a suggestion
        "$ lm_eval --model hf --model_args pretrained=/models/vllm-tuned\n",  # another backend; a path naming an engine
        'sum(rate(vllm:request_success_total[5m]))\n',  # a dashboard's query names a metric, exposes none
        "sglang: the engine is fast\n",
        '    args: ["--model", "/models/m", "--port", "8000"]\n',  # arguments alone: no program
        "$ python3 -m sglang.bench_serving --backend vllm --port 8000\n",  # SGLang's client, against either server
    ],
)
def test_a_runner_or_list_that_runs_no_engine_decides_nothing(crash: str, lines: str) -> None:
    assert engine_of(lines + crash) is None


def test_the_listed_launch_is_read_by_its_program_not_its_arguments() -> None:
    assert engine_evidence.listed_command_engine('["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "sglang-ft"]') == "vllm"
    assert engine_evidence.listed_command_engine('["python3", "train.py", "--rollout", "sglang.launch_server"]') is None


# A path into vLLM's code inside a line that is not a frame (issue 28's "engine path only inside the message text"):
# SGLang imports and calls parts of vLLM (engine_evidence.SGLANG_RUNS_OF_VLLM, read from every indexed SGLang
# release's imports), so a path into those parts shows only that vLLM's code ran; a path into vLLM's engine, server
# or workers, which SGLang never imports, is vLLM's.
@pytest.mark.parametrize(
    ("lines", "engine"),
    [
        ("AttributeError: module 'vllm.distributed.parallel_state' has no attribute 'get_tp_group'\n", None),
        ("OSError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameE\n", None),
        ("/usr/local/lib/python3.10/dist-packages/vllm/model_executor/layers/quantization/awq.py:12: UserWarning: deprecated\n", None),
        ("RuntimeError: op missing (from /opt/venv/lib/python3.12/site-packages/vllm/utils.py)\n", None),
        ("/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py:512: UserWarning: the engine is slow\n", "vllm"),
        ("RuntimeError: failed in vllm.entrypoints.openai.serving_chat\n", "vllm"),
        ("/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/quantization/fp8.py:40: UserWarning: deprecated\n", "sglang"),
    ],
)
def test_a_path_into_the_vllm_code_sglang_runs_is_no_evidence_outside_a_frame(crash: str, lines: str, engine: str | None) -> None:
    assert engine_of(lines + crash) == engine


def test_frames_in_the_vllm_code_sglang_runs_are_still_frames() -> None:
    """In a traceback, a frame in vLLM's distributed code counts as a vLLM frame (with SGLang's frames beside it,
    both engines' frames are SGLang's: launch.LaunchTracker.engine)."""
    frames = ('Traceback (most recent call last):\n'
              '  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/parallel_state.py", line 120, in all_reduce\n'
              '    return torch.ops.vllm.all_reduce(input_)\n'
              'RuntimeError: NCCL error: unhandled system error\n')
    assert engine_of(frames) == "vllm"


def test_a_runners_backend_module_in_a_frame_is_its_engine() -> None:
    """lm-evaluation-harness's backend for one engine as a frame (arcee-ai/mergekit#524: `--model vllm` failing inside
    lm_eval/models/vllm_causallms.py); its other models' modules name none."""
    assert engine_evidence.wrapper_module_engine("/usr/local/lib/python3.10/site-packages/lm_eval/models/vllm_causallms.py") == "vllm"
    assert engine_evidence.wrapper_module_engine("/opt/lm-evaluation-harness/lm_eval/models/sglang_causallms.py") == "sglang"
    assert engine_evidence.wrapper_module_engine("/usr/local/lib/python3.10/site-packages/lm_eval/models/huggingface.py") is None
    assert engine_evidence.wrapper_module_engine("/work/my_models/vllm_causallms_notes.py") is None
    # AReaL's client of the rollout server it launched (areal/engine/sglang_remote.py, vllm_remote.py)
    assert engine_evidence.wrapper_module_engine("/opt/AReaL/areal/engine/sglang_remote.py") == "sglang"
    assert engine_evidence.wrapper_module_engine("/opt/AReaL/areal/engine/vllm_remote.py") == "vllm"
    assert engine_evidence.wrapper_module_engine("/opt/app/clients/vllm_remote.py") is None
