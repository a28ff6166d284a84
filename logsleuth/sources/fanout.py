"""Run one piece of work per item on a bounded number of threads, results in the items' order.

Why threads: opening and reading a remote log waits on the network (or on the SSH helper process) far more
than it computes, so `parallel` hosts connect and read at the same time in one process.

Why not `concurrent.futures.ThreadPoolExecutor`: its workers are joined when the interpreter exits, so one
read stuck on a frozen host would hold up the exit after Ctrl-C.  These workers are daemon threads: the caller
stops waiting at once (KeyboardInterrupt, or the first unexpected error), and a worker still blocked is left
behind.  Its connection is closed by the stall watchdog (sources/ssh/keepalive.py) or by the process exiting.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

DEFAULT_PARALLEL = 32  # sources read at once unless the user says otherwise (`--parallel`)
IdleWork = Callable[[], bool]  # one step of work to do while waiting; False when there is none left


class _Run(Generic[Item, Result]):
    """The shared state of one fan-out: the next item to take, the results, the first unexpected error."""

    def __init__(self, items: Sequence[Item], work: Callable[[Item], Result]) -> None:
        self.items = items
        self.work = work
        self.results: dict[int, Result] = {}
        self.failure: BaseException | None = None
        self.finished = threading.Event()
        self._next = 0
        self._remaining = len(items)
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            if self._next >= len(self.items) or self.failure is not None:
                return None
            index, self._next = self._next, self._next + 1
            return index

    def worker(self) -> None:
        while (index := self.take()) is not None:
            try:
                result = self.work(self.items[index])
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
                with self._lock:
                    self.failure = self.failure or exc
                self.finished.set()
                return
            with self._lock:
                self.results[index] = result
                self._remaining -= 1
                if self._remaining == 0:
                    self.finished.set()


def fan_out(items: Sequence[Item], work: Callable[[Item], Result], *, parallel: int) -> list[Result]:
    """`[work(item) for item in items]`, with at most `parallel` calls running at once on daemon threads.

    `work` must handle the errors it expects (a source that cannot be read is a result, not an exception):
    the first exception it raises stops the fan-out (no new item starts) and is raised here.  KeyboardInterrupt
    in the caller's thread returns at once; items still running are abandoned.  One item, or `parallel` 1,
    runs in the caller's thread, with no thread at all."""
    if parallel <= 1 or len(items) <= 1:
        return [work(item) for item in items]
    run = _Run(items, work)
    for number in range(min(parallel, len(items))):
        threading.Thread(target=run.worker, name=f"logsleuth-fanout-{number}", daemon=True).start()
    run.finished.wait()
    if run.failure is not None:
        raise run.failure
    return [run.results[index] for index in range(len(items))]


def one_at_a_time(step: IdleWork) -> IdleWork:
    """`step` made safe to call from several threads: a thread that finds another one in it gets False (no
    work for it now) instead of waiting.  For work that waiting threads share (compiling regexes while
    sources connect): a generator-driven step cannot run in two threads at once."""
    lock = threading.Lock()

    def shared() -> bool:
        if not lock.acquire(blocking=False):
            return False
        try:
            return step()
        finally:
            lock.release()

    return shared
