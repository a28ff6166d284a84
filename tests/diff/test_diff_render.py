"""The diff renderers on reports built as data: the Slack budget, inert log text."""

from __future__ import annotations

from logsleuth.diff.model import Change, DiffReport, LaunchSummary
from logsleuth.render.diff import SLACK_MAX_CHARS, render_markdown, render_slack, render_text
from tests.diff.conftest import FIXTURES, run_diff


def _side(name: str) -> LaunchSummary:
    return LaunchSummary(name, 1, 1, "sglang", "0.5.9", "python -m sglang.launch_server --model-path /m",
                         "2026-05-04 10:00:00", "ready", None)


def _big_report(count: int, value: str = "x" * 60) -> DiffReport:
    changes = tuple(Change("flags", "changed", f"--flag-{index}", value, value + "y") for index in range(count))
    return DiffReport(_side("good.log"), _side("bad.log"), changes)


def test_slack_fits_one_message_and_keeps_its_fence_closed() -> None:
    text = render_slack(_big_report(300))
    assert len(text) <= SLACK_MAX_CHARS
    assert text.count("```") == 2 and text.rstrip().endswith("```")
    assert "more lines: logsleuth diff --format text" in text
    assert "300 differences" in text  # the verdict counts every change, shown or not


def test_slack_limit_from_the_command_line() -> None:
    run = run_diff(str(FIXTURES / "relaunch.log"), "-f", "slack", "--max-chars", "400")
    assert run.exit_code == 1
    assert len(run.stdout) <= 400 and run.stdout.count("```") in (0, 2)


def test_a_small_diff_is_whole_in_slack() -> None:
    text = render_slack(_big_report(2))
    assert "more lines" not in text and text.count("--flag-") == 2


def test_log_text_is_inert_in_every_format() -> None:
    hostile = "<!channel> @here ```x``` [bold]y[/bold]"
    report = DiffReport(_side("good.log"), _side("bad.log"), (Change("env", "added", "NOTE", None, hostile),))
    slack = render_slack(report)
    assert "<!channel>" not in slack and "&lt;!channel&gt;" in slack
    assert slack.count("```") == 2  # the log's fence cannot close ours
    markdown = render_markdown(report)
    assert "\n```x```" not in markdown
    assert hostile in render_text(report)  # plain text shows it as it is
