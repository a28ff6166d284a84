"""Each failure's fix uses its own launch's command; a command is never built from text that only shows how
to launch (argparse's usage line, a launcher's Example line, an elided server_args repr)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose, diagnose_text

CHOICES = "(choose from 'auto', 'half', 'float16', 'bfloat16', 'float', 'float32')"


def _launch(model: str, dtype: str) -> str:
    return (
        f"+ python -m sglang.launch_server --model-path {model} --dtype {dtype}\n"
        f"usage: launch_server.py [-h] --model-path MODEL_PATH [--dtype {{auto,half,float16,bfloat16,float,float32}}]\n"
        f"launch_server.py: error: argument --dtype: invalid choice: '{dtype}' {CHOICES}\n"
    )


def _commands(report) -> list[str | None]:  # type: ignore[no-untyped-def]
    return [group.diagnosis.fix.command for group in report.failures if group.diagnosis and group.diagnosis.fix]


def test_two_launches_in_one_log_each_get_their_own_command() -> None:
    log = _launch("/models/first", "fp16") + "[2026-01-01 00:00:00] some time later\n" * 3000 + _launch("/models/second", "bf16")
    report = diagnose_text(log, DiagnoseOptions(all_failures=True, include_user_patterns=False))
    commands = sorted(c for c in _commands(report) if c)
    assert commands == [
        "python -m sglang.launch_server --model-path /models/first --dtype float16",
        "python -m sglang.launch_server --model-path /models/second --dtype bfloat16",
    ]


def test_two_sources_each_get_their_own_command_and_a_source_without_one_gets_none(tmp_path: Path) -> None:
    with_command = tmp_path / "node1.log"
    with_command.write_text(_launch("/models/first", "fp16"))
    without = tmp_path / "node2.log"
    without.write_text("launch_server.py: error: argument --kv-cache-dtype: invalid choice: 'fp9' (choose from 'auto', 'fp8_e5m2', 'fp8_e4m3')\n")
    report = diagnose([str(with_command), str(without)], DiagnoseOptions(include_user_patterns=False))
    by_source = {group.sources[0]: group.diagnosis.fix for group in report.failures if group.diagnosis and group.diagnosis.fix}
    assert by_source[str(with_command)].command == "python -m sglang.launch_server --model-path /models/first --dtype float16"
    assert by_source[str(without)].command is None, "node2 logged no command: it must not borrow node1's"


def test_no_command_from_usage_or_example_lines() -> None:
    log = (
        "usage: sglang serve [-h] --model-path MODEL_PATH [--dtype {auto,half,float16}]\n"
        "Example: sglang serve --model-path <model> [options]\n"
        f"sglang serve: error: argument --dtype: invalid choice: 'fp16' {CHOICES}\n"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command is None
    assert _commands(report) == [None]


def test_no_command_from_an_elided_server_args_line() -> None:
    log = (
        "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m', tokenizer_path='/m', ..., tp_size=3)\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/sglang/srt/server_args.py", line 900, in __post_init__\n'
        "    assert self.tp_size % self.dp_size == 0\n"
        "AssertionError\n"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command is None
    assert all(command is None for command in _commands(report))


def test_a_complete_server_args_line_still_gives_a_command() -> None:
    log = "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m', tp_size=2, dtype='fp16')\n" + (
        f"launch_server.py: error: argument --dtype: invalid choice: 'fp16' {CHOICES}\n"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False, engine_version="0.5.9"))
    assert report.launch.command_source == "server_args"


def test_a_command_written_over_several_lines_is_read_whole() -> None:
    log = (
        "$ SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server \\\n"
        "    --model-path /models/first \\\n"
        "    --dtype fp16\n"
        f"launch_server.py: error: argument --dtype: invalid choice: 'fp16' {CHOICES}\n"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command == "SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --model-path /models/first --dtype fp16"
    assert _commands(report) == [
        "SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --model-path /models/first --dtype float16"
    ]


def test_vllms_module_entry_point_is_read_as_the_launch_command() -> None:
    # vLLM's V0-era launch `python -m vllm.entrypoints.openai.api_server …` (vllm-project/vllm#9913's shape): the
    # command names neither `launch_server` nor ` serve`, and was skipped before it was matched.
    log = (
        "$ python -m vllm.entrypoints.openai.api_server --model /models/m --dtype float16 --enforce-eager\n"
        "ValueError: Weight input_size_per_partition = 10944 is not divisible by min_thread_k = 128.\n"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command == "python -m vllm.entrypoints.openai.api_server --model /models/m --dtype float16 --enforce-eager"
    assert report.launch.engine == "vllm"


def test_a_command_quoted_in_backticks_in_a_sentence_ends_at_its_closing_backtick() -> None:
    """Prose that quotes the launch (`When I run \\`vllm serve …\\` I get …`): the sentence after it is no part of it."""
    log = ("When I run `vllm serve Qwen/Qwen2.5-7B --tensor-parallel-size 2` I get "
           "`torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.`\n")
    launch = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).launch
    assert launch.engine == "vllm"
    assert launch.command == "vllm serve Qwen/Qwen2.5-7B --tensor-parallel-size 2"
