"""The answer asked of the model: its JSON schema, and the strict check every answer passes before it is shown.

The schema goes to the server as `response_format` (json_schema) where the server takes it, and into the
prompt always; whatever the server did with it, `read_answer` checks the reply again here, since a server may
ignore response_format and a model may ignore the prompt.  Anything that does not fit is an `ExplainError`
naming the field: half an answer is never shown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from logsleuth.diagnosis.schema import CATEGORIES
from logsleuth.explain.errors import ExplainError
from logsleuth.lazyre import compile_lazily
from logsleuth.models import FlagOp

OTHER_CATEGORY = "other"
OPS = ("add", "remove", "set", "rename")
MAX_FLAGS = 12
MAX_EVIDENCE = 5
# Lengths beyond which an answer is not an explanation but a runaway model.
MAX_ROOT_CAUSE = 2000
MAX_UPGRADE = 1000
MAX_QUOTE = 400
MAX_VALUE = 500
# A command-line flag as typed: `--tp-size`, `-tp`; never prose ("tensor parallel size").
FLAG_SHAPE = compile_lazily(r"--?[A-Za-z0-9][A-Za-z0-9_.\-]*")

_NULLABLE_STRING = {"type": ["string", "null"]}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["root_cause", "category", "fix", "upgrade", "evidence"],
    "properties": {
        "root_cause": {"type": "string", "minLength": 1, "maxLength": MAX_ROOT_CAUSE},
        "category": {"type": "string", "enum": [*CATEGORIES, OTHER_CATEGORY]},
        "fix": {
            "type": "array",
            "maxItems": MAX_FLAGS,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["op", "flag", "value", "to"],
                "properties": {
                    "op": {"type": "string", "enum": list(OPS)},
                    "flag": {"type": "string", "pattern": f"^{FLAG_SHAPE.pattern}$"},
                    "value": _NULLABLE_STRING,
                    "to": _NULLABLE_STRING,
                },
            },
        },
        "upgrade": {"type": ["string", "null"], "maxLength": MAX_UPGRADE},
        "evidence": {
            "type": "array",
            "maxItems": MAX_EVIDENCE,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_QUOTE},
        },
    },
}


@dataclass(frozen=True)
class Answer:
    """An answer that fits the schema."""

    root_cause: str
    category: str
    flags: tuple[FlagOp, ...]
    upgrade: str | None
    evidence: tuple[str, ...]


def _invalid(where: str, what: str) -> ExplainError:
    return ExplainError(f"the answer does not fit the answer's schema: {where}: {what}")


def _string(value: object, name: str, limit: int, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _invalid(name, "must be a non-empty string" + (" or null" if nullable else ""))
    if len(value) > limit:
        raise _invalid(name, f"longer than {limit} characters")
    return value.strip()


def _flag_value(value: object, where: str) -> str | None:
    """A value as the command line takes it: a string; a number is written as one (`15`), a switch has none."""
    if value is None or isinstance(value, str):
        if value is not None and len(value) > MAX_VALUE:
            raise _invalid(where, f"longer than {MAX_VALUE} characters")
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise _invalid(where, "must be a string or null")


def _flag_op(item: object, index: int) -> FlagOp:
    where = f"fix[{index}]"
    if not isinstance(item, dict):
        raise _invalid(where, "must be an object")
    extra = sorted(set(item) - {"op", "flag", "value", "to"})
    if extra:
        raise _invalid(f"{where}.{extra[0]}", "is not a field of a flag operation (op, flag, value, to)")
    op = item.get("op")
    if op not in OPS:
        raise _invalid(f"{where}.op", f"{op!r} is not one of {', '.join(OPS)}")
    flag = item.get("flag")
    if not isinstance(flag, str) or not FLAG_SHAPE.fullmatch(flag):
        raise _invalid(f"{where}.flag", f"{flag!r} is not a command-line flag (--name)")
    to = _flag_value(item.get("to"), f"{where}.to")
    if op == "rename" and (to is None or not FLAG_SHAPE.fullmatch(to)):
        raise _invalid(f"{where}.to", "a rename needs the new flag (--name)")
    return FlagOp(op, flag, _flag_value(item.get("value"), f"{where}.value"), to if op == "rename" else None)


def validate_answer(data: object) -> Answer:
    """`data` (parsed JSON) as an Answer, or an ExplainError naming the first field that does not fit."""
    if not isinstance(data, dict):
        raise _invalid("the answer", "must be a JSON object")
    extra = sorted(set(data) - set(ANSWER_SCHEMA["properties"]))
    if extra:
        raise _invalid(extra[0], "is not a field of the answer")
    root_cause = _string(data.get("root_cause"), "root_cause", MAX_ROOT_CAUSE)
    category = data.get("category")
    if category not in CATEGORIES and category != OTHER_CATEGORY:
        raise _invalid("category", f"{category!r} is not a logsleuth category or {OTHER_CATEGORY!r}")
    fix = data.get("fix", [])
    if not isinstance(fix, list) or len(fix) > MAX_FLAGS:
        raise _invalid("fix", f"must be a list of at most {MAX_FLAGS} flag operations")
    evidence = data.get("evidence", [])
    if not isinstance(evidence, list) or len(evidence) > MAX_EVIDENCE:
        raise _invalid("evidence", f"must be a list of at most {MAX_EVIDENCE} quoted lines")
    quotes = [_string(quote, f"evidence[{index}]", MAX_QUOTE) for index, quote in enumerate(evidence)]
    assert root_cause is not None  # not nullable
    return Answer(
        root_cause=root_cause,
        category=category,
        flags=tuple(_flag_op(item, index) for index, item in enumerate(fix)),
        upgrade=_string(data.get("upgrade"), "upgrade", MAX_UPGRADE, nullable=True),
        evidence=tuple(quote for quote in quotes if quote is not None),
    )


# A reasoning model served without a reasoning parser writes its thoughts first.
_THINKING = compile_lazily(r"^\s*<think>.*?</think>", re.DOTALL)
_FENCED = compile_lazily(r"```(?:json)?\s*\n(.*?)\n\s*```", re.DOTALL)


def _json_text(content: str) -> str:
    """The JSON in a reply: the whole reply, else a fenced block, else from the first `{` to the last `}`."""
    text = _THINKING.sub("", content).strip()
    if text.startswith("{"):
        return text
    fenced = _FENCED.search(text)
    if fenced:
        return fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def read_answer(content: str) -> Answer:
    """The model's reply (`choices[0].message.content`) as a checked Answer."""
    try:
        data = json.loads(_json_text(content))
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise ExplainError(f"the answer is not JSON ({reason}): {content[:60]!r}") from None
    return validate_answer(data)
