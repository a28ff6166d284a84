"""What a reasoning rule may read about one failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from logsleuth.models import Failure, LaunchInfo


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a rule may read: the failure, the launch (engine, version, command, server_args) and the log's lines
    around it (the cascade and the lines the reader kept)."""

    failure: Failure
    launch: LaunchInfo
    lines: Sequence[str] = ()
