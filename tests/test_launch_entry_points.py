"""The engine's other programs that take the server's arguments (logsleuth/facts/entry_points.py) are read as the launch,
and a corrected command keeps the user's own program or is not printed.

The class: a launch through an offline benchmark, pasted behind a shell-prompt marker or typed as it is
(sgl-project/sglang#4599: `> python -m sglang.bench_offline_throughput --model-path=… --enable-dp-attention …` above
a ZMQ port collision, the retired split 14's E-04, whose report asked for --cmd and whose earlier report printed a
`python -m sglang.launch_server` command rebuilt from the printed server arguments; sgl-project/sglang#10062:
`CUDA_VISIBLE_DEVICES=0,1 python -m sglang.bench_one_batch --model-path … --batch 1 --input-len … --tp 2`, dev sweep 12's
c03, whose command was not read).  Which flags such a program takes is read from the engines' code: SGLang's offline
benchmarks call `ServerArgs.add_cli_args(parser)` (sglang/bench_one_batch.py, bench_offline_throughput.py, 0.4.10.post2
and 0.5.9), vLLM's `vllm bench latency|throughput` only `EngineArgs.add_cli_args` (vllm/benchmarks/latency.py,
throughput.py, 0.11.2 and 0.33.0).  The messages are the engines' and libraries' own words (argparse's refusal, pyzmq's
address-in-use error, vLLM's CacheConfig validation from tests/fixtures/patterns).

Review 2 of stop 51 (REVIEW2.md) added: a sentence that names the command (`> I ran python -m … and it fails`) is not
the command as typed; the engine is its program's, not a path's (`/opt/vllm-venv/bin/python -m sglang.bench_one_batch`);
vLLM's benchmark refusing an argument is vLLM's own parser (`vllm bench latency: error: …`: argparse's nested
subparsers, vllm/entrypoints/cli/benchmark/main.py, 0.11.2 and 0.33.0; the choices are CacheDType's,
vllm/config/cache.py 0.33.0); a removal is safe on a benchmark's command; a cut word still withholds one; SGLang's
multimodal_gen has a `bench_offline_throughput.py` of its own parser (sglang/multimodal_gen/benchmarks, 0.5.23)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.command_line import CommandLine
from logsleuth.models import Report

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BENCH = "python -m sglang.bench_offline_throughput --model-path=/models/dsv2-lite --trust-remote-code --enable-dp-attention --dp-size=2 --tp-size=2"
PORT_TAKEN = "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:30236')\n"
DTYPE_REFUSED = ("bench_one_batch.py: error: argument --dtype: invalid choice: 'fp16' (choose from 'auto', 'half', "
                 "'float16', 'bfloat16', 'float', 'float32')\n")


def _diagnose(log: str) -> Report:
    return diagnose_text(log, DiagnoseOptions(include_user_patterns=False))


def _fix_commands(report: Report) -> list[str]:
    fix = report.failures[0].diagnosis.fix if report.failures and report.failures[0].diagnosis else None
    assert fix is not None
    return [command for option in (fix, *fix.alternatives) if (command := option.command)]


# The prompt forms pastes put before a command: a markdown block's `>`, `$`, a root prompt `#`, a virtualenv's
# `(venv) user@host:~/dir$`, a container's `root@host:/workspace#`, PowerShell's `PS C:\>`.
@pytest.mark.parametrize("prompt", ["> ", "$ ", "# ", "(venv) user@host:~/bench$ ", "root@4f2a:/workspace# ", "PS C:\\work> ", ""])
def test_a_benchmark_command_behind_a_prompt_is_the_launch(prompt: str) -> None:
    log = f"```\n{prompt}{BENCH}\nserver_args=ServerArgs(..., schedule_conservativeness=0.09, ...)\n{PORT_TAKEN}```\n"
    report = _diagnose(log)
    assert report.launch.command == BENCH and report.launch.command_source == "log"
    assert report.launch.engine == "sglang"
    commands = _fix_commands(report)
    assert commands, "the port fix edits the user's own command"
    assert all(command.startswith("python -m sglang.bench_offline_throughput ") for command in commands)
    assert not any("sglang.launch_server" in command for command in commands)


def test_a_benchmark_with_its_own_flags_gets_a_corrected_command_for_a_server_flag() -> None:
    command = ("CUDA_VISIBLE_DEVICES=0,1 python -m sglang.bench_one_batch --model-path /models/m --batch 1 "
               "--input-len 16 32 --output-len 1 --dtype fp16 --tp 2")
    report = _diagnose(f"{command}\n{DTYPE_REFUSED}")
    assert report.launch.command == command
    # bench_one_batch.py's parser is the server's plus its own: the refused choice is the engine's, and the
    # benchmark's own flags (--batch, --input-len) are not read as a cut line.
    assert _fix_commands(report) == [command.replace("--dtype fp16", "--dtype float16")]


def test_a_vllm_benchmark_is_the_launch_but_gets_no_corrected_command() -> None:
    refusal = (FIXTURES / "patterns" / "vllm-args-config-invalid-choice" / "positive-0.33.0-bad-kv-cache-dtype.log").read_text()
    traceback = refusal[refusal.index("Traceback (most recent call last)"):]
    command = "vllm bench latency --model /models/tiny-llama --kv-cache-dtype bf16"
    report = _diagnose(f"$ {command}\n{traceback}")
    assert report.launch.command == command and report.launch.engine == "vllm"
    fix = report.failures[0].diagnosis.fix if report.failures[0].diagnosis else None
    assert fix is not None and any(op.flag == "--kv-cache-dtype" for op in fix.flags)
    assert _fix_commands(report) == [], "the catalogs are vllm serve's: which flags the benchmark takes is not known"
    assert any("vllm bench latency" in step for step in fix.steps)


@pytest.mark.parametrize("program", [
    "python3 -m sglang.bench_one_batch --model-path /models/Meta-Llama-3.1-8B-Instruct ...",
    "python3 -m dynamo.sglang --model-path /models/Meta-Llama-3.1-8B-Instruct ...",
    # verl's trainer assembles the engine's arguments itself (its quickstart's `main_ppo` with its rollout option)
    "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=sglang data.train_batch_size=8",
])
def test_no_command_is_rebuilt_from_server_args_when_another_program_ran_the_engine(program: str) -> None:
    server_args = (FIXTURES / "launch" / "eagle3-server-args-no-version.log").read_text().splitlines()[0]
    report = _diagnose(f"{program}\n{server_args}\n{PORT_TAKEN}")
    assert report.launch.server_args, "the printed server arguments are read"
    assert report.launch.command is None and report.launch.command_source is None
    assert not any("sglang.launch_server" in command for command in _fix_commands(report))


def test_the_server_args_still_rebuild_a_command_when_nothing_else_ran_the_engine() -> None:
    server_args = (FIXTURES / "launch" / "eagle3-server-args-no-version.log").read_text().splitlines()[0]
    report = _diagnose(f"{server_args}\n{PORT_TAKEN}")
    assert report.launch.command_source == "server_args"
    assert (report.launch.command or "").startswith("python -m sglang.launch_server ")


@pytest.mark.parametrize(("command", "head"), [
    ("vllm bench throughput --model /m --max-model-len 4096", ("vllm", "bench", "throughput")),
    ("python3 -m sglang.bench_one_batch --model-path /m --batch 1", ("python3", "-m", "sglang.bench_one_batch")),
    ("python -m vllm.entrypoints.api_server --model /m", ("python", "-m", "vllm.entrypoints.api_server")),
])
def test_the_program_of_another_entry_point_is_the_command_head(command: str, head: tuple[str, ...]) -> None:
    parsed = CommandLine.parse(command)
    assert parsed.prefix == head and parsed.positional == ()


KV_CACHE_DTYPES = ("'auto', 'float16', 'bfloat16', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc', 'fp8_ds_mla', 'nvfp4_ds_mla', "
                   "'turboquant_k8v4', 'turboquant_4bit_nc', 'turboquant_k3v4_nc', 'turboquant_3bit_nc', 'octave_k3v4', "
                   "'octave_k3v3', 'octave_k3v3_compact', 'ultraquant_4bit', 'int4_per_token_head', 'int8_per_token_head', "
                   "'fp8_per_token_head', 'nvfp4', 'nvfp4_4over6'")


@pytest.mark.parametrize(("line", "refusal"), [
    ("> I ran python -m sglang.bench_one_batch --model-path /m --dtype fp16 and it fails", DTYPE_REFUSED),
    ("I ran python -m sglang.launch_server --model-path /m --dtype fp16 and it fails",
     DTYPE_REFUSED.replace("bench_one_batch.py", "launch_server.py")),
    ("> When we start vllm serve /m --kv-cache-dtype bf16 it exits",
     f"vllm serve: error: argument --kv-cache-dtype: invalid choice: 'bf16' (choose from {KV_CACHE_DTYPES})\n"),
])
def test_a_sentence_that_names_the_command_is_not_the_launch(line: str, refusal: str) -> None:
    report = _diagnose(f"{line}\n{refusal}")
    assert report.launch.command is None, "the sentence's words would be read as the command's"
    assert report.launch.engine is not None, "the program the sentence names still shows the engine"
    assert not any("fails" in command or "exits" in command or "float16" in command for command in _fix_commands(report))


@pytest.mark.parametrize("line", [
    "> CUDA_VISIBLE_DEVICES=0 python -m sglang.bench_one_batch --model-path /m --dtype fp16",
    "Launch command: python -m sglang.bench_one_batch --model-path /m --dtype fp16",
    "(venv) user@host:~$ cd /work && python -m sglang.bench_one_batch --model-path /m --dtype fp16",
    "+ nohup python -m sglang.bench_one_batch --model-path /m --dtype fp16",
    "$ uv run python -m sglang.bench_one_batch --model-path /m --dtype fp16",
])
def test_a_command_behind_a_prompt_a_label_or_a_runner_is_the_launch(line: str) -> None:
    report = _diagnose(f"{line}\n{DTYPE_REFUSED}")
    assert (report.launch.command or "").endswith("python -m sglang.bench_one_batch --model-path /m --dtype fp16")


def test_the_engine_is_the_program_s_not_a_path_s() -> None:
    command = "/opt/vllm-venv/bin/python -m sglang.bench_one_batch --model-path /m --dtype fp16"
    report = _diagnose(f"{command}\n{DTYPE_REFUSED}")
    assert report.launch.engine == "sglang"
    assert _fix_commands(report) == [command.replace("--dtype fp16", "--dtype float16")]


def test_vllm_s_benchmark_refusing_an_argument_is_the_engine_s_parser() -> None:
    command = "vllm bench latency --model /models/tiny-llama --kv-cache-dtype bf16"
    log = (f"$ {command}\nusage: vllm bench latency [options]\n"
           f"vllm bench latency: error: argument --kv-cache-dtype: invalid choice: 'bf16' (choose from {KV_CACHE_DTYPES})\n")
    report = _diagnose(log)
    assert report.failures[0].failure.program == "vllm bench latency"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.basis != "general" and diagnosis.category == "invalid-flag-value"
    fix = diagnosis.fix
    assert fix is not None and not any("own command line" in step for step in fix.steps)
    assert _fix_commands(report) == []
    assert any("check `vllm bench latency --help` for `--kv-cache-dtype`" in step for step in fix.steps), fix.steps


def test_a_benchmark_s_refused_flag_is_removed_in_a_corrected_command() -> None:
    command = "python -m sglang.bench_one_batch --model-path /m --tp 2 --foo-bar 1"
    report = _diagnose(f"{command}\nbench_one_batch.py: error: unrecognized arguments: --foo-bar 1\n")
    assert _fix_commands(report) == ["python -m sglang.bench_one_batch --model-path /m --tp 2"]


def test_a_cut_word_in_a_benchmark_s_command_withholds_the_corrected_command() -> None:
    command = "python -m sglang.bench_one_batch --model-path /m --batch 1 --input-len 16 --mem-fractio-static 0.8 --dtype fp16"
    report = _diagnose(f"{command}\n{DTYPE_REFUSED}")
    assert report.launch.command == command
    assert _fix_commands(report) == []
    fix = report.failures[0].diagnosis.fix if report.failures[0].diagnosis else None
    assert fix is not None and any("--mem-fractio-static" in step for step in fix.steps), fix.steps


@pytest.mark.parametrize(("module", "engine_s"), [
    ("sglang.bench_offline_throughput", True),
    ("sglang.multimodal_gen.benchmarks.bench_offline_throughput", False),
])
def test_only_sglang_s_llm_benchmark_named_bench_offline_throughput_is_the_engine_s_parser(module: str, engine_s: bool) -> None:
    log = (f"python -m {module} --model-path /m --num-prompts 8 --dtype fp16\n"
           "bench_offline_throughput.py: error: argument --dtype: invalid choice: 'fp16' (choose from 'auto', 'half', "
           "'float16', 'bfloat16', 'float', 'float32')\n")
    diagnosis = _diagnose(log).failures[0].diagnosis
    assert diagnosis is not None
    assert (diagnosis.basis != "general") is engine_s, (diagnosis.basis, diagnosis.title)
