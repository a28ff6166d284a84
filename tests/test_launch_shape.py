"""A corrected command keeps the launch's own shape, or none is printed.

- `vllm serve MODEL`: the positional model_tag is what vLLM reads (vllm/entrypoints/cli/serve.py sets
  args.model = args.model_tag in every release with `serve`); from 0.11 a `--model` is moved in front as a second
  positional, which argparse refuses (vllm/utils/argparse_utils.py), and 0.7-0.8 refused `--model` with `serve`
  outright (vllm-project/vllm#16691, #17944).  A fix that gives the model edits the positional.
- A flag given twice: argparse keeps the last value, so the fix edits the last and drops the others.
- argparse's error quotes the words it refused (`api_server.py: error: unrecognized arguments: … python3 -m
  vllm.entrypoints.openai.api_server --model  --port 80`, opea-project/GenAIComps#336): never the launch.
- A launch assembled by something else: a container run on the same line (kept in front of the command), a
  `docker run … \\` continued over lines above, a YAML file (a Compose or Kubernetes command/args:
  LMCache/LMCache#906, vllm-project/vllm#22072), a program whose option takes the engine's words (`ramalama --runtime
  vllm serve …`, containers/ramalama#758), a `bash -c "…"` string (sgl-project/sglang#33466): no command is printed
  that drops or breaks it.

The `oracle` tests run the real vLLM parser on the corrected commands (make oracle-setup-vllm).
"""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.command_line import CommandLine
from logsleuth.models import Fix, FlagOp
from tests.helpers import load_oracle, real_traceback

VLLM_VERSIONS = ("0.11.2", "0.33.0")

# vLLM's own refusal of a tensor-parallel size (vllm/config: ValueError), raised by our own code.
HEADS = real_traceback(
    "raise ValueError('Total number of attention heads (40) must be divisible by tensor parallel size (6).')",
    "parallel.py",
)


def _fix(log: str) -> Fix:
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis.fix


def _withheld(fix: Fix) -> bool:
    return fix.command is None and any("assembled by" in step for step in fix.steps)


# -- the command's own shape -------------------------------------------------------------------------------------


def test_a_model_given_to_vllm_serve_replaces_the_positional() -> None:
    fixed = CommandLine.parse("vllm serve serve /m --max-model-len 4096").apply(
        (FlagOp("remove", "/m"), FlagOp("add", "--model", "/m")))
    assert fixed.render() == "vllm serve /m --max-model-len 4096"


def test_a_model_given_to_vllm_serve_without_one_becomes_the_positional() -> None:
    fixed = CommandLine.parse("vllm serve --model /a --port 1").apply((FlagOp("set", "--model", "/b"),))
    assert fixed.render() == "vllm serve /b --port 1"


def test_the_api_server_module_keeps_its_model_flag() -> None:
    fixed = CommandLine.parse("python -m vllm.entrypoints.openai.api_server --port 1").apply((FlagOp("add", "--model", "/m"),))
    assert fixed.render() == "python -m vllm.entrypoints.openai.api_server --port 1 --model /m"


def test_a_flag_given_twice_is_set_once_where_argparse_reads_it() -> None:
    fixed = CommandLine.parse("vllm serve /m --max-model-len 1024 --port 1 --max-model-len 999999").apply(
        (FlagOp("set", "--max-model-len", "4096"),))
    assert fixed.render() == "vllm serve /m --port 1 --max-model-len 4096"


def test_vllm_serve_given_serve_twice_gets_the_model_as_its_positional() -> None:
    log = ("+ vllm serve serve /models/m --max-model-len 4096\nusage: vllm serve [model_tag] [options]\n"
           "vllm serve: error: unrecognized arguments: /models/m\n")
    assert _fix(log).command == "vllm serve /models/m --max-model-len 4096"


# -- what the launch is ------------------------------------------------------------------------------------------


def test_an_argparse_error_quoting_a_command_is_not_the_launch() -> None:
    log = ("docker run --gpus all -p 8000:8000 vllm/vllm-openai:latest vllm serve /root/models/q --max-model-len 4096\n"
           "usage: api_server.py [-h] [--host HOST]\n"
           "api_server.py: error: unrecognized arguments: vllm serve /root/models/q\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command is not None and "--max-model-len 4096" in report.launch.command
    assert _withheld(_fix(log))  # the fix moves the model: what the image's entrypoint makes of it is unknown


def test_a_bash_c_string_is_no_command_and_no_crash() -> None:
    log = ('docker run -it vllm:cpu /bin/bash -c "cd / && python3 -m vllm.entrypoints.openai.api_server --model $M --port 80"\n'
           "api_server.py: error: unrecognized arguments: /bin/bash -c cd / && python3 -m "
           "vllm.entrypoints.openai.api_server --model  --port 80\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command is None
    fix = report.failures[0].diagnosis.fix if report.failures[0].diagnosis else None
    assert fix is None or fix.command is None


def test_a_container_run_on_the_same_line_is_kept_in_front() -> None:
    fix = _fix("docker run --gpus all --ipc=host img:1 vllm serve /data/m --tensor-parallel-size 6\n" + HEADS)
    assert fix.command == "docker run --gpus all --ipc=host img:1 vllm serve /data/m --tensor-parallel-size 4"


@pytest.mark.parametrize("launch", [
    # continued from a `docker run … \` the command's own line does not hold
    "docker run --gpus all \\\n  lmsysorg/sglang:latest \\\n  vllm serve /data/m --tensor-parallel-size 6\n",
    # a Kubernetes container's args, a block of YAML
    "    args:\n      - |\n        vllm serve /data/m --tensor-parallel-size 6\n",
    # a Compose service's entrypoint
    "    entrypoint: vllm serve /data/m --tensor-parallel-size 6\n",
    # the engine's words are the value of another program's option
    "ramalama --runtime vllm serve /data/m --tensor-parallel-size 6\n",
])
def test_a_launch_assembled_elsewhere_gets_the_change_and_where_not_a_command(launch: str) -> None:
    fix = _fix(launch + HEADS)
    assert _withheld(fix)
    assert any(op.flag == "--tensor-parallel-size" and op.value == "4" for op in fix.flags)


@pytest.mark.parametrize("launch", [
    "nohup vllm serve /data/m --tensor-parallel-size 6 > log.txt 2>&1 &\n",
    "sudo -E vllm serve /data/m --tensor-parallel-size 6\n",
    "$ CUDA_VISIBLE_DEVICES=0,1 vllm serve /data/m --tensor-parallel-size 6\n",
])
def test_a_command_typed_as_it_is_still_gets_its_corrected_command(launch: str) -> None:
    fix = _fix(launch + HEADS)
    assert fix.command is not None and fix.command.endswith("vllm serve /data/m --tensor-parallel-size 4")


# -- the real vLLM parser (make oracle-setup-vllm) ---------------------------------------------------------------


REAL_RUNS = {
    # `serve` given twice: the model is the second positional, which argparse refuses
    "serve-twice": ["serve", "{tiny_llama}", "--max-model-len", "1024"],
    # the positional and --model: 0.11+ moves --model in front, a second positional
    "model-flag-and-positional": ["{tiny_llama}", "--max-model-len", "1024", "--model", "{tiny_llama}"],
    # a flag given twice, the last above the model's maximum: the fix must change the one argparse reads
    "flag-twice": ["{tiny_llama}", "--max-model-len", "1024", "--max-model-len", "999999"],
}


@pytest.mark.oracle
@pytest.mark.parametrize("version", VLLM_VERSIONS)
@pytest.mark.parametrize("case", sorted(REAL_RUNS))
def test_real_vllm_takes_the_corrected_command(version: str, case: str) -> None:
    run = load_oracle("oracle_vllm")
    if not (run.venv_dir(version) / ".ready").exists():
        pytest.skip(f"no oracle venv for vLLM {version} (scripts/oracle_vllm/setup.sh)")
    failed = run.run_serve(version, REAL_RUNS[case], trace=True)
    assert not failed.passed
    fix = _fix(failed.output)
    assert fix.command is not None and "--model" not in fix.command.split()
    fixed = run.run_command_string(version, fix.command)
    assert fixed.passed, fixed.output[-3000:]
