"""A cheap test that rules a regular expression out before it is compiled: the literal text any match contains.

Why: a bundled pattern's regex is compiled on first use (schema.LazyRegex), yet on a given failure most of the
~140 regexes are tried against text they cannot match (`CUDA out of memory` against an assertion's message).
Compiling them is the largest single cost of matching (~1 ms each in `regex`'s pure-Python parser).  A
substring test (`"CUDA out of memory" in text`) says "no match" for most of them without compiling anything.

`required_literals(pattern)` reads the pattern text with a small, conservative scanner and returns literals
such that any match of the pattern contains at least one of them (one per top-level alternative), or None
when it cannot tell (inline flags, verbose mode, an alternative with no literal of its own...).  It only ever
rules out: a pattern it cannot read is compiled and run as before.  The bundled patterns' fixtures (tests/
patterns) run every pattern through it, and tests/test_prefilter.py checks it against the real regex engine.
"""

from __future__ import annotations

from collections.abc import Iterator

MIN_LITERAL = 3  # shorter literals rule out too little to be worth a test
_QUANTIFIERS = "?*+{"
_OPTIONAL = "?*{"  # quantifiers that allow zero repetitions ({n,m}: treated as if n could be 0)
# Escapes that stand for one character or a position: they end a run.  Any other letter or digit escape
# (\x41, \N{...}, \p{L}, \1, \g<name>...) takes arguments this scanner does not read.
_ONE_CHARACTER_ESCAPES = frozenset("dDwWsSbBAZntrfv")


class _Unreadable(Exception):
    """A construct the scanner does not read: no prefilter for this pattern."""


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Literals one of which every match of `pattern` contains, or None if the pattern cannot be read so."""
    try:
        literals: list[str] = []
        for branch in _split(pattern):
            literals.extend(_branch_literals(branch))
    except _Unreadable:
        return None
    return tuple(literals)


def required_runs(pattern: str) -> tuple[tuple[str, ...], ...] | None:
    """Every literal run each top-level alternative of `pattern` requires (one tuple per alternative), or None
    if the pattern cannot be read so.  scripts/own_words.py reads a message's whole wording from them."""
    try:
        return tuple(tuple(_runs(branch, [])) for branch in _split(pattern))
    except _Unreadable:
        return None


def _branch_literals(branch: str) -> tuple[str, ...]:
    """The longest required run of one alternative, else the literals of a group every match of it holds
    (`^(?:load_model|load_weights)$`)."""
    choices: list[tuple[str, ...]] = []
    longest = max(_runs(branch, choices), key=len, default="")
    if len(longest) >= MIN_LITERAL:
        return (longest,)
    if choices:
        return choices[0]
    raise _Unreadable


def may_match(literals: tuple[str, ...] | None, text: str) -> bool:
    return literals is None or any(literal in text for literal in literals)


def _split(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern."""
    branches, start, depth = [], 0, 0
    for index, char in _structure(pattern, 0):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise _Unreadable
        elif char == "|" and depth == 0:
            branches.append(pattern[start:index])
            start = index + 1
    if depth:
        raise _Unreadable
    branches.append(pattern[start:])
    return branches


def _runs(branch: str, choices: list[tuple[str, ...]]) -> list[str]:
    """The runs of literal characters every match of this alternative (a sequence, no top-level `|`) holds.
    A required group with alternatives adds its literals (one of which every match holds) to `choices`."""
    runs: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    index = 0
    while index < len(branch):
        char = branch[index]
        if char == "\\":
            escaped = branch[index + 1 : index + 2]
            if escaped in _ONE_CHARACTER_ESCAPES:
                close()  # \d, \b, \n...: not a literal this scanner reads
                index = _skip_quantifier(branch, index + 2)
                continue
            if not escaped or escaped.isalnum() or not escaped.isascii():
                raise _Unreadable
            item, index = escaped, index + 2
        elif char == "[":
            close()
            index = _skip_quantifier(branch, _class_end(branch, index))
            continue
        elif char == "(":
            end = _group_end(branch, index)
            close()
            optional = end < len(branch) and branch[end] in _OPTIONAL
            inner = _group_body(branch[index:end])
            if inner is not None and not optional:
                runs.extend(_runs_of_group(inner, choices))
            index = _skip_quantifier(branch, end)
            continue
        elif char in ".^$":
            close()
            index = _skip_quantifier(branch, index + 1)
            continue
        elif char in _QUANTIFIERS or char == ")":
            raise _Unreadable  # a quantifier with nothing before it, or an unbalanced parenthesis
        else:
            item, index = char, index + 1
        if index < len(branch) and branch[index] in _QUANTIFIERS:
            if branch[index] == "+":
                current.append(item)  # at least once: the run so far, this character included, is required
            close()
            index = _skip_quantifier(branch, index)
            continue
        current.append(item)
    close()
    return runs


def _runs_of_group(body: str, choices: list[tuple[str, ...]]) -> list[str]:
    """A group's required runs: those of its only alternative.  A group with several adds their literals to
    `choices` instead, when each has some."""
    branches = _split(body)
    if len(branches) == 1:
        return _runs(branches[0], choices)
    literals = required_literals(body)
    if literals is not None:
        choices.append(literals)
    return []


def _group_body(group: str) -> str | None:
    """The body of a capturing or non-capturing group, None for any other `(?...)` construct (lookaround,
    atomic, conditional, comment) whose text need not be in the match.  Inline flags change how everything
    reads: unreadable."""
    if not group.startswith("(?"):
        return group[1:-1]
    if group.startswith("(?:"):
        return group[3:-1]
    if group.startswith("(?P<"):
        close = group.find(">")
        return group[close + 1 : -1] if close > 0 else None
    if group.startswith(("(?=", "(?!", "(?<=", "(?<!", "(?>", "(?P=", "(?(", "(?#")):
        return None
    raise _Unreadable  # (?i), (?x), (?s)...


def _skip_quantifier(text: str, index: int) -> int:
    """The index after a quantifier at `index` (and its lazy `?` or possessive `+`), if there is one."""
    if index >= len(text) or text[index] not in _QUANTIFIERS:
        return index
    if text[index] == "{":
        close = text.find("}", index)
        if close < 0:
            raise _Unreadable
        index = close + 1
    else:
        index += 1
    if index < len(text) and text[index] in "?+":
        index += 1
    return index


def _class_end(text: str, index: int) -> int:
    """The index after the character class starting at `index` (`[`).  Nested sets (regex V1) are unreadable."""
    index += 1
    if index < len(text) and text[index] == "^":
        index += 1
    if index < len(text) and text[index] == "]":
        index += 1  # a leading `]` is a literal
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            raise _Unreadable
        if char == "]":
            return index + 1
        index += 1
    raise _Unreadable


def _group_end(text: str, index: int) -> int:
    """The index after the group starting at `index` (`(`)."""
    depth = 0
    for position, char in _structure(text, index):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position + 1
    raise _Unreadable


def _structure(text: str, index: int) -> Iterator[tuple[int, str]]:
    """(position, character) of the characters that give a pattern its shape, from `index` on: escapes and
    character classes are stepped over."""
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
        elif char == "[":
            index = _class_end(text, index)
        else:
            yield index, char
            index += 1
