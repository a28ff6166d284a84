"""What `check` is given, as words: a whole launch command, bare flags, or an assistant's answer in prose.

A whole command (`python -m sglang.launch_server …`, `sglang serve …`) is split with the shell lexer the fixes use
(command_line.py), so `--api-key "$KEY"` and `| tee log` mean what they mean in a shell.  An answer in prose is
read for the flags it names: inside code spans when it has any (assistants put flags there), else in the whole
text, and a flag named after "remove", "drop", "without"… in the same clause is one the answer takes away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from logsleuth.command_line import split_words
from logsleuth.lazyre import compile_lazily

Entry = Literal["launch_server", "serve"]

_ASSIGNMENT = compile_lazily(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = compile_lazily(r"(?:^|/)python[\d.]*$")
# The start of a launch command inside a line of text (env assignments before it are taken by `_command_start`).
_LAUNCH = compile_lazily(  # starts only where a word starts: linear on a long word (a search from inside it is not)
    r"(?<!\S)(?:\S*python[\d.]*\s+-m\s+(?:sglang\.launch_server|vllm\.entrypoints\.openai\.api_server)"
    r"|(?<![\w/.-])\S*(?:sglang|vllm)\s+serve)(?=\s|$)"
)
_CODE_BLOCK = compile_lazily(r"```[^\n]*\n(.*?)```", re.DOTALL)
_CODE_SPAN = compile_lazily(r"`([^`\n]+)`")
_CLAUSE_END = compile_lazily(r"[.;!?](?:\s|$)|\n|,\s*(?:and|then|but)\s|\s(?:and|then)\s(?=(?:add|set|use|pass|give)\b)")
_REMOVAL = compile_lazily(r"\b(?:remove|removing|drop|dropping|delete|omit|leave\s+out|get\s+rid\s+of|without|"
                      r"don'?t\s+(?:pass|use|set)|do\s+not\s+(?:pass|use|set)|no\s+longer|unset|instead\s+of|replace)\b",
                      re.IGNORECASE)
_ADDING = compile_lazily(r"\b(?:add|adding|set|use|using|pass|give|keep|with)\b", re.IGNORECASE)
_FLAG_IN_TEXT = compile_lazily(r"(?<![\w-])--[A-Za-z][\w-]*(?:=\S+)?")
_CONNECTORS = ("to", "=", "at", "of", "as")  # "set --x to 3"
_TRIM = "`'\",;:()[]{}<>*"


@dataclass(frozen=True, slots=True)
class Command:
    """A command line (or bare flags) as `check` reads it."""

    env: tuple[tuple[str, str], ...]  # NAME=value before the program
    program: str | None  # "python3", "/opt/venv/bin/python", "sglang"; None for bare flags
    entry: Entry | None  # None for bare flags
    engine: str  # "sglang", or "vllm" for a vLLM command
    args: tuple[str, ...]  # the words after the entry point
    literal: bool = True  # False: a word holds $VAR, $(…) or `…`, whose value is not known here

    @property
    def whole(self) -> bool:
        return self.entry is not None

    @property
    def text(self) -> str:
        import shlex

        head = [f"{name}={shlex.quote(value)}" for name, value in self.env]
        if self.program is not None:
            head.append(shlex.quote(self.program))
            head.extend(["-m", "sglang.launch_server"] if self.entry == "launch_server" and _PYTHON.search(self.program) else
                        ["serve"] if self.entry == "serve" else [])
        return " ".join([*head, *(shlex.quote(arg) for arg in self.args)])


def parse_words(words: list[str] | tuple[str, ...], literal: bool = True) -> Command:
    """Words as a shell would pass them (after `--` on our command line): a command, or bare flags."""
    words = list(words)
    env: list[tuple[str, str]] = []
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env.append((name, value))
    if words[:1] == ["env"]:
        return parse_words(words[1:], literal)
    if not words or words[0].startswith("-"):
        return Command(tuple(env), None, None, "sglang", tuple(words), literal)
    program = words[0]
    if _PYTHON.search(program) and words[1:3] == ["-m", "sglang.launch_server"]:
        return Command(tuple(env), program, "launch_server", "sglang", tuple(words[3:]), literal)
    if _PYTHON.search(program) and words[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]:
        return Command(tuple(env), program, "serve", "vllm", tuple(words[3:]), literal)
    name = program.rsplit("/", 1)[-1]
    if name in ("sglang", "vllm") and words[1:2] == ["serve"]:
        return Command(tuple(env), program, "serve", name, tuple(words[2:]), literal)
    raise ValueError(f"not an SGLang launch command or flags: {' '.join(words[:3])} …")


def parse_command_text(text: str) -> Command:
    """One command line as a shell reads it (up to a pipe or redirection)."""
    joined = re.sub(r"\\\r?\n", " ", text)
    words, _suffix = split_words(joined)
    return parse_words([word.value for word in words], all(word.literal for word in words))


@dataclass(frozen=True, slots=True)
class Suggestion:
    """An assistant's answer: a whole command it gives, or the flags it adds (with values) and removes."""

    command: Command | None  # a whole launch command in the text
    added: tuple[str, ...]  # words: `--flag`, values, `--flag=value`, in the order given
    removed: tuple[str, ...]  # flags the answer says to remove


def read_suggestion(text: str) -> Suggestion:
    """The command or flag changes an answer gives.  A launch command in it wins over the flags of its prose."""
    for line in _logical_lines(_code_text(text) or text):
        found = _LAUNCH.search(line)
        if found is not None:
            start = _with_assignments(line, found.start())
            try:
                return Suggestion(parse_command_text(line[start:]), (), ())
            except ValueError:
                continue  # unbalanced quotes in prose: read its flags instead
    blocks = _CODE_BLOCK.findall(text)
    prose = _CODE_BLOCK.sub("\n", text)
    in_code = bool(blocks) or bool(_CODE_SPAN.search(prose))
    added = [word for block in blocks for word in _words(block)]
    removed: list[str] = []
    for clause in _CLAUSE_END.split(prose):
        pieces = _spans_in(clause, _CODE_SPAN.findall(clause)) if in_code else _prose_pieces(clause)
        for start, piece in pieces:
            words = _words(piece)
            if _removing_at(clause, start):
                removed.extend(word.split("=", 1)[0] for word in words if word.startswith("--"))
            else:
                added.extend(words if in_code else _flag_words(words))
    return Suggestion(None, tuple(added), tuple(dict.fromkeys(removed)))


def _removing_at(clause: str, position: int) -> bool:
    """Whether the verb nearest before `position` in the clause takes flags away ("remove", "instead of" …)."""
    verbs = [(m.start(), True) for m in _REMOVAL.finditer(clause, 0, position)]
    verbs += [(m.start(), False) for m in _ADDING.finditer(clause, 0, position)]
    return max(verbs)[1] if verbs else False


def _prose_pieces(clause: str) -> list[tuple[int, str]]:
    """A clause of plain prose cut before each flag, so that each flag has the verbs before it."""
    starts = [m.start() for m in _FLAG_IN_TEXT.finditer(clause)]
    return [(start, clause[start:end]) for start, end in zip(starts, [*starts[1:], len(clause)], strict=False)]


def _words(text: str) -> list[str]:
    return [word for word in (raw.strip(_TRIM) for raw in text.split()) if word]


def _spans_in(clause: str, spans: list[str]) -> list[tuple[int, str]]:
    """Each span with where it starts in the clause (so that a removal verb before it can be seen)."""
    out = []
    position = 0
    for span in spans:
        index = clause.find(span, position)
        out.append((max(index, 0), span))
        position = max(index, 0) + len(span)
    return out


def _flag_words(words: list[str]) -> list[str]:
    """In plain prose: each flag and the word after it (a value candidate; the catalog decides)."""
    out: list[str] = []
    for index, word in enumerate(words):
        if word.startswith("--"):
            out.append(word)
            after = index + 2 if index + 1 < len(words) and words[index + 1] in _CONNECTORS else index + 1
            following = words[after] if after < len(words) else None
            if following is not None and not following.startswith("--") and _looks_like_value(following):
                out.append(following)
    return out


def _looks_like_value(word: str) -> bool:
    """Not an English word of the sentence: a number, a path, a name with digits, dots or capitals."""
    return bool(re.search(r"[\d/._A-Z]", word)) or word in ("true", "false")


def _code_text(text: str) -> str:
    """The text of the answer's code blocks and inline code, or "" when it has none."""
    blocks = _CODE_BLOCK.findall(text)
    spans = _CODE_SPAN.findall(_CODE_BLOCK.sub(" ", text))
    return "\n".join([*blocks, *spans])


def _logical_lines(text: str) -> list[str]:
    return re.sub(r"\\\r?\n", " ", text).splitlines()


def _with_assignments(line: str, start: int) -> int:
    """Move `start` back over `NAME=value` words right before the program."""
    before = line[:start].split(" ")
    while before and before[-1] == "":
        before.pop()
    kept = len(line[:start])
    for word in reversed(before):
        if not _ASSIGNMENT.match(word.strip("`")):
            break
        kept = line.rfind(word, 0, kept)
    return kept


def flags_in_text(text: str) -> tuple[str, ...]:
    """Every `--flag` a text names (for notes about what was read)."""
    return tuple(dict.fromkeys(match.split("=", 1)[0] for match in _FLAG_IN_TEXT.findall(text)))


def looks_like_command_start(word: str) -> bool:
    """A word that begins a command or its flags (so it is no host name): a flag, `NAME=value`, env, a python,
    sglang or vllm."""
    name = word.rsplit("/", 1)[-1]
    return (word.startswith("-") or bool(_ASSIGNMENT.match(word)) or word == "env" or bool(_PYTHON.search(word))
            or name in ("sglang", "vllm"))
