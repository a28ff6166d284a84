"""The tables of a multi-failure or fleet report: fixed columns that never wrap, the same in every format."""

from __future__ import annotations

from logsleuth.render.view import HostRow, SummaryRow

MIN_FAILURE_WIDTH = 10  # the failure column gives way to the others down to this; each failure is named in full below


def summary_table(rows: list[SummaryRow], width: int, drop_empty: bool = False) -> list[str]:
    """A fixed-width table; the failure column takes what the others leave.  With
    `drop_empty`, the ranks and hosts columns are left out when no row has any."""
    header = ["#", "Failure", "Count", "Ranks", "Hosts", "Category"]
    cells = [header] + [[str(r.index), r.failure, str(r.count), r.ranks, r.hosts, r.category] for r in rows]
    columns = [
        column
        for column in range(6)
        if not (drop_empty and column in (3, 4) and all(row[column] == "-" for row in cells[1:]))
    ]
    cells = [[row[column] for column in columns] for row in cells]
    return layout(cells, width, flexible=columns.index(1), right_aligned={columns.index(0), columns.index(2)})


def host_table(rows: list[HostRow], width: int) -> list[str]:
    """One line per host of a fleet: host, outcome, its first failure, when; the failure column gives way."""
    cells = [["Host", "Outcome", "First failure", "Time"]] + [[r.host, r.outcome, r.failure, r.time] for r in rows]
    return layout(cells, width, flexible=2)


def layout(cells: list[list[str]], width: int, flexible: int, right_aligned: frozenset[int] | set[int] = frozenset()) -> list[str]:
    """`cells` (a header row first) in padded columns two spaces apart; the `flexible` column is cut with `…` to
    what the others leave of `width` (never below MIN_FAILURE_WIDTH)."""
    cells = [list(row) for row in cells]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    others = sum(widths) - widths[flexible] + 2 * (len(widths) - 1) + 2
    widths[flexible] = max(MIN_FAILURE_WIDTH, min(widths[flexible], width - others))
    lines = []
    for row in cells:
        if len(row[flexible]) > widths[flexible]:
            row[flexible] = row[flexible][: widths[flexible] - 1] + "…"
        padded = [
            cell.rjust(widths[i]) if i in right_aligned else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append(("  " + "  ".join(padded)).rstrip())
    return lines
