"""Common Crawl's news crawl (CC-NEWS) as a run's input: ``newsclean clean --cc-news FROM..TO``.

CC-NEWS publishes, per month, a path listing ``crawl-data/CC-NEWS/YYYY/MM/warc.paths.gz`` (gzip text, one path a
line, ``crawl-data/CC-NEWS/2024/01/CC-NEWS-20240101012345-00001.warc.gz``), served at
``https://data.commoncrawl.org/<path>`` and ``s3://commoncrawl/<path>`` (Common Crawl, "Get Started", CC-NEWS). A
WARC file's name carries its crawl time stamp (UTC, ``YYYYMMDDhhmmss``). :func:`cc_news_files` reads the listing of
every month of a date range, keeps the files whose name's time stamp lies in it and returns the run's input files:
over s3 the ``s3://`` URLs themselves (Beam's S3 filesystem reads them), over http(s) local copies: Beam has no http
filesystem, so each file is downloaded (requests, streamed) into a cache folder first, once; a file counts as there
only when its every byte arrived (written to ``NAME.part`` and renamed when its ``Content-Length`` is met).
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from newsclean.pipeline.errors import NewscleanError, NoInputError, UsageError, first_line

log = logging.getLogger(__name__)

#: Where Common Crawl serves its files over HTTPS (``--cc-news-base``'s default).
CC_NEWS_BASE = "https://data.commoncrawl.org/"
#: The schemes ``--cc-news-base`` takes: http(s) is downloaded into the cache, s3 read where it lies.
BASE_SCHEMES = ("http://", "https://", "s3://")
#: A CC-NEWS WARC file's name: ``CC-NEWS-<UTC time stamp YYYYMMDDhhmmss>-<serial>.warc.gz``.
CC_NEWS_NAME = re.compile(r"^CC-NEWS-(\d{14})-(\d{1,9})\.warc(?:\.gz)?$")
#: A listing's line: a CC-NEWS WARC file's path, and nothing else (no ``..``, no absolute path, no URL).
CC_NEWS_PATH = re.compile(r"^crawl-data/CC-NEWS/\d{4}/\d{2}/(CC-NEWS-\d{14}-\d{1,9}\.warc(?:\.gz)?)$")
#: Bytes of a download written at once.
DOWNLOAD_CHUNK = 1 << 20
#: requests' (connect, read) timeouts of one request, in seconds.
TIMEOUT_S = (30, 300)


def default_cache() -> str:
    """``--cc-news-cache``'s default: ``$XDG_CACHE_HOME/newsclean-cc-news``, else ``~/.cache/newsclean-cc-news``."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "newsclean-cc-news")


def warc_timestamp(path: str) -> datetime | None:
    """The crawl time stamp (aware UTC) a CC-NEWS WARC file's name carries
    (``.../CC-NEWS-20240101012345-00001.warc.gz`` -> 2024-01-01 01:23:45 UTC); None for any other name."""
    m = CC_NEWS_NAME.match(path.replace("\\", "/").rpartition("/")[2])
    if m is None:
        return None
    try:
        return datetime.strptime(m.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:  # 14 digits that are no date
        return None


def _day_or_month(text: str, end: bool) -> datetime:
    """``YYYY-MM-DD`` or ``YYYY-MM`` as an aware UTC instant: its first, or with ``end`` the one after its last."""
    try:
        if len(text) == 7:
            first = datetime.strptime(text, "%Y-%m").replace(tzinfo=UTC)
            return _next_month(first) if end else first
        first = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise ValueError(f"{text!r} is not a date YYYY-MM-DD or a month YYYY-MM") from None
    return first + timedelta(days=1) if end else first


def _next_month(first: datetime) -> datetime:
    return first.replace(year=first.year + first.month // 12, month=first.month % 12 + 1, day=1)


def parse_date_range(text: str) -> tuple[datetime, datetime]:
    """``FROM..TO`` (each ``YYYY-MM-DD`` or ``YYYY-MM``, both included) as ``[start, end)`` aware UTC instants:
    ``2020-08..2020-09-15`` -> 2020-08-01 00:00 to 2020-09-16 00:00. A single date or month is a range of itself.

    Raises:
        ValueError: a part that is no date or month, or FROM after TO.
    """
    first, sep, last = text.strip().partition("..")
    last = last if sep else first
    start, end = _day_or_month(first.strip(), False), _day_or_month(last.strip(), True)
    if end <= start:
        raise ValueError(f"{first.strip()} is after {last.strip()}")
    return start, end


def months(start: datetime, end: datetime) -> Iterator[tuple[int, int]]:
    """``(year, month)`` of every month that ``[start, end)`` touches, in order."""
    month = start.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    while month < end:
        yield month.year, month.month
        month = _next_month(month)


@dataclass(frozen=True)
class CCNewsInput:
    """The CC-NEWS files a run reads (``--cc-news FROM..TO --cc-news-base URL --cc-news-cache DIR``).

    Attributes:
        start, end: the time stamps kept, ``[start, end)``, aware UTC (:func:`parse_date_range`).
        base: where ``crawl-data/`` lies, ending in ``/``: ``https://data.commoncrawl.org/``, ``s3://commoncrawl/``
            or any http(s) mirror.
        cache: the folder http(s) downloads go to (``<cache>/crawl-data/CC-NEWS/YYYY/MM/<name>``).

    Raises:
        UsageError: a base of another scheme, or ``end`` not after ``start``.
    """

    start: datetime
    end: datetime
    base: str = CC_NEWS_BASE
    cache: str = ""

    def __post_init__(self):
        if not self.base.lower().startswith(BASE_SCHEMES):
            raise UsageError(f"--cc-news-base {self.base!r}: give an http(s):// or s3:// URL")
        if self.end <= self.start:
            raise UsageError("--cc-news: FROM is after TO")
        object.__setattr__(self, "base", self.base.rstrip("/") + "/")
        object.__setattr__(self, "cache", os.path.abspath(os.path.expanduser(self.cache or default_cache())))

    @property
    def downloads(self) -> bool:
        """Whether the files are downloaded (an http(s) base) rather than read where they lie (s3)."""
        return not self.base.lower().startswith("s3://")

    @property
    def dates(self) -> str:
        """The days of the range, both included: ``2020-08-01..2020-08-31``."""
        return f"{self.start:%Y-%m-%d}..{self.end - timedelta(days=1):%Y-%m-%d}"

    @property
    def label(self) -> str:
        """What the summary names as the run's input (a URL, so kept as it is):
        ``https://data.commoncrawl.org/crawl-data/CC-NEWS/ (2020-08-01..2020-08-31)``."""
        return f"{self.base}crawl-data/CC-NEWS/ ({self.dates})"

    def listing(self, year: int, month: int) -> str:
        """The URL of the path listing of ``year``-``month``."""
        return f"{self.base}crawl-data/CC-NEWS/{year:04d}/{month:02d}/warc.paths.gz"


def select_paths(lines: list[str], start: datetime, end: datetime, listing: str = "") -> list[str]:
    """The paths of ``lines`` (a listing's lines) whose file name's time stamp lies in ``[start, end)``, in listing
    order; blank lines skipped. Lines that are no CC-NEWS WARC path (:data:`CC_NEWS_PATH`) are left out with one
    warning naming ``listing`` and how many."""
    kept, odd = [], 0
    for line in (line.strip() for line in lines):
        if not line:
            continue
        if not CC_NEWS_PATH.match(line):
            odd += 1
            continue
        stamp = warc_timestamp(line)
        if stamp is not None and start <= stamp < end:
            kept.append(line)
    if odd:
        log.warning("%s: %d lines that are no CC-NEWS WARC path left out", listing, odd)
    return kept


def _session():
    import requests

    session = requests.Session()
    session.headers["User-Agent"] = "newsclean (CC-NEWS reader)"
    return session


def read_listing(url: str, session=None) -> list[str]:
    """The lines of the gzip path listing at ``url`` (http(s), read with requests; other URLs through Beam's
    ``FileSystems``, e.g. ``s3://``); lines that are no CC-NEWS path are left to :func:`select_paths`.

    Raises:
        NewscleanError: the listing cannot be fetched (HTTP error, no connection) or is no gzip text.
    """
    try:
        if url.lower().startswith(("http://", "https://")):
            response = (session or _session()).get(url, timeout=TIMEOUT_S)
            response.raise_for_status()
            data = response.content
        else:
            from apache_beam.io.filesystem import CompressionTypes
            from apache_beam.io.filesystems import FileSystems

            with FileSystems.open(url, compression_type=CompressionTypes.UNCOMPRESSED) as f:
                data = f.read()
        if data[:2] == b"\x1f\x8b":  # else a server that sent it with Content-Encoding: gzip, which requests undid
            data = gzip.decompress(data)
        return data.decode("utf-8", "replace").splitlines()
    except (OSError, EOFError, ValueError) as exc:  # BadGzipFile is an OSError; BeamIOError too
        raise NewscleanError(f"CC-NEWS listing {url}: not gzip text: {exc}" if isinstance(exc, gzip.BadGzipFile)
                             else f"CC-NEWS listing {url}: {first_line(exc)}") from exc
    except Exception as exc:  # requests.RequestException (HTTP status, connection)
        raise NewscleanError(f"CC-NEWS listing {url}: {first_line(exc)}") from exc


def download(url: str, dest: str, session=None) -> bool:
    """Fetch ``url`` into the file ``dest`` unless it is there already; returns whether it fetched.

    The bytes stream (requests, ``DOWNLOAD_CHUNK`` bytes at a time, stored as sent: no ``Content-Encoding``
    removed) into ``dest + ".part"``, which becomes ``dest`` only when the ``Content-Length`` the server sent is met,
    so a cut download never counts as complete (its ``.part`` is deleted; the next run fetches it again).

    Raises:
        NewscleanError: an HTTP error, a lost connection, or fewer bytes than ``Content-Length``.
    """
    if os.path.isfile(dest):
        return False
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    part = dest + ".part"
    try:
        with (session or _session()).get(url, stream=True, timeout=TIMEOUT_S) as response:
            response.raise_for_status()
            expected = response.headers.get("Content-Length")
            got = 0
            with open(part, "wb") as f:
                for chunk in response.raw.stream(DOWNLOAD_CHUNK, decode_content=False):
                    f.write(chunk)
                    got += len(chunk)
        if expected is not None and expected.isdigit() and got != int(expected):
            raise NewscleanError(f"download of {url} cut short: {got} of {expected} bytes")
    except NewscleanError:
        _remove(part)
        raise
    except Exception as exc:  # requests' and urllib3's errors (IncompleteRead, ...), OSError of the cache
        _remove(part)
        raise NewscleanError(f"download of {url} failed: {first_line(exc)}") from exc
    os.replace(part, dest)
    return True


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def cc_news_files(spec: CCNewsInput, session=None) -> list[str]:
    """The run's input files for ``spec``: the WARC files of the CC-NEWS listings of every month of its range whose
    names' time stamps lie in it (:func:`select_paths`), as ``s3://`` URLs (an s3 base) or as local copies in
    ``spec.cache`` (an http(s) base: :func:`download`, files already there not fetched again). Over http(s), prints
    one line per month on stderr (files in range, downloaded, already there).

    Raises:
        NewscleanError: a listing or a file cannot be fetched. NoInputError: no file in range.
    """
    session = session or (_session() if spec.downloads else None)
    files: list[str] = []
    for year, month in months(spec.start, spec.end):
        url = spec.listing(year, month)
        paths = select_paths(read_listing(url, session), spec.start, spec.end, url)
        if not spec.downloads:
            files += [spec.base + path for path in paths]
            continue
        fetched = 0
        for path in paths:
            dest = os.path.join(spec.cache, *path.split("/"))
            fetched += download(spec.base + path, dest, session)
            files.append(dest)
        print(f"newsclean: CC-NEWS {year:04d}-{month:02d}: {len(paths)} WARC files in range, {fetched} downloaded, "
              f"{len(paths) - fetched} already in {spec.cache}", file=sys.stderr)
    if not files:
        raise NoInputError(f"--cc-news: no WARC file of the CC-NEWS listings at {spec.base} has a time stamp in "
                           f"{spec.dates}")
    return files
