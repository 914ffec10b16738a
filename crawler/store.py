"""The crawl store: a SQLite database of what was fetched, for incremental re-crawls and resume.

One file (stdlib :mod:`sqlite3`, WAL journal), by default ``OUT/crawl-state.sqlite3``
(``[crawl] state_db`` in sites.toml). Tables:

``pages``
    one row per canonical URL (:func:`canonical_url`) ever recorded: site, category, page type
    (``article``, ``listing``, ``feed``, ``sitemap``, ``robots``, ``other``), HTTP status of the
    final response, first and last fetch time (UTC, ``YYYY-MM-DDTHH:MM:SSZ``), WARC file and byte
    offset of the final response record, ``WARC-Payload-Digest``, and the job that last fetched it.
    A URL whose row says ``page_type = 'article'`` and a 2xx status is a *known article*: later
    runs skip it (until ``refetch_after_days``).
``frontier``
    the requests of one job (start points and discovered links) with their crawl facts and a
    state, ``pending``, ``done`` or ``moved``. A resumed job re-issues its pending rows and never fetches a
    done one again, whatever happened to Scrapy's own queue files; a new job takes over the pending rows
    other jobs left (:meth:`CrawlStore.adopt_pending`: theirs become ``moved``, but for those over a budget
    of the new job, which stay pending for a later one).
``warc_files``
    every WARC file a job opened, with ``acked_bytes``: the file size after the last page group
    that was *acknowledged* (see :meth:`CrawlStore.ack`), and whether it was closed. Recovery of a
    killed crawl truncates a leftover ``.open`` file to this size.
``jobs``
    job id, start and finish time.

A page is **acknowledged** when its records are written to the WARC file (flushed to the
operating system) and :meth:`CrawlStore.ack` has committed, in one transaction: its ``pages``
row, its frontier row set to done, the frontier rows of the links it led to, and the file's new
``acked_bytes``. A process killed at any point therefore leaves either the whole page (in the
WARC file and the store) or none of it (after recovery).

Not thread-safe: one :class:`CrawlStore` per crawl process, used from the reactor thread.
"""

from __future__ import annotations

import enum
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from w3lib.url import canonicalize_url, url_query_cleaner

SCHEMA_VERSION = 1


class Admission(enum.Enum):
    """What a job does with a request another job left pending (:meth:`CrawlStore.adopt_pending`)."""

    ISSUED = "issued"  # the job requests it
    COVERED = "covered"  # no request needed: the job requests the URL already, or it is a known article
    DEFERRED = "deferred"  # not now (a budget of the job is spent): left pending for a later job

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY,
    site TEXT NOT NULL,
    category TEXT NOT NULL,
    page_type TEXT NOT NULL,
    status INTEGER,
    first_fetch TEXT NOT NULL,
    last_fetch TEXT NOT NULL,
    warc_file TEXT,
    warc_offset INTEGER,
    payload_digest TEXT,
    job TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS frontier (
    job TEXT NOT NULL,
    url TEXT NOT NULL,
    request_url TEXT NOT NULL,
    site TEXT NOT NULL,
    category TEXT NOT NULL,
    depth INTEGER NOT NULL,
    role TEXT NOT NULL,
    referrer TEXT,
    state TEXT NOT NULL DEFAULT 'pending',
    outcome TEXT,
    seq INTEGER NOT NULL,
    PRIMARY KEY (job, url)
);
CREATE INDEX IF NOT EXISTS frontier_pending ON frontier (job, state, seq);
CREATE TABLE IF NOT EXISTS warc_files (
    path TEXT PRIMARY KEY,
    job TEXT NOT NULL,
    acked_bytes INTEGER NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS jobs (
    job TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    finished TEXT
);
"""


#: Query parameters that name a session or track a click, not a page: dropped from the store's key so that
#: ``?sid=`` variants of one page (a crawler trap that grows 10^depth) are one URL. Session ids as in
#: Heritrix's canonicalisation rules (``StripSessionIDs``, ``StripSessionCFIDs``); tracking parameters of
#: the common analytics and ad platforms.
SESSION_AND_TRACKING_PARAMS = (
    "sid", "sessionid", "session_id", "session", "jsessionid", "phpsessid", "aspsessionid", "cfid", "cftoken",
    "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_id", "utm_name",
    "fbclid", "gclid", "dclid", "gclsrc", "msclkid", "yclid", "mc_cid", "mc_eid", "_ga", "igshid", "ref_src",
)
_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sid|sessionid)=[^/?#;]*", re.IGNORECASE)


def canonical_url(url: str) -> str:
    """The store's key for ``url``: :func:`w3lib.url.canonicalize_url` (sorted query, no fragment,
    normalised percent-encoding) after dropping the :data:`SESSION_AND_TRACKING_PARAMS` from the query
    (:func:`w3lib.url.url_query_cleaner`, names compared case-insensitively) and ``;jsessionid=``-style
    path parameters. The URL requested keeps them; only the key (dedup, store) loses them."""
    parts = urlsplit(url)
    path = _PATH_SESSION.sub("", parts.path)
    query = parts.query
    if query:
        names = {name for name, _ in parse_qsl(query, keep_blank_values=True)
                 if name.lower() in SESSION_AND_TRACKING_PARAMS}
        if names:
            query = urlsplit(url_query_cleaner(url, sorted(names), remove=True, keep_fragments=True)).query
    if path != parts.path or query != parts.query:
        url = urlunsplit(parts._replace(path=path, query=query))
    return canonicalize_url(url)


def utc_stamp(moment: datetime | None = None) -> str:
    """``moment`` (default now) as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC: the store's time format, which sorts
    as text."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class FrontierEntry:
    """A request of a job: canonical ``url``, the ``request_url`` to fetch, and its crawl facts
    (``role``: ``start``, ``listing``, ``article`` or ``sitemap``)."""

    url: str
    request_url: str
    site: str
    category: str
    depth: int
    role: str
    referrer: str | None = None


@dataclass(frozen=True)
class PageRow:
    """What :meth:`CrawlStore.ack` records about one fetched page.

    ``urls``: canonical URLs the page answers for (the requested URL and, after redirects, every
    URL of the chain). ``warc_file`` / ``warc_offset``: the final response record (``None`` when
    nothing was written, e.g. a timeout). ``fetched_at``: UTC time of the final fetch.
    """

    urls: tuple[str, ...]
    site: str
    category: str
    page_type: str
    status: int | None
    fetched_at: datetime
    warc_file: str | None
    warc_offset: int | None
    payload_digest: str | None
    outcome: str


class CrawlStore:
    """The SQLite crawl store at ``path`` (created with its parent directory when missing).

    Raises ``sqlite3.DatabaseError`` when the file is not a crawl store, ``RuntimeError`` when it
    was written by a newer schema version.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        version = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if version is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif int(version[0]) > SCHEMA_VERSION:
            raise RuntimeError(f"{self.path}: crawl store schema {version[0]} is newer than {SCHEMA_VERSION}")
        self._seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM frontier").fetchone()[0]

    def close(self) -> None:
        """Close the database; safe to call twice."""
        if self._db is not None:
            self._db.close()
            self._db = None

    # ------------------------------------------------------------------------------------ jobs

    def start_job(self, job: str) -> bool:
        """Register ``job`` (idempotent). Returns True when the job already existed (a resume)."""
        with self._tx():
            known = self._db.execute("SELECT 1 FROM jobs WHERE job = ?", (job,)).fetchone() is not None
            if not known:
                self._db.execute("INSERT INTO jobs (job, started) VALUES (?, ?)", (job, utc_stamp()))
        return known

    def finish_job(self, job: str) -> None:
        """Mark ``job`` finished (its pending frontier rows are kept for the record)."""
        with self._tx():
            self._db.execute("UPDATE jobs SET finished = ? WHERE job = ?", (utc_stamp(), job))

    def job_finished(self, job: str) -> bool:
        """Whether ``job`` exists and was marked finished."""
        row = self._db.execute("SELECT finished FROM jobs WHERE job = ?", (job,)).fetchone()
        return bool(row and row[0])

    # -------------------------------------------------------------------------------- frontier

    def add_frontier(self, job: str, entries: Iterable[FrontierEntry]) -> None:
        """Add ``entries`` as pending requests of ``job`` (URLs already in the job's frontier are kept)."""
        with self._tx():
            self._insert_frontier(job, entries)

    def pending(self, job: str) -> list[FrontierEntry]:
        """The pending requests of ``job``, in the order they were added."""
        rows = self._db.execute(
            "SELECT url, request_url, site, category, depth, role, referrer FROM frontier "
            "WHERE job = ? AND state = 'pending' ORDER BY seq", (job,)).fetchall()
        return [FrontierEntry(*row) for row in rows]

    def adopt_pending(self, job: str, sites: Iterable[str],
                      admit: Callable[[FrontierEntry], Admission]) -> list[FrontierEntry]:
        """Take over the pending requests that other jobs of ``sites`` left (a crawl stopped by ``max_time`` or a
        signal and not resumed, a page that was never acknowledged), each URL once, in the order they were added.

        ``admit`` is asked of each, before the transaction: :attr:`Admission.ISSUED` ones become pending in
        ``job`` and their rows in the other jobs ``moved``; :attr:`Admission.COVERED` ones (``job`` requests the
        URL already, or needs no request) only ``moved``; :attr:`Admission.DEFERRED` ones (over a budget of
        ``job``) stay pending for a later job. Returns the issued ones."""
        names = sorted(set(sites))
        marks = ",".join("?" * len(names))
        rows = self._db.execute(
            "SELECT url, request_url, site, category, depth, role, referrer FROM frontier "
            f"WHERE job != ? AND state = 'pending' AND site IN ({marks}) ORDER BY seq",  # noqa: S608 (marks only)
            (job, *names)).fetchall()
        first: dict[str, FrontierEntry] = {}
        for row in rows:
            first.setdefault(row[0], FrontierEntry(*row))
        verdicts = [(entry, admit(entry)) for entry in first.values()]
        issued = [entry for entry, verdict in verdicts if verdict is Admission.ISSUED]
        with self._tx():
            self._insert_frontier(job, issued)
            self._db.executemany(
                f"UPDATE frontier SET state = 'moved' WHERE job != ? AND state = 'pending' "  # noqa: S608 (marks only)
                f"AND url = ? AND site IN ({marks})",
                [(job, entry.url, *names) for entry, verdict in verdicts if verdict is not Admission.DEFERRED])
        return issued

    def frontier_urls(self, job: str) -> Iterator[tuple[str, str, str]]:
        """``(canonical url, site, category)`` of every request of ``job``, pending or done."""
        yield from self._db.execute("SELECT url, site, category FROM frontier WHERE job = ?", (job,))

    def done_in_job(self, job: str, url: str) -> bool:
        """Whether canonical ``url`` was already completed (acknowledged) in ``job``."""
        row = self._db.execute("SELECT state FROM frontier WHERE job = ? AND url = ?", (job, url)).fetchone()
        return bool(row and row[0] == "done")

    # ---------------------------------------------------------------------------------- pages

    def is_known_article(self, url: str, refetch_after_days: float = 0.0,
                         now: datetime | None = None) -> bool:
        """Whether canonical ``url`` is an article already stored with a 2xx status, fetched less than
        ``refetch_after_days`` ago (0: however long ago)."""
        row = self._db.execute(
            "SELECT last_fetch FROM pages WHERE url = ? AND page_type = 'article' AND status BETWEEN 200 AND 299",
            (url,)).fetchone()
        if row is None:
            return False
        if refetch_after_days <= 0:
            return True
        cutoff = (now or datetime.now(UTC)) - timedelta(days=refetch_after_days)
        return row[0] > utc_stamp(cutoff)

    def page(self, url: str) -> dict | None:
        """The ``pages`` row of canonical ``url`` as a dict, or ``None``."""
        cur = self._db.execute("SELECT * FROM pages WHERE url = ?", (url,))
        row = cur.fetchone()
        return dict(zip([c[0] for c in cur.description], row)) if row else None

    def ack(self, job: str, page: PageRow, links: Iterable[FrontierEntry] = (),
            warc_file: str | None = None, acked_bytes: int | None = None) -> None:
        """Acknowledge one page in a single transaction (see the module docstring).

        ``links``: requests the page led to, added as pending. ``warc_file`` / ``acked_bytes``: the
        (``.open``) file the page's records went to and its size after them.
        """
        stamp = utc_stamp(page.fetched_at)
        with self._tx():
            for url in page.urls:
                self._db.execute(
                    "INSERT INTO frontier (job, url, request_url, site, category, depth, role, state, outcome, seq) "
                    "VALUES (?, ?, ?, ?, ?, 0, 'redirect', 'done', ?, ?) "
                    "ON CONFLICT (job, url) DO UPDATE SET state = 'done', outcome = excluded.outcome",
                    (job, url, url, page.site, page.category, page.outcome, self._next_seq()))
            if page.warc_file is not None:
                self._upsert_page(job, page, stamp)
            self._insert_frontier(job, links)
            if warc_file is not None and acked_bytes is not None:
                self._db.execute("UPDATE warc_files SET acked_bytes = ? WHERE path = ?", (acked_bytes, warc_file))

    def _upsert_page(self, job: str, page: PageRow, stamp: str) -> None:
        for url in page.urls:
            self._db.execute(
                "INSERT INTO pages (url, site, category, page_type, status, first_fetch, last_fetch, warc_file, "
                "warc_offset, payload_digest, job) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (url) DO UPDATE SET site = excluded.site, category = excluded.category, "
                "page_type = excluded.page_type, status = excluded.status, last_fetch = excluded.last_fetch, "
                "warc_file = excluded.warc_file, warc_offset = excluded.warc_offset, "
                "payload_digest = excluded.payload_digest, job = excluded.job",
                (url, page.site, page.category, page.page_type, page.status, stamp, stamp, page.warc_file,
                 page.warc_offset, page.payload_digest, job))

    # ------------------------------------------------------------------------------ warc files

    def warc_opened(self, job: str, path: str, size: int) -> None:
        """Register a new (``.open``) WARC file of ``job`` holding ``size`` acknowledged bytes (its warcinfo)."""
        with self._tx():
            self._db.execute("INSERT OR REPLACE INTO warc_files (path, job, acked_bytes, closed) VALUES (?, ?, ?, 0)",
                             (path, job, size))

    def warc_closed(self, open_path: str, final_path: str) -> None:
        """Record that ``open_path`` was closed and renamed to ``final_path`` (page rows follow the rename)."""
        with self._tx():
            self._db.execute("UPDATE warc_files SET path = ?, closed = 1 WHERE path = ?", (final_path, open_path))
            self._db.execute("UPDATE pages SET warc_file = ? WHERE warc_file = ?", (final_path, open_path))

    def acked_bytes(self, path: str) -> int | None:
        """Acknowledged size of the WARC file at ``path`` (as registered), or ``None`` if unknown."""
        row = self._db.execute("SELECT acked_bytes FROM warc_files WHERE path = ?", (path,)).fetchone()
        return int(row[0]) if row else None

    def forget_warc(self, path: str) -> None:
        """Drop the ``warc_files`` row of ``path`` (a leftover removed by recovery)."""
        with self._tx():
            self._db.execute("DELETE FROM warc_files WHERE path = ?", (path,))

    # -------------------------------------------------------------------------------- helpers

    def _insert_frontier(self, job: str, entries: Iterable[FrontierEntry]) -> None:
        for e in entries:
            self._db.execute(
                "INSERT OR IGNORE INTO frontier (job, url, request_url, site, category, depth, role, referrer, seq) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job, e.url, e.request_url, e.site, e.category, e.depth, e.role, e.referrer, self._next_seq()))

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _tx(self):
        return _Transaction(self._db)


class _Transaction:
    """``with`` block around ``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an exception)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
