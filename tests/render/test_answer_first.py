"""The answer first, in every format: the headline (what died, where), the root cause, the fix and its corrected
command, then the evidence.  On the three shipped examples the answer fits where a reader looks first: the
first 25 lines of a text report at 80 columns, the first 1,200 characters of a Slack message."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from logsleuth.models import Diagnosis, Fix, LaunchInfo, Report
from logsleuth.render.options import OutputFormat
from logsleuth.render.safety import ZWSP
from tests.helpers import REPO, run_cli
from tests.render.cases import CASES, multi_rank, several_hosts, single_failure, unknown_failure
from tests.render.helpers import FORMATS, WIDTHS, WRAPPING, render, slack_split

EXAMPLES = sorted((REPO / "examples").glob("*.log"))
TEXT_LINES = 25
SLACK_CHARS = 1200
FAILING = sorted(name for name in CASES if name != "no_failure")


def test_three_shipped_examples() -> None:
    assert [path.name for path in EXAMPLES] == ["eagle3-incident.log", "tp8-kv-cache-oom.log", "tp8-oom-then-nccl.log"]


def _positions(output: str, needles: list[str]) -> list[int]:
    found = [output.find(needle) for needle in needles]
    assert -1 not in found, [needle for needle, at in zip(needles, found, strict=True) if at < 0]
    return found


# The words each format uses for: headline, root cause, fix, corrected command, evidence (the innermost frame).
MARKERS = {
    OutputFormat.TEXT: ["EAGLE speculative sizes", "Root cause (", "Fix:", "Corrected command:", "Evidence:"],
    OutputFormat.RICH: ["EAGLE speculative sizes", "Root cause (", "Fix:", "Corrected command:", "Evidence:"],
    OutputFormat.MARKDOWN: ["### logsleuth: EAGLE", "**Root cause**", "**Fix:**", "```sh", "**Evidence**"],
    OutputFormat.SLACK: ["*logsleuth:* EAGLE", "*Root cause:*", "*Fix:*", "```\npython -m", "› sglang/"],
}


@pytest.mark.parametrize("fmt", list(MARKERS), ids=[f.value for f in MARKERS])
def test_answer_comes_before_the_evidence(fmt: OutputFormat) -> None:
    output = render(single_failure(), fmt)
    positions = _positions(output, MARKERS[fmt])
    assert positions == sorted(positions), positions
    assert output.find("_handle_speculative_decoding") > positions[3], "no frame before the corrected command"


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f is not OutputFormat.JSON], ids=lambda f: f.value)
def test_without_a_pattern_what_helps_next_comes_before_the_evidence(fmt: OutputFormat) -> None:
    """A failure no pattern knows keeps what it showed: the innermost app frame and its line, the engine and
    its version, the exact text to search for, before the frames."""
    output = render(unknown_failure(), fmt)
    rows = ["Innermost app frame", "Its source line", "Engine", "Search for", "app/serve.py:14 in main"]
    positions = _positions(output, rows)
    assert positions == sorted(positions), positions
    assert "sglang/srt/configs/model_config.py:210 in __init__" in output
    assert "self._verify_rope_scaling()" in output
    assert "ValueError: Unsupported rope_scaling type: 'yarn2'" in output


@pytest.mark.parametrize("case", FAILING)
def test_the_headline_says_where_it_died(case: str) -> None:
    """The first line names the failure, and its hosts and ranks when the log gives them."""
    report = CASES[case]()
    group = report.failures[0]
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK):
        first = render(report, fmt, width=200).splitlines()[0]
        for host in group.hosts:
            assert host in first, (fmt, first)
        if group.ranks:
            assert re.search(r"\branks? TP", first), (fmt, first)


def test_multi_rank_headline_compresses_the_ranks() -> None:
    assert render(multi_rank(), OutputFormat.TEXT, width=200).splitlines()[0].endswith("· ranks TP0-7")


def test_json_puts_the_verdict_before_the_data() -> None:
    data = json.loads(render(several_hosts(), OutputFormat.JSON))
    keys = list(data)
    assert keys[:4] == ["schema", "tool", "status", "failures"]
    failure = list(data["failures"][0])
    assert failure.index("diagnosis") < failure.index("exceptions") < failure.index("context")


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_text_budget_on_the_shipped_examples(example: Path) -> None:
    """The headline, root cause and first corrected command are in the first 25 lines at 80 columns."""
    result = run_cli("diagnose", str(example), "--format", "text", "--width", "80")
    assert result.exit_code == 1, result.stderr
    top = result.stdout.splitlines()[:TEXT_LINES]
    assert top[0] and not top[0].startswith(" "), "the headline is the first line"
    assert any(line.startswith("Root cause (") for line in top), "\n".join(top)
    assert "  Corrected command:" in top[:-1], "\n".join(top)
    command = top[top.index("  Corrected command:") + 1]
    assert command.startswith("    python -m sglang.launch_server")


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_slack_budget_on_the_shipped_examples(example: Path) -> None:
    """Headline, cause and fix (with its corrected command) in the first 1,200 characters, a short frame excerpt
    after them, no local path, no zero-width character in a code block."""
    result = run_cli("diagnose", str(example), "--format", "slack")
    output = result.stdout
    head = output[:SLACK_CHARS]
    assert head.startswith("*logsleuth:* ")
    assert "*Root cause:*" in head and "*Fix:*" in head
    fix = head.index("*Fix:*")
    assert "```\npython -m sglang.launch_server" in head[fix:], "the first corrected command"
    excerpt = output.index("\n› ")
    assert excerpt > fix and output.count("\n› ") <= 6, "a short frame excerpt after the answer"
    assert str(example) not in output and example.name not in output, "a local path means nothing in a channel"
    code, _ = slack_split(output)
    assert not [line for line in code if ZWSP in line]


def test_slack_names_remote_logs_but_not_local_ones() -> None:
    report = several_hosts()
    assert "_Full log: gpu-node-1:/var/log/sglang.log" in render(report, OutputFormat.SLACK)
    local = dataclasses.replace(
        report,
        sources=tuple(dataclasses.replace(s, name=f"/home/alice/logs/node{i}.log") for i, s in enumerate(report.sources)),
        failures=tuple(
            dataclasses.replace(g, sources=tuple(f"/home/alice/logs/node{i}.log" for i in range(2)))
            for g in report.failures
        ),
    )
    output = render(local, OutputFormat.SLACK)
    assert "/home/alice" not in output and "Full log" not in output


LONG_PROSE = " ".join(f"Sentence {n} of the pattern's own explanation, which is never cut." for n in range(40))


def _with_long_prose(report: Report) -> Report:
    group = report.failures[0]
    assert group.diagnosis is not None and group.diagnosis.fix is not None
    fix = dataclasses.replace(group.diagnosis.fix, summary=LONG_PROSE, steps=(LONG_PROSE,))
    diagnosis: Diagnosis = dataclasses.replace(group.diagnosis, root_cause=LONG_PROSE, fix=fix)
    return dataclasses.replace(report, failures=(dataclasses.replace(group, diagnosis=diagnosis),))


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
def test_pattern_prose_is_never_truncated(fmt: OutputFormat) -> None:
    assert len(LONG_PROSE) > 2500
    output = render(_with_long_prose(single_failure()), fmt, max_chars=100_000)
    flat = " ".join(output.split())
    assert flat.count(LONG_PROSE) >= (1 if fmt is OutputFormat.JSON else 3), "root cause, fix summary and step"
    assert "chars)" not in flat


def test_a_slack_budget_drops_prose_whole_never_cut() -> None:
    """Three copies of 2,500 characters cannot fit 3,500: the root cause stays whole, what follows is left out
    whole, and the message says so."""
    output = render(_with_long_prose(single_failure()), OutputFormat.SLACK, max_chars=3500)
    assert f"*Root cause:* {LONG_PROSE}\n" in output
    assert output.count("Sentence 0 of") == 1 and "cut to fit" in output


def test_log_text_that_is_cut_says_how_much() -> None:
    report = unknown_failure()
    group = report.failures[0]
    block = dataclasses.replace(group.failure.final, message="first line\n" + "\n".join(f"detail {n}" for n in range(20)))
    failure = dataclasses.replace(
        group.failure, exceptions=(block,), context=tuple(f"context {n} " + "x" * 500 for n in range(9))
    )
    report = dataclasses.replace(report, failures=(dataclasses.replace(group, failure=failure),))
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK):
        output = " ".join(render(report, fmt).split())  # a note may be wrapped
        assert "… 8 more lines" in output or fmt is OutputFormat.SLACK, fmt  # 20 detail lines, 12 shown
        assert re.search(r"… \(\+\d+ chars\)", output), fmt
        assert re.search(r"… \d+ earlier lines?", output), fmt
    assert "… 17 more lines" in render(report, OutputFormat.SLACK)  # the excerpt shows 3 of the 20  # the Slack excerpt keeps 3 of the 20


VERSIONS = {
    "log": ("sglang 0.5.9", "sglang 0.5.9 ("),
    "inferred": ("sglang 0.5.9 (guessed from the code layout or wording", None),
    "user": ("sglang 0.5.9 (given with --engine-version)", None),
}


@pytest.mark.parametrize("source", sorted(VERSIONS))
@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
def test_the_version_says_how_it_is_known(fmt: OutputFormat, source: str) -> None:
    report = dataclasses.replace(
        single_failure(), launch=LaunchInfo("sglang", "0.5.9", engine_version_source=source)  # type: ignore[arg-type]
    )
    output = render(report, fmt)
    if fmt is OutputFormat.JSON:
        assert json.loads(output)["launch"]["engine_version_source"] == source
        return
    shown, absent = VERSIONS[source]
    assert shown in " ".join(output.split())
    if absent:
        assert absent not in output


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("fmt", WRAPPING, ids=[f.value for f in WRAPPING])
@pytest.mark.parametrize("case", sorted(CASES))
def test_lines_fit_the_width(case: str, fmt: OutputFormat, width: int) -> None:
    """Only what must copy whole may be longer: a corrected command, the text to search for, and a single word
    longer than the line (a path)."""
    lines = render(CASES[case](), fmt, width=width).splitlines()
    whole = {"Corrected command:", "Search for:"}
    for before, line in zip(["", *lines], lines, strict=False):
        if len(line) > width and before.strip() not in whole:
            assert " " not in line.strip(), f"{len(line)} > {width}: {line!r}"


def test_a_fix_without_a_command_still_shows_its_flag_changes() -> None:
    report = dataclasses.replace(
        single_failure(),
        failures=tuple(
            dataclasses.replace(g, diagnosis=dataclasses.replace(g.diagnosis, fix=Fix("Add it.", flags=g.diagnosis.fix.flags)))  # type: ignore[union-attr]
            for g in single_failure().failures
        ),
    )
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK):
        assert "add --speculative-num-steps 15" in render(report, fmt), fmt


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f is not OutputFormat.JSON], ids=lambda f: f.value)
def test_a_release_read_from_an_image_tag_says_so(fmt: OutputFormat) -> None:
    """Issue 28 stop 50: split 13's report called an image tag's release "guessed from the log's code layout"."""
    launch = LaunchInfo("vllm", "0.20.1", engine_version_source="inferred", image_version="0.20.1")
    output = " ".join(render(dataclasses.replace(single_failure(), launch=launch), fmt).split())
    assert "vllm 0.20.1 (read from the engine's image tag" in output and "code layout" not in output
