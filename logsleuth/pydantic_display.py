"""pydantic's display after a failed validation's message (pydantic-core's ValidationError.__str__):
`  Value error, <the validator's message> [type=value_error, input_value=…, input_type=…]`.  The engine's words end
where the display begins.  vLLM's config classes are pydantic dataclasses (vllm/config/, 0.10 on), so its checks
reach users wrapped this way; three readers want the message without the display (a typeless error line, the
engine the message shows, the validator's error in the evidence)."""

from __future__ import annotations

DISPLAY_START = "[type="


def without_pydantic_display(message: str) -> str:
    """The message up to pydantic's ` [type=…, input_value=…, input_type=…]`, stripped.  The display is always set
    off by white space, so a `[type=` glued to a word is the message's own text.  String search, not a regex: the
    message may be long, and the display starts after a run of spaces."""
    start = message.find(DISPLAY_START)
    while start > 0 and not message[start - 1].isspace():
        start = message.find(DISPLAY_START, start + 1)
    return (message[:start] if start > 0 else message).strip()
