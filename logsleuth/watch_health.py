"""What a running server's steady-state lines say about its health (`watch --then-follow`).

SGLang prints a `Decode batch` line per batch (`#running-req`, `#queue-req`, `accept len` with speculative
decoding) and "KV cache pool is full. Retract requests." when it has to evict.  None of these is a crash, but a
retraction storm, a draft model that contributes nothing (accept length near 1.0) and a queue that only grows
are worth one warning each.  The thresholds are the named constants below.
"""

from __future__ import annotations

from collections import deque

from logsleuth.ingest.stages import ACCEPT_LEN, DECODE_BATCH, KV_POOL_FULL, QUEUE_REQ

# --then-follow: when a running server's health lines deserve a warning.
KV_FULL_REPEATS = 3  # "KV cache pool is full. Retract requests" this many times...
KV_FULL_WINDOW_SECONDS = 60.0  # ...within this window
ACCEPT_LEN_NEAR_ONE = 1.2  # a speculative accept length at or below this: the draft model contributes nothing...
ACCEPT_LEN_BATCHES = 20  # ...over this many decode batches in a row
QUEUE_GROWTH_BATCHES = 20  # #queue-req never falls over this many decode batches in a row...
QUEUE_GROWTH_MIN = 100  # ...and grows by at least this many requests


class ServerHealth:
    """The health lines of a running server (`watch --then-follow`): each signal warns once."""

    def __init__(self) -> None:
        self._kv_full: deque[float] = deque(maxlen=KV_FULL_REPEATS)
        self._low_accept = 0
        self._queue: deque[int] = deque(maxlen=QUEUE_GROWTH_BATCHES)
        self._warned: set[str] = set()

    def feed(self, text: str, now: float) -> str | None:
        if KV_POOL_FULL in text:
            self._kv_full.append(now)
            if len(self._kv_full) == KV_FULL_REPEATS and now - self._kv_full[0] <= KV_FULL_WINDOW_SECONDS:
                return self._once("kv-full", f"KV cache pool full {KV_FULL_REPEATS} times in "
                                  f"{now - self._kv_full[0]:.0f} s: requests are being retracted (lower "
                                  "--max-running-requests or raise --mem-fraction-static)")
        if "Decode batch" not in text or DECODE_BATCH.search(text) is None:
            return None
        accept = ACCEPT_LEN.search(text)
        if accept is not None:
            self._low_accept = self._low_accept + 1 if float(accept["value"]) <= ACCEPT_LEN_NEAR_ONE else 0
            if self._low_accept >= ACCEPT_LEN_BATCHES:
                return self._once("accept-len", f"speculative accept len ≤ {ACCEPT_LEN_NEAR_ONE} over "
                                  f"{ACCEPT_LEN_BATCHES} decode batches: the draft model contributes nothing "
                                  "(check the draft checkpoint and --speculative-algorithm)")
        queue = QUEUE_REQ.search(text)
        if queue is not None:
            self._queue.append(int(queue["value"]))
            values = list(self._queue)
            growing = all(later >= earlier for earlier, later in zip(values, values[1:], strict=False))
            if len(values) == QUEUE_GROWTH_BATCHES and growing and values[-1] - values[0] >= QUEUE_GROWTH_MIN:
                return self._once("queue", f"#queue-req grew from {values[0]} to {values[-1]} over "
                                  f"{QUEUE_GROWTH_BATCHES} decode batches without falling: requests arrive "
                                  "faster than the server serves them")
        return None

    def _once(self, key: str, message: str) -> str | None:
        if key in self._warned:
            return None
        self._warned.add(key)
        return message
