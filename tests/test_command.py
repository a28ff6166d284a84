"""Launch commands: parsed, rewritten by flag operations, quoted for a POSIX shell."""

from __future__ import annotations

import shlex

from logsleuth.command_line import CommandLine
from logsleuth.fixes.builders.arguments import nearest_choice
from logsleuth.fixes.builders.speculative import _steps_for
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
    # the nearest letters are no evidence: one edit away is often another thing (stop 46's choices sweep)
    assert nearest_choice("flashinfer2", ["triton", "flashinfer", "fa3"]) is None
    assert nearest_choice("gptq_marlin_24", ["awq", "gptq", "marlin", "gptq_marlin"]) is None
    assert nearest_choice("fp4", ["auto", "fp8_e5m2", "fp8_e4m3"]) is None
    assert nearest_choice("sharded_state", ["auto", "pt", "safetensors", "npcache", "dummy"]) is None
    assert nearest_choice("zzzzzz", ["triton", "flashinfer"]) is None


def test_command_rebuilt_from_server_args_line() -> None:
    from logsleuth.fixes.server_args import command_from_server_args
    from logsleuth.ingest.launch import parse_server_args

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


def test_server_args_of_a_static_catalog_release_skip_a_field_whose_default_is_unknown() -> None:
    """SGLang 0.5.10 has only a static catalog; its `--stream-output` default is computed in the source, so a
    logged value cannot be told from the default: no flag is made of it (an invented flag would be worse)."""
    from logsleuth.fixes.server_args import command_from_server_args
    from logsleuth.ingest.launch import parse_server_args

    pairs = tuple(parse_server_args("ServerArgs(model_path='/m', tp_size=2, incremental_streaming_output=True)"))
    assert command_from_server_args(pairs, "0.5.10") == "python -m sglang.launch_server --model-path /m --tp-size 2"


def test_server_args_dict_form_of_0_5_23() -> None:
    from logsleuth.fixes.server_args import command_from_server_args
    from logsleuth.ingest.launch import parse_server_args

    pairs = tuple(parse_server_args("{'model_path': '/m', 'tp_size': 4, 'enable_dp_attention': True, 'x': 1}"))
    assert command_from_server_args(pairs, "0.5.23") == (
        "python -m sglang.launch_server --model-path /m --tp-size 4 --enable-dp-attention"
    )


def test_server_args_without_a_model_rebuild_no_command() -> None:
    """A server_args line without model_path (a repr pasted in part, another program's own fields) would rebuild a
    launch of no model: no command the log never gave is printed (split 14's harmful report, not blind)."""
    from logsleuth.fixes.server_args import command_from_server_args
    from logsleuth.ingest.launch import parse_server_args

    for line in ("ServerArgs(tp_size=2, port=31000, disable_cuda_graph=True)",
                 "ServerArgs(model_path=None, tp_size=2, port=31000)"):
        assert command_from_server_args(tuple(parse_server_args(line)), "0.5.9") is None


def test_stray_positional_is_removed_but_the_same_model_path_kept() -> None:
    parsed = CommandLine.parse("python -m sglang.launch_server /m --model-path /m --port 1 extra")
    fixed = parsed.apply((FlagOp("remove", "/m"), FlagOp("remove", "extra")))
    assert fixed.render() == "python -m sglang.launch_server --model-path /m --port 1"


# -- the user's own command (--cmd) keeps its shell words; a log's command is requoted --------------------


def test_trusted_command_keeps_words_as_written() -> None:
    command = (
        'HF_HOME="/a b" python -m sglang.launch_server --model-path $MODEL --api-key "$(cat ~/key)" '
        "--served-model-name `hostname` --tp-size 2"
    )
    fixed = CommandLine.parse(command, trusted=True).apply((FlagOp("set", "--tp-size", "4"),))
    assert fixed.render() == (
        'HF_HOME="/a b" python -m sglang.launch_server --model-path $MODEL --api-key "$(cat ~/key)" '
        "--served-model-name `hostname` --tp-size 4"
    )


def test_trusted_command_with_continuations_and_comments_is_one_line() -> None:
    command = "python -m sglang.launch_server \\\n  --model-path /m \\\n  --tp-size 2  # eight GPUs soon\n"
    parsed = CommandLine.parse(command, trusted=True)
    assert parsed.options == (("--model-path", ("/m",)), ("--tp-size", ("2",)))
    rendered = parsed.apply((FlagOp("add", "--port", "1"),)).render()
    assert rendered == "python -m sglang.launch_server --model-path /m --tp-size 2 --port 1"
    assert "\n" not in rendered and "\\" not in rendered


def test_trusted_command_keeps_its_pipe_and_redirections() -> None:
    parsed = CommandLine.parse("python -m sglang.launch_server --model-path /m 2>&1 | tee server.log", trusted=True)
    assert parsed.options == (("--model-path", ("/m",)),)
    rendered = parsed.apply((FlagOp("add", "--port", "1"),)).render()
    assert rendered == "python -m sglang.launch_server --model-path /m --port 1 2>&1 | tee server.log"


def test_log_command_is_requoted_and_keeps_assignments() -> None:
    """A command read from a log is untrusted: expansions become inert text, a pipe is dropped, and an
    environment assignment stays an assignment (`'HF_HOME=/a b' python` would be a command name)."""
    parsed = CommandLine.parse("HF_HOME='/a b' python -m sglang.launch_server --api-key \"$(touch pwned)\" | tee x")
    rendered = parsed.apply((FlagOp("add", "--port", "1"),)).render()
    assert rendered == "HF_HOME='/a b' python -m sglang.launch_server --api-key '$(touch pwned)' --port 1"


def test_env_names_and_values_are_quoted() -> None:
    parsed = CommandLine.parse(BASE)
    rendered = parsed.with_env((("CUDA_VISIBLE_DEVICES", "0; touch /tmp/x #"),)).render()
    assert shlex.split(rendered)[0] == "CUDA_VISIBLE_DEVICES=0; touch /tmp/x #"
    import pytest

    with pytest.raises(ValueError):
        parsed.with_env((("A B", "1"),))


def test_env_replaces_an_assignment_already_in_the_command() -> None:
    parsed = CommandLine.parse("NCCL_DEBUG=WARN " + BASE, trusted=True)
    assert parsed.with_env((("NCCL_DEBUG", "INFO"),)).render() == "NCCL_DEBUG=INFO " + BASE


def test_unbalanced_quotes_are_refused() -> None:
    import pytest

    for text in ("python -m sglang.launch_server --model-path '/m", 'x "$(a', "x `a"):
        with pytest.raises(ValueError):
            CommandLine.parse(text)
