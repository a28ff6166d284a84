"""Paired, interleaved benchmark rows and the one table they make (pure: no processes are started here).

A row compares two commands, A and B.  Every round runs both, A first in even rounds and B first in odd ones,
so that a burst of load from the other users of the machine lands on both sides alike and on either order.
Rows that share a command share its runs: a round then runs a group of commands, forward in even rounds and
backward in odd ones, which keeps that property for every two of them.
The row's ratio is the median of the per-round ratios A/B, shown with their min and max; the medians of each
side are shown next to it.  A ratio of medians would pair A's run from one round with B's from another and
hide the spread: it is not used.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Metric = Literal["wall", "cpu"]


@dataclass(frozen=True)
class Sample:
    """One run of one command: wall seconds, CPU seconds (user + sys of the whole process tree), the largest
    resident size of the tree seen at one time (0 when not sampled), and what went wrong, if anything."""

    wall: float
    cpu: float
    tree_rss_kib: int = 0
    error: str | None = None
    processes: int = 0  # processes seen in its tree (0 when not sampled)

    def value(self, metric: Metric) -> float:
        return self.wall if metric == "wall" else self.cpu


@dataclass(frozen=True)
class Pair:
    """A's and B's samples from one round."""

    a: Sample
    b: Sample


def round_order(names: Sequence[str], round_index: int) -> list[str]:
    """The order of a round: as given in even rounds, reversed in odd ones, so that of any two commands each
    goes first in every other round."""
    return list(names) if round_index % 2 == 0 else list(reversed(names))


def run_rounds(
    runs: Mapping[str, Callable[[], Sample]],
    most: int,
    *,
    least: int | None = None,
    allowance: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[dict[str, Sample]]:
    """Rounds that run every command once in round_order; one sample per command per round.  `most` rounds,
    or, with `allowance` (seconds), no round started that the rounds so far say would end past it, once
    `least` rounds are done: a loaded machine gets fewer rounds (the table's n column) rather than a bench
    that runs for an hour."""
    least = most if least is None else min(least, most)
    started = clock()
    done: list[dict[str, Sample]] = []
    while len(done) < most:
        if allowance is not None and len(done) >= max(least, 1):
            spent = clock() - started
            if spent + spent / len(done) > allowance:
                break
        done.append({name: runs[name]() for name in round_order(list(runs), len(done))})
    return done


def pairs_of(rounds: list[dict[str, Sample]], a: str, b: str) -> list[Pair]:
    """The pairs (A, B) of a row, one per round: A and B ran in the same round."""
    return [Pair(samples[a], samples[b]) for samples in rounds]


@dataclass(frozen=True)
class Goal:
    """What a row must show: `subject` is "ratio" (A/B), "a" (A's median in the row's metric) or "rss" (A's
    peak tree RSS in MB); `bound` an upper (`at_most`) or lower limit.  "works" only asks that every run passed
    its check (a failed one makes the row ERROR anyway)."""

    subject: Literal["ratio", "a", "rss", "works"]
    bound: float = 0.0
    at_most: bool = True

    def describe(self, unit: str) -> str:
        sign = "≤" if self.at_most else "≥"
        if self.subject == "works":
            return "every run checked"
        if self.subject == "ratio":
            return f"{sign} {self.bound:g}×"
        if self.subject == "rss":
            return f"RSS {sign} {self.bound:g} MB"
        return f"{sign} {self.bound:.2f} {unit}"

    def met(self, stats: RowStats) -> bool:
        if self.subject == "works":
            return True
        value = {"ratio": stats.ratio, "a": stats.a_median, "rss": stats.a_rss_mb}[self.subject]
        return value <= self.bound if self.at_most else value >= self.bound


@dataclass(frozen=True)
class RowStats:
    rounds: int
    ratio: float  # median of the per-round ratios A/B
    ratio_min: float
    ratio_max: float
    a_median: float
    b_median: float
    a_rss_mb: float  # the largest peak tree RSS of A over the rounds, in MB (10^6 bytes)


def row_stats(pairs: list[Pair], metric: Metric) -> RowStats:
    ratios = [pair.a.value(metric) / max(pair.b.value(metric), 1e-9) for pair in pairs]
    return RowStats(
        rounds=len(pairs),
        ratio=statistics.median(ratios),
        ratio_min=min(ratios),
        ratio_max=max(ratios),
        a_median=statistics.median(pair.a.value(metric) for pair in pairs),
        b_median=statistics.median(pair.b.value(metric) for pair in pairs),
        a_rss_mb=max(pair.a.tree_rss_kib for pair in pairs) * 1024 / 1e6,
    )


@dataclass(frozen=True)
class Row:
    """One line of the table: what was compared, how, the goals, and the outcome."""

    label: str  # "remote diagnose vs ssh tail -c 1MB"
    metric: Metric
    goals: tuple[Goal, ...] = ()
    pairs: list[Pair] = field(default_factory=list)
    show_rss: bool = False

    @property
    def errors(self) -> list[str]:
        return sorted({sample.error for pair in self.pairs for sample in (pair.a, pair.b) if sample.error})

    def verdict(self) -> str:
        """"pass", "FAIL", "—" (no goal) or "ERROR" (a run did not do what it should: its time means nothing)."""
        if self.errors or not self.pairs:
            return "ERROR"
        if not self.goals:
            return "—"
        stats = row_stats(self.pairs, self.metric)
        return "pass" if all(goal.met(stats) for goal in self.goals) else "FAIL"


UNITS = {"wall": "s", "cpu": "s CPU"}
COLUMNS = ("row", "n", "A median", "B median", "A/B: median (min–max)", "A tree RSS", "goal", "")


def render_row(number: int, row: Row) -> str:
    verdict = row.verdict()
    goals = ", ".join(goal.describe(UNITS[row.metric]) for goal in row.goals) or "—"
    if not row.pairs:
        cells = [f"{number}. {row.label}", "0", "", "", "", "", goals, verdict]
    else:
        stats = row_stats(row.pairs, row.metric)
        unit = UNITS[row.metric]
        cells = [
            f"{number}. {row.label}",
            str(stats.rounds),
            f"{stats.a_median:.3f} {unit}",
            f"{stats.b_median:.3f} {unit}",
            f"{stats.ratio:.2f}× ({stats.ratio_min:.2f}–{stats.ratio_max:.2f})",
            f"{stats.a_rss_mb:.0f} MB" if row.show_rss else "",
            goals,
            verdict,
        ]
    return markdown_row(cells)


def markdown_row(cells: Sequence[str]) -> str:
    """One Markdown table row; a `|` inside a cell is escaped."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def markdown_table(columns: Sequence[str], rows: list[str], errors: list[str]) -> str:
    """A Markdown table of rendered rows, then the rows' errors, one per line."""
    lines = [markdown_row(columns), "|" + "|".join("---" for _ in columns) + "|", *rows]
    if errors:
        lines += ["", "Errors (an ERROR row's times mean nothing):", *errors]
    return "\n".join(lines)


def render_table(rows: list[Row]) -> str:
    errors = [f"- row {number}: {error}" for number, row in enumerate(rows, 1) for error in row.errors]
    return markdown_table(COLUMNS, [render_row(number, row) for number, row in enumerate(rows, 1)], errors)
