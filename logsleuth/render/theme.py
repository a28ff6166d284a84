"""Named styles for the rich renderer, defined in one place (like rich's default_styles)."""

from __future__ import annotations

from rich.theme import Theme

STYLES = {
    "logsleuth.verdict": "bold red",
    "logsleuth.where": "dim",
    "logsleuth.heading": "bold",
    "logsleuth.frame.app": "bold cyan",
    "logsleuth.frame.library": "dim",
    "logsleuth.frame.source": "",
    "logsleuth.frame.folded": "dim italic",
    "logsleuth.marker": "bold cyan",
    "logsleuth.exception": "bold red",
    "logsleuth.relation": "italic dim",
    "logsleuth.root_cause": "",
    "logsleuth.fix": "green",
    "logsleuth.change": "bold green",
    "logsleuth.command": "bold",
    "logsleuth.context": "yellow",
    "logsleuth.note": "dim",
    "logsleuth.table.header": "bold",
}

THEME = Theme(STYLES)
