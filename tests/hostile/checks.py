"""Run the real CLI as a process's byte streams receive it, and the checks every output must pass."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

# Control characters, DEL, C1 and the bidirectional overrides; newline is allowed, a tab must be expanded.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# What Slack turns into a ping: `@name` after a non-word character or at the start, `<!here>`, `<@U1>`;
# GitHub only knows the first.
LIVE_MENTION = re.compile(r"(?<!\w)@(?=\w)|<[!@#]")
LIVE_GITHUB_MENTION = re.compile(r"(?<!\w)@(?=\w)")


@dataclass
class Output:
    exit_code: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8")  # strict: the report must be valid UTF-8

    @property
    def errors(self) -> str:
        return self.stderr.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.stdout.decode("utf-8"))


def run_cli_bytes(*args: str) -> Output:
    """`logsleuth ARGS` in-process, with stdout and stderr set up as CPython sets them up for a UTF-8
    process: byte streams, stdout strict (what UTF-8 cannot encode raises), stderr backslash-escaping."""
    from logsleuth.__main__ import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(list(args))
        stdout.flush()
        stderr.flush()
    return Output(code, out.getvalue(), err.getvalue())


def _fix_commands(fix: dict[str, Any] | None) -> Iterator[str]:
    if fix:
        if fix["command"]:
            yield fix["command"]
        for alternative in fix["alternatives"]:
            yield from _fix_commands(alternative)


def printed_commands(fmt: str, output: str) -> list[str]:
    """Every shell command a report gives the user to run: the corrected commands and the launch command."""
    if fmt == "json":
        report = json.loads(output)
        commands = [report["launch"]["command"]] if report["launch"]["command"] else []
        for failure in report["failures"]:
            commands.extend(_fix_commands((failure["diagnosis"] or {}).get("fix")))
        return commands
    lines = output.splitlines()
    if fmt in ("text", "rich"):
        return [lines[i + 1].strip() for i, line in enumerate(lines[:-1]) if line.strip() == "Corrected command:"]
    if fmt == "markdown":
        return [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith("```sh")]
    # slack: a fix line, its steps and flag changes ("• …"), then a one-line fence holding its command
    commands = []
    for i, line in enumerate(lines):
        if line.startswith(("*Fix:*", "*Or:*")):
            j = i + 1
            while j < len(lines) and lines[j].startswith("• "):
                j += 1
            if j + 2 < len(lines) and lines[j] == "```" and lines[j + 2] == "```":
                commands.append(lines[j + 1])
    return commands


def assert_safe_shell_command(command: str, workdir: Path) -> str:
    """The command splits into shell words, bash accepts its syntax, and run behind `echo` in an empty
    directory it creates no file (`--api-key <redacted>` would be a redirection).  Returns what echo printed."""
    shlex.split(command)
    syntax = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True, timeout=30)
    assert syntax.returncode == 0, f"bash -n rejects {command!r}: {syntax.stderr}"
    workdir.mkdir(parents=True, exist_ok=True)
    before = set(workdir.iterdir())
    echoed = subprocess.run(
        ["bash", "-c", f"echo {command}"], capture_output=True, text=True, timeout=30, cwd=workdir,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert echoed.returncode == 0, echoed.stderr
    assert set(workdir.iterdir()) == before, f"running {command!r} created {set(workdir.iterdir()) - before}"
    return echoed.stdout


def _parse_markdown(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(markdown)


def markdown_rendered_text(markdown: str) -> list[str]:
    """What GitHub renders as prose, where a mention pings: inline text and HTML outside code spans and fences."""
    texts = []
    for token in _parse_markdown(markdown):
        if token.type == "inline" and token.children:
            texts.extend(child.content for child in token.children if child.type in ("text", "html_inline"))
        elif token.type == "html_block":
            texts.append(token.content)
    return texts


# The blocks logsleuth writes itself: headings start with the title or a failure number, quotes carry
# errors and warnings, lists hold fix items (no log text), fences are tagged text or sh, the tables are the
# summary ("#") and, with several sources, the fleet's one line per host ("Host").  Rules, HTML, indented code and ordered lists are never ours.
_OURS: dict[str, Callable[[str, str], bool]] = {
    "heading_open": lambda text, info: bool(re.match(r"^(?:logsleuth:|\d+\.)", text)),
    "blockquote_open": lambda text, info: bool(
        re.match(r"^(?:could not read|warning:|Order unknown:|The clocks differ by)", text)
    ),
    "bullet_list_open": lambda text, info: "pwned" not in text,
    "table_open": lambda text, info: text in ("#", "Host"),
    "fence": lambda text, info: info in ("text", "sh"),
}
_NEVER_OURS = {"hr", "code_block", "html_block", "ordered_list_open"}


def injected_markdown_blocks(markdown: str) -> list[tuple[str, str]]:
    """Blocks that log text created: a heading, list, quote, rule, table, HTML or code block of its own."""
    tokens = _parse_markdown(markdown)
    found = []
    for index, token in enumerate(tokens):
        text = next((t.content for t in tokens[index + 1 :] if t.type == "inline"), "")
        ours = _OURS.get(token.type)
        if token.type in _NEVER_OURS or (ours is not None and not ours(text, token.info)):
            found.append((token.type, token.content or text))
    return found
