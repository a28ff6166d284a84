"""A CheckResult as text, Markdown or JSON: the verdict first (pass or what fails), then each flag with its mark."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict

from logsleuth.check.model import CheckResult, FlagVerdict, TrapVerdict, Validation
from logsleuth.redact import (
    REDACTED,
    command_secrets,
    redact_command,
    redact_secrets,
    secret_by_name,
    without_secrets,
)
from logsleuth.render.safety import strip_controls

SCHEMA_VERSION = 1
# ✓ only for what is verified (the flags pass, no known trap, and SGLang's own validation accepted it): a flag that
# merely exists is "·", a change that cannot be judged without the launch command is "?".
PASS, FAIL, EXISTS, UNJUDGED = "✓", "✗", "·", "?"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def headline(result: CheckResult) -> str:
    failed = [verdict for verdict in result.flags if not verdict.ok]
    rejected = result.validation is not None and result.validation.state == "rejected"
    release = f"SGLang {result.catalog_version}"
    if result.verified:
        return f"{PASS} {_plural(len(result.flags), 'flag')}: passes {release}'s validation and the known traps"
    if result.passed:
        return (f"{EXISTS} {_plural(len(result.flags), 'flag')} checked: none fails in {release}'s catalog, no known "
                "trap; not validated, so not verified")
    parts = [f"{len(failed)} of {len(result.flags)} flags fail"] if failed else []
    parts += [f"{len(result.traps)} flag combination{'s' if len(result.traps) > 1 else ''} SGLang rejects"] if result.traps else []
    parts += ["SGLang's own validation rejects it"] if rejected else []
    parts += [f"{_plural(len(result.unjudged), 'removal')} cannot be judged without the launch command"] if result.unjudged else []
    return f"{FAIL if failed or result.traps or rejected else UNJUDGED} " + "; ".join(parts) + f" ({release})"


def _mark(verdict: FlagVerdict) -> str:
    return FAIL if not verdict.ok else UNJUDGED if not verdict.judged else EXISTS


def _shown_values(flag: str, values: Sequence[str]) -> list[str]:
    """A flag's values as shown: all of one a secret flag's (`--api-key 'two words'`), else what redaction leaves."""
    return [REDACTED if secret_by_name(flag, value) else redact_secrets(value) for value in values]


def _flag_text(verdict: FlagVerdict) -> str:
    return redact_secrets(" ".join((verdict.flag, *_shown_values(verdict.flag, verdict.values))))


def _validation_line(validation: Validation) -> str:
    mark = {"validated": PASS, "rejected": FAIL}.get(validation.state, "-")
    return f"{mark} {validation.message}"


def _without_command_secrets(render: Callable[[CheckResult], str]) -> Callable[[CheckResult], str]:
    """The command's secret values replaced wherever the output repeats them: a key argparse does not take as
    one (SGLang's one-value --api-key given two) is listed as a stray word."""

    @functools.wraps(render)
    def rendered(result: CheckResult) -> str:
        return without_secrets(command_secrets(result.command) if result.command else set())(render(result))

    return rendered


def _inert(lines: list[str]) -> str:
    """The last guard: a pasted command, a host's answer or a log's text holds no escape sequence or control
    character by the time it is printed (each source is cleaned too; tabs become spaces)."""
    return "\n".join(strip_controls(line) for line in lines) + "\n"


@_without_command_secrets
def render_text(result: CheckResult) -> str:
    lines = [headline(result)]
    if result.version_note:
        lines.append(f"  ({result.version_note})")
    if result.command:
        lines.append(f"  {redact_command(result.command)}")
    if result.corrected:
        lines.append(f"  Corrected command (each ✗ flag as SGLang names it): {redact_command(result.corrected)}")
    lines.append("")
    width = max((len(_flag_text(v)) for v in result.flags), default=0)
    width = min(width, 48)
    for verdict in result.flags:
        lines.append(f"  {_mark(verdict)} {_flag_text(verdict):<{width}}  {verdict.reason}")
    for trap in result.traps:
        lines += ["", *_trap_lines(trap)]
    if result.validation is not None:
        lines += ["", _validation_line(result.validation)]
        lines += [f"  ({note})" for note in result.validation.notes]
    if result.notes:
        lines += ["", *(f"note: {note}" for note in result.notes)]
    return _inert(lines)


def _trap_lines(trap: TrapVerdict) -> list[str]:
    lines = [f"{FAIL} {trap.title} ({trap.pattern}): {', '.join(trap.flags)}", f"  {trap.reason}"]
    if trap.fix:
        lines.append(f"  Fix: {trap.fix}")
    if trap.corrected:
        lines.append(f"  Corrected command: {redact_command(trap.corrected)}")
    return lines


@_without_command_secrets
def render_markdown(result: CheckResult) -> str:
    lines = [f"**{headline(result)}**", ""]
    if result.version_note:
        lines += [f"_{result.version_note}_", ""]
    if result.command:
        lines += ["```sh", redact_command(result.command), "```", ""]
    if result.corrected:
        lines += ["Corrected command (each ✗ flag as SGLang names it):", "", "```sh", redact_command(result.corrected),
                  "```", ""]
    lines += ["| | flag | why |", "|---|---|---|"]
    for verdict in result.flags:
        cell = _flag_text(verdict).replace("|", "\\|")
        lines.append(f"| {_mark(verdict)} | `{cell}` | {verdict.reason.replace('|', chr(92) + '|')} |")
    for trap in result.traps:
        lines += ["", f"**{FAIL} {trap.title}** (`{trap.pattern}`): {', '.join(f'`{f}`' for f in trap.flags)}", "",
                  trap.reason]
        if trap.fix:
            lines += ["", f"Fix: {trap.fix}"]
        if trap.corrected:
            lines += ["", "```sh", redact_command(trap.corrected), "```"]
    if result.validation is not None:
        lines += ["", _validation_line(result.validation)]
        lines += [f"- {note}" for note in result.validation.notes]
    if result.notes:
        lines += ["", *(f"_{note}_" for note in result.notes)]
    return _inert(lines)


@_without_command_secrets
def render_json(result: CheckResult) -> str:
    data = {"schema_version": SCHEMA_VERSION, "passed": result.passed, "verified": result.verified, **asdict(result)}
    data["command"] = redact_command(result.command) if result.command else None
    data["corrected"] = redact_command(result.corrected) if result.corrected else None
    for flag in data["flags"]:
        flag["values"] = _shown_values(flag["flag"], flag["values"])
    for trap in data["traps"]:
        trap["corrected"] = redact_command(trap["corrected"]) if trap["corrected"] else None
    if data["validation"] and data["validation"]["command"]:
        data["validation"]["command"] = redact_command(data["validation"]["command"])
    return json.dumps(data, indent=2) + "\n"  # ASCII: no raw control or bidi character reaches a terminal


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
