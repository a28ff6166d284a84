"""Launch commands: parsed, rewritten by flag operations, quoted for a POSIX shell."""

from __future__ import annotations

import shlex

from logsleuth.command import CommandLine
from logsleuth.fixes import _steps_for, nearest_choice
from logsleuth.models import FlagOp

BASE = "python -m sglang.launch_server --model-path /m --tp-size 2"


def test_round_trip_keeps_tokens() -> None:
    command = "CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path '/data/my model' --port=30000"
    parsed = CommandLine.parse(command)
    assert parsed.prefix == ("CUDA_VISIBLE_DEVICES=0,1", "python3", "-m", "sglang.launch_server")
    assert parsed.value("--model-path") == "/data/my model"
    assert parsed.value("--port") == "30000"
    assert shlex.split(parsed.render())[-4:] == ["--model-path", "/data/my model", "--port", "30000"]


def test_operations() -> None:
    parsed = CommandLine.parse(BASE + " --gpu-memory-utilization 0.9 --enable-dp-attention --dp-size 3")
    fixed = parsed.apply(
        (
            FlagOp("rename", "--gpu-memory-utilization", "0.9", to="--mem-fraction-static"),
            FlagOp("set", "--dp-size", "2"),
            FlagOp("add", "--speculative-num-steps", "3"),
            FlagOp("remove", "--enable-dp-attention"),
        )
    )
    assert fixed.render() == (
        "python -m sglang.launch_server --model-path /m --tp-size 2 --mem-fraction-static 0.9 "
        "--dp-size 2 --speculative-num-steps 3"
    )


def test_positional_model_becomes_model_path() -> None:
    parsed = CommandLine.parse("python -m sglang.launch_server /data/llama --tp-size 1")
    assert parsed.positional == ("/data/llama",)
    fixed = parsed.apply((FlagOp("add", "--model-path", "/data/llama"),))
    assert fixed.render() == "python -m sglang.launch_server --tp-size 1 --model-path /data/llama"


def test_hostile_values_stay_quoted() -> None:
    parsed = CommandLine.parse("sglang serve --model-path '/m; rm -rf /' --api-key \"$(id)\"")
    rendered = parsed.apply((FlagOp("add", "--port", "1"),)).render()
    assert shlex.split(rendered) == ["sglang", "serve", "--model-path", "/m; rm -rf /", "--api-key", "$(id)", "--port", "1"]


def test_negative_numbers_are_values() -> None:
    parsed = CommandLine.parse(BASE + " --random-seed -1 --mem-fraction-static .8")
    assert parsed.value("--random-seed") == "-1"
    assert parsed.value("--mem-fraction-static") == ".8"


def test_speculative_steps() -> None:
    assert _steps_for(1, 16) == 15
    assert _steps_for(None, 4) == 3
    assert _steps_for(4, 9) == 2


def test_nearest_choice() -> None:
    assert nearest_choice("EAGLE-3", ["EAGLE", "EAGLE3", "NEXTN"]) == "EAGLE3"
    assert nearest_choice("fp16", ["auto", "half", "float16", "bfloat16"]) == "float16"
    assert nearest_choice("flashinfer2", ["triton", "flashinfer", "fa3"]) == "flashinfer"
    assert nearest_choice("zzzzzz", ["triton", "flashinfer"]) is None
