"""The launch's own settings a failure's message speaks of (issue 28: general guidance that reaches the cause the
paste shows, not only the kind of cause).

An engine's refusal often names, in its own words, the setting it is about, while the general checks of its category
can only say which kind of setting: "Currently HybridAttentionBackend does not support speculative decoding."
(sgl-project/sglang#9330, launched with --attention-backend trtllm_mla --prefill-attention-backend flashinfer
--speculative-algorithm EAGLE), "Invalid attention backend for cuda, with use_v1: False use_mla: False"
(vllm-project/vllm#14320, `VLLM_ATTENTION_BACKEND=TORCH_SDPA vllm serve …`), "The input size is not aligned with the
quantized weight shape. This can be caused by too large tensor parallel size." (QwenLM/Qwen3-VL#236,
--tensor-parallel-size 2).  The launch says which of the user's own settings the message speaks of, with the value
given.  A setting counts when the message says its name (`--attention-backend` in "attention backend", an engine's
environment variable `VLLM_ATTENTION_BACKEND` likewise, a switch `--enable-lora` in "LoRA") or its value
(`--kv-cache-dtype fp8_e5m2` in "fp8_e5m2 is not supported").

Only the user's own words are repeated: the flags and engine environment variables of the command the log or --cmd
gives, never a secret's value.  They name no flag the release may lack (the release took them: the failure is past
its argument parser), so they are not judged against the catalogs, as fixes/release_flags.py leaves the command's
own flags alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.command_line import CommandLine
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure, LaunchInfo
from logsleuth.reasoning.setting_paths import GENERIC_WORDS, switch_key
from logsleuth.redact import secret_by_name

ENGINE_ENV_PREFIXES = ("VLLM_", "SGLANG_", "SGL_")
# A flag's trailing words that qualify what it sets rather than name it: `--tensor-parallel-size` speaks of "tensor
# parallel" ("too large tensor parallel size", "tensor parallelism").
_QUALIFIERS = frozenset({"size", "num", "path", "mode", "type", "len", "length", "name", "level", "dir", "file",
                         "kwargs", "args", "config"})
# Words that name no setting alone, beside those that name no feature's code (setting_paths.GENERIC_WORDS): torch's
# own messages speak of tensors, data and pipelines about anything.
_COMMON_WORDS = GENERIC_WORDS | frozenset({"tensor", "data", "pipeline", "expert", "experts", "algorithm", "remote",
                                           "code", "trust", "served", "shared", "node", "nodes", "rank", "seed",
                                           "dtype", "true", "false", "none", "default", "value", "graph", "device",
                                           "block", "prefix", "page", "limit", "allowed", "random", "override",
                                           "generation"})
_MIN_WORD = 4  # a single word names a setting from this length on (`lora`, `speculative`, `quantization`)
_MIN_VALUE = 3  # a value names a setting from this length on, with a letter in it (`fp8`, `eagle`, `trtllm_mla`)
_MAX_SETTINGS = 6
_CAMEL = compile_lazily(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = compile_lazily(r"[^a-z0-9]+")
_LETTER = compile_lazily(r"[a-z]")
_PATH = compile_lazily(r"^(?:(?:~|\.{1,2})?/|[A-Za-z]:\\)\S*$|^[\w.-]+(?:/[\w.-]+){2,}/?$")  # /abs, ./rel, ~/x, C:\x, a/b/c


@dataclass(frozen=True, slots=True)
class NamedSetting:
    """A setting of the launch the message speaks of: `--attention-backend trtllm_mla`, said as 'attention backend'."""

    name: str  # `--attention-backend`, or `VLLM_ATTENTION_BACKEND` for an environment variable
    value: str  # as the command gives it ("" for a switch)
    said_as: str  # the words of the message that name it
    environment: bool = False

    def shown(self) -> str:
        if self.environment:
            return f"{self.name}={self.value}"
        return f"{self.name} {self.value}".rstrip()


def normalized(text: str) -> str:
    """`text` as lower-case words between spaces: CamelCase split (`HybridAttentionBackend` is "hybrid attention
    backend"), `_`, `-`, `.` and punctuation read as spaces, so a flag's words are found whatever the spelling."""
    return f" {' '.join(_SEPARATORS.split(_CAMEL.sub(' ', text).lower())).strip()} "


def _name_phrases(key: str) -> list[str]:
    """The phrases a setting's name goes by in a message: all its words, without its qualifying last words, without
    its first word when two or more remain (`--prefill-attention-backend` is also an "attention backend"), and its
    first word alone when that names a feature (`speculative` of `--speculative-num-steps`)."""
    words = [word for word in _SEPARATORS.split(key.lower()) if word]
    phrases = [" ".join(words)]
    named = list(words)
    while len(named) > 1 and named[-1] in _QUALIFIERS:
        named.pop()
    phrases.append(" ".join(named))
    if len(named) > 2 or (len(named) == 2 and named[0] in _COMMON_WORDS | {"max", "min", "prefill", "decode", "draft"}):
        phrases.append(" ".join(named[1:]))
    if words and len(words[0]) >= _MIN_WORD and words[0] not in _COMMON_WORDS and words[0] not in _QUALIFIERS:
        phrases.append(words[0])
    return [phrase for phrase in dict.fromkeys(phrases)
            if phrase and (" " in phrase or (len(phrase) >= _MIN_WORD and phrase not in _COMMON_WORDS))]


def _said(phrase: str, message: str) -> bool:
    """`phrase` in the normalized `message`: a single word whole, a phrase of several from a word's start on (its last
    word may go on: "tensor parallel" in "tensor parallelism")."""
    if " " in phrase:
        return f" {phrase}" in message
    return f" {phrase} " in message


def _value_said(value: str, message: str) -> str | None:
    words = normalized(value).strip()
    if len(words) < _MIN_VALUE or not _LETTER.search(words) or "/" in value or words in _COMMON_WORDS:
        return None
    return words if f" {words} " in message else None


def _setting(name: str, value: str, key: str, message: str, environment: bool = False) -> NamedSetting | None:
    if secret_by_name(name, value) or _PATH.search(value):
        # A secret is never repeated; a path (the model's, the tokenizer's, a file's) is where a thing is, not a
        # setting to change or leave out: the category's own checks speak of it.
        return None
    said = next((phrase for phrase in _name_phrases(key) if _said(phrase, message)), None) or _value_said(value, message)
    return NamedSetting(name, value, said, environment) if said else None


def settings_the_message_names(failure: Failure, launch: LaunchInfo) -> list[NamedSetting]:
    """The settings of the launch's command (its flags, and the engine's environment variables set before it) whose
    name or value the failure's exception messages say, in the command's order."""
    if launch.command is None:
        return []
    message = normalized(" ".join(block.message for block in failure.exceptions if block.message))
    if not message.strip():
        return []
    command = CommandLine.parse(launch.command)
    found: list[NamedSetting] = []
    for name, value in command.environment.items():
        if name.startswith(ENGINE_ENV_PREFIXES):
            key = name.removeprefix(next(p for p in ENGINE_ENV_PREFIXES if name.startswith(p)))
            if (setting := _setting(name, value, key, message, environment=True)) is not None:
                found.append(setting)
    for flag, values in command.options:
        if flag.startswith("--") and (setting := _setting(flag, " ".join(values), switch_key(flag), message)) is not None:
            found.append(setting)
    return list({setting.name: setting for setting in found}.values())[:_MAX_SETTINGS]
