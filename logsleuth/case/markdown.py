"""The case file as Markdown: what a user pastes into an assistant, or an issue.

Log text goes into fences longer than any backtick run it holds, or into code spans; the few words of prose
are escaped.  The failure is laid out as CPython prints it, which every reader knows.
"""

from __future__ import annotations

from logsleuth.case.model import Case, CaseException, FlagFacts, FlagRow, PrimaryFailure
from logsleuth.render.safety import escape_markdown_prose, markdown_code_span, markdown_fence
from logsleuth.render.view import compress_ranks

RELATION_LINES = {
    "cause": "The above exception was the direct cause of the following exception:",
    "context": "During handling of the above exception, another exception occurred:",
}
CUT_NOTE = "\n\n(case file cut at {limit:,} characters)\n"


def _fenced(lines: list[str] | tuple[str, ...], info: str = "text") -> list[str]:
    fence = markdown_fence(list(lines))
    return [f"{fence}{info}", *lines, fence, ""]


def _frames(block: CaseException) -> list[str]:
    out: list[str] = []
    for index, frame in enumerate(block.frames):
        if block.frames_left_out and index == block.frames_left_out_at:
            out.append(f"  ... {block.frames_left_out} frames left out ...")
        where = f'  File "{frame.file}"' + (f", line {frame.line}" if frame.line is not None else "")
        out.append(where + (f", in {frame.function}" if frame.function else ""))
        if frame.source:
            out.append(f"    {frame.source}")
    if block.frames_left_out and block.frames_left_out_at >= len(block.frames):
        out.append(f"  ... {block.frames_left_out} frames left out ...")
    return out


def _exception_lines(block: CaseException) -> list[str]:
    head = f"{block.type}: {block.message[0]}" if block.message else block.type
    out = [head, *block.message[1:]]
    if block.message_left_out:
        out.append(f"... {block.message_left_out} more message lines left out ...")
    return out


def traceback_lines(failure: PrimaryFailure) -> list[str]:
    """CPython's own layout for tracebacks; the failure's line first, then its frames, for the other kinds
    (a faulthandler dump, a C++ abort, a fatal log line)."""
    lines = [failure.header] if failure.header else []
    python = failure.kind in ("traceback", "bare")
    for index, block in enumerate(failure.chain):
        if index:
            previous = failure.chain[index - 1].relation
            lines.extend(["", RELATION_LINES.get(previous or "", "Then:"), ""])
        if python:
            if block.frames or block.frames_left_out:
                lines.append("Traceback (most recent call last):")
            lines.extend([*_frames(block), *_exception_lines(block)])
        else:
            lines.extend([*_exception_lines(block), *_frames(block)])
    if failure.truncated:
        lines.append("(the log shows only part of this traceback)")
    return lines


def _where(failure: PrimaryFailure) -> str:
    parts = []
    if failure.hosts:
        parts.append(("host " if len(failure.hosts) == 1 else "hosts ") + ", ".join(failure.hosts[:6]))
    if failure.ranks:
        parts.append(("rank " if len(failure.ranks) == 1 else "ranks ") + ", ".join(compress_ranks(failure.ranks)[:6]))
    if failure.count > 1:
        parts.append(f"seen {failure.count} times")
    if failure.timestamp:
        parts.append(f"at {failure.timestamp}")
    return " · ".join(parts)


def _engine(case: Case) -> str:
    if case.engine is None:
        if case.engine_version:
            return f"not named in the log (it names a version, {markdown_code_span(case.engine_version)}, not whose)"
        return "not named in the log"
    name = f"{case.engine} {case.engine_version}" if case.engine_version else case.engine
    return f"{markdown_code_span(name)} ({escape_markdown_prose(case.version_origin)})"


def _same(values: list[str]) -> bool:
    return len(set(values)) == 1


def _per_version(facts: tuple[FlagFacts, ...], text: list[str]) -> str:
    """One value when every version agrees, else `0.5.9: x; 0.5.23: y`."""
    if _same(text):
        return text[0]
    return "; ".join(f"{fact.version}: {value}" for fact, value in zip(facts, text, strict=True))


def _choices(fact: FlagFacts) -> str:
    if fact.switch:
        return "switch: takes no value"
    return ", ".join(fact.choices) or "any value"


def _flag_cells(row: FlagRow) -> tuple[str, str, str]:
    """(choices, default, notes) of a row, across the catalogs it comes from."""
    present = [fact for fact in row.facts if fact.present]
    choices = _per_version(tuple(present), [_choices(fact) for fact in present]) if present else ""
    defaults = _per_version(tuple(present), [fact.default for fact in present]) if present else ""
    notes = [f"not in {fact.version}" for fact in row.facts if not fact.present]
    if not present:
        notes = ["in no catalog consulted"] + ([f"exists in {', '.join(row.elsewhere)}"] if row.elsewhere else ["in no shipped version"])
    for fact in present:
        if fact.deprecated:
            notes.append(f"deprecated in {fact.version}" + (f", use {fact.renamed_to}" if fact.renamed_to else ""))
    return choices, defaults, "; ".join(notes)


def _given(row: FlagRow) -> str:
    if row.given is None:
        return "not given"
    return "given (switch)" if row.given == "" else markdown_code_span(row.given)


def _flag_table(case: Case) -> list[str]:
    versions = ", ".join(case.catalogs)
    out = [f"#### Flags this failure touches ({escape_markdown_prose(case.catalog_note)})", ""]
    if not case.flags:
        return [*out, "None found." if case.catalogs else "No catalog applies.", ""]
    out.append(f"Catalog{'s' if len(case.catalogs) > 1 else ''}: {escape_markdown_prose(versions)}. Defaults as argparse holds them (`None`: not set; the engine decides).")
    out.extend(["", "| Flag | Why | Launch gave | Choices | Default | Notes |", "|---|---|---|---|---|---|"])
    for row in case.flags:
        choices, default, notes = _flag_cells(row)
        cells = [markdown_code_span(row.flag), escape_markdown_prose(row.reason), _given(row),
                 escape_markdown_prose(choices), markdown_code_span(default) if default else "", escape_markdown_prose(notes)]
        out.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return [*out, ""]


def _launch(case: Case) -> list[str]:
    if case.launch_command:
        return [f"#### Launch command (from {escape_markdown_prose(case.launch_origin or 'the log')})", "",
                *_fenced([case.launch_command], "sh")]
    if case.server_args:
        lines = [f"{name}={value}" for name, value in case.server_args]
        return ["#### server_args (fields not at their default)", "", *_fenced(lines)]
    return ["#### Launch command", "", "Not in the log (neither a command line nor `server_args`).", ""]


def _header(case: Case) -> list[str]:
    failure = case.failure
    headline = failure.headline if failure else "no failure found in the log"
    out = [f"### Case: {escape_markdown_prose(headline)}", "",
           "_logsleuth case file: secrets redacted; paste it whole. The log's own lines come first, as it printed "
           "them; logsleuth's reading of them follows._", "",
           f"- **Engine:** {_engine(case)}"]
    if failure is not None and _where(failure):
        out.append(f"- **Where:** {escape_markdown_prose(_where(failure))}")
    if case.sources:
        out.append(f"- **Log:** {', '.join(markdown_code_span(source) for source in case.sources[:4])}")
    if case.packages:
        out.append(f"- **Installed under:** {markdown_code_span(case.packages)}")
    if case.known_pattern:
        out.append(f"- **Known pattern (logsleuth):** {escape_markdown_prose(case.known_pattern)}")
    return [*out, ""]


def _with_cut(lines: tuple[str, ...], left_out: int, at: int, what: str) -> list[str]:
    if not left_out:
        return list(lines)
    return [*lines[:at], f"[... {left_out} {what} left out here to fit ...]", *lines[at:]]


def _failure_region(case: Case) -> list[str]:
    if case.failure is None:
        return []
    origin = escape_markdown_prose(case.lines_before_origin)
    if not case.failure_lines:  # the log could not be read again: the lines the report kept
        title = f"The {len(case.lines_before)} log lines before the failure" if case.lines_before else "Log lines before the failure"
        return [f"#### {title}", "", f"From {origin}.", "", *(_fenced(case.lines_before) if case.lines_before else ["None.", ""])]
    lines = [*case.lines_before, *_with_cut(case.failure_lines, case.failure_lines_left_out, case.failure_lines_cut_at, "lines")]
    said = f"the {len(case.lines_before)} lines before it, then the failure" if case.lines_before else "the failure"
    return ["#### The failure, as the log printed it", "", f"From {origin}: {said}.", "", *_fenced(lines)]


def _error_lines(case: Case) -> list[str]:
    if not case.error_lines and not case.error_lines_left_out:
        return []
    lines = [f"{line.text}  [×{line.count}]" if line.count > 1 else line.text for line in case.error_lines]
    lines = _with_cut(tuple(lines), case.error_lines_left_out, case.error_lines_cut_at, "distinct error-looking lines")
    scope = f"Searched in {escape_markdown_prose(case.error_scope)}; each" if case.error_scope else "Each"
    return ["#### Error-looking lines", "",
            f"{scope} distinct line once, in order; `[×N]`: it occurs N times.", "", *_fenced(lines)]


def _tail(case: Case) -> list[str]:
    if not case.tail:
        return []
    return [f"#### The last {len(case.tail)} lines of the log", "", *_fenced(case.tail)]


def _diagnosis(case: Case) -> list[str]:
    diagnosis = case.diagnosis
    if diagnosis is None:
        return []
    basis = {"pattern": "a known pattern", "rule": "a rule that reasoned from facts",
             "general": "general guidance, not a proven fix"}.get(diagnosis.basis, diagnosis.basis)
    out = [f"#### logsleuth's diagnosis ({escape_markdown_prose(basis)})", "",
           f"- **{escape_markdown_prose(diagnosis.title)}** (category {markdown_code_span(diagnosis.category)})",
           f"- {escape_markdown_prose(diagnosis.root_cause)}"]
    out.extend(f"- Fact used: {escape_markdown_prose(fact)}" for fact in diagnosis.evidence)
    out.extend(f"- {escape_markdown_prose(label)}: {markdown_code_span(words)}" for label, words in diagnosis.engine_says)
    return [*out, ""]


def _logsleuth_reading(case: Case) -> list[str]:
    out: list[str] = []
    out.extend(_diagnosis(case))
    if case.failure is not None and case.parsed_shown:
        out.extend(["#### The failure as logsleuth parsed it", "", *_fenced(traceback_lines(case.failure))])
    if case.cascade:
        out.extend(["#### What followed (logsleuth's summary)", "", *_fenced(case.cascade)])
    if case.failure is not None and not any(note == "the flag table" for note in case.left_out):
        out.extend(_flag_table(case))
    return out


def _body(case: Case) -> list[str]:
    out = _header(case)
    if not case.paste or case.launch_command or case.server_args:  # else what the log says of it is in the log
        out.extend(_launch(case))
    if case.paste:
        out.extend([f"#### The log, whole ({len(case.paste)} lines)", "",
                    f"From {escape_markdown_prose(case.lines_before_origin)}, redacted, otherwise as it printed them.", "",
                    *_fenced(case.paste)])
    else:
        out.extend(_failure_region(case))
    out.extend(_error_lines(case))
    if not case.paste:
        out.extend(_tail(case))
    if case.gpu_facts:
        out.extend(["#### GPU and memory (as the log reports them)", "", *_fenced(case.gpu_facts)])
    out.extend(_logsleuth_reading(case))
    if case.left_out:
        out.extend([f"#### Left out to fit {case.limit:,} characters", ""])
        out.extend(f"- {escape_markdown_prose(note)}" for note in case.left_out)
        out.append("")
    return out


def render_uncut(case: Case) -> str:
    """The case as Markdown, whatever its length (what the fitting measures)."""
    return "\n".join(_body(case)).rstrip() + "\n"


def render_case(case: Case) -> str:
    """The case as Markdown, never longer than `case.limit` characters (a last-resort cut says so)."""
    text = render_uncut(case)
    if len(text) <= case.limit:
        return text
    note = CUT_NOTE.format(limit=case.limit)
    cut = text[: max(0, case.limit - len(note) - 8)].rsplit("\n", 1)[0]
    if cut.count("\n```") % 2:  # close an open fence (ours are backticks, at least three)
        cut += "\n```"
    return (cut + note)[: case.limit]
