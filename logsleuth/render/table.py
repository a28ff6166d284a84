"""The summary table of a multi-failure report: fixed columns that never wrap, the same in every format."""

from __future__ import annotations

from logsleuth.render.view import SummaryRow

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
    failure = columns.index(1)
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    others = sum(widths) - widths[failure] + 2 * (len(columns) - 1) + 2
    widths[failure] = max(MIN_FAILURE_WIDTH, min(widths[failure], width - others))
    right_aligned = {columns.index(0), columns.index(2)}
    lines = []
    for row in cells:
        if len(row[failure]) > widths[failure]:
            row[failure] = row[failure][: widths[failure] - 1] + "…"
        padded = [
            cell.rjust(widths[i]) if i in right_aligned else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append(("  " + "  ".join(padded)).rstrip())
    return lines
