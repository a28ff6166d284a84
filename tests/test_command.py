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


def test_command_rebuilt_from_server_args_line() -> None:
    from logsleuth.launch import command_from_server_args, parse_server_args

    line = (
        "ServerArgs(model_path='/models/llama 8b', tokenizer_path=None, tp_size=2, dp_size=1, "
        "disable_cuda_graph=True, cuda_graph_bs=[1, 2, 4], chat_template=None, speculative_algorithm='EAGLE3')"
    )
    command = command_from_server_args(tuple(parse_server_args(line)), "0.5.9")
    assert command is not None
    assert shlex.split(command) == [
        "python", "-m", "sglang.launch_server", "--model-path", "/models/llama 8b", "--tp-size", "2",
        "--disable-cuda-graph", "--cuda-graph-bs", "1", "2", "4", "--speculative-algorithm", "EAGLE3",
    ]


def test_server_args_dict_form_of_0_5_23() -> None:
    from logsleuth.launch import command_from_server_args, parse_server_args

    pairs = tuple(parse_server_args("{'model_path': '/m', 'tp_size': 4, 'enable_dp_attention': True, 'x': 1}"))
    assert command_from_server_args(pairs, "0.5.23") == (
        "python -m sglang.launch_server --model-path /m --tp-size 4 --enable-dp-attention"
    )


def test_stray_positional_is_removed_but_the_same_model_path_kept() -> None:
    parsed = CommandLine.parse("python -m sglang.launch_server /m --model-path /m --port 1 extra")
    fixed = parsed.apply((FlagOp("remove", "/m"), FlagOp("remove", "extra")))
    assert fixed.render() == "python -m sglang.launch_server --model-path /m --port 1"
