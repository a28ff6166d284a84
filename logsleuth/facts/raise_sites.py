"""Where the engine's own code raised a failure: the raise site index (raise_sites-<engine>.zip, built from
SGLang's and vLLM's released wheels by scripts/engine_index/build.py, `make engine-index`).

A traceback's innermost frame in the engine's code names a file, a function, a line and the line's source.  The
index says which check of which releases that is: its condition and the `if`s around it, the settings it reads,
and the releases that hold it.  Each engine's index is a zip with one member per source file, so a lookup opens
only its frame's engine's index and reads only the file its frame names (a few ms); nothing is read for a failure
that never ran through engine code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from logsleuth.facts.message_templates import (
    HOLE,
    MIN_FIXED,
    fixed_length,
    fixed_text,
    short_type,
    template_matches,
)
from logsleuth.lazyre import compile_lazily

# One zip per engine, so a lookup opens only the index of the frame's engine (opening one reads its whole directory,
# ~3,200 members for vLLM: facts/zip_members.py).
INDEX_DIR = Path(__file__).parent


def index_path(engine: str) -> Path:
    return INDEX_DIR / f"raise_sites-{engine}.zip"


ENGINE_PACKAGES = {"sglang": "sglang/", "vllm": "vllm/"}
# The packages whose code the engines run, indexed the same way (raise_sites-<package>.zip, issue 29 item 5):
# facts/package_sites.py says what each is; reasoning/package_site.py uses them.
OTHER_PACKAGES = {"flashinfer": "flashinfer/", "sgl_kernel": "sgl_kernel/", "xgrammar": "xgrammar/",
                  "transformers": "transformers/"}
INDEXED_PACKAGES = {**ENGINE_PACKAGES, **OTHER_PACKAGES}


@dataclass(frozen=True)
class RaiseSite:
    """One check of the engine's code, as the index holds it, placed for one failure."""

    engine: str
    file: str  # sglang/srt/server_args.py, vllm/config/parallel.py
    function: str  # ServerArgs._handle_speculative_decoding
    line: int  # its first line, in the user's release when known, else in the newest release that has it
    kind: str  # assert | raise | log | build (an exception built outside a raise: scripts/engine_index/extract.py)
    condition: str  # an assert's test ("" for a raise or a log call)
    guards: tuple[str, ...]  # the `if` tests around it, outermost first
    fields: tuple[str, ...]  # the settings the condition and guards read
    releases: tuple[str, ...]  # the indexed releases that hold this check, oldest first
    indexed: tuple[str, ...]  # every release the index read, oldest first
    version: str | None  # the user's release, when the log or the user gave it and the index read it
    framed: tuple[str, ...] = ()  # the releases in which this check stands at the frame's line: the frames' release
    message: str = ""  # the check's message template (holes as message_templates.HOLE): its words when the paste cut them
    raised: str = ""  # the class a `raise` names (`ValueError`; "" when it raises what a call builds), for an assert ""


@lru_cache(maxsize=len(INDEXED_PACKAGES))
def _archive(engine: str) -> Any:
    """The engine's index, opened once (its directory is read once a run, not once a lookup)."""
    from logsleuth.facts.zip_members import open_zip  # here: only a failure through engine code reads it

    return open_zip(index_path(engine))


@lru_cache(maxsize=len(INDEXED_PACKAGES))
def _releases(engine: str) -> list[str]:
    found = read_member(engine, "index.json")
    return list(found["releases"]) if isinstance(found, dict) else []


@lru_cache(maxsize=16)
def _entries(engine: str, member: str) -> list[dict[str, Any]]:
    found = read_member(engine, member)
    return list(found) if isinstance(found, list) else []


def indexed_releases(engine: str) -> list[str]:
    """The engine's indexed releases, oldest first (the release numbers a check's `lines` count)."""
    return _releases(engine)


def member_names(engine: str) -> list[str]:
    """Every member of the engine's index (one per source file, `sglang/srt/server_args.py.json`), or [] without one."""
    return list(_archive(engine).namelist()) if index_path(engine).exists() else []


def site_entries(engine: str, member: str) -> list[dict[str, Any]]:
    """The sites of one source file's member, parsed once (a few members are kept)."""
    return _entries(engine, member)


# The message shards of the packages' raise sites, all packages in one small zip (scripts/engine_index/package_messages.py):
# a bare message is typed from them when no engine's shard holds it (facts/engine_messages.py), without opening the
# packages' own indexes, which a failure reads only for a frame in the package.
PACKAGE_MESSAGES = "package_messages"


@lru_cache(maxsize=1)
def _package_messages() -> Any:
    from logsleuth.facts.zip_members import open_zip

    path = index_path(PACKAGE_MESSAGES)
    return open_zip(path) if path.exists() else None


def read_package_messages(member: str) -> Any:
    """One member of the packages' message shards, parsed, or None."""
    archive = _package_messages()
    try:
        return json.loads(archive.read(member)) if archive is not None else None
    except KeyError:
        return None


def read_member(engine: str, member: str) -> Any:
    """One member of the engine's index, parsed, or None when the index or the member is missing."""
    if engine not in INDEXED_PACKAGES or not index_path(engine).exists():
        return None
    try:
        return json.loads(_archive(engine).read(member))
    except KeyError:
        return None


INSTALL_DIRS = ("site-packages/", "dist-packages/")
# A Python installation's own directories (a virtualenv or prefix named after the engine: `/opt/sglang/lib/python3.11/`).
PYTHON_PREFIX = compile_lazily(r"(?:^|/)(?:lib|lib64)/python\d")


def engine_file(path: str, engine: str) -> str | None:
    """`/x/site-packages/sglang/srt/server_args.py` -> `sglang/srt/server_args.py`; None outside the engine.
    An installed file is the package's only when the package is what follows `site-packages/` (a virtualenv named
    `sglang`, or a conda env called `vllm`, holds torch and transformers too); elsewhere, a source checkout, the part
    from the last `/sglang/` on, unless that part runs through a Python installation
    (`sglang/lib/python3.11/threading.py`)."""
    package = INDEXED_PACKAGES.get(engine)
    if package is None:
        return None
    rooted = "/" + path.replace("\\", "/")
    for marker in INSTALL_DIRS:
        if marker in rooted:
            installed = rooted.rsplit(marker, 1)[1]
            return installed if installed.startswith(package) else None
    if f"/{package}" not in rooted:
        return None
    inside = rooted.rsplit(f"/{package}", 1)[1]
    return None if PYTHON_PREFIX.search(inside) else package + inside


def find(engine: str, path: str, function: str | None, line: int | None, source: str | None,
         version: str | None, raised: tuple[str, str] | None = None) -> RaiseSite | None:
    """The indexed check a frame stands in, or None (not engine code, not indexed, or no check matches).
    `raised`, the failure's exception type and message: when neither the release's lines nor the source line place
    the frame (a release not indexed, formatted otherwise), the function's one check whose message template it
    matches."""
    file = engine_file(path, engine)
    if file is None:
        return None
    indexed = _releases(engine)
    in_function = [e for e in _entries(engine, f"{file}.json") if function and (e["function"] == function or e["function"].endswith(f".{function}"))]
    known = indexed.index(version) if version in indexed else None
    text = (source or "").strip()
    chosen = None
    if known is not None and line is not None:  # the user's release: the check whose lines hold the frame's
        chosen = next((e for e in in_function for run in e["lines"] if run[0] <= known <= run[1] and run[2] <= line <= run[3]), None)
    if chosen is None and text:  # else the check whose source holds the line the traceback shows
        holding = [e for e in in_function if text in e["text"]]
        if known is not None:
            holding = [e for e in holding if any(run[0] <= known <= run[1] for run in e["lines"])] or holding
        # The frame's line number tells the releases apart: prefer the check whose lines hold it in most releases;
        # without one (a paste that lost it, a release not indexed), the check most indexed releases hold: a check
        # one old release had is the least likely of several that share their opening line (`raise ValueError(`).
        chosen = max(holding, key=lambda e: (len(_holding_line(e, line)), _release_count(e)), default=None)
    if chosen is None and not text and line is not None:  # a traceback without its source lines: the line alone
        chosen = max((e for e in in_function if _holding_line(e, line)), key=lambda e: len(_holding_line(e, line)),
                     default=None)
    if chosen is not None and raised is not None and not _could_raise(chosen, raised[0]):
        chosen = None  # the check at that line raises another type: the error came from elsewhere on the line
    if chosen is not None and raised is not None and not _could_print(chosen, raised[1]):
        # Another check of the function that starts with the same line (`raise ValueError(`) and holds the frame's
        # line in some release: its message is not the failure's, so it did not raise it.
        chosen = None
    if chosen is None and raised is not None:
        chosen = _by_message(in_function, *raised)
    if chosen is None:
        return None
    numbers = sorted({n for run in chosen["lines"] for n in range(run[0], run[1] + 1)})
    framed = _holding_line(chosen, line)
    place = known if known in numbers else (framed[-1] if framed else numbers[-1])
    first_line = next(run[2] for run in chosen["lines"] if run[0] <= place <= run[1])
    return RaiseSite(
        engine=engine, file=file, function=chosen["function"], line=first_line, kind=chosen["kind"],
        condition=chosen["condition"], guards=tuple(chosen["guards"]), fields=tuple(chosen["fields"]),
        releases=tuple(indexed[n] for n in numbers), indexed=tuple(indexed),
        version=version if known in numbers else None,  # "your release has this check" only when it does
        framed=tuple(indexed[n] for n in framed), message=chosen.get("message") or "",
        raised=(chosen.get("type") or "") if chosen["kind"] == "raise" else "",
    )


def _by_message(entries: list[dict[str, Any]], type_name: str, message: str) -> dict[str, Any] | None:
    """The check of that exception type whose message template the failure's message matches, when its fixed text
    names one check (`MIN_FIXED`): of several that match, the one with the most fixed text, unless two different
    checks tie (the same check in several releases, or with one more hole, is one check)."""
    matching = [e for e in entries if e["type"] == short_type(type_name) and fixed_length(e["message"]) >= MIN_FIXED
                and template_matches(e["message"], message)]
    longest = max((fixed_length(e["message"]) for e in matching), default=0)
    best = [e for e in matching if fixed_length(e["message"]) == longest]
    if len({(e["kind"], fixed_text(e["message"])) for e in best}) != 1:
        return None
    return max(best, key=lambda e: max(run[1] for run in e["lines"]))  # the newest release's version of it


def _could_raise(entry: dict[str, Any], type_name: str) -> bool:
    """Whether the check can have raised an exception of this type: an assert raises AssertionError, a `raise` of
    a named class that class (a type the log lost, or a check that only logs, decides nothing)."""
    if not type_name:
        return True
    raised = short_type(type_name)
    if entry["kind"] == "assert":
        return raised == "AssertionError"
    named = entry.get("type") or ""
    # `raise self._format_exception(outputs)`: the index holds the function that builds the exception, not a class,
    # so any type can come of it.
    if entry["kind"] != "raise" or not named[:1].isupper():
        return True
    return named == raised


def _could_print(entry: dict[str, Any], message: str) -> bool:
    """Whether the check can have printed the failure's message: its template matches it, or at least its first
    sentence-long run of fixed text (`MIN_FIXED`) stands in the message.  Only that much, since the message may
    come from another release that reworded the rest ("Possible solutions: 1. ..."), be cut by the paste, or be
    printed as a tuple (`raise RuntimeError("a ", f"b {x}")`).  A message the log lost decides nothing."""
    template = entry["message"]
    if not message.strip() or template_matches(template, message):
        return True
    opening = next((chunk for chunk in (" ".join(part.split()) for part in template.split(HOLE)) if len(chunk) >= MIN_FIXED), None)
    return opening is None or opening[:MIN_FIXED] in " ".join(message.split())


def _release_count(entry: dict[str, Any]) -> int:
    return sum(run[1] - run[0] + 1 for run in entry["lines"])


def _holding_line(entry: dict[str, Any], line: int | None) -> list[int]:
    """The releases (indexes) in which the entry's lines hold the frame's line number."""
    if line is None:
        return []
    return sorted({n for run in entry["lines"] if run[2] <= line <= run[3] for n in range(run[0], run[1] + 1)})


def where(owner: str, site: RaiseSite) -> str:
    """`SGLang's sglang/srt/server_args.py:2425, in F, under `if G`: it asserts `C`, which was false.`": the check
    as a report names it (an assert's condition is said to be false only for an assert, which raised)."""
    possessive = f"{owner}'" if owner.endswith("s") else f"{owner}'s"  # transformers', SGLang's
    said = f"{possessive} {site.file}:{site.line}, in {site.function}"
    if site.guards:
        said += f", under `if {' and '.join(site.guards)}`"
    if site.kind == "assert":
        said += f": it asserts `{site.condition}`, which was false"
    return said + "."


def release_span(site: RaiseSite) -> str:
    """`0.5.3 to 0.5.23`, `0.5.9 only`, or the runs when it comes and goes (the index's release order)."""
    return span(site, site.releases)


def framed_sentence(name: str, site: RaiseSite) -> str:
    """What the traceback's line numbers say of the release that ran: the indexed releases whose file has the check at
    those lines, and the releases the index did not read around them (between their indexed neighbours), which may
    hold the same lines: only some releases are indexed, so a match is never proof of one release."""
    order = {version: number for number, version in enumerate(site.indexed)}
    numbers = sorted(order[release] for release in site.framed)
    before = site.indexed[numbers[0] - 1] if numbers[0] > 0 else None
    after = site.indexed[numbers[-1] + 1] if numbers[-1] + 1 < len(site.indexed) else None
    around = (f"between {before} and {after}" if before and after else f"after {before}" if before
              else f"before {after}" if after else "")
    unread = f", or a release the index did not read {around}" if around else ""
    which = "that one" if len(site.framed) == 1 else "one of those"
    return (f"Of the indexed releases, the traceback's line numbers match {name} {span(site, site.framed)}: the release "
            f"that ran is likely {which}{unread}.")


def span(site: RaiseSite, releases: tuple[str, ...]) -> str:
    order = {version: number for number, version in enumerate(site.indexed)}
    runs: list[list[str]] = []
    for release in sorted(releases, key=order.__getitem__):
        if runs and order[release] == order[runs[-1][-1]] + 1:
            runs[-1].append(release)
        else:
            runs.append([release])
    parts = [run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}" for run in runs]
    return ", ".join(parts) + (" only" if len(releases) == 1 else "")
