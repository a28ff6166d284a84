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
PASS, FAIL = "✓", "✗"


def headline(result: CheckResult) -> str:
    failed = [verdict for verdict in result.flags if not verdict.ok]
    rejected = result.validation is not None and result.validation.state == "rejected"
    if result.passed:
        count = f"{len(result.flags)} flag{'s' if len(result.flags) != 1 else ''}"
        return f"{PASS} {count} checked, all pass for SGLang {result.catalog_version}"
    parts = [f"{len(failed)} of {len(result.flags)} flags fail"] if failed else []
    parts += [f"{len(result.traps)} flag combination{'s' if len(result.traps) > 1 else ''} SGLang rejects"] if result.traps else []
    parts += ["SGLang's own validation rejects it"] if rejected else []
    return f"{FAIL} " + "; ".join(parts) + f" (SGLang {result.catalog_version})"


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
    lines.append("")
    width = max((len(_flag_text(v)) for v in result.flags), default=0)
    width = min(width, 48)
    for verdict in result.flags:
        mark = PASS if verdict.ok else FAIL
        lines.append(f"  {mark} {_flag_text(verdict):<{width}}  {verdict.reason}")
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
    lines += ["| | flag | why |", "|---|---|---|"]
    for verdict in result.flags:
        cell = _flag_text(verdict).replace("|", "\\|")
        lines.append(f"| {PASS if verdict.ok else FAIL} | `{cell}` | {verdict.reason.replace('|', chr(92) + '|')} |")
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
    data = {"schema_version": SCHEMA_VERSION, "passed": result.passed, **asdict(result)}
    data["command"] = redact_command(result.command) if result.command else None
    for flag in data["flags"]:
        flag["values"] = _shown_values(flag["flag"], flag["values"])
    for trap in data["traps"]:
        trap["corrected"] = redact_command(trap["corrected"]) if trap["corrected"] else None
    if data["validation"] and data["validation"]["command"]:
        data["validation"]["command"] = redact_command(data["validation"]["command"])
    return json.dumps(data, indent=2) + "\n"  # ASCII: no raw control or bidi character reaches a terminal


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
