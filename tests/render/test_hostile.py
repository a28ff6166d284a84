"""Hostile log content is shown, never obeyed: no escape sequences reach the terminal,
no markup is interpreted, no fence is broken, nobody is pinged, no line floods the report."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Report
from logsleuth.render.options import OutputFormat
from logsleuth.render.safety import ZWSP, break_fences, clean, defang_mentions, markdown_fence, strip_controls
from tests.render.cases import several_hosts, unknown_failure
from tests.render.helpers import FORMATS, markdown_fences, render, slack_fences_balanced, slack_split

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes "rm -rf ~" to the clipboard
TITLE = "\x1b]0;pwned-title\x1b\\"
CURSOR = "\x1b[2J\x1b[1;1H\x1b[5A"
C1_CSI = "\x9b2J"
BIDI = "\u202e"
HOSTILE = (
    f"boom {OSC52}{TITLE}{CURSOR}{C1_CSI}{BIDI} [bold red]styled[/bold red] :boom: "
    "```\n``` <!channel> <!here|here> <@U024BE7LH> @here @channel @everyone \rback\bspace\x07"
)
LONG = "x" * 100_000
MARKERS = ("pwned-title", "cm0gLXJmIH4K")  # the payloads of the sequences must not survive either


def hostile(report: Report) -> Report:
    group = report.failures[0]
    block = group.failure.final
    frames = tuple(dataclasses.replace(f, source=HOSTILE) for f in block.frames)
    block = dataclasses.replace(block, message=f"{HOSTILE}\n{LONG}", frames=frames)
    failure = dataclasses.replace(
        group.failure,
        exceptions=(*group.failure.exceptions[:-1], block),
        context=(HOSTILE, LONG),
        header=HOSTILE,
    )
    group = dataclasses.replace(
        group, failure=failure, cascade=(HOSTILE,), signature=HOSTILE, hosts=(HOSTILE,)
    )
    return dataclasses.replace(report, failures=(group, *report.failures[1:]), warnings=(HOSTILE,))


CASES = {"unknown": lambda: hostile(unknown_failure()), "multi": lambda: hostile(several_hosts())}
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_control_characters_in_any_format(case: str, fmt: OutputFormat) -> None:
    output = render(CASES[case](), fmt)
    if fmt is OutputFormat.JSON:
        # JSON keeps the data for machines; json.dumps escapes C0 controls (\u001b), so no raw ESC/BEL.
        # (C1 controls and bidi overrides pass through json.dumps(ensure_ascii=False): see the report.)
        assert not re.search("[\x00-\x09\x0b-\x1f]", output)
        return
    assert not CONTROL.search(output.replace("\n", ""))
    for marker in MARKERS:
        assert marker not in output


def test_colour_output_has_only_our_own_styles() -> None:
    output = render(CASES["unknown"](), OutputFormat.RICH, color=True)
    sequences = re.findall(r"\x1b[^m]*m|\x1b.", output)
    assert sequences, "expected colour"
    assert all(re.fullmatch(r"\x1b\[[0-9;]*m", s) for s in sequences), set(sequences)
    assert "\x9b" not in output and "\x07" not in output


@pytest.mark.parametrize("fmt", [OutputFormat.RICH, OutputFormat.TEXT], ids=["rich", "text"])
def test_markup_is_shown_literally(fmt: OutputFormat) -> None:
    for color in (False, True):
        output = render(CASES["unknown"](), fmt, color=color)
        assert "[bold red]styled[/bold red]" in output
        assert ":boom:" in output


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_100k_line_is_clipped(case: str, fmt: OutputFormat) -> None:
    output = render(CASES[case](), fmt)
    if fmt is OutputFormat.JSON:
        json.loads(output)  # the JSON report keeps the full text: it is data, not display
        return
    assert len(output) < 20_000
    assert max(len(line) for line in output.splitlines()) < 1_000


@pytest.mark.parametrize("case", sorted(CASES))
def test_markdown_fences_hold(case: str) -> None:
    output = render(CASES[case](), OutputFormat.MARKDOWN)
    spans = markdown_fences(output)  # raises if a fence is left open
    lines = output.splitlines()
    inside = {n for start, end in spans for n in range(start + 1, end)}
    for number, line in enumerate(lines):
        if line.strip() == "```" and number not in inside:
            assert any(number in (s, e) for s, e in spans), f"stray fence on line {number + 1}"
    # The hostile "```" lines sit inside a longer fence.
    hostile_lines = [n for n, line in enumerate(lines) if line.startswith("```") and "<!channel>" in line]
    assert hostile_lines and all(n in inside for n in hostile_lines)
    # Outside fences and code spans (where GitHub would link them), no mention survives.
    prose = [
        re.sub(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", line)
        for n, line in enumerate(lines)
        if n not in inside and not any(n in span for span in spans)
    ]
    for token in ("@here", "@channel", "<!channel>", "<@U024BE7LH>"):
        assert not any(token in line for line in prose), token


@pytest.mark.parametrize("case", sorted(CASES))
def test_slack_fences_and_mentions_are_defanged(case: str) -> None:
    output = render(CASES[case](), OutputFormat.SLACK)
    assert slack_fences_balanced(output)
    assert all(line == "```" for line in output.splitlines() if "```" in line), "only our own fences"
    code, prose = slack_split(output)
    for token in ("<!channel>", "<!here", "<@U024BE7LH>", "@here", "@channel", "@everyone"):
        assert not [line for line in prose if token in line], token
    assert not [line for line in code if ZWSP in line], "a zero-width character would be copied with the code"
    assert len(output) <= 3500


def test_hostile_log_through_the_whole_pipeline() -> None:
    log = (
        f"[2026-11-20 10:00:00] {OSC52}{TITLE} starting <!channel>\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.11/dist-packages/sglang/launch_server.py", line 32, in <module>\n'
        f"    main()  # {CURSOR} [bold]x[/bold] ```\n"
        f"RuntimeError: {OSC52} [bold]x[/bold] ``` <!channel> @here {LONG}\n"
    )
    report = diagnose_text(log, DiagnoseOptions())
    for fmt in FORMATS:
        output = render(report, fmt)
        assert "\x1b" not in output and "\x07" not in output, fmt
        if fmt is OutputFormat.SLACK:
            code, prose = slack_split(output)
            assert not [line for line in prose if "<!channel>" in line] and slack_fences_balanced(output)
            assert not [line for line in code if ZWSP in line]
        if fmt is OutputFormat.MARKDOWN:
            markdown_fences(output)
        if fmt in (OutputFormat.RICH, OutputFormat.TEXT):
            assert "[bold]x[/bold]" in output


def test_safety_helpers() -> None:
    assert strip_controls(f"a{OSC52}b{TITLE}c{CURSOR}d\te") == "abcd    e"
    assert clean("x" * 1000, 10) == "xxxxxxxxxx… (+990 chars)"
    assert "```" not in break_fences("a ```` b")
    assert markdown_fence(["````"]) == "`````"
    assert defang_mentions("(@here <!channel> a@b") == f"(@{ZWSP}here <{ZWSP}!channel> a@b"
