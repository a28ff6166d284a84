"""A command-line flag's spelling handed to the engine's settings class as a Python keyword.

`AsyncEngineArgs.__init__() got an unexpected keyword argument 'limit-mm-per-prompt'`: a program that passes the
user's extra settings to the engine as keywords (Xinference's extra launch parameters: xorbitsai/inference#3778,
#3054) was given the flag's name without its dashes stripped.  CPython refuses it because a keyword with '-' is no
field of the class.  Read only when the dashed name is a flag some catalogued release of the class's engine has.

No keyword is named for it: the catalogs hold the whole server's command line, and a flag's `dest` is no proof of a
field.  vLLM's front-end options (--chat-template, --api-key, --port) are no field of EngineArgs, and a negated switch
(--no-enable-prefix-caching) stores into its positive's dest; settings_keywords.py's readings say the same of the
catalogs.  The step says only that Python keywords take underscores, and where the class's fields are read.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.facts.engine_classes import engines_defining
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.release_flags import range_note
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure
from logsleuth.reasoning.engine_api_calls import UnseenCaller, refusal_without_caller

_DASHED = compile_lazily(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$")


@dataclass(frozen=True)
class DashedArgument:
    """A refused keyword spelt as the engine's flag is (`limit-mm-per-prompt`) and the argument it names."""

    keyword: str  # as refused: limit-mm-per-prompt
    flag: str  # --limit-mm-per-prompt
    engine: str
    refused_class: str


def dashed_engine_argument(unseen: UnseenCaller | None) -> DashedArgument | None:
    """The flag a dashed keyword spells, when it is in a catalogued release of the class's engine."""
    if unseen is None or unseen.keyword is None or not _DASHED.match(unseen.keyword):
        return None
    flag = "--" + unseen.keyword
    for engine in sorted(engines_defining(unseen.refused_class)):
        if static_catalogs.releases_with(engine, flag):
            return DashedArgument(unseen.keyword, flag, engine, unseen.refused_class)
    return None


def dashed_argument_steps(failure: Failure) -> tuple[str, ...]:
    """The step saying a dashed keyword is the command line's spelling, for one the engine's settings class refused."""
    dashed = dashed_engine_argument(refusal_without_caller(failure))
    if dashed is None:
        return ()
    name = ENGINE_NAMES.get(dashed.engine, dashed.engine)
    span = range_note(dashed.engine, dashed.flag)
    releases = f" ({span})" if span else f" (every catalogued {name} release has {dashed.flag})"
    return (f"'{dashed.keyword}' is the command line's spelling of {dashed.flag}{releases}: a Python keyword argument is "
            f"never spelt with dashes. Where a program passes extra settings to {name} as keywords (a wrapper's extra "
            f"launch parameters, a script building {dashed.refused_class}), give the name of a field the installed "
            f"release's {dashed.refused_class} has (its signature lists them), with underscores; a server or front-end "
            f"option that is no field of it belongs on the server's command line instead.",)
