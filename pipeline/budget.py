"""A per-record CPU-time budget that works inside any Beam worker: no signals, no subprocess.

``signal.alarm`` only interrupts the main thread, and Beam's SDK harness (DirectRunner,
FnApiRunner, the portable and Dataflow workers) runs DoFns in worker threads; a killable
subprocess per record (datatrove's way) would copy every page across a pipe. Here a single
watchdog thread keeps the budgets of the records being cleaned and, when one is spent, raises
:class:`RecordTimeout` *in the thread that runs it* with CPython's
``PyThreadState_SetAsyncExc`` (the C API documented in "Initialization, Finalization, and
Threads"). The exception arrives at the next Python bytecode the thread runs, so a long C call
(lxml parsing one page, one compiled kernel walk) finishes first; the chain's compiled calls are
linear in the page's nodes and its model scoring runs in chunks of rows, so a page stops within about
a second of its budget even at 10^5 elements.

**What is measured.** The CPU time of the thread running the record (POSIX thread CPU-time clock:
``time.pthread_getcpuclockid`` of its ident, read with ``time.clock_gettime``; Linux and most
Unixes), so that the same page gets the same verdict on a quiet and on a loaded machine: time the
thread spends waiting for a core, for the GIL or in ``sleep`` is not charged. Where that clock is
missing (macOS, Windows: :func:`measures_cpu_time` is False), the budget falls back to wall-clock
time (``time.monotonic``), and a loaded machine can then time out pages a quiet one cleans. A thread
that waits without using CPU is never stopped by a CPU-time budget; the chain does no I/O.

Usage::

    try:
        with time_budget(30.0):
            result = clean(page)
    except RecordTimeout:
        result = reject(page, "timeout")
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import NamedTuple

__all__ = ["RecordTimeout", "measures_cpu_time", "thread_clock", "time_budget"]

#: Shortest wait of the watchdog between two readings of the clocks, in seconds (a budget that is
#: nearly spent is checked at most this often).
MIN_POLL_S = 0.005


def thread_clock(thread_id: int) -> Callable[[], float]:
    """A function returning the CPU time in seconds used so far by the thread of ident ``thread_id`` (its
    POSIX CPU-time clock, readable from any thread of the process); ``time.monotonic`` (wall-clock seconds)
    where the platform has no per-thread CPU clock. Never raises."""
    try:
        clock_id = time.pthread_getcpuclockid(thread_id)
        time.clock_gettime(clock_id)
    except (AttributeError, OSError):  # no pthread_getcpuclockid (macOS, Windows), or the clock cannot be read
        return time.monotonic
    return functools.partial(time.clock_gettime, clock_id)


def measures_cpu_time() -> bool:
    """Whether :func:`time_budget` measures the thread's CPU time here (else wall-clock time)."""
    return thread_clock(threading.get_ident()) is not time.monotonic


class RecordTimeout(BaseException):  # noqa: N818 - it is the record's timeout, not an error of the budget
    """Raised in a thread whose :func:`time_budget` ran out.

    A ``BaseException``, as ``KeyboardInterrupt`` and ``asyncio.CancelledError``: the ``except Exception`` of
    the code it interrupts (a library's fallback, the chain's "a missing date, not a lost page") must not swallow
    it, or the page would go on without a budget. Catch it by name around the ``with`` statement."""


class _Budget(NamedTuple):
    thread_id: int
    clock: Callable[[], float]  # the thread's CPU time (or wall-clock time), in seconds
    deadline: float  # on ``clock``


class _Watchdog:
    """One daemon thread that fires :class:`RecordTimeout` into threads whose budget is spent.

    A thread's CPU clock advances at most one second per second of wall-clock time, so after reading every
    clock the watchdog sleeps the smallest budget left (at least :data:`MIN_POLL_S`) and is never late."""

    def __init__(self):
        self._lock = threading.Condition()
        self._active: dict[int, _Budget] = {}  # token -> budget
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def register(self, seconds: float) -> int:
        thread_id = threading.get_ident()
        clock = thread_clock(thread_id)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="newsclean-time-budget", daemon=True)
                self._thread.start()
            token = next(self._tokens)
            self._active[token] = _Budget(thread_id, clock, clock() + seconds)
            self._lock.notify()
            return token

    def unregister(self, token: int) -> None:
        with self._lock:
            self._active.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._active:
                    self._lock.wait()
                    continue
                wait = self._fire_spent()
                if wait is not None:
                    self._lock.wait(max(wait, MIN_POLL_S))

    def _fire_spent(self) -> float | None:
        """Fire into every thread whose budget is spent (the lock held). Returns the smallest budget left in
        seconds, None when no budget is left running."""
        wait = None
        for token, budget in list(self._active.items()):
            try:
                left = budget.deadline - budget.clock()
            except OSError:  # the thread is gone: nothing to stop
                del self._active[token]
                continue
            if left > 0:
                wait = left if wait is None else min(wait, left)
                continue
            del self._active[token]
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(budget.thread_id),
                                                       ctypes.py_object(RecordTimeout))
        return wait


_WATCHDOG = _Watchdog()


@contextmanager
def time_budget(seconds: float | None):
    """Run the ``with`` body in at most ``seconds`` of the calling thread's CPU time (wall-clock time where
    :func:`measures_cpu_time` is False), else raise :class:`RecordTimeout` in it.

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
