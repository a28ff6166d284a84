"""Build ``logsleuth/fixes/catalogs/sglang-<version>.json`` (package data) from the REAL launch_server argparse parser.

Run on the host: ``dump_flags.py [VERSION ...]``. For each version it re-runs itself inside that version's
oracle venv (``--inside``), where it builds ``argparse.ArgumentParser`` + ``ServerArgs.add_cli_args`` exactly
as ``prepare_server_args`` does, and serialises every action. Nothing here knows SGLang's flags: the
catalog is whatever that version's parser says, so it is the ground truth the fix library checks against.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CATALOG_DIR = REPO / "logsleuth" / "fixes" / "catalogs"  # read by logsleuth.fixes.catalog
FLAG_RE = re.compile(r"--[a-z0-9][a-z0-9-]*")


def _json_safe(value: Any) -> Any:
    """Defaults as JSON: plain scalars as-is, containers recursively, anything else as its repr."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    return repr(value)


def _action_kind(action: argparse.Action) -> str:
    """argparse's registry name for built-in actions (store_true, ...); the class name for custom ones."""
    for name, cls in (
        ("store_true", argparse._StoreTrueAction),
        ("store_false", argparse._StoreFalseAction),
        ("store_const", argparse._StoreConstAction),
        ("append_const", argparse._AppendConstAction),
        ("append", argparse._AppendAction),
        ("count", argparse._CountAction),
        ("help", argparse._HelpAction),
        ("version", argparse._VersionAction),
        ("boolean_optional", argparse.BooleanOptionalAction),
        ("store", argparse._StoreAction),
    ):
        if type(action) is cls:
            return name
    return type(action).__name__


def _type_name(action: argparse.Action) -> str | None:
    kind = action.type
    if kind is None:
        return None
    return getattr(kind, "__name__", None) or type(kind).__name__


def _flags_in(text: str) -> list[str]:
    """Flags named in a text, expanding shell-style braces: ``--a-{x,y}`` -> ``--a-x``, ``--a-y``."""
    expanded = re.sub(
        r"(--[\w-]*)\{([^}]*)\}([\w-]*)",
        lambda m: " ".join(m[1] + part.strip() + m[3] for part in m[2].split(",")),
        text,
    )
    return FLAG_RE.findall(expanded)


def _help_says_deprecated(help_text: str, own: list[str]) -> bool:
    """True when the help text deprecates *this* flag, not when it mentions something else deprecated.

    Seen in the wild: "(Deprecated) ...", "Deprecated. Use X", "(Deprecated, use X)", "(Deprecated: use X)",
    "Note: --x is deprecated now"; but also "Replaces the deprecated --y", which is about another flag.
    """
    lowered = help_text.lower()
    if re.match(r"^\W*deprecated\b", lowered):
        return True
    return any(f"{flag} is deprecated" in lowered for flag in own)


def _deprecation(action: argparse.Action, all_flags: set[str]) -> tuple[bool, list[str], str | None]:
    """(deprecated, replacement flags, note) from Deprecated* action classes or a self-deprecating help."""
    help_text = action.help if isinstance(action.help, str) else ""
    own = list(action.option_strings)
    if "Deprecated" not in type(action).__name__ and not _help_says_deprecated(help_text, own):
        return False, [], None
    # 0.5.23's actions carry the replacement explicitly (new_flag / error_message); older ones only say it
    # in the help text.
    new_flag = getattr(action, "new_flag", None)
    message = getattr(action, "error_message", None)
    texts = [t for t in (new_flag, message, help_text) if isinstance(t, str)]
    replacements: list[str] = []
    for text in texts:
        for flag in _flags_in(text):
            if flag not in own and flag in all_flags and flag not in replacements:
                replacements.append(flag)
    return True, replacements, (texts[0] if texts else None)


def describe_parser(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    all_flags = {s for a in parser._actions for s in a.option_strings}
    entries: list[dict[str, Any]] = []
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue  # positional args (none today) and argparse's own -h
        longs = [s for s in action.option_strings if s.startswith("--")]
        deprecated, replacements, note = _deprecation(action, all_flags)
        entries.append(
            {
                # argparse's first long option (what its error messages print), e.g. 0.4.10's
                # --tensor-parallel-size whose alias is --tp-size.
                "name": (longs or action.option_strings)[0],
                "aliases": list(action.option_strings),
                "dest": action.dest,
                "type": _type_name(action),
                "choices": _json_safe(list(action.choices)) if action.choices is not None else None,
                "default": _json_safe(action.default),
                "nargs": _json_safe(action.nargs),
                "action": _action_kind(action),
                "required": bool(action.required),
                "deprecated": deprecated,
                "renamed_to": replacements[0] if replacements else None,
                "replacements": replacements,
                "deprecation_note": note,
            }
        )
    return entries


def dump_inside() -> dict[str, Any]:
    """Runs inside an oracle venv: build the parser the way prepare_server_args does."""
    from importlib.metadata import version

    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return {"engine": "sglang", "version": version("sglang"), "flags": describe_parser(parser)}


def dump_version(version: str) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import oracle_env, venv_dir

    proc = subprocess.run(
        [str(venv_dir(version) / "bin" / "python"), str(Path(__file__).resolve()), "--inside"],
        env=oracle_env(version),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"dump for sglang {version} failed:\n{proc.stderr[-4000:]}")
    catalog = json.loads(proc.stdout.splitlines()[-1])
    if catalog["version"] != version:
        raise RuntimeError(f"venv for {version} has sglang {catalog['version']}")
    CATALOG_DIR.mkdir(parents=True, exist_ok=True)
    out = CATALOG_DIR / f"sglang-{version}.json"
    out.write_text(json.dumps(catalog, indent=1, sort_keys=False) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Dump SGLang flag catalogs from the real parsers.")
    parser.add_argument("versions", nargs="*", default=["0.4.10.post2", "0.5.9", "0.5.23"])
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.inside:
        # One JSON line last on stdout; SGLang may print warnings before it.
        print(json.dumps(dump_inside()))
        return 0
    for version in ns.versions:
        out = dump_version(version)
        count = len(json.loads(out.read_text())["flags"])
        print(f"{out.relative_to(REPO)}: {count} flags")
    return 0


if __name__ == "__main__":
    sys.exit(main())
