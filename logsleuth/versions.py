"""Engine versions: one ordering (a PEP 440 subset) and one way to test a version against constraints.

Used by the pattern library (a pattern limited to `versions = ["<0.5.23"]`) and by the flag catalogs (the
catalog of the newest release at or below the version in use), so that both agree on where a release such as
`0.5.23rc0` sits: after 0.5.22, before 0.5.23.
"""

from __future__ import annotations

import math
import re

from logsleuth.lazyre import compile_lazily

_VERSION = compile_lazily(
    r"^v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[._-]?(?P<pre>a|b|rc|c|alpha|beta|pre|preview)[._-]?(?P<pre_n>\d*))?"
    r"(?:[._-]?(?:post|rev|r)[._-]?(?P<post>\d*))?"
    r"(?:[._-]?dev[._-]?(?P<dev>\d*))?"
    r"(?:\+[\w.]+)?$",
    re.IGNORECASE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
# Matched against the stripped constraint: leading and trailing runs of \s* around \S+ backtrack quadratically.
_CONSTRAINT = compile_lazily(r"(?P<op><=|>=|==|!=|<|>)?\s*(?P<version>\S+)")

VersionKey = tuple[tuple[int, ...], tuple[float, ...], float, float]


def version_key(version: str) -> VersionKey | None:
    """A sort key: `0.5.23.dev1 < 0.5.23rc0 < 0.5.23 < 0.5.23.post1`, `0.5 == 0.5.0`.  None: not a version."""
    m = _VERSION.match(version.strip())
    if m is None:
        return None
    release = tuple(int(part) for part in m["release"].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    if m["pre"]:
        pre: tuple[float, ...] = (0, _PRE_RANK[m["pre"].lower()], int(m["pre_n"] or 0))
    elif m["dev"] is not None and m["post"] is None:
        pre = (-1,)  # X.Y.devN comes before every pre-release of X.Y
    else:
        pre = (1,)  # a final release
    post = float(int(m["post"] or 0)) if m["post"] is not None else -1.0
    dev = float(int(m["dev"] or 0)) if m["dev"] is not None else math.inf
    return release, pre, post, dev


def is_valid_constraint(constraint: str) -> bool:
    m = _CONSTRAINT.fullmatch(constraint.strip())
    return m is not None and version_key(m["version"]) is not None


def _satisfies(version: VersionKey, constraint: str) -> bool:
    m = _CONSTRAINT.fullmatch(constraint.strip())
    want = version_key(m["version"]) if m else None
    if m is None or want is None:
        return False
    return {
        "<": version < want,
        "<=": version <= want,
        ">": version > want,
        ">=": version >= want,
        "==": version == want,
        "!=": version != want,
    }[m["op"] or "=="]


def matches(constraints: tuple[str, ...], version: str | None) -> bool:
    """`constraints` entries are ORed; within one, comma-separated constraints are ANDed:
    `["<0.5.23"]`, `[">=0.5,<0.5.23", "0.4.10.post2"]`.  No constraints, or an unknown version, match."""
    key = version_key(version) if version else None
    if not constraints or key is None:
        return True
    return any(all(_satisfies(key, part) for part in entry.split(",")) for entry in constraints)


def newest_at_or_below(available: list[str], version: str | None) -> str | None:
    """The newest of `available` that is not newer than `version` (the oldest when all are; the newest when
    the version is unknown).  Which catalog of flags describes a release we have no catalog for."""
    known = sorted((key, name) for name in available if (key := version_key(name)) is not None)
    if not known:
        return None
    target = version_key(version) if version else None
    if target is None:
        return known[-1][1]
    older = [name for key, name in known if key <= target]
    return older[-1] if older else known[0][1]
