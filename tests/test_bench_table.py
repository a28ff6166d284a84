"""`make bench`'s arithmetic and measuring: paired, interleaved rounds, the median of per-round ratios, goals,
the table, CPU of a whole process tree and its peak RSS.  Real subprocesses of tiny commands; nothing here
asserts how fast anything is."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from measure import command, exit_status_in, measure, measure_rounds  # noqa: E402
from table import (  # noqa: E402
    Goal,
    Pair,
    Row,
    Sample,
    pairs_of,
    render_table,
    round_order,
    row_stats,
    run_rounds,
)


def wall(a: float, b: float) -> Pair:
    return Pair(Sample(a, 0.0), Sample(b, 0.0))


def test_round_order_alternates_which_command_goes_first() -> None:
    names = ["fleet", "one host", "shell loop"]
    orders = [round_order(names, index) for index in range(4)]
    assert orders[0] == names and orders[1] == list(reversed(names)) and orders[2] == names
    for first, second in (("fleet", "one host"), ("fleet", "shell loop"), ("one host", "shell loop")):
        leads = [order.index(first) < order.index(second) for order in orders]
        assert leads == [True, False, True, False]


def test_ratio_is_the_median_of_per_round_ratios_not_a_ratio_of_medians() -> None:
    # per-round ratios 1.0, 3.0, 0.5 -> median 1.0; the ratio of the medians (2.0 / 2.0) would also be 1.0,
    # so a fourth pair makes them differ: ratios 1, 3, 0.5, 4 -> median 2.0; medians 2.5 / 2.0 = 1.25
    pairs = [wall(1.0, 1.0), wall(3.0, 1.0), wall(2.0, 4.0), wall(12.0, 3.0)]
    stats = row_stats(pairs, "wall")
    assert stats.ratio == pytest.approx(2.0)
    assert (stats.ratio_min, stats.ratio_max) == (pytest.approx(0.5), pytest.approx(4.0))
    assert (stats.a_median, stats.b_median) == (pytest.approx(2.5), pytest.approx(2.0))
    assert stats.rounds == 4


def test_cpu_rows_use_cpu_seconds_and_rss_is_the_largest_peak() -> None:
    pairs = [
        Pair(Sample(9.0, 0.30, tree_rss_kib=50_000), Sample(1.0, 0.10)),
        Pair(Sample(9.0, 0.20, tree_rss_kib=90_000), Sample(1.0, 0.10)),
        Pair(Sample(9.0, 0.10, tree_rss_kib=70_000), Sample(1.0, 0.10)),
    ]
    stats = row_stats(pairs, "cpu")
    assert stats.a_median == pytest.approx(0.20)
    assert stats.ratio == pytest.approx(2.0)
    assert stats.a_rss_mb == pytest.approx(90_000 * 1024 / 1e6)


@pytest.mark.parametrize(
    ("goal", "pairs", "verdict"),
    [
        (Goal("ratio", 1.5), [wall(1.4, 1.0), wall(1.5, 1.0), wall(9.0, 1.0)], "pass"),  # median 1.5
        (Goal("ratio", 1.5), [wall(1.6, 1.0), wall(1.7, 1.0), wall(0.1, 1.0)], "FAIL"),  # median 1.6
        (Goal("ratio", 3, at_most=False), [wall(3.0, 1.0), wall(4.0, 1.0)], "pass"),
        (Goal("ratio", 3, at_most=False), [wall(2.0, 1.0), wall(3.5, 1.0)], "FAIL"),
    ],
)
def test_a_goal_is_checked_against_the_median_ratio(goal: Goal, pairs: list[Pair], verdict: str) -> None:
    assert Row("row", "wall", (goal,), pairs).verdict() == verdict


def test_every_goal_of_a_row_must_be_met_and_a_failed_run_makes_the_row_an_error() -> None:
    fast_but_big = [Pair(Sample(1.0, 0.1, tree_rss_kib=200_000), Sample(1.0, 0.1))]
    assert Row("r", "wall", (Goal("ratio", 1.2), Goal("rss", 100)), fast_but_big).verdict() == "FAIL"
    assert Row("r", "wall", (Goal("ratio", 1.2), Goal("rss", 300)), fast_but_big).verdict() == "pass"
    failed = [Pair(Sample(0.01, 0.0, error="exit status 3"), Sample(1.0, 0.1))]
    assert Row("r", "wall", (Goal("ratio", 1.2),), failed).verdict() == "ERROR"
    assert Row("r", "wall", (), [wall(1.0, 1.0)]).verdict() == "—"
    assert Row("r", "wall", (Goal("works"),), [wall(9.0, 1.0)]).verdict() == "pass"
    assert Row("r", "wall", (Goal("works"),), failed).verdict() == "ERROR"


def test_the_table_shows_median_min_max_goal_and_verdict_and_escapes_pipes() -> None:
    rows = [
        Row("`grep X LOG | tail` vs diagnose", "wall", (Goal("ratio", 3, at_most=False),),
            [wall(4.0, 1.0), wall(2.0, 1.0), wall(5.0, 1.0)]),
        Row("CPU: diagnose", "cpu", (Goal("a", 0.2),), [Pair(Sample(1, 0.25), Sample(1, 0.15, error="boom"))]),
    ]
    table = render_table(rows).splitlines()
    assert table[2] == (
        "| 1. `grep X LOG \\| tail` vs diagnose | 3 | 4.000 s | 1.000 s | 4.00× (2.00–5.00) |  | ≥ 3× | pass |"
    )
    assert table[3].startswith("| 2. CPU: diagnose | 1 | 0.250 s CPU | 0.150 s CPU | 1.67× (1.67–1.67) |")
    assert table[3].endswith("| ≤ 0.20 s CPU | ERROR |")
    assert table[-1] == "- row 2: boom"


class FakeClock:
    """A clock that moves only when a command "runs": the allowance arithmetic without waiting."""

    def __init__(self, seconds_per_run: float) -> None:
        self.now = 0.0
        self.seconds_per_run = seconds_per_run

    def __call__(self) -> float:
        return self.now

    def run(self) -> Sample:
        self.now += self.seconds_per_run
        return Sample(self.seconds_per_run, 0.0)


@pytest.mark.parametrize(
    ("allowance", "least", "most", "expected"),
    [
        (None, 3, 9, 9),  # no allowance: every round asked for
        (35, 2, 9, 3),  # 10 s a round: after 3 (30 s) a 4th would end at 40 s
        (40, 2, 9, 4),  # ... ending exactly at the allowance is fine
        (5, 3, 9, 3),  # the allowance is spent at once: still the least number of rounds
        (1000, 3, 9, 9),  # never more than asked
        (5, 3, 2, 2),  # least above most: most
    ],
)
def test_rounds_stop_when_the_next_would_end_past_the_allowance(
    allowance: float | None, least: int, most: int, expected: int
) -> None:
    clock = FakeClock(5.0)  # two commands: 10 s a round
    runs = run_rounds({"a": clock.run, "b": clock.run}, most, least=least, allowance=allowance, clock=clock)
    assert len(runs) == expected


def test_rounds_run_the_commands_interleaved(tmp_path: Path) -> None:
    trace = tmp_path / "order"
    commands = {
        name: command(["sh", "-c", f"echo {name} >> {trace}"], exit_status_in(0)) for name in ("A", "B", "C")
    }
    runs = measure_rounds(commands, 4, warm=False)
    assert trace.read_text().split() == ["A", "B", "C", "C", "B", "A", "A", "B", "C", "C", "B", "A"]
    assert len(pairs_of(runs, "A", "C")) == 4
    assert all(sample.error is None for samples in runs for sample in samples.values())


def test_the_warm_up_run_is_not_counted_and_happens_once_per_command(tmp_path: Path) -> None:
    trace = tmp_path / "runs"
    once = {"A": command(["sh", "-c", f"echo A >> {trace}"], exit_status_in(0))}
    measure_rounds(once, 2)
    measure_rounds(once, 2)  # the same command in a second row: already warm
    assert trace.read_text().split() == ["A"] * 5


def test_a_run_with_the_wrong_exit_status_says_so_with_its_last_stderr_line() -> None:
    sample = measure(["sh", "-c", "echo first >&2; echo 'no such file' >&2; exit 3"], exit_status_in(1))
    assert sample.error is not None
    assert "exit status 3, expected 1" in sample.error and "(no such file)" in sample.error


def test_the_check_sees_what_the_command_printed() -> None:
    def saw_hello(status: int, stdout: bytes) -> str | None:
        return None if stdout == b"hello\n" else f"got {stdout!r}"

    assert measure(["echo", "hello"], saw_hello).error is None
    assert measure(["echo", "bye"], saw_hello).error == "echo bye: got b'bye\\n'"


BURN_IN_A_REAPED_GRANDCHILD = textwrap.dedent(
    """
    import os, time
    pid = os.fork()
    if pid == 0:
        while time.process_time() < 0.3:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
    """
)


def test_cpu_counts_a_forked_child_once_it_is_reaped() -> None:
    sample = measure([sys.executable, "-c", BURN_IN_A_REAPED_GRANDCHILD], exit_status_in(0), sample=True)
    assert sample.error is None
    assert sample.cpu >= 0.3  # the grandchild's 0.3 s reached us through its parent
    assert sample.processes >= 2


def gone(pid: int) -> bool:
    """Ended: no such process, or a zombie (a container's init may never reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_a_process_that_outlives_the_command_is_reported_and_ended(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    sample = measure(["sh", "-c", f"sleep 30 & echo $! > {pid_file}"], exit_status_in(0), sample=True)
    assert sample.error is not None and "outlived it" in sample.error
    orphan = int(pid_file.read_text())
    for _ in range(500):  # SIGKILL was sent: wait for the kernel to finish it
        if gone(orphan):
            break
        time.sleep(0.01)
    assert gone(orphan)


HOLD_MEMORY_IN_THREE_PROCESSES = textwrap.dedent(
    """
    import os, time

    def hold_40_mb():
        block = bytearray(40 * 1024 * 1024)
        for index in range(0, len(block), 4096):  # touch every page: resident
            block[index] = 1
        return block

    ready_read, ready_write = os.pipe()
    release_read, release_write = os.pipe()
    children = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            os.close(release_write)
            block = hold_40_mb()
            os.write(ready_write, b"x")
            os.read(release_read, 1)  # end of file when the parent closes its end
            os._exit(0)
        children.append(pid)
    block = hold_40_mb()
    got = 0
    while got < 2:
        got += len(os.read(ready_read, 2 - got))
    time.sleep(0.5)  # all three hold their memory: many samples see them at once
    os.close(release_write)
    for pid in children:
        os.waitpid(pid, 0)
    """
)


def test_tree_rss_sums_the_parent_and_its_forked_children_at_one_moment() -> None:
    sample = measure([sys.executable, "-c", HOLD_MEMORY_IN_THREE_PROCESSES], exit_status_in(0), sample=True)
    assert sample.error is None
    assert sample.tree_rss_kib * 1024 >= 3 * 40 * 1024 * 1024  # three processes of 40 MiB each, at one moment
    assert sample.processes == 3


def test_fleet_report_check_wants_every_source_read() -> None:
    sys.path.insert(0, str(BENCH.parent / "tests" / "ssh"))
    from bench_ssh import fleet_report, output_has

    failure = {"failures": [{"signature": "AssertionError"}]}
    good = json.dumps({**failure, "sources": [{"name": "a", "error": None}, {"name": "b", "error": None}]})
    assert fleet_report(2)(1, good.encode()) is None
    assert "expected 2" in (fleet_report(2)(1, json.dumps({**failure, "sources": [{"error": None}]}).encode()) or "")
    refused = json.dumps({**failure, "sources": [{"error": None}, {"error": "node02: connection refused"}]})
    assert "connection refused" in (fleet_report(2)(1, refused.encode()) or "")
    assert fleet_report(2)(3, good.encode()) == "exit status 3, expected 1 (failure found)"
    assert output_has(b"sigquit", 2)(0, b"sigquit\nsigquit\n") is None
    assert output_has(b"sigquit", 2)(0, b"sigquit\n") == "b'sigquit' found 1 times in the output, expected 2"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("MaxStartups 200:30:400\n", "`MaxStartups 200:30:400`: 64 logins at once are let in"),
        ("MaxStartups 10:30:100\n", "`MaxStartups 10:30:100`: 64 logins at once will be refused, it needs "
                                    "`MaxStartups 200:30:400`"),
        ("", "`MaxStartups 10:30:100`: 64 logins at once will be refused, it needs `MaxStartups 200:30:400`"),
    ],
)
def test_the_header_says_whether_the_sshd_lets_64_logins_in(tmp_path: Path, line: str, expected: str) -> None:
    sys.path.insert(0, str(BENCH.parent / "tests" / "ssh"))
    from bench_ssh import describe_sshd_limits
    from sshd_server import SSHD

    (tmp_path / "sshd_config.2222").write_text(f"Port 2222\n{line}LogLevel ERROR\n")
    server = SSHD(tmp_path, 2222, 2223, tmp_path / "key", "ssh-ed25519 AAAA", tmp_path / "logs", tmp_path / "home")
    assert describe_sshd_limits(server) == expected


def test_percentiles_interpolate_between_the_closest_ranks() -> None:
    from bench_watch import percentiles

    twenty = [float(value) for value in range(20, 0, -1)]  # 20 runs, in no particular order
    found = percentiles(twenty)
    assert found.p50 == pytest.approx(10.5)  # the median: between the 10th and 11th
    assert found.p95 == pytest.approx(19.05)  # rank 1 + 0.95 × 19 = 19.05: between the 19th and 20th
    assert percentiles([0.2]) == percentiles([0.2, 0.2])
    with pytest.raises(ValueError):
        percentiles([])


def delays(*seconds: float, error: str | None = None) -> list[Sample]:
    return [Sample(value, 0.0, error=error) for value in seconds]


def test_a_watch_row_judges_the_p50_of_its_delays_or_of_its_per_round_ratios() -> None:
    from bench_watch import WatchRow

    assert WatchRow("crash", delays(0.1, 0.12, 0.9), 0.150).verdict() == "pass"  # p50 0.12
    assert WatchRow("crash", delays(0.1, 0.16, 0.17), 0.150).verdict() == "FAIL"  # p50 0.16
    assert WatchRow("crash", delays(0.1, 0.1, error="no failure event"), 0.150).verdict() == "ERROR"
    assert WatchRow("crash", [], 0.150).verdict() == "ERROR"
    # A's p50 is 1.0 and B's 1.0, but per round A/B is 0.5, 2.0, 2.0: p50 2.0
    paired = WatchRow("start", delays(0.5, 1.0, 2.0), 1.2, delays(1.0, 0.5, 1.0))
    assert paired.ratios == [pytest.approx(0.5), pytest.approx(2.0), pytest.approx(2.0)]
    assert paired.verdict() == "FAIL"
    assert WatchRow("start", delays(0.5, 1.0, 1.1), 1.2, delays(1.0, 1.0, 1.0)).verdict() == "pass"


def test_the_watch_table_shows_p50_p95_of_each_side_and_lists_errors() -> None:
    from bench_watch import WatchRow, render_watch_table

    rows = [
        WatchRow("crash | json", delays(0.1, 0.2, 0.3), 0.150),
        WatchRow("start", delays(1.0, 1.0, 1.0), 1.2, delays(0.5, 1.0, 1.0)),
        WatchRow("tp4", delays(0.1, error="boom"), 0.150),
    ]
    table = render_watch_table(rows).splitlines()
    assert table[0] == "| watch row | n | A p50 | A p95 | B p50 | B p95 | A/B p50 (p95) | goal |  |"
    assert table[2] == "| 1. crash \\| json | 3 | 200 ms | 290 ms |  |  |  | p50 ≤ 150 ms | FAIL |"
    assert table[3] == "| 2. start | 3 | 1000 ms | 1000 ms | 1000 ms | 1000 ms | 1.00× (1.90×) | A/B p50 ≤ 1.2× | pass |"
    assert table[4].endswith("| p50 ≤ 150 ms | ERROR |")
    assert table[-1] == "- watch row 3: boom"


def test_the_tp4_launch_declares_four_ranks_and_ends_in_the_last_ranks_traceback() -> None:
    from bench_watch import single_rank_launch, tp4_launch

    tp4 = tp4_launch()
    assert "tp_size=4," in tp4.before.splitlines()[0]
    assert [record.split("]")[0].split()[-1] for record in (*tp4.earlier, tp4.last)] == ["TP2", "TP0", "TP3", "TP1"]
    assert tp4.last.rstrip("\n").splitlines()[-1].startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert "Traceback" not in tp4.before
    single = single_rank_launch()
    assert "tp_size=1," in single.before.splitlines()[0] and single.earlier == ()
    assert single.last.rstrip("\n").splitlines()[-1].startswith("AssertionError")  # a real CPython traceback


def failure_event(types: list[str], ranks: list[str]) -> dict[str, object]:
    exceptions = [{"type": kind} for kind in types]
    return {"event": "failure", "report": {"failures": [{"ranks": ranks, "exceptions": exceptions}]}}


def test_a_crash_run_counts_only_if_the_failure_names_the_crash_and_every_rank() -> None:
    from bench_watch import names_four_oom_ranks, names_the_assertion

    assert names_the_assertion(failure_event(["AssertionError"], ["TP0"])) is None
    assert "not the AssertionError" in (names_the_assertion(failure_event(["KeyError"], ["TP0"])) or "")
    assert "not the AssertionError" in (names_the_assertion({"event": "failure", "report": {}}) or "")
    four = ["TP2", "TP0", "TP3", "TP1"]
    assert names_four_oom_ranks(failure_event(["torch.OutOfMemoryError"], four)) is None
    assert "not TP0-TP3" in (names_four_oom_ranks(failure_event(["torch.OutOfMemoryError"], four[:3])) or "")
    assert "not the OutOfMemoryError" in (names_four_oom_ranks(failure_event(["RuntimeError"], four)) or "")


def test_the_tail_baseline_must_print_exactly_the_last_line() -> None:
    from bench_watch import prints_exactly

    check = prints_exactly(b"last\n")
    assert check(0, b"last\n") is None
    assert check(0, b"other\n") == "printed b'other\\n', expected b'last\\n'"
    assert check(255, b"") == "exit status 255, expected 0"
