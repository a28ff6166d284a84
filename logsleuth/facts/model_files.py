"""The loaders' messages about a model's files (model_files.toml, with its sources)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from logsleuth.facts.table import table_rows
from logsleuth.lazyre import compile_gated_regex

if TYPE_CHECKING:
    import regex


@dataclass(frozen=True)
class ModelFileMessage:
    """One raise site: its message (`regex`, naming path / file / repo / status) and the advice `kind` it needs."""

    name: str
    kind: str
    regex: regex.Pattern[str]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class ModelFileAdvice:
    """What one kind of message means and what to do: templates with {path}, {file}, {repo}, {status}."""

    title: str
    cause: str
    summary: str
    steps: tuple[str, ...]


@cache
def model_file_advice() -> dict[str, ModelFileAdvice]:
    return {
        row["name"]: ModelFileAdvice(row["title"], row["cause"], row["summary"], tuple(row.get("steps", ())))
        for row in table_rows("model_files.toml", "kind")
    }


@cache
def model_file_messages() -> tuple[ModelFileMessage, ...]:
    return tuple(
        ModelFileMessage(row["name"], row["kind"], compile_gated_regex(row["regex"]), tuple(row.get("sources", ())))
        for row in table_rows("model_files.toml", "message")
    )
