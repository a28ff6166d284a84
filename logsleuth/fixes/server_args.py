"""A launch command rebuilt from a logged `server_args=` line, when the log has no command line itself."""

from __future__ import annotations

import ast
import json
import shlex

from logsleuth.fixes import catalog as catalogs


def command_from_server_args(pairs: tuple[tuple[str, str], ...], version: str | None) -> str | None:
    """Rebuild a launch command from a logged `server_args=`: every field that differs
    from that version's default becomes its flag.  Fields SGLang derived itself appear
    too; the command is equivalent to the one that ran."""
    flags = catalogs.load("sglang", version)
    if flags is None:
        return None
    tokens = ["python", "-m", "sglang.launch_server"]
    for dest, raw in pairs:
        info = flags.by_field(dest)
        if info is None:
            continue
        preferred = "--" + dest.replace("_", "-")
        name = preferred if preferred in info.aliases else info.name
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue  # an object repr we cannot turn back into a flag
        if value == info.default or value is None:
            continue
        if not info.takes_value:
            if value is True:
                tokens.append(name)
            continue
        if isinstance(value, (list, tuple)):
            tokens.append(name)
            tokens.extend(str(item) for item in value)
        elif isinstance(value, dict):
            tokens.extend((name, json.dumps(value)))
        else:
            tokens.extend((name, str(value)))
    return shlex.join(tokens) if len(tokens) > 3 else None
