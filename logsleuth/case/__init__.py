"""`logsleuth case`: a case file any assistant can read (issue 18), and a draft pattern from a confirmed fix.

    build_case(report, limit=20_000) -> Case      the data: frozen dataclasses, redacted, fitted to the limit
    case_markdown(report, limit=20_000) -> str    what a user pastes into an assistant or an issue
    case_json(report, limit=20_000) -> dict       the same for machines (schema `logsleuth.case/1`)

Neither imports typer or rich.  See docs/case.md.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from logsleuth.case.model import CASE_LIMIT, CASE_SCHEMA, Case, LogWindow

if TYPE_CHECKING:
    from logsleuth.models import Report

__all__ = ["CASE_LIMIT", "Case", "LogWindow", "build_case", "case_json", "case_json_text", "case_markdown"]


def case_markdown(report: Report, *, limit: int = CASE_LIMIT, window: LogWindow | None = None, anonymize: bool = False) -> str:
    """The case file of `report`'s primary failure as Markdown, at most `limit` characters."""
    from logsleuth.case.markdown import render_case

    return render_case(build_case(report, limit=limit, window=window, anonymize=anonymize))


def _as_dict(case: Case) -> dict[str, Any]:
    from logsleuth import __version__

    return {"schema": CASE_SCHEMA, "tool": f"logsleuth {__version__}", **dataclasses.asdict(case)}


def dump_json(data: dict[str, Any]) -> str:
    """The JSON text the CLI prints: the one the limit is measured on."""
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def case_json(report: Report, *, limit: int = CASE_LIMIT, window: LogWindow | None = None, anonymize: bool = False) -> dict[str, Any]:
    """The case file as a JSON object; `dump_json` of it is at most `limit` characters (fitted as far as the
    parts allow: at the default limit always)."""
    case = build_case(report, limit=limit, window=window, anonymize=anonymize, measure=lambda c: len(dump_json(_as_dict(c))))
    return _as_dict(case)


def case_json_text(report: Report, *, limit: int = CASE_LIMIT, window: LogWindow | None = None, anonymize: bool = False) -> str:
    return dump_json(case_json(report, limit=limit, window=window, anonymize=anonymize))


def build_case(report: Report, **settings: Any) -> Case:
    """case/build.py's `build_case`, imported when a case is built: importing this package (for CASE_LIMIT, say)
    costs a start nothing more."""
    from logsleuth.case.build import build_case as build

    return build(report, **settings)
