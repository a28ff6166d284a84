"""What a log says about the launch: the command, `server_args=`, engine and version.

Fed the same normalized lines as the traceback scanner.  It also records *launch
markers* (offsets where a new launch starts), which decide which failures belong to
the most recent launch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from logsleuth.command_line import CommandLine, split_words
from logsleuth.facts import entry_points, requires
from logsleuth.facts.engine_drivers import drivers_shown, names_a_plugin, shows_a_driver
from logsleuth.facts.gpus import shows_gpu
from logsleuth.facts.package_sites import shows_a_version
from logsleuth.facts.torch_builds import shows_cuda_versions
from logsleuth.ingest import engine_evidence, engine_from_frames, engine_from_message, line_shapes, stages
from logsleuth.ingest.engine_hints import MAX_HINTS, engine_hint
from logsleuth.ingest.startup_lines import (
    PROGRESS_STAGES,
    READY_LINE,
    engine_up,
    is_waiting_line,
    platform_named,
    serves,
)
from logsleuth.ingest.startup_trail import StartupTrail
from logsleuth.lazyre import compile_lazily
from logsleuth.models import EngineWords, Failure, LaunchInfo, LineMeta, LogLine

# The start-up stages past which the engine is up (its CUDA graphs captured, its HTTP server starting): a log ending
# there ended no start-up, whatever a wrapper prints after it (ingest/stages.py keys).
ENGINE_UP_STAGES = frozenset({"cuda-graph-done", "http", "ready"})

# The program of a launch command: the server (`python -m sglang.launch_server`, `sglang serve`, `vllm serve`), or
# another program of the engine that takes the server's arguments (facts/entry_points.py: `python -m
# sglang.bench_offline_throughput …`, `vllm bench latency …`).  It starts a word or follows a path's `/`; the path,
# the environment assignments in front and the prompt are read around it (_command_in), not by this pattern,
# which so tries a literal at each place of a line and stays linear on a long one (a benchmark's result dump).
_PROGRAM = compile_lazily(
    r"(?<![\w.\-])(?:python[\d.]*\s+-m\s+(?P<module>sglang\.launch_server|vllm\.entrypoints\.openai\.api_server|"
    + "|".join(re.escape(module) for module in (*entry_points.SGLANG_SERVER_FLAG_MODULES, *entry_points.VLLM_ENGINE_FLAG_MODULES))
    + r")(?![\w.])"
    r"|(?P<command>sglang|vllm)\s+(?:serve|bench\s+(?:throughput|latency)\b))(?=\s|$)"
)
# Words that may start a launch command on a line (a cheap test before _PROGRAM's search).
_COMMAND_WORDS = ("launch_server", " serve", "api_server", "sglang.bench", " bench ")
# vLLM naming the platform it chose (vllm/platforms/__init__.py resolve_current_platform_cls_qualname, 0.7-0.33:
# "Automatically detected platform %s." and, for an out-of-tree plugin, "Platform plugin %s is activated" ("is
# loaded." in 0.7.x)): LaunchInfo.platform_line.
_PLATFORM_LINE = compile_lazily(r"\bAutomatically detected platform \w+|\bPlatform plugin \w+ is (?:activated|loaded)\b")
_ENV_ASSIGNMENT = compile_lazily(r"[A-Z_][A-Z0-9_]*=\S*")
_OPENING_MARKS = ("\uff1a", "`", "'", '"', "(")
# What ends a prompt or a label in front of a command: a shell prompt's `$ `, `# `, `% `, `> ` (also a markdown
# quote's and PowerShell's), zsh themes' `➜ ` and `❯ ` (oh-my-zsh's default theme then prints the directory and
# `git:(branch)`, with `✗` when the tree is dirty (a `✗` alone is a checklist's mark, no prompt's): `➜  python git:(main) ✗ sglang serve …`, ohmyzsh
# themes/robbyrussell.zsh-theme, sgl-project/sglang#21752, #391), a label's `: ` (`Launch command: …`, YAML's `command: …`, a
# full-width `执行命令：`), a shell operator (`cd /w && …`, `a; b`, `| tee`), a backtick that opens a quoted command,
# or the signal bash's job notice names before the command it ran (`./entrypoint.sh: line 47:    28 Killed
# python3 -m …`, strsignal's words), or the caption of the output a command printed (vLLM's bug template's
# `<summary>The output of <code>python collect_env.py</code></summary>`, the user's launch in its place: _CAPTION_MARKUP).
# The words after the last one are the command's.
_PROMPT_END = compile_lazily(
    r"(?:[$#%>:➜❯]|&&|\|\||[;|]|\bgit:\([^()\s]*\)(?:\s+✗)?)(?=\s|$)|[`\uff1a]|\b[Tt]he output of(?=\s)"
    r"|\b(?:Killed|Terminated|Aborted|Segmentation fault|Bus error|Illegal instruction|Floating point exception)"
    r"(?: \(core dumped\))?(?=\s)"
)
# Markers a prompt or a list puts right before a command's first word: bash -x's `+`, a notebook's `!`, a YAML or
# markdown list's `-`, a JSON string's quote, a parenthesis.
_LEAD_MARKS = "+!-*\"'([{ \t"
# Programs a command may be typed behind (they run the words after them, with options of their own): the
# pass-through ones, the wrappers (_WRAPPER_PROGRAM), Python's project runners (`uv run python -m …`), and the shell's
# `export` of the assignment in front (`export CUDA_VISIBLE_DEVICES=4; python -m …`).
_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "conda", "micromamba", "mamba", "export"})
# NVIDIA Dynamo's launch of an engine: its backend module (`python3 -m dynamo.sglang --model-path …`,
# components/src/dynamo/sglang) or its CLI's output engine (`dynamo-run in=http out=sglang …`, `dynamo run out=vllm …`,
# ai-dynamo/dynamo docs/guides/dynamo_run.md).
_DYNAMO_COMMAND = compile_lazily(
    r"(?:\bpython[\d.]*\s+-m\s+dynamo\.(?P<module>sglang|vllm)(?![\w.])"
    r"|\bdynamo(?:-run|\s+run)\s(?:[^\n]*?\s)?out=(?P<out>sglang|vllm)\b)"
)
# A program of one engine run as a module (`python3 -m sglang.bench_one_batch …`, `python -m vllm.entrypoints.api_server`,
# a reproduction line cut after `python3 -m sglang`): that engine ran, whatever frames of the other it imported (SGLang
# 0.3-0.5 ran vLLM's quantization and fused-MoE layers).  A benchmark client (`sglang.bench_serving`, any `--backend`)
# may drive the other engine: not counted.
_ENGINE_MODULE_RUN = compile_lazily(r"\bpython[\d.]*\s+-m\s+(?P<engine>sglang|vllm)(?P<module>(?:\.\w+)*)(?![\w\-])")
_CLIENT_MODULES = (".bench_serving", ".benchmarks")
# What runs the engine's command when a log line holds it after another program's words (`docker run … IMAGE python3
# -m sglang.launch_server …`, `srun -N1 vllm serve …`): the launch is that program's, and a corrected command must
# keep it or not be printed.  A container run or a job step passes the words after it as they are, so they can be
# kept in front of the corrected command; a remote shell, a `bash -c` string or an unknown program cannot.
_WRAPPER_PROGRAM = compile_lazily(
    r"(?:^|[\s`$#>(])(?P<program>(?:docker|podman|nerdctl)(?:\s+container)?\s+(?:run|exec|create)|kubectl\s+(?:exec|run)"
    r"|srun|salloc|mpirun|mpiexec|(?:apptainer|singularity)\s+(?:exec|run)|enroot\s+start|ssh|torchrun"
    r"|ray\s+job\s+submit|sky\s+(?:launch|exec)|(?:ba)?sh\s+-\w*c|docker\s+compose|docker-compose)(?=\s)"
)
# A container started by a runtime's command (docker, podman, nerdctl, a Kubernetes pod run by kubectl): the engine's
# process runs inside it, with the devices and host directories the command gives it (LaunchInfo.container_lines).
_CONTAINER_RUN = compile_lazily(
    r"(?:^|[\s`$#>(])(?:(?:docker|podman|nerdctl)(?:\s+container)?\s+(?:run|create)|kubectl\s+run"
    r"|docker\s+compose\s+(?:up|run)|docker-compose\s+(?:up|run))\s")
MAX_CONTAINER_LINES = 3


def _starts_container(text: str) -> bool:
    """Whether a log line is a command that starts a container (it runs on every line: a substring guards it)."""
    return ("docker" in text or "podman" in text or "nerdctl" in text or "kubectl" in text) and len(text) <= 8192 \
        and bool(_CONTAINER_RUN.search(text))


# A program word (not a prompt's `user@host:~$`, `+` or `(venv)`), and programs that run the command they are given
# as it is, with options of their own (`sudo -E`, `numactl --interleave=all`): no wrapper.
_PROGRAM_WORD = compile_lazily(r"^[A-Za-z/.~][\w./~+-]*$")
_PASS_THROUGH = frozenset({"sudo", "nohup", "time", "env", "nice", "ionice", "numactl", "taskset", "stdbuf", "timeout", "exec", "chrt"})
_KEPT_WRAPPERS = ("docker", "podman", "nerdctl", "srun", "apptainer", "singularity")
# The engine's command as an item of a YAML file (a Kubernetes container's `command:`/`args:`, a Compose service):
# the line above opens a block (`- |`, `args: >-`), or the command is an indented list item or a key's value.
_YAML_BLOCK_START = compile_lazily(r"^\s*(?:-\s+)?(?:[\w.\-]+:\s*)?[|>][\-+]?\d?\s*$")
_YAML_ITEM = compile_lazily(r"^\s+-\s+[\"']?$|^\s*(?:-\s+)?(?:command|args|cmd|entrypoint|run|script)\s*:\s*[\[\"']?\s*$")
# argparse's error quotes the words it refused (`api_server.py: error: unrecognized arguments: vllm serve /m`):
# text after it is not a launch.
_QUOTED_BY_ERROR = compile_lazily(r"(?i)\berror:|unrecognized arguments:")
_SERVER_ARGS = compile_lazily(r"\bserver_args=(?P<body>ServerArgs\(.*\)|\{.*\})\s*$")
# vLLM's model config from 0.11 (vllm/config/model.py): the architecture the registry resolved for the model.
_RESOLVED_ARCHITECTURE = compile_lazily(r"Resolved architecture: (?P<name>[A-Za-z_]\w{0,200})")
# vLLM's start-up banner names the model beside its logo (vllm/entrypoints/utils.py log_version_and_model, from 0.11):
# `█▄█▀ █     █     █     █  model   Org/Name`.
_VLLM_LOGO_MODEL = compile_lazily(r"█\s{1,8}model\s{1,8}(?P<model>[^\s'\"]{1,300})\s*$")
# The engine's own dump of its settings, or a wrapper's of the engine arguments it passes: SGLang's
# `server_args=ServerArgs(…)` (a dict from 0.5.23), vLLM's `Initializing a V1 LLM engine (v0.11.2) with config: …`,
# its API server's `args: Namespace(…)` before 0.9 (vllm-project/vllm#4604) and `non-default args: {…}` since
# (vllm/entrypoints/utils.py, log_non_default_args), `EngineArgs(…)`.  Its items are `key=value` or `'key': value`.
SETTINGS_DUMPS = ("server_args=", "ServerArgs(", "EngineArgs(", "engine_args=", "with config: ", "Namespace(", "non-default args: ")
_SWITCH_ON = compile_lazily(r"(?<![\w'\"])(?P<repr>[a-z_]\w*)=True\b|['\"](?P<dict>[a-z_]\w*)['\"]: True\b")
MAX_DUMP_LINE = 1 << 16  # a settings dump is long, but not a 1 MiB line
# Text that shows how to launch rather than a launch: argparse's `usage: sglang serve [-h] --model-path
# MODEL_PATH …`, a launcher's `Example: sglang serve --model-path <model> [options]`, an elided `...`.
_NOT_A_COMMAND = compile_lazily(r"(?i)^\s*(?:usage|example|e\.g\.)\s*:|\[-h\]|\[options\]|<[a-z_\-]+>|\s(?:\.\.\.|…)(?:\s|$)")
# An engine's serve command whose only word after `serve` is the model as a path, a hub id or a file (`vllm serve
# /data/models/qwen3`, `sglang serve ./m`, `vllm serve Olmo-3-32B-Think-Q8_0.gguf`): a launch without a flag has no
# dash to show it is a command, and a sentence about the command (`vllm serve is faster`, `running vllm serve on a
# H100`) has no model word after it.  Counted only as
# typed (alone on its line, after a prompt, a label or a backtick: LaunchTracker._typed_as_a_command): a sentence that
# compares (`It runs fine under vllm serve /data/llama`, `Switching from vllm serve /models/qwen3-32b`) ends in a
# path too, and names the engine the user did not run.  The program's path may come first (`/usr/local/bin/vllm serve …`).
_SERVED_PATH = compile_lazily(r"(?:^|/)(?:vllm|sglang)\s+serve\s+['\"]?[\w~]*[./~-][\w./~-]*['\"]?\s*$")
# A process table's row in front of the command it ran (`ps aux`: USER, PID, %CPU, %MEM, …): the process ran it.
_PROCESS_ROW = compile_lazily(r"^\s*[\w.-]+\s+\d+\s+\d+\.\d+\s+\d+\.\d+\s")
# A flag among a command's words (`--model-path`, `-m`): a dash inside a word (a model's `qwen3-32b`) is not one.
_FLAG_WORD = compile_lazily(r"(?:^|\s)-")
# The HTML a paste's collapsed section puts around the command whose output it holds: vLLM's bug template captions its
# environment `<summary>The output of <code>python collect_env.py</code></summary>`, and a user writes their launch in
# its place (`<summary>The output of vllm serve Olmo-3-32B-Think-Q8_0.gguf</summary>`, the retired blind split 14's
# B-07).  Markup, not a placeholder such as `<model>`: taken off any line before it is read for a command (not only a
# caption's: inline `<code>`/`<b>` around a command are read as a backticked command is).
_CAPTION_MARKUP = compile_lazily(r"</?(?:summary|details|code|kbd|b|strong|em|i)>")
# An item of a `server_args=` repr left out by whoever pasted it: `ServerArgs(model_path='/m', ...)`.
_ELIDED_ITEM = compile_lazily(r"(?:^|,)\s*(?:\.\.\.|…)\s*(?:,|$)")
# The line right after a launch line, when it is that line's tail: a terminal or a paste wrapped a long command at its
# width, anywhere, also inside a value (`--gpu-memory-utilization 0` then `.9 --max-model-len=17370 --port 8001`).
# Such a line is one leading fragment or none, then only flags and their values; a log record, a prompt or a sentence
# has other words.  The command read from the first line alone is not what ran (fixes/cut_command.py).
_WRAPPED_TAIL = compile_lazily(
    r"^\s{0,40}(?:[^\s-]\S{0,200}\s{1,40})?--[A-Za-z][\w.-]{0,80}(?:=\S{0,400})?"
    r"(?:\s{1,40}(?:--[A-Za-z][\w.-]{0,80}(?:=\S{0,400})?|[^\s-]\S{0,400})){0,60}\s{0,40}$"
)
# vLLM's start-up lines: "vLLM API server version 0.11.2" (entrypoints/openai/api_server.py), "vLLM server version
# 0.33.0, serving model …" (0.33's entrypoints/common/startup.py without its logo), "vLLM batch processing API version
# …" (run_batch.py); SGLang's `sglang version` ("sglang version: 0.5.9", sglang/cli/main.py); a package listing.
_EXPLICIT_VERSION = compile_lazily(
    r"(?i)\b(?P<engine>sglang|vllm)(?:==|\s+(?:API server\s+|server\s+|batch processing API\s+)?version[:=]?\s*v?|\s+v)"
    r"(?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)"
)
# The version a paste states for its engine as a label or a package list's row, not that it ran (a listed package is
# installed; a label is the user's word): `vLLM: v0.8.5` (gpustack/gpustack#2170's report), `vllm: 0.7.3`
# (vllm-project/vllm#14693), and pip list's row of the engine's own distribution, `vllm   0.10.0+empty   /vllm-workspace/vllm`
# (pip's columns: name, version with its local part, an editable install's location; vllm-project/vllm-ascend#2556).
# Only the engine's own name (`vllm_ascend 0.10.0rc1`, `vllm-flash-attn 2.6.1`, `sglang-router 0.1.4` are other
# packages) and only at a line's start for a row (a sentence's `upgrading to vllm 0.7.2` names no installed version).
_VERSION_LABEL = compile_lazily(
    r"(?i)(?:^\s*|(?<![\w.\-/])(?=[sv]\w{3,5}:))(?P<engine>sglang|vllm)(?::\s*v?|\s+(?=\d))"
    r"(?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)(?:\+[\w.]+)?(?P<rest>(?![\w.\-+]).*)$"
)
# A frame of a traceback rich renders in a box (rich/traceback.py: `{path}:{lineno} in {function}` after the box's
# left edge `│`; typer's CLIs print their errors so: lighteval's `│ /home/u/lighteval/src/lighteval/main_vllm.py:146 in
# vllm │`, huggingface/lighteval#504, huggingface/open-r1#518).  CPython's `File "…"` lines are not there to read: the
# frame's path is.  A path wider than the box goes on at the next line's start (`…/site-packages/lightev │`, then
# `│ al/models/vllm/vllm_model.py:407 in _loglikelihood_tokens`): a line holding only a path's start is kept for it.
_RICH_FRAME = compile_lazily(r"│ (?P<path>[^\s│:]+\.py):\d+ in [\w<>]+")
_RICH_PATH_START = compile_lazily(r"│ (?P<start>[^\s│]+)\s*│\s*$")
# `pip show vllm` prints the distribution's name, then its version (pip's show command: `Name: vllm`, `Version:
# 0.8.5`): installed, as pip list's row says.
_INSTALLED = ("site-packages/", "dist-packages/")  # (facts/raise_sites.INSTALL_DIRS, not imported at reading time)
# An engine installed as an egg (`python setup.py install`: setuptools' bdist_egg names the directory
# `{name}-{version}-py{X.Y}-{platform}.egg`) runs from a directory named with its release:
# `site-packages/vllm-0.1.2-py3.9-linux-x86_64.egg/vllm/…` (vllm-project/vllm#636; 0.1.3 and 0.2.1 eggs in other
# threads' frames): the installed release, as `pip show` would print it.  A development build's egg
# (`vllm-0.6.3.dev65+g7f60520d.cpu-py3.10-…`) is no release and is not read.
_EGG_RELEASE = compile_lazily(
    r"/(?P<engine>vllm|sglang)-(?P<version>\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+)?)(?:\+[\w.]+)?-py\d[^/]{0,40}\.egg/(?P=engine)/"
)
# The words of a line that may be paths (a path ends at a space, a quote, a bracket or a comma; `:8:` after a file
# is the line number a warning prints).  A path starts a word: never inside one, nor at a URL's `//` or `scheme:/`
# (`https://github.com/vllm-project/vllm/blob/main/vllm/_custom_ops.py` is a link, not where the engine runs).
_PATH_WORD = compile_lazily(r"(?<![\w:/.])/(?!/)[^\s\"'()\[\],:]+")
_PIP_SHOW_NAME = compile_lazily(r"^\s*Name: (?P<engine>sglang|vllm)\s*$")
_PIP_SHOW_VERSION = compile_lazily(r"^Version: (?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)")
# The logo vLLM 0.33 logs at start-up (entrypoints/common/startup.py), its second line ending in the version:
# ` ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.33.0`.
_VLLM_LOGO_VERSION = compile_lazily(r"▀▄▀ █\s+version\s+v?(?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)")
# Text that names an engine's package without being that engine: SGLang's "Please install vllm by `pip install
# vllm==0.8.4`" (sglang/srt/layers/quantization), a requirement.  Neither its engine nor its version counts.
_INSTRUCTION = compile_lazily(r"(?i)\b(?:install|requires?|required|requirement|needs?|upgrade|downgrade|please)\b")
# A package listing (`vllm==0.7.2`, `[pip3] sglang==0.5.9`): the version of that package, which may be the
# engine's; a package being installed does not show that it ran, so it is no banner (LaunchTracker._listed_engine
# reads a listing, last).
_LISTING = compile_lazily(r"(?i)\b(?:sglang|vllm)==|\[(?:pip3?|conda)\]")
# A line that is one package's entry in a listing of what is installed, the engine's own distribution: pip freeze's and
# a requirements file's `vllm==0.8.5`, collect_env's `[pip3] vllm==0.8.5` (vLLM's and torch's collect_env print the
# pip packages so; vllm-project/vllm#16343), its `[conda] vllm  0.8.5  pypi_0  pypi` and conda list's row with its
# build and channel columns (vllm-project/vllm#17835).  Installed, as pip list's row (engine_version_stated) and `pip
# show` say: LaunchTracker.listed.
_LISTED_PACKAGE = compile_lazily(
    r"^\s*(?:\[(?:pip3?|conda)\]\s+)?(?P<engine>sglang|vllm)(?:==|\s+)(?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)"
    r"(?:\+[\w.]+)?(?:\s+(?:pypi_0|py\w*_\d+|[\w.]+_\d+)(?:\s+(?:pypi|conda-forge|[\w.-]+))?)?\s*$"
)
# A word of SGLang's in any form, lower-cased: the package (`sglang[all]==`, `-e …/sglang/python`, `sglang @ file://`,
# `SGLang: v0.4.6`), its kernels' and its router's distributions (`sgl-kernel`, `sgl_kernel`, `sglang-router`,
# `sgl-router`), which only SGLang installs (engine_evidence._ENGINE_PACKAGE_FRAME).  vLLM's: the word `vllm`.
_SGLANG_NAMED = compile_lazily(r"sglang|sgl[-_](?:kernel|router|model[-_]gateway)")
# A program that runs a training loop outside an engine and may call one: DeepSpeed (named by its own log lines and
# package), accelerate's launcher (not its package: transformers' environments install it for inference too).  Not in
# facts/engine_drivers.toml: neither calls an engine's API.
_TRAINER_NAMED = compile_lazily(r"deepspeed|\baccelerate\s+launch\b")
# The kinds of engine_drivers.toml's rows that run inside vLLM (its platform and general plugins): listed beside vLLM,
# they show vLLM ran, not a program driving it.
_PLUGIN_KINDS = frozenset({"platform plugin", "plugin"})
# argparse names the program that rejected a command: `vllm: error:`, `usage: vllm serve [-h]`, `api_server.py:
# error:` (vLLM's `-m vllm.entrypoints.openai.api_server`), `launch_server.py: error:` (SGLang's `-m
# sglang.launch_server`), `sglang serve: error:` and `sglang: error:` (SGLang's `sglang` command).
# vLLM's serve subcommand prints its own usage line without `[-h]` (`usage: vllm serve [model_tag] [options]`,
# `<model_tag>` before 0.8).  The error line may be quoted in a sentence (`… prints \`vllm: error: …\` and exits`, vllm-project/vllm#46325),
# or follow the user's words and a colon, ASCII or full-width (`报错日志：vllm serve: error: …`, zai-org/GLM-4.5#58), or be
# retyped by hand with its spacing changed, in typographic quotes (`报错：“vllm:error:unrecognized arguments:…”`,
# datawhalechina/self-llm#459; grammar.retyped_usage_error).
_ARGPARSE_PROGRAM = compile_lazily(
    r"(?:^|(?<=[\s`\"'*(>:\uff1a\u2018\u2019\u201c\u201d]))(?:usage:\s+)?(?P<program>vllm(?:\s+serve)?|api_server\.py|sglang(?:\s+serve)?"
    r"|launch_server\.py)(?:\s*:\s*error\s*:|\s+\[-h\]|(?<=serve)\s+[<\[]model_tag[>\]])"
)
# The stream the normalizer gives a line under SGLang's own header (`[2025-02-09 10:14:05 DP0 TP2] `), not
# torchrun's `[rank0]: ` (`rank0|sglang:rank0`).
_SGLANG_HEADER_STREAM = compile_lazily(r"^sglang:(?:DP|PP|TP|EP|ATTN_CP|MOE_DP|CP)\d")
_PROGRAM_ENGINE = {"api_server.py": "vllm", "launch_server.py": "sglang"}
MAX_STREAMS_READ = 256  # stream keys read for a logger's name (ranks and hosts make a few; a wrapper, one per logger)
# A GPU memory share with its value, as a flag, a settings field or a keyword (`--mem-fraction-static 0.85`,
# `mem_fraction_static=0.85`, `'gpu_memory_utilization': 0.9`, `gpu-memory-utilization=0.95`): the values a log
# names (LaunchInfo.memory_shares_seen).
_MEMORY_SHARE = compile_lazily(
    r"(?<![\w-])(?:--)?(?P<name>mem[-_]fraction[-_]static|gpu[-_]memory[-_]utili[sz]ation)['\"]?\s*(?:[:=]\s*|\s+(?:to\s+|of\s+|at\s+)?)['\"]?(?P<value>0?\.\d+|1\.0*)(?![\d.])"
)
_MEMORY_SHARE_WORDS = ("fraction", "utiliz", "utilis")
# A share alone in a sentence (`with 0.85`, `at 0.85,`): not a size, a percentage or a time.
_BARE_SHARE = compile_lazily(r"\b(?:with|at|to|of|using|set to)\s+(?P<value>0\.\d{1,3})(?![\d.]|\s*(?:[GMK]i?B|%|s\b|ms\b))", re.IGNORECASE)
MAX_MEMORY_SHARES = 16
MAX_PLUGIN_LINES = 4  # a plugin's name shows once or twice (a version line, an image); its frames repeat it
# Paths of engine files outside an install directory (LaunchInfo.checkout_paths): which of them are the engine's own
# indexed files is decided later (reasoning/guidance_text.py), so a few scripts in a directory named after the engine
# must leave room for the checkout's own paths.
MAX_CHECKOUT_PATHS = 16
MAX_GPU_LINES = 16  # an environment dump lists every GPU; the first lines say which they are
# The config keys of the sizes a parallel degree must divide (reasoning/parallelism.py config_arithmetic_steps), as a
# config dump prints them: transformers' `Model config LlamaConfig {` and a pasted config.json one key a line, an
# engine's dict on one line.  A line that prints one is kept (the first MAX_MODEL_SIZE_LINES): an INFO line is no
# failure's context.
MODEL_SIZE_KEYS = ("num_attention_heads", "num_key_value_heads", "multi_query_group_num", "n_routed_experts",
                   "num_experts", "num_local_experts", "intermediate_size", "weight_block_size")
_MODEL_SIZE = compile_lazily(r"(?<!\w)(?:" + "|".join(MODEL_SIZE_KEYS) + r")['\"]?\s*[:=]\s*['\"]?[\[\d]")
MAX_MODEL_SIZE_LINES = 64
# Where a log shows its GPU: a paste's environment dump, the start of a server's log.  Beyond this, a line costs
# one comparison (the cue test is a few substring scans per line: not for every line of a large log).
GPU_LINES_WITHIN = 1 << 20
# How strongly a kind of evidence shows which engine ran, strongest first: the program argparse names, the
# launch command, a banner (a version line, `server_args=`), a record header only one engine writes (SGLang's with
# rank tags, `[… TP0]`; vLLM's process prefixes, `(EngineCore_DP0 pid=1)`), the failure's own frames and lines, the
# engines' module paths named in other lines, the logger header of other lines (vLLM's `INFO 05-12 10:11:12
# [core.py:1]`, except from modules that log when vLLM is merely imported; SGLang's `[2025-01-01 12:00:00]`), and last
# what the user wrote rather than what the log's records show (a launch command inside a sentence, `I ran python -m
# sglang.launch_server --model-path … and it fails`; their Python importing one engine's API, `from vllm import LLM`),
# and last an engine's own environment variable the user set (`VLLM_USE_V1=0`, `export SGLANG_…=`).  The strongest
# kind seen decides (engine_evidence.py has the tables).
EVIDENCE_KINDS = ("program", "command", "banner", "header", "frames", "paths", "format", "written", "env")
# Where a sighting of SGLang's header without rank tags is kept (LaunchTracker._stamped) -> the kind it counts as.
PLAIN_HEADER_KINDS = {"plain-header format": "format", "plain-header frames": "frames"}


def _plain(kind: str, meta: LineMeta) -> str:
    """The evidence kind a logger header's sighting is kept under: apart when it is SGLang's without rank tags."""
    if meta.header != "sglang" or meta.ranks:
        return kind
    return f"plain-header {kind}"


# Kinds of evidence that are a log's format: when they show both engines, the failure's own frames and lines decide.
_FORMAT_KINDS = frozenset({"header", "paths", "format"})
# vLLM's engine names its version when it starts: "Initializing a V1 LLM engine (v0.11.0) with config: …"
# (vllm/v1/engine/core.py), "Initializing an LLM engine (v0.6.6.post1) with config: …" (V0 llm_engine.py) and
# "Initializing a V0 LLM engine (v0.8.2) …" (V0 while V1 existed: vllm-project/vllm#15631).
_VLLM_ENGINE_VERSION = compile_lazily(
    r"Initializing (?:a V[01]|an) LLM engine \(v(?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)"
)


def _join_continued(start: str, rest: str) -> str:
    """A line that ended in a continuation (`start`, its backslash removed) and the next: as the shell reads them,
    one word when nothing separated them (`--api-key=\\` then `VALUE` is `--api-key=VALUE`), else one space."""
    if start and rest and not start[-1].isspace() and not rest[0].isspace():
        return start + rest.rstrip()
    return f"{start.rstrip()} {rest.strip()}"


def _installed_engine(engine: str, version: str) -> str | None:
    """The one engine a paste shows installed, for a message both engines raise; not vLLM at a version a SGLang
    release pins (facts/requires.json: SGLang up to 0.4.9.post2 requires vllm), which a SGLang user's `pip show
    vllm` lists as well: installed beside SGLang, not ran."""
    if engine == "vllm" and requires.pinned_by_some_release("sglang", "vllm", version):
        return None
    return engine


@dataclass
class LaunchFacts:
    """What one launch logged about itself."""

    command: str | None = None
    server_args: str | None = None  # the body of its `server_args=` line, as printed
    command_wrapper: str | None = None  # LaunchInfo.command_wrapper
    command_wrapper_kept: bool = False  # LaunchInfo.command_wrapper_kept
    command_wrapped: bool = False  # LaunchInfo.command_wrapped


@dataclass
class LaunchTracker:
    """The latest launch seen so far in a log: its command, server args and engine version."""

    command: str | None = None  # of the latest launch
    command_wrapper: str | None = None  # of the latest launch (LaunchInfo.command_wrapper)
    command_wrapper_kept: bool = False
    command_offset: int = -1
    server_args: str | None = None  # of the latest launch
    # kind of evidence (EVIDENCE_KINDS) -> the engines it showed; `engine` is decided from it, once, when asked
    evidence: dict[str, set[str]] = field(default_factory=dict)
    command_engine: str | None = None  # the engine of the latest launch command
    versions: dict[str, str] = field(default_factory=dict)  # engine -> the version the log names (first wins)
    version_hint: str | None = None  # guessed from code layout when no version is printed
    # engine -> the release an engine's own image tag names (first wins): what the image was built from, which the
    # paste may not have run (a pull of one tag, a run of another, a rebuilt image), so it is an inferred version
    image_versions: dict[str, str] = field(default_factory=dict)
    markers: list[int] = field(default_factory=list)
    # The offset of every launch command and `server_args=` line (one launch marker may hold two): one after a
    # failure and before the next is a relaunch, so the two failures are unrelated (api._launches).
    launch_lines: list[int] = field(default_factory=list)
    launches: dict[int, LaunchFacts] = field(default_factory=dict)  # marker offset -> what that launch logged
    wrappers: set[str] = field(default_factory=set)  # the programs seen running the engine (engine_evidence.WRAPPERS)
    # The failures' exceptions, (type, message), the first few: the weakest evidence (engine_from_message.py)
    raised: list[tuple[str, str]] = field(default_factory=list)
    # Frames whose paths the paste shortened, (path, function): weaker still (engine_from_frames.py)
    shortened_frames: list[tuple[str, str]] = field(default_factory=list)
    # The engines named by the names of the units or services that printed the failures (the failure's own process
    # prefix, engine_evidence.engine_in_service_name; a name seen on other lines tells nothing of the failure):
    # weaker still, the user's name, read when nothing else decides (LaunchTracker._named_by_user)
    services_named: set[str] = field(default_factory=set)
    # a failure's own lines carry the prefix of a process that names no engine (`app-1  | `, `litellm-vllm-1  | `):
    # that failure need not be an engine's, so no service's name tells the engine
    unnamed_process_failed: bool = False
    # engine -> the version a listing of installed packages shows for its own distribution (pip list's or conda list's
    # row, pip freeze's or collect_env's `vllm==…` line, `pip show`; not a label, `vLLM: v0.8.5`, the user's word): the
    # engine the paste runs when it is the one engine listed and nothing else decides (LaunchTracker.engine)
    listed: dict[str, str] = field(default_factory=dict)
    # The engines a serving benchmark's backend names (engine_evidence.benchmark_backend): the user's choice of the
    # server a client drove, kept apart from `evidence` (the log's own record of its engine, which the case window
    # reads too); the engine of a clean log only (a client that failed may have failed against any server), and
    # weaker than every kind of evidence
    benchmark_backends: set[str] = field(default_factory=set)
    failures_seen: bool = False  # a failure was read (observe_failure): a benchmark's backend is then no evidence
    startup: StartupTrail = field(default_factory=StartupTrail)  # where the start-up is (_observe_startup)
    # the engine's warnings that recommend a flag, with their offsets (engine_hints.py): a clean paste's lead
    engine_hints: list[tuple[int, str]] = field(default_factory=list)
    v0_fallback: tuple[str, bool] | None = None  # vLLM's fallback to its V0 engine, the last one (models.Launch)
    # a failure showed frames (observe_failure): where it ran is then shown, and a package listing alone (`listed`) no
    # longer tells the engine (none of those frames is an engine's, or frames would decide)
    failure_frames_seen: bool = False
    # The engines any line names in any form (ENGINE_NAMED: an editable install, `sglang[all]==…`, `sglang @ file://…`,
    # sgl-kernel, a label, a URL): a listing of one engine beside a word of the other tells nothing (_listed_engine)
    engines_named: set[str] = field(default_factory=set)
    # a line names a program that runs a training loop outside the engine (_TRAINER_NAMED), which its installed engine
    # may serve as a dependency only: a listing then tells nothing
    trainer_named: bool = False
    _last_meta: LineMeta | None = None  # the last line's metadata read for evidence (records share theirs)
    _headers_decided: set[str] = field(default_factory=set)  # logger headers that can show nothing more
    _processes_read: set[str] = field(default_factory=set)  # process prefixes already read
    _streams_read: set[str] = field(default_factory=set)  # stream keys already read for a logger's name
    _marker_kinds: set[str] = field(default_factory=set)
    gpu_lines: list[str] = field(default_factory=list)  # lines that show the GPU (facts/gpus.py), the first ones
    compile_cache: str | None = None  # vLLM's torch.compile cache directory the log names (compile_cache_in)
    package_lines: list[str] = field(default_factory=list)  # lines that show a package's version (facts/package_sites.py)
    driver_lines: list[str] = field(default_factory=list)  # lines that show a package driving the engine (facts/engine_drivers.py)
    model_size_lines: list[str] = field(default_factory=list)  # LaunchInfo.model_size_lines
    _driver_command_continues: bool = False  # the last driver line ended with a backslash
    plugin_lines: list[str] = field(default_factory=list)  # lines that name a plugin of vLLM (LaunchInfo.plugin_lines)
    platform_line: str | None = None  # LaunchInfo.platform_line
    container_lines: list[str] = field(default_factory=list)  # LaunchInfo.container_lines
    checkout_paths: list[str] = field(default_factory=list)  # LaunchInfo.checkout_paths
    editable_checkouts: list[tuple[str, str]] = field(default_factory=list)  # LaunchInfo.editable_checkouts
    switches_on: set[str] = field(default_factory=set)  # what the engine's settings dumps show True (SETTINGS_DUMPS)
    memory_shares: list[tuple[str, float]] = field(default_factory=list)  # LaunchInfo.memory_shares_seen
    architecture: str | None = None  # LaunchInfo.architecture
    banner_model: str | None = None  # LaunchInfo.banner_model
    other_entry_point: str | None = None  # LaunchInfo.other_entry_point, the first one seen
    # A launch command written over several lines with backslash continuations (a launch script, a pasted
    # shell session): the lines so far, joined, and the offset of its first line.
    _continued: tuple[str, int] | None = None
    # The launch just read from the line before, whose next line may be its wrapped tail (LaunchInfo.command_wrapped).
    _command_may_wrap: LaunchFacts | None = None
    command_wrapped: bool = False  # of the latest launch
    _line_before: str = ""  # the last line seen: the message line `logger.exception` prints above its traceback
    _pip_show_name: str = ""  # the last `Name: ` line of `pip show` (whose "Editable project location" follows)
    # SGLang's header without rank tags (`[2025-06-01 10:00:00] `) is also what a line stamper (`ts`, a wrapper's
    # logger, a CI runner) writes before every line.  SGLang's logger writes it once per record, so a traceback's
    # frame lines never carry it: a frame line that does shows a stamper, and the untagged header then shows
    # nothing of the engine (its sightings are kept apart, under PLAIN_HEADER_KINDS, until the engine is decided).
    _stamped: bool = False
    _rich_path_start: str = ""  # the start of a path rich wrapped at its box's edge (_observe_rich_frame)
    _line: LogLine | None = None  # the line being observed: a launch command on it begins the start-up

    def observe(self, line: LogLine) -> None:
        text = line.text
        self._line = line
        self._observe_startup(line)
        if "Falling back to V0" in text and (fallback := _V0_FALLBACK.search(text)) is not None:
            self.v0_fallback = (fallback["feature"].strip(), "recommend to remove" in text)
        if "--" in text and (hint := engine_hint(line)) is not None:
            self.engine_hints = [*self.engine_hints[-(MAX_HINTS - 1):], (line.offset, hint)]
        if self._command_may_wrap is not None:
            facts, self._command_may_wrap = self._command_may_wrap, None
            if len(text) <= 8192 and _WRAPPED_TAIL.match(text):
                facts.command_wrapped = True
                self.command_wrapped = self.command_wrapped or facts.command == self.command
        if self._continued is not None:
            start, offset = self._continued
            self._continued = None
            text = _join_continued(start, text)
            line = line._replace(text=text, offset=offset)
        if self.compile_cache is None and COMPILE_CACHE_DIR in text and len(text) <= 8192:
            self.compile_cache = compile_cache_in(text)
        if ("args" in text or "with config: " in text) and len(text) <= MAX_DUMP_LINE and any(dump in text for dump in SETTINGS_DUMPS):
            self.switches_on.update(m["repr"] or m["dict"] for m in _SWITCH_ON.finditer(text))
        if self.architecture is None and "Resolved architecture: " in text and (m := _RESOLVED_ARCHITECTURE.search(text)):
            self.architecture = m["name"]
        if self.banner_model is None and "█" in text and (m := _VLLM_LOGO_MODEL.search(text)):
            self.banner_model = m["model"]
        if "server_args=" in text:
            m = _SERVER_ARGS.search(text)
            if m:
                self.server_args = m["body"]
                self._saw("banner", "sglang")
                # 0.5.23 logs a dict; older versions the dataclass repr.
                if m["body"].startswith("{"):
                    self.version_hint = "0.5.23"
                self._mark(line.offset, "server_args").server_args = m["body"]
        said = text
        if "<" in said and len(said) <= 8192 and _CAPTION_MARKUP.search(said):
            said = _CAPTION_MARKUP.sub(" ", said).rstrip()  # a collapsed section's caption: its words, not its tags
        if any(word in said for word in _COMMAND_WORDS) and len(said) <= 8192 and (found := _command_in(said)):
            command, before, engine = found
            if before.endswith("`"):
                command = command.split("`", 1)[0].strip()  # a command a sentence quotes in backticks ends at its closing one
            if command.endswith("\\") and len(said) <= 8192:
                self._continued = (said.rstrip()[:-1], line.offset)  # the rest is on the next line
                return
            flagged = _FLAG_WORD.search(command) is not None
            if (flagged or _SERVED_PATH.search(command)) and not command.endswith("serve") and not _NOT_A_COMMAND.search(said) and not (
                    _QUOTED_BY_ERROR.search(before)):
                typed = self._typed_as_a_command(before)
                if typed or _PROCESS_ROW.match(before):
                    self.command_engine = engine
                    self._saw("command", engine)
                    # A quote it does not close: part of a `bash -c "…"` string, not a command of its own.  A process
                    # table's row may be cut at the terminal's width: its engine, not a command to correct.
                    if typed and _lexes(command):
                        self._record_command(line.offset, command, *self._wrapper_of(before, command))
                elif flagged:
                    # A sentence that names the command (`> I ran python -m … --tp 2 and it fails`) shows the engine the
                    # user meant, not the command as typed nor what ran: weaker than the log's own records ("written").
                    self._saw("written", engine)
        if ('"' in text or "'" in text or "- " in text) and len(text) <= 8192 and (
            listed := engine_evidence.listed_command_engine(text)
        ):
            self.command_engine = listed  # a launch as a list of words (a container's exec form, a subprocess's args)
            self._saw("command", listed)
        if "dynamo" in text and len(text) <= 8192 and (m := _DYNAMO_COMMAND.search(text)):
            # NVIDIA Dynamo's launch of one engine: the engine it names is the launch's, whatever an import printed
            self.command_engine = m["module"] or m["out"]
            self._saw("command", self.command_engine)
            self.other_entry_point = self.other_entry_point or m[0]
        if ("bench" in text or "api_server" in text) and self.other_entry_point is None and len(text) <= 8192 and (
                entry_point := entry_points.other_entry_point(text)):
            self.other_entry_point = entry_point[0]
        if " -m " in text and "--backend" not in text and len(text) <= 8192 and (m := _ENGINE_MODULE_RUN.search(text)) and (
                not m["module"].startswith(_CLIENT_MODULES)):
            self._saw("command", m["engine"])
        if ("LLM" in text or "llm" in text or "Lang" in text or "lang" in text) and len(text) <= 512 and (
                labelled := engine_version_stated(text)):
            self.versions.setdefault(*labelled)  # a label or a pip list row: the version, no evidence the engine ran
            if ":" not in text.split(labelled[1], 1)[0]:
                self.listed.setdefault(*labelled)  # pip list's row (a label, `vLLM: v0.8.5`, is the user's word)
        elif text.startswith("Version: ") and (shown := _PIP_SHOW_NAME.match(self._line_before)) and (
                m := _PIP_SHOW_VERSION.match(text)):
            self.versions.setdefault(shown["engine"], m["version"])  # `pip show vllm`: installed, as a pip list row
            self.listed.setdefault(shown["engine"], m["version"])
        elif ("sglang" in text or "vllm" in text) and len(text) <= 512 and (m := _LISTED_PACKAGE.match(text)):
            self.versions.setdefault(m["engine"], m["version"])
            self.listed.setdefault(m["engine"], m["version"])
        if len(self.engines_named) < 2:
            self._observe_names(text)
        if any(marker in text for marker in engine_evidence.API_MARKERS) and len(text) <= 512 and (
                driven := engine_evidence.api_code_engine(text)):
            self._saw("written", driven)  # the user's Python driving one engine's API (engine_evidence._API_IMPORT)
        if ("sglang" in text or "vllm" in text or "vLLM" in text or "VLLM::" in text or "sgl_kernel" in text or "sgl-kernel" in text
                or "sgl-dev" in text  # (AMD's SGLang image, engine_evidence._IMAGE)
                or "common_ops." in text  # (sgl-kernel's compiled ops by the library's name, engine_evidence._SGL_KERNEL)
                or (("sgl" in text or "Rust" in text) and any(word in text for word in engine_evidence.ROUTER_WORDS))) and (
                    'File "' not in text or not _frame_line(text)):
            # A frame's path is read from the failure (observe_failure); a line that only looks like one, where ranks'
            # faulthandler dumps wrote over each other (`  File   File ""/…/sglang/srt/managers/scheduler.py/…`), is
            # read here, or its paths would be lost with the frame the grammar could not read.
            self._observe_engine_named(text)
        if ("Args(" in text or "engine" in text or "rollout.name" in text or "infer_backend" in text or "After building" in text
                or "lm_eval" in text or "lm-eval" in text or "lighteval" in text or "vllm_num_engines" in text or "vllm-serve" in text or "use_vllm" in text) and (
            dumped := engine_evidence.settings_engine(text)  # (engine_evidence.SETTINGS_MARKERS)
        ):
            self._saw("banner", dumped)
        if any(marker in text for marker in engine_evidence.WRAPPER_CLASS_MARKERS) and (
            wrapped := engine_evidence.wrapper_class_engine(text)
        ):
            self._saw("paths", wrapped)  # a wrapper's class for one engine (engine_evidence._WRAPPER_ENGINE_CLASS)
        if "ray::" in text and (actor_engine := engine_evidence.ray_task_engine(text)):
            self._saw("paths", actor_engine)  # a Ray task of one engine's actor (engine_evidence._RAY_TASK)
        if "input_type=ArgsKwargs" in text and engine_evidence.PYDANTIC_CONFIG_ERROR.search(text):
            self._saw("format", "vllm")  # (engine_evidence.PYDANTIC_CONFIG_ERROR)
        if ("VLLM_" in text or "SGLANG_" in text) and (env_engine := engine_evidence.engine_set_in_environment(text)):
            self._saw("env", env_engine)
        if any(marker in text for marker in engine_evidence.BENCHMARK_MARKERS) and len(text) <= 8192 and (
                served := engine_evidence.benchmark_backend(text)):
            self.benchmark_backends.add(served)
        if ("LLM engine (v" in text and (m := _VLLM_ENGINE_VERSION.search(text))) or (
            "▀▄▀" in text and (m := _VLLM_LOGO_VERSION.search(text))
        ):
            self._saw("banner", "vllm")
            self.versions.setdefault("vllm", m["version"])
        elif text[:1] == "(" and text.startswith("(raylet)"):  # Ray's own daemon, re-logged by the driver (gpustack/gpustack#2415)
            self.wrappers.add("Ray")
        elif "[address=" in text and engine_evidence.xoscar_error(text):
            self.wrappers.add("Xinference")
        elif text[:1] == "[" and text[3:4] == ":" and engine_evidence.OLD_SGLANG_HEADER.match(text):
            self._saw("header", "sglang")
        elif text[:1] == "[" and " pid=" in text and engine_evidence.bracketed_vllm_process(text):
            self._saw("paths", "vllm")  # vLLM's process name in brackets (engine_evidence._BRACKETED_PROCESS)
        if line.stream and line.stream not in self._streams_read and len(self._streams_read) < MAX_STREAMS_READ:
            self._observe_stream(line.stream)
        meta = line.meta
        if line.headed and meta.header == "sglang" and not meta.ranks and text.startswith('  File "'):
            self._stamped = True
        if meta is not self._last_meta and (meta.header or meta.process):  # once per record: its lines share it
            self._last_meta = meta
            if meta.process and meta.process not in self._processes_read:
                self._observe_process(meta.process)
            if meta.header and meta.header not in self._headers_decided:
                self._observe_header(meta, line.stream)
        elif not (meta.header or meta.process) and (" pid=" in text or ".py:" in text) and len(text) <= 8192:
            self._observe_embedded_record(text)
        if ("error:" in text or "[-h]" in text or "model_tag" in text) and (m := _ARGPARSE_PROGRAM.search(text)):
            program = m["program"]
            self._saw("program", _PROGRAM_ENGINE.get(program, program.split()[0]))
        if line.offset < GPU_LINES_WITHIN and len(self.gpu_lines) < MAX_GPU_LINES and shows_gpu(text):
            self.gpu_lines.append(text)
        if (len(self.model_size_lines) < MAX_MODEL_SIZE_LINES and len(text) <= MAX_DUMP_LINE
                and ("_heads" in text or "_experts" in text or "_size" in text or "_num" in text) and _MODEL_SIZE.search(text)):
            self.model_size_lines.append(text)
        if (line.offset < GPU_LINES_WITHIN and len(self.package_lines) < MAX_GPU_LINES
                and (shows_a_version(text) or shows_cuda_versions(text))):
            self.package_lines.append(text)  # an environment dump's lines, within the same reach as its GPUs'
        if self._driver_command_continues and len(self.driver_lines) < MAX_GPU_LINES:
            # The arguments of a driver's command continued with a backslash (`lighteval vllm \`): the keywords the
            # user set, which a refusal of a keyword is read against (reasoning/engine_api_calls.py).
            self.driver_lines.append(text)
        elif line.offset < GPU_LINES_WITHIN and len(self.driver_lines) < MAX_GPU_LINES and shows_a_driver(text):
            self.driver_lines.append(text)  # a wrapper, connector or plugin listed beside the engine
        if line.offset < GPU_LINES_WITHIN and len(self.plugin_lines) < MAX_PLUGIN_LINES and names_a_plugin(text):
            self.plugin_lines.append(text)  # a plugin's package in a frame, its name on a version line or an image
        if self.platform_line is None and "latform" in text and len(text) <= 8192 and _PLATFORM_LINE.search(text):
            self.platform_line = text
        if len(self.container_lines) < MAX_CONTAINER_LINES and _starts_container(text):
            self.container_lines.append(text)
        self._driver_command_continues = (bool(self.driver_lines) and self.driver_lines[-1] is text
                                          and text.rstrip().endswith("\\"))
        if len(text) <= 8192 and (".py" in text or text.startswith("Editable project location: ")):
            self._observe_checkout(text)
        if len(self.memory_shares) < MAX_MEMORY_SHARES and len(text) <= 8192:
            self._observe_memory_shares(text, prose=not (meta.header or meta.process))
        if text.startswith("sglang serve: error:"):
            self.version_hint = self.version_hint or "0.5.23"
        elif text.startswith("launch_server.py: error:"):
            self.version_hint = self.version_hint or "0.5.9"
        if text.startswith("Traceback (most recent call last)") and self._line_before:
            self._logged_above_traceback(self._line_before)
        if "alidation error" in text and (title := engine_from_message.pydantic_title(text)):
            self._logged_above_traceback(title)  # a pydantic report's title, weighed as a message (engine_from_message)
        if "│" in text:
            self._observe_rich_frame(text)
        if text.lstrip().startswith("Name: "):
            self._pip_show_name = text  # `pip show`'s fields follow its Name line
        self._line_before = text

    def _observe_names(self, text: str) -> None:
        """The engines a line names in any form (engines_named), and a training program it names (trainer_named)."""
        low = text.lower()
        if "vllm" in low:
            self.engines_named.add("vllm")
        if "sgl" in low and _SGLANG_NAMED.search(low):
            self.engines_named.add("sglang")
        if not self.trainer_named and ("deepspeed" in low or "accelerate launch" in low) and _TRAINER_NAMED.search(low):
            self.trainer_named = True

    def _observe_checkout(self, text: str) -> None:
        """A path of an engine's source file outside an install directory, printed on a line of the log (a warning's
        `/home/u/vllm/vllm/connections.py:8: RuntimeWarning`, a frame of a traceback the reader did not keep), or
        pip's "Editable project location:" of `pip show` for the engine: where a source checkout runs from."""
        if text.startswith("Editable project location: "):
            if (shown := _PIP_SHOW_NAME.match(self._pip_show_name)) is not None:
                self._add_editable(shown["engine"], text.split(": ", 1)[1].strip())
            return
        if not ("/vllm/" in text or "/sglang/" in text) or any(mark in text for mark in _INSTALLED):
            return
        for word in _PATH_WORD.findall(text):
            if word.endswith(".py") and ("/vllm/" in word or "/sglang/" in word):
                self._add_checkout(word)

    def _add_checkout(self, path: str) -> None:
        if path not in self.checkout_paths and len(self.checkout_paths) < MAX_CHECKOUT_PATHS:
            self.checkout_paths.append(path)

    def _add_editable(self, engine: str, location: str) -> None:
        """An editable install's location, kept with the engine `pip show` named: it is that engine's checkout only."""
        if (engine, location) not in self.editable_checkouts and len(self.editable_checkouts) < MAX_PLUGIN_LINES:
            self.editable_checkouts.append((engine, location))

    def _record_command(self, offset: int, command: str, wrapper: str | None, whole: str | None) -> None:
        """The latest launch's command: `whole` (the wrapper's words kept in front) when there is one."""
        self.command = whole or command
        self.command_wrapper, self.command_wrapper_kept = wrapper, whole is not None
        self.command_offset = offset
        facts = self._mark(offset, "command")
        facts.command, facts.command_wrapper, facts.command_wrapper_kept = self.command, wrapper, whole is not None
        self.command_wrapped = False
        self._command_may_wrap = facts

    def _typed_as_a_command(self, before: str) -> bool:
        """The words in front of a command on its line (`before`) leave it as typed: nothing, or a prompt or a label
        (_PROMPT_END), then a program that runs it (an environment assignment, a path, a pass-through program, a
        wrapper, a project runner, a program with options of its own).  Not a sentence's words (`I ran python -m …
        and it fails`): the sentence's words after the command would be read as the command's, and a corrected
        command would keep or drop them."""
        if self._line_before.rstrip().endswith("\\"):
            return True  # a command started on the line above (_wrapper_of names it)
        prompt_end = max((m.end() for m in _PROMPT_END.finditer(before)), default=0)
        words = before[prompt_end:].strip(_LEAD_MARKS).split()
        if not words:
            return True
        first = words[0].rsplit("/", 1)[-1]
        return bool(_ENV_ASSIGNMENT.fullmatch(words[0]) or "/" in words[0] or first in _PASS_THROUGH or first in _RUNNERS
                    or _WRAPPER_PROGRAM.match(" ".join(words) + " ")
                    or (first[:1].islower() and any(word.startswith("-") for word in words[1:])))

    def _wrapper_of(self, before: str, command: str) -> tuple[str | None, str | None]:
        """What the engine's command sits in on its line (`before`: the text in front of it) or the line above:
        (its name, for the user; the whole command with the wrapper's words kept in front, when they can be), or
        (None, None) for a command typed as it is (a prompt, `nohup`, `time`, an environment assignment)."""
        above = self._line_before
        if m := _WRAPPER_PROGRAM.search(before):
            program = " ".join(m["program"].split())
            if program.startswith(_KEPT_WRAPPERS) and "-c" not in program:
                whole = f"{before[m.start('program'):].rstrip()} {command}"
                return program, whole if _same_engine_words(whole, command) else None
            return program, None
        words = [word for word in before.split() if _PROGRAM_WORD.match(word)]
        if words and before.split()[-1].startswith("-") and words[0].rsplit("/", 1)[-1] not in _PASS_THROUGH:
            return f"`{words[0]}` (the engine's words are its arguments)", None  # `ramalama --runtime vllm serve …`
        if above.rstrip().endswith("\\"):
            m = _WRAPPER_PROGRAM.search(above)
            return (" ".join(m["program"].split()) if m else "a command that starts on the lines above (continued with `\\`)"), None
        if _YAML_BLOCK_START.match(above) or _YAML_ITEM.match(before) or (before.strip() == "-" and before.startswith(" ")):
            return "a YAML file (a Kubernetes container's command/args, a Compose service)", None
        return None, None

    def _logged_above_traceback(self, text: str) -> None:
        """The line right above a traceback, which `logger.exception("EngineCore failed to start.")` prints as its
        record's message: a line of no type, weighed with the failures' messages (engine_from_message.py)."""
        said = text.strip()
        if said and len(self.raised) < engine_from_message.MAX_MESSAGES and ("", said) not in self.raised:
            self.raised.append(("", said))

    def _observe_engine_named(self, text: str) -> None:
        """A line that names an engine: its version, its code's paths, a wrapper around it."""
        for installed in engine_evidence.engines_shown_by_install(text):
            self._saw("paths", installed)
        if imaged := engine_evidence.image_engine(text):
            self._saw("banner", imaged)
            if (released := engine_evidence.image_release(text)) is not None:
                self.image_versions.setdefault(*released)
        if text.startswith("sglang: ") and (m := engine_evidence.CHECK_ENV_SGLANG.match(text)):
            self.versions.setdefault("sglang", m["version"])
            self._saw("format", "sglang")
            return
        if text.startswith("vLLM Version") and (m := engine_evidence.CHECK_ENV_VLLM.match(text)):
            self.versions.setdefault("vllm", m["version"])
            self._saw("format", "vllm")
            return
        if metered := engine_evidence.metric_engine(text):
            self._saw("format", metered)
            return
        if backend := engine_evidence.wrapper_logger_engine(text):
            self._saw("paths", backend)
        if engine_evidence.triton_vllm_record(text):
            self._saw("paths", "vllm")  # the Triton vLLM backend's record: it runs vLLM alone
        if checked := engine_evidence.engine_version_checked(text):
            self.versions.setdefault(*checked)
            self._saw("paths", checked[0])  # installed, and the wrapper is about to run it
            return
        if m := _EXPLICIT_VERSION.search(text):
            if not _INSTRUCTION.search(text):
                self.versions.setdefault(m["engine"].lower(), m["version"])
                if not _LISTING.search(text):
                    self._saw("banner", m["engine"].lower())
            return
        shown = self.evidence.get("paths", set())
        unread = (("vllm" in text or "VLLM::" in text) and "vllm" not in shown) or (("sgl" in text or "Router (Rust)" in text) and "sglang" not in shown)
        engines, wrappers = engine_evidence.named_in_line(text, paths=unread)
        for engine in engines:
            self._saw("paths", engine)
        self.wrappers |= wrappers
        if built_for := engine_evidence.repr_module_engine(text):
            self._saw("paths", built_for)  # an object of a wrapper's module for one engine (its repr)

    def _observe_stream(self, stream: str) -> None:
        """A logger's name the normalizer took off the line into its stream key: Python logging's default format
        (`2025-11-02 13:17:04,315 - vllm.v1.engine.core_client - ERROR - …`) names the engine's module that logged
        (each engine logs through `logging.getLogger(__name__)`).  Read once per stream."""
        self._streams_read.add(stream)
        if "vllm" in stream or "sglang" in stream:
            engines, _ = engine_evidence.named_in_line(stream.replace("|", " "))
            for engine in engines:
                self._saw("paths", engine)
            if backend := engine_evidence.wrapper_logger_engine(stream):
                self._saw("paths", backend)

    def _observe_header(self, meta: LineMeta, stream: str) -> None:
        """What a record's logger header shows.  Once a header has shown all it can (vLLM's from a module that
        runs, SGLang's with rank tags), later records of that header are not read again."""
        if meta.ranks and meta.header == "sglang" and _SGLANG_HEADER_STREAM.match(stream):
            self._saw("header", "sglang")
            self._headers_decided.add("sglang")
        elif engine := engine_evidence.header_engine(meta):
            self._saw(_plain("format", meta), engine)
            if engine == "vllm":
                self._headers_decided.add("vllm")

    def _observe_embedded_record(self, text: str) -> None:
        """vLLM's record after other text on a line the normalizer read no record from (an indent, an inline code
        span, a re-logger's level: engine_evidence._EMBEDDED_VLLM_RECORD): its process prefix counts as one at a line's
        start does, its header as vLLM's header does."""
        by_process, by_header = engine_evidence.embedded_vllm_record(text)
        if by_process:
            self._saw("header", by_process)
        if by_header:
            self._saw("format", by_header)

    def _observe_process(self, process: str) -> None:
        """What a process prefix shows (each name read once)."""
        self._processes_read.add(process)
        if engine := engine_evidence.process_engine(process):
            self._saw("header", engine)
        if wrapper := engine_evidence.process_wrapper(process):
            self.wrappers.add(wrapper)

    def observe_user_command(self, command: str) -> None:
        """The launch command the user gave (--cmd): evidence of its engine like a logged one, and the latest."""
        if len(command) <= 8192 and (found := _command_in(command.strip())):
            self.command_engine = found[2]
            self._saw("command", self.command_engine)

    def _saw(self, kind: str, engine: str) -> None:
        self.evidence.setdefault(kind, set()).add(engine)

    @property
    def engine(self) -> str | None:
        """The engine the log shows, from positive evidence only; None when it shows none, or conflicting
        evidence of the strongest kind.  Conflicts are read with what they mean: frames of both engines are
        SGLang's (SGLang runs vLLM's layers; vLLM never runs SGLang's code), of two launch commands the latest is
        the launch, and of two engines' formats the one the failure's own frames and lines show."""
        evidence = self._evidence()
        for kind in EVIDENCE_KINDS:
            engines = evidence.get(kind)
            if not engines:
                continue
            if len(engines) == 1:
                return next(iter(engines))
            if kind == "frames":
                return "sglang"
            if kind == "command":
                return self.command_engine
            if kind in _FORMAT_KINDS:
                return self._failure_engine()
            return None
        # Nothing else decides: the failures' own messages, the weakest evidence; then shortened frames' modules and
        # functions; then, for messages both engines' code raises, the one engine the paste shows installed.
        found = engine_from_message.engine_raising(tuple(self.raised)) if self.raised else None
        if found is None and self.shortened_frames:
            found = engine_from_frames.engine_of_frames(self.shortened_frames)
        if found is None and len(self.versions) == 1 and self.raised and engine_from_message.raised_by_both_only(tuple(self.raised)):
            found = _installed_engine(*next(iter(self.versions.items())))
        if found is None:
            found = self._named_by_user()
        if found is None and len(self.listed) == 1:
            found = self._listed_engine()
        if found is None and not self.failures_seen and len(self.benchmark_backends) == 1:
            found = next(iter(self.benchmark_backends))  # last, in a clean log, the server a benchmark client says it drove
        return found

    def _named_by_user(self) -> str | None:
        """The one engine the user's name for the service or unit that printed the failures holds (weak evidence,
        read when nothing else decides), beside any message, one both engines raise or one no engine raises: not
        when a failure's message is only the other engine's (its code ran), when the failures show frames (none an
        engine's, or they would have decided: a client's or a trainer's script ran in it), when any line names the
        other engine's code or installation, or when a failure was printed by a process whose name names no engine
        (which failure the diagnosis is about is then not the name's to say)."""
        if len(self.services_named) != 1 or not self.failures_seen or self.unnamed_process_failed:
            return None
        engine = next(iter(self.services_named))
        other = ({"sglang", "vllm"} - {engine}).pop()
        if self.failure_frames_seen or other in self.engines_named:
            return None
        if any(engine_from_message.engines_raising_any((pair,)) == {other} for pair in self.raised[:engine_from_message.MAX_MESSAGES]):
            return None
        return engine

    def _listed_engine(self) -> str | None:
        """The one engine a listing of installed packages shows, when the paste shows nothing else of what ran (an
        installed package did not necessarily run): not when the failure shows frames (none an engine's, or frames
        would have decided: a training loop beside an installed vLLM), when any line names the other engine (its
        installation in a shape the listing's reader does not read, `-e /sgl-workspace/sglang/python`, sgl-kernel, a
        label `SGLang: v0.4.6.post4`; SGLang's images add `pip install vllm==0.8.5` for AWQ), when a program that
        drives an engine or trains is named (TRL, verl, DeepSpeed: their environments list vLLM as a dependency, and
        their own failures, an NCCL error, an OOM, print no frames of it), a wrapper ran, or the failures' other
        evidence names the other engine: a message only it raises (SGLang up to 0.4 required vLLM, so a SGLang user's
        listing may hold vLLM alone: vllm-project/vllm's pins in facts/requires.json), or a service named after it."""
        engine, version = next(iter(self.listed.items()))
        other = {"sglang", "vllm"} - {engine}
        if self.failure_frames_seen or other & (self.engines_named | self.versions.keys() | self.image_versions.keys()):
            return None
        if self.trainer_named or self.wrappers or any(
                driver.kind not in _PLUGIN_KINDS for driver in drivers_shown(self.driver_lines)):
            return None
        if self.raised and other & engine_from_message.engines_raising_any(tuple(self.raised)):
            return None
        if other & self.services_named:
            return None
        return _installed_engine(engine, version)

    def _evidence(self) -> dict[str, set[str]]:
        """The evidence by kind, the untagged SGLang header's sightings counted unless a line stamper wrote it."""
        merged = {kind: set(engines) for kind, engines in self.evidence.items() if kind not in PLAIN_HEADER_KINDS}
        if not self._stamped:
            for plain, kind in PLAIN_HEADER_KINDS.items():
                merged.setdefault(kind, set()).update(self.evidence.get(plain, ()))
        return merged

    def _failure_engine(self) -> str | None:
        """The engine the failures' own frames and lines show (both: SGLang, see `engine`), else None."""
        engines = self._evidence().get("frames")
        if not engines:
            return None
        return next(iter(engines)) if len(engines) == 1 else "sglang"

    @property
    def engine_version(self) -> str | None:
        """The version the log names for its engine (not one it names for the other engine's package)."""
        engine = self.engine
        if engine is not None:
            return self.versions.get(engine)
        return next(iter(self.versions.values())) if len(self.versions) == 1 else None

    def _image_version(self) -> str | None:
        """The release the decided engine's image tag names (inferred: the rejected-flag reading never judges by
        it, stop 49's after grading), else the one image's release when no engine is decided."""
        engine = self.engine
        if engine is not None:
            return self.image_versions.get(engine)
        return next(iter(self.image_versions.values())) if len(self.image_versions) == 1 else None

    def _mark(self, offset: int, kind: str) -> LaunchFacts:
        """The launch this line belongs to.  One launch often logs its command and then its server_args:
        one marker.  A kind seen twice, or a marker far from the last, is a new launch."""
        self.launch_lines.append(offset)
        if self._line is not None:  # the line being observed holds the command, or its last continuation
            self.startup.launched(self._line)
        if not self.markers or kind in self._marker_kinds or offset - self.markers[-1] > 64 * 1024:
            self.markers.append(offset)
            self._marker_kinds = set()
            self.model_size_lines = []  # an earlier launch's model config sizes another model (review of advice17, H1)
        self._marker_kinds.add(kind)
        return self.launches.setdefault(self.markers[-1], LaunchFacts())

    def _observe_memory_shares(self, text: str, *, prose: bool) -> None:
        """The memory shares a line names; in the user's words about memory, a bare share after one was named
        (`With 0.85 it runs out of CUDA memory instead.`, sgl-project/sglang#4330) is that flag's."""
        found = []
        if any(word in text for word in _MEMORY_SHARE_WORDS):
            found = [(f"--{m['name'].replace('_', '-').replace('utilisation', 'utilization')}", float(m["value"]))
                     for m in _MEMORY_SHARE.finditer(text)]
        elif prose and self.memory_shares and "memory" in text.lower() and (m := _BARE_SHARE.search(text)):
            found = [(self.memory_shares[-1][0], float(m["value"]))]
        self.memory_shares.extend(share for share in dict.fromkeys(found) if share not in self.memory_shares)

    def absorb(self, other: LaunchTracker, *, later_command_wins: bool) -> None:
        """Take what `other` knows.  The engine and its version: whichever was known first.  The command and
        server_args: `other`'s when `later_command_wins` (a later region of the same log is a later launch),
        otherwise only when this tracker has none (another host of the same launch)."""
        self.startup.absorb(other.startup)
        self.engine_hints = [*self.engine_hints, *other.engine_hints][-MAX_HINTS:]
        self.v0_fallback = other.v0_fallback or self.v0_fallback
        for kind, engines in other.evidence.items():
            self.evidence.setdefault(kind, set()).update(engines)
        self._stamped = self._stamped or other._stamped
        if later_command_wins or self.command_engine is None:
            self.command_engine = other.command_engine or self.command_engine
        for engine, version in other.versions.items():
            self.versions.setdefault(engine, version)
        for engine, version in other.listed.items():
            self.listed.setdefault(engine, version)
        self.wrappers |= other.wrappers
        self.switches_on |= other.switches_on
        self.architecture = self.architecture or other.architecture
        self.banner_model = self.banner_model or other.banner_model
        self.other_entry_point = self.other_entry_point or other.other_entry_point
        self.compile_cache = self.compile_cache or other.compile_cache
        self.memory_shares.extend(share for share in other.memory_shares if share not in self.memory_shares)
        self.raised.extend(pair for pair in other.raised if pair not in self.raised)
        self.shortened_frames.extend(frame for frame in other.shortened_frames if frame not in self.shortened_frames)
        self.services_named |= other.services_named
        self.unnamed_process_failed = self.unnamed_process_failed or other.unnamed_process_failed
        self.benchmark_backends |= other.benchmark_backends
        self.failures_seen = self.failures_seen or other.failures_seen
        self.failure_frames_seen = self.failure_frames_seen or other.failure_frames_seen
        self.engines_named |= other.engines_named
        self.trainer_named = self.trainer_named or other.trainer_named
        self.version_hint = self.version_hint or other.version_hint
        for engine, version in other.image_versions.items():
            self.image_versions.setdefault(engine, version)
        if later_command_wins or self.command is None:
            if other.command:
                self.command, self.command_wrapper, self.command_wrapper_kept = (
                    other.command, other.command_wrapper, other.command_wrapper_kept)
        if later_command_wins:
            self.server_args = other.server_args or self.server_args
        else:
            self.server_args = self.server_args or other.server_args
        room = MAX_GPU_LINES - len(self.gpu_lines)
        self.gpu_lines.extend(line for line in other.gpu_lines[:room] if line not in self.gpu_lines)
        room = MAX_GPU_LINES - len(self.package_lines)
        self.package_lines.extend(line for line in other.package_lines[:room] if line not in self.package_lines)
        room = MAX_GPU_LINES - len(self.driver_lines)
        self.driver_lines.extend(line for line in other.driver_lines[:room] if line not in self.driver_lines)
        room = MAX_MODEL_SIZE_LINES - len(self.model_size_lines)
        self.model_size_lines.extend(line for line in other.model_size_lines[:room] if line not in self.model_size_lines)
        room = MAX_PLUGIN_LINES - len(self.plugin_lines)
        self.plugin_lines.extend(line for line in other.plugin_lines[:room] if line not in self.plugin_lines)
        self.platform_line = self.platform_line or other.platform_line
        room = MAX_CONTAINER_LINES - len(self.container_lines)
        self.container_lines.extend(line for line in other.container_lines[:room] if line not in self.container_lines)
        for path in other.checkout_paths:
            self._add_checkout(path)
        for engine, location in other.editable_checkouts:
            self._add_editable(engine, location)
        self.launch_lines = sorted({*self.launch_lines, *other.launch_lines})
        for marker, facts in other.launches.items():
            mine = self.launches.setdefault(marker, LaunchFacts())
            if mine.command is None and facts.command:
                mine.command, mine.command_wrapper, mine.command_wrapper_kept = (
                    facts.command, facts.command_wrapper, facts.command_wrapper_kept)
            mine.server_args = mine.server_args or facts.server_args

    def observe_failure(self, failure: Failure) -> None:
        """Frame paths tell the engine and, roughly, its version; the failure's own header and process prefix
        tell whose logger printed it; frames, exceptions and prefixes tell a wrapper."""
        meta = failure.meta
        self.failures_seen = True
        if meta.header and (engine := engine_evidence.header_engine(meta)):
            self._saw(_plain("frames", meta), engine)
        if meta.process and (engine := engine_evidence.process_engine(meta.process)):
            self._saw("frames", engine)
        if meta.process and (named := engine_evidence.engine_in_service_name(meta.process)):
            self.services_named.add(named)  # the service that printed this failure
        elif meta.process and not engine_evidence.process_engine(meta.process):
            self.unnamed_process_failed = True  # a service, unit or actor named otherwise printed this failure
        self.wrappers |= engine_evidence.failure_wrappers(failure)
        if len(self.raised) < engine_from_message.MAX_MESSAGES:
            self.raised.extend(pair for pair in engine_from_message.raised_by(failure) if pair not in self.raised)
        for block in failure.exceptions:
            for frame in block.frames:
                path = frame.file
                if len(self.shortened_frames) < engine_from_frames.MAX_FRAMES and (kept := engine_from_frames.shortened(frame)):
                    self.shortened_frames.append(kept)
                self._observe_frame_path(path)
            self.failure_frames_seen = self.failure_frames_seen or bool(block.frames)

    def _observe_frame_path(self, path: str) -> None:
        """What a frame's path shows: the engine whose package, console script or wrapper module it is in, the release
        an egg's directory names, and roughly SGLang's version from its layout."""
        if ".egg/" in path and (egg := _EGG_RELEASE.search(path)):
            self.versions.setdefault(egg["engine"], egg["version"])
        if "/sglang/" in path:
            self._saw("frames", "sglang")
            if "/srt/arg_groups/" in path:
                self.version_hint = "0.5.23"
            elif "/srt/utils/common.py" in path and self.version_hint is None:
                self.version_hint = "0.5.9"
            elif path.endswith("/srt/utils.py") and self.version_hint is None:
                self.version_hint = "0.4.10.post2"
        elif "/vllm/" in path:
            self._saw("frames", "vllm")
        elif engine := (engine_evidence.console_script_engine(path) or engine_evidence.wrapper_module_engine(path)
                        or engine_evidence.package_frame_engine(path) or engine_evidence.relative_frame_engine(path)):
            self._saw("frames", engine)

    def _observe_rich_frame(self, text: str) -> None:
        """A frame of a traceback rich drew in a box (see _RICH_FRAME): its path read as a frame's, joined to the
        start rich wrapped onto the line above when the path was wider than the box."""
        start, self._rich_path_start = self._rich_path_start, ""
        if m := _RICH_FRAME.search(text):
            self._observe_frame_path(start + m["path"])
        elif (m := _RICH_PATH_START.search(text)) and "/" in m["start"] and not m["start"].endswith("/"):
            self._rich_path_start = m["start"]

    def segment_start(self, before: int) -> int:
        """Offset where the launch that includes `before` started (0 when unknown)."""
        start = 0
        for marker in self.markers:
            if marker <= before:
                start = marker
        return start

    def launch_at(self, offset: int) -> LaunchFacts:
        """What the launch that includes `offset` logged (nothing, when no launch began before it, except for
        a pasted repro: see below)."""
        starts = [marker for marker in self.markers if marker <= offset]
        if starts:
            return self.launches.get(max(starts), LaunchFacts())
        # A paste that gives the command after the error ("fails with X. Repro: <command>"): the source's only
        # launch, when it is a command that no server output followed (a relaunch logs its server_args).
        if len(self.markers) == 1:
            only = self.launches.get(self.markers[0])
            if only is not None and only.command and not only.server_args:
                return only
        return LaunchFacts()

    def _observe_startup(self, line: LogLine) -> None:
        """Where the log's start-up is (ingest/startup_trail.py): its lines saying the server came up, its settings
        dumps and start-up stages' lines (ingest/stages.py), its other start-up lines, the lines of content after."""
        text = line.text
        if not text or text.isspace():
            return
        if ("ready to roll" in text or "startup complete" in text) and READY_LINE.search(text):
            self.startup.ready(line)
            return
        platform = platform_named(text)
        if platform:
            self.startup.platform = platform
        stage = stages.stage_of(text) or stages.stage_of(text, "vllm")
        if stage is not None or (("args" in text or "with config: " in text) and len(text) <= MAX_DUMP_LINE
                                 and any(dump in text for dump in SETTINGS_DUMPS)):
            self.startup.start_line(line, stage.label if stage else "arguments parsed",
                                    done=stage is not None and stage.key in ENGINE_UP_STAGES)
        elif engine_up(text) or serves(text):
            self.startup.served(line)  # the engine's output: an offline run that has no readiness line came up
        elif is_waiting_line(text):
            self.startup.quiet_line(line)
        elif (progress := stages.progress_in(text)) is not None:
            self.startup.quiet_line(line, PROGRESS_STAGES.get(progress.label, ""))
        else:
            self.startup.other_line(line)

    def ended_in_startup(self) -> bool:
        """The log ends during the start-up (one source's log only: offsets of two logs do not compare)."""
        return self.startup.ended()

    def info(
        self, command_override: str | None = None, version_override: str | None = None, *, at: int | None = None
    ) -> LaunchInfo:
        """The launch as the log tells it: the latest one, or with `at` the one that includes that offset."""
        imaged = self._image_version()
        version = version_override or self.engine_version or imaged or self.version_hint
        version_source: Literal["log", "inferred", "user"] | None = (
            "user" if version_override else "log" if self.engine_version
            else "inferred" if imaged or self.version_hint else None
        )
        facts = (LaunchFacts(self.command, self.server_args, self.command_wrapper, self.command_wrapper_kept,
                             self.command_wrapped) if at is None
                 else self.launch_at(at))
        complete = facts.server_args is not None and not _ELIDED_ITEM.search(facts.server_args)
        server_args = tuple(parse_server_args(facts.server_args)) if facts.server_args else ()
        command = command_override or facts.command
        source: Literal["user", "log"] | None = "user" if command_override else ("log" if command else None)
        return LaunchInfo(
            engine=self.engine,
            engine_version=version,
            engine_version_source=version_source,
            image_version=imaged,
            command=command,
            command_source=source,
            command_wrapper=None if command_override else facts.command_wrapper,
            command_wrapper_kept=facts.command_wrapper_kept and not command_override,
            server_args=server_args,
            server_args_complete=complete,
            wrapper=engine_evidence.most_specific(self.wrappers),
            gpu_lines=tuple(self.gpu_lines),
            package_lines=tuple(self.package_lines),
            driver_lines=tuple(self.driver_lines),
            plugin_lines=tuple(self.plugin_lines),
            platform_line=self.platform_line,
            model_size_lines=tuple(self.model_size_lines),
            checkout_paths=tuple(self.checkout_paths),
            editable_checkouts=tuple(self.editable_checkouts),
            switches_on=tuple(sorted(self.switches_on)),
            memory_shares_seen=tuple(self.memory_shares),
            architecture=self.architecture,
            banner_model=self.banner_model,
            compile_cache=self.compile_cache,
            other_entry_point=self.other_entry_point,
            command_wrapped=facts.command_wrapped and not command_override,
            versions_named=tuple(self.versions.items()),
            container_lines=tuple(self.container_lines),
            # only what the log left before it ends without the server up: a healthy run's hints are no lead
            engine_hints=tuple(EngineWords(text) for offset, text in self.engine_hints
                               if offset > self.startup.ready_at and not self.startup.done),
            v0_fallback=self.v0_fallback,
            up_before=self.startup.up_before(at),
        )


# vLLM 0.8-0.10 engine/arg_utils.py _raise_or_fallback: "%s is not supported by the V1 Engine. Falling back to V0. "
# (then "We recommend to remove %s from your config in favor of the V1 Engine." when a setting can be dropped).
_V0_FALLBACK = compile_lazily(r"(?:^|\]\s|:\s)(?P<feature>[^\]]{1,200}?) is not supported by the V1 Engine\. Falling back to V0\b")

# vLLM's torch.compile cache: vllm/compilation/backends.py logs "Using cache directory: {dir} for vLLM's torch.compile",
# and the Inductor modules compiled into it run from there (…/torch_compile_cache/<hash>/rank_0_0/inductor_cache/…).
COMPILE_CACHE_DIR = "torch_compile_cache"
_PATH_END = frozenset(" \t'\"(),;=[]")


def compile_cache_in(text: str) -> str | None:
    """The torch.compile cache directory a line or a frame's file names: the path up to and including
    `torch_compile_cache` (absolute or under ~), else None."""
    at = text.find(COMPILE_CACHE_DIR)
    if at < 0:
        return None
    start = at
    while start > 0 and text[start - 1] not in _PATH_END:
        start -= 1
    return text[start:at + len(COMPILE_CACHE_DIR)] if text[start:start + 1] in ("/", "~") else None


def parse_server_args(body: str) -> list[tuple[str, str]]:
    """Split `ServerArgs(a=1, b='x, y', c=[1, 2])` or `{'a': 1, ...}` into (name, value repr)."""
    if body.startswith("ServerArgs("):
        inner, sep = body[len("ServerArgs(") : -1], "="
    else:
        inner, sep = body[1:-1], ":"
    pairs: list[tuple[str, str]] = []
    for item in _split_top_level(inner):
        name, found, value = item.partition(sep)
        if not found:
            continue
        name = name.strip().strip("'\"")
        if name.isidentifier():
            pairs.append((name, value.strip()))
    return pairs


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside quotes or brackets."""
    items: list[str] = []
    depth = 0
    quote: str | None = None
    escaped = False
    current: list[str] = []
    for char in text:
        if quote:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        items.append("".join(current))
    return items


def _command_in(text: str) -> tuple[str, str, str] | None:
    """The launch command a line holds (from its environment assignments and its program's path to the line's end),
    the text in front of it, and the engine its program is (the module's package, `sglang` or `vllm` of the command
    word: never a path's or an environment's name, `/opt/vllm-venv/bin/python -m sglang.bench_one_batch` runs SGLang)."""
    m = _PROGRAM.search(text)
    if m is None:
        return None
    start = m.start()
    if start and text[start - 1] == "/":
        while start and (text[start - 1].isalnum() or text[start - 1] in "/._-~+$"):
            start -= 1  # the program's path: `/opt/venv/bin/python3`
    while start and text[start - 1].isspace():
        word_end = len(text[:start].rstrip())
        word_start = max(text.rfind(" ", 0, word_end), text.rfind("\t", 0, word_end)) + 1
        # a label, a quote or a backtick right before the assignment (`执行命令：VLLM_USE_MODELSCOPE=true vllm serve …`)
        assignment_start = max(word_start, *(text.rfind(mark, word_start, word_end) + 1 for mark in _OPENING_MARKS))
        if not _ENV_ASSIGNMENT.fullmatch(text, assignment_start, word_end):
            break
        start = assignment_start  # an environment assignment in front: `CUDA_VISIBLE_DEVICES=0,1 python …`
        if assignment_start > word_start:
            break
    engine = m["command"] or m["module"].split(".", 1)[0]
    return text[start:].strip(), text[:start], engine


def _lexes(command: str) -> bool:
    """The command reads as shell words: every quote it opens, it closes."""
    try:
        split_words(command)
    except ValueError:
        return False
    return True


def _same_engine_words(whole: str, command: str) -> bool:
    """The engine's part of `whole` (a wrapper's words, then `command`) reads as `command` alone does: the wrapper's
    words hold no entry point of their own (an image named `…-serve` would move where the command is split)."""
    try:
        inner, outer = CommandLine.parse(command), CommandLine.parse(whole)
    except ValueError:
        return False
    return (inner.positional, inner.options, inner.prefix) == (outer.positional, outer.options, outer.prefix[-len(inner.prefix):])


def _frame_line(text: str) -> bool:
    """A traceback's or a faulthandler dump's frame line, whole (the failure's frames hold its path)."""
    return bool(line_shapes.FRAME_LINE.match(text) or line_shapes.FAULT_FRAME_LINE.match(text))


def engine_version_stated(text: str) -> tuple[str, str] | None:
    """(engine, version) a label (`vLLM: v0.8.5`) or pip list's row (`vllm  0.10.0+empty  /vllm-workspace/vllm`) states,
    else None.  A row is the name, the version and at most an editable install's location; a label's line may go on
    (`vLLM: v0.8.5 (custom backend version in GPUStack)`)."""
    m = _VERSION_LABEL.search(text)
    if m is None or _INSTRUCTION.search(text):
        return None
    rest = m["rest"].strip()
    labelled = text[m.end("engine"):m.start("version")].lstrip().startswith(":")
    if not labelled and rest and (" " in rest or not rest.startswith(("/", "~", "."))):
        return None  # after `vllm 0.7.2`, words: a sentence, not a row
    return m["engine"].lower(), m["version"]
