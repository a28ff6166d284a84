"""Fleet syntax: turn what the user typed into the plain source specs the rest of logsleuth opens.

- pdsh-style host ranges and lists in the host part of a remote spec: `node[01-16]:/var/log/sglang.log`,
  `node[1,3,5-7]:x`, several groups are a product (`r[1-2]n[1-2]`), zero padding as written;
- `{host}` in the path of a remote spec is that spec's own host name (`node[01-04]:/logs/{host}.log`);
- `--hosts-file FILE`: one source or bare host a line; bare hosts fill every SOURCE argument that is a
  template (`{host}:/var/log/sglang.log`).

docs/fleet-syntax.md is the user's description.  This runs at the start of every command, so it imports only
what Python has loaded at start-up; the spec parser (which pulls in dataclasses) is imported only when a spec
has brackets, a template or a hosts file is given.
"""

from __future__ import annotations

import itertools
import os
import sys

from logsleuth.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy reads it as True
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from logsleuth.sources.source_spec import SourceSpec

MAX_SOURCES = 4096  # sources after expansion, and hosts in a hosts file
HOSTS_FILE_LIMIT = 1 << 20  # bytes: 4096 host names fit many times over; /dev/zero does not
TEMPLATE = "{host}"
_URL_SCHEME = "ssh://"
_STDIN = "-"

# One host of a hosts file: (user or None, host name; an IPv6 address in its brackets).
HostEntry = tuple[str | None, str]


class _BadText(ValueError):
    """What is wrong with a piece of text; the caller adds where the text came from."""


def expand_sources(specs: Sequence[str], hosts_file: str | None = None) -> list[SourceSpec]:
    """The plain source specs that `specs` and `hosts_file` name, in order, exact duplicates dropped, each with its
    kind (sources/source_spec.py).

    Raises UsageError (exit 2) with one line naming the offending text for bad ranges, a `{host}` template
    without hosts, bare hosts without a template, more than MAX_SOURCES sources, and a hosts file that cannot
    be read or is not a list of hosts."""
    from logsleuth.sources.source_spec import source_spec  # here: importing this module must stay cheap

    if hosts_file is None and not any("[" in spec or "]" in spec or TEMPLATE in spec for spec in specs):
        return [source_spec(spec) for spec in dict.fromkeys(specs)]  # the common case: nothing to expand
    hosts: list[HostEntry] = []
    file_sources: list[str] = []
    if hosts_file is not None:
        hosts, file_sources = _read_hosts_file(hosts_file, specs)
    sources: dict[str, None] = {}
    for spec in specs:
        _add_all(sources, _expand_argument(spec, hosts, hosts_file), spec)
    _add_all(sources, file_sources, f"--hosts-file {hosts_file}")
    return [source_spec(spec) for spec in sources]  # each one's kind decided here, once


def _add_all(sources: dict[str, None], new: Iterable[str], where: str) -> None:
    sources.update(dict.fromkeys(new))
    if len(sources) > MAX_SOURCES:
        raise UsageError(_printable(f"{where}: the sources add up to {len(sources)}, {_over_the_limit()}"))


def _over_the_limit() -> str:
    return f"more than the limit of {MAX_SOURCES}"


def _printable(text: str) -> str:
    from logsleuth.sources.spec import printable  # only on the way to an error

    return printable(text)


# --- one spec -----------------------------------------------------------------------------------------------


def _expand_argument(spec: str, hosts: Sequence[HostEntry], hosts_file: str | None) -> list[str]:
    """One SOURCE argument: a template is filled with every host of the hosts file, anything else expanded."""
    if _is_template(spec):
        if not hosts:
            fix = (
                "give --hosts-file FILE with one host a line"
                if hosts_file is None
                else f"--hosts-file {hosts_file} has complete sources only, no bare hosts"
            )
            raise UsageError(_printable(f"{spec}: {TEMPLATE} needs hosts to fill it: {fix}"))
        return _fill_template(spec, hosts)
    return _expand_or_fail(spec, spec)


def _expand_or_fail(spec: str, where: str) -> list[str]:
    try:
        return _expand_spec(spec)
    except _BadText as problem:
        raise UsageError(_printable(f"{where}: {problem}")) from None


def _expand_spec(spec: str) -> list[str]:
    """The specs a spec with host ranges names, each `{host}` in the path filled with its own host."""
    if _is_stdin_or_local_file(spec):
        return [spec]
    head, host, tail = _split_host(spec)
    if _has_range(host) and not _is_remote(head, tail):
        return [spec]  # a local path with brackets in it (`dir/a[1-2]:b`)
    return [
        f"{head}{name}{tail.replace(TEMPLATE, _bare(name))}" for name in _hosts_named(host, noun="sources")
    ]


def _is_template(spec: str) -> bool:
    """A template is filled from the hosts file: `{host}` is its host (`{host}:/x`) or it is local
    (`/collected/{host}/x.log`).  A remote spec with `{host}` in its path fills it with its own host."""
    if TEMPLATE not in spec or _is_stdin_or_local_file(spec):
        return False
    head, host, tail = _split_host(spec)
    return TEMPLATE in host or not _is_remote(head, tail)


def _is_stdin_or_local_file(spec: str) -> bool:
    # The scp rule of spec.looks_remote, on the text as typed: a local file of that name is never expanded.
    return spec == _STDIN or (not spec.startswith(_URL_SCHEME) and os.path.exists(spec))


def _split_host(spec: str) -> tuple[str, str, str]:
    """`spec` as (head, host, tail): head is `ssh://` and `user@`, host runs to the `:` or `/` that ends it
    (a bracketed IPv6 address keeps its colons), tail is the rest.  A local path has an empty host or a tail
    that the spec parser rejects."""
    start = len(_URL_SCHEME) if spec.startswith(_URL_SCHEME) else 0
    user_end = _find_first(spec, ":/@", start)
    host_start = user_end + 1 if user_end < len(spec) and spec[user_end] == "@" else start
    if spec.startswith("[", host_start):
        close = spec.find("]", host_start)
        slash = _find_first(spec, "/", host_start)
        if close != -1 and close < slash and ":" in spec[host_start:close]:
            return spec[:host_start], spec[host_start : close + 1], spec[close + 1 :]
    host_end = _find_first(spec, ":/", host_start)
    return spec[:host_start], spec[host_start:host_end], spec[host_end:]


def _find_first(text: str, characters: str, start: int) -> int:
    """Index of the first of `characters` in text[start:], or len(text)."""
    end = len(text)
    for char in characters:
        index = text.find(char, start, end)
        if index != -1:
            end = index
    return end


def _is_remote(head: str, tail: str) -> bool:
    """Whether head + some host + tail is a remote spelling: the spec parser decides, not a copy of it."""
    from logsleuth.sources.spec import parse_remote_spec

    try:
        return parse_remote_spec(f"{head}h{tail}") is not None
    except UsageError:  # a port out of range: remote, and opening the source reports it (as looks_remote)
        return True


def _has_range(host: str) -> bool:
    return ("[" in host or "]" in host) and not _is_address(host)


def _is_address(host: str) -> bool:
    return host.startswith("[") and ":" in host  # a range never holds a colon: `_split_host` stops there


def _bare(host: str) -> str:
    """The host's name as `{host}` in a path gets it: an IPv6 address without its brackets."""
    return host[1:-1] if _is_address(host) else host


# --- host ranges --------------------------------------------------------------------------------------------

# One bracket item: (low, high, width), numbers zero-padded to `width` (0: as they come).
_Span = tuple[int, int, int]


def _hosts_named(host: str, noun: str) -> list[str]:
    """`node[01-03]` -> node01, node02, node03; several groups are a product, leftmost varying slowest.
    `noun` names what the host makes, for the message when there are too many."""
    if not _has_range(host):
        return [host]
    pieces: list[list[_Span] | str] = []
    position = 0
    while position < len(host):
        opening, closing = host.find("[", position), host.find("]", position)
        if closing != -1 and (opening == -1 or closing < opening):
            raise _BadText("']' without '[' in the host name")
        if opening == -1:
            pieces.append(host[position:])
            break
        if closing == -1:
            raise _BadText("'[' without ']' in the host name")
        if "[" in host[opening + 1 : closing]:
            raise _BadText("'[' inside '[...]' in the host name")
        pieces.append(host[position:opening])
        pieces.append(_parse_group(host[opening : closing + 1]))
        position = closing + 1
    _check_count(pieces, noun)
    choices = [[piece] if isinstance(piece, str) else list(_numbers(piece)) for piece in pieces]
    return ["".join(parts) for parts in itertools.product(*choices)]


def _check_count(pieces: Sequence[list[_Span] | str], noun: str) -> None:
    """Refuse before building: `node[1-100000000]` must not fill the memory first."""
    count = 1
    for piece in pieces:
        if not isinstance(piece, str):
            count *= sum(high - low + 1 for low, high, _ in piece)
    if count > MAX_SOURCES:
        raise _BadText(f"expands to {count} {noun}, {_over_the_limit()}")


def _numbers(spans: list[_Span]) -> Iterable[str]:
    for low, high, width in spans:
        for number in range(low, high + 1):
            yield f"{number:0{width}d}"


def _parse_group(group: str) -> list[_Span]:
    """`[1,3,5-7]` -> its spans.  `group` includes the brackets, for the messages."""
    inside = group[1:-1]
    if not inside:
        raise _BadText(f"empty host range {group}")
    spans = []
    for item in inside.split(","):
        if not item:
            raise _BadText(f"empty item in host range {group}")
        low_text, dash, high_text = item.partition("-")
        low, high = _bound(low_text, group), _bound(high_text if dash else low_text, group)
        if low > high:
            raise _BadText(f"host range {group} goes backwards ({low} > {high})")
        spans.append((low, high, _width(low_text, high_text if dash else low_text, group)))
    return spans


def _bound(text: str, group: str) -> int:
    if text.isascii() and text.isdigit():
        return int(text)
    why = " (alphabetic ranges are not supported)" if text.isalpha() else ""
    raise _BadText(f"host range {group}: '{text}' is not a number{why}")


def _width(low: str, high: str, group: str) -> int:
    """Zero padding as written: `08-10` pads to 2, `8-10` not at all; `8-010` is ambiguous."""
    if _is_padded(high) and len(high) != len(low):
        raise _BadText(f"host range {group}: pad both bounds to the same width")
    return len(low) if _is_padded(low) else 0


def _is_padded(number: str) -> bool:
    return len(number) > 1 and number.startswith("0")


# --- templates and hosts files ------------------------------------------------------------------------------


def _fill_template(template: str, hosts: Sequence[HostEntry]) -> list[str]:
    """The template filled with each host in turn.  `{host}` in the host part becomes the host (its user,
    when the hosts file gives one, replaces the template's); `{host}` elsewhere becomes the host's bare name.
    A range of the template's own (`{host}-[1-2]:x`) is expanded after filling."""
    head, host_part, tail = _split_host(template)
    scheme = _URL_SCHEME if head.startswith(_URL_SCHEME) else ""
    filled = []
    for user, host in hosts:
        if TEMPLATE in host_part:
            filled.append(
                f"{head if user is None else f'{scheme}{user}@'}"
                f"{host_part.replace(TEMPLATE, host)}{tail.replace(TEMPLATE, _bare(host))}"
            )
        else:
            filled.append(f"{head}{host_part}{tail.replace(TEMPLATE, _bare(host))}")
    if not _has_range(host_part):
        return filled
    expanded: dict[str, None] = {}
    for spec in filled:  # capped as it grows: 4096 hosts times a range of 4096 would not fit in memory
        _add_all(expanded, _expand_or_fail(spec, template), template)
    return list(expanded)


def _read_hosts_file(name: str, specs: Sequence[str]) -> tuple[list[HostEntry], list[str]]:
    """The bare hosts of a hosts file, and its complete source specs expanded."""
    text = _decode(name, _read_bytes(name, specs))
    shown = _shown(name)
    hosts: dict[HostEntry, None] = {}
    sources: dict[str, None] = {}
    first_host_line = ""
    for number, raw in enumerate(text.split("\n"), start=1):
        line = _strip_comment(raw)
        if not line:
            continue
        where = f"{shown}:{number}"
        if _split_host(line)[2]:
            _add_all(sources, _file_source(line, where), f"{where}: {line}")
            continue
        first_host_line = first_host_line or f"{where}: {line}"
        hosts.update(dict.fromkeys(_host_entries(line, where)))
        if len(hosts) > MAX_SOURCES:
            raise UsageError(
                _printable(f"{where}: {line}: the hosts add up to {len(hosts)}, {_over_the_limit()}")
            )
    if not hosts and not sources:
        raise UsageError(_printable(f"--hosts-file {name}: no hosts or sources in it"))
    if hosts and not any(_is_template(spec) for spec in specs):
        raise UsageError(
            _printable(
                f"{first_host_line} is a host, but no source has {TEMPLATE} to put it in "
                f"(e.g. '{TEMPLATE}:/var/log/sglang.log')"
            )
        )
    return list(hosts), list(sources)


def _strip_comment(line: str) -> str:
    """Without a `#` comment (a whole line, or after whitespace: `x#1.log` keeps its `#`) and outer blanks."""
    line = line.strip()
    if line.startswith("#"):
        return ""
    cut = min(
        (index for index in (line.find(f"{blank}#") for blank in " \t") if index != -1), default=len(line)
    )
    return line[:cut].rstrip()


def _file_source(line: str, where: str) -> list[str]:
    if _is_template(line):
        raise UsageError(_printable(f"{where}: {line}: a {TEMPLATE} template belongs on the command line"))
    return _expand_or_fail(line, f"{where}: {line}")


def _host_entries(line: str, where: str) -> list[HostEntry]:
    """`[user@]host` with ranges -> one entry per host."""
    head, host, _ = _split_host(line)
    try:
        names = _hosts_named(host, noun="hosts")
    except _BadText as problem:
        raise UsageError(_printable(f"{where}: {line}: {problem}")) from None
    if not _is_host(head, names[0]):
        raise UsageError(_printable(f"{where}: '{line}' is not a host name"))
    return [(head[:-1] or None, name) for name in names]


def _is_host(head: str, host: str) -> bool:
    """Whether `[user@]host` is one the spec parser accepts as the host of `host:path`."""
    from logsleuth.sources.spec import parse_remote_spec

    if head.startswith(_URL_SCHEME) or host.startswith("-"):  # `-x` would read as an ssh option
        return False
    return parse_remote_spec(f"{head}{host}:x") is not None


def _shown(name: str) -> str:
    """The hosts file's name before `:line` in a message."""
    return "stdin" if name == _STDIN else name


def _read_bytes(name: str, specs: Sequence[str]) -> bytes:
    if name == _STDIN:
        _check_stdin(specs)
    try:
        if name == _STDIN:
            return sys.stdin.buffer.read(HOSTS_FILE_LIMIT + 1)
        with open(name, "rb") as file:  # a FIFO too: `--hosts-file <(inventory --list)`
            return file.read(HOSTS_FILE_LIMIT + 1)
    except OSError as exc:
        # The one wording of a file that cannot be read (local.py; private there, imported only here).
        from logsleuth.sources.local import _describe_os_error

        raise UsageError(_printable(_describe_os_error(f"--hosts-file {name}", exc))) from None


def _check_stdin(specs: Sequence[str]) -> None:
    if _STDIN in specs:
        raise UsageError("--hosts-file -: stdin is already a source ('-')")
    if sys.stdin is None:
        raise UsageError("--hosts-file -: stdin is not open")
    if sys.stdin.isatty():  # reading would wait for typing, as `diagnose` without a source does not
        raise UsageError("--hosts-file -: stdin is a terminal; pipe the hosts in (inventory | logsleuth ...)")


def _decode(name: str, data: bytes) -> str:
    if b"\0" in data:
        raise UsageError(_printable(f"--hosts-file {name}: a binary file, not a list of hosts"))
    if len(data) > HOSTS_FILE_LIMIT:
        raise UsageError(_printable(f"--hosts-file {name}: larger than 1 MiB, too large for a list of hosts"))
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(_printable(f"{_shown(name)}:{line}: not UTF-8 text")) from None
