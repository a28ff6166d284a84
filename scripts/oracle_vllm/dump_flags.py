"""Build ``logsleuth/fixes/catalogs/vllm-<version>.json`` (package data) from the REAL ``vllm serve`` parser.

Run on the host: ``dump_flags.py [VERSION ...]``. For each version it re-runs itself inside that version's
oracle venv (``--inside``), where it builds the ``serve`` sub-parser exactly as ``vllm``'s CLI does
(``ServeSubcommand().subparser_init``) and serialises every action. Same JSON shape as the SGLang catalogs
(scripts/oracle/dump_flags.py), ``"engine": "vllm"``, plus per flag:

- ``negations``: the option strings that set a boolean flag to False (``--no-enable-prefix-caching``;
  0.33's ``EnableDisableAction`` also ``--disable-prefix-caching``). They are not in ``aliases``, which
  only holds strings with the flag's own meaning (``--tensor-parallel-size``, ``-tp``).
- ``hidden_aliases``: option strings the parser accepts but leaves out of ``--help``.

and at top level ``removed``: flags the previous shipped vLLM catalog had and this version's parser rejects.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CATALOG_DIR = REPO / "logsleuth" / "fixes" / "catalogs"  # read by logsleuth.fixes.catalog
DEFAULT_VERSIONS = ("0.11.2", "0.33.0")


def _sglang_dump_helpers() -> Any:
    """The SGLang dumper's argparse serialisers (stdlib only), so both catalogs describe actions alike."""
    spec = importlib.util.spec_from_file_location("sglang_dump_flags", HERE.parent / "oracle" / "dump_flags.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _accepted_strings(parser: argparse.ArgumentParser, action: argparse.Action) -> list[str]:
    """Every option string the parser maps to ``action``, in registration order (incl. hidden ones)."""
    return [s for s, a in parser._option_string_actions.items() if a is action]


def _negations(action: argparse.Action, accepted: list[str]) -> list[str]:
    negative = getattr(action, "negative_option_strings", None)  # 0.33 EnableDisableAction
    if negative is not None:
        return [s for s in accepted if s in negative]
    if isinstance(action, argparse.BooleanOptionalAction):
        return [s for s in accepted if s.startswith("--no-")]
    return []


def _named_as_replacement(flag: str, action: argparse.Action) -> bool:
    """A flag the deprecation text tells users to use ("Use --x instead"), not one it merely mentions
    (0.33's --mamba-cache-mode "follows --enable-prefix-caching")."""
    texts = [getattr(action, "error_message", None), action.help]
    pattern = re.compile(r"\b(?:use|replaced by|renamed to|in favou?r of)\s+[`'\"]?" + re.escape(flag) + r"(?![\w-])")
    return any(isinstance(text, str) and pattern.search(text.lower()) for text in texts)


def describe_parser(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    helpers = _sglang_dump_helpers()
    all_flags = set(parser._option_string_actions)
    deprecated_actions = getattr(parser, "_deprecated", set())  # vLLM's backport of 3.13's deprecated=True
    entries: list[dict[str, Any]] = []
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue  # the positional model_tag and argparse's own -h
        accepted = _accepted_strings(parser, action)
        negations = _negations(action, accepted)
        own = [s for s in accepted if s not in negations]
        visible = set(action.option_strings)
        longs = [s for s in own if s.startswith("--")]
        deprecated, replacements, note = helpers._deprecation(action, all_flags)
        replacements = [flag for flag in replacements if _named_as_replacement(flag, action)]
        if action in deprecated_actions or getattr(action, "deprecated", False):
            deprecated = True
        entries.append(
            {
                "name": (longs or own)[0],
                "aliases": own,
                "negations": negations,
                "hidden_aliases": [s for s in accepted if s not in visible],
                "dest": action.dest,
                "type": helpers._type_name(action),
                "choices": helpers._json_safe(list(action.choices)) if action.choices is not None else None,
                "default": helpers._json_safe(action.default),
                "nargs": helpers._json_safe(action.nargs),
                "action": helpers._action_kind(action),
                "required": bool(action.required),
                "deprecated": deprecated,
                "renamed_to": replacements[0] if replacements else None,
                "replacements": replacements,
                "deprecation_note": note,
            }
        )
    return entries


def dump_inside() -> dict[str, Any]:
    """Runs inside an oracle venv: the ``serve`` sub-parser as ``vllm``'s main() builds it."""
    # vLLM adds help texts only when "--help" is on the command line, and hides --model when it is
    # "serve --help"; this argv gets the help texts (deprecation notes live there) and every flag.
    sys.argv = ["vllm", "--help"]
    from importlib.metadata import version

    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(prog="vllm")
    subparsers = top.add_subparsers(dest="subparser")
    serve_parser = ServeSubcommand().subparser_init(subparsers)
    return {"engine": "vllm", "version": version("vllm"), "flags": describe_parser(serve_parser)}


def _flag_strings(catalog: dict[str, Any]) -> set[str]:
    return {s for f in catalog["flags"] for s in (*f["aliases"], *f.get("negations", ())) if s.startswith("--")}


def dump_version(version: str) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from run import oracle_env, venv_dir

    proc = subprocess.run(
        [str(venv_dir(version) / "bin" / "python"), str(Path(__file__).resolve()), "--inside"],
        env=oracle_env(version),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"dump for vllm {version} failed:\n{proc.stderr[-4000:]}")
    catalog: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    if catalog["version"] != version:
        raise RuntimeError(f"venv for {version} has vllm {catalog['version']}")
    return catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Dump vLLM flag catalogs from the real parsers.")
    parser.add_argument("versions", nargs="*", default=list(DEFAULT_VERSIONS))
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.inside:
        print(json.dumps(dump_inside()))  # one JSON line last on stdout; vLLM may print warnings before it
        return 0
    sys.path.insert(0, str(REPO))
    from logsleuth.versions import version_key

    catalogs = sorted((dump_version(v) for v in ns.versions), key=lambda c: version_key(c["version"]) or ())
    CATALOG_DIR.mkdir(parents=True, exist_ok=True)
    previous: dict[str, Any] | None = None
    for catalog in catalogs:
        if previous is not None:
            gone = sorted(_flag_strings(previous) - _flag_strings(catalog))
            catalog["removed"] = [{"name": flag, "last_seen": previous["version"]} for flag in gone]
        else:
            catalog["removed"] = []
        out = CATALOG_DIR / f"vllm-{catalog['version']}.json"
        out.write_text(json.dumps(catalog, indent=1, sort_keys=False) + "\n")
        print(f"{out.relative_to(REPO)}: {len(catalog['flags'])} flags, {len(catalog['removed'])} removed")
        previous = catalog
    return 0


if __name__ == "__main__":
    sys.exit(main())
