"""`--explain`: the case file of a failure, sent to an OpenAI-compatible endpoint the user names, and the
model's answer, checked against a strict schema and returned as an unverified `Explanation`.

Opt-in: nothing here runs, and nothing is sent, unless the command line says --explain.  What is sent is the
case file (logsleuth.case), redacted here once more whatever the report's own redaction; never the raw log.
The answer, as untrusted as the log, is made inert and redacted as it arrives.  It never replaces a pattern's
diagnosis and never decides the exit status: any failure is one `ExplainError` line for stderr, and the report
is printed as it would be without --explain.  docs/explain.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from logsleuth.explain.config import ExplainOptions, ExplainSettings, explain_options, resolve_settings
from logsleuth.explain.errors import ExplainError
from logsleuth.models import Explanation, FlagCheck, FlagOp, LaunchInfo, Report

__all__ = [
    "EXPLAIN_CASE_LIMIT",
    "ExplainError",
    "ExplainOptions",
    "ExplainSettings",
    "explain_options",
    "explain_report",
    "resolve_settings",
]

BuildCase = Callable[[Report], str]
# The case file --explain sends is fitted to this, smaller than `logsleuth case`'s (case.CASE_LIMIT): about 4,000
# tokens, so that with the system message (~1,000) and the answer's max_tokens (client.MAX_TOKENS, 2,048) the
# request fits a local model served with an 8,192-token context.  The case keeps the log's own lines first and
# drops logsleuth's reading before any of them (case/fit.py).
EXPLAIN_CASE_LIMIT = 12_000
CheckFlags = Callable[[tuple[FlagOp, ...], LaunchInfo], tuple[FlagCheck, ...]]


def _quoted_in(quote: str, text: str) -> bool:
    """Whether the case file holds the quote, whitespace aside (a model re-spaces what it copies)."""
    return " ".join(quote.split()) in " ".join(text.split())


def explain_report(
    report: Report,
    settings: ExplainSettings,
    *,
    build_case: BuildCase | None = None,
    check_flags: CheckFlags | None = None,
) -> Explanation:
    """Ask the model about the report's primary failure.  `build_case`: logsleuth.case.case_markdown unless
    given; `check_flags`: marks each proposed flag ✓/✗ for the log's engine version (logsleuth.check), or None
    to leave them unchecked.  Raises ExplainError (one line) when there is no answer to show."""
    if report.primary is None:
        raise ExplainError("the report holds no failure to explain; nothing was sent")
    # Imported here: urllib.request and the case builder cost a plain diagnose nothing.
    from logsleuth.case import case_markdown
    from logsleuth.explain.client import ask_model
    from logsleuth.redact import redact_report, redact_secrets
    from logsleuth.render.safety import strip_controls

    build = build_case or partial(case_markdown, limit=EXPLAIN_CASE_LIMIT)
    # Redacted before and after building: a --no-redact report, or a case builder that adds text, leaks nothing.
    case_text = redact_secrets(build(redact_report(report)))
    model, answer = ask_model(case_text, settings)

    def shown(text: str) -> str:
        # The answer is as untrusted as the log, and a server may echo the key: inert and redacted here, once, so
        # every format (JSON and the Slack post included) and every flag check gets it so, --no-redact or not.
        return settings.without_secrets(strip_controls(text))

    explanation = redact_report(
        Explanation(
            model=shown(model),
            endpoint=settings.endpoint,
            root_cause=shown(answer.root_cause),
            category=answer.category,
            flags=tuple(replace(op, value=shown(op.value)) if op.value else op for op in answer.flags),
            upgrade=shown(answer.upgrade) if answer.upgrade else None,
            evidence=tuple((shown(quote), _quoted_in(quote, case_text)) for quote in answer.evidence),
        )
    )
    if check_flags is None or not explanation.flags:
        return explanation
    return replace(explanation, checks=check_flags(explanation.flags, report.launch))
