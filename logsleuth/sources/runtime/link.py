"""What a runtime's follow over SSH (remote.py) learns about its link, and how it picks up after a reconnect.

- `Heartbeats`: STREAM_SCRIPT prints a random word of the follow's own every second beside the command.  It is cut
  out of the output wherever it lands; each one delivered says that everything the command wrote before it was
  delivered too (the follow then yields base.ALIVE, as `tail -F`'s does: watch/follow.py).  A frozen connection delivers
  none.
- `Resumed`: a follow started again after a lost connection repeats the newest lines; those up to the end of what
  was delivered before are dropped.
"""

from __future__ import annotations

import secrets

from logsleuth.sources.runtime.command import MAX_HELD
from logsleuth.sources.ssh.scripts import partial_match

ANCHOR = 4096  # bytes: the end of what a follow delivered, looked for in a resumed follow's first lines
_SETTLED_TICKS = 25  # idle ticks (about a second) after which a resumed follow's newest lines are all there


def new_heartbeat() -> str:
    """A word no log line can hold by chance (nor by design: it is new for every run)."""
    return f"logsleuth-alive-{secrets.token_hex(12)}"


class Heartbeats:
    """Cuts `WORD\\n` out of a follow's output wherever it lands (between the command's writes), holding back an
    end of a chunk that may be the start of one."""

    def __init__(self, word: str) -> None:
        self._beat = word.encode() + b"\n"
        self._pending = b""

    @property
    def clear(self) -> bool:
        """Nothing held back: all that arrived has been passed on."""
        return not self._pending

    def feed(self, chunk: bytes) -> tuple[bytes, bool]:
        """The command's bytes in `chunk`, and whether a heartbeat came in it."""
        *before, last = (self._pending + chunk).split(self._beat)
        keep = partial_match(last, self._beat)  # only after the last heartbeat can one be cut in two
        self._pending = last[len(last) - keep :] if keep else b""
        return b"".join([*before, last[: len(last) - keep]]), bool(before)


class Resumed:
    """A resumed follow's output without what was delivered before the connection was lost.  Its first lines (the
    newest RESUME_LINES) are held until the end of what was delivered (`anchor`) turns up in them: what comes after
    it is new.  When it does not (more lines than that were written meanwhile, or the log started over), everything
    is passed on once the command has been quiet for a second or MAX_HELD bytes came."""

    def __init__(self, anchor: bytes) -> None:
        self._anchor = anchor
        self._held: bytearray | None = bytearray() if anchor else None
        self._quiet = 0

    @property
    def clear(self) -> bool:
        """Nothing held back."""
        return self._held is None

    def feed(self, chunk: bytes) -> bytes:
        if self._held is None:
            return chunk
        if not chunk:
            self._quiet += 1
            return self._release() if self._quiet >= _SETTLED_TICKS else b""
        self._quiet = 0
        self._held += chunk
        found = self._held.find(self._anchor)
        if found >= 0:
            self._held = self._held[found + len(self._anchor) :]
            return self._release()
        return self._release() if len(self._held) > MAX_HELD else b""

    def _release(self) -> bytes:
        held, self._held = bytes(self._held or b""), None
        return held
