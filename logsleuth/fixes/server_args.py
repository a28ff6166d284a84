"""A launch command rebuilt from a logged `server_args=` line, when the log has no command line itself."""

from __future__ import annotations

import ast
import json
import shlex

from logsleuth.fixes import catalog as catalogs


def command_from_server_args(pairs: tuple[tuple[str, str], ...], version: str | None) -> str | None:
    """Rebuild a launch command from a logged `server_args=`: every field that differs
    from that version's default becomes its flag.  Fields SGLang derived itself appear
    too; the command is equivalent to the one that ran.  Without a version, the release
    whose fields the line holds is used (see _fitting_catalog)."""
    if not any(dest == "model_path" and raw not in ("None", "''", '""') for dest, raw in pairs):
        # No model in the line (a repr the paste cut short, a program of another entry point logging its own
        # fields): the rebuilt line would be no launch at all, only a command the log never gave.
        return None
    flags = catalogs.load("sglang", version) if version is not None else _fitting_catalog(pairs)
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
        if value is None or not info.default_known or value == info.default:
            continue  # at its default; or its default is computed (a static catalog): no flag is invented for it
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


def _fitting_catalog(pairs: tuple[tuple[str, str], ...]) -> catalogs.Catalog | None:
    """The catalog of the release that printed these fields: a `ServerArgs` repr lists every field of its
    release, so the catalog that sets most of them is that release's, the newest on a tie (a short, pasted
    repr).  The newest catalog alone would drop a field it no longer has (`cuda_graph_max_bs`, split in
    0.5.23) and turn its own new defaults into flags this launch never had."""
    logged = {dest for dest, _ in pairs}
    best: tuple[int, catalogs.Catalog] | None = None
    for engine, version in catalogs.available():
        catalog = catalogs.load(engine, version) if engine == "sglang" else None
        if catalog is None or catalog.version != version:
            continue
        names = {name for info in catalog.flags for name in (info.name, *info.aliases)}
        fields = {info.dest for info in catalog.flags}
        held = sum(1 for dest in logged if dest in fields or "--" + dest.replace("_", "-") in names)
        if best is None or held > best[0] or (held == best[0] and _newer(catalog, best[1])):
            best = (held, catalog)
    return best[1] if best is not None else catalogs.load("sglang", None)


def _newer(one: catalogs.Catalog, other: catalogs.Catalog) -> bool:
    from logsleuth.versions import version_key

    key, other_key = version_key(one.version), version_key(other.version)
    return key is not None and (other_key is None or key > other_key)
