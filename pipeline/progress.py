"""Progress of a long cleaning run: records read, articles, rejects, pages/s, and the share of the WARC bytes read
with an estimate of the time left, on stderr.

Counting DoFns (:class:`CountProgress`) sit on side branches of the graph and add to a per-process
tally (:data:`PROGRESS`), which prints a line at most every :func:`interval_s` seconds (10, or
``$NEWSCLEAN_PROGRESS_INTERVAL``): on a terminal one status line redrawn in place (a ``tqdm`` line), otherwise a
log line per interval (CI logs, ``nohup``), both with the same figures. The driver knows the WARC files' total size
after listing them (:meth:`ProgressTally.reset`), the reader advances the bytes read as it reaches each record
(:class:`~newsclean.pipeline.warc_reader.ReadWarcFileFn`), so a line also says ``42 % of 1,024.0 MiB read, ETA
0:03:05`` (:func:`share_and_eta`).
On the DirectRunner (in-memory) the tally is the driver's; on a cluster each worker prints its own
share (without a total, so without percent or ETA), and the ``newsclean`` Beam counters (``records_read``, ``articles``, ``rejects_<reason>``, ...)
remain the cluster-wide figures in the runner's UI.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
import time

import apache_beam as beam
from tqdm import tqdm

log = logging.getLogger(__name__)

#: Seconds between two progress lines, unless :data:`INTERVAL_ENV` says otherwise.
INTERVAL_S = 10.0
#: Environment variable that sets the seconds between two progress lines (a number >= 0; ``inf``: none).
INTERVAL_ENV = "NEWSCLEAN_PROGRESS_INTERVAL"
#: Start of every progress line.
PREFIX = "newsclean: progress: "


def interval_s() -> float:
    """Seconds between two progress lines: ``$NEWSCLEAN_PROGRESS_INTERVAL`` (:data:`INTERVAL_ENV`) when it holds
    a number >= 0 (``inf``: no line at all), else :data:`INTERVAL_S`; a value that is no such number is logged
    once per value and ignored."""
    value = os.environ.get(INTERVAL_ENV, "").strip()
    if not value:
        return INTERVAL_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if seconds != seconds or seconds < 0:  # NaN or negative
        _warn_bad_interval(value)
        return INTERVAL_S
    return seconds


@functools.lru_cache(maxsize=8)
def _warn_bad_interval(value: str) -> None:
    log.warning("%s=%r is not a number of seconds >= 0: progress lines every %g s", INTERVAL_ENV, value, INTERVAL_S)


def share_and_eta(done: int, total: int, elapsed: float) -> str:
    """``"42 % of 1,024.0 MiB read, ETA 0:03:05"``: ``done`` of ``total`` bytes read after ``elapsed`` seconds.

    The percent is rounded down (100 % only once every byte is read); the ETA is the time left at the mean rate so
    far, ``elapsed * (total - done) / done``, formatted by ``tqdm.format_interval`` (``[H:]MM:SS``), ``?`` before
    the first byte. ``total`` 0 counts as everything read."""
    share = 100 if total <= 0 else min(100, done * 100 // total)
    left = "?" if done <= 0 else tqdm.format_interval(elapsed * max(total - done, 0) / done)
    return f"{share} % of {max(total, 0) / 2**20:,.1f} MiB read, ETA {left}"


def _is_terminal(stream) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()


class ProgressTally:
    """Thread-safe counts of ``read``, ``articles``, ``rejects`` and ``bytes`` (of WARC files read, out of
    ``total_bytes`` when the run's driver set it) and when they were last shown.

    ``enabled`` False (the default for library use) counts but never prints; the CLI enables it.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.enabled = False
        self.reset()

    def reset(self, total_bytes: int | None = None) -> None:
        """Zero the counts and start the clock (called when a run starts); ``total_bytes``: the bytes of WARC files
        the run reads (None: not known here, as on a cluster's worker: no percent and no ETA)."""
        with self.lock:
            self.total_bytes = total_bytes
            self.counts = {"read": 0, "articles": 0, "rejects": 0, "bytes": 0}
            self.start = self.last = time.monotonic()
            self._status: tqdm | None = None

    def line(self) -> str:
        """``"1,204 records read, 800 articles (before duplicate removal), 310 rejects, 35.1 pages/s"`` (pages/s over
        the wall time so far), then ``", 42 % of 1,024.0 MiB read, ETA 0:03:05"`` (:func:`share_and_eta`) when the
        total is known."""
        c = self.counts
        elapsed = max(time.monotonic() - self.start, 1e-9)
        line = (f"{c['read']:,} records read, {c['articles']:,} articles (before duplicate removal), "
                f"{c['rejects']:,} rejects, {c['read'] / elapsed:.1f} pages/s")
        if self.total_bytes is None:
            return line
        return f"{line}, {share_and_eta(c['bytes'], self.total_bytes, elapsed)}"

    def skip_bytes(self, n: int) -> None:
        """Take ``n`` bytes off the total: WARC bytes this run does not read (files an earlier run of a resumed
        batched run cleaned), so that the percent and the ETA are those of the bytes left to read."""
        with self.lock:
            if self.total_bytes is not None:
                self.total_bytes = max(self.total_bytes - n, 0)

    def add(self, what: str, n: int = 1, stream=None) -> None:
        """Count ``n`` of ``what`` and print a progress line to ``stream`` (default stderr) when :func:`interval_s`
        has passed: redrawn in place on a terminal, one line each time otherwise."""
        with self.lock:
            self.counts[what] += n
            now = time.monotonic()
            if not self.enabled or now - self.last < interval_s():
                return
            self.last = now
            stream = stream or sys.stderr
            if not _is_terminal(stream):
                stream.write(PREFIX + self.line() + "\n")
                stream.flush()
                return
            if self._status is None:
                self._status = tqdm(file=stream, bar_format="{desc}", dynamic_ncols=True)
            self._status.set_description_str(PREFIX + self.line())

    def note(self, text: str, stream=None) -> None:
        """Print ``text`` on a line of its own to ``stream`` (default stderr), after :data:`PREFIX`, when enabled:
        a phase of a run (the batches of a bounded local run, pipeline/batches.py). A terminal's status line ends
        first and starts again with the next count."""
        with self.lock:
            if not self.enabled:
                return
            if self._status is not None:
                self._status.close()
                self._status = None
            stream = stream or sys.stderr
            stream.write(PREFIX + text + "\n")
            stream.flush()

    def finish(self) -> None:
        """End the terminal's status line with a newline (nothing when none was shown)."""
        with self.lock:
            if self._status is not None:
                self._status.close()
                self._status = None


#: The tally of this process.
PROGRESS = ProgressTally()


class CountProgress(beam.DoFn):
    """Count each element as ``what`` (``read``, ``articles`` or ``rejects``) in :data:`PROGRESS`; outputs nothing."""

    def __init__(self, what: str):
        super().__init__()
        self.what = what

    def process(self, element):
        PROGRESS.add(self.what)
        return []
