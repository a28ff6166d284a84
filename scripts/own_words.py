#!/usr/bin/env python3
"""Which engine-scoped patterns match text that only their own engine raises (`own_words = true`).

    python scripts/own_words.py            # list every pattern's verdict
    python scripts/own_words.py --check    # exit 1 when a pattern's own_words differs from its verdict
    python scripts/own_words.py --write    # set own_words = true on every pattern that qualifies

Why: when a log shows no engine, a pattern tied to one engine gives only its neutral category, unless the
text it matches can come from that engine alone (docs/writing-patterns.md).  That is a fact about the
engines' code, so it is read from their real packages (the oracle venvs under ~/.cache/logsleuth/oracle,
every installed release) instead of decided pattern by pattern.  A pattern qualifies when every piece of
message text its match rules need (every rule needs some) (diagnosis/prefilter.py's required literals, cut to their own words):
- occurs nowhere in the other engine's packages (SGLang's vendored or imported vLLM code is searched
  as SGLang's: it is inside SGLang's package directory);
- occurs nowhere in the third-party packages both engines run (torch, transformers, ...): such text is
  "generic", raised for both engines ("CUDA out of memory");
- is at least MIN_WORDS words long or names a flag (shorter text is generic wording, whatever the search
  finds);
- occurs in its own engine's packages or in a message template its references cite.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logsleuth.diagnosis.library import load_patterns  # noqa: E402
from logsleuth.diagnosis.prefilter import required_literals, required_runs  # noqa: E402
from logsleuth.diagnosis.schema import Pattern  # noqa: E402

ORACLES = Path.home() / ".cache/logsleuth/oracle"
ENGINE_PACKAGES = {"sglang": ("sglang", "sgl_kernel", "sglang_router"), "vllm": ("vllm",)}
MIN_WORDS = 3
WORDS_CUT = 30  # a long message is cut where an f-string may break it


@dataclass(frozen=True)
class Verdict:
    pattern: Pattern
    qualifies: bool
    reason: str  # "own words", or why not: "generic: ...", "other engine: ...", "not in its engine: ..."


def message_words(literal: str) -> str:
    """The longest run of a message's own words in a literal: brackets and quotes come from the values it
    formats (`] are not supported for now` -> `are not supported for now`)."""
    return max(re.split(r"[\[\](){}'\"`]", literal), key=len).strip()[:WORDS_CUT].strip()


def pattern_texts(pattern: Pattern) -> set[str]:
    """The message text any match of each rule needs (one per alternative); empty when some rule needs none
    (a usage or frame rule): such a pattern can match text that is not its engine's words."""
    texts = set()
    for rule in pattern.rules:
        rule_texts = set()
        for regex in (rule.message, rule.chain_message, rule.log_line):
            if regex is not None:
                rule_texts.update(
                    message_words(literal) for literal in required_literals(regex.pattern) or ()
                )
        rule_texts.discard("")
        if not rule_texts:
            return set()
        texts |= rule_texts
    return texts


def is_specific(text: str) -> bool:
    """Words enough to be one message's, or one of the engine's flags (`--swa-full-tokens-ratio should`);
    `NCCL error`, `OutOfMemoryError:` and `cudaErrorAssert` are anyone's."""
    return len(text.split()) >= MIN_WORDS or re.search(r"(?<![\w-])--[a-z]", text) is not None


def alternative_wordings(pattern: Pattern) -> list[set[str]]:
    """Each alternative a rule matches, as all the words it requires: third-party text is shared only when it
    holds all of them ("Number of key value heads N must be divisible by tensor parallel size" in
    transformers is not "Total number of attention heads (N) must be divisible by tensor parallel size")."""
    wordings = []
    for rule in pattern.rules:
        for regex in (rule.message, rule.chain_message, rule.log_line):
            for runs in (required_runs(regex.pattern) or ()) if regex is not None else ():
                words = {text for run in runs if len(text := message_words(run)) >= 3}
                if words:
                    wordings.append(words)
    return wordings


def _site_packages() -> list[Path]:
    return sorted(ORACLES.glob("*/lib/python3*/site-packages"))


def engine_trees(engine: str) -> list[Path]:
    """The engine's package directories in every oracle venv (every installed release)."""
    return [
        tree
        for site in _site_packages()
        for name in ENGINE_PACKAGES[engine]
        if (tree := site / name).is_dir()
    ]


def third_party_trees() -> list[Path]:
    """Everything else the venvs hold: torch, transformers, flashinfer... (the base venv included)."""
    engines = {name for names in ENGINE_PACKAGES.values() for name in names}
    return [
        entry
        for site in _site_packages()
        for entry in sorted(site.iterdir())
        if entry.is_dir()
        and entry.name not in engines
        and not entry.name.endswith((".dist-info", "__pycache__"))
    ]


def found_in(texts: set[str], trees: list[Path]) -> set[str]:
    """The texts that occur in some Python source under `trees` (one fixed-string grep for all of them)."""
    if not texts or not trees:
        return set()
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as needles:
        needles.write("\n".join(sorted(texts)) + "\n")
        needles.flush()
        result = subprocess.run(
            ["grep", "-rFoh", "--include=*.py", "-f", needles.name, *map(str, trees)],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
    if result.returncode > 1:
        raise RuntimeError(result.stderr.strip())
    matched = set(result.stdout.splitlines())
    # grep -o prints the longest match at each place: a text inside a longer one was found too.
    return {text for text in texts if any(text in match for match in matched)}


def oracles_installed() -> bool:
    return all(engine_trees(engine) for engine in ENGINE_PACKAGES)


def verdicts() -> list[Verdict]:
    patterns = [p for p in load_patterns(include_user=False).patterns if p.engine in ENGINE_PACKAGES]
    texts = {p.id: pattern_texts(p) for p in patterns}
    wordings = {p.id: alternative_wordings(p) for p in patterns}
    every = set().union(*texts.values())
    in_engine = {engine: found_in(every, engine_trees(engine)) for engine in ENGINE_PACKAGES}
    in_third_party = found_in(every.union(*(w for ws in wordings.values() for w in ws)), third_party_trees())
    results = []
    for pattern in patterns:
        assert pattern.engine is not None
        own = texts[pattern.id]
        other = "vllm" if pattern.engine == "sglang" else "sglang"
        cited = "\n".join(pattern.references)
        if not own:
            reason = "a match rule needs no message text"
        elif short := sorted(t for t in own if not is_specific(t)):
            reason = f"generic: too few words {short}"
        elif shared := [sorted(words) for words in wordings[pattern.id] if words <= in_third_party]:
            reason = f"generic: third-party packages raise {shared}"
        elif worded := sorted(own & in_engine[other]):
            reason = f"other engine: {other} words {worded}"
        elif missing := sorted(t for t in own if t not in in_engine[pattern.engine] and t not in cited):
            reason = (
                f"not in its engine: {missing} neither in {pattern.engine}'s packages nor in its references"
            )
        else:
            reason = "own words"
        results.append(Verdict(pattern, reason == "own words", reason))
    return results


def _write_own_words(pattern: Pattern) -> None:
    """Add `own_words = true` after the pattern's `engine = ...` line."""
    path = next(p for p in (ROOT / "patterns").glob("*/*.toml") if f'id = "{pattern.id}"' in p.read_text())
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if re.match(r"engine\s*=", line))
    lines.insert(
        at + 1, "own_words = true  # raised by this engine's code alone (scripts/own_words.py checks it)\n"
    )
    path.write_text("".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--check", action="store_true", help="exit 1 when a pattern's own_words is not its verdict"
    )
    action.add_argument("--write", action="store_true", help="mark every qualifying pattern own_words = true")
    args = parser.parse_args()
    if not oracles_installed():
        print(f"no oracle venvs of both engines under {ORACLES}", file=sys.stderr)
        return 2
    results = verdicts()
    wrong = [v for v in results if v.qualifies != v.pattern.own_words]
    for verdict in results:
        mark = "own" if verdict.qualifies else "   "
        print(f"{mark} {verdict.pattern.id}: {verdict.reason}")
    print(
        f"{sum(v.qualifies for v in results)} of {len(results)} engine-scoped patterns qualify",
        file=sys.stderr,
    )
    if args.write:
        for verdict in wrong:
            if verdict.qualifies:
                _write_own_words(verdict.pattern)
        wrong = [v for v in wrong if not v.qualifies]
    for verdict in wrong:
        claim = "claims" if verdict.pattern.own_words else "does not claim"
        print(f"{verdict.pattern.id} {claim} own_words: {verdict.reason}", file=sys.stderr)
    return 1 if wrong and (args.check or args.write) else 0


if __name__ == "__main__":
    raise SystemExit(main())
