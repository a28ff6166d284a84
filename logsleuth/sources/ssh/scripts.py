"""The small POSIX sh programs logsleuth runs on the remote host, and the parsing of what they print.

Why scripts rather than SFTP: `tail -c +K FILE | head -c N` seeks on the server and sends exactly the window
we want in one round trip; SFTP needs a stat and pipelined reads.  (SFTP stays as the fallback for accounts
without a usable shell, see ssh.py.)

Safety: the remote path is never pasted into script text.  The command line is
`/bin/sh -c SCRIPT logsleuth ARG1 ARG2 ...` with every piece passed through `shlex.quote`, so the path reaches
the script as "$2" and a `;`, quote or `$(...)` in it is just a character.  Globbing is done by expanding an
unquoted "$p" with IFS empty: pathname expansion happens, command substitution never does.

Noise: a remote ~/.bashrc may print a banner before our command runs.  Every script first prints a random
marker line; everything on stdout before it is discarded.  The scripts are written on one line so that any
login shell (bash, dash, zsh, fish, csh) can pass them to /bin/sh unchanged.
"""

from __future__ import annotations

import re
import secrets
import shlex
from dataclasses import dataclass, field

from logsleuth.sources.base import GrepMatches

# Records after the marker are `kind TAB field... NUL`; NUL cannot occur in a path.
_PROBE_LINES = r"""
m=$1; p=$2; all=$3; want=$4;
printf '%s\n' "$m";
for c in tail head wc; do command -v "$c" >/dev/null 2>&1 || { printf 'nocmd\t%s\0' "$c"; exit 0; }; done;
IFS=; set +f; best=; count=0;
for f in $p; do
  d=.; case $f in */*) d=${f%/*}; d=${d:-/} ;; esac;
  if [ -d "$f" ]; then printf 'dir\t%s\0' "$f";
  elif [ -d "$d" ] && [ ! -x "$d" ]; then printf 'denied\t%s\0' "$f";
  elif [ ! -e "$f" ]; then printf 'missing\t%s\0' "$f";
  elif [ ! -r "$f" ]; then printf 'denied\t%s\0' "$f";
  elif [ ! -f "$f" ]; then printf 'special\t%s\0' "$f";
  else
    count=$((count+1));
    if [ -z "$best" ] || [ "$f" -nt "$best" ]; then best=$f; fi;
    case $all$f in 0*|*.gz) printf 'file\t-\t%s\0' "$f" ;; *) printf 'file\t%s\t%s\0' "$(wc -c <"$f")" "$f" ;; esac;
  fi;
done;
[ -n "$best" ] && [ "$want" -gt 0 ] && { [ "$all" = 0 ] || [ "$count" = 1 ]; } || exit 0;
case $best in
  *.gz)
    command -v gzip >/dev/null 2>&1 || { printf 'nocmd\tgzip\0'; exit 0; };
    printf 'gzdata\t%s\0' "$best";
    gzip -dc -- "$best" | { tee /dev/fd/3 | wc -c | { read -r n; printf '%s size %s\n' "$m" "$n" >&2; }; } 3>&1 | tail -c "$want" ;;
  *)
    n=$(wc -c <"$best"); n=$((n+0)); s=$((n>want ? n-want : 0));
    printf 'data\t%s\t%s\t%s\0' "$n" "$s" "$best";
    tail -c +$((s+1)) -- "$best" | head -c $((n-s)) ;;
esac
"""

# len "-" reads to the end of the file (the caller stops at the size it knows): one process fewer in the
# pipeline, which is ~25% faster when streaming a whole file.
_READ_LINES = r"""
m=$1; f=$2; start=$3; len=$4; gz=$5;
printf '%s\n' "$m";
if [ "$gz" = 1 ]; then
  if [ "$len" = - ]; then gzip -dc -- "$f" | tail -c +$((start+1)); else gzip -dc -- "$f" | tail -c +$((start+1)) | head -c "$len"; fi;
elif [ "$len" = - ]; then tail -c +$((start+1)) -- "$f";
else tail -c +$((start+1)) -- "$f" | head -c "$len"; fi
"""

# The inode of "$f" into $i (empty when there is no such file): `ls -di` is POSIX, `stat -c` is not.  The two
# expansions drop any padding before the number and the name after it.
_INODE = r"""i=$(ls -di -- "$f" 2>/dev/null); i=${i#"${i%%[0-9]*}"}; i=${i%%[!0-9]*};"""

# Follow a file from a byte offset for `watch`; run again after a lost connection (sources/ssh/follow.py).
# First line after the marker: how the follow starts and the file's inode.  "resume": from `start`, the file is
# the one `known` names (or `known` is "-") and not shorter than `least` (bytes known to have been there);
# "restart": it was replaced or truncated meanwhile, so from its first byte; "missing": no file by that name now
# (tail -F waits for it).
# `--pid=$PPID`: when our connection closes, the session that started us ends and tail exits within a second
# (closing a channel does not signal it; paramiko #203).
# tail's own messages ("file truncated", "has been replaced") go into stdout (2>&1), so that they come exactly
# where tail wrote them between the file's bytes; tail runs under a program path with a random part ($4, `./`
# and `/` runs: the same file), which GNU tail prints at the start of every message, so that no log line can
# pass for one (TailOutput below).  That path is the second line, LC_ALL=C keeps the messages in English.
# Beside tail, a heartbeat says every second, as a message of tail's own form, how long the file is: the follower
# tells from it that nothing written is still on its way (base.ALIVE), which a frozen connection cannot say.  It
# checks tail's pid (tail replaced this shell: $$) and ends with it; `sleep` does not hold stdout open.
_FOLLOW_LINES = r"""
m=$1; f=$2; start=$3; units=$4; known=$5; least=$6;
printf '%s\n' "$m";
""" + _INODE + r"""
if [ -z "$i" ]; then how=missing; start=0;
else n=$(wc -c <"$f"); n=$((n+0));
  if [ "$n" -lt "$least" ] || { [ "$known" != - ] && [ "$known" != "$i" ]; }; then how=restart; start=0; else how=resume; fi;
fi;
printf '%s %s\n' "$how" "$i";
t=$(command -v tail); case $t in /*) t=${t%/*}/$units${t##*/} ;; *) t=tail ;; esac;
printf '%s\n' "$t";
LC_ALL=C; export LC_ALL;
( while kill -0 $$ 2>/dev/null; do sleep 1 >/dev/null 2>&1; s=$(wc -c <"$f" 2>/dev/null);
  printf '%s: logsleuth-alive %s\n' "$t" "$((s+0))"; done ) </dev/null 2>/dev/null &
exec "$t" -F --pid=$PPID -c +$((start+1)) -- "$f" 2>&1
"""

# The inode of the file a name now points to (after tail announced it was replaced): one line, empty if none.
_INODE_LINES = r"""
m=$1; f=$2;
printf '%s\n' "$m";
""" + _INODE + r"""
printf '%s\n' "$i"
"""

# The size of a file opened without prefetch.  For .gz it is the decompressed size: the gzip trailer holds it
# only modulo 4 GiB, so it is counted.
_SIZE_LINES = r"""
m=$1; f=$2; gz=$3;
printf '%s\n' "$m";
if [ "$gz" = 1 ]; then
  command -v gzip >/dev/null 2>&1 || { printf 'nocmd\tgzip\0'; exit 0; };
  printf 'size\t%s\0' "$(gzip -dc -- "$f" | wc -c)";
else printf 'size\t%s\0' "$(wc -c <"$f")"; fi
"""


# Byte offsets of literal strings, found on the remote host (grep reads at GB/s; streaming the file to us
# would not).  Args after the path are the literals; each becomes `-e LITERAL`.  A plain file's current size
# comes first (`size TAB N NUL`): a file truncated since its size was taken is reported, not searched.
_FIND_LINES = r"""
m=$1; f=$2; gz=$3; shift 3;
printf '%s\n' "$m";
n=$#; i=0; while [ "$i" -lt "$n" ]; do set -- "$@" -e "$1"; shift; i=$((i+1)); done;
if [ "$gz" = 1 ]; then gzip -dc -- "$f" | LC_ALL=C grep -boaF "$@";
else printf 'size\t%s\0' "$(wc -c <"$f")"; LC_ALL=C grep -boaF "$@" -- "$f"; fi
"""


# Many byte ranges of one file in one run (`health`'s windows: hundreds of them).  Each range comes as a line
# `START LENGTH` (LENGTH: the bytes that follow, fewer than asked only at the end of the file), then its bytes.
# perl, where the host has it (Debian's and Ubuntu's perl-base is always there), seeks and reads them all in one
# process; else two `tail | head` runs per range, the first to learn the length.  The perl program is an argument
# like the path (RANGES_PERL), never written anywhere.
_RANGES_LINES = r"""
m=$1; code=$2; f=$3; shift 3;
printf '%s\n' "$m";
[ -r "$f" ] || { printf 'unreadable\n'; exit 0; };
if command -v perl >/dev/null 2>&1; then exec perl -e "$code" -- "$f" "$@"; fi;
while [ $# -gt 1 ]; do s=$1; n=$2; shift 2;
  k=$(tail -c +$((s+1)) -- "$f" | head -c "$n" | wc -c); k=$((k+0));
  printf '%s %s\n' "$s" "$k"; tail -c +$((s+1)) -- "$f" | head -c "$k";
done
"""
RANGES_PERL = (
    'open(my $f, "<", shift @ARGV) or die "cannot open: $!\\n"; binmode $f; binmode STDOUT; $| = 0; '
    "while (@ARGV > 1) { my ($s, $n) = splice(@ARGV, 0, 2); my $d = ''; "
    "seek($f, $s, 0) and defined(read($f, $d, $n)) or $d = ''; print $s, ' ', length($d), \"\\n\", $d; }"
)


def parse_ranges(body: bytes) -> list[tuple[int, bytes]] | None:
    """RANGES_SCRIPT's output (after the marker) as (start, bytes) per range; None when it is not that (the file
    could not be read, or the run was cut short)."""
    ranges: list[tuple[int, bytes]] = []
    position = 0
    while position < len(body):
        newline = body.find(b"\n", position)
        start, _, length = body[position:newline].partition(b" ") if newline >= 0 else (b"", b"", b"")
        if not start.isdigit() or not length.isdigit():
            return None
        end = newline + 1 + int(length)
        if end > len(body):
            return None
        ranges.append((int(start), body[newline + 1 : end]))
        position = end
    return ranges


def _one_line(lines: str) -> str:
    return " ".join(line.strip() for line in lines.strip().splitlines())


PROBE_SCRIPT = _one_line(_PROBE_LINES)
READ_SCRIPT = _one_line(_READ_LINES)
SIZE_SCRIPT = _one_line(_SIZE_LINES)
FIND_SCRIPT = _one_line(_FIND_LINES)
FOLLOW_SCRIPT = _one_line(_FOLLOW_LINES)
RANGES_SCRIPT = _one_line(_RANGES_LINES)
INODE_SCRIPT = _one_line(_INODE_LINES)


def new_marker() -> str:
    return f"LOGSLEUTH-{secrets.token_hex(8)}"


def new_path_units(bits: int = 64) -> str:
    """A random run of `./` and `/` (one per bit): put before a file name it names the same file, and makes its
    path unguessable (FOLLOW_SCRIPT runs tail under such a path)."""
    pattern = secrets.randbits(bits)
    return "".join("./" if pattern >> bit & 1 else "/" for bit in range(bits))


def command_line(script: str, *args: str | int) -> str:
    """The exec request: the user's login shell runs /bin/sh (absolute: PATH may be odd) with quoted args."""
    quoted = " ".join(shlex.quote(str(arg)) for arg in args)
    return f"/bin/sh -c {shlex.quote(script)} logsleuth {quoted}"


def strip_noise(stdout: bytes, marker: str) -> bytes | None:
    """The bytes after the marker line, or None when the marker never came (the shell did not run us)."""
    tag = marker.encode() + b"\n"
    index = stdout.find(tag)
    return None if index < 0 else stdout[index + len(tag) :]


@dataclass(slots=True)
class ProbeResult:
    """What the remote probe script reported of a file."""
    # (path, size): the size only with all_files and not for .gz; the newest file's comes with its prefetch
    files: list[tuple[str, int | None]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, path): dir/missing/denied/special
    missing_command: str | None = None
    newest: str | None = None
    prefetch_start: int = 0
    prefetch: bytes | None = None
    prefetch_size: int | None = None  # the file size the prefetch belongs to


def parse_probe(body: bytes, marker: str, stderr: bytes) -> ProbeResult:
    """Split the probe output into listing records and the trailing prefetched bytes."""
    result = ProbeResult()
    position = 0
    while position < len(body):
        end = body.find(b"\0", position)
        if end < 0:
            break
        kind, *fields = body[position:end].decode("utf-8", "surrogateescape").split("\t")
        position = end + 1
        if kind == "file":
            size_text, path = fields[0], "\t".join(fields[1:])
            result.files.append((path, None if size_text == "-" else int(size_text.strip())))
        elif kind == "nocmd":
            result.missing_command = fields[0]
        elif kind == "data":
            size, start, path = int(fields[0]), int(fields[1]), "\t".join(fields[2:])
            result.newest, result.prefetch_size, result.prefetch_start = path, size, start
            result.prefetch = body[position:]
            break
        elif kind == "gzdata":
            result.newest = "\t".join(fields)
            data = body[position:]
            result.prefetch_size = _tagged_size(stderr, marker)
            if result.prefetch_size is not None:
                result.prefetch = data
                result.prefetch_start = result.prefetch_size - len(data)
            break
        else:
            result.problems.append((kind, "\t".join(fields)))
    return result


def _tagged_size(stderr: bytes, marker: str) -> int | None:
    tag = f"{marker} size ".encode()
    for line in stderr.splitlines():
        if line.startswith(tag):
            try:
                return int(line[len(tag) :].strip())
            except ValueError:
                return None
    return None


def parse_records(body: bytes) -> dict[str, str]:
    """`kind TAB value NUL` records from the small scripts, as a dict."""
    records: dict[str, str] = {}
    for record in body.split(b"\0"):
        kind, _, value = record.decode("utf-8", "surrogateescape").partition("\t")
        if kind:
            records[kind] = value
    return records


class FoundOffsets:
    """What FIND_SCRIPT prints, parsed as it arrives: the file's current size (a `size TAB N NUL` record first,
    for a file that is not compressed), then grep's `OFFSET:MATCH` lines.  Only the offsets and each match's
    length (which anchor it is) are kept, and only up to `limit` + 1 of them: a caller that wants at most `limit`
    stops the run at `too_many`, so memory does not grow with the matches (a million tracebacks print 20 MiB of
    lines)."""

    _HEADER = b"size\t"

    def __init__(self, limit: int | None = None) -> None:
        self.size: int | None = None
        self.valid = True  # every line so far was OFFSET:MATCH (else grep is unusable there)
        self._offsets: dict[int, int] = {}  # offset -> the match's length
        self._limit = limit
        self._carry = b""
        self._started = False  # past the size record (or sure there is none)

    @property
    def too_many(self) -> bool:
        return self._limit is not None and len(self._offsets) > self._limit

    def feed(self, chunk: bytes) -> None:
        data = self._carry + chunk if self._carry else chunk
        if not self._started:
            if self._HEADER.startswith(data[: len(self._HEADER)]) and b"\0" not in data:
                self._carry = data  # the size record is still coming (it is a few bytes)
                return
            self._started = True
            head, nul, rest = data.partition(b"\0")
            if nul and head.startswith(self._HEADER):
                text = head[len(self._HEADER) :].strip()
                self.size = int(text) if text.isdigit() else 0  # no number: the file is gone
                data = rest
        cut = data.rfind(b"\n") + 1
        self._carry = data[cut:]
        self._lines(data[:cut])

    def finish(self) -> None:
        """The last line, if the output did not end with a newline."""
        carry, self._carry = self._carry, b""
        if not self._started:
            self._started = True
            self.feed(carry)
            carry, self._carry = self._carry, b""
        self._lines(carry)

    def _lines(self, text: bytes) -> None:
        offsets = self._offsets
        for line in text.splitlines():
            head, colon, match = line.partition(b":")
            if not colon or not head.isdigit():
                self.valid = False
                return
            offsets[int(head)] = len(match)
            if self.too_many:
                return

    def drop_from(self, size: int) -> None:
        """Forget the matches at or after `size` (bytes the file gained after its size was taken)."""
        self._offsets = {offset: length for offset, length in self._offsets.items() if offset < size}

    def offsets(self) -> list[int] | None:
        """Sorted unique offsets; None when the output was not grep's."""
        return sorted(self._offsets) if self.valid else None

    def matches(self) -> GrepMatches | None:
        """The offsets with each match's length, as base.GrepMatches; None when the output was not grep's."""
        if not self.valid:
            return None
        found = GrepMatches()
        for offset in sorted(self._offsets):
            found.offsets.append(offset)
            found.lengths.append(self._offsets[offset])
        found.end = found.offsets[-1] + found.lengths[-1] if found.offsets else 0
        return found


@dataclass(frozen=True, slots=True)
class FollowStart:
    """FOLLOW_SCRIPT's first line: how the follow starts ("resume", "restart" or "missing") and the inode of the
    file it follows ("" when missing)."""

    how: str
    inode: str


def parse_follow_start(line: bytes) -> FollowStart | None:
    """FOLLOW_SCRIPT's first line (without its newline); None if it is not one."""
    how, _, inode = line.decode("ascii", "replace").partition(" ")
    if how not in ("resume", "restart", "missing") or not (inode.isdigit() or (how == "missing" and not inode)):
        return None
    return FollowStart(how, inode)


class TailOutput:
    """Splits the merged output of FOLLOW_SCRIPT into the file's bytes and tail's own messages, in order.

    The first line is the program path tail runs under; every message tail writes is `PATH: TEXT\n`.  `feed`
    returns the pieces of one chunk: bytes of the file, and TailMessage for each message.  A piece of the chunk
    that may be the start of a message is held until the rest comes."""

    def __init__(self) -> None:
        self._prefix: bytes | None = None
        self._pending = b""

    def feed(self, chunk: bytes) -> list[bytes | TailMessage]:
        data = self._pending + chunk
        self._pending = b""
        if self._prefix is None:
            line, newline, data = data.partition(b"\n")
            if not newline:
                self._pending = line
                return []
            self._prefix = line + b": "
        pieces: list[bytes | TailMessage] = []
        while data:
            start = data.find(self._prefix)
            if start < 0:
                keep = partial_match(data, self._prefix)
                pieces.append(data[: len(data) - keep])
                self._pending = data[len(data) - keep :]
                break
            end = data.find(b"\n", start)
            if end < 0:
                pieces.append(data[:start])
                self._pending = data[start:]
                break
            pieces.append(data[:start])
            pieces.append(TailMessage(data[start + len(self._prefix) : end]))
            data = data[end + 1 :]
        return [piece for piece in pieces if not isinstance(piece, bytes) or piece]


# GNU tail -F starting over: copytruncate or `>` ("FILE: file truncated"), rotation ("'FILE' has been
# replaced;  following new file"), a file back after it was removed ("'FILE' has appeared;  ...").
_TAIL_RESTARTS = re.compile(rb"(?:: file truncated|(?:has been replaced|has appeared);\s+following new file)$")


@dataclass(frozen=True, slots=True)
class TailMessage:
    """One message of the remote tail script."""
    text: bytes  # without the program path: "'/var/log/x.log' has been replaced;  following new file"

    @property
    def restarts(self) -> bool:
        return bool(_TAIL_RESTARTS.search(self.text))

    @property
    def same_file(self) -> bool:
        """The file was truncated (the name still points to the file followed), not replaced."""
        return self.text.endswith(b": file truncated")

    @property
    def alive_size(self) -> int | None:
        """The file's size a heartbeat of FOLLOW_SCRIPT reported; None when this is one of tail's own messages."""
        word, _, size = self.text.partition(b" ")
        return int(size) if word == _HEARTBEAT and size.isdigit() else None


_HEARTBEAT = b"logsleuth-alive"  # FOLLOW_SCRIPT's heartbeat, after tail's program path


def partial_match(data: bytes, prefix: bytes) -> int:
    """The length of the longest end of `data` that is the start of `prefix` (0 if none)."""
    for size in range(min(len(data), len(prefix) - 1), 0, -1):
        if data.endswith(prefix[:size]):
            return size
    return 0
