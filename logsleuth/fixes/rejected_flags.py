"""Why argparse rejected a flag, read from the releases that have it (issue 28: argument errors answered usefully).

argparse says "unrecognized arguments: --x" and nothing more.  The releases say the rest: every release's flags
are in the static catalogs (read from each release's source, fixes/static_catalogs.py), so a rejected flag is one of

- a flag of a later release than the user's ("added in X": leave it out, or upgrade);
- a flag a release removed ("last in Y");
- a flag of only some releases, when the user's release is not known (the range is said, never "no such flag");
- a flag the user's release has: then argparse did not reject its name, and the cause is how it reached the
  parser (the flag and its value as one argument of a list-form command, vllm-project/vllm#8273 and #22072),
  or which program parsed it (not the engine's server: sgl-project/sglang#34226, SGLang's diffusion server);
- none of these: a flag of no release (the caller then looks for the closest real flag).

Only the decided engine's releases are read: a flag is never called the other engine's here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from logsleuth import versions
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import ENGINE_NAMES

# a launch that runs the engine as a module of some python (`python -m vllm.entrypoints.openai.api_server`)
_PYTHON_M = compile_lazily_regex(r"\bpython[\d.]*\s+-m\s")

Outcome = Literal["known", "other-program", "newer", "removed", "some"]


@dataclass(frozen=True)
class Verdict:
    """What the releases say of one rejected flag: `outcome`, and the sentence that says it."""

    outcome: Outcome
    sentence: str

    @property
    def remove(self) -> bool:
        """The flag is to be left out (a flag the release has is not: how it was written is what to change)."""
        return self.outcome != "known"  # another program that lacks it: left out there


def releases_having(engine: str, flag: str) -> tuple[str, ...]:
    """Every release (static catalogs and real-parser catalogs) that has `flag`, oldest first."""
    found = {*static_catalogs.releases_with(engine, flag), *catalogs.versions_with(engine, flag)}
    return tuple(sorted(found, key=lambda v: versions.version_key(v) or ()))


def told_version(ctx: FixContext) -> str | None:
    """The release the log or the user names (an inferred one may be what is wrong here: never judged by)."""
    return ctx.launch.named_version


def verdict(flag: str, value: str | None, ctx: FixContext) -> Verdict | None:
    """What the decided engine's releases say of `flag`; None when no release of it has the flag."""
    engine = ctx.launch.engine or "sglang"
    having = releases_having(engine, flag)
    if not having:
        return None
    name = ENGINE_NAMES.get(engine, engine)
    every = static_catalogs.releases(engine)
    first, last = having[0], having[-1]
    told = told_version(ctx)
    if told is None:
        if every and first == every[0] and last == every[-1]:
            has = f"every {name} release from {first} to {last} has {flag}"
            # the catalogs start at `first`: an older release, which a fresh split's pastes run too, may lack the flag
            guessed = ctx.launch.engine_version
            guessed_key = versions.version_key(guessed) if guessed else None
            if guessed_key is not None and guessed_key < (versions.version_key(first) or ()):
                return Verdict("some", f"{has}, but your {name} looks older ({guessed}, guessed from the log) and "
                                       f"logsleuth has no catalog of it: if it lacks {flag}, leave it out, or upgrade "
                                       f"to {first} or later")
            older = (f" (logsleuth has no catalog of {name} releases before {first}: if yours is older and lacks {flag}, "
                     f"leave it out or upgrade)")
            return _other_program(flag, has, engine, ctx) or Verdict("known", _known(flag, value, has + older, name))
        if (refused := _refused_by_another_release(flag, having, every, name, engine, ctx)) is not None:
            return refused
        if last != every[-1] and first != every[0]:
            # a range closed at both ends: a release older than it may need the flag's feature (a flag newer than the
            # release that ran, vLLM's --task under an older image), one newer than it has dropped the flag
            return Verdict("some", f"{flag} is a flag of {name} {_span(first, last, every)} only: if your release is "
                                   f"older than {first}, leave it out or, to keep it, run a release from {first} to "
                                   f"{last}; if it is newer than {last}, leave it out")
        return Verdict("some", f"{flag} is a flag of {name} {_span(first, last, every)} only: leave it out if your "
                               f"release is outside that range" + (f", or upgrade to {first} or later" if last == every[-1] else ""))
    running = versions.version_key(told)
    release = catalogs.load(engine, told)
    if release is not None and release.find(flag) is not None:
        has = f"{name} {told} has {flag}"
        return _other_program(flag, has, engine, ctx) or Verdict("known", _known(flag, value, has, name))
    start, end = versions.version_key(first), versions.version_key(last)
    oldest = versions.version_key(every[0]) if every else None
    if release is None and oldest is not None and running is not None and running < oldest and first == every[0]:
        # older than every catalog: whether it had the flag is not known
        return Verdict("some", f"{flag} is a flag of {name} {_span(first, last, every)}; logsleuth has no catalog of "
                               f"{name} {told}: if it lacks {flag}, leave it out, or upgrade")
    if running is None or start is None or end is None:
        return Verdict("some", f"{flag} is a flag of {name} {_span(first, last, every)} only: leave it out")
    if running < start:
        return Verdict("newer", f"{flag} is not in {name} {told}: {name} added it in {first}; leave it out, or upgrade "
                                f"{name} to {first} or later to use it")
    if running > end:
        return Verdict("removed", f"{flag} is not in {name} {told}: {name} {last} was the last release with it; leave it out")
    return Verdict("some", f"{flag} is in {name} {_span(first, last, every)} but not in every release between: your "
                           f"{name} {told} does not accept it; leave it out")


def older_install(flags: list[str], ctx: FixContext) -> str | None:
    """Every flag argparse refused is a flag of the engine's later releases only (none of them in its oldest catalogued
    release), and the release that ran is not named: the parser that refused them all at once is a release older than
    the first of them, which for a user who wrote them for a newer release is another, older install on PATH (split
    18 C-06, vllm-project/vllm#18538: `usage: vllm [-h] {serve,complete,chat}`, the subcommands of an old vllm, refused
    --enable-reasoning and --reasoning-parser under a user who believed 0.8.5 ran).  The sentence says so, and what
    each flag needs on the intended release; None when any flag is no catalogued release's or the oldest one's, or
    when the command shows another program parsed it (`_other_program`)."""
    engine = ctx.launch.engine
    # Several flags refused together, all of later releases: the command was written for a later release than the one
    # that ran.  One flag alone keeps the flag-by-flag answer (leave it out, or upgrade), and a release an image tag
    # names keeps its own (`_refused_by_another_release`).  A release only inferred (SGLang's every
    # `launch_server.py: error:` line is guessed 0.5.9) is no evidence of what ran.
    if engine is None or len(flags) < 2:
        return None
    told = told_version(ctx)
    if told is not None:
        return _named_release_has_them(flags, told, engine, ctx)
    if ctx.launch.engine_version is not None and ctx.launch.engine_version_source != "inferred":
        return None
    every = static_catalogs.releases(engine)
    spans: list[tuple[str, str, str]] = []
    covered: set[str] = set()
    for flag in flags:
        having = releases_having(engine, flag)
        if not having or not every or having[0] == every[0]:
            return None
        spans.append((flag, having[0], having[-1]))
        covered.update(having)
    name = ENGINE_NAMES.get(engine, engine)
    if _other_program(spans[0][0], "", engine, ctx) is not None:
        return None
    since = min((first for _, first, _ in spans), key=lambda v: versions.version_key(v) or ())
    if not set(every[every.index(since):]) <= covered:
        return None  # a later release lacks them all too: the one that ran need not be older
    each = "; ".join(f"{flag} is in {name} {_span(first, last, every)}" for flag, first, last in spans)
    later = "".join(f"; on a release after {last} leave {flag} out" for flag, _, last in spans if last != every[-1])
    return (f"The {name} that parsed this command has none of these flags, and every catalogued {name} from {since} on "
            f"has at least one of them ({each}): the {name} that ran is older than {since}. If you installed a newer "
            f"{name} for these flags, the one that ran is another, older install ({_which_check(engine, ctx)}); run "
            f"the intended one rather than dropping flags it needs{later}")


def _named_release_has_them(flags: list[str], told: str, engine: str, ctx: FixContext) -> str | None:
    """The release the user or log names has every refused flag, yet its parser refused them all at once: not how one
    flag reached the parser, but another, older install that ran (split 18 C-06: "I installed vllm==0.8.5")."""
    if any(told not in releases_having(engine, flag) for flag in flags):
        return None
    if _other_program(flags[0], "", engine, ctx) is not None:
        return None
    name = ENGINE_NAMES.get(engine, engine)
    return (f"{name} {told} has every one of these flags ({', '.join(flags)}), yet the parser refused them all: the "
            f"{name} that ran is not {told} but another, older install ({_which_check(engine, ctx)}); run {told} "
            "rather than dropping flags it has")


def _which_check(engine: str, ctx: FixContext) -> str:
    """How to see which install ran: the interpreter's import when the command runs it as `python -m`, else PATH's."""
    module = "vllm" if engine == "vllm" else "sglang"
    as_module = (any(word.value == "-m" for word in ctx.command.head) if ctx.command is not None
                 else bool(_PYTHON_M.search(ctx.launch.command or "")))
    if engine == "sglang" or as_module:
        return (f"check which one runs: `python -c \"import {module}; print({module}.__version__, {module}.__file__)\"` "
                "with the same python as the launch, or the image tag")
    return "check which one runs: `which vllm`, `pip show vllm` in the same environment, or the image tag"


def _refused_by_another_release(flag: str, having: tuple[str, ...], every: tuple[str, ...], name: str, engine: str,
                                ctx: FixContext) -> Verdict | None:
    """The release an image tag names (inferred: LaunchInfo.version_from_image) has the flag, yet argparse refused its name:
    the guess is what is wrong, not the catalog (split 13: `vllm/vllm-openai:v0.20.1` and --reasoning-config, which
    vLLM 0.20.1's vllm/engine/arg_utils.py registers; the paste's refusal came from a vLLM without it).  Said so, with
    the releases that lack it, and never as "your release has it": the flag is left out or the release changed.
    The releases said are the catalogs' own range: a flag later releases removed (--enable-reasoning, vLLM 0.7.1 to
    0.9.2) is never said to be in "that release and later" (review 3 H1 of stop 50)."""
    guessed = ctx.launch.engine_version
    if guessed is None or guessed not in having or not ctx.launch.version_from_image:
        return None  # a release guessed from the code's layout stands for a family of releases: the range is said
    first, last = having[0], having[-1]
    has = f"{name} {guessed}, the release the engine's image tag names, has {flag}"
    if (other := _other_program(flag, has, engine, ctx)) is not None:
        return other  # what parsed the command was not the engine's server: no release of the engine is to blame
    still = bool(every) and last == every[-1]
    lacking = (f"every catalogued release before {first}" + ("" if still else f" and after {last}"))
    to_run = f"{name} {first} or later" if still else f"a {name} release from {first} to {last}"
    return Verdict("some", f"{flag} is a flag of {name} {_span(first, last, every)}; {has}, yet the parser refused the "
                           f"flag's name, so the {name} that ran is not a release with it ({lacking} lacks it): another "
                           f"image or environment than the one named (unless the flag and its value reached the parser "
                           f"as one word, one item of a list-form command). Leave {flag} out, or run {to_run} (the "
                           f"release that runs is the one its start-up line names)")


def _other_program(flag: str, has: str, engine: str, ctx: FixContext) -> Verdict | None:
    """Positive evidence that the parser was not the engine's server: the command's other flags that no server release
    has (`sglang serve`'s diffusion flags, --num-gpus, --ulysses-degree: sgl-project/sglang#34226) went through,
    and the server's own flag did not.  Then that program lacks the flag: leave it out there."""
    if ctx.command is None:
        return None
    rejected = set(ctx.failure.final.message.split())
    accepted = [name for name, _ in ctx.command.options
                if name.startswith("--") and name not in rejected and not releases_having(engine, name.split("=", 1)[0])]
    if not accepted:
        return None
    name = ENGINE_NAMES.get(engine, engine)
    return Verdict("other-program", f"{has}, but what parsed this command is another program: it took "
                                    f"{', '.join(accepted[:3])}, which no {name} server release has, and rejected "
                                    f"{flag}; leave {flag} out for that program")


def _span(first: str, last: str, every: tuple[str, ...]) -> str:
    if every and last == every[-1]:
        return f"{first} and later"
    return f"{first} to {last}"


def _known(flag: str, value: str | None, has: str, name: str) -> str:
    """A flag the release has, rejected anyway: what argparse rejected is how the flag reached it."""
    together = f"'{flag} {value}'" if value else f"'{flag} VALUE'"
    split = f"{flag}={value}" if value else f"{flag}=VALUE"
    return (f"{has}, so its name is not what was rejected: the flag and its value reached the parser as one argument "
            f"({together} as one item of a list-form command: docker compose `command:`, Kubernetes `args:`, a "
            f"subprocess list; give them as two items, or write {split}), or the program that parsed the command is "
            f"not the {name} server (a wrapper's own parser, another subcommand or mode)")


def releases_with_choice(engine: str, flag: str, value: str) -> tuple[str, ...]:
    """The releases whose static catalog lists `value` among `flag`'s choices, oldest first (a choice the source
    computed is not known: such a release is not counted)."""
    found = []
    for release in static_catalogs.releases(engine):
        for record in static_catalogs.flag_records(engine, release) or ():
            if flag in (record["name"], *record.get("aliases", ())):
                choices = record.get("choices")
                if isinstance(choices, list) and value in choices:
                    found.append(release)
                break
    return tuple(found)


def choice_elsewhere(flag: str, value: str, ctx: FixContext, printed: tuple[str, ...] = (), *,
                     open_lists: bool = True) -> str | None:
    """What the decided engine's releases say of a value argparse refused, or None when they say nothing:

    - "'fa3' is a choice of --attention-backend in SGLang 0.4.6 and later", the static catalogs' literal lists and
      the real parsers' catalogs together; with "upgrade to 0.4.6 or later" when the release that printed the
      refusal is older (the one the log names, else the releases whose list is exactly the `printed` one);
    - else, when later releases than the printing ones take the flag's value from no fixed list (vLLM 0.6.3 made
      --tool-call-parser a registry name) or from a list their code computes, that a later release may take it:
      the catalogs cannot tell which, and nothing is guessed (not said when `open_lists` is False)."""
    return value_releases(ctx.launch.engine or "sglang", told_version(ctx), flag, value, printed, open_lists=open_lists)


def value_releases(engine: str, told: str | None, flag: str, value: str, printed: tuple[str, ...] = (), *,
                   open_lists: bool = True) -> str | None:
    """choice_elsewhere's sentence for `engine`, the release the log or the user names being `told`."""
    name = ENGINE_NAMES.get(engine, engine)
    every = static_catalogs.releases(engine)
    printing = _printing_releases(engine, flag, printed, told)
    having = releases_listing(engine, flag, value)
    if having:
        return _listed_in(flag, value, name, having, printing, every)
    return _open_after(engine, flag, value, name, printing) if open_lists else None


def _printing_releases(engine: str, flag: str, printed: tuple[str, ...], told: str | None) -> tuple[str, ...]:
    """The releases that can have printed the refusal: the one the log names, else those whose list is the one
    argparse printed (its own, in the engine's words)."""
    if told is not None:
        return (told,)
    return static_catalogs.releases_with_choices(engine, flag, frozenset(printed)) if printed else ()


def releases_listing(engine: str, flag: str, value: str) -> tuple[str, ...]:
    """Every release whose catalog lists `value` among `flag`'s choices (static and real-parser catalogs), oldest first."""
    found = set(releases_with_choice(engine, flag, value))
    for version in catalogs.versions_with(engine, flag):
        info = (catalog := catalogs.load(engine, version)) and catalog.find(flag)
        if info and value in info.choices:
            found.add(version)
    return tuple(sorted(found, key=lambda v: versions.version_key(v) or ()))


def _listed_in(flag: str, value: str, name: str, having: tuple[str, ...], printing: tuple[str, ...],
               every: tuple[str, ...]) -> str | None:
    first, newest = versions.version_key(having[0]), versions.version_key(printing[-1]) if printing else None
    listed = f"'{value}' is a choice of {flag} in {name} {_span(having[0], having[-1], every)}"
    if newest is None or first is None:
        return listed
    if newest >= first and having[-1] == every[-1]:
        return None  # the printing release is in the range: the catalogs do not explain the refusal
    if newest < first:
        return f"{listed}; the release that refused it ({_releases_said(name, printing, every)}) is older: upgrade to {having[0]} or later to use it"
    return listed


def _open_after(engine: str, flag: str, value: str, name: str, printing: tuple[str, ...]) -> str | None:
    """The first release after the printing ones whose `flag` takes no fixed list, or one its code computes."""
    newest = versions.version_key(printing[-1]) if printing else None
    if newest is None:
        return None
    for release in static_catalogs.releases(engine):
        key = versions.version_key(release)
        if key is None or key <= newest:
            continue
        record = next((r for r in static_catalogs.flag_records(engine, release) or ()
                       if flag in (r["name"], *r.get("aliases", ()))), None)
        if record is None or isinstance(record.get("choices"), list):
            continue
        how = ("has a list of values its code computes" if record.get("choices")
               else "takes no fixed list of values (the name is checked after parsing)")
        return (f"the list printed is that of {_releases_said(name, printing, static_catalogs.releases(engine))}; from "
                f"{name} {release}, {flag} {how}, so a later release may take '{value}': logsleuth's catalogs "
                f"cannot tell which, its `--help` or documentation says")
    return None


def _releases_said(name: str, releases: tuple[str, ...], every: tuple[str, ...]) -> str:
    if len(releases) == 1:
        return f"{name} {releases[0]}"
    return f"{name} {releases[0]} to {releases[-1]}" if releases[-1] != (every[-1] if every else None) else f"{name} {releases[0]} and later"
