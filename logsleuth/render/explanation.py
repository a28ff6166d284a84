"""What every format shows of `--explain`'s answer (Report.explanation), decided once: the renderers lay it out
in a section of its own, after everything logsleuth itself found, so it never stands in for a pattern's
diagnosis.

The answer came from a model that read log text: it is as untrusted as the log, so every string here has been
through `safety.clean` (no control characters or escape sequences) and each renderer still applies its
format's escaping.  Each flag the model proposes is shown with its value shell-quoted, and marked with the reason:
✓ only when the change was verified (validation and known traps), ✗ when it fails, · when nothing fails but it is
not verified, and "not checked" otherwise; each line it quotes is marked by whether the case file holds it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from logsleuth.models import Explanation, FlagCheck, FlagOp
from logsleuth.render.safety import clean
from logsleuth.render.view import describe_op, prose

CHECKED_OK, CHECKED_BAD, NOT_CHECKED = "✓", "✗", "?"
NOT_VERIFIED = "·"  # checked, nothing fails, but not verified (a flag that exists, a removal without the command)
NOT_IN_CASE = "not in the case file"
MAX_QUOTE_SHOWN = 200


LABEL = "unverified explanation from "  # + the model: the section's name in every format


def label(model: str) -> str:
    return LABEL.capitalize() + model


@dataclass(frozen=True)
class ChangeView:
    """One change an explanation proposes, with its check's mark."""
    mark: str  # CHECKED_OK, CHECKED_BAD, NOT_VERIFIED or NOT_CHECKED
    change: str  # "set --context-len 4096"
    why: str  # the check's reason, or "not checked"


@dataclass(frozen=True)
class ExplanationView:
    """What an explanation shows, in every format."""
    heading: str  # "Unverified explanation from MODEL"
    note: str  # what it is, where it came from, and what to do with it
    short_note: str  # the same in a few words (Slack)
    category: str
    root_cause: str
    changes: list[ChangeView]
    upgrade: str | None
    quotes: list[tuple[str, str]]  # (mark, the quoted line with NOT_IN_CASE when the case file lacks it)


def proposed_change(op: FlagOp) -> str:
    """A proposed operation with its value shell-quoted, as the user might copy it: a model's value is never
    printed as shell syntax (`set --model-path '$(touch x)'`, not `set --model-path $(touch x)`)."""
    if op.value is None or op.op == "rename":  # the flags are flag-shaped (explain.answer.FLAG_SHAPE)
        return describe_op(op)
    return f"{op.op} {shlex.quote(op.flag)} {shlex.quote(op.value)}"


def _changes(explanation: Explanation) -> list[ChangeView]:
    if len(explanation.checks) != len(explanation.flags):  # not checked: none is passed off as checked
        return [ChangeView(NOT_CHECKED, clean(proposed_change(op)), "not checked") for op in explanation.flags]
    return [
        ChangeView(_mark(check), clean(proposed_change(check.op)), prose(check.reason))
        for check in explanation.checks
    ]


def _mark(check: FlagCheck) -> str:
    return CHECKED_BAD if not check.ok else CHECKED_OK if check.verified else NOT_VERIFIED


def explanation_view(explanation: Explanation) -> ExplanationView:
    return ExplanationView(
        heading=label(clean(explanation.model, 120)),
        note=clean(
            f"A model's answer to the redacted case file, sent to {explanation.endpoint}. It is not a logsleuth "
            "diagnosis and logsleuth did not check it, except where marked: verify it before acting on it.",
            1000,
        ),
        short_note="a model's answer, not a logsleuth diagnosis: verify it first",
        category=clean(explanation.category, 80),
        root_cause=prose(explanation.root_cause),
        changes=_changes(explanation),
        upgrade=prose(explanation.upgrade) if explanation.upgrade else None,
        quotes=[
            (CHECKED_OK, clean(quote, MAX_QUOTE_SHOWN)) if found
            else (CHECKED_BAD, f"{clean(quote, MAX_QUOTE_SHOWN)} ({NOT_IN_CASE})")
            for quote, found in explanation.evidence
        ],
    )
