"""pydantic's display after a failed validation's message (pydantic-core's ValidationError.__str__):
`  Value error, <the validator's message> [type=value_error, input_value=…, input_type=…]`.  The engine's words end
where the display begins.  vLLM's config classes are pydantic dataclasses (vllm/config/, 0.10 on), so its checks
reach users wrapped this way; three readers want the message without the display (a typeless error line, the
engine the message shows, the validator's error in the evidence)."""

from __future__ import annotations

from logsleuth.models import ExceptionBlock

DISPLAY_START = "[type="


def without_pydantic_display(message: str) -> str:
    """The message up to pydantic's ` [type=…, input_value=…, input_type=…]`, stripped.  The display is always set
    off by white space, so a `[type=` glued to a word is the message's own text.  String search, not a regex: the
    message may be long, and the display starts after a run of spaces."""
    start = message.find(DISPLAY_START)
    while start > 0 and not message[start - 1].isspace():
        start = message.find(DISPLAY_START, start + 1)
    return (message[:start] if start > 0 else message).strip()


# pydantic formats a validator's ValueError inside a ValidationError's message as "Value error, {error}"
# (pydantic-core's `value_error` message template) and ends the error with its display's `[type=value_error,
# input_value=…, input_type=…]`; the URL line follows.  vLLM's config classes are pydantic dataclasses, so their
# checks reach users so: `ValidationError: 1 validation error for ModelConfig` / `  Value error, <vLLM's message>`.
VALUE_ERROR = "Value error, "
_URL_LINE = "For further information visit"


def validator_error(block: ExceptionBlock) -> str | None:
    """The message of the ValueError a validator raised, which a pydantic ValidationError's message carries after
    `Value error, ` (the first such error of several), without pydantic's display; None for any other exception.
    String search, not a regex: the message may be long, and pydantic's display starts with a space run."""
    if not block.type.endswith("ValidationError"):
        return None
    message = block.message
    start = message.find(VALUE_ERROR)
    if start < 0 or message[:start].rstrip(" \t")[-1:] not in ("", "\n"):
        return None  # only an error line of pydantic's, never the words quoted inside another message
    body = message[start + len(VALUE_ERROR):]
    if (url_line := body.find(_URL_LINE)) >= 0:
        body = body[:url_line]
    return without_pydantic_display(body) or None


def checked_as(block: ExceptionBlock) -> tuple[str, str]:
    """The type and message the engine's own check raised: for a pydantic ValidationError whose validator raised a
    ValueError, that ValueError (its template is what the raise site index holds: `num_redundant_experts should be
    used with EPLB.{}`, raised in vllm/config/parallel.py), else the block's own type and message."""
    raised = validator_error(block)
    return ("ValueError", raised) if raised is not None else (block.type, block.message)
