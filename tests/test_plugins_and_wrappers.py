"""Stop 49 (harmzero), in generic words (issue 28): failures where a plugin of vLLM or a wrapper around it is the
piece that matters, and memory held by other processes.

- A flag a plugin adds to vLLM's command line, refused by vLLM's own parser, is the plugin's command not running (the
  two releases do not match, or vLLM was installed after the plugin), never a flag to remove (vllm-project/vllm#34545:
  `vllm serve … --omni`, vLLM-Omni's flag, with no other sign of the plugin in the paste).  Any positive sign of a
  plugin in the paste (its package in a frame, its name on a version line or in an image) keeps an unknown flag too.
- A kernel of a hardware plugin refusing the call its attention code made is the plugin's or the device's limit (at
  start-up: the warm-up batch, sized by --max-num-seqs), not the feature a word of the kernel's name recalls
  (baidu/vLLM-Kunlun#477: `speculative_attention` with no speculative decoding set; vllm-project/vllm-ascend#3243).
- A wrapper's command line refusing its subcommand ("argument command: invalid choice") is the wrapper's release,
  not the engine's flags (huggingface/trl#3139: `trl vllm-serve` before the release that added it).
- torch's out-of-memory figures showing memory held outside the failing process: other processes on the GPU, and the
  memory fraction (a share of TOTAL memory) that fits beside them (vllm-project/vllm#783).
Argparse errors and tracebacks are real CPython's, from our own parsers and a site-packages tree laid out as the
plugin's; the engines' and torch's messages are their own wordings."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.engine_drivers import plugin_of_flag, plugins_named
from logsleuth.reasoning.shared_gpu import gpu_share
from tests.helpers import check_texts, diagnose_with_patterns, traceback_of_installed


def _argparse_error(prog: str, argv: list[str], *, subcommands: tuple[str, ...] = (), dest: str | None = None) -> str:
    """What real argparse prints for `argv`: a server-like parser (`--model`), or one with subcommands."""
    parser = argparse.ArgumentParser(prog=prog)
    if subcommands:
        sub = parser.add_subparsers(dest=dest) if dest else parser.add_subparsers()
        for name in subcommands:
            sub.add_parser(name)
    else:
        parser.add_argument("--model")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return err.getvalue()


def _fix_of(log: str):  # type: ignore[no-untyped-def]
    diagnosis = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis.fix


def _removed(fix) -> list[str]:  # type: ignore[no-untyped-def]
    return [op.flag for op in fix.flags if op.op == "remove"]


# -- a plugin's flag refused by vLLM's own parser ----------------------------------------------------------------------

def test_a_flag_only_a_plugin_adds_is_kept_with_no_other_sign_of_the_plugin() -> None:
    """vllm-project/vllm#34545: the command and the parser's refusal, nothing else; --omni is vLLM-Omni's."""
    log = ("vllm serve /models/Qwen-Image-Edit --omni --port 8092\n"
           + _argparse_error("vllm", ["--model", "m", "--omni"]))
    fix = _fix_of(log)
    assert "--omni" not in _removed(fix), fix
    assert "vLLM-Omni" in fix.summary and "pip show vllm vllm-omni" in fix.summary and "Keep --omni" in fix.summary


@pytest.mark.parametrize("sign", [
    "vLLM 0.25.1 + vLLM-Kunlun v0.25.1-dev, P800",  # a version line
    "cd /vllm-workspace/vllm-ascend && pip install -v -e .",  # a path
    "docker run quay.io/ascend/vllm-ascend:v0.9.1 vllm serve m --npu-graph-x",  # an image
])
def test_any_positive_sign_of_a_plugin_keeps_an_unknown_flag(sign: str) -> None:
    log = f"{sign}\n" + _argparse_error("vllm", ["--model", "m", "--npu-graph-x"])
    fix = _fix_of(log)
    assert "--npu-graph-x" not in _removed(fix) and "check both versions" in fix.summary, fix


def test_a_line_saying_the_plugin_is_absent_is_no_sign_of_it() -> None:
    """vLLM's own 'tpu_inference not found, using vLLM's TpuPlatform' (vllm/platforms/tpu.py) names the plugin only to
    say it is not there: an unknown flag is still vLLM's to leave out."""
    log = ("INFO 05-28 10:12:01 [tpu.py:275] tpu_inference not found, using vLLM's TpuPlatform\n"
           + _argparse_error("vllm", ["--model", "m", "--npu-graph-x"]))
    assert "--npu-graph-x" in _removed(_fix_of(log))


def test_a_plugin_sglang_lists_keeps_an_unknown_sglang_flag() -> None:
    """SGLang's analog (0.5.23 srt/plugins/__init__.py load_plugins_by_group: "Available plugins for group %s:", then
    "  - %s -> %s" per entry point): a plugin SGLang lists may add flags too; vLLM's table plugins still do not count."""
    listing = ("[2026-05-28 10:12:00] Available plugins for group sglang.srt.plugins:\n"
               "[2026-05-28 10:12:00]   - acme -> acme_sgl.plugin:register\n")
    refusal = _argparse_error("launch_server.py", ["--model", "m", "--acme-mode", "fast"])
    fix = _fix_of(listing + refusal)
    assert "--acme-mode" not in _removed(fix) and "the plugin 'acme' (acme_sgl)" in fix.summary, fix
    own = listing.replace("acme_sgl.plugin:register", "sglang.srt.plugins.builtin:register")
    assert "--acme-mode" in _removed(_fix_of(own + refusal))


def test_plugin_names_are_whole_words() -> None:
    assert plugins_named(["pip install vllm_ascend-0.9.1-cp311-none-any.whl"]) == ("vllm-ascend",)
    assert plugins_named(["import my_vllm_ascend_tools", "vllm_ascend_ops.so"]) == ()
    assert plugin_of_flag("--omni") == ("vLLM-Omni", "vllm-omni") and plugin_of_flag("--port") is None


# -- a hardware plugin's kernel refusing its shapes ---------------------------------------------------------------------

KUNLUN_ATTN = '''
from vllm_kunlun import kunlun_ops


def forward(status):
    return kunlun_ops.speculative_attention(status)
'''
# The compiled kernel raises from C, so the attention code's call is the innermost frame: a C function of CPython's
# stands in for it (its ValueError quotes the status text, which names the kernel).
KUNLUN_OPS = "speculative_attention = float\n"


def test_a_plugin_kernel_refusing_the_warm_up_batch_is_the_plugins_limit(tmp_path: Path) -> None:
    """baidu/vLLM-Kunlun#477: the kernel's name says 'speculative', no speculative decoding was set."""
    run = traceback_of_installed(
        tmp_path, {"vllm_kunlun/kunlun_ops.py": KUNLUN_OPS, "vllm_kunlun/v1/attention/backends/kunlun_attn.py": KUNLUN_ATTN},
        "from vllm_kunlun.v1.attention.backends.kunlun_attn import forward\n"
        "forward('Check 0 == ret failed, left operand=0, speculative_attention failed')\n")
    log = "vllm serve Qwen/Qwen3-8B\n" + run.stderr + "RuntimeError: Engine core initialization failed.\n"
    found = diagnose_with_patterns(log)
    assert found.category == "engine-bug" and "hardware plugin" in found.title, found
    assert "--max-num-seqs" in check_texts(found) and "speculative" not in found.title


# -- a wrapper's command line refusing its subcommand ------------------------------------------------------------------

@pytest.mark.parametrize("dest", ["command", None])
def test_a_wrapper_refusing_its_subcommand_is_the_wrappers_release(dest: str | None) -> None:
    """huggingface/trl#3139: `trl vllm-serve` refused by a TRL release that predates it (argparse names the subparsers
    by their dest, or by their choices when they have none)."""
    log = ("the command is `trl vllm-serve --model models/Qwen2.5-7B-Instruct`\n"
           + _argparse_error("trl", ["vllm-serve"], subcommands=("chat", "dpo", "env", "grpo", "kto", "sft"), dest=dest))
    found = diagnose_with_patterns(log)
    assert found.category == "unknown-flag" and "subcommand" in found.title, found
    assert "later release" in check_texts(found) and "--gpu-memory-utilization" not in check_texts(found)


# -- memory held by other processes, from torch's figures ---------------------------------------------------------------

OLD_TORCH = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.63 GiB (GPU 0; 44.56 GiB total "
             "capacity; 27.91 GiB already allocated; 565.31 MiB free; 27.93 GiB reserved in total by PyTorch) If reserved "
             "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n")
NEW_TORCH = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total capacity of "
             "79.25 GiB of which 412.94 MiB is free. Process 4242 has 30.00 GiB memory in use. Including non-PyTorch "
             "memory, this process has 48.84 GiB memory in use. Of the allocated memory 47.93 GiB is allocated by "
             "PyTorch, and 271.40 MiB is reserved by PyTorch but unallocated.\n")


@pytest.mark.parametrize(("line", "elsewhere", "fraction"), [(OLD_TORCH, "16.1", "0.58"), (NEW_TORCH, "30.0", "0.57")])
def test_memory_other_processes_hold_is_named_with_the_fraction_that_fits(line: str, elsewhere: str, fraction: str) -> None:
    found = diagnose_with_patterns(line)
    steps = check_texts(found)
    assert f"about {elsewhere} GiB is held by other processes" in steps and f"at most {fraction} here" in steps, steps
    assert "TOTAL memory" in steps


def test_a_process_that_holds_the_whole_gpu_itself_gets_no_such_step() -> None:
    line = NEW_TORCH.replace("Process 4242 has 30.00 GiB memory in use. ", "").replace("48.84 GiB", "78.84 GiB")
    share = gpu_share(line)
    assert share is not None and share.elsewhere < 1
    assert "held by other processes" not in check_texts(diagnose_with_patterns(line))


def test_sglang_is_given_no_cap_for_its_fraction_of_free_memory() -> None:
    """SGLang takes --mem-fraction-static of the memory free when it starts (model_runner.py measures it then), so a
    cap computed against the total would count the others' memory twice (review 3 H2 of stop 49)."""
    steps = check_texts(diagnose_with_patterns("$ python -m sglang.launch_server --model-path /models/m\n" + NEW_TORCH))
    assert "about 30.0 GiB is held by other processes" in steps
    assert "at most 0." not in steps and "taken of the memory free when it starts" in steps


def test_too_little_left_is_said_instead_of_a_tiny_fraction() -> None:
    crowded = NEW_TORCH.replace("Process 4242 has 30.00 GiB", "Process 4242 has 70.00 GiB").replace(
        "this process has 48.84 GiB", "this process has 8.84 GiB").replace("47.93 GiB is allocated", "7.93 GiB is allocated")
    steps = check_texts(diagnose_with_patterns("$ vllm serve /models/m\n" + crowded))
    assert "too little is left beside them to share this GPU" in steps and "at most 0.0" not in steps


def test_a_misspelt_engine_flag_beside_a_plugin_names_the_flag_it_resembles() -> None:
    """With a plugin in use, a look-alike is not renamed (it may be the plugin's flag), but the engine's flag it
    resembles is said, so a plain misspelling is not left blamed on the plugin (review 3 M3 of stop 49)."""
    log = ("vLLM 0.25.1 + vLLM-Kunlun v0.25.1-dev, P800\n"
           + _argparse_error("vllm", ["--model", "m", "--max-modle-len", "4096"]))
    fix = _fix_of(log)
    assert "--max-modle-len" not in _removed(fix)
    assert "a misspelling of vLLM's --max-model-len" in fix.summary, fix.summary
