"""A launch command as shell words, and the flag operations a fix applies to it.

Only ever parsed and rewritten, never run.  Two origins, two ways to print it back:

- The user's own command (`--cmd`) is trusted: each word is printed as the user wrote it, so `$HF_HOME`,
  `"$(cat key)"`, `HF_HOME="/a b"` and a trailing `| tee server.log` still mean what they meant, and only the
  flags a fix changes are new (and quoted).
- A command read from a log is not: a hostile log could hold `"$(rm -rf ~)"`.  `bash -x` prints words already
  expanded, so each word is printed quoted from its value (`shlex.quote`), and anything after a pipe or a
  redirection is dropped.  An environment assignment keeps its form: `HF_HOME='/a b' python …`, never
  `'HF_HOME=/a b' python …` (which would be a command name).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from logsleuth.facts.entry_points import SGLANG_SERVER_FLAG_MODULES
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENV_NAME, FlagOp, LaunchInfo

# The word that ends a command's program: the server's, or another program of the engine that takes its arguments
# (facts/entry_points.py); `vllm bench throughput` ends at its benchmark's name.
_ENTRYPOINT_ENDS = ("sglang.launch_server", "api_server", "serve", *SGLANG_SERVER_FLAG_MODULES)
_VLLM_BENCHMARKS = frozenset({"throughput", "latency"})
_VLLM_SERVE_MODEL_FLAGS = frozenset({"--model"})
_OPERATOR_CHARS = "|&;<>()"
_FD_REDIRECTION = compile_lazily(r"\d+[<>]")  # `2>&1`, `1> log`; `>`, `<` and `&>` start with an operator character
_PARAMETER = compile_lazily(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")  # the name after a bare `$`


def _is_flag(token: str) -> bool:
    # `-1` and `-0.5` are values, not flags.
    return token.startswith("-") and len(token) > 1 and not token[1:2].isdigit() and token[1:2] != "."


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word of a launch command."""

    raw: str  # as written: quotes, escapes and expansions kept
    value: str  # what the shell passes, for a literal word; the text without quotes otherwise
    literal: bool = True  # False: holds an expansion ($VAR, $(…), `…`) whose value is unknown here

    @classmethod
    def of(cls, value: str) -> Word:
        """A word logsleuth adds: quoted so that the shell passes exactly `value`."""
        return cls(shlex.quote(value), value)


class _Lexer:
    """POSIX shell words up to the first control operator or redirection; what follows is kept raw.

    Handles single and double quotes, backslashes, backslash-newline continuations, `#` comments, `$VAR`,
    `${…}`, `$(…)` (nested) and backticks.  Raises ValueError on an unbalanced quote, like shlex."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def words(self) -> tuple[list[Word], str]:
        words: list[Word] = []
        text = self.text
        while True:
            self._skip_blanks()
            if self.i >= len(text):
                return words, ""
            char = text[self.i]
            if char == "#":
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
                continue
            if char in _OPERATOR_CHARS or _FD_REDIRECTION.match(text, self.i):
                return words, text[self.i :].strip()
            words.append(self._word())

    def _skip_blanks(self) -> None:
        text = self.text
        while self.i < len(text):
            if text.startswith("\\\n", self.i):
                self.i += 2
            elif text[self.i] in " \t\n\r":
                self.i += 1
            else:
                return

    def _word(self) -> Word:
        text = self.text
        raw: list[str] = []
        value: list[str] = []
        literal = True
        while self.i < len(text):
            char = text[self.i]
            if char in " \t\n\r" or char in _OPERATOR_CHARS:
                break
            if char == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2  # a continuation inside a word joins it
                    continue
                escaped = text[self.i + 1 : self.i + 2]
                raw.append(text[self.i : self.i + 2])
                value.append(escaped)
                self.i += 2
            elif char == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise ValueError("No closing quotation")
                raw.append(text[self.i : end + 1])
                value.append(text[self.i + 1 : end])
                self.i = end + 1
            elif char == '"':
                start = self.i
                inner, expands = self._double_quoted()
                raw.append(text[start : self.i])
                value.append(inner)
                literal = literal and not expands
            elif char in "$`":
                start = self.i
                self._expansion()
                raw.append(text[start : self.i])
                value.append(text[start : self.i])
                literal = False
            else:
                raw.append(char)
                value.append(char)
                self.i += 1
        return Word("".join(raw), "".join(value), literal)

    def _double_quoted(self) -> tuple[str, bool]:
        text = self.text
        self.i += 1
        out: list[str] = []
        expands = False
        while self.i < len(text):
            char = text[self.i]
            if char == '"':
                self.i += 1
                return "".join(out), expands
            if char == "\\" and text[self.i + 1 : self.i + 2] in ('"', "\\", "$", "`", "\n"):
                if text[self.i + 1] != "\n":
                    out.append(text[self.i + 1])
                self.i += 2
            elif char in "$`":
                start = self.i
                self._expansion()
                out.append(text[start : self.i])
                expands = True
            else:
                out.append(char)
                self.i += 1
        raise ValueError("No closing quotation")

    def _expansion(self) -> None:
        """Skip one `$…` or backtick expansion (nesting and quotes inside `$(…)` respected)."""
        text = self.text
        if text[self.i] == "`":
            end = text.find("`", self.i + 1)
            if end < 0:
                raise ValueError("No closing backquote")
            self.i = end + 1
            return
        self.i += 1  # the `$`
        opener = text[self.i : self.i + 1]
        if opener in ("(", "{"):
            closer = ")" if opener == "(" else "}"
            depth = 0
            while self.i < len(text):
                char = text[self.i]
                if char in "'\"" and opener == "(":
                    end = text.find(char, self.i + 1)
                    if end < 0:
                        raise ValueError("No closing quotation")
                    self.i = end + 1
                    continue
                if char == opener:
                    depth += 1
                elif char == closer:
                    depth -= 1
                    if depth == 0:
                        self.i += 1
                        return
                self.i += 1
            raise ValueError(f"No closing {closer!r}")
        m = _PARAMETER.match(text, self.i)
        if m:
            self.i = m.end()


def split_words(text: str) -> tuple[list[Word], str]:
    """The shell words of a command, and the raw text from its first control operator or redirection on."""
    return _Lexer(text).words()


@dataclass(frozen=True)
class CommandLine:
    """A launch command: everything up to the entry point, positional arguments, then flags with values."""

    head: tuple[Word, ...]  # env assignments, the interpreter, `-m module`, the entry point
    positional_words: tuple[Word, ...]  # right after the entry point (a vLLM-style model)
    option_words: tuple[tuple[Word, tuple[Word, ...]], ...]  # (flag, values) in order
    trusted: bool = False  # the user's own command: words print as written (see the module docstring)
    suffix: str = ""  # `| tee log`, `> log 2>&1`: kept, as written, for a trusted command only

    @classmethod
    def parse(cls, command: str, boolean_flags: frozenset[str] = frozenset(), *, trusted: bool = False) -> CommandLine:
        words, suffix = split_words(command)
        split = 0
        for index, word in enumerate(words):
            if word.value.endswith(_ENTRYPOINT_ENDS) or (word.value == "serve" and index > 0) or (
                    word.value in _VLLM_BENCHMARKS and index > 1 and words[index - 1].value == "bench"):
                split = index + 1
                break
        head, rest = words[:split], words[split:]
        positional: list[Word] = []
        while rest and not _is_flag(rest[0].value):
            positional.append(rest.pop(0))
        options: list[tuple[Word, tuple[Word, ...]]] = []
        while rest:
            flag = rest.pop(0)
            if "=" in flag.value and flag.value.startswith("--"):
                name, _, value = flag.value.partition("=")
                raw_value = flag.raw.partition("=")[2]
                options.append((Word(name, name), (Word(raw_value, value, flag.literal),)))
                continue
            values: list[Word] = []
            if flag.value not in boolean_flags:
                while rest and not _is_flag(rest[0].value):
                    values.append(rest.pop(0))
            options.append((flag, tuple(values)))
        return cls(tuple(head), tuple(positional), tuple(options), trusted, suffix if trusted else "")

    # -- reading -------------------------------------------------------------------------
    @property
    def prefix(self) -> tuple[str, ...]:
        return tuple(word.value for word in self.head)

    @property
    def environment(self) -> dict[str, str]:
        """The environment assignments before the program (`VLLM_USE_V1=0 vllm serve …`): name -> value, the last of a
        name given twice (what the shell sets)."""
        return {name: value for name, equals, value in (word.value.partition("=") for word in self.head)
                if equals and ENV_NAME.fullmatch(name)}

    @property
    def positional(self) -> tuple[str, ...]:
        return tuple(word.value for word in self.positional_words)

    @property
    def options(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple((flag.value, tuple(v.value for v in values)) for flag, values in self.option_words)

    def has(self, flag: str) -> bool:
        return any(word.value == flag for word, _ in self.option_words)

    def value(self, flag: str) -> str | None:
        for word, values in self.option_words:
            if word.value == flag:
                return values[0].value if values else ""
        return None

    def int_value(self, flag: str) -> int | None:
        raw = self.value(flag)
        try:
            return int(raw) if raw not in (None, "") else None
        except ValueError:
            return None

    # -- rewriting -----------------------------------------------------------------------
    def apply(self, ops: tuple[FlagOp, ...]) -> CommandLine:
        options = list(self.option_words)
        positional = list(self.positional_words)
        for op in ops:
            index = next((i for i, (word, _) in enumerate(options) if word.value == op.flag), None)
            if op.op == "remove":
                if not _is_flag(op.flag):  # a stray positional argument
                    match = next((word for word in positional if word.value == op.flag), None)
                    if match is not None:
                        positional.remove(match)
                    else:  # parsed as an extra value of the flag before it: keep that flag's own value
                        options = [
                            (word, values[:1] + tuple(v for v in values[1:] if v.value != op.flag))
                            for word, values in options
                        ]
                    continue
                options = [(word, values) for word, values in options if word.value != op.flag]
            elif op.op == "rename":
                if index is not None and op.to:
                    values = (Word.of(op.value),) if op.value is not None else options[index][1]
                    options[index] = (Word.of(op.to), values)
            elif op.op in ("add", "set"):
                if op.op == "set" and op.value is None:
                    continue  # a value only the user can choose: the fix lists it in needs_input, no command
                if op.value and op.flag in self.positional_model_flags:
                    # `vllm serve MODEL`: the positional is what the engine reads, whatever --model says
                    # (vllm/entrypoints/cli/serve.py sets args.model = args.model_tag); the model goes there
                    options = [(word, values) for word, values in options if word.value not in self.positional_model_flags]
                    positional = [Word.of(op.value), *[word for word in positional if word.value != op.value][1:]]
                    continue
                new_values = (Word.of(op.value),) if op.value not in (None, "") else ()
                if op.value is not None:
                    # a positional model becomes --model-path MODEL
                    positional = [word for word in positional if word.value != op.value]
                if index is None:
                    options.append((Word.of(op.flag), new_values))
                else:
                    # argparse keeps a flag's last value: the last occurrence takes the new one, earlier ones go
                    last = max(i for i, (word, _) in enumerate(options) if word.value == op.flag)
                    options[last] = (options[last][0], new_values)
                    options = [item for i, item in enumerate(options) if i == last or item[0].value != op.flag]
        return replace(self, positional_words=tuple(positional), option_words=tuple(options))

    @property
    def positional_model_flags(self) -> frozenset[str]:
        """The flags whose setting the positional model overrides: `vllm serve MODEL` reads MODEL (model_tag) over
        --model in every release with a `serve` command (vllm/entrypoints/cli/serve.py), and from 0.11 moves a
        --model in front as a second positional, which argparse refuses (vllm/utils/argparse_utils.py).  SGLang's
        `sglang serve MODEL` prepends --model-path MODEL, so a later --model-path wins there: nothing to move."""
        words = self.prefix
        if len(words) >= 2 and words[-1] == "serve" and words[-2].rsplit("/", 1)[-1] == "vllm":
            return _VLLM_SERVE_MODEL_FLAGS
        return frozenset()

    def with_env(self, env: tuple[tuple[str, str], ...]) -> CommandLine:
        """Set environment variables in front of the command; an assignment already there is replaced.
        A name that is not a shell variable name is refused: it could only be log text."""
        head = list(self.head)
        for name, value in env:
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"not an environment variable name: {name!r}")
            word = Word(f"{name}={shlex.quote(value)}", f"{name}={value}")
            index = next((i for i, w in enumerate(head) if w.value.partition("=")[0] == name and "=" in w.value), None)
            if index is None:
                head.insert(0, word)
            else:
                head[index] = word
        return replace(self, head=tuple(head))

    def render(self) -> str:
        words = [self._render_word(word, assignment=True) for word in self.head]
        words.extend(self._render_word(word) for word in self.positional_words)
        for flag, values in self.option_words:
            words.append(self._render_word(flag))
            words.extend(self._render_word(word) for word in values)
        if self.suffix:
            words.append(self.suffix)
        return " ".join(words)

    def _render_word(self, word: Word, *, assignment: bool = False) -> str:
        if self.trusted:
            return word.raw
        name, equals, value = word.value.partition("=")
        if assignment and equals and ENV_NAME.fullmatch(name):
            return f"{name}={shlex.quote(value)}"
        return shlex.quote(word.value)


def flag_value(launch: LaunchInfo, flag: str) -> str | None:
    """The flag's value in this launch ("" for a switch given without one); None when the launch does not
    set it.  From the command line first (what the user typed), then the `server_args=` dump."""
    if launch.command:
        value = CommandLine.parse(launch.command).value(flag)
        if value is not None:
            return value
    import ast  # here: only a launch read from a `server_args=` dump needs it

    field = flag.lstrip("-").replace("-", "_")
    for name, raw in launch.server_args:
        if name == field:
            try:
                value = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                return raw
            return None if value is None or value is False else "" if value is True else str(value)
    return None
