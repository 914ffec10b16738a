"""A per-record time budget that works inside any Beam worker: no signals, no subprocess.

``signal.alarm`` only interrupts the main thread, and Beam's SDK harness (DirectRunner,
FnApiRunner, the portable and Dataflow workers) runs DoFns in worker threads; a killable
subprocess per record (datatrove's way) would copy every page across a pipe. Here a single
watchdog thread keeps the deadlines of the records being cleaned and, when one passes, raises
:class:`RecordTimeout` *in the thread that runs it* with CPython's
``PyThreadState_SetAsyncExc`` (the C API documented in "Initialization, Finalization, and
Threads"). The exception arrives at the next Python bytecode the thread runs, so a long C call
(lxml parsing one page) finishes first; the chain itself is Python loops over elements, so it
stops within milliseconds of the deadline. The page's work is abandoned; nothing else is shared.

Usage::

    try:
        with time_budget(30.0):
            result = clean(page)
    except RecordTimeout:
        result = reject(page, "timeout")
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import threading
import time
from contextlib import contextmanager

__all__ = ["RecordTimeout", "time_budget"]


class RecordTimeout(Exception):  # noqa: N818 - it is the record's timeout, not an error of the budget
    """Raised in a thread whose :func:`time_budget` ran out."""


class _Watchdog:
    """One daemon thread that fires :class:`RecordTimeout` into threads whose deadline passed."""

    def __init__(self):
        self._lock = threading.Condition()
        self._heap: list[tuple[float, int]] = []  # (deadline on time.monotonic, token)
        self._active: dict[int, int] = {}  # token -> thread id
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def register(self, seconds: float) -> int:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="newsclean-time-budget", daemon=True)
                self._thread.start()
            token = next(self._tokens)
            self._active[token] = threading.get_ident()
            heapq.heappush(self._heap, (time.monotonic() + seconds, token))
            self._lock.notify()
            return token

    def unregister(self, token: int) -> None:
        with self._lock:
            self._active.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._lock:
                while self._heap and self._heap[0][1] not in self._active:
                    heapq.heappop(self._heap)  # finished in time
                if not self._heap:
                    self._lock.wait()
                    continue
                deadline, token = self._heap[0]
                delay = deadline - time.monotonic()
                if delay > 0:
                    self._lock.wait(delay)
                    continue
                heapq.heappop(self._heap)
                thread_id = self._active.pop(token)
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(RecordTimeout))


_WATCHDOG = _Watchdog()


@contextmanager
def time_budget(seconds: float | None):
    """Run the ``with`` body in at most ``seconds`` of wall-clock time, else raise :class:`RecordTimeout`.

    ``None`` or a value <= 0 means no budget. The exception may also surface while the context
    exits, right at the deadline: callers catch it around the whole ``with`` statement.
    """
    if not seconds or seconds <= 0:
        yield
        return
    token = _WATCHDOG.register(seconds)
    try:
        yield
    finally:
        _WATCHDOG.unregister(token)
